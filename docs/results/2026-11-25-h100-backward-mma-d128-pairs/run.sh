#!/usr/bin/env bash
# Device run of flash2_bwd_mma with warp pairs at d = 128 (8 warps, B_c = 128): backward GPU tests, then ours (both
# dQ strategies at d = 128) and PyTorch's FLASH backward, fp16.
set -uo pipefail
P=.device-bwd-mma-d128 O=${1:?out} B=$(mktemp -d) W=$(mktemp -d)
tar xJf $P/bin.txz -C $B
export LD_LIBRARY_PATH=$PWD/$P/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH} PYTHONUNBUFFERED=1
S=$O/summary.txt
{ date -u +"date: %Y-%m-%dT%H:%M:%SZ"; nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader
  echo "binaries built from the working tree on $(cat $P/commit.txt)"; } | tee $S
timeout 120 $B/kernels_cuda_backward_gpu_tests > $O/kernels_cuda_backward_gpu_tests.log 2>&1
echo "kernels_cuda_backward_gpu_tests rc=$? $(grep -E '^\[  (PASSED|FAILED|SKIPPED) +\] [0-9]+ test' $O/kernels_cuda_backward_gpu_tests.log | tr -s ' \n' ' ')" | tee -a $S
grep -E '^\[  FAILED  \] [A-Za-z]' $O/kernels_cuda_backward_gpu_tests.log | head -5 | tee -a $S
first=1
for d in 64 128; do for mask in "" --causal; do
  tag=d${d}${mask:+_causal}
  echo "== $tag $(date -u +%T)" | tee -a $S
  for opt in 0 1; do
    [ $d = 64 ] && [ $opt = 1 ] && continue
    timeout 90 $B/flashviz bench --pass backward --kernels flash2_bwd_mma --options $opt --n 1024,4096,16384 --d $d \
      --dtype fp16 $mask --csv $W/bwd_fp16_${tag}_$opt.csv 2>> $O/bench.log
    if [ $first = 1 ]; then cat $W/bwd_fp16_${tag}_$opt.csv > $O/bwd_fp16.csv; else tail -n +2 $W/bwd_fp16_${tag}_$opt.csv >> $O/bwd_fp16.csv; fi
    [ $opt = 0 ] && timeout 90 python3 scripts/peers.py --pass backward --backends torch_flash --n 1024,4096,16384 --d $d --dtype fp16 \
      $mask --csv $O/bwd_peers_fp16.csv $([ $first = 1 ] || echo --append) 2>> $O/peers.log
    first=0
  done
done; done
python3 - $O <<'PY' | tee -a $S
import csv, sys
rows = list(csv.DictReader(open(sys.argv[1] + "/bwd_fp16.csv"))) + list(csv.DictReader(open(sys.argv[1] + "/bwd_peers_fp16.csv")))
key = lambda r: (int(r["d"]), int(r["causal"]), int(r["N"]))
flash = {}
for r in rows:
    if r["kernel"].startswith("torch_flash"): flash.setdefault(key(r), []).append(float(r["tflops"]))
print(f"{'kernel':22} {'d':>4} {'causal':>6} {'N':>6} {'TFLOP/s':>8} {'flash':>8} {'ratio':>6} {'err':>9} status")
for r in rows:
    if r["kernel"].startswith("torch_"): continue
    f = max(flash.get(key(r), [0])); t = float(r["tflops"])
    print(f"{r['kernel']:22} {r['d']:>4} {r['causal']:>6} {r['N']:>6} {t:8.1f} {f:8.1f} {t / f if f else 0:6.2f} "
          f"{r['max_abs_error']:>9} {r['status']}")
print("FLASH per shape (every measurement of this run):", {k: v for k, v in sorted(flash.items())})
PY
