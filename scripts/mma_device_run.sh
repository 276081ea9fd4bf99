#!/usr/bin/env bash
# One run for the tensor-core flagships (kernels/cuda/mma) on an NVIDIA Hopper GPU: disassembly counts, tests,
# validated timing of flash2_mma, flash3_wgmma and flash3_fp8, PyTorch's FLASH_ATTENTION / CUDNN_ATTENTION on the
# same shapes and its dense GEMM ceiling (bf16, fp16, fp8 `_scaled_mm`), the options ablation, compute-sanitizer,
# and the markdown tables. DIR holds the binaries built for sm_90 (flash2_mma_bench, kernels_cuda_mma_tests; gzipped
# or not); DIR/before/flash2_mma_bench, when present, is an older build of the driver timed in the same run (kernel
# "flash2_mma@HEAD" in the CSV) so that a change is measured against the code it replaces. Run from the repository
# root:
#   scripts/mma_device_run.sh DIR OUTDIR
# Knobs (environment): PART (all: check = counts, smoke, tests, sanitizer; time = timing, peers, ceiling, ablation,
# report), KERNELS (flash2_mma,flash3_wgmma,flash3_fp8), D_LIST (64,128,256), N_LIST (1024,2048,4096,8192,16384),
# MAIN_OPTIONS (0: the options of the main pass), ABLATION_D (128,64), ABLATION_N (1024,2048,8192),
# ABLATION_OPTIONS (0,64), SKIP_SANITIZE=1, SKIP_ABLATION=1.
set -u -o pipefail
D=${1:?binary folder}; out=${2:?output folder}
mkdir -p "$out"
# The binaries may come gzipped (64 kernels per dtype and d make them 35 MB each).
for f in "$D"/*.gz "$D"/before/*.gz; do [ -e "$f" ] && gunzip -f "$f"; done
export PYTHONUNBUFFERED=1
PART=${PART:-all}
KERNELS=${KERNELS:-flash2_mma,flash3_wgmma,flash3_fp8}
D_LIST=${D_LIST:-64,128,256}
N_LIST=${N_LIST:-1024,2048,4096,8192,16384}
stamp() { echo "== $1 ($(date -u +%T))"; }
# flash2_mma has no d = 256 (the bench skips what a kernel does not apply to); flash3_fp8 takes bf16 at d = 128, 256.
MAIN_KERNELS=$(echo "$KERNELS" | tr ',' '\n' | grep -v flash3_fp8 | paste -sd, -)
if [ "$PART" != time ]; then
{
  date -u
  nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,temperature.gpu,power.draw --format=csv
  echo "== SASS instruction counts (cuobjdump --dump-sass | scripts/mma_sass_counts.py)"
  cuobjdump --dump-sass "$D/flash2_mma_bench" | python3 scripts/mma_sass_counts.py --filter Flash
} > "$out/info.txt" 2>&1
head -4 "$out/info.txt"
grep -E "Flash3WgmmaKernelI(6__half|13__nv_fp8)|Flash2MmaKernelI6__halfLi(64ELj31|128ELj23|64|128)E" "$out/info.txt"
# A kernel that deadlocks (a barrier phase waited for wrongly) hangs its process: try the Hopper kernels on small
# problems first, and leave them out of the rest of the run if that does not finish.
FILTER="*"
for kernel in flash3_wgmma flash3_fp8; do
  [[ "$KERNELS" == *$kernel* ]] || continue
  stamp "$kernel smoke test (N = 200, B·H = 2)"
  timeout 60 "$D/flash2_mma_bench" sanitize --kernel $kernel > /tmp/smoke.log 2>&1; rc=$?
  tail -1 /tmp/smoke.log; grep -A4 FAIL /tmp/smoke.log | head -30; echo "smoke rc=$rc"
  if [ $rc -eq 124 ]; then KERNELS=flash2_mma; FILTER="-*Flash3*"; echo "$kernel hangs: Hopper kernels left out"; fi
done
stamp tests
timeout 400 "$D/kernels_cuda_mma_tests" --gtest_brief=1 --gtest_filter="$FILTER" > "$out/tests.log" 2>&1
echo "tests rc=$?"
grep -E "FAILED|PASSED|SKIPPED \]|tests from|fp8 error" "$out/tests.log" | head -50
if [ -z "${SKIP_SANITIZE:-}" ]; then
  stamp "compute-sanitizer (N = 200, B·H = 2)"
  {
    timeout 40 compute-sanitizer --tool memcheck "$D/flash2_mma_bench" sanitize 0,2,32,63,64,127 2>&1 | tail -3
    timeout 40 compute-sanitizer --tool racecheck "$D/flash2_mma_bench" sanitize 0,64 2>&1 | tail -3
    for kernel in flash3_wgmma flash3_fp8; do
      [[ "$KERNELS" == *$kernel* ]] || continue
      echo "-- $kernel memcheck, every options word of the sanitize list"
      timeout 90 compute-sanitizer --tool memcheck "$D/flash2_mma_bench" sanitize --kernel $kernel 2>&1 | tail -3
      echo "-- $kernel racecheck, the default kernel"
      timeout 90 compute-sanitizer --tool racecheck "$D/flash2_mma_bench" sanitize --kernel $kernel 0 2>&1 | tail -3
      if [ $kernel = flash3_fp8 ]; then
        for tool in memcheck racecheck; do
          echo "-- $kernel $tool, the last passes' work tiles cut (d = 128 without the mask: B·H = 17, N = 2000)"
          timeout 90 compute-sanitizer --tool $tool "$D/flash2_mma_bench" sanitize --kernel $kernel --heads 17 \
            --n 2000 0 2>&1 | tail -3
        done
      fi
    done
  } > "$out/sanitize.log" 2>&1
  cat "$out/sanitize.log"
fi
fi
[ "$PART" = check ] && exit 0
stamp "timing (default options)"
timeout 200 "$D/flash2_mma_bench" time --kernel "$MAIN_KERNELS" --d "$D_LIST" --n "$N_LIST" \
  --options "${MAIN_OPTIONS:-0}" --csv "$out/ours.csv" 2>&1 | tee "$out/run.log" | grep -E -A3 "FAIL" | cut -c1-160 | head -40
if [[ "$KERNELS" == *flash3_fp8* ]]; then
  stamp "flash3_fp8: with its quantization, and the attention alone (prequantized)"
  timeout 100 "$D/flash2_mma_bench" time --kernel flash3_fp8 --dtype bf16 --d 128,256 --n "$N_LIST" --options 0,1 \
    --csv /tmp/fp8.csv 2>&1 | tee -a "$out/run.log" | grep -E -A3 "FAIL" | cut -c1-160 | head -20
  tail -n +2 /tmp/fp8.csv >> "$out/ours.csv"
fi
stamp "PyTorch SDPA peers"
timeout 240 python3 scripts/sdpa_peers.py --d "$D_LIST" --n "$N_LIST" --csv "$out/torch.csv" 2>&1 | tee -a "$out/run.log" | tail -2
stamp "PyTorch dense GEMM ceiling (8192³)"
timeout 90 python3 scripts/gemm_ceiling.py --csv "$out/gemm.csv" 2>&1 | tee -a "$out/run.log" | tail -5
if [ -x "$D/before/flash2_mma_bench" ]; then
  stamp "flash2_mma before this change (d = 128)"
  timeout 60 "$D/before/flash2_mma_bench" time --d 128 --csv /tmp/before.csv 2>&1 | tee -a "$out/run.log" |
    grep -E "FAIL" | cut -c1-160
  tail -n +2 /tmp/before.csv | sed 's/^flash2_mma,/flash2_mma@HEAD,/' >> "$out/ours.csv"
fi
if [ -z "${SKIP_ABLATION:-}" ]; then
stamp ablation
timeout 90 "$D/flash2_mma_bench" time --kernel flash2_mma --d "${ABLATION_D:-128,64}" \
  --n "${ABLATION_N:-1024,2048,8192}" --options "${ABLATION_OPTIONS:-0,64}" --csv /tmp/ablation.csv 2>&1 |
  tee -a "$out/run.log" | grep -E "FAIL" | cut -c1-160
tail -n +2 /tmp/ablation.csv >> "$out/ours.csv"
if [[ "$KERNELS" == *flash3_wgmma* ]]; then
  timeout 90 "$D/flash2_mma_bench" time --kernel flash3_wgmma --d "$D_LIST" --n "${ABLATION_N:-1024,2048,8192}" \
    --options 0,1,2,4,8,16 \
    --csv /tmp/ablation3.csv 2>&1 | tee -a "$out/run.log" | grep -E "FAIL" | cut -c1-160
  tail -n +2 /tmp/ablation3.csv >> "$out/ours.csv"
fi
fi
stamp report
python3 scripts/mma_report.py "$out/ours.csv" "$out/torch.csv" "$out/gemm.csv" > "$out/report.md"
head -44 "$out/report.md"
