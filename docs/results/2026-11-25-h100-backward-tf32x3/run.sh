#!/usr/bin/env bash
# The device run of flash2_bwd_tf32x3 (one call, H100): the backward GPU tests, then flash2_bwd and
# flash2_bwd_tf32x3 beside PyTorch's EFFICIENT and MATH fp32 backward on the same shapes (d = 64, N = 1024, 4096,
# causal and not), as scripts/gpu_check.sh's bwd part runs them. From the repository root:
#   docs/results/2026-11-25-h100-backward-tf32x3/run.sh PACK_DIR OUT_DIR
# PACK_DIR from `FLASHVIZ_CHECK_PARTS=backward scripts/gpu_check.sh pack build PACK_DIR`.
set -uo pipefail
pack=${1:?pack directory} out=${2:?output directory}
bin=$(mktemp -d) work=$out/raw
mkdir -p "$work"
tar xJf "$pack/bin.txz" -C "$bin"
export LD_LIBRARY_PATH=$PWD/$pack/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv > "$work/gpu.txt"
timeout 90 "$bin/kernels_cuda_backward_gpu_tests" > "$work/gpu_tests.log" 2>&1
echo "gpu tests rc=$?: $(grep -E '^\[  (PASSED|FAILED)' "$work/gpu_tests.log" | tr '\n' ' ')"
grep -E "FAILED|Failure" "$work/gpu_tests.log" | head -20
grep -E "flash2_bwd_tf32x3.*max \|err\|" "$work/gpu_tests.log" | sort -t= -k2 -g | tail -3
for mask in "" --causal; do
  tag=d64${mask:+_causal}
  timeout 40 "$bin/flashviz" bench --pass backward --kernels flash2_bwd,flash2_bwd_tf32x3 --n 1024,4096 --d 64 $mask \
    --csv "$work/bwd_fp32_$tag.csv" 2> "$work/bwd_fp32_$tag.log"
  timeout 50 python3 scripts/peers.py --pass backward --n 1024,4096 --d 64 --dtype fp32 $mask \
    --backends torch_efficient,torch_math --csv "$work/bwd_peers_fp32_$tag.csv" 2> "$work/bwd_peers_fp32_$tag.log"
done
grep -h -E "validation failed|error:" "$work"/bwd_*.log | head -10
python3 - "$work" <<'PY' | tee "$work/table.txt"
import csv, glob, sys
rows = [r for path in sorted(glob.glob(sys.argv[1] + "/bwd_*.csv")) for r in csv.DictReader(open(path))]
key = lambda r: (int(r["causal"]), int(r["N"]))
peers = {(key(r), r["kernel"]): r for r in rows if r["kernel"].startswith("torch_")}
print("kernel              causal      N  TFLOP/s  max_err    efficient (ratio)       math (ratio)")
for r in sorted((r for r in rows if not r["kernel"].startswith("torch_")), key=lambda r: (key(r), r["kernel"])):
    ours = float(r["tflops"]) if r["status"] == "ok" else float("nan")
    cells = []
    for name in ("torch_efficient_bwd", "torch_math_bwd"):
        p = peers.get((key(r), name))
        ok = p is not None and p["status"] == "ok"
        cells.append(f"{float(p['tflops']):7.1f} ({ours / float(p['tflops']):4.2f}x)" if ok else f"{'-':>15s}")
    print(f"{r['kernel']:18s} {r['causal']:>6s} {r['N']:>6s} {ours:8.1f}  {r['max_abs_error'][:9]:>9s}  "
          + "  ".join(cells) + ("" if r["status"] == "ok" else "  " + r["status"][:60]))
PY
tar czf "$out/raw.tgz" -C "$work" . && cp "$work/table.txt" "$work/gpu_tests.log" "$out/" 2>/dev/null
