#!/usr/bin/env bash
# Session 36, call 7: 16-bit d = 256 with Q_i in one part per consumer ("qpc", kFlagQByConsumer: consumer 0's 64 rows
# before K_0, consumer 1's after it, each on a full barrier of its own) against d9bdf32's build ("final"): the flash3
# tests of the new build, compute-sanitizer, an A/B of every d = 256 shape of the table.
set -u
S=.device-s36
R=$OUT/r; mkdir -p $R
for f in $S/*/*.xz; do [ -f "${f%.xz}" ] || xz -d -k -f -T8 "$f"; done
chmod +x $S/*/* 2>/dev/null
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader > $R/gpu.txt; cat $R/gpu.txt
B=$S/qpc
for i in 0 1 2 3 4 5 6 7; do
  GTEST_TOTAL_SHARDS=8 GTEST_SHARD_INDEX=$i timeout 300 $B/kernels_cuda_mma_tests --gtest_filter='*Flash3*' --gtest_brief=1 > $R/tests-$i.log 2>&1 &
done
wait
cat $R/tests-*.log > $R/tests.log; rm $R/tests-*.log
grep -E "^\[  (PASSED|FAILED) |FAILED  \]" $R/tests.log | sort | uniq -c
for tool in memcheck racecheck; do
  timeout 200 compute-sanitizer --tool $tool $B/flash2_mma_bench sanitize --kernel flash3_wgmma --heads 134 0,1,8 > $R/$tool-qpc.txt 2>&1
  echo "$tool qpc: $(tail -n 2 $R/$tool-qpc.txt | tr '\n' ' ')"
done
SETS="--kernel flash3_wgmma --dtype fp16,bf16 --d 256 --n 1024,4096,16384 --causal 0,1" \
  CALL_TIMEOUT=150 timeout 360 scripts/mma_ab.sh $R/ab.csv 3 final=$S/final/flash2_mma_bench qpc=$S/qpc/flash2_mma_bench > $R/ab.log 2>&1
python3 scripts/mma_ab_report.py $R/ab.csv > $R/ab.report.txt 2>&1
cat $R/ab.report.txt
cd $OUT && tar czf results.tgz r && rm -rf r
