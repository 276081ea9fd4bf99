#!/usr/bin/env bash
# Session 35, call 8: flash3_fp8 d = 128 without the mask, the attention alone, five passes at N = 1024, 4096, 16384
# with the binary of 1ccc041 (the kernels of 57b00fc), the fp8 GEMM ceiling before and after, and the GPU's clocks,
# temperature and power after each pass: is 1000 TFLOP/s at N = 4096 a result that holds (959 in the table's run,
# 1002-1004 in call 2)?
set -u
S=.device-s35
R=$OUT/r; mkdir -p $R
xz -d -f -T8 $S/fp8/flash2_mma_bench.xz; chmod +x $S/fp8/flash2_mma_bench
B=$S/fp8/flash2_mma_bench
q="--query-gpu=name,driver_version,clocks.sm,clocks.max.sm,temperature.gpu,power.draw,clocks_throttle_reasons.active"
nvidia-smi $q --format=csv > $R/gpu.csv
timeout 90 python3 scripts/gemm_ceiling.py --csv $R/gemm-1.csv > /dev/null 2>&1 || echo "gemm 1 failed"
for p in 1 2 3 4 5; do
  timeout 100 $B time --kernel flash3_fp8 --dtype bf16 --d 128 --n 1024,4096,16384 --causal 0 --options 1 \
    --csv $R/fp8-$p.csv > $R/fp8-$p.log 2>&1 || echo "pass $p failed"
  nvidia-smi $q --format=csv,noheader >> $R/gpu.csv
done
timeout 90 python3 scripts/gemm_ceiling.py --csv $R/gemm-2.csv > /dev/null 2>&1 || echo "gemm 2 failed"
python3 - <<'PY'
import csv, glob, os, collections
R = os.environ["OUT"] + "/r"
t = collections.defaultdict(list)
for f in sorted(glob.glob(R + "/fp8-*.csv")):
    for row in csv.DictReader(open(f)):
        t[int(row["n"])].append(float(row["tflops"]))
for n in sorted(t):
    print(f"fp8 d=128 N={n}: " + " ".join(f"{x:.0f}" for x in t[n]))
for f in ("gemm-1.csv", "gemm-2.csv"):
    for row in csv.reader(open(f"{R}/{f}")):
        if row and "fp8" in ",".join(row): print(f, ",".join(row))
PY
cat $R/gpu.csv
cd $OUT && tar czf results.tgz r && rm -rf r
