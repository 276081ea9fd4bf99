#!/usr/bin/env bash
# Session 30, call 12: fp8 d = 128 with three consumers (B_r = 192, 160 registers) and B_c = 64 (S m64n64k32, Vᵀ in
# 64-byte swizzle blocks, six K/V stages) against head, three rounds; its fp8 tests and compute-sanitizer.
set -u
S=.device-s30
for f in $S/*/*.xz; do xz -d -f -T8 "$f"; done
chmod +x $S/*/*
timeout 60 $S/x3/flash2_mma_bench sanitize --kernel flash3_fp8 0,1 > $OUT/smoke.log 2>&1; echo "smoke rc=$?"; tail -2 $OUT/smoke.log
SETS="--kernel flash3_fp8 --dtype bf16 --d 128 --n 1024,4096,16384 --causal 0,1 --options 1" \
  timeout 200 scripts/mma_ab.sh $OUT/ab.csv 3 head=$S/head/flash2_mma_bench x3=$S/x3/flash2_mma_bench > $OUT/ab.report.txt 2>&1
tail -9 $OUT/ab.report.txt
timeout 200 $S/x3/kernels_cuda_mma_tests --gtest_filter='*Fp8*:*fp8*' > $OUT/fp8-tests.log 2>&1; echo "fp8 tests rc=$?"; grep -E "^\[  (PASSED|FAILED) |FAILED  \]" $OUT/fp8-tests.log | head
for tool in memcheck racecheck; do
  timeout 120 compute-sanitizer --tool $tool $S/x3/flash2_mma_bench sanitize --kernel flash3_fp8 --heads 2 0,1 > $OUT/san-$tool.log 2>&1
  echo "flash3_fp8 $tool rc=$? $(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY' $OUT/san-$tool.log | tail -1)"
done
gzip -f $OUT/*.log
