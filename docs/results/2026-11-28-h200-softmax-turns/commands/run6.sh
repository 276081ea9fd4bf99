#!/usr/bin/env bash
# Session 37, call 6: the flagship table with the final binaries (causal 16-bit d = 64 with two consumers taking turns
# for the softmax by default; ping-pong's turns around the softmax everywhere), PyTorch's peers and the GEMM ceiling
# in one call; the mma suite in 8 shards and the registry's GPU tests with the same binaries; compute-sanitizer
# memcheck and racecheck of flash3_wgmma (the default and other-schedule words) at B·H = 134, N = 200 and 256 and of
# flash3_fp8 at d = 256's ping-pong; then a second table (run b). One archive back.
set -u
S=.device-s37
R=$OUT/r; mkdir -p $R
for f in $S/final/*.xz; do xz -d -f -T8 "$f"; done
chmod +x $S/final/*
B=$S/final
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
mkdir -p $R/sanitize
for tool in memcheck racecheck; do
  for n in 200 256; do
    timeout 150 compute-sanitizer --tool $tool $B/flash2_mma_bench sanitize --kernel flash3_wgmma --heads 134 --n $n 0,8 > $R/sanitize/$tool-flash3-$n.txt 2>&1
    echo "$tool n=$n: $(tail -n 2 $R/sanitize/$tool-flash3-$n.txt | tr '\n' ' ')"
  done
  timeout 150 compute-sanitizer --tool $tool $B/flash2_mma_bench sanitize --kernel flash3_fp8 --heads 17 --n 300 0 > $R/sanitize/$tool-fp8-300.txt 2>&1
  echo "$tool fp8 n=300: $(tail -n 2 $R/sanitize/$tool-fp8-300.txt | tr '\n' ' ')"
done
mkdir -p $R/table-b
D_LIST=64,128,256 N_LIST=1024,4096,16384 ABLATION_D=128 ABLATION_N=4096 PART=time SKIP_ABLATION=1 \
  timeout 240 scripts/mma_device_run.sh $B $R/table-b > $R/table-b/time.out 2>&1
echo "table b rc=$?"
tail -47 $R/table-b/time.out | head -44
cd $OUT && tar czf results.tgz r && rm -rf r
