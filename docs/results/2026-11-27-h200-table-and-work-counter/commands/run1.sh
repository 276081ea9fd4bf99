#!/usr/bin/env bash
# Session 33, call 1: the flagship table with a3634ea's binaries (Q_i in registers at 16-bit d = 128 since the last
# table), PyTorch's peers and the GEMM ceiling in one call, then the same command again (repeat/), then the mma suite
# in 8 shards.
set -u
S=.device-s33
for f in $S/cur/*.xz; do xz -d -f -T8 "$f"; done
chmod +x $S/cur/*
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv > $OUT/gpu.txt
for t in table repeat; do
  mkdir -p $OUT/$t
  D_LIST=64,128,256 N_LIST=1024,4096,16384 ABLATION_D=128 ABLATION_N=4096 PART=time SKIP_ABLATION=1 \
    scripts/mma_device_run.sh $S/cur $OUT/$t > $OUT/$t/time.out 2>&1
  echo "$t rc=$?"
done
tail -45 $OUT/table/time.out
for i in 0 1 2 3 4 5 6 7; do
  GTEST_TOTAL_SHARDS=8 GTEST_SHARD_INDEX=$i timeout 200 $S/cur/kernels_cuda_mma_tests --gtest_brief=1 > $OUT/tests-$i.log 2>&1 &
done
wait
cat $OUT/tests-*.log > $OUT/tests.log; rm $OUT/tests-*.log
grep -E "^\[  (PASSED|FAILED) |FAILED  \]" $OUT/tests.log | sort | uniq -c
