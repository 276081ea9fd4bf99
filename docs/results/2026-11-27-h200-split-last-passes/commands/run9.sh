#!/usr/bin/env bash
# Session 31, call 9: the flagship table with the commit's binaries (cb46e61), PyTorch's peers and the GEMM ceiling,
# all in this one call.
set -u
S=.device-s31
for f in $S/final/flash2_mma_bench.xz; do xz -d -f -T8 "$f"; done
chmod +x $S/final/flash2_mma_bench
mkdir -p $OUT/table
D_LIST=64,128,256 N_LIST=1024,4096,16384 ABLATION_D=128 ABLATION_N=4096 PART=time SKIP_ABLATION=1 \
  scripts/mma_device_run.sh $S/final $OUT/table > $OUT/table/time.out 2>&1
echo "rc=$?"; tail -45 $OUT/table/time.out
