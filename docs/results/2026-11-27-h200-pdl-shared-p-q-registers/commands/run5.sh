#!/usr/bin/env bash
# Session 32, call 5: Q_i in registers in flash3_wgmma too (16-bit d = 64 and 128 with two consumers, and fp8 d = 128;
# early release of Q_i's buffer): "qreg16" against a9f9f19 ("head"). The flash3 tests in 8 shards, compute-sanitizer
# on a 16-bit case, an A/B on every flash3_wgmma d = 64 and 128 shape of the table (2 rounds).
set -u
S=.device-s32
for f in $S/*/*.xz; do xz -d -f -T8 "$f"; done
chmod +x $S/*/*
for i in 0 1 2 3 4 5 6 7; do
  GTEST_TOTAL_SHARDS=8 GTEST_SHARD_INDEX=$i timeout 200 $S/qreg16/kernels_cuda_mma_tests --gtest_filter='*Flash3*' --gtest_brief=1 > $OUT/tests-$i.log 2>&1 &
done
wait
cat $OUT/tests-*.log > $OUT/tests.log; rm $OUT/tests-*.log
grep -E "^\[  (PASSED|FAILED) |FAILED  \]" $OUT/tests.log | sort | uniq -c
for tool in memcheck racecheck; do
  timeout 120 compute-sanitizer --tool $tool $S/qreg16/kernels_cuda_mma_tests --gtest_filter='Flash3Wgmma.PersistentGridWalksManyTiles' > $OUT/san-$tool.log 2>&1
  echo "$tool rc=$? $(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY' $OUT/san-$tool.log | tail -1)"
done
SETS="--kernel flash3_wgmma --dtype fp16,bf16 --d 64,128 --n 1024,4096,16384 --causal 0,1" \
  timeout 360 scripts/mma_ab.sh $OUT/ab.csv 2 head=$S/head/flash2_mma_bench qreg16=$S/qreg16/flash2_mma_bench > $OUT/ab.report.txt 2>&1
tail -27 $OUT/ab.report.txt
gzip -f $OUT/*.log
