#!/usr/bin/env bash
# One run on a GPU machine for hw4 on the GPU: GPU tests, the kernels' SASS, kernel timings against
# PyTorch on the same shapes, and `flashviz hw4` end to end at every case size of the assignment (largest B),
# each run twice: with the input evicted from the page cache (cold) and again (warm).
#
#   scripts/hw4_device_run.sh BIN_DIR OUT_DIR [STAGES]     STAGES: comma list of tests,bench,torch,e2e (all)
#
# BIN_DIR holds flashviz, hw4_bench, hw4_kernel_gpu_tests, hw4_cli_gpu_tests built for sm_90 (README.md,
# "hw4 on the GPU", says how). Inputs are generated there with `flashviz gen` (nothing large travels).
# OUT_DIR gets at most 8 files: machine.txt, tests.log, bench.log, bench.csv, torch.log, torch.csv, e2e.log,
# e2e.csv.
set -u
bin=$(cd "$1" && pwd)
out=$2
stages=${3:-tests,bench,torch,e2e}
root=$(cd "$(dirname "$0")/.." && pwd)
export FLASHVIZ_BIN=$bin/flashviz PYTHONUNBUFFERED=1
has() { [[ ",$stages," == *",$1,"* ]]; }
now() { date +%s.%N; }

{
  echo "date: $(date -u '+%Y-%m-%d %H:%M:%S UTC')"
  nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.sm,clocks.max.sm --format=csv
  echo "cpus: $(nproc)"; free -g | head -2; df -h "$root" /tmp | tail -2
  echo "--- SASS instruction counts per kernel (tensor-core HMMA, shared loads, exp, local memory):"
  cuobjdump -sass "$bin/hw4_bench" 2> /dev/null | awk '
    /Function :/ { f = $3 }
    /HMMA/ { h[f]++ } /LDS/ { l[f]++ } /MUFU.EX2/ { m[f]++ } /LDL|STL/ { s[f]++ }
    END { for (k in h) printf "%6d HMMA %6d LDS %5d EX2 %4d LDL/STL  %s\n", h[k], l[k], m[k], s[k], k
          for (k in l) if (!(k in h)) printf "%6d HMMA %6d LDS %5d EX2 %4d LDL/STL  %s\n", 0, l[k], m[k], s[k], k }'
} > "$out/machine.txt" 2>&1
cat "$out/machine.txt"

if has tests; then
  echo "=== tests"
  { timeout 200 "$bin/hw4_kernel_gpu_tests"; echo "exit $?"; timeout 300 "$bin/hw4_cli_gpu_tests"; echo "exit $?"; } \
    > "$out/tests.log" 2>&1
  grep -E "^N = |FAILED|PASSED|SKIPPED|^exit|Failure|error" "$out/tests.log" | head -60
fi

if has bench; then
  echo "=== kernels (validated against float64, then timed)"
  timeout 200 "$bin/hw4_bench" --csv "$out/bench.csv" > "$out/bench.log" 2>&1
  cat "$out/bench.log"
fi

if has torch; then
  echo "=== PyTorch on the same shapes"
  timeout 200 python3 "$root/scripts/hw4_torch_peers.py" --csv "$out/torch.csv" > "$out/torch.log" 2>&1
  cat "$out/torch.log"
fi

if has e2e; then
  echo "=== end to end"
  data=$root/hw4data  # on the machine's disk, not /tmp
  mkdir -p "$data"
  cases=""
  for d in 64 32; do
    for n in 32768 16384 8192 4096 2048 1024 512 256 128; do
      b=$(( (56000000 - 1) / (n * d) )); [ $b -gt 14000 ] && b=14000
      cases="$cases $b:$n:$d"
    done
  done
  start=$(now)
  printf '%s\n' $cases | tr ':' ' ' | xargs -P 6 -n 3 sh -c \
    '"$0" gen --b "$2" --n "$3" --d "$4" --seed 9 --out "$1/in_$3_$4.bin"' "$bin/flashviz" "$data"
  echo "generated $(ls "$data" | wc -l) inputs in $(awk "BEGIN { print $(now) - $start }") s"
  echo "case,B,N,d,input_MB,cold_s,warm_s,kernel_tflops,max_err" > "$out/e2e.csv"
  : > "$out/e2e.log"
  for c in $cases; do
    IFS=: read -r b n d <<< "$c"
    in=$data/in_${n}_${d}.bin o=$data/out.bin
    sync
    python3 -c \
      "import os,sys; fd=os.open(sys.argv[1], os.O_RDONLY); os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED)" "$in"
    t0=$(now); "$bin/flashviz" hw4 "$in" "$o" --verbose 2> "$data/cold.txt"; s1=$?; t1=$(now)
    "$bin/flashviz" hw4 "$in" "$o" --verbose 2> "$data/warm.txt"; s2=$?; t2=$(now)
    check=$(timeout 60 python3 "$root/scripts/hw4_check_output.py" "$in" "$o" 2>&1)
    cold=$(awk "BEGIN { printf \"%.3f\", $t1 - $t0 }"); warm=$(awk "BEGIN { printf \"%.3f\", $t2 - $t1 }")
    tflops=$(grep -o 'kernel [0-9.]* s ([0-9.]* TFLOP/s)' "$data/warm.txt" | grep -o '([0-9.]*' | tr -d '(')
    err=$(echo "$check" | grep -o 'max_err=[^ ]*' | cut -d= -f2)
    mb=$(( $(stat -c %s "$in") / 1000000 ))
    echo "$c,$b,$n,$d,$mb,$cold,$warm,$tflops,$err" >> "$out/e2e.csv"
    { echo "--- B = $b, N = $n, d = $d ($mb MB): cold $cold s (exit $s1), warm $warm s (exit $s2); $check"
      sed 's/^/cold| /' "$data/cold.txt"; sed 's/^/warm| /' "$data/warm.txt"; } >> "$out/e2e.log"
    echo "B = $b, N = $n, d = $d: cold $cold s, warm $warm s, kernel $tflops TFLOP/s, $check"
    rm -f "$o" "$in"
  done
  sed -n '1,12p' "$out/e2e.log"
fi
