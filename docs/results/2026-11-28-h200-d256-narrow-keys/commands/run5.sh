#!/usr/bin/env bash
# Session 36, call 5: two more whole flagship tables (runs a and b) with d9bdf32's binaries (call 4's), PyTorch's peers
# and the GEMM ceiling in each, with the SM clock, power and temperature sampled every 200 ms throughout (clocks.csv),
# to see whether the shapes whose median lies far above their fastest launch ran at a lower clock. One archive back.
set -u
S=.device-s36
R=$OUT/r; mkdir -p $R
for f in $S/final/*.xz; do [ -f "${f%.xz}" ] || xz -d -k -f -T8 "$f"; done
chmod +x $S/final/*
B=$S/final
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,power.limit --format=csv > $R/gpu.txt; cat $R/gpu.txt
nvidia-smi --query-gpu=timestamp,clocks.sm,power.draw,temperature.gpu,clocks_throttle_reasons.active --format=csv -lms 200 > $R/clocks.csv 2>&1 &
sampler=$!
for run in a b; do
  mkdir -p $R/table-$run
  D_LIST=64,128,256 N_LIST=1024,4096,16384 ABLATION_D=128 ABLATION_N=4096 PART=time SKIP_ABLATION=1 \
    scripts/mma_device_run.sh $B $R/table-$run > $R/table-$run/time.out 2>&1
  echo "table $run rc=$?"
done
kill $sampler
for run in a b; do grep -E "^\| (fp16|bf16) \| (64|256) \| yes \| 1024|^\| (fp16|bf16) \| 128 \| no \| 1024|^\| 128 \| no \| (4096|16384)" $R/table-$run/report.md; done
cd $OUT && tar czf results.tgz r && rm -rf r
