#!/usr/bin/env bash
# One device run for the live GPU view (issue 6): the instrumented kernels against the model, CUDA-GL
# interop on the NVIDIA GPU (GLX through Xvfb) and on Mesa (the host-copy fallback), trace --gpu on both
# loop orders, and GUI screenshots/frame times on the GPU. Binaries built here (Release, sm_90) travel in $1.
# Usage on the GPU machine, from the project root: scripts/live_gpu_device_run.sh .device-me $OUT
set -uo pipefail
bin=$1 out=$2
source .x/gpu-env.sh   # Xvfb :99, GLX on the NVIDIA GPU (__GLX_VENDOR_LIBRARY_NAME=nvidia), EGL vendor file
nvidia-smi -L | tee "$out/gpu.txt"
echo "== instrumented kernels vs the model"
"$bin/cuda_probe_tests" 2>&1 | tee "$out/probe_tests.log" | grep -E '^\[  (PASSED|FAILED|SKIPPED)|tests ran'
echo "== interop, GLX on the NVIDIA GPU"
"$bin/interop_tests" 2>&1 | tee "$out/interop_nvidia.log" | grep -E 'renderer|^\[  (PASSED|FAILED)'
echo "== interop, GLX on Mesa llvmpipe (fallback expected)"
(unset __GLX_VENDOR_LIBRARY_NAME; export LIBGL_DRIVERS_PATH=/opt/x/usr/lib/x86_64-linux-gnu/dri
 "$bin/interop_tests") 2>&1 | tee "$out/interop_mesa.log" | grep -E 'renderer|^\[  (PASSED|FAILED)'
echo "== trace --gpu"
for shape in "--n 300 --d 40 --br 16 --bc 24" "--n 1000 --d 64 --sram 49152" "--n 97 --d 8 --br 8 --bc 16"; do
  for order in kv q; do
    for causal in "" --causal; do
      "$bin/flashviz" trace --gpu $shape --order $order $causal --seed 7 --out /tmp/t.jsonl 2>&1 | tail -1
      echo "   ($shape --order $order $causal: exit ${PIPESTATUS[0]})"
    done
  done
done
head -c 600 /tmp/t.jsonl > "$out/trace_gpu_head.txt"
echo "== GUI on the GPU"
"$bin/flashviz" --n 64 --d 8 --step 60 --gl egl --width 1920 --height 1080 --screenshot "$out/gui_egl_nvidia.png" 2>&1 | tail -2
"$bin/flashviz" --n 1024 --d 64 --sram 49152 --bench-frames 300 --width 1920 --height 1080 2>&1 | tail -2
