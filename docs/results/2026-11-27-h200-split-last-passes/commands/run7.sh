#!/usr/bin/env bash
# Session 31, call 7: v5 = the whole passes as a launch of head's kernel (flags 3), the cut last passes as a second
# launch (flags 131). Against head, three rounds; its fp8 tests; compute-sanitizer on a cut shape; the SASS of its
# flags-3 kernel against head's.
set -u
S=.device-s31
for f in $S/*/*.xz; do xz -d -f -T8 "$f"; done
chmod +x $S/*/*
timeout 150 $S/v5/kernels_cuda_mma_tests --gtest_filter='*Fp8*d128_full*:Flash3Fp8.*:Flash3Schedule*' > $OUT/fp8-tests.log 2>&1; echo "fp8 tests rc=$?"; grep -E "^\[  (PASSED|FAILED) |FAILED  \]" $OUT/fp8-tests.log | head -20
SETS="--kernel flash3_fp8 --dtype bf16 --d 128 --n 1024,4096,16384 --causal 0 --options 1" \
  timeout 240 scripts/mma_ab.sh $OUT/ab.csv 3 head=$S/head/flash2_mma_bench v5=$S/v5/flash2_mma_bench > $OUT/ab.report.txt 2>&1
tail -6 $OUT/ab.report.txt
for tool in memcheck racecheck; do
  timeout 100 compute-sanitizer --tool $tool $S/v5/flash2_mma_bench sanitize --kernel flash3_fp8 --heads 67 0,1 > $OUT/san-$tool.log 2>&1
  echo "flash3_fp8 $tool rc=$? $(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY' $OUT/san-$tool.log | tail -1)"
done
for v in head v5; do
  for f in 3 131; do
    cuobjdump -sass -fun "_ZN8flashviz4cuda12wgmma_detail17Flash3WgmmaKernelI13__nv_fp8_e4m3Li128ELj${f}EEEv14CUtensorMap_stS4_S4_NS1_12Flash3ParamsE" $S/$v/flash2_mma_bench > $OUT/$v-f$f.sass 2>/dev/null
    [ -s $OUT/$v-f$f.sass ] || rm -f $OUT/$v-f$f.sass
  done
done
gzip -f $OUT/*.sass $OUT/*.log
