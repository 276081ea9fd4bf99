#!/usr/bin/env bash
# Session 30, call 7: Nsight Compute (source level) of flash3_fp8 d = 128 without the mask, N = 4096 and 16384,
# head's binary (2d03315's cubins), one launch each.
set -u
S=.device-s30
for f in $S/head/*.xz; do xz -d -f -T8 "$f"; done
chmod +x $S/head/*
ncu=$(command -v ncu || echo /usr/local/cuda/bin/ncu)
sections=(--section SpeedOfLight --section WarpStateStats --section SourceCounters --section InstructionStats --section LaunchStats --section ComputeWorkloadAnalysis --section MemoryWorkloadAnalysis --clock-control none)
T=$OUT/ncu-fp8; mkdir -p $T
for n in 4096 16384; do
  name=fp8_d128_n${n}
  timeout 150 "$ncu" "${sections[@]}" -k "regex:Flash3WgmmaKernel" --launch-skip 2 --launch-count 1 -f -o "$T/$name" \
    $S/head/flash2_mma_bench time --reps 1 --kernel flash3_fp8 --dtype bf16 --d 128 --n $n --causal 0 --options 1 > $T/$name.log 2>&1
  echo "$name rc=$?"; tail -2 $T/$name.log
  "$ncu" -i "$T/$name.ncu-rep" --page source --csv --print-source sass | gzip > "$T/$name.sass.csv.gz"
  "$ncu" -i "$T/$name.ncu-rep" --page details > "$T/$name.details.txt" 2>&1
  rm -f "$T/$name.ncu-rep"
done
grep -E "Duration|Elapsed Cycles|Executed Instructions  |Throughput|Issue Slots|Executed Ipc|Pipe" $T/*.details.txt | head -40
tar -C $OUT -czf $OUT/ncu-fp8.tar.gz ncu-fp8 && rm -rf $T && ls -la $OUT
