#!/usr/bin/env bash
# Session 30, call 2: O through stmatrix into the staging tile (stsm: copy-out by the threads as before; tma: a TMA
# store) against head, every flagship shape, two rounds; tma's mma suite, registry tests, compute-sanitizer.
set -u
S=.device-s30
for f in $S/*/*.xz; do xz -d -f -T8 "$f"; done
chmod +x $S/*/*
B=$S/tma
timeout 400 scripts/mma_ab.sh $OUT/ab.csv 2 head=$S/head/flash2_mma_bench stsm=$S/stsm/flash2_mma_bench tma=$B/flash2_mma_bench > $OUT/ab.report.txt 2>&1
tail -55 $OUT/ab.report.txt
echo "== suite $(date -u +%T)"
for i in 0 1 2 3 4 5 6 7; do
  GTEST_TOTAL_SHARDS=8 GTEST_SHARD_INDEX=$i timeout 150 $B/kernels_cuda_mma_tests > $OUT/suite.$i.log 2>&1 &
done
wait
cat $OUT/suite.*.log > $OUT/tests.log; rm $OUT/suite.*.log
grep -h -E "^\[  (PASSED|FAILED) |FAILED  \]|SKIPPED \]" $OUT/tests.log | sort | uniq -c
echo "== registry $(date -u +%T)"
timeout 100 $B/kernels_cuda_gpu_tests --gtest_brief=1 > $OUT/registry-tests.log 2>&1; tail -3 $OUT/registry-tests.log
echo "== sanitize $(date -u +%T)"
for kernel in flash3_wgmma flash3_fp8; do
  for tool in memcheck racecheck; do
    timeout 120 compute-sanitizer --tool $tool $B/flash2_mma_bench sanitize --kernel $kernel --heads 2 0,1 > $OUT/san.log 2>&1
    echo "$kernel $tool heads 2 options 0,1 rc=$? $(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY' $OUT/san.log | tail -1)" | tee -a $OUT/sanitize-summary.txt
    cat $OUT/san.log >> $OUT/sanitize.log
  done
done
rm -f $OUT/san.log
gzip -f $OUT/tests.log $OUT/sanitize.log
tar -C $OUT -czf $OUT/call2.tar.gz ab.csv ab.report.txt tests.log.gz registry-tests.log sanitize-summary.txt sanitize.log.gz && ls -la $OUT
echo "== done $(date -u +%T)"
