#!/usr/bin/env bash
# Session 36, call 8: call 7's two builds again at d = 256 N = 1024 and 2048, five rounds.
set -u
S=.device-s36
R=$OUT/r; mkdir -p $R
for f in $S/*/*.xz; do [ -f "${f%.xz}" ] || xz -d -k -f -T8 "$f"; done
chmod +x $S/*/* 2>/dev/null
SETS="--kernel flash3_wgmma --dtype fp16,bf16 --d 256 --n 1024,2048 --causal 0,1" \
  CALL_TIMEOUT=150 timeout 300 scripts/mma_ab.sh $R/ab.csv 5 final=$S/final/flash2_mma_bench qpc=$S/qpc/flash2_mma_bench > $R/ab.log 2>&1
python3 scripts/mma_ab_report.py $R/ab.csv > $R/ab.report.txt 2>&1
cat $R/ab.report.txt
cd $OUT && tar czf results.tgz r && rm -rf r
