#!/usr/bin/env bash
# Session 36, call 3: n64s (64-key K/V tiles with the select mask at causal d = 256) with and without ping-pong against
# 33d0264's build at the longer causal sequences, to choose where it is taken.
set -u
S=.device-s36
R=$OUT/r; mkdir -p $R
for f in $S/*/*.xz; do [ -f "${f%.xz}" ] || xz -d -k -f -T8 "$f"; done
chmod +x $S/*/* 2>/dev/null
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader > $R/gpu.txt; cat $R/gpu.txt
SETS="--kernel flash3_wgmma --dtype fp16,bf16 --d 256 --n 2048,4096,8192,16384 --causal 1 --options 0,8" \
  CALL_TIMEOUT=150 timeout 400 scripts/mma_ab.sh $R/ab.csv 3 head=$S/base/flash2_mma_bench n64s=$S/n64s/flash2_mma_bench > $R/ab.log 2>&1
python3 scripts/mma_ab_report.py $R/ab.csv > $R/ab.report.txt 2>&1
cat $R/ab.report.txt
cd $OUT && tar czf results.tgz r && rm -rf r
