#!/usr/bin/env bash
# Session 33, call 3: the work-tile counter handing work tiles over through named barriers 5 and 6 (producer-side
# fetch after each work tile's copies, no prefetch), "counter2", against a3634ea ("head"): the mma suite in 8 shards
# and the registry's GPU tests with counter2's binaries, compute-sanitizer memcheck and racecheck (full logs), then an
# A/B on the causal persistent shapes and d = 128 without the mask (3 rounds). One archive back.
set -u
S=.device-s33
R=$OUT/r; mkdir -p $R
for f in $S/*/*.xz; do xz -d -f -T8 "$f"; done
chmod +x $S/*/*
B=$S/counter2
for i in 0 1 2 3 4 5 6 7; do
  GTEST_TOTAL_SHARDS=8 GTEST_SHARD_INDEX=$i timeout 240 $B/kernels_cuda_mma_tests --gtest_brief=1 > $R/tests-$i.log 2>&1 &
done
timeout 240 $B/kernels_cuda_gpu_tests --gtest_brief=1 > $R/registry-tests.log 2>&1 &
wait
cat $R/tests-*.log > $R/tests.log; rm $R/tests-*.log
grep -E "^\[  (PASSED|FAILED) |FAILED  \]" $R/tests.log | sort | uniq -c
grep -E "^\[  (PASSED|FAILED|SKIPPED) |FAILED  \]" $R/registry-tests.log | head -5
timeout 90 compute-sanitizer --tool memcheck $B/flash2_mma_bench sanitize --kernel flash3_wgmma --heads 134 0,16 > $R/memcheck.txt 2>&1
timeout 150 compute-sanitizer --tool racecheck $B/flash2_mma_bench sanitize --kernel flash3_wgmma --heads 134 0,16 > $R/racecheck.txt 2>&1
timeout 90 compute-sanitizer --tool racecheck $S/cur/flash2_mma_bench sanitize --kernel flash3_wgmma --heads 134 0 > $R/racecheck-head.txt 2>&1
tail -2 $R/memcheck.txt $R/racecheck.txt $R/racecheck-head.txt
grep -m3 -A6 "Race reported\|hazard" $R/racecheck.txt | head -30
SETS="--kernel flash3_wgmma --dtype fp16,bf16 --d 64,128 --n 1024,2048,4096,16384 --causal 1;--kernel flash3_wgmma --dtype fp16,bf16 --d 128 --n 1024,2048,4096 --causal 0" \
  timeout 400 scripts/mma_ab.sh $R/ab.csv 3 head=$S/cur/flash2_mma_bench counter2=$B/flash2_mma_bench > $R/ab.report.txt 2>&1
tail -26 $R/ab.report.txt
cd $OUT && tar czf results.tgz r && rm -rf r
