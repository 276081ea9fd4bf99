#!/usr/bin/env bash
# Session 34, call 10: flash2_mma's ablation after the split (3ead09e's binary): each options bit off alone and all
# together against the shipped kernel (options 0), fp16 without the mask, d = 64 and 128, N = 2048 and 8192, as in
# run 3 of 2026-11-21; two passes in one process each, the first recorded (ours.csv), the second as repeat.csv.
set -u
S=.device-s34
R=$OUT/r; mkdir -p $R
xz -d -f -T8 $S/abl/flash2_mma_bench.xz; chmod +x $S/abl/flash2_mma_bench
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv > $R/gpu.txt
for f in ours repeat; do
  timeout 200 $S/abl/flash2_mma_bench time --kernel flash2_mma --dtype fp16 --d 64,128 --n 2048,8192 --causal 0 \
    --options 0,1,2,4,8,16,32,63 --csv $R/$f.csv > $R/$f.log 2>&1; echo "$f rc=$?"
done
python3 - <<'PY'
import csv, os
R = os.environ["OUT"] + "/r"
for f in ("ours", "repeat"):
    rows = list(csv.DictReader(open(f"{R}/{f}.csv")))
    d = {(r["d"], r["n"]): float(r["tflops"]) for r in rows if r["options"] == "default"}
    print(f, " ".join(f"{r['options']}/{r['d']}/{r['n']}={d[(r['d'], r['n'])] / float(r['tflops']):.2f}" for r in rows
                      if r["options"] != "default"))
PY
cd $OUT && tar czf results.tgz r && rm -rf r
