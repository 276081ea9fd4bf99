#!/usr/bin/env bash
# Session 36, call 12: the flash3 tests and compute-sanitizer with the build of the host-side tidy-up after f797372
# (causal d = 256's TMA box rows read from kCausalD256's traits; the kernels' PTX unchanged).
set -u
S=.device-s36
R=$OUT/r; mkdir -p $R
for f in $S/host/*.xz; do xz -d -f -T8 "$f"; done
chmod +x $S/host/*
B=$S/host
for i in 0 1 2 3 4 5 6 7; do
  GTEST_TOTAL_SHARDS=8 GTEST_SHARD_INDEX=$i timeout 200 $B/kernels_cuda_mma_tests --gtest_filter='*Flash3*' --gtest_brief=1 > $R/tests-$i.log 2>&1 &
done
wait
cat $R/tests-*.log > $R/tests.log; rm $R/tests-*.log
grep -E "^\[  (PASSED|FAILED) |FAILED  \]" $R/tests.log | sort | uniq -c
timeout 150 compute-sanitizer --tool memcheck $B/flash2_mma_bench sanitize --kernel flash3_wgmma --heads 134 0,1,8 > $R/memcheck.txt 2>&1
echo "memcheck: $(tail -n 2 $R/memcheck.txt | tr '\n' ' ')"
$B/flash2_mma_bench time --kernel flash3_wgmma --dtype fp16,bf16 --d 256 --n 1024 --causal 0,1 --csv $R/time.csv > $R/time.log 2>&1; cat $R/time.csv
cd $OUT && tar czf results.tgz r && rm -rf r
