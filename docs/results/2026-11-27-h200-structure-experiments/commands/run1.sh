#!/usr/bin/env bash
# Session 30, call 1: exp (two S buffers at 16-bit d = 64 two consumers; 16-bit d = 256 with 128-key tiles in one
# stage, serial loop, consumers taking turns for the softmax) against head (2d03315's cubins), three rounds.
set -u
S=.device-s30
for f in $S/*/*.xz; do xz -d -f -T8 "$f"; done
chmod +x $S/*/*
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader
SETS="--kernel flash3_wgmma --dtype fp16,bf16 --d 64 --n 1024 --causal 0,1;--kernel flash3_wgmma --dtype fp16,bf16 --d 256 --n 1024,4096,16384 --causal 0,1 --options 0,1,8" \
  timeout 420 scripts/mma_ab.sh $OUT/ab.csv 3 head=$S/head/flash2_mma_bench exp=$S/exp/flash2_mma_bench > $OUT/ab.report.txt 2>&1
cat $OUT/ab.report.txt | tail -60
