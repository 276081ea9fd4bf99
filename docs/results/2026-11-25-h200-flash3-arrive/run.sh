#!/usr/bin/env bash
# flash3_wgmma with both barrier waits before the wgmma fence (no warpgroup.arrive injected by ptxas) against the
# same kernel before the change and PyTorch's cuDNN and FLASH backends, fp16, the issue's shapes, in one call; after
# the GPU tests of the harness change (backward, decode) and flash3's own tests.
# Run from the repository root with the `run` tool, .f3-pack carried:  bash docs/results/2026-11-25-h200-flash3-arrive/run.sh
set -uo pipefail
out=${OUT:?}/${FLASHVIZ_RUN_NAME:-run}
mkdir -p "$out"
bin=$(mktemp -d)
tar xJf .f3-pack/bin.txz -C "$bin"
export LD_LIBRARY_PATH=$PWD/.f3-pack/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH} PYTHONUNBUFFERED=1
s=$out/summary.txt
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader | tee "$s"
for t in kernels_cuda_backward_gpu_tests kernels_cuda_decode_gpu_tests; do
  timeout 200 "$bin/$t" > "$out/$t.log" 2>&1; echo "$t rc=$? $(grep -E '^\[  (PASSED|FAILED)' "$out/$t.log" | tr '\n' ' ')" | tee -a "$s"
done
timeout 200 "$bin/kernels_cuda_mma_tests" --gtest_filter='*lash3*:*wgmma*' > "$out/mma_flash3.log" 2>&1
echo "kernels_cuda_mma_tests (flash3) rc=$? $(grep -E '^\[  (PASSED|FAILED)' "$out/mma_flash3.log" | tr '\n' ' ')" | tee -a "$s"
for d in 64 128; do
  for mask in "" --causal; do
    tag=d${d}${mask:+_causal}
    for which in before after; do
      f=$bin/flashviz; [ $which = before ] && f=$bin/flashviz_before
      timeout 120 "$f" bench --kernels flash3_wgmma --n 1024,4096,16384 --d $d --dtype fp16 $mask \
        --csv "$out/${which}_$tag.csv" > "$out/${which}_$tag.out" 2> "$out/${which}_$tag.log"
    done
    timeout 150 python3 scripts/peers.py --n 1024,4096,16384 --d $d --dtype fp16 $mask \
      --backends torch_cudnn,torch_flash --csv "$out/peers_$tag.csv" 2> "$out/peers_$tag.log"
  done
done
python3 - "$out" <<'PY' | tee -a "$s"
import csv, glob, os, sys
out = sys.argv[1]
print("TFLOP/s, fp16: flash3_wgmma before | after | cuDNN | FA2; after/cuDNN")
for path in sorted(glob.glob(f"{out}/after_*.csv")):
    tag = os.path.basename(path)[6:-4]
    get = lambda name: {int(r["N"]): r for r in csv.DictReader(open(f"{out}/{name}"))}
    after, before, peers = get(f"after_{tag}.csv"), get(f"before_{tag}.csv"), list(csv.DictReader(open(f"{out}/peers_{tag}.csv")))
    for n in sorted(after):
        t = lambda r: float(r["tflops"]) if r and r["status"] == "ok" else float("nan")
        cudnn = next((r for r in peers if r["kernel"] == "torch_cudnn" and int(r["N"]) == n), None)
        fa2 = next((r for r in peers if r["kernel"] == "torch_flash" and int(r["N"]) == n), None)
        print(f"{tag:12s} N={n:6d}  {t(before.get(n)):6.1f} | {t(after[n]):6.1f} | {t(cudnn):6.1f} | {t(fa2):6.1f};  {t(after[n]) / t(cudnn):.2f}")
PY
