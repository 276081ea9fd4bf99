#!/usr/bin/env bash
# Dev run: unpack, split sweep (fp16), bench --decode fp16, peers.py --decode fp16. Logs and CSVs into $OUT.
set -uo pipefail
out=${OUT:?} bin=$(mktemp -d)
tar xJf .decode-dev/pack/bin.txz -C "$bin"
export LD_LIBRARY_PATH=$PWD/.decode-dev/pack/lib PYTHONUNBUFFERED=1
f=$bin/flashviz
mkdir -p "$out/w"
nvidia-smi --query-gpu=name,clocks.max.sm --format=csv,noheader | tee "$out/summary.txt"
for s in ${SPLITS:-1 2 4 8 16 32 64 128 0}; do
  timeout 60 "$f" bench --decode --kernels flash_decode --batch 1,8 --kv-len 4096,32768,131072 --splits $s \
    --csv "$out/w/splits_$s.csv" > /dev/null 2> "$out/w/splits_$s.log"
done
timeout ${BENCH_T:-120} "$f" bench --decode --dtype fp16 --csv "$out/w/decode_fp16.csv" ${BENCH_ARGS:-} > "$out/w/decode_fp16.out" 2> "$out/w/decode_fp16.log"
cat "$out/w/decode_fp16.out" >> "$out/summary.txt"
if [ -n "${PEERS:-1}" ]; then
  timeout ${PEERS_T:-150} python3 scripts/peers.py --decode --dtype fp16 ${PEERS_ARGS:-} --csv "$out/w/peers_fp16.csv" 2> "$out/w/peers_fp16.log"
fi
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
grep -hE "copy|GB/s" "$out/w/peers_fp16.log" 2>/dev/null | tee -a "$out/summary.txt"
grep -hE "validation failed|error" "$out"/w/*.log | head | tee -a "$out/summary.txt"
tar czf "$out/w.tgz" -C "$out" w && rm -rf "$out/w"
