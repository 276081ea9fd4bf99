#!/usr/bin/env bash
# Session 35, call 2: the last K/V tile first without the mask too (16-bit d = 128 and fp8 d = 128, whose loop then
# has no mask): the new build's flash3 tests, compute-sanitizer, an A/B of the unmasked d = 128 shapes against
# 437b018's build (head) and a557019's (diag, whose kernels there are head's: a control).
set -u
S=.device-s35
R=$OUT/r; mkdir -p $R
for f in $S/*/*.xz; do xz -d -f -T8 "$f"; done
chmod +x $S/*/* 2>/dev/null
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader > $R/gpu.txt; cat $R/gpu.txt
B=$S/nc
for i in 0 1 2 3 4 5 6 7; do
  GTEST_TOTAL_SHARDS=8 GTEST_SHARD_INDEX=$i timeout 300 $B/kernels_cuda_mma_tests --gtest_filter='*Flash3*' --gtest_brief=1 > $R/tests-$i.log 2>&1 &
done
wait
cat $R/tests-*.log > $R/tests.log; rm $R/tests-*.log
grep -E "^\[  (PASSED|FAILED) |FAILED  \]" $R/tests.log | sort | uniq -c
for tool in memcheck racecheck; do
  for k in flash3_wgmma flash3_fp8; do
    timeout 200 compute-sanitizer --tool $tool $B/flash2_mma_bench sanitize --kernel $k --heads 134 0 > $R/$tool-$k.txt 2>&1
    echo "$tool $k: $(tail -n 1 $R/$tool-$k.txt)"
  done
done
timeout 200 compute-sanitizer --tool racecheck $B/flash2_mma_bench sanitize --kernel flash3_fp8 --heads 17 --n 2000 0 > $R/racecheck-fp8-cut.txt 2>&1
echo "racecheck fp8 cut: $(tail -n 1 $R/racecheck-fp8-cut.txt)"
SETS="--kernel flash3_wgmma --dtype fp16,bf16 --d 128 --n 1024,4096,16384 --causal 0;--kernel flash3_fp8 --dtype bf16 --d 128 --n 1024,4096,16384 --causal 0 --options 1" \
  CALL_TIMEOUT=150 scripts/mma_ab.sh $R/ab.csv 3 head=$S/base/flash2_mma_bench diag=$S/diag/flash2_mma_bench nc=$S/nc/flash2_mma_bench > $R/ab.report.txt 2>&1
cat $R/ab.report.txt
cd $OUT && tar czf results.tgz r && rm -rf r
