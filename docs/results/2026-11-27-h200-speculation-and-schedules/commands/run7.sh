#!/usr/bin/env bash
# Session 34, call 7: split2 (the helpers) against split (call 5's build) on flash2_mma d = 128, whose shipped kernels'
# SASS differs in 17 of 2424 instructions (register choices); three rounds.
set -u
S=.device-s34
R=$OUT/r; mkdir -p $R
for f in $S/*/*.xz; do xz -d -f -T8 "$f"; done
chmod +x $S/*/*
SETS="--kernel flash2_mma --dtype fp16,bf16 --d 128 --n 1024,4096,16384 --causal 0,1" \
  timeout 300 scripts/mma_ab.sh $R/ab.csv 3 split=$S/split/flash2_mma_bench split2=$S/split2/flash2_mma_bench > $R/ab.report.txt 2>&1
tail -14 $R/ab.report.txt
cd $OUT && tar czf results.tgz r && rm -rf r
