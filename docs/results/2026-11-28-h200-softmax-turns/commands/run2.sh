#!/usr/bin/env bash
# Session 37, call 2: source-level Nsight Compute of a538b1e's fp16 d = 64 causal N = 1024 kernel, the default schedule
# (options 0) against ping-pong (options 8, other-schedule), one launch each; then both timed, three passes.
set -u
S=.device-s37
R=$OUT/r; mkdir -p $R/ncu
xz -d -f -T8 $S/base/flash2_mma_bench.xz 2>/dev/null; chmod +x $S/base/flash2_mma_bench
B=$S/base/flash2_mma_bench
ncu=$(command -v ncu || echo /usr/local/cuda/bin/ncu)
sections=(--section SpeedOfLight --section WarpStateStats --section SourceCounters --section InstructionStats
          --section ComputeWorkloadAnalysis --clock-control none)
for o in 0 8; do
  name=fp16_d64_n1024_causal_o$o
  timeout 170 "$ncu" "${sections[@]}" -k regex:Flash3WgmmaKernel --launch-skip 2 --launch-count 1 -f -o $R/ncu/$name \
    $B time --reps 1 --kernel flash3_wgmma --dtype fp16 --d 64 --n 1024 --causal 1 --options $o > $R/ncu/$name.log 2>&1
  echo "$name rc=$?"
  "$ncu" -i $R/ncu/$name.ncu-rep --page source --csv --print-source sass > $R/ncu/$name.sass.csv
  "$ncu" -i $R/ncu/$name.ncu-rep --page details > $R/ncu/$name.details.txt 2>&1
  rm -f $R/ncu/$name.ncu-rep
  python3 scripts/ncu_source_summary.py $R/ncu/$name.sass.csv > $R/ncu/$name.summary.txt 2>&1
  gzip -9 $R/ncu/$name.sass.csv
done
grep -E 'Elapsed Cycles|Executed Ins|Warp Cycles Per Issued|Issue Slots Busy|  Pipe' $R/ncu/*.details.txt
for pass in 1 2 3; do
  timeout 120 $B time --kernel flash3_wgmma --dtype fp16,bf16 --d 64 --n 1024,2048 --causal 1 --options 0,8 --csv $R/time$pass.csv > /dev/null 2>&1
  cut -d, -f2-4,6,8,10 $R/time$pass.csv | tail -n +2
done
cd $OUT && tar czf results.tgz r && rm -rf r
