#!/usr/bin/env bash
# trace --decode as a user runs it: its O (--o-out) against an independent float64 implementation written here in
# Python from the Q, K, V it used (--inputs-out), for grouped-query shapes, several split counts, page sizes and query
# rows; the trace's lines (config, phases in order, the merge's α) and its ledger totals against the closed forms
# (the KV cache read once per KV head); the usage errors.
# Usage: cli_decode_test.sh path/to/flashviz
set -eu
flashviz=$1
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

check() {  # check TRACE O_FILE INPUTS_FILE H G R N D P
  python3 - "$@" <<'PY'
import json, math, struct, sys
trace, o_file, inputs_file, H, G, R, N, D, P = sys.argv[1:]
H, G, R, N, D, P = map(int, (H, G, R, N, D, P))
raw = open(inputs_file, 'rb').read()
assert len(raw) == 4 * (H * R * D + 2 * G * N * D), (len(raw), H, G, R, N, D)
vals = struct.unpack(f'{len(raw) // 4}f', raw)
q, k, v = vals[:H * R * D], vals[H * R * D:H * R * D + G * N * D], vals[H * R * D + G * N * D:]
scale = 1 / math.sqrt(D)
ref = []
for h in range(H):
    g = h * G // H  # consecutive query heads share a KV head (PyTorch's enable_gqa)
    for r in range(R):
        qr = q[(h * R + r) * D:(h * R + r + 1) * D]
        s = [scale * math.fsum(a * b for a, b in zip(qr, k[(g * N + c) * D:(g * N + c + 1) * D])) for c in range(N)]
        m = max(s); e = [math.exp(x - m) for x in s]; l = math.fsum(e)
        ref += [math.fsum(e[c] * v[(g * N + c) * D + t] for c in range(N)) / l for t in range(D)]
got = struct.unpack(f'{H * R * D}f', open(o_file, 'rb').read())
err = max(abs(a - b) for a, b in zip(got, ref)); top = max(abs(x) for x in ref)
# The model is float64; --o-out rounds to float32 (2^-24 relative).
assert err <= 1e-6 * top, f"O: max |error| {err:.3g} against max |ref| {top:.3g}"
lines = [json.loads(x) for x in open(trace)]
cfg = lines[0]["config"]
assert cfg["mode"] == "decode" and (cfg["heads"], cfg["kv_heads"], cfg["q_rows"], cfg["kv_len"], cfg["d"], cfg["page"]) == (H, G, R, N, D, P), cfg
S, pages = cfg["splits"], -(-N // P)
assert cfg["pages"] == pages and sorted(cfg["block_table"]) == list(range(pages)), cfg
steps = lines[1:]
split_phases = ["load_kv", "load_q", "scores", "rowmax", "exp", "rowsum", "update_o", "write_partial" if S > 1 else "write_o"]
expect = [(ph, g, s) for g in range(G) for s in range(S) for ph in split_phases]
if S > 1:
    for g in range(G):
        expect += [("merge_stats", g, None)] + [("merge_o", g, s) for s in range(S)] + [("write_o", g, None)]
expect += [("done", None, None)]
assert [(x["phase"], x["kv_head"], x["split"]) for x in steps] == expect
# Splits hold whole pages, dealt out evenly, and cover the cache.
bounds = [x["keys"] for x in steps if x["phase"] == "load_kv" and x["kv_head"] == 0]
assert bounds == [[s * pages // S * P, min(N, (s + 1) * pages // S * P)] for s in range(S)], bounds
group = H // G
for x in steps:
    if x["kv_head"] is not None:
        assert x["query_heads"] == [x["kv_head"] * group, (x["kv_head"] + 1) * group]
# The merge's α_s = e^(m_s − M) ≤ 1, one of them 1 per row; ℓ = Σ α_s ℓ_s.
for x in steps:
    if x["phase"] == "merge_stats":
        partial = [y for y in steps if y["phase"] == "write_partial" and y["kv_head"] == x["kv_head"]]
        for row, alphas in enumerate(x["alpha"]):
            ms = [p["m"][row] for p in partial]; ls = [p["l"][row] for p in partial]
            assert x["m"][row] == max(ms)
            assert all(abs(a - math.exp(m - max(ms))) <= 1e-12 for a, m in zip(alphas, ms)) and max(alphas) == 1.0
            assert abs(x["l"][row] - math.fsum(a * l for a, l in zip(alphas, ls))) <= 1e-9 * x["l"][row]
done = steps[-1]
kv = 2 * 4 * G * N * D
assert done["kv_read_bytes"] == kv and done["kv_cache_reads"] == 1.0, done
assert done["naive_kv_cache_reads"] == H / G, done
partials = 2 * 4 * S * H * R * (D + 2) if S > 1 else 0
assert done["partial_bytes"] == partials, (done["partial_bytes"], partials)
reads = 4 * (S * H * R * D + G * pages) + kv + (4 * S * H * R * (D + 2) if S > 1 else 0)
writes = 4 * H * R * D + (4 * S * H * R * (D + 2) if S > 1 else 0)
assert done["hbm_read_bytes"] == reads and done["hbm_write_bytes"] == writes, (done, reads, writes)
PY
}

case_no=0
run_case() {  # run_case H G R N D P [extra options]
  local h=$1 g=$2 r=$3 n=$4 d=$5 p=$6; shift 6
  case_no=$((case_no + 1))
  local dir=$work/$case_no && mkdir -p "$dir"
  "$flashviz" trace --decode --heads "$h" --kv-heads "$g" --q-rows "$r" --kv-len "$n" --d "$d" --page "$p" \
    --seed "$case_no" --out "$dir/t.jsonl" --o-out "$dir/o.bin" --inputs-out "$dir/qkv.bin" "$@"
  check "$dir/t.jsonl" "$dir/o.bin" "$dir/qkv.bin" "$h" "$g" "$r" "$n" "$d" "$p"
}

run_case 8 2 1 100 16 16 --splits 3      # GQA, 4 query heads a KV head, an edge page
run_case 6 1 2 50 8 7 --splits 7         # one KV head (multi-query), R = 2, one page a split
run_case 4 4 3 37 4 4 --splits 1         # no grouping, speculative rows, one split: no partials, no merge
run_case 32 8 1 300 16 64                # S from M
run_case 2 1 4 129 8 1 --splits 5        # P = 1: every key its own page
run_case 4 2 1 1 8 16                    # a cache of one key

# --summary: the KV cache read once per KV head, decode_naive once per query head.
"$flashviz" trace --decode --heads 32 --kv-heads 8 --kv-len 4096 --d 128 --page 64 --splits 8 --summary > "$work/sum.txt"
grep -q "flash-decode reads it 1 time (once per KV head), decode_naive 4 (once per query head)" "$work/sum.txt"
grep -q "^K  *16777216  *0  *67108864 " "$work/sum.txt"

# Usage errors: exit 2 with the reason and "(see --help)", no output left behind.
expect_usage() {  # expect_usage TEXT ARGS...
  local text=$1; shift
  set +e
  "$flashviz" trace "$@" --out "$work/never.jsonl" 2> "$work/err.txt"
  local status=$?
  set -e
  [ "$status" = 2 ] || { echo "expected exit 2 for $*, got $status"; cat "$work/err.txt"; exit 1; }
  grep -q -- "$text" "$work/err.txt" || { echo "expected '$text' for $*:"; cat "$work/err.txt"; exit 1; }
  [ ! -e "$work/never.jsonl" ]
}
expect_usage "does not divide" --decode --heads 6 --kv-heads 4
expect_usage "does not apply to --decode" --decode --causal
expect_usage "does not apply to --decode" --decode --n 64
expect_usage "add --decode" --q-rows 2
expect_usage "add --decode" --kv-heads 2
expect_usage "whole pages" --decode --kv-len 64 --page 16 --splits 5
expect_usage "add --decode" --inputs-out "$work/x.bin"
expect_usage "holds no chunk" --decode --d 256 --sram 1024
echo "cli.decode: $case_no cases passed"
