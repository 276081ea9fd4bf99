#!/usr/bin/env bash
# scripts/mma_ab.sh and scripts/mma_ab_report.py with stand-ins for flash2_mma_bench (no GPU needed): a binary whose
# smoke test hangs is left out within SMOKE_TIMEOUT, the others are timed round by round with their rows labelled
# NAME.rROUND, and the report sets each shape's best against the base binary's best.
# Usage: mma_ab_test.sh REPOSITORY_ROOT
set -eu
root=$1
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
# A stand-in bench: `sanitize` passes (or hangs when HANG is set); `time ... --csv FILE` writes one row per --n,
# TFLOP/s = SPEED × N / 1024 (the second round of the slow binary is 10% faster, as a noisy round would be).
make_bench() {  # make_bench NAME SPEED HANG
  cat > "$work/$1" <<STANDIN
#!/usr/bin/env bash
[ "\$1" = sanitize ] && { [ -n "$3" ] && sleep 30; echo "sanitize: 0 failure(s)"; exit 0; }
csv= n=
while [ \$# -gt 0 ]; do case \$1 in --csv) csv=\$2; shift;; --n) n=\$2; shift;; esac; shift; done
count=\$(cat "$work/$1.count" 2>/dev/null || echo 0); echo \$((count + 1)) > "$work/$1.count"
echo "kernel,options,dtype,d,N,B·H,causal,median ms,min ms,TFLOP/s,validated" > "\$csv"
for each in \${n//,/ }; do
  speed=\$(( $2 * each / 1024 )); [ "\$count" -ge 1 ] && [ $2 -lt 500 ] && speed=\$(( speed * 11 / 10 ))
  echo "flash3_wgmma,default,fp16,128,\$each,1024,0,1.0,1.0,\$speed,1" >> "\$csv"
done
STANDIN
  chmod +x "$work/$1"
}
make_bench base 400 ""
make_bench new 500 ""
make_bench stuck 600 yes
out=$work/ab.csv
SETS="--kernel flash3_wgmma --n 1024,2048" SMOKE_TIMEOUT=2 \
  "$root/scripts/mma_ab.sh" "$out" 2 base="$work/base" stuck="$work/stuck" new="$work/new" > "$work/report.txt"
cat "$work/report.txt"
grep -q "stuck left out" "$work/report.txt"
if grep -q "^stuck" "$out"; then echo "the hanging binary was timed"; exit 1; fi
[ "$(grep -c '^base.r1,' "$out")" = 2 ] && [ "$(grep -c '^new.r2,' "$out")" = 2 ]
# base: 400 then 440 at N = 1024 (best 440), new: 500 both rounds: 500 / 440 = 1.14; at 2048: 1000 / 880.
grep -q "^flash3_wgmma default fp16 128 0 1024 | 400 440 | 500 500 (1.14)" "$work/report.txt"
grep -q "^flash3_wgmma default fp16 128 0 2048 | 800 880 | 1000 1000 (1.14)" "$work/report.txt"
grep -q "^new: geometric mean of best/base 1.136 over 2 shapes (1.14-1.14)" "$work/report.txt"
# Rows that carry the SM clock (flash2_mma_bench's sm_mhz) get each round's clock after the binary's values; rows
# without it (the older CSVs above) get none.
if grep -q "MHz" "$work/report.txt"; then echo "a clock was reported for rows without one"; exit 1; fi
clocked=$work/clocked.csv
for label in base.r1 new.r1 base.r2 new.r2; do
  case $label in base.r1) speed=400 mhz=1980;; new.r1) speed=500 mhz=1845;; base.r2) speed=410 mhz=1965;;
                 new.r2) speed=520 mhz=1740;; esac
  echo "$label,flash3_wgmma,default,fp16,64,1024,1024,1,1.0,1.0,$speed,1,$mhz" >> "$clocked"
done
python3 "$root/scripts/mma_ab_report.py" "$clocked" > "$work/clocked.txt"
cat "$work/clocked.txt"
grep -q "^flash3_wgmma default fp16 64 1 1024 | 400 410 @ 1980 1965 MHz | 500 520 (1.27) @ 1845 1740 MHz" \
  "$work/clocked.txt"
echo "mma_ab: ok"
