#!/usr/bin/env bash
# The one GPU-machine run of issue 8 (kernels/cuda/mma): disassembly counts, tests, validated timing of flash2_mma,
# PyTorch's FLASH_ATTENTION / CUDNN_ATTENTION on the same shapes, the options ablation, compute-sanitizer, and
# the markdown table. Binaries are built HERE and carried in DIR (see /work/notes/device.md).
#   scripts/mma_device_run.sh DIR OUTDIR
set -u -o pipefail
D=${1:?binary folder}; OUT=${2:?output folder}
# The binaries travel gzipped (64 kernels per dtype and d make them 35 MB each; the carry limit is 64 MiB).
for f in "$D"/*.gz; do [ -e "$f" ] && gunzip -f "$f"; done
export PYTHONUNBUFFERED=1
{
  date -u
  nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,temperature.gpu,power.draw --format=csv
  echo "== SASS instruction counts (cuobjdump --dump-sass | scripts/mma_sass_counts.py)"
  cuobjdump --dump-sass "$D/flash2_mma_bench" | python3 scripts/mma_sass_counts.py --filter Flash2Mma
} > "$OUT/info.txt" 2>&1
cat "$OUT/info.txt" | head -4
echo "== tests"
timeout 240 "$D/kernels_cuda_mma_tests" --gtest_brief=1 > "$OUT/tests.log" 2>&1; echo "tests rc=$?"
grep -E "FAILED|PASSED|SKIPPED \]" "$OUT/tests.log" | head -20
echo "== flash2_mma timing (default options)"
timeout 300 "$D/flash2_mma_bench" time --options ${SWEEP_OPTIONS:-0} --csv "$OUT/ours.csv" 2>&1 | tee "$OUT/run.log" | grep -E "FAIL" | cut -c1-140
echo "== PyTorch SDPA peers"
timeout 200 python3 scripts/sdpa_peers.py --csv "$OUT/torch.csv" 2>&1 | tee -a "$OUT/run.log" | tail -3
echo "== ablation"
timeout 150 "$D/flash2_mma_bench" time --dtype fp16 --causal ${ABLATION_CAUSAL:-0} --n 2048,8192 --options ${ABLATION_OPTIONS:-1,2,4,8,16,32,63} \
  --csv "$OUT/ablation.csv" 2>&1 | tee -a "$OUT/run.log" | grep -E "FAIL" | cut -c1-140
tail -n +2 "$OUT/ablation.csv" >> "$OUT/ours.csv"
echo "== compute-sanitizer (N = 200, B·H = 2)"
{
  timeout 150 compute-sanitizer --tool memcheck "$D/flash2_mma_bench" sanitize ${MEMCHECK_OPTIONS:-0,1,2,4,8,16,32,63} 2>&1 | tail -4
  timeout 150 compute-sanitizer --tool racecheck "$D/flash2_mma_bench" sanitize ${RACECHECK_OPTIONS:-0,63} 2>&1 | tail -4
} > "$OUT/sanitize.log" 2>&1
cat "$OUT/sanitize.log"
echo "== report"
python3 scripts/mma_report.py "$OUT/ours.csv" "$OUT/torch.csv" | tee "$OUT/report.md"
