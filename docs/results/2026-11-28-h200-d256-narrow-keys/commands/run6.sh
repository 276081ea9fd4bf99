#!/usr/bin/env bash
# Session 36, call 6: 16-bit d = 64 causal with two consumers (N < 2048) on 64-key K/V tiles ("n64d", kFlagNarrowKeys
# at d = 64, forward walk with the mask in the loop) against d9bdf32's build ("final"): compute-sanitizer and an A/B.
set -u
S=.device-s36
R=$OUT/r; mkdir -p $R
for f in $S/*/*.xz; do [ -f "${f%.xz}" ] || xz -d -k -f -T8 "$f"; done
chmod +x $S/*/* 2>/dev/null
for tool in memcheck racecheck; do
  timeout 150 compute-sanitizer --tool $tool $S/n64d/flash2_mma_bench sanitize --kernel flash3_wgmma --heads 134 0 > $R/$tool-n64d.txt 2>&1
  echo "$tool n64d: $(tail -n 2 $R/$tool-n64d.txt | tr '\n' ' ')"
done
SETS="--kernel flash3_wgmma --dtype fp16,bf16 --d 64 --n 1024,1536 --causal 1" \
  CALL_TIMEOUT=150 timeout 300 scripts/mma_ab.sh $R/ab.csv 3 final=$S/final/flash2_mma_bench n64d=$S/n64d/flash2_mma_bench > $R/ab.log 2>&1
python3 scripts/mma_ab_report.py $R/ab.csv > $R/ab.report.txt 2>&1
cat $R/ab.report.txt
cd $OUT && tar czf results.tgz r && rm -rf r
