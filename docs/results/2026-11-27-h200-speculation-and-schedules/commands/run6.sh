#!/usr/bin/env bash
# Session 34, call 6: flash2_mma after its mask, softmax statistics, exponentials and store became helpers that the
# shipped and the ablation kernels share (split2): the SASS of every flash2_mma kernel against call 5's build (split),
# and flash2's mma tests.
set -u
S=.device-s34
R=$OUT/r; mkdir -p $R
for f in $S/*/*.xz; do xz -d -f -T8 "$f"; done
chmod +x $S/*/*
B=$S/split2
for i in 0 1 2 3 4 5 6 7; do
  GTEST_TOTAL_SHARDS=8 GTEST_SHARD_INDEX=$i timeout 240 $B/kernels_cuda_mma_tests --gtest_filter='*Flash2Mma*' --gtest_brief=1 > $R/tests-$i.log 2>&1 &
done
cuobjdump -sass $S/split/flash2_mma_bench > /tmp/split.sass; cuobjdump -sass $B/flash2_mma_bench > /tmp/split2.sass
wait
cat $R/tests-*.log > $R/tests.log; rm $R/tests-*.log
grep -E "^\[  (PASSED|FAILED) |FAILED  \]" $R/tests.log | sort | uniq -c
python3 $S/sass_diff.py /tmp/split.sass /tmp/split2.sass Flash2Mma > $R/sass-diff.txt
grep -c "Flash2Mma" $R/sass-diff.txt; grep "Flash2Mma" $R/sass-diff.txt | grep -v "(-0 +0)" | cut -c1-160 | head -20
cd $OUT && tar czf results.tgz r && rm -rf r
