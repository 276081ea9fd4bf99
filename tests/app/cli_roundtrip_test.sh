#!/usr/bin/env bash
# gen -> hw4 (CPU) -> compare with gen's float64 reference at the assignment's 5e-3 margin; trace's --o-out
# equals the reference too. Usage: cli_roundtrip_test.sh path/to/flashviz
set -eu
flashviz=$1
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
compare() {  # compare A B TOLERANCE: max |a - b| over two float32 files
  python3 - "$1" "$2" "$3" <<'PY'
import struct, sys
a = open(sys.argv[1], 'rb').read(); b = open(sys.argv[2], 'rb').read()
assert len(a) == len(b) and len(a) > 0, (len(a), len(b))
n = len(a) // 4
x = struct.unpack(f'{n}f', a); y = struct.unpack(f'{n}f', b)
worst = max(abs(p - q) for p, q in zip(x, y))
print(f'max |error| = {worst:.3g} over {n} values')
sys.exit(0 if worst <= float(sys.argv[3]) else 1)
PY
}
for shape in "2 128 32" "3 256 64" "2 100 7"; do
  set -- $shape
  "$flashviz" gen --b $1 --n $2 --d $3 --seed 5 --out "$work/in.bin" --ref "$work/ref.bin"
  [ "$(stat -c %s "$work/in.bin")" -eq $(( 12 + $1 * 3 * $2 * $3 * 4 )) ]
  "$flashviz" hw4 "$work/in.bin" "$work/out.bin" --backend cpu
  compare "$work/out.bin" "$work/ref.bin" 5e-3
  # auto falls back to the CPU when no GPU is there, with a notice
  "$flashviz" hw4 "$work/in.bin" "$work/auto.bin" 2> "$work/notice" || true
  [ -s "$work/auto.bin" ] || { echo "auto backend wrote nothing"; cat "$work/notice"; exit 1; }
done
# trace on batch 1 of an HW4 file: its O equals the reference's batch 1.
"$flashviz" gen --b 2 --n 40 --d 8 --seed 9 --out "$work/small.bin" --ref "$work/small_ref.bin"
"$flashviz" trace --input "$work/small.bin" --batch 1 --br 8 --bc 16 --order q --out "$work/t.jsonl" \
  --o-out "$work/o.bin"
tail -c $(( 40 * 8 * 4 )) "$work/small_ref.bin" > "$work/ref1.bin"
compare "$work/o.bin" "$work/ref1.bin" 1e-6
head -1 "$work/t.jsonl" | grep -q '"order":"q"'
tail -1 "$work/t.jsonl" | grep -q '"phase":"done"'
"$flashviz" trace --n 32768 --d 64 --sram 49152 --summary | grep -q '^hbm_read_bytes'
echo ok
