#!/usr/bin/env bash
# Session 32, call 4: Q_i in registers at fp8 d = 128 (ldmatrix once a work tile, S = Q_i K_jᵀ as wgmma RS): "qreg"
# releases Q_i's buffer as soon as the fragments are loaded (the next work tile's Q_i loads a ring's depth ahead),
# "qreg-late" at the old place (after the work tile's last S GEMM), against a9f9f19 ("head"). The fp8 tests and
# compute-sanitizer on qreg, an A/B with and without the mask (3 rounds).
set -u
S=.device-s32
for f in $S/*/*.xz; do xz -d -f -T8 "$f"; done
chmod +x $S/*/*
timeout 200 $S/qreg/kernels_cuda_mma_tests --gtest_filter='*Fp8*' --gtest_brief=1 > $OUT/qreg-fp8-tests.log 2>&1; echo "qreg fp8 tests rc=$?"; grep -E "^\[  (PASSED|FAILED) |FAILED  \]" $OUT/qreg-fp8-tests.log | head
for tool in memcheck racecheck; do
  timeout 120 compute-sanitizer --tool $tool $S/qreg/kernels_cuda_mma_tests --gtest_filter='Flash3Fp8.CutWorkTilesWithinBound:Flash3Fp8.PrequantizedAndRepeatedLaunchesAgree' > $OUT/san-$tool.log 2>&1
  echo "$tool rc=$? $(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY' $OUT/san-$tool.log | tail -1)"
done
SETS="--kernel flash3_fp8 --dtype bf16 --d 128 --n 1024,4096,16384 --causal 0,1 --options 1" \
  timeout 300 scripts/mma_ab.sh $OUT/ab.csv 3 head=$S/head/flash2_mma_bench qreg=$S/qreg/flash2_mma_bench qreg-late=$S/qreg-late/flash2_mma_bench > $OUT/ab.report.txt 2>&1
tail -11 $OUT/ab.report.txt
gzip -f $OUT/*.log
