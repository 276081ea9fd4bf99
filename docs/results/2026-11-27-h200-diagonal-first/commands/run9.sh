#!/usr/bin/env bash
# Session 35, call 9: the flagship table twice more in one call (runs a and b), each a whole run of
# scripts/mma_device_run.sh (PART=time: our kernels, PyTorch's peers, the GEMM ceiling), with 1ccc041's bench (the
# kernels of 57b00fc, which call 5 timed once).
set -u
S=.device-s35
R=$OUT/r; mkdir -p $R
xz -d -f -T8 $S/fp8/flash2_mma_bench.xz 2>/dev/null; chmod +x $S/fp8/flash2_mma_bench
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv > $R/gpu.txt
for run in a b; do
  mkdir -p $R/$run
  D_LIST=64,128,256 N_LIST=1024,4096,16384 ABLATION_D=128 ABLATION_N=4096 PART=time SKIP_ABLATION=1 \
    scripts/mma_device_run.sh $S/fp8 $R/$run > $R/$run/time.out 2>&1
  echo "run $run rc=$?"
done
cd $OUT && tar czf results.tgz r && rm -rf r
