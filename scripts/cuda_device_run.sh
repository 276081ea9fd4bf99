#!/usr/bin/env bash
# The CUDA progression on a machine with an NVIDIA GPU (Hopper: the binaries are built for sm_90), from the
# repository root:
#   scripts/cuda_device_run.sh validate BIN_DIR OUT_DIR   GPU tests, compute-sanitizer memcheck + racecheck, probes
#   scripts/cuda_device_run.sh measure  BIN_DIR OUT_DIR   the benchmark sweeps and PyTorch's backends on the same shapes
#   scripts/cuda_device_run.sh check    BIN_DIR OUT_DIR   GPU tests, both sanitizers, the bench CLI test, and a short
#                                                       sweep drawn with --png (a GUI build: its libraries in
#                                                       BIN_DIR/lib)
# BIN_DIR holds flashviz and kernels_cuda_*_tests (README, "CUDA kernels and `bench`", says how to build them).
# OUT_DIR gets cuda-MODE.tgz: the logs and CSVs. Every step has its own time limit so one hang cannot eat the run.
set -u
mode=${1:?validate, measure or check} BIN=${2:?binary folder} results_dir=${3:?output folder}
RESULTS=$results_dir/cuda-$mode.tgz
work=$(mktemp -d)  # the logs and CSVs, packed into RESULTS at the end
trap 'tar czf "$RESULTS" -C "$work" .' EXIT
export PYTHONUNBUFFERED=1
{
  date -u +"date: %Y-%m-%dT%H:%M:%SZ"
  nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.max.sm --format=csv,noheader
  uname -r
  echo "git: $(git rev-parse --short HEAD 2>/dev/null) (+ working tree)"
} > "$work/info.txt" 2>&1
cat "$work/info.txt"
# cuBLAS is a shared library of the same CUDA 13.0; if the loader does not find it, point it at one.
if ldd "$BIN/flashviz" | grep -q "not found"; then
  lib=$(find / -name 'libcublas.so.13*' -not -path '*/proc/*' 2>/dev/null | head -1)
  [ -n "$lib" ] && export LD_LIBRARY_PATH="$(dirname "$lib"):${LD_LIBRARY_PATH:-}"
  echo "LD_LIBRARY_PATH=$LD_LIBRARY_PATH" | tee -a "$work/info.txt"
fi

if [ "$mode" = validate ]; then
  timeout 30 "$BIN/kernels_cuda_registry_tests" > "$work/registry_tests.log" 2>&1; echo "registry tests rc=$?"
  timeout 30 "$BIN/kernels_cuda_launch_table_tests" > "$work/launch_table_tests.log" 2>&1
  echo "launch table tests rc=$?"
  timeout 120 "$BIN/kernels_cuda_gpu_tests" > "$work/gpu_tests.log" 2>&1; echo "gpu tests rc=$?"
  grep -E "^\[  (FAILED|PASSED|SKIPPED) |tests ran" "$work/gpu_tests.log" | head -40
  grep -B2 -A6 "Failure" "$work/gpu_tests.log" | head -60
  # The two sanitizers at once (different processes on one GPU), on the small cases.
  (timeout 150 compute-sanitizer --tool memcheck --error-exitcode 9 "$BIN/kernels_cuda_gpu_tests" \
     --gtest_filter='All/Sanitizer.*' > "$work/memcheck.log" 2>&1; echo "memcheck rc=$?" >> "$work/memcheck.log") &
  (timeout 150 compute-sanitizer --tool racecheck --racecheck-report all --error-exitcode 9 \
     "$BIN/kernels_cuda_gpu_tests" --gtest_filter='All/Sanitizer.*' > "$work/racecheck.log" 2>&1;
   echo "racecheck rc=$?" >> "$work/racecheck.log") &
  wait
  tail -4 "$work/memcheck.log"; tail -4 "$work/racecheck.log"
  # Timing probes at B·H = 64: the progression at N = 1024, the fast ones and the tile options at N = 4096.
  f="$BIN/flashviz"
  timeout 60 $f bench --kernels naive,tiled,flash1,flash2_row,flash2_warp,math --n 1024 --d 64 --batch 4 --heads 16 \
    --csv "$work/probe_fp32_1024.csv" 2>&1 | tail -9
  for opt in 0 1; do
    timeout 30 $f bench --kernels flash2_warp --n 4096 --d 64 --batch 4 --heads 16 --options $opt \
      --csv "$work/probe_warp64_$opt.csv" 2>&1 | grep -E "^\[|ms "
    timeout 30 $f bench --kernels flash2_warp --n 4096 --d 128 --batch 4 --heads 16 --options $opt \
      --csv "$work/probe_warp128_$opt.csv" 2>&1 | grep -E "^\["
    timeout 30 $f bench --kernels flash2_wmma --n 4096 --d 64 --batch 4 --heads 16 --dtype fp16 --options $opt \
      --csv "$work/probe_wmma64_$opt.csv" 2>&1 | grep -E "^\["
    timeout 30 $f bench --kernels flash2_wmma --n 4096 --d 128 --batch 4 --heads 16 --dtype fp16 --options $opt \
      --csv "$work/probe_wmma128_$opt.csv" 2>&1 | grep -E "^\["
  done
  timeout 60 $f bench --kernels flash2_row,math --n 4096 --d 64 --batch 4 --heads 16 \
    --csv "$work/probe_fp32_4096.csv" 2>&1 | grep -E "^\["
  timeout 90 python3 scripts/peers.py --n 4096 --d 64 --batch 4 --heads 16 --dtype fp32 \
    --backends torch_efficient,torch_math --csv "$work/probe_peers.csv" 2>&1 | tail -3
  timeout 60 python3 scripts/peers.py --n 4096 --d 64 --batch 4 --heads 16 --dtype fp16 \
    --csv "$work/probe_peers.csv" --append 2>&1 | tail -4
  exit 0
fi

if [ "$mode" = measure ]; then
  f="$BIN/flashviz"
  n_all=512,1024,2048,4096,8192,16384
  run() { echo "+ $*" >> "$work/commands.txt"; "$@"; }
  timeout 120 "$BIN/kernels_cuda_gpu_tests" > "$work/gpu_tests.log" 2>&1; echo "gpu tests rc=$?"
  grep -E "^\[  (PASSED|FAILED) " "$work/gpu_tests.log"
  # The progression, fp32, d = 64. naive stops at N = 2048: at 4096 one call takes over a second (22 calls a
  # point).
  run timeout 100 $f bench --kernels naive --n 512,1024,2048 --d 64 \
    --csv "$work/fp32_d64_naive.csv" 2> "$work/fp32_d64_naive.log"
  run timeout 150 $f bench --kernels tiled,flash1,flash2_row,flash2_warp,math --n $n_all --d 64 \
    --csv "$work/fp32_d64.csv" 2> "$work/fp32_d64.log"
  run timeout 120 $f bench --kernels flash2_warp,math --n 1024,4096,16384 --d 128 \
    --csv "$work/fp32_d128.csv" 2> "$work/fp32_d128.log"
  run timeout 120 $f bench --kernels flash2_wmma,math --n $n_all --d 64 --dtype fp16 \
    --csv "$work/fp16_d64.csv" 2> "$work/fp16_d64.log"
  run timeout 120 $f bench --kernels flash2_wmma,math --n $n_all --d 128 --dtype fp16 \
    --csv "$work/fp16_d128.csv" 2> "$work/fp16_d128.log"
  run timeout 60 $f bench --kernels flash2_wmma --n 1024,4096,16384 --d 64 --dtype bf16 \
    --csv "$work/bf16_d64.csv" 2> "$work/bf16_d64.log"
  run timeout 60 $f bench --kernels flash2_wmma --n 1024,4096,16384 --d 128 --dtype bf16 \
    --csv "$work/bf16_d128.csv" 2> "$work/bf16_d128.log"
  run timeout 150 python3 scripts/peers.py --n $n_all --d 64 --dtype fp16 --csv "$work/peers.csv" 2> "$work/peers.log"
  run timeout 150 python3 scripts/peers.py --n $n_all --d 128 --dtype fp16 --csv "$work/peers.csv" --append \
    2>> "$work/peers.log"
  run timeout 150 python3 scripts/peers.py --n $n_all --d 64 --dtype fp32 --backends torch_efficient,torch_math \
    --csv "$work/peers.csv" --append 2>> "$work/peers.log"
  run timeout 100 python3 scripts/peers.py --n 1024,4096,16384 --d 128 --dtype fp32 \
    --backends torch_efficient,torch_math --csv "$work/peers.csv" --append 2>> "$work/peers.log"
  for log in "$work"/*.log; do
    echo "== $log"; grep -E "^ms|^[a-z_0-9]+ +[0-9–]" "${log%.log}.csv" >/dev/null 2>&1; tail -2 "$log"
  done
  grep -h -E "validation failed|error:" "$work"/*.log | head -20
  exit 0
fi
if [ "$mode" = check ]; then
  [ -d "$BIN/lib" ] && export LD_LIBRARY_PATH="$PWD/$BIN/lib:${LD_LIBRARY_PATH:-}"
  timeout 120 "$BIN/kernels_cuda_gpu_tests" > "$work/gpu_tests.log" 2>&1; echo "gpu tests rc=$?"
  grep -E "^\[  (PASSED|FAILED|SKIPPED) +\] [0-9]" "$work/gpu_tests.log"
  (timeout 150 compute-sanitizer --tool memcheck --error-exitcode 9 "$BIN/kernels_cuda_gpu_tests" \
     --gtest_filter='All/Sanitizer.*' > "$work/memcheck.log" 2>&1; echo "memcheck rc=$?" >> "$work/memcheck.log") &
  (timeout 150 compute-sanitizer --tool racecheck --racecheck-report all --error-exitcode 9 \
     "$BIN/kernels_cuda_gpu_tests" --gtest_filter='All/Sanitizer.*' > "$work/racecheck.log" 2>&1;
   echo "racecheck rc=$?" >> "$work/racecheck.log") &
  wait
  tail -2 "$work/memcheck.log"; tail -2 "$work/racecheck.log"
  timeout 60 tests/kernels/cuda/bench_cli_test.sh "$BIN/flashviz" 2>&1 | tee "$work/bench_cli.log"
  timeout 60 python3 scripts/peers.py --n 1024,2048,4096 --d 64 --dtype fp16 --backends torch_flash,torch_efficient \
    --csv "$work/peers.csv" 2> "$work/peers.log"
  timeout 60 "$BIN/flashviz" bench --kernels flash2_wmma,math --n 1024,2048,4096 --d 64 --dtype fp16 \
    --csv "$work/bench.csv" --peers "$work/peers.csv" --png "$work/bench.png" 2> "$work/bench.log"
  echo "bench --png rc=$?"
  tail -2 "$work/bench.log"
  exit 0
fi
echo "unknown mode $mode" >&2; exit 2
