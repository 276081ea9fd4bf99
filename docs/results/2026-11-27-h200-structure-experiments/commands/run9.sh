#!/usr/bin/env bash
# Session 30, call 9: fp8 d = 128 with P̃_j converted to e4m3 before the wait for P̃_{j−1}V_{j−1}, the wait anchored
# after every conversion and the pairs joined into the fragment after it (pbw), against head, three rounds; pbw's
# fp8 tests and compute-sanitizer on flash3_fp8.
set -u
S=.device-s30
for f in $S/*/*.xz; do xz -d -f -T8 "$f"; done
chmod +x $S/*/*
SETS="--kernel flash3_fp8 --dtype bf16 --d 128 --n 1024,4096,16384 --causal 0,1 --options 1" \
  timeout 200 scripts/mma_ab.sh $OUT/ab.csv 3 head=$S/head/flash2_mma_bench pbw=$S/pbw/flash2_mma_bench > $OUT/ab.report.txt 2>&1
tail -9 $OUT/ab.report.txt
timeout 200 $S/pbw/kernels_cuda_mma_tests --gtest_filter='*Fp8*:*fp8*' > $OUT/fp8-tests.log 2>&1; echo "fp8 tests rc=$?"; grep -E "^\[  (PASSED|FAILED) |FAILED  \]" $OUT/fp8-tests.log | head
for tool in memcheck racecheck; do
  timeout 120 compute-sanitizer --tool $tool $S/pbw/flash2_mma_bench sanitize --kernel flash3_fp8 --heads 2 0,1 > $OUT/san.log 2>&1
  echo "flash3_fp8 $tool rc=$? $(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY' $OUT/san.log | tail -1)"
done
