#!/usr/bin/env bash
# Session 30, call 3: fp8 d = 128 with a degree-2 polynomial for the 2^x on the FMA pipe (relative error 1.7e-3,
# below e4m3's 2^-4), every 6th, 5th and 4th, against head (degree 3, every 6th), three rounds.
set -u
S=.device-s30
for f in $S/*/*.xz; do xz -d -f -T8 "$f"; done
chmod +x $S/*/*
SETS="--kernel flash3_fp8 --dtype bf16 --d 128 --n 1024,4096,16384 --causal 0,1 --options 1" \
  timeout 400 scripts/mma_ab.sh $OUT/ab.csv 3 head=$S/head/flash2_mma_bench p2e6=$S/p2e6/flash2_mma_bench p2e5=$S/p2e5/flash2_mma_bench p2e4=$S/p2e4/flash2_mma_bench > $OUT/ab.report.txt 2>&1
tail -12 $OUT/ab.report.txt
