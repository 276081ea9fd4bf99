#!/usr/bin/env bash
# Session 31, call 6: v4 = the whole passes in a copy of the loop of their own (kv_first = 0, as the kernel without
# the split), the cut pieces after them in a second copy; v4nomerge: whole passes only, no merge. Against head, two
# rounds; the fp8 tests of v4; SASS of both.
set -u
S=.device-s31
for f in $S/*/*.xz; do xz -d -f -T8 "$f"; done
chmod +x $S/*/*
timeout 150 $S/v4/kernels_cuda_mma_tests --gtest_filter='*Fp8*d128_full*:Flash3Fp8.*:Flash3Schedule*' > $OUT/fp8-tests.log 2>&1; echo "fp8 tests rc=$?"; grep -E "^\[  (PASSED|FAILED) |FAILED  \]" $OUT/fp8-tests.log | head -20
SETS="--kernel flash3_fp8 --dtype bf16 --d 128 --n 1024,4096,16384 --causal 0 --options 1" \
  timeout 240 scripts/mma_ab.sh $OUT/ab.csv 2 head=$S/head/flash2_mma_bench v4=$S/v4/flash2_mma_bench v4nomerge=$S/v4nomerge/flash2_mma_bench > $OUT/ab.report.txt 2>&1
tail -7 $OUT/ab.report.txt
for v in v4 v4nomerge; do
  cuobjdump -sass -fun "_ZN8flashviz4cuda12wgmma_detail17Flash3WgmmaKernelI13__nv_fp8_e4m3Li128ELj131EEEv14CUtensorMap_stS4_S4_NS1_12Flash3ParamsE" $S/$v/flash2_mma_bench > $OUT/$v-f131.sass 2>/dev/null
done
gzip -f $OUT/*.sass $OUT/*.log
