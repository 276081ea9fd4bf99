#!/usr/bin/env bash
# Session 37, call 11: the build with the SM clock in the bench's rows and ping-pong's d = 64 default for causal
# shapes only: the flash3_wgmma tests and the clock's own test, then call 9's contexts again with the clock measured
# on the device right after each shape's timed launches.
set -u
S=.device-s37
R=$OUT/r; mkdir -p $R
for f in $S/final2/*.xz; do xz -d -f -T8 "$f"; done
chmod +x $S/final2/*
B=$S/final2/flash2_mma_bench
for i in 0 1 2 3; do
  GTEST_TOTAL_SHARDS=4 GTEST_SHARD_INDEX=$i timeout 150 $S/final2/kernels_cuda_mma_tests --gtest_brief=1 \
    --gtest_filter='MmaCheck.*:Flash3Wgmma.*:*Flash3WgmmaMatchesReference*' > $R/tests-$i.log 2>&1 &
done
wait
cat $R/tests-*.log > $R/tests.log; rm $R/tests-*.log
grep -E "^\[  (PASSED|FAILED) |FAILED  \]" $R/tests.log | sort | uniq -c
for round in 1 2; do
  for ctx in "--n 1024,4096 --causal 0,1" "--n 1024 --causal 1" "--n 1024,16384 --causal 0,1"; do
    timeout 60 $B time --kernel flash3_wgmma --dtype fp16 --d 64 $ctx --csv $R/t.csv > /dev/null 2>&1
    tail -n +2 $R/t.csv | sed "s/^/r$round [$ctx],/" >> $R/context.csv
  done
done
python3 -c "
import csv
for r in csv.reader(open('$R/context.csv')):
    print(r[0], 'N', r[5], 'causal', r[7], 'TFLOP/s', r[10], 'SM MHz', r[12])
"
cd $OUT && tar czf results.tgz r && rm -rf r
