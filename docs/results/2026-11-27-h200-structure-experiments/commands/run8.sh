#!/usr/bin/env bash
# Session 30, call 8: the softmax's row maxima as 2 and 4 chains (ch2, ch4: fp8 d = 128 and 16-bit d = 64) and 8
# chains (ch8: fp8 d = 128 only) instead of one, against head, three rounds.
set -u
S=.device-s30
for f in $S/*/*.xz; do xz -d -f -T8 "$f"; done
chmod +x $S/*/*
SETS="--kernel flash3_fp8 --dtype bf16 --d 128 --n 1024,4096,16384 --causal 0,1 --options 1;--kernel flash3_wgmma --dtype fp16,bf16 --d 64 --n 1024,4096,16384 --causal 0,1" \
  timeout 400 scripts/mma_ab.sh $OUT/ab.csv 3 head=$S/head/flash2_mma_bench ch2=$S/ch2/flash2_mma_bench ch4=$S/ch4/flash2_mma_bench ch8=$S/ch8/flash2_mma_bench > $OUT/ab.report.txt 2>&1
tail -22 $OUT/ab.report.txt
