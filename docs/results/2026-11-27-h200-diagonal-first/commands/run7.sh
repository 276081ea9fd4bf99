#!/usr/bin/env bash
# Session 35, call 7: the whole mma suite of the build after the review (the flash2 bit-for-bit test at N = 1024 too,
# {2, 2, 256} among flash2's edge shapes; comments; flash3 PTX the same as 57b00fc's), in 8 shards.
set -u
S=.device-s35
R=$OUT/r; mkdir -p $R
xz -d -f -T8 $S/fix/kernels_cuda_mma_tests.xz; chmod +x $S/fix/kernels_cuda_mma_tests
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > $R/gpu.txt; cat $R/gpu.txt
for i in 0 1 2 3 4 5 6 7; do
  GTEST_TOTAL_SHARDS=8 GTEST_SHARD_INDEX=$i timeout 300 $S/fix/kernels_cuda_mma_tests --gtest_brief=1 > $R/tests-$i.log 2>&1 &
done
wait
cat $R/tests-*.log > $R/tests.log; rm $R/tests-*.log
grep -E "^\[  (PASSED|FAILED) |FAILED  \]" $R/tests.log | sort | uniq -c
timeout 120 $S/fix/kernels_cuda_mma_tests --gtest_filter='Flash2Mma.ShippedKernelIsTheAblationDefault:*Flash2MmaMatchesReference*default*:Flash3Wgmma.LongSequenceSeveralHeads' > $R/changed-tests.log 2>&1
grep -E "^\[  (PASSED|FAILED) |FAILED  \]|tests from .* ran" $R/changed-tests.log
cd $OUT && tar czf results.tgz r && rm -rf r
