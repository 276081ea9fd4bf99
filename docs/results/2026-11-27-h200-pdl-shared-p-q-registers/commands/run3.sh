#!/usr/bin/env bash
# Session 32, call 3: fp8 d = 128 against a9f9f19 ("head"): "pdlp", the cut last passes as a programmatic dependent
# launch with the wait for the first grid in the producer thread alone (call 1's "pdl" had it at the kernel's end,
# which reshaped the cutting kernel's code); "q2", Q_i double-buffered at fp8 d = 128. The fp8 tests and
# compute-sanitizer on pdlp's cut shape, an A/B with and without the mask (3 rounds), the SASS of pdlp against head.
set -u
S=.device-s32
for f in $S/*/*.xz; do xz -d -f -T8 "$f"; done
chmod +x $S/*/*
timeout 200 $S/pdlp/kernels_cuda_mma_tests --gtest_filter='*Fp8*' --gtest_brief=1 > $OUT/pdlp-fp8-tests.log 2>&1; echo "pdlp fp8 tests rc=$?"; grep -E "^\[  (PASSED|FAILED) |FAILED  \]" $OUT/pdlp-fp8-tests.log | head
for tool in memcheck racecheck; do
  timeout 120 compute-sanitizer --tool $tool $S/pdlp/kernels_cuda_mma_tests --gtest_filter='Flash3Fp8.CutWorkTilesWithinBound' > $OUT/san-$tool.log 2>&1
  echo "$tool rc=$? $(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY' $OUT/san-$tool.log | tail -1)"
done
SETS="--kernel flash3_fp8 --dtype bf16 --d 128 --n 1024,4096,16384 --causal 0,1 --options 1" \
  timeout 300 scripts/mma_ab.sh $OUT/ab.csv 3 head=$S/head/flash2_mma_bench pdlp=$S/pdlp/flash2_mma_bench q2=$S/q2/flash2_mma_bench > $OUT/ab.report.txt 2>&1
tail -11 $OUT/ab.report.txt
cuobjdump -sass $S/head/flash2_mma_bench > /tmp/head.sass; cuobjdump -sass $S/pdlp/flash2_mma_bench > /tmp/pdlp.sass
python3 $S/sass_diff.py /tmp/head.sass /tmp/pdlp.sass > $OUT/sass-diff.txt; grep fp8_e4m3Li128ELj131 $OUT/sass-diff.txt
gzip -f $OUT/*.log
