#!/usr/bin/env bash
# Session 36, call 10: one more whole flagship table with 5d63dcb's binaries (call 9's), PyTorch's peers and the GEMM
# ceiling, with the SM clock, power and throttle reasons sampled every 200 ms (clocks.csv). One archive back.
set -u
S=.device-s36
R=$OUT/r; mkdir -p $R
for f in $S/final2/*.xz; do [ -f "${f%.xz}" ] || xz -d -k -f -T8 "$f"; done
chmod +x $S/final2/*
B=$S/final2
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,power.limit --format=csv > $R/gpu.txt; cat $R/gpu.txt
nvidia-smi --query-gpu=timestamp,clocks.sm,power.draw,temperature.gpu,clocks_throttle_reasons.active --format=csv -lms 200 > $R/clocks.csv 2>&1 &
sampler=$!
mkdir -p $R/table-c
D_LIST=64,128,256 N_LIST=1024,4096,16384 ABLATION_D=128 ABLATION_N=4096 PART=time SKIP_ABLATION=1 \
  scripts/mma_device_run.sh $B $R/table-c > $R/table-c/time.out 2>&1
echo "table c rc=$?"
kill $sampler
grep -E "^\| (fp16|bf16) \| (64|256) \| yes \| 1024|^\| (fp16|bf16) \| 128 \| no \| 1024|^\| 128 \| no \| (4096|16384)" $R/table-c/report.md
cd $OUT && tar czf results.tgz r && rm -rf r
