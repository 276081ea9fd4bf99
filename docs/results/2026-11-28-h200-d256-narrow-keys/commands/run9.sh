#!/usr/bin/env bash
# Session 36, call 9: the flagship table with the binaries of 5d63dcb (causal d = 256 on 64-key tiles, Q_i by consumer),
# PyTorch's peers and the GEMM ceiling in one call; the mma suite in 8 shards and the registry's GPU tests with the same binaries;
# compute-sanitizer memcheck and racecheck of flash3_wgmma (the default and other-schedule words) at B·H = 134, N = 200
# and 256. One archive back.
set -u
S=.device-s36
R=$OUT/r; mkdir -p $R
for f in $S/final2/*.xz; do xz -d -f -T8 "$f"; done
chmod +x $S/final2/*
B=$S/final2
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv > $R/gpu.txt
mkdir -p $R/table
D_LIST=64,128,256 N_LIST=1024,4096,16384 ABLATION_D=128 ABLATION_N=4096 PART=time SKIP_ABLATION=1 \
  scripts/mma_device_run.sh $B $R/table > $R/table/time.out 2>&1
echo "table rc=$?"
tail -47 $R/table/time.out | head -44
for i in 0 1 2 3 4 5 6 7; do
  GTEST_TOTAL_SHARDS=8 GTEST_SHARD_INDEX=$i timeout 240 $B/kernels_cuda_mma_tests --gtest_brief=1 > $R/tests-$i.log 2>&1 &
done
timeout 240 $B/kernels_cuda_gpu_tests --gtest_brief=1 > $R/registry-tests.log 2>&1 &
wait
cat $R/tests-*.log > $R/tests.log; rm $R/tests-*.log
grep -E "^\[  (PASSED|FAILED) |FAILED  \]" $R/tests.log | sort | uniq -c
grep -E "^\[  (PASSED|FAILED|SKIPPED) |FAILED  \]" $R/registry-tests.log | head -5
for tool in memcheck racecheck; do
  for n in 200 256; do
    timeout 150 compute-sanitizer --tool $tool $B/flash2_mma_bench sanitize --kernel flash3_wgmma --heads 134 --n $n 0,8 > $R/$tool-flash3-$n.txt 2>&1
    echo "$tool n=$n: $(tail -n 2 $R/$tool-flash3-$n.txt | tr '\n' ' ')"
  done
done
cd $OUT && tar czf results.tgz r && rm -rf r
