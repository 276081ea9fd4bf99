#!/usr/bin/env bash
# Session 31, call 3: Nsight Compute of flash3_fp8 d = 128 without the mask at N = 4096, head against split and
# nomerge (call 2's builds): where the 3-8% went, with the j loop's code the same in all three.
set -u
S=.device-s31
for f in $S/*/*.xz; do xz -d -f -T8 "$f"; done
chmod +x $S/*/*
ncu=$(command -v ncu || echo /usr/local/cuda/bin/ncu)
sections=(--section SpeedOfLight --section WarpStateStats --section SourceCounters --section InstructionStats --section SchedulerStats --section LaunchStats --clock-control none)
T=$OUT/ncu; mkdir -p $T
for v in head split nomerge; do
  name=$v-n4096
  timeout 120 "$ncu" "${sections[@]}" -k "regex:Flash3WgmmaKernel" --launch-skip 2 --launch-count 1 -f -o "$T/$name" \
    $S/$v/flash2_mma_bench time --reps 1 --kernel flash3_fp8 --dtype bf16 --d 128 --n 4096 --causal 0 --options 1 > $T/$name.log 2>&1
  echo "$name rc=$?"
  "$ncu" -i "$T/$name.ncu-rep" --page source --csv --print-source sass | gzip > "$T/$name.sass.csv.gz"
  "$ncu" -i "$T/$name.ncu-rep" --page details > "$T/$name.details.txt" 2>&1
  rm -f "$T/$name.ncu-rep"
done
grep -E "Duration|Elapsed Cycles|Executed Instructions  |Issue Slots Busy|No Eligible|Warp Cycles Per Issued" $T/*.details.txt | head -40
tar -C $OUT -czf $OUT/ncu.tar.gz ncu && rm -rf $T
