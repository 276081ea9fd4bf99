#!/usr/bin/env bash
# Session 32, call 9: Q_i in registers at 16-bit d = 128 without the mask in the overlapped loop only ("ship", the
# form committed; the serial-softmax kernels keep Q_i in shared memory) against a9f9f19 ("head"): the whole mma suite
# in 8 shards, the registry's GPU tests, compute-sanitizer (memcheck on the default and serial-softmax kernels,
# racecheck on the default one, B·H = 134 so that the persistent grid walks several work tiles a block), an A/B on
# flash3_wgmma d = 128 (2 rounds), and the SASS of every flash3 kernel against head's.
set -u
S=.device-s32
for f in $S/*/*.xz; do xz -d -f -T8 "$f"; done
chmod +x $S/*/*
for i in 0 1 2 3 4 5 6 7; do
  GTEST_TOTAL_SHARDS=8 GTEST_SHARD_INDEX=$i timeout 200 $S/ship/kernels_cuda_mma_tests --gtest_brief=1 > $OUT/tests-$i.log 2>&1 &
done
wait
cat $OUT/tests-*.log > $OUT/tests.log; rm $OUT/tests-*.log
grep -E "^\[  (PASSED|FAILED) |FAILED  \]" $OUT/tests.log | sort | uniq -c
timeout 150 $S/ship/kernels_cuda_gpu_tests --gtest_brief=1 > $OUT/registry-tests.log 2>&1; echo "registry rc=$?"; grep -E "^\[  (PASSED|FAILED|SKIPPED) |FAILED  \]" $OUT/registry-tests.log | head -5
{
  timeout 60 compute-sanitizer --tool memcheck $S/ship/flash2_mma_bench sanitize --kernel flash3_wgmma --heads 134 0,2 2>&1 | tail -3
  timeout 60 compute-sanitizer --tool racecheck $S/ship/flash2_mma_bench sanitize --kernel flash3_wgmma --heads 134 0 2>&1 | tail -3
} > $OUT/sanitize.log 2>&1; cat $OUT/sanitize.log
SETS="--kernel flash3_wgmma --dtype fp16,bf16 --d 128 --n 1024,4096,16384 --causal 0,1" \
  timeout 120 scripts/mma_ab.sh $OUT/ab.csv 2 head=$S/head/flash2_mma_bench ship=$S/ship/flash2_mma_bench > $OUT/ab.report.txt 2>&1
tail -14 $OUT/ab.report.txt
gzip -f $OUT/*.log
cuobjdump -sass $S/head/flash2_mma_bench > /tmp/head.sass; cuobjdump -sass $S/ship/flash2_mma_bench > /tmp/ship.sass
python3 $S/sass_diff.py /tmp/head.sass /tmp/ship.sass > $OUT/sass-diff.txt; awk '{print $3}' $OUT/sass-diff.txt | sort | uniq -c | sort -rn | head -5; grep -v "(-0 +0)" $OUT/sass-diff.txt | cut -c1-150
