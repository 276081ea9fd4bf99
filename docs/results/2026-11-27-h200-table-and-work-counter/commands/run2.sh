#!/usr/bin/env bash
# Session 33, call 2: the work-tile counter (causal persistent grid, kFlagWorkCounter) and three consumers skipping
# rows past N ("new"), the counter alone ("counter"), against a3634ea ("head"): the mma suite in 8 shards and the
# registry's GPU tests with new's binaries, compute-sanitizer on new (B·H = 134 and N = 200; N = 1024 for the skip),
# then an A/B of the three on flash3_wgmma d = 64 and 128 (2 rounds). Everything comes back in one archive.
set -u
S=.device-s33
R=$OUT/r; mkdir -p $R
for f in $S/*/*.xz; do xz -d -f -T8 "$f"; done
chmod +x $S/*/*
for i in 0 1 2 3 4 5 6 7; do
  GTEST_TOTAL_SHARDS=8 GTEST_SHARD_INDEX=$i timeout 240 $S/new/kernels_cuda_mma_tests --gtest_brief=1 > $R/tests-$i.log 2>&1 &
done
timeout 240 $S/new/kernels_cuda_gpu_tests --gtest_brief=1 > $R/registry-tests.log 2>&1 &
wait
cat $R/tests-*.log > $R/tests.log; rm $R/tests-*.log
grep -E "^\[  (PASSED|FAILED) |FAILED  \]" $R/tests.log | sort | uniq -c
grep -E "^\[  (PASSED|FAILED|SKIPPED) |FAILED  \]" $R/registry-tests.log | head -5
{
  echo "-- memcheck, B·H = 134, N = 200, default and other-rows"
  timeout 90 compute-sanitizer --tool memcheck $S/new/flash2_mma_bench sanitize --kernel flash3_wgmma --heads 134 0,16 2>&1 | tail -3
  echo "-- racecheck, B·H = 134, N = 200, default and other-rows"
  timeout 120 compute-sanitizer --tool racecheck $S/new/flash2_mma_bench sanitize --kernel flash3_wgmma --heads 134 0,16 2>&1 | tail -3
  echo "-- memcheck and racecheck, B·H = 8, N = 1024 (three consumers skip two thirds of the last Q tile)"
  timeout 90 compute-sanitizer --tool memcheck $S/new/flash2_mma_bench sanitize --kernel flash3_wgmma --heads 8 --n 1024 0 2>&1 | tail -3
  timeout 120 compute-sanitizer --tool racecheck $S/new/flash2_mma_bench sanitize --kernel flash3_wgmma --heads 8 --n 1024 0 2>&1 | tail -3
} > $R/sanitize.log 2>&1; cat $R/sanitize.log
SETS="--kernel flash3_wgmma --dtype fp16,bf16 --d 64,128 --n 1024,2048,4096,16384 --causal 0,1" \
  timeout 300 scripts/mma_ab.sh $R/ab.csv 2 head=$S/cur/flash2_mma_bench counter=$S/counter/flash2_mma_bench \
  new=$S/new/flash2_mma_bench > $R/ab.report.txt 2>&1
tail -36 $R/ab.report.txt
cd $OUT && tar czf results.tgz r && rm -rf r
