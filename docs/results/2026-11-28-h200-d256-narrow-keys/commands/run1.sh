#!/usr/bin/env bash
# Session 36, call 1: the first walked tile in half where a consumer's rows see only its first half (consumer 0 on the
# causal diagonal), and ping-pong with the diagonal first (the other-schedule bit's causal kernels at d = 64 and 128),
# against 33d0264's build: the flash3 tests of the new build, compute-sanitizer, an A/B of the causal shapes.
set -u
S=.device-s36
R=$OUT/r; mkdir -p $R
for f in $S/*/*.xz; do xz -d -f -T8 "$f"; done
chmod +x $S/*/* 2>/dev/null
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader > $R/gpu.txt; cat $R/gpu.txt
B=$S/half
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
  timeout 200 compute-sanitizer --tool $tool $B/flash2_mma_bench sanitize --kernel flash3_wgmma --heads 134 8 > $R/$tool-flash3_wgmma-8.txt 2>&1
  echo "$tool flash3_wgmma other-schedule: $(tail -n 1 $R/$tool-flash3_wgmma-8.txt)"
done
timeout 200 compute-sanitizer --tool racecheck $B/flash2_mma_bench sanitize --kernel flash3_wgmma --heads 3 --n 2100 0 > $R/racecheck-n2100.txt 2>&1
echo "racecheck n2100: $(tail -n 1 $R/racecheck-n2100.txt)"
SETS="--kernel flash3_wgmma --dtype fp16,bf16 --d 64,128 --n 1024,4096,16384 --causal 1;--kernel flash3_wgmma --dtype fp16,bf16 --d 64,128 --n 1024,4096 --causal 1 --options 8;--kernel flash3_fp8 --dtype bf16 --d 128 --n 1024,4096,16384 --causal 1 --options 1" \
  CALL_TIMEOUT=150 timeout 420 scripts/mma_ab.sh $R/ab.csv 3 head=$S/base/flash2_mma_bench half=$S/half/flash2_mma_bench > $R/ab.report.txt 2>&1
python3 scripts/mma_ab_report.py $R/ab.csv > $R/ab.report.txt 2>&1
cat $R/ab.report.txt
cd $OUT && tar czf results.tgz r && rm -rf r
