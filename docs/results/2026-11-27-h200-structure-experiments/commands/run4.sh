#!/usr/bin/env bash
# Session 30, call 4: 16-bit d = 64 as two independent halves of the block (each consumer its own 64-row work tiles,
# Q buffer, K/V ring and producer thread) against head, every d = 64 shape, three rounds.
set -u
S=.device-s30
for f in $S/*/*.xz; do xz -d -f -T8 "$f"; done
chmod +x $S/*/*
timeout 60 $S/halves/flash2_mma_bench sanitize --kernel flash3_wgmma 0,1 > $OUT/smoke.log 2>&1; echo "smoke rc=$?"; tail -3 $OUT/smoke.log
SETS="--kernel flash3_wgmma --dtype fp16,bf16 --d 64 --n 1024,4096,16384 --causal 0,1" \
  timeout 300 scripts/mma_ab.sh $OUT/ab.csv 3 head=$S/head/flash2_mma_bench halves=$S/halves/flash2_mma_bench > $OUT/ab.report.txt 2>&1
tail -16 $OUT/ab.report.txt
