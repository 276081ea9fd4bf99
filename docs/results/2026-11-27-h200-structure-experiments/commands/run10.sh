#!/usr/bin/env bash
# Session 30, call 10: Nsight Compute (source level) of flash3_fp8 d = 128 without the mask at N = 16384, head
# against pbw (P̃ converted before an anchored wait for P̃V), one launch each: where the overlapped form loses.
set -u
S=.device-s30
for f in $S/head/flash2_mma_bench.xz $S/pbw/flash2_mma_bench.xz; do xz -d -f -T8 "$f"; done
chmod +x $S/head/* $S/pbw/*
ncu=$(command -v ncu || echo /usr/local/cuda/bin/ncu)
sections=(--section SpeedOfLight --section WarpStateStats --section SourceCounters --section InstructionStats --section LaunchStats --section ComputeWorkloadAnalysis --clock-control none)
T=$OUT/ncu-pbw; mkdir -p $T
for b in head pbw; do
  name=${b}_fp8_d128_n16384
  timeout 150 "$ncu" "${sections[@]}" -k "regex:Flash3WgmmaKernel" --launch-skip 2 --launch-count 1 -f -o "$T/$name" \
    $S/$b/flash2_mma_bench time --reps 1 --kernel flash3_fp8 --dtype bf16 --d 128 --n 16384 --causal 0 --options 1 > $T/$name.log 2>&1
  echo "$name rc=$?"
  "$ncu" -i "$T/$name.ncu-rep" --page source --csv --print-source sass | gzip > "$T/$name.sass.csv.gz"
  "$ncu" -i "$T/$name.ncu-rep" --page details > "$T/$name.details.txt" 2>&1
  "$ncu" -i "$T/$name.ncu-rep" --page raw --csv 2>/dev/null | gzip > "$T/$name.raw.csv.gz"
  rm -f "$T/$name.ncu-rep" "$T/$name.log"
done
grep -E "Duration|Elapsed Cycles|Issue Slots Busy|Executed Ipc Active" $T/*.details.txt
tar -C $OUT -czf $OUT/ncu-pbw.tar.gz ncu-pbw && rm -rf $T && ls -la $OUT
