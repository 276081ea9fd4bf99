#!/usr/bin/env bash
# trace --ring as a user runs it: its O (--o-out) against an independent float64 implementation written here in
# Python from the Q, K, V it used (--inputs-out), for P = 2, 4, 8 devices, causal with both assignments and not; the
# trace's lines (config and slices, phases in ring order, the K/V each device holds, the final m and l, the merge's
# α and β) and its interconnect bytes against the closed form (each slice travels P − 1 hops); the usage errors.
# Usage: cli_ring_test.sh path/to/flashviz
set -eu
flashviz=$1
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

check() {  # check TRACE O_FILE INPUTS_FILE N D P CAUSAL ZIGZAG
  python3 - "$@" <<'PY'
import json, math, struct, sys
trace, o_file, inputs_file, N, D, P, causal, zigzag = sys.argv[1:]
N, D, P, causal, zigzag = int(N), int(D), int(P), causal == "1", zigzag == "1"
raw = open(inputs_file, 'rb').read()
assert len(raw) == 4 * 3 * N * D, (len(raw), N, D)
vals = struct.unpack(f'{3 * N * D}f', raw)
q, k, v = vals[:N * D], vals[N * D:2 * N * D], vals[2 * N * D:]
scale = 1 / math.sqrt(D)
ref, stats = [], []
for r in range(N):
    keys = range(r + 1) if causal else range(N)
    s = {c: scale * math.fsum(q[r * D + t] * k[c * D + t] for t in range(D)) for c in keys}
    m = max(s.values()); e = {c: math.exp(x - m) for c, x in s.items()}; l = math.fsum(e.values())
    ref += [math.fsum(e[c] * v[c * D + t] for c in keys) / l for t in range(D)]
    stats.append((m, l))
got = struct.unpack(f'{N * D}f', open(o_file, 'rb').read())
err = max(abs(a - b) for a, b in zip(got, ref)); top = max(abs(x) for x in ref)
assert err <= 1e-6 * top, f"O: max |error| {err:.3g} against max |ref| {top:.3g}"  # float32 output

lines = [json.loads(x) for x in open(trace)]
cfg = lines[0]["config"]
assert cfg["mode"] == "ring" and (cfg["n"], cfg["d"], cfg["devices"], cfg["causal"]) == (N, D, P, causal), cfg
C = 2 * P if zigzag else P
assert cfg["assignment"] == ("zigzag" if zigzag else "contiguous") and cfg["chunks"] == C, cfg
begin = lambda c: c * N // C
chunks_of = lambda p: [p, 2 * P - 1 - p] if zigzag else [p]
assert cfg["device_rows"] == [[[begin(c), begin(c + 1)] for c in chunks_of(p)] for p in range(P)], cfg
steps = lines[1:]
expect = []
for s in range(P):
    expect += [("attend", s), ("merge", s)] + ([("exchange", s)] if s < P - 1 else [])
expect += [("done", None)]
assert [(x["phase"], x["ring_step"]) for x in steps] == expect
for x in steps:
    s = x["ring_step"]
    for dev in x["devices"]:
        p = dev["device"]
        held = (p - s) % P if x["phase"] in ("attend", "merge") else ((p - s - 1) % P if x["phase"] == "exchange" else None)
        if held is not None:
            assert dev["kv_owner"] == held, (x["phase"], s, p, dev["kv_owner"])
            assert dev["kv_rows"] == [[begin(c), begin(c + 1)] for c in chunks_of(held)]
    if x["phase"] == "merge":  # α rescales the old state, β the block: one of them is 1 wherever a key was seen
        for a, b, m in zip(x["alpha"], x["beta"], x["m"]):
            if m is not None:
                assert max(a, b) == 1.0 and 0 <= a <= 1 and 0 <= b <= 1, (a, b)
done = steps[-1]
for r, (m, l) in enumerate(stats):
    assert abs(done["m"][r] - m) <= 1e-12 * max(1, abs(m)) and abs(done["l"][r] - l) <= 1e-12 * l, (r, done["m"][r], m)
assert done["link_bytes"] == 8 * (P - 1) * N * D, (done["link_bytes"], 8 * (P - 1) * N * D)
assert sum(d["link_received_bytes"] for d in done["devices"]) == done["link_bytes"]
assert done["hbm_read_bytes"] == sum(d["hbm_read_bytes"] for d in done["devices"])
PY
}

case_no=0
run_case() {  # run_case N D P CAUSAL ZIGZAG [extra options]
  local n=$1 d=$2 p=$3 causal=$4 zigzag=$5; shift 5
  case_no=$((case_no + 1))
  local dir=$work/$case_no && mkdir -p "$dir"
  local flags=()
  [ "$causal" = 1 ] && flags+=(--causal)
  [ "$zigzag" = 1 ] && flags+=(--zigzag)
  "$flashviz" trace --ring "$p" --n "$n" --d "$d" ${flags[@]+"${flags[@]}"} --seed "$case_no" \
    --out "$dir/t.jsonl" --o-out "$dir/o.bin" --inputs-out "$dir/qkv.bin" "$@"
  check "$dir/t.jsonl" "$dir/o.bin" "$dir/qkv.bin" "$n" "$d" "$p" "$causal" "$zigzag"
}

run_case 48 8 2 0 0                     # P = 2, no mask
run_case 48 8 2 1 1 --br 4 --bc 4       # P = 2, causal, zigzag
run_case 64 4 4 1 0 --br 8 --bc 8       # P = 4, causal, contiguous (device 0 idle after step 0)
run_case 67 8 4 1 1 --br 5 --bc 3       # P = 4, causal, zigzag, uneven chunks and edge tiles
run_case 50 4 8 1 1                     # P = 8, causal, zigzag, chunks of 3 or 4 rows
run_case 40 4 8 0 0 --br 2 --bc 2       # P = 8, no mask
run_case 37 4 8 1 0                     # P = 8, causal, contiguous, uneven

# --summary: the balance of the zigzag slices under the mask, and the cost model's line.
"$flashviz" trace --ring 4 --zigzag --causal --n 64 --d 8 --br 8 --bc 8 --summary > "$work/sum.txt"
[ "$(awk '$1 ~ /^[0-9]+$/ {print $7}' "$work/sum.txt" | sort -u | wc -l)" = 1 ] || { cat "$work/sum.txt"; exit 1; }
grep -q "^link_bytes 12288$" "$work/sum.txt"  # 8 · (P − 1) · N · d
grep -q "hides behind the compute from about 2000 rows" "$work/sum.txt"
"$flashviz" trace --ring 4 --causal --n 64 --d 8 --br 8 --bc 8 --summary > "$work/contiguous.txt"
[ "$(awk '$1 ~ /^[0-9]+$/ {print $7}' "$work/contiguous.txt" | sort -u | wc -l)" = 4 ] || { cat "$work/contiguous.txt"; exit 1; }

# Usage errors: exit 2 with the reason and "(see --help)", no output left behind.
expect_usage() {  # expect_usage TEXT ARGS...
  local text=$1; shift
  set +e
  "$flashviz" trace "$@" --out "$work/never.jsonl" 2> "$work/err.txt"
  local status=$?
  set -e
  [ "$status" = 2 ] || { echo "expected exit 2 for $*, got $status"; cat "$work/err.txt"; exit 1; }
  grep -q -- "$text" "$work/err.txt" || { echo "expected '$text' for $*:"; cat "$work/err.txt"; exit 1; }
  grep -q -- "(see --help)" "$work/err.txt"
  [ ! -e "$work/never.jsonl" ]
}
expect_usage "a ring of one device" --ring 1
expect_usage "every chunk needs a row" --ring 4 --zigzag --n 7
expect_usage "add --ring P" --zigzag
expect_usage "add --ring P" --ring-link-gbps 100
expect_usage "two different problems" --ring 2 --decode
expect_usage "does not apply to --ring" --ring 2 --pass backward
expect_usage "does not apply to --ring" --ring 2 --order q
expect_usage "positive number" --ring 2 --ring-tflops 0
expect_usage "not available with --ring" --ring 2 --gpu
echo "cli.ring: $case_no cases passed"
