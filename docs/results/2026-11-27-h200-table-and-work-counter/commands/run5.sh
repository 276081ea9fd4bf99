#!/usr/bin/env bash
# Session 33, call 5: the work-tile decode's divisions by launch constants as a wide multiplication and a shift
# (FastDivisor, "divide"), against a3634ea ("head"): the mma suite in 8 shards and the registry's GPU tests with
# divide's binaries, compute-sanitizer memcheck and racecheck at B·H = 134 (several L2 sections, a short last one),
# then an A/B on the persistent grid's shapes (3 rounds). One archive back.
set -u
S=.device-s33
R=$OUT/r; mkdir -p $R
for f in $S/*/*.xz; do xz -d -f -T8 "$f"; done
chmod +x $S/*/*
B=$S/divide
for i in 0 1 2 3 4 5 6 7; do
  GTEST_TOTAL_SHARDS=8 GTEST_SHARD_INDEX=$i timeout 240 $B/kernels_cuda_mma_tests --gtest_brief=1 > $R/tests-$i.log 2>&1 &
done
timeout 240 $B/kernels_cuda_gpu_tests --gtest_brief=1 > $R/registry-tests.log 2>&1 &
wait
cat $R/tests-*.log > $R/tests.log; rm $R/tests-*.log
grep -E "^\[  (PASSED|FAILED) |FAILED  \]" $R/tests.log | sort | uniq -c
grep -E "^\[  (PASSED|FAILED|SKIPPED) |FAILED  \]" $R/registry-tests.log | head -5
for tool in memcheck racecheck; do
  timeout 150 compute-sanitizer --tool $tool $B/flash2_mma_bench sanitize --kernel flash3_wgmma --heads 134 0,16 > $R/$tool.txt 2>&1
  timeout 100 compute-sanitizer --tool $tool $B/flash2_mma_bench sanitize --kernel flash3_fp8 --heads 134 0 > $R/$tool-fp8.txt 2>&1
  for f in $R/$tool.txt $R/$tool-fp8.txt; do echo "$f: $(tail -n 1 $f)"; done
done
SETS="--kernel flash3_wgmma --dtype fp16,bf16 --d 64,128 --n 1024,4096 --causal 0,1;--kernel flash3_fp8 --dtype bf16 --d 128 --n 1024,4096 --causal 0,1 --options 1" \
  timeout 450 scripts/mma_ab.sh $R/ab.csv 3 head=$S/cur/flash2_mma_bench divide=$B/flash2_mma_bench > $R/ab.report.txt 2>&1
tail -24 $R/ab.report.txt
cd $OUT && tar czf results.tgz r && rm -rf r
