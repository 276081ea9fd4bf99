#!/usr/bin/env bash
# Session 33, call 4: the grid of one block per work tile with each block's producer prefetching into L2 the Q_i, K_0
# and V_0 of the block a multiprocessor count ahead ("prefetch"), against a3634ea ("head"): the mma suite in 8 shards
# and the registry's GPU tests with prefetch's binaries, compute-sanitizer memcheck and racecheck on both grids and on
# fp8's causal grid of one block per tile, then an A/B on the shapes that run that grid (3 rounds). One archive back.
set -u
S=.device-s33
R=$OUT/r; mkdir -p $R
for f in $S/*/*.xz; do xz -d -f -T8 "$f"; done
chmod +x $S/*/*
B=$S/prefetch
for i in 0 1 2 3 4 5 6 7; do
  GTEST_TOTAL_SHARDS=8 GTEST_SHARD_INDEX=$i timeout 240 $B/kernels_cuda_mma_tests --gtest_brief=1 > $R/tests-$i.log 2>&1 &
done
timeout 240 $B/kernels_cuda_gpu_tests --gtest_brief=1 > $R/registry-tests.log 2>&1 &
wait
cat $R/tests-*.log > $R/tests.log; rm $R/tests-*.log
grep -E "^\[  (PASSED|FAILED) |FAILED  \]" $R/tests.log | sort | uniq -c
grep -E "^\[  (PASSED|FAILED|SKIPPED) |FAILED  \]" $R/registry-tests.log | head -5
for tool in memcheck racecheck; do
  timeout 150 compute-sanitizer --tool $tool $B/flash2_mma_bench sanitize --kernel flash3_wgmma --heads 134 0,1 > $R/$tool.txt 2>&1
  timeout 100 compute-sanitizer --tool $tool $B/flash2_mma_bench sanitize --kernel flash3_fp8 --heads 4 --n 2100 0 > $R/$tool-fp8.txt 2>&1
  for f in $R/$tool.txt $R/$tool-fp8.txt; do echo "$f: $(tail -n 1 $f)"; done
done
SETS="--kernel flash3_wgmma --dtype fp16,bf16 --d 256 --n 1024,4096,16384 --causal 0,1;--kernel flash3_wgmma --dtype fp16,bf16 --d 128 --n 4096,16384 --causal 1;--kernel flash3_fp8 --dtype bf16 --d 128,256 --n 4096,16384 --causal 1 --options 1;--kernel flash3_wgmma --dtype fp16 --d 64 --n 1024 --causal 1" \
  timeout 450 scripts/mma_ab.sh $R/ab.csv 3 head=$S/cur/flash2_mma_bench prefetch=$B/flash2_mma_bench > $R/ab.report.txt 2>&1
tail -24 $R/ab.report.txt
cd $OUT && tar czf results.tgz r && rm -rf r
