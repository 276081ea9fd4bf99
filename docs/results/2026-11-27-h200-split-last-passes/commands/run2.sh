#!/usr/bin/env bash
# Session 31, call 2: why the cut last passes measured slower (call 1: 0.93-0.95x at every N without the mask).
# split: as call 1 (tests' shape list trimmed); nosplit: the same kernel, the host giving it whole passes only (the
# merge compiled in, never run); nomerge: whole passes and the merge's code left out. SASS of the d = 128 kernel
# without the mask from head and split, if the machine has cuobjdump.
set -u
S=.device-s31
for f in $S/*/*.xz; do xz -d -f -T8 "$f"; done
chmod +x $S/*/*
timeout 200 $S/split/kernels_cuda_mma_tests --gtest_filter='*Fp8*d128_full*:Flash3Fp8.*:Flash3Schedule*' > $OUT/fp8-tests.log 2>&1; echo "fp8 tests rc=$?"; grep -E "^\[  (PASSED|FAILED) |FAILED  \]" $OUT/fp8-tests.log | head -20
SETS="--kernel flash3_fp8 --dtype bf16 --d 128 --n 1024,4096,16384 --causal 0 --options 1" \
  timeout 240 scripts/mma_ab.sh $OUT/ab.csv 2 head=$S/head/flash2_mma_bench split=$S/split/flash2_mma_bench nosplit=$S/nosplit/flash2_mma_bench nomerge=$S/nomerge/flash2_mma_bench > $OUT/ab.report.txt 2>&1
tail -10 $OUT/ab.report.txt
if command -v cuobjdump > /dev/null; then
  for v in head split nomerge; do
    for f in 3 131; do
      cuobjdump -sass -fun "_ZN8flashviz4cuda12wgmma_detail17Flash3WgmmaKernelI13__nv_fp8_e4m3Li128ELj${f}EEEv14CUtensorMap_stS4_S4_NS1_12Flash3ParamsE" $S/$v/flash2_mma_bench > $OUT/$v-f$f.sass 2>/dev/null
      [ -s $OUT/$v-f$f.sass ] && echo "$v f$f: $(grep -c '^ */\*[0-9a-f]*\*/' $OUT/$v-f$f.sass) instructions" || rm -f $OUT/$v-f$f.sass
    done
  done
  gzip -f $OUT/*.sass
else
  echo "no cuobjdump: $(ls /usr/local/cuda*/bin 2>/dev/null | tr '\n' ' ')"
fi
gzip -f $OUT/*.log
