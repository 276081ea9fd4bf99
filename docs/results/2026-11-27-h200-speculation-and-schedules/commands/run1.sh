#!/usr/bin/env bash
# Session 34, call 1: e12 (ℓ's second columns neither rescaled nor restarted, ℓ taken with α by one FFMA; the K/V ring
# position divided unsigned) and e123 (e12 + the dead 16-key chunks of a diagonal tile skipped in the softmax) against
# 3e913c0 (head). The flash3 tests of e123 (8 shards), compute-sanitizer memcheck at B·H = 134, then a three-way A/B.
set -u
S=.device-s34
R=$OUT/r; mkdir -p $R
for f in $S/*/*.xz; do xz -d -f -T8 "$f"; done
chmod +x $S/*/*
B=$S/e123
for i in 0 1 2 3 4 5 6 7; do
  GTEST_TOTAL_SHARDS=8 GTEST_SHARD_INDEX=$i timeout 240 $B/kernels_cuda_mma_tests --gtest_filter='*Flash3*' --gtest_brief=1 > $R/tests-$i.log 2>&1 &
done
wait
cat $R/tests-*.log > $R/tests.log; rm $R/tests-*.log
grep -E "^\[  (PASSED|FAILED) |FAILED  \]" $R/tests.log | sort | uniq -c
timeout 150 compute-sanitizer --tool memcheck $B/flash2_mma_bench sanitize --kernel flash3_wgmma --heads 134 0 > $R/memcheck.txt 2>&1
timeout 100 compute-sanitizer --tool memcheck $B/flash2_mma_bench sanitize --kernel flash3_fp8 --heads 134 0 > $R/memcheck-fp8.txt 2>&1
for f in $R/memcheck.txt $R/memcheck-fp8.txt; do echo "$f: $(tail -n 1 $f)"; done
SETS="--kernel flash3_wgmma --dtype fp16,bf16 --d 64,128,256 --n 1024 --causal 1;--kernel flash3_wgmma --dtype fp16,bf16 --d 64,128 --n 4096 --causal 1;--kernel flash3_wgmma --dtype fp16 --d 64,128 --n 1024,4096 --causal 0;--kernel flash3_fp8 --dtype bf16 --d 128 --n 1024,4096,16384 --causal 0,1 --options 1" \
  timeout 480 scripts/mma_ab.sh $R/ab.csv 3 head=$S/head/flash2_mma_bench e12=$S/e12/flash2_mma_bench e123=$B/flash2_mma_bench > $R/ab.report.txt 2>&1
tail -30 $R/ab.report.txt
cd $OUT && tar czf results.tgz r && rm -rf r
