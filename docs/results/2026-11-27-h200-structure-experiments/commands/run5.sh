#!/usr/bin/env bash
# Session 30, call 5: 16-bit d = 64 with two consumers (causal below N = 2048) with 2 and 4 K/V stages instead of 3,
# against head, three rounds; and fp8 d = 128 without the mask on both grids (options 1 and 5) with head's binary.
set -u
S=.device-s30
for f in $S/*/*.xz; do xz -d -f -T8 "$f"; done
chmod +x $S/*/*
SETS="--kernel flash3_wgmma --dtype fp16,bf16 --d 64 --n 1024 --causal 0,1 --options 0,16;--kernel flash3_wgmma --dtype fp16,bf16 --d 64 --n 4096 --causal 1 --options 16" \
  timeout 200 scripts/mma_ab.sh $OUT/stages.csv 3 head=$S/head/flash2_mma_bench st2=$S/st2/flash2_mma_bench st4=$S/st4/flash2_mma_bench > $OUT/stages.report.txt 2>&1
tail -16 $OUT/stages.report.txt
SETS="--kernel flash3_fp8 --dtype bf16 --d 128 --n 4096,16384 --causal 0 --options 1,5" \
  timeout 100 scripts/mma_ab.sh $OUT/fp8-grid.csv 2 head=$S/head/flash2_mma_bench head2=$S/head/flash2_mma_bench > $OUT/fp8-grid.report.txt 2>&1
tail -8 $OUT/fp8-grid.report.txt
