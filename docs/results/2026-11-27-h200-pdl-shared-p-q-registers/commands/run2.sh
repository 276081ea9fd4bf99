#!/usr/bin/env bash
# Session 32, call 2: P̃ through shared memory at fp8 d = 128 (wgmma SS for P̃V, stmatrix into two buffers a consumer):
# "sharedp" packs and stores P̃_j before the wait for P̃_{j−1}V_{j−1}, "sharedp-late" after it (the old order), against
# a9f9f19 ("head"): the fp8 tests and compute-sanitizer (memcheck, racecheck) on sharedp, then an A/B on fp8 d = 128
# with and without the mask (3 rounds).
set -u
S=.device-s32
for f in $S/*/*.xz; do xz -d -f -T8 "$f"; done
chmod +x $S/*/*
timeout 200 $S/sharedp/kernels_cuda_mma_tests --gtest_filter='*Fp8*' --gtest_brief=1 > $OUT/fp8-tests.log 2>&1; echo "fp8 tests rc=$?"; grep -E "^\[  (PASSED|FAILED) |FAILED  \]" $OUT/fp8-tests.log | head
for tool in memcheck racecheck; do
  timeout 120 compute-sanitizer --tool $tool $S/sharedp/kernels_cuda_mma_tests --gtest_filter='Flash3Fp8.CutWorkTilesWithinBound:Flash3Fp8.PrequantizedAndRepeatedLaunchesAgree' > $OUT/san-$tool.log 2>&1
  echo "$tool rc=$? $(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY' $OUT/san-$tool.log | tail -1)"
done
SETS="--kernel flash3_fp8 --dtype bf16 --d 128 --n 1024,4096,16384 --causal 0,1 --options 1" \
  timeout 300 scripts/mma_ab.sh $OUT/ab.csv 3 head=$S/head/flash2_mma_bench sharedp=$S/sharedp/flash2_mma_bench sharedp-late=$S/sharedp-late/flash2_mma_bench > $OUT/ab.report.txt 2>&1
tail -12 $OUT/ab.report.txt
gzip -f $OUT/*.log
