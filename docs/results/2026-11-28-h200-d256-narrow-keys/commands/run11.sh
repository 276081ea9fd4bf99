#!/usr/bin/env bash
# Session 36, call 11: Q_i by consumer at 16-bit d = 64 causal with two consumers (N < 2048) ("qpc64") against
# 5d63dcb's build ("final2"): compute-sanitizer and an A/B, five rounds.
set -u
S=.device-s36
R=$OUT/r; mkdir -p $R
for f in $S/*/*.xz; do [ -f "${f%.xz}" ] || xz -d -k -f -T8 "$f"; done
chmod +x $S/*/* 2>/dev/null
timeout 120 compute-sanitizer --tool racecheck $S/qpc64/flash2_mma_bench sanitize --kernel flash3_wgmma --heads 134 0 > $R/racecheck-qpc64.txt 2>&1
echo "racecheck qpc64: $(tail -n 2 $R/racecheck-qpc64.txt | tr '\n' ' ')"
SETS="--kernel flash3_wgmma --dtype fp16,bf16 --d 64 --n 1024 --causal 1" \
  CALL_TIMEOUT=100 timeout 200 scripts/mma_ab.sh $R/ab.csv 5 final2=$S/final2/flash2_mma_bench qpc64=$S/qpc64/flash2_mma_bench > $R/ab.log 2>&1
python3 scripts/mma_ab_report.py $R/ab.csv > $R/ab.report.txt 2>&1
cat $R/ab.report.txt
cd $OUT && tar czf results.tgz r && rm -rf r
