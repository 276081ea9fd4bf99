#!/usr/bin/env bash
# Session 35, call 4: flash3_wgmma without the mask at N a multiple of B_c = 128 (16-bit d = 64 and 128) as a kernel
# whose softmax never masks (kFlagWholeKeyTiles), the K/V tiles walked first to last: the flash3 tests of the new
# build, compute-sanitizer, an A/B against b84fcac's kernels (f2w), three rounds.
set -u
S=.device-s35
R=$OUT/r; mkdir -p $R
for f in $S/*/*.xz; do xz -d -f -T8 "$f"; done
chmod +x $S/*/* 2>/dev/null
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader > $R/gpu.txt; cat $R/gpu.txt
B=$S/wk
for i in 0 1 2 3 4 5 6 7; do
  GTEST_TOTAL_SHARDS=8 GTEST_SHARD_INDEX=$i timeout 300 $B/kernels_cuda_mma_tests --gtest_filter='*Flash3*' --gtest_brief=1 > $R/tests-$i.log 2>&1 &
done
wait
cat $R/tests-*.log > $R/tests.log; rm $R/tests-*.log
grep -E "^\[  (PASSED|FAILED) |FAILED  \]" $R/tests.log | sort | uniq -c
for tool in memcheck racecheck; do
  timeout 200 compute-sanitizer --tool $tool $B/flash2_mma_bench sanitize --kernel flash3_wgmma --heads 134 --n 256 0 > $R/$tool.txt 2>&1
  echo "$tool: $(tail -n 1 $R/$tool.txt)"
done
SETS="--kernel flash3_wgmma --dtype fp16,bf16 --d 64,128 --n 1024,4096,16384 --causal 0" \
  CALL_TIMEOUT=150 scripts/mma_ab.sh $R/ab.csv 3 head=$S/f2w/flash2_mma_bench whole=$S/wk/flash2_mma_bench > $R/ab.report.txt 2>&1
cat $R/ab.report.txt
cd $OUT && tar czf results.tgz r && rm -rf r
