#!/usr/bin/env bash
# Two or more builds of flash2_mma_bench timed against each other on the GPU machine: each binary smoke-tested
# under a timeout first (a kernel that deadlocks hangs its process; such a binary is left out), then ROUNDS rounds,
# the binaries alternating within each round, every `time` call under CALL_TIMEOUT seconds; the rows go to OUT_CSV
# labelled "NAME.rROUND" and scripts/mma_ab_report.py prints the table (the first binary is the base). Run from
# the repository root:
#   SETS="--kernel flash3_wgmma --dtype fp16,bf16 --d 128 --n 1024,4096 --causal 0,1;--kernel flash3_fp8 --d 128 \
#     --options 1" scripts/mma_ab.sh OUT_CSV ROUNDS NAME=BINARY [NAME=BINARY ...]
# SETS: ';'-separated argument lists of `flash2_mma_bench time` (default: every flash3 shape of the flagship table).
# A BINARY ending in .gz is unpacked first. SMOKE_TIMEOUT (60) and CALL_TIMEOUT (100) are in seconds.
set -u -o pipefail
out=${1:?output CSV} rounds=${2:?rounds}; shift 2
[ $# -ge 2 ] || { echo "need at least two NAME=BINARY" >&2; exit 2; }
default_sets="--kernel flash3_wgmma --dtype fp16,bf16 --d 64,128,256 --n 1024,4096,16384 --causal 0,1"
default_sets+=";--kernel flash3_fp8 --dtype bf16 --d 128,256 --n 1024,4096,16384 --causal 0,1 --options 1"
sets=${SETS:-$default_sets}
call_timeout=${CALL_TIMEOUT:-100}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
names=() bins=()
for pair in "$@"; do
  name=${pair%%=*} bin=${pair#*=}
  if [[ $bin == *.gz ]]; then gunzip -f "$bin" && bin=${bin%.gz}; fi
  chmod +x "$bin"
  if timeout "${SMOKE_TIMEOUT:-60}" "$bin" sanitize --kernel flash3_wgmma 0 > "$tmp/smoke.log" 2>&1; then
    names+=("$name") bins+=("$bin")
  else
    echo "$name left out: its smoke test failed or hung (rc $?)"; tail -3 "$tmp/smoke.log"
  fi
done
[ ${#names[@]} -ge 2 ] || { echo "fewer than two binaries left" >&2; exit 1; }
IFS=';' read -r -a set_list <<< "$sets"
for ((round = 1; round <= rounds; ++round)); do
  for i in "${!names[@]}"; do
    echo "== ${names[$i]} round $round ($(date -u +%T))"
    for set in "${set_list[@]}"; do
      # shellcheck disable=SC2086  # each set is an argument list
      timeout "$call_timeout" "${bins[$i]}" time $set --csv "$tmp/t.csv" > "$tmp/t.log" 2>&1 ||
        { echo "FAILED (rc $?): ${names[$i]} $set"; tail -3 "$tmp/t.log"; }
      grep -A3 FAIL "$tmp/t.log" | head -8
      [ -f "$tmp/t.csv" ] && tail -n +2 "$tmp/t.csv" | sed "s/^/${names[$i]}.r$round,/" >> "$out"
      rm -f "$tmp/t.csv"
    done
  done
done
python3 "$(dirname "$0")/mma_ab_report.py" "$out"
