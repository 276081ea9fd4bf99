#!/usr/bin/env bash
# One device run for ring attention on real GPUs (kernels/cuda/ring, `flashviz bench --ring`): its GPU tests (the
# virtual ring on one GPU for P = 1 … 8 and the NCCL ring on the machine's GPUs), two `bench --ring` sweeps (fp16,
# d = 128, H = 32, B = 1, N = 16384 … 131072, P = 1, 2, 4 as far as the GPUs go; causal zigzag and non-causal
# contiguous), then compute-sanitizer memcheck and racecheck on small virtual cases (last: the sweeps matter more
# when time runs out). The sweeps take a per-GPU budget of
# 5 GiB, which N = 131072 exceeds on one GPU (6.05 GiB) but not on two (4.02 GiB). Meant to finish in about three
# minutes on 2-4 H100s; every step has its own time limit, so one hang cannot eat the run.
#
# From the repository root on the GPU machine:  scripts/ring_device_run.sh BIN OUT
#   BIN holds flashviz and kernels_cuda_ring_gpu_tests built for sm_90 (plain, .gz or .xz); OUT gets summary.txt,
#   the logs and the sweeps' CSVs. NCCL comes from the Python package nvidia-nccl-cu13 (its lib folder is put on
#   LD_LIBRARY_PATH; flashviz dlopens libnccl.so.2) unless FLASHVIZ_NCCL_LIBRARY names one.
set -u -o pipefail
bin=${1:?binary folder} out=${2:?output folder}
mkdir -p "$out"
for f in "$bin"/*.gz; do [ -e "$f" ] && gunzip -kf "$f"; done
for f in "$bin"/*.xz; do [ -e "$f" ] && unxz -kf "$f"; done
chmod +x "$bin/flashviz" "$bin/kernels_cuda_ring_gpu_tests" 2>/dev/null
summary=$out/summary.txt
say() { echo "$*" | tee -a "$summary"; }
stamp() { say "== $1 ($(date -u +%T))"; }

# NCCL's library from the Python package (a namespace package: its path, not its __file__).
nccl_lib=$(python3 -c 'import nvidia.nccl, os; print(os.path.join(list(nvidia.nccl.__path__)[0], "lib"))' 2>/dev/null)
[ -n "$nccl_lib" ] && export LD_LIBRARY_PATH=$nccl_lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
export NCCL_NVLS_ENABLE=0   # NVLink multicast off (flashviz forces it too)
export NCCL_DEBUG=${NCCL_DEBUG:-WARN}  # an NCCL failure explains itself in the logs
gpus=$(nvidia-smi -L 2>/dev/null | grep -c '^GPU')
{
  date -u +"date: %Y-%m-%dT%H:%M:%SZ"
  nvidia-smi --query-gpu=index,name,driver_version,memory.total --format=csv,noheader
  echo "GPUs: $gpus; NCCL library folder: ${nccl_lib:-not found (the nccl transport will say why)}"
  nvidia-smi topo -m 2>/dev/null | head -12
} | tee "$summary"

stamp "GPU tests (kernels_cuda_ring_gpu_tests)"
timeout 150 "$bin/kernels_cuda_ring_gpu_tests" > "$out/tests.log" 2>&1
say "tests rc=$? $(grep -E '^\[  (PASSED|FAILED|SKIPPED) +\] [0-9]+ test' "$out/tests.log" | tr -s ' \n' ' ')"
grep -E '^\[  FAILED  \]|Failure|Skipped|^no |needs' "$out/tests.log" | sort | uniq -c | head -30 | tee -a "$summary"

# The sweeps: P up to the GPUs (virtual devices on one GPU when there is only one, and then the two smaller N).
devices=1
for p in 2 4; do [ "$p" -le "$gpus" ] && devices+=,$p; done
n_list=16384,32768,65536,131072
if [ "$gpus" -lt 2 ]; then devices=1,2,4; n_list=16384,32768; fi
for sweep in "causal --zigzag" "non-causal"; do
  name=${sweep%% *}
  flags=${sweep#* }; [ "$flags" = "$sweep" ] && flags=
  [ "$name" = causal ] && flags="--causal $flags"
  stamp "bench --ring, $name ($flags), P = $devices"
  timeout 150 "$bin/flashviz" bench --ring --devices "$devices" --n "$n_list" --d 128 --heads 32 --batch 1 \
    --dtype fp16 $flags --budget-gib 5 --csv "$out/ring_$name.csv" > "$out/ring_$name.txt" 2> "$out/ring_$name.log"
  say "bench rc=$?"
  head -2 "$out/ring_$name.log" | tee -a "$summary"
  grep -E "failed|error|not applicable" "$out/ring_$name.log" | head -10 | tee -a "$summary"
  tee -a "$summary" < "$out/ring_$name.txt"
done
# Small virtual cases: two-segment zigzag with edge tiles, uneven contiguous chunks, tiny chunks.
cases='*virtual_P3_causal_zigzag_fp16_d128_B1H2N1000:*virtual_P3_causal_contiguous_bf16_d64_B1H2N1000'
cases+=':*virtual_P4_causal_zigzag_fp16_d64_B2H1N9:*virtual_P2_full_contiguous_fp16_d128_B2H1N5'
for tool in memcheck racecheck; do
  stamp "compute-sanitizer --tool $tool"
  timeout 75 compute-sanitizer --tool "$tool" --error-exitcode 9 "$bin/kernels_cuda_ring_gpu_tests" \
    --gtest_filter="$cases" > "$out/sanitizer_$tool.log" 2>&1
  say "$tool rc=$? $(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY|^\[  (PASSED|FAILED) +\]' "$out/sanitizer_$tool.log" |
    tr -s ' \n' ' ')"
done

stamp done
