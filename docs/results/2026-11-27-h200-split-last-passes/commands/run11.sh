#!/usr/bin/env bash
# Session 31, call 11: the binaries of be7ddb5 ("next": the merge's factors as explicit fmaf, the schedule's tests in
# a program of their own) against cb46e61's ("final", the table's): the whole mma suite in 8 shards, the schedule's
# tests, the registry's GPU tests, compute-sanitizer on the cut shape, A/B on fp8 d = 128 (two rounds), and the SASS of
# every flash3 kernel of the two.
set -u
S=.device-s31
for f in $S/*/*.xz; do xz -d -f -T8 "$f"; done
chmod +x $S/*/*
for i in 0 1 2 3 4 5 6 7; do
  GTEST_TOTAL_SHARDS=8 GTEST_SHARD_INDEX=$i timeout 200 $S/next/kernels_cuda_mma_tests --gtest_brief=1 > $OUT/tests-$i.log 2>&1 &
done
wait
cat $OUT/tests-*.log > $OUT/tests.log; rm $OUT/tests-*.log
grep -E "^\[  (PASSED|FAILED) |FAILED  \]" $OUT/tests.log | sort | uniq -c
$S/next/kernels_cuda_mma_schedule_tests --gtest_brief=1 > $OUT/schedule-tests.log 2>&1; echo "schedule rc=$? $(grep -E '^\[  (PASSED|FAILED)' $OUT/schedule-tests.log)"
timeout 150 $S/next/kernels_cuda_gpu_tests --gtest_brief=1 > $OUT/registry-tests.log 2>&1; echo "registry rc=$?"; grep -E "^\[  (PASSED|FAILED|SKIPPED) |FAILED  \]" $OUT/registry-tests.log | head -5
for tool in memcheck racecheck; do
  timeout 100 compute-sanitizer --tool $tool $S/next/kernels_cuda_mma_tests --gtest_filter=Flash3Fp8.CutWorkTilesWithinBound > $OUT/san-$tool.log 2>&1
  echo "cut $tool rc=$? $(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY' $OUT/san-$tool.log | tail -1)"
done
SETS="--kernel flash3_fp8 --dtype bf16 --d 128 --n 1024,4096,16384 --causal 0 --options 1" \
  timeout 120 scripts/mma_ab.sh $OUT/ab.csv 2 final=$S/final/flash2_mma_bench next=$S/next/flash2_mma_bench > $OUT/ab.report.txt 2>&1
tail -5 $OUT/ab.report.txt
cuobjdump -sass $S/final/flash2_mma_bench > /tmp/final.sass; cuobjdump -sass $S/next/flash2_mma_bench > /tmp/next.sass
python3 $S/sass_same.py /tmp/final.sass /tmp/next.sass > $OUT/sass-same.txt; head -8 $OUT/sass-same.txt
gzip -f $OUT/*.log
