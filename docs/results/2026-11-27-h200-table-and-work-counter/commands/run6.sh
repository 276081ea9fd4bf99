#!/usr/bin/env bash
# Session 33, call 6: the longest-first work-tile decode's divisions by launch constants as a wide multiplication and a shift
# (FastDivisor, the other decode as before: "divide2"), against a3634ea ("head"): the mma suite in 8 shards and the registry's GPU tests with
# divide's binaries, compute-sanitizer memcheck and racecheck at B·H = 134 (several L2 sections, a short last one),
# then an A/B on the causal persistent grid's shapes and fp8 d = 128 without the mask at N = 4096 as a control (4 rounds),
# and the SASS of every flash3 kernel against head's. One archive back.
set -u
S=.device-s33
R=$OUT/r; mkdir -p $R
for f in $S/*/*.xz; do xz -d -f -T8 "$f"; done
chmod +x $S/*/*
B=$S/divide2
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
SETS="--kernel flash3_wgmma --dtype fp16,bf16 --d 64 --n 1024,2048,4096,16384 --causal 1;--kernel flash3_wgmma --dtype fp16,bf16 --d 128 --n 1024,2048 --causal 1;--kernel flash3_fp8 --dtype bf16 --d 128,256 --n 1024,2048 --causal 1 --options 1;--kernel flash3_fp8 --dtype bf16 --d 128 --n 4096 --causal 0 --options 1" \
  timeout 450 scripts/mma_ab.sh $R/ab.csv 4 head=$S/cur/flash2_mma_bench divide2=$B/flash2_mma_bench > $R/ab.report.txt 2>&1
tail -24 $R/ab.report.txt
cuobjdump -sass $S/cur/flash2_mma_bench > /tmp/head.sass; cuobjdump -sass $B/flash2_mma_bench > /tmp/new.sass
python3 $S/sass_diff.py /tmp/head.sass /tmp/new.sass > $R/sass-diff.txt; grep -c . $R/sass-diff.txt; grep -v "(-0 +0)" $R/sass-diff.txt | cut -c1-160 | head -40
cd $OUT && tar czf results.tgz r && rm -rf r
