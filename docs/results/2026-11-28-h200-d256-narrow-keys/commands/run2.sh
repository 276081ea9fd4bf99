#!/usr/bin/env bash
# Session 36, call 2: 16-bit d = 256 causal with K/V tiles of 64 keys instead of 80 (kFlagNarrowKeys), with the
# branching mask ("n64") and with the select mask ("n64s"), against 33d0264's build ("head"): the flash3 tests of
# n64's build, compute-sanitizer on both, an A/B of d = 256 causal (default schedule and the other one).
set -u
S=.device-s36
R=$OUT/r; mkdir -p $R
for f in $S/*/*.xz; do xz -d -f -T8 "$f"; done
chmod +x $S/*/* 2>/dev/null
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader > $R/gpu.txt; cat $R/gpu.txt
B=$S/n64
for i in 0 1 2 3 4 5 6 7; do
  GTEST_TOTAL_SHARDS=8 GTEST_SHARD_INDEX=$i timeout 300 $B/kernels_cuda_mma_tests --gtest_filter='*Flash3*' --gtest_brief=1 > $R/tests-$i.log 2>&1 &
done
wait
cat $R/tests-*.log > $R/tests.log; rm $R/tests-*.log
grep -E "^\[  (PASSED|FAILED) |FAILED  \]" $R/tests.log | sort | uniq -c
for b in n64 n64s; do
  for tool in memcheck racecheck; do
    timeout 200 compute-sanitizer --tool $tool $S/$b/flash2_mma_bench sanitize --kernel flash3_wgmma --heads 134 0,8 > $R/$tool-$b.txt 2>&1
    echo "$tool $b: $(tail -n 2 $R/$tool-$b.txt | tr '\n' ' ')"
  done
done
SETS="--kernel flash3_wgmma --dtype fp16,bf16 --d 256 --n 1024,4096,16384 --causal 1;--kernel flash3_wgmma --dtype fp16,bf16 --d 256 --n 1024,4096 --causal 1 --options 8" \
  CALL_TIMEOUT=150 timeout 400 scripts/mma_ab.sh $R/ab.csv 3 head=$S/base/flash2_mma_bench n64=$S/n64/flash2_mma_bench n64s=$S/n64s/flash2_mma_bench > $R/ab.log 2>&1
python3 scripts/mma_ab_report.py $R/ab.csv > $R/ab.report.txt 2>&1
cat $R/ab.report.txt
cd $OUT && tar czf results.tgz r && rm -rf r
