#!/usr/bin/env bash
# Session 34, call 5: flash2_mma's shipped kernel apart from the ablation kernels (split): its mma tests (all of
# flash2's, with the new check that the shipped kernel and the ablation default agree bit for bit), the registry's
# flash2 tests, compute-sanitizer on options 0 and a few ablation words, and an A/B of the default kernel against head.
set -u
S=.device-s34
R=$OUT/r; mkdir -p $R
for f in $S/*/*.xz; do xz -d -f -T8 "$f"; done
chmod +x $S/*/*
B=$S/split
for i in 0 1 2 3 4 5 6 7; do
  GTEST_TOTAL_SHARDS=8 GTEST_SHARD_INDEX=$i timeout 240 $B/kernels_cuda_mma_tests --gtest_filter='*Flash2Mma*' --gtest_brief=1 > $R/tests-$i.log 2>&1 &
done
timeout 240 $B/kernels_cuda_gpu_tests --gtest_filter='*flash2_mma*' --gtest_brief=1 > $R/registry-tests.log 2>&1 &
wait
cat $R/tests-*.log > $R/tests.log; rm $R/tests-*.log
grep -E "^\[  (PASSED|FAILED) |FAILED  \]" $R/tests.log | sort | uniq -c
grep -E "^\[  (PASSED|FAILED|SKIPPED) |FAILED  \]" $R/registry-tests.log | head -5
grep -c "ShippedKernelIsTheAblationDefault" $R/tests.log
for tool in memcheck racecheck; do
  timeout 150 compute-sanitizer --tool $tool $B/flash2_mma_bench sanitize --kernel flash2_mma --heads 3 0,2,4,64,128 > $R/$tool.txt 2>&1
  echo "$tool: $(tail -n 1 $R/$tool.txt)"
done
SETS="--kernel flash2_mma --dtype fp16,bf16 --d 64,128 --n 1024,4096,16384 --causal 0,1" \
  timeout 400 scripts/mma_ab.sh $R/ab.csv 3 head=$S/head/flash2_mma_bench split=$B/flash2_mma_bench > $R/ab.report.txt 2>&1
tail -27 $R/ab.report.txt
cd $OUT && tar czf results.tgz r && rm -rf r
