#!/usr/bin/env bash
# Session 31, call 8: the commit's binaries (cb46e61, "final"): the whole mma suite in 8 shards, the registry's GPU
# tests, compute-sanitizer on a cut shape, A/B against head (3a6bea4's binaries) on fp8 d = 128, and whether every
# other flash3 kernel's SASS is head's.
set -u
S=.device-s31
for f in $S/*/*.xz; do xz -d -f -T8 "$f"; done
chmod +x $S/*/*
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv > $OUT/gpu.txt
for i in 0 1 2 3 4 5 6 7; do
  GTEST_TOTAL_SHARDS=8 GTEST_SHARD_INDEX=$i timeout 200 $S/final/kernels_cuda_mma_tests --gtest_brief=1 > $OUT/tests-$i.log 2>&1 &
done
wait
cat $OUT/tests-*.log > $OUT/tests.log; rm $OUT/tests-*.log
grep -E "^\[  (PASSED|FAILED) |FAILED  \]" $OUT/tests.log | sort | uniq -c
timeout 150 $S/final/kernels_cuda_gpu_tests --gtest_brief=1 > $OUT/registry-tests.log 2>&1; echo "registry rc=$?"; grep -E "^\[  (PASSED|FAILED|SKIPPED) |FAILED  \]" $OUT/registry-tests.log | head -5
for tool in memcheck racecheck; do
  timeout 100 compute-sanitizer --tool $tool $S/final/kernels_cuda_mma_tests --gtest_filter=Flash3Fp8.CutWorkTilesWithinBound > $OUT/san-$tool.log 2>&1
  echo "cut $tool rc=$? $(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY' $OUT/san-$tool.log | tail -1)"
done
SETS="--kernel flash3_fp8 --dtype bf16 --d 128 --n 1024,4096,16384 --causal 0,1 --options 1" \
  timeout 150 scripts/mma_ab.sh $OUT/ab.csv 3 head=$S/head/flash2_mma_bench final=$S/final/flash2_mma_bench > $OUT/ab.report.txt 2>&1
tail -9 $OUT/ab.report.txt
cuobjdump -sass $S/head/flash2_mma_bench > /tmp/head.sass; cuobjdump -sass $S/final/flash2_mma_bench > /tmp/final.sass
python3 $S/sass_same.py /tmp/head.sass /tmp/final.sass > $OUT/sass-same.txt; head -20 $OUT/sass-same.txt
gzip -f $OUT/*.log
