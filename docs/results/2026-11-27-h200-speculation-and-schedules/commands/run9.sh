#!/usr/bin/env bash
# Session 34, call 9: at the causal shapes below cuDNN, the default kernel (options 0) against the other schedule
# (options 8: ping-pong at d = 64 and 128, none at d = 256) and the other grid (1), in one binary, four passes.
set -u
S=.device-s34
R=$OUT/r; mkdir -p $R
xz -d -f -T8 $S/sweep/flash2_mma_bench.xz; chmod +x $S/sweep/flash2_mma_bench
for r in 1 2 3 4; do
  timeout 120 $S/sweep/flash2_mma_bench time --kernel flash3_wgmma --dtype fp16,bf16 --d 64,128,256 --n 1024,2048 \
    --causal 1 --options 0,8,1 --csv $R/sweep$r.csv > $R/sweep$r.log 2>&1 || echo "pass $r failed"
done
python3 - <<'PY'
import csv, glob, os, collections
R = os.environ["OUT"] + "/r"
t = collections.defaultdict(list)
for f in sorted(glob.glob(R + "/sweep*.csv")):
    for row in csv.DictReader(open(f)):
        t[(row["dtype"], int(row["d"]), int(row["n"]), row["options"])].append(float(row["tflops"]))
keys = sorted({k[:3] for k in t})
print("dtype d N | default (4 passes) | other-schedule | best/best | other-grid | best/best")
for k in keys:
    a, b, c = t[k + ("default",)], t[k + ("other-schedule",)], t[k + ("other-grid",)]
    print(*k, "|", " ".join(f"{x:.0f}" for x in a), "|", " ".join(f"{x:.0f}" for x in b), "|", f"{max(b)/max(a):.3f}",
          "|", " ".join(f"{x:.0f}" for x in c), "|", f"{max(c)/max(a):.3f}")
PY
cd $OUT && tar czf results.tgz r && rm -rf r
