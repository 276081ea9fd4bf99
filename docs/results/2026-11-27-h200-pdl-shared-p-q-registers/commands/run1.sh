#!/usr/bin/env bash
# Session 32, call 1: programmatic dependent launch for fp8 d = 128's cut last passes ("pdl"; "pdl8": the same, cut
# from 8 K/V tiles a work tile, so N = 1024 too) against a9f9f19 ("head"): the whole mma suite in 8 shards, the
# schedule's tests, the registry's GPU tests, compute-sanitizer on the cut shape (the dependent launch), an A/B on
# fp8 d = 128 without the mask (3 rounds), and how the flash3 kernels' SASS differs from head's.
set -u
S=.device-s32
for f in $S/*/*.xz; do xz -d -f -T8 "$f"; done
chmod +x $S/*/*
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv > $OUT/gpu.txt; cat $OUT/gpu.txt
for i in 0 1 2 3 4 5 6 7; do
  GTEST_TOTAL_SHARDS=8 GTEST_SHARD_INDEX=$i timeout 200 $S/pdl/kernels_cuda_mma_tests --gtest_brief=1 > $OUT/tests-$i.log 2>&1 &
done
wait
cat $OUT/tests-*.log > $OUT/tests.log; rm $OUT/tests-*.log
grep -E "^\[  (PASSED|FAILED) |FAILED  \]" $OUT/tests.log | sort | uniq -c
$S/pdl/kernels_cuda_mma_schedule_tests --gtest_brief=1 > $OUT/schedule-tests.log 2>&1; echo "schedule rc=$? $(grep -E '^\[  (PASSED|FAILED)' $OUT/schedule-tests.log)"
timeout 150 $S/pdl/kernels_cuda_gpu_tests --gtest_brief=1 > $OUT/registry-tests.log 2>&1; echo "registry rc=$?"; grep -E "^\[  (PASSED|FAILED|SKIPPED) |FAILED  \]" $OUT/registry-tests.log | head -5
for tool in memcheck racecheck; do
  timeout 100 compute-sanitizer --tool $tool $S/pdl/kernels_cuda_mma_tests --gtest_filter=Flash3Fp8.CutWorkTilesWithinBound > $OUT/san-$tool.log 2>&1
  echo "cut $tool rc=$? $(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY' $OUT/san-$tool.log | tail -1)"
done
SETS="--kernel flash3_fp8 --dtype bf16 --d 128 --n 1024,4096,16384 --causal 0 --options 1" \
  timeout 200 scripts/mma_ab.sh $OUT/ab.csv 3 head=$S/head/flash2_mma_bench pdl=$S/pdl/flash2_mma_bench pdl8=$S/pdl8/flash2_mma_bench > $OUT/ab.report.txt 2>&1
tail -12 $OUT/ab.report.txt
cuobjdump -sass $S/head/flash2_mma_bench > /tmp/head.sass; cuobjdump -sass $S/pdl/flash2_mma_bench > /tmp/pdl.sass
python3 $S/sass_diff.py /tmp/head.sass /tmp/pdl.sass > $OUT/sass-diff.txt; head -3 $OUT/sass-diff.txt; awk '{print $3}' $OUT/sass-diff.txt | sort | uniq -c | head
gzip -f $OUT/*.log
