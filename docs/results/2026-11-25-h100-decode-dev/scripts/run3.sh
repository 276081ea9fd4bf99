#!/usr/bin/env bash
set -uo pipefail
out=${OUT:?}
mkdir -p "$out/w"
timeout 120 .decode-dev/kernels_cuda_decode_gpu_tests > "$out/w/tests.log" 2>&1; echo "tests rc=$?" | tee "$out/summary.txt"
grep -E "^\[  (PASSED|FAILED)" "$out/w/tests.log" | head -5 | tee -a "$out/summary.txt"
bin=$(mktemp -d); tar xJf .decode-dev/pack/bin.txz -C "$bin"
export LD_LIBRARY_PATH=$PWD/.decode-dev/pack/lib PYTHONUNBUFFERED=1
f=$bin/flashviz
for s in 1 2 4 8 16 32 0; do
  timeout 60 "$f" bench --decode --kernels flash_decode --batch 1,8 --kv-len 4096,32768,131072 --splits $s \
    --csv "$out/w/splits_$s.csv" > /dev/null 2> "$out/w/splits_$s.log"
done
timeout 100 "$f" bench --decode --dtype fp16 --csv "$out/w/decode_fp16.csv" > "$out/w/decode_fp16.out" 2> "$out/w/decode_fp16.log"
cat "$out/w/decode_fp16.out" >> "$out/summary.txt"
timeout 60 "$f" bench --decode --dtype bf16 --kernels flash_decode,flash_decode_paged --csv "$out/w/decode_bf16.csv" > "$out/w/decode_bf16.out" 2> "$out/w/decode_bf16.log"
cat "$out/w/decode_bf16.out" >> "$out/summary.txt"
for P in 16 256; do
  timeout 40 "$f" bench --decode --kernels flash_decode_paged --page $P --batch 1,8,64 --kv-len 32768 --csv "$out/w/paged_$P.csv" > "$out/w/paged_$P.out" 2> "$out/w/paged_$P.log"
  cat "$out/w/paged_$P.out" >> "$out/summary.txt"
done
python3 - "$out/w" <<'PY' | tee -a "$out/summary.txt"
import csv, glob, sys
t = {}
for p in sorted(glob.glob(sys.argv[1] + "/splits_*.csv")):
    s = int(p.rsplit("_", 1)[1].split(".")[0])
    for r in csv.DictReader(open(p)):
        t.setdefault((int(r["B"]), int(r["N"])), {})[s] = f"{float(r['gbps']):5.0f}/{r['splits']}" if r["status"] == "ok" else "n/a"
print("split sweep flash_decode fp16 GB/s / splits (0 = auto)")
for k, v in sorted(t.items()): print(k, " ".join(f"{s}:{c}" for s, c in sorted(v.items())))
PY
grep -hE "copy:|validation failed|error" "$out"/w/*.log | head | tee -a "$out/summary.txt"
tar czf "$out/w.tgz" -C "$out" w && rm -rf "$out/w"
