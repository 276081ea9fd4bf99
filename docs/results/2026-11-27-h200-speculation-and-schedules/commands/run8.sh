#!/usr/bin/env bash
# Session 34, call 8: the flagship table with the binaries of 616728a (flash2_mma's shipped kernel apart from its
# ablation kernels; flash3's PTX e009062's byte for byte), PyTorch's peers and the GEMM ceiling in one call; the mma
# suite in 8 shards and the registry's GPU tests with the same binaries; compute-sanitizer memcheck and racecheck
# (flash2_mma default and ablation words; flash3_wgmma and flash3_fp8 at B·H = 134). One archive back.
set -u
S=.device-s34
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
for tool in memcheck racecheck; do
  timeout 120 compute-sanitizer --tool $tool $B/flash2_mma_bench sanitize --kernel flash2_mma --heads 3 0,2,64,128 > $R/$tool-flash2.txt 2>&1
  timeout 150 compute-sanitizer --tool $tool $B/flash2_mma_bench sanitize --kernel flash3_wgmma --heads 134 0,16 > $R/$tool.txt 2>&1
  timeout 100 compute-sanitizer --tool $tool $B/flash2_mma_bench sanitize --kernel flash3_fp8 --heads 134 0 > $R/$tool-fp8.txt 2>&1
  for f in $R/$tool-flash2.txt $R/$tool.txt $R/$tool-fp8.txt; do echo "$f: $(tail -n 1 $f)"; done
done
cd $OUT && tar czf results.tgz r && rm -rf r
