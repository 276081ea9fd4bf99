#!/usr/bin/env bash
# trace --pass backward as a user runs it: its dQ, dK, dV (--grads-out) against an independent float64
# implementation written here in Python (the textbook gradients of softmax attention, nothing shared with the C++),
# on random shapes with edge tiles, causal and not, with dO from gen --dout and from --seed; the trace's lines
# (config, phases, counters) and its ledger totals against the closed forms; the usage errors.
# Usage: cli_backward_test.sh path/to/flashviz
set -eu
flashviz=$1
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

check() {  # check TRACE GRADS N D BR BC CAUSAL SCALE Q_K_V_FILE BATCH DOUT_FILE
  python3 - "$@" <<'PY'
import json, math, struct, sys
trace, grads, n, d, br, bc, causal, scale, qkv_file, batch, dout_file = sys.argv[1:]
n, d, br, bc, batch = int(n), int(d), int(br), int(bc), int(batch)
causal, scale = causal == "1", float(scale)
def floats(path, offset, count):
    raw = open(path, 'rb').read()[offset:offset + 4 * count]
    assert len(raw) == 4 * count, (path, len(raw), 4 * count)
    return list(struct.unpack(f'{count}f', raw))
nd = n * d
head = 12 + batch * 3 * nd * 4
q, k, v = (floats(qkv_file, head + t * nd * 4, nd) for t in range(3))
dout_all = open(dout_file, 'rb').read()
dout = floats(dout_file, batch * nd * 4 if len(dout_all) > nd * 4 else 0, nd)
row = lambda m, r: m[r * d:(r + 1) * d]
dot = lambda a, b: math.fsum(x * y for x, y in zip(a, b))
keys = lambda r: r + 1 if causal else n
# Forward: P row by row; backward: dV = Pᵀ dO, dP = dO Vᵀ, dS = P ∘ (dP − rowsum(P ∘ dP)), dQ = s·dS K, dK = s·dSᵀ Q.
dq, dk, dv = [0.0] * nd, [0.0] * nd, [0.0] * nd
for r in range(n):
    s = [scale * dot(row(q, r), row(k, c)) for c in range(keys(r))]
    m = max(s); e = [math.exp(x - m) for x in s]; l = math.fsum(e); p = [x / l for x in e]
    dp = [dot(row(dout, r), row(v, c)) for c in range(keys(r))]
    dsum = math.fsum(a * b for a, b in zip(p, dp))
    ds = [a * (b - dsum) for a, b in zip(p, dp)]
    for c in range(keys(r)):
        for t in range(d):
            dv[c * d + t] += p[c] * dout[r * d + t]
            dq[r * d + t] += scale * ds[c] * k[c * d + t]
            dk[c * d + t] += scale * ds[c] * q[r * d + t]
got = floats(grads, 0, 3 * nd)
for name, ref, off in (("dQ", dq, 0), ("dK", dk, nd), ("dV", dv, 2 * nd)):
    err = max(abs(got[off + t] - ref[t]) for t in range(nd))
    top = max(abs(x) for x in ref)
    # The model is float64; --grads-out rounds to float32: 2^-24 relative, plus the sums' own rounding.
    assert err <= 1e-6 * top + 1e-30, f"{name}: max |error| {err:.3g} against max |ref| {top:.3g}"
lines = [json.loads(x) for x in open(trace)]
cfg = lines[0]["config"]
assert cfg["pass"] == "backward" and cfg["n"] == n and cfg["d"] == d and cfg["causal"] == causal, cfg
phases = [x["phase"] for x in lines[1:]]
assert phases[0] == "init" and phases[-1] == "done", phases[:3]
tr, tc = -(-n // br), -(-n // bc)
assert phases[1:1 + tr] == ["delta"] * tr
assert phases.count("write_dk_dv") == tc and phases.count("load_kv") == tc
pairs = sum(1 for i in range(tr) for j in range(tc) if not causal or j * bc <= min(n, (i + 1) * br) - 1)
for ph in ("load_q", "scores", "probs", "grad_v", "grad_p", "grad_s", "grad_k", "grad_q"):
    assert phases.count(ph) == pairs, (ph, phases.count(ph), pairs)
reads = [x["hbm_read_bytes"] for x in lines[1:]]
assert all(a <= b for a, b in zip(reads, reads[1:])), "HBM reads must only grow"
done = lines[-1]
if not causal:  # closed forms, floats × 4
    R = 4 * (nd + nd + tc * (2 * nd + 2 * n) + tc * nd + 2 * nd)
    W = 4 * (nd + n + tc * nd + 2 * nd)
    assert done["hbm_read_bytes"] == R, (done["hbm_read_bytes"], R)
    assert done["hbm_write_bytes"] == W, (done["hbm_write_bytes"], W)
assert done["standard_hbm_read_bytes"] == 4 * (5 * n * n + 5 * nd)
assert done["standard_hbm_write_bytes"] == 4 * (2 * n * n + 3 * nd)
assert "forward_hbm_read_bytes" in done
print(f"ok: n={n} d={d} br={br} bc={bc} causal={causal}")
PY
}

# dO from gen --dout, on batch 1 of an HW4 file; edge tiles both ways.
"$flashviz" gen --b 2 --n 37 --d 5 --seed 4 --out "$work/in.bin" --dout "$work/dout.bin"
[ "$(stat -c %s "$work/dout.bin")" -eq $(( 2 * 37 * 5 * 4 )) ]
for causal in 0 1; do
  flag=$([ $causal = 1 ] && echo --causal || true)
  "$flashviz" trace --pass backward --input "$work/in.bin" --batch 1 --dout "$work/dout.bin" --br 8 --bc 16 $flag \
    --out "$work/t.jsonl" --grads-out "$work/g.bin"
  check "$work/t.jsonl" "$work/g.bin" 37 5 8 16 $causal "$(python3 -c 'print(5 ** -0.5)')" "$work/in.bin" 1 \
    "$work/dout.bin"
done
# dO of one head given directly (N·d values), tiles larger than N.
"$flashviz" gen --b 1 --n 19 --d 3 --seed 8 --out "$work/one.bin" --dout "$work/one_dout.bin"
"$flashviz" trace --pass backward --input "$work/one.bin" --dout "$work/one_dout.bin" --br 32 --bc 4 --causal \
  --out "$work/t1.jsonl" --grads-out "$work/g1.bin"
check "$work/t1.jsonl" "$work/g1.bin" 19 3 32 4 1 "$(python3 -c 'print(3 ** -0.5)')" "$work/one.bin" 0 \
  "$work/one_dout.bin"

# The summary: forward + backward totals.
"$flashviz" trace --pass backward --n 256 --d 16 --br 16 --bc 32 --summary > "$work/summary"
grep -q '^forward + backward hbm bytes' "$work/summary"
grep -q '^dQ ' "$work/summary"

# Usage errors: one line, exit status 2 (1 for a file that does not fit).
expect() {  # expect STATUS PATTERN COMMAND...
  local want=$1 pattern=$2; shift 2
  set +e; "$@" > /dev/null 2> "$work/err"; local got=$?; set -e
  [ "$got" -eq "$want" ] || { echo "exit $got, want $want: $*"; cat "$work/err"; exit 1; }
  grep -q -- "$pattern" "$work/err" || { echo "no '$pattern' in:"; cat "$work/err"; exit 1; }
}
expect 2 "add --pass backward" "$flashviz" trace --n 8 --d 2 --grads-out "$work/x.bin"
expect 2 "add --pass backward" "$flashviz" trace --n 8 --d 2 --dout "$work/one_dout.bin" --summary
expect 1 "N·d values" "$flashviz" trace --pass backward --n 8 --d 2 --dout "$work/one_dout.bin" --grads-out "$work/x.bin"
expect 2 "pass" "$flashviz" trace --pass sideways --n 8 --d 2 --summary
[ ! -e "$work/x.bin" ]
echo ok
