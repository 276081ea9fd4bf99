#!/usr/bin/env bash
# Session 31, call 1: flash3_fp8 d = 128 without the mask with the persistent grid's last passes cut by K/V tiles
# ("split") against head (3a6bea4's binaries, the kernels of HEAD): correctness first (fp8 tests, the registry's
# fp8 tests, compute-sanitizer on a shape whose work tiles are cut), then three rounds of A/B timing.
set -u
S=.device-s31
for f in $S/*/*.xz; do xz -d -f -T8 "$f"; done
chmod +x $S/*/*
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv > $OUT/gpu.txt
timeout 60 $S/split/flash2_mma_bench sanitize --kernel flash3_fp8 --heads 67 0,1 > $OUT/smoke.log 2>&1; echo "smoke rc=$?"; tail -2 $OUT/smoke.log
timeout 150 $S/split/kernels_cuda_mma_tests --gtest_filter='*Fp8*:*fp8*:Flash3Schedule*' > $OUT/fp8-tests.log 2>&1; echo "fp8 tests rc=$?"; grep -E "^\[  (PASSED|FAILED) |FAILED  \]|fp8 error" $OUT/fp8-tests.log | head -40
timeout 100 $S/split/kernels_cuda_gpu_tests --gtest_filter='*fp8*:*Fp8*' > $OUT/registry-fp8.log 2>&1; echo "registry fp8 rc=$?"; grep -E "^\[  (PASSED|FAILED) |FAILED  \]" $OUT/registry-fp8.log | head
SETS="--kernel flash3_fp8 --dtype bf16 --d 128 --n 1024,4096,16384 --causal 0 --options 1;--kernel flash3_fp8 --dtype bf16 --d 128 --n 4096 --causal 1 --options 1" \
  timeout 240 scripts/mma_ab.sh $OUT/ab.csv 3 head=$S/head/flash2_mma_bench split=$S/split/flash2_mma_bench > $OUT/ab.report.txt 2>&1
tail -8 $OUT/ab.report.txt
for tool in memcheck racecheck; do
  timeout 100 compute-sanitizer --tool $tool $S/split/flash2_mma_bench sanitize --kernel flash3_fp8 --heads 67 0,1 > $OUT/san-$tool.log 2>&1
  echo "flash3_fp8 $tool rc=$? $(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY' $OUT/san-$tool.log | tail -1)"
done
gzip -f $OUT/*.log
