#!/usr/bin/env bash
# Session 33, call 7: the flagship table with the binaries of the commit that divides the longest-first decode by
# FastDivisor ("final"), PyTorch's peers and the GEMM ceiling in one call, twice (table/, repeat/); the mma suite in
# 8 shards and the registry's GPU tests with the same binaries; compute-sanitizer memcheck and racecheck at B·H = 134
# (flash3_wgmma default and other-rows, flash3_fp8 default); the SASS of every flash3 kernel against a3634ea's. One
# archive back.
set -u
S=.device-s33
R=$OUT/r; mkdir -p $R
for f in $S/*/*.xz; do xz -d -f -T8 "$f"; done
chmod +x $S/*/*
B=$S/final
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv > $R/gpu.txt
for t in table repeat; do
  mkdir -p $R/$t
  D_LIST=64,128,256 N_LIST=1024,4096,16384 ABLATION_D=128 ABLATION_N=4096 PART=time SKIP_ABLATION=1 \
    scripts/mma_device_run.sh $B $R/$t > $R/$t/time.out 2>&1
  echo "$t rc=$?"
done
tail -47 $R/table/time.out | head -40
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
cuobjdump -sass $S/cur/flash2_mma_bench > /tmp/head.sass; cuobjdump -sass $B/flash2_mma_bench > /tmp/new.sass
python3 $S/sass_diff.py /tmp/head.sass /tmp/new.sass > $R/sass-diff.txt; grep -vc "(-0 +0)" $R/sass-diff.txt
cd $OUT && tar czf results.tgz r && rm -rf r
