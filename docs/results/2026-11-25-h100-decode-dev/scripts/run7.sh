#!/usr/bin/env bash
# run7: fused merge (the last split merges) + paged: the split's block table in shared memory, one lookup per tile
# when P is a multiple of 64. Tests; before (the run4 pack's flashviz bench --decode); after (decode_lab, automatic
# rules, validated); split sweeps; paged P = 16, 256; PyTorch cuDNN. All in one call.
set -uo pipefail
out=${OUT:?}
mkdir -p "$out/w"
export PYTHONUNBUFFERED=1
new=.decode-dev/new
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader | tee "$out/summary.txt"
timeout 150 $new/kernels_cuda_decode_gpu_tests > "$out/w/tests.log" 2>&1; echo "tests rc=$?" | tee -a "$out/summary.txt"
grep -E "^\[  (PASSED|FAILED)|FAILED  \]" "$out/w/tests.log" | head -8 | tee -a "$out/summary.txt"
timeout 60 $new/decode_lab --splits 0 > "$out/w/after_auto.csv" 2> "$out/w/after_auto.log"
bin=$(mktemp -d); tar xJf .decode-dev/pack/bin.txz -C "$bin" ./flashviz
LD_LIBRARY_PATH=$PWD/.decode-dev/pack/lib timeout 60 "$bin/flashviz" bench --decode --kernels flash_decode,flash_decode_paged \
  --dtype fp16 --csv "$out/w/before_fp16.csv" > "$out/w/before_fp16.out" 2> "$out/w/before_fp16.log"
timeout 60 $new/decode_lab --compare 0 --batch 1,8 --splits 2,4,8,16,32,64 > "$out/w/sweep.csv" 2> "$out/w/sweep.log"
for P in 16 256; do
  timeout 40 $new/decode_lab --compare 0 --kernels flash_decode_paged --page $P > "$out/w/paged_$P.csv" 2> "$out/w/paged_$P.log"
done
timeout 80 python3 scripts/peers.py --decode --backends torch_cudnn --dtype fp16 --csv "$out/w/peers_fp16.csv" 2> "$out/w/peers_fp16.log"
python3 - "$out/w" <<'PY' | tee -a "$out/summary.txt"
import csv, sys
w = sys.argv[1]
def rows(name):
    try: return list(csv.DictReader(open(f"{w}/{name}")))
    except Exception as e: print(name, e); return []
cell = {}
def add(label, name):
    for r in rows(name):
        cell[(label or r["kernel"], int(r["B"]), int(r["N"]))] = f"{float(r['gbps']):.0f}/{r['splits']}" if r["status"] == "ok" else "FAIL"
for r in rows("before_fp16.csv"):
    cell[("before " + r["kernel"], int(r["B"]), int(r["N"]))] = f"{float(r['gbps']):.0f}/{r['splits']}" if r["status"] == "ok" else "fail"
for r in rows("after_auto.csv"):
    cell[("after " + r["kernel"], int(r["B"]), int(r["N"]))] = f"{float(r['gbps']):.0f}/{r['splits']}" if r["status"] == "ok" else "FAIL"
add("after paged P=16", "paged_16.csv"); add("after paged P=256", "paged_256.csv")
for r in rows("peers_fp16.csv"):
    if r["kernel"] != "torch_copy" and r["gbps"]: cell[(r["kernel"], int(r["B"]), int(r["N"]))] = f"{float(r['gbps']):.0f}"
shapes = [(b, n) for b in (1, 8, 64) for n in (4096, 32768, 131072)]
print("GB/s/splits", *[f"B{b}N{n}" for b, n in shapes], sep="\t")
for k in sorted({k[0] for k in cell}):
    print(k, *[cell.get((k, b, n), "-") for b, n in shapes], sep="\t")
t = {}
for r in rows("sweep.csv"):
    t.setdefault((r["kernel"], int(r["B"]), int(r["N"])), []).append(f"s{r['splits']}:{float(r['gbps']):.0f}" if r["status"] == "ok" else f"s{r['splits_asked']}:FAIL")
print("== split sweep (GB/s)")
for k, v in sorted(t.items()): print(*k, " ".join(v))
PY
grep -hE "copy|FAIL|fail|error" "$out"/w/*.log | grep -v "max |err" | head -20 | tee -a "$out/summary.txt"
tar czf "$out/w.tgz" -C "$out" w && rm -rf "$out/w"
