#!/usr/bin/env bash
# Source-level Nsight Compute of the Hopper flagships where they trail cuDNN, and of cuDNN's own kernel at the same
# shapes: per SASS instruction, how often it ran and where the warps stalled (SourceCounters, WarpStateStats), one
# launch each after the validation and a warm-up, the clocks left alone. Run from the repository root on the GPU
# machine:
#   scripts/ncu_source.sh FLASH2_MMA_BENCH OUT_DIR
# Writes OUT_DIR/NAME.sass.csv (`ncu --page source --csv --print-source sass`, read by
# scripts/ncu_source_summary.py), NAME.details.txt and NAME.log per kernel; the .ncu-rep reports are removed.
set -u -o pipefail
bench=${1:?flash2_mma_bench} out=${2:?output directory}
mkdir -p "$out"
ncu=$(command -v ncu || echo /usr/local/cuda/bin/ncu)
"$ncu" --version | tail -1
sections=(--section SpeedOfLight --section WarpStateStats --section SourceCounters --section InstructionStats
          --clock-control none)
profile() {
  local name=$1 regex=$2 skip=$3; shift 3
  timeout 170 "$ncu" "${sections[@]}" -k "regex:$regex" --launch-skip "$skip" --launch-count 1 -f -o "$out/$name" "$@" \
    > "$out/$name.log" 2>&1
  echo "$name rc=$?"
  "$ncu" -i "$out/$name.ncu-rep" --page source --csv --print-source sass > "$out/$name.sass.csv"
  "$ncu" -i "$out/$name.ncu-rep" --page details > "$out/$name.details.txt" 2>&1
  rm -f "$out/$name.ncu-rep"
}
profile fp8_d128_n4096 Flash3WgmmaKernel 2 "$bench" time --reps 1 --kernel flash3_fp8 --dtype bf16 --d 128 --n 4096 \
  --causal 0 --options 1
profile fp16_d128_n1024 Flash3WgmmaKernel 2 "$bench" time --reps 1 --kernel flash3_wgmma --dtype fp16 --d 128 \
  --n 1024 --causal 0
profile fp16_d64_n1024_causal Flash3WgmmaKernel 2 "$bench" time --reps 1 --kernel flash3_wgmma --dtype fp16 --d 64 \
  --n 1024 --causal 1
# cuDNN through PyTorch's SDPA, B·H = 64·16 as in the timing runs; the second of three calls is profiled.
cudnn='import sys, torch, torch.nn.functional as F
from torch.nn.attention import SDPBackend, sdpa_kernel
d, causal = int(sys.argv[1]), sys.argv[2] == "1"
q, k, v = (torch.randn(64, 16, 1024, d, device="cuda", dtype=torch.float16) for _ in range(3))
with sdpa_kernel([SDPBackend.CUDNN_ATTENTION]):
    for _ in range(3): F.scaled_dot_product_attention(q, k, v, is_causal=causal)
torch.cuda.synchronize()'
profile cudnn_d128_n1024 cudnn 1 python3 -c "$cudnn" 128 0
profile cudnn_d64_n1024_causal cudnn 1 python3 -c "$cudnn" 64 1
