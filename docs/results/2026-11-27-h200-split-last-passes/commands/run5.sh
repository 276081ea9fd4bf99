#!/usr/bin/env bash
# Session 31, call 5: v3 = v2 with the scale moved to a vector register (a shuffle: ptxas had put it in a uniform one, FFMA R, R, UR, R, where head reads it from R22); v3nomerge the same on whole passes without the merge. Against head and v2nomerge.
set -u
S=.device-s31
for f in $S/*/*.xz; do xz -d -f -T8 "$f"; done
chmod +x $S/*/*
SETS="--kernel flash3_fp8 --dtype bf16 --d 128 --n 1024,4096,16384 --causal 0 --options 1" \
  timeout 240 scripts/mma_ab.sh $OUT/ab.csv 2 head=$S/head/flash2_mma_bench v2nomerge=$S/v2nomerge/flash2_mma_bench v3=$S/v3/flash2_mma_bench v3nomerge=$S/v3nomerge/flash2_mma_bench > $OUT/ab.report.txt 2>&1
tail -8 $OUT/ab.report.txt
for v in v3 v3nomerge; do
  cuobjdump -sass -fun "_ZN8flashviz4cuda12wgmma_detail17Flash3WgmmaKernelI13__nv_fp8_e4m3Li128ELj131EEEv14CUtensorMap_stS4_S4_NS1_12Flash3ParamsE" $S/$v/flash2_mma_bench > $OUT/$v-f131.sass 2>/dev/null
done
gzip -f $OUT/*.sass $OUT/*.log
