#!/usr/bin/env bash
# Nsight Compute on flash2_mma and PyTorch's FLASH_ATTENTION (FlashAttention-2) at d = 128, fp16, non-causal,
# N = 1024 (where flash2_mma trails FA2) and N = 16384 (where they tie), on a Hopper GPU:
#   scripts/mma_ncu.sh FLASHVIZ_BINARY OUT_DIR
# One launch of each kernel, replayed by ncu with the clocks left alone (--clock-control none: the
# GPU's own boost behaviour, as in the timed runs); the sections read are
# speed of light, occupancy, launch statistics, warp state and scheduler statistics.
set -uo pipefail
flashviz=${1:?flashviz binary} out=${2:?output directory}
sections=(--section SpeedOfLight --section Occupancy --section LaunchStats --section WarpStateStats
          --section SchedulerStats --section MemoryWorkloadAnalysis)
for n in 1024 16384; do
  bh=$([ $n -le 2048 ] && echo 1024 || echo 16)
  timeout 120 ncu --clock-control none -k regex:Flash2MmaKernel -c 1 "${sections[@]}" \
    "$flashviz" bench --kernels flash2_mma --n $n --d 128 --dtype fp16 --batch $((bh / 16)) --heads 16 \
    --repeats 20 --csv /tmp/ncu-bench.csv > "$out/ncu-flash2_mma-n$n.txt" 2>&1
  echo "flash2_mma N=$n rc=$?"
  timeout 120 ncu --clock-control none -k regex:flash_fwd -c 1 "${sections[@]}" python3 -c "
import torch, torch.nn.functional as F
from torch.nn.attention import SDPBackend, sdpa_kernel
q, k, v = (torch.randn($bh // 16, 16, $n, 128, device='cuda', dtype=torch.float16) for _ in range(3))
with sdpa_kernel([SDPBackend.FLASH_ATTENTION]):
    F.scaled_dot_product_attention(q, k, v)
torch.cuda.synchronize()" > "$out/ncu-fa2-n$n.txt" 2>&1
  echo "FA2 N=$n rc=$?"
done
# The lines worth reading side by side.
fields="Duration|Registers Per Thread|Achieved Occupancy|Theoretical Occupancy|Block Limit (Registers|Shared Mem)"
fields+="|Compute \(SM\) Throughput|DRAM Throughput|L2 Hit Rate|Dynamic Shared Memory Per Block|Waves Per SM"
fields+="|SM Frequency|Issued Warp Per Scheduler|No Eligible|Warp Cycles Per Issued Instruction"
grep -H -E "$fields" "$out"/ncu-*.txt | sed "s|$out/||"
