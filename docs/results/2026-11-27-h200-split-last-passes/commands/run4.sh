#!/usr/bin/env bash
# Session 31, call 4: v2 = the cut last passes with the consumer's loop as head's (j from 0, the first key an
# offset) and the merge recomputing the scale; v2nosplit: its kernel on whole passes (merge compiled, never run);
# v2nomerge: whole passes, no merge code. Against head, two rounds; fp8 tests of v2; SASS of v2's kernel.
set -u
S=.device-s31
for f in $S/*/*.xz; do xz -d -f -T8 "$f"; done
chmod +x $S/*/*
timeout 150 $S/v2/kernels_cuda_mma_tests --gtest_filter='*Fp8*d128_full*:Flash3Fp8.*:Flash3Schedule*' > $OUT/fp8-tests.log 2>&1; echo "fp8 tests rc=$?"; grep -E "^\[  (PASSED|FAILED) |FAILED  \]" $OUT/fp8-tests.log | head -20
SETS="--kernel flash3_fp8 --dtype bf16 --d 128 --n 1024,4096,16384 --causal 0 --options 1" \
  timeout 240 scripts/mma_ab.sh $OUT/ab.csv 2 head=$S/head/flash2_mma_bench v2=$S/v2/flash2_mma_bench v2nosplit=$S/v2nosplit/flash2_mma_bench v2nomerge=$S/v2nomerge/flash2_mma_bench > $OUT/ab.report.txt 2>&1
tail -8 $OUT/ab.report.txt
for v in v2 v2nomerge; do
  cuobjdump -sass -fun "_ZN8flashviz4cuda12wgmma_detail17Flash3WgmmaKernelI13__nv_fp8_e4m3Li128ELj131EEEv14CUtensorMap_stS4_S4_NS1_12Flash3ParamsE" $S/$v/flash2_mma_bench > $OUT/$v-f131.sass 2>/dev/null
done
gzip -f $OUT/*.sass $OUT/*.log
