#!/usr/bin/env bash
# Session 37, call 1: the ring's wgmma descriptors kept from stage 0's (desc) against a538b1e (base): the mma suite of
# desc in 8 shards, memcheck and racecheck of its flash3 kernels, the SASS of both, then three rounds at every flash3
# shape of the table.
set -u
S=.device-s37
R=$OUT/r; mkdir -p $R
for f in $S/*/*.xz; do xz -d -f -T8 "$f"; done
chmod +x $S/base/* $S/desc/*
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv > $R/gpu.txt
for i in 0 1 2 3 4 5 6 7; do
  GTEST_TOTAL_SHARDS=8 GTEST_SHARD_INDEX=$i timeout 240 $S/desc/kernels_cuda_mma_tests --gtest_brief=1 --gtest_filter='Flash3*:*Flash3*:*Fp8*' > $R/tests-$i.log 2>&1 &
done
wait
cat $R/tests-*.log > $R/tests.log; rm $R/tests-*.log
grep -E "^\[  (PASSED|FAILED) |FAILED  \]" $R/tests.log | sort | uniq -c
for tool in memcheck racecheck; do
  timeout 120 compute-sanitizer --tool $tool $S/desc/flash2_mma_bench sanitize --kernel flash3_wgmma --heads 134 --n 200 0,8 > $R/$tool-flash3.txt 2>&1
  echo "$tool: $(tail -n 2 $R/$tool-flash3.txt | tr '\n' ' ')"
  timeout 120 compute-sanitizer --tool $tool $S/desc/flash2_mma_bench sanitize --kernel flash3_fp8 --heads 17 --n 2000 0 > $R/$tool-fp8.txt 2>&1
  echo "$tool fp8: $(tail -n 2 $R/$tool-fp8.txt | tr '\n' ' ')"
done
for b in base desc; do cuobjdump --dump-sass $S/$b/flash2_mma_bench 2>/dev/null | gzip > $R/$b.sass.gz; done
CALL_TIMEOUT=150 timeout 420 scripts/mma_ab.sh $R/ab.csv 3 base=$S/base/flash2_mma_bench desc=$S/desc/flash2_mma_bench > $R/ab.log 2>&1
python3 scripts/mma_ab_report.py $R/ab.csv > $R/ab.report.txt 2>&1
cat $R/ab.report.txt
cd $OUT && tar czf results.tgz r && rm -rf r
