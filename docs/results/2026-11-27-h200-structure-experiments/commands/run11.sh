#!/usr/bin/env bash
# Session 30, call 11: Nsight Compute (source level) of flash3_fp8 d = 128 without the mask, N = 16384, head's binary
# with ping-pong (options 1 + other-schedule = 3) against without (1), one launch each; and two timing rounds of both.
set -u
S=.device-s30
xz -d -f -T8 $S/head/flash2_mma_bench.xz; chmod +x $S/head/*
ncu=$(command -v ncu || echo /usr/local/cuda/bin/ncu)
sections=(--section SpeedOfLight --section WarpStateStats --section SourceCounters --section InstructionStats --section LaunchStats --clock-control none)
T=$OUT/ncu-pingpong; mkdir -p $T
for o in 1 3; do
  name=options${o}_fp8_d128_n16384
  timeout 150 "$ncu" "${sections[@]}" -k "regex:Flash3WgmmaKernel" --launch-skip 2 --launch-count 1 -f -o "$T/$name" \
    $S/head/flash2_mma_bench time --reps 1 --kernel flash3_fp8 --dtype bf16 --d 128 --n 16384 --causal 0 --options $o > $T/$name.log 2>&1
  echo "$name rc=$?"
  "$ncu" -i "$T/$name.ncu-rep" --page source --csv --print-source sass | gzip > "$T/$name.sass.csv.gz"
  "$ncu" -i "$T/$name.ncu-rep" --page details > "$T/$name.details.txt" 2>&1
  rm -f "$T/$name.ncu-rep" "$T/$name.log"
done
grep -E "Elapsed Cycles|Issue Slots Busy|Executed Ipc Active" $T/*.details.txt
for r in 1 2; do timeout 60 $S/head/flash2_mma_bench time --kernel flash3_fp8 --dtype bf16 --d 128 --n 4096,16384 --causal 0 --options 1,3 --csv $T/time$r.csv > /dev/null 2>&1; done
cat $T/time*.csv | cut -d, -f1-10
tar -C $OUT -czf $OUT/ncu-pingpong.tar.gz ncu-pingpong && rm -rf $T
