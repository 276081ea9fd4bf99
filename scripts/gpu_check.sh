#!/usr/bin/env bash
# The whole GPU side of flashviz in one device run, on binaries built from one commit: every test binary
# that carries GPU tests, trace --gpu in both loop orders, the GUI's frames and the live GPU tab through EGL
# on the NVIDIA GPU (screenshots and frame times), and a causal sweep of the CUDA progression next to
# PyTorch's backends on the same shapes (the sweeps without the mask are kernels/README.md's), then the backward
# pass: its GPU tests and a sweep of the backward variants next to PyTorch's backward on the same shapes; then
# decoding: its GPU tests, `bench --decode` (fp16, bf16) next to PyTorch's SDPA on the same shapes, and a sweep of
# flash_decode's split count; then ring attention: scripts/ring_device_run.sh (its GPU tests, compute-sanitizer, and
# `bench --ring` over the machine's GPUs through NCCL).
#
# On the build machine (Release, sm_90):  scripts/gpu_check.sh pack BUILD_DIR PACK_DIR
#   PACK_DIR gets the stripped binaries (xz), the GLFW/epoxy/stb/X11 runtime and the GUI's font, ready to copy.
# On a machine with an NVIDIA Hopper GPU, from the repository root:  scripts/gpu_check.sh run PACK_DIR OUT_DIR
#   OUT_DIR gets summary.txt, the screenshots and everything else in check.tgz. EGL comes from the NVIDIA
#   driver; where its GL libraries are not installed system-wide, FLASHVIZ_GL_ENV names a script to source first
#   that points the glvnd loader at them.
# FLASHVIZ_CHECK_PARTS (for both pack and run) picks the parts, comma-separated: tests (every GPU test binary),
# trace (trace --gpu, both loop orders and the backward pass), gui (frames and the live tab through EGL), causal
# (the forward causal sweep), bwd (the backward sweep next to PyTorch's backward), decode (decoding: its tests, the
# sweeps and the split-count sweep), ring (ring attention over the machine's GPUs: scripts/ring_device_run.sh, which
# runs the ring's own test binary); default all of them. `backward` alone means the backward pass's tests and its
# sweep, for a device run of the backward alone. Two calls of "tests,trace,gui" and "causal,bwd,decode" split the
# whole check where one device call has too little time.
# Every step has its own time limit, so one hang cannot eat the run.
set -uo pipefail
mode=${1:?pack or run}
parts=${FLASHVIZ_CHECK_PARTS:-tests,trace,gui,causal,bwd,decode,ring}

tests=(kernels_cuda_registry_tests kernels_cuda_launch_table_tests kernels_cuda_gpu_tests kernels_cuda_mma_tests
       cuda_probe_tests hw4_kernel_gpu_tests hw4_cli_gpu_tests interop_tests live_view_tests viz_tests app_gui_tests
       kernels_cuda_backward_gpu_tests kernels_cuda_decode_gpu_tests)
if [ "$parts" = backward ]; then
  tests=(kernels_cuda_backward_gpu_tests)
  parts=tests,bwd
fi
has() { [[ ",$parts," == *",$1,"* ]]; }
has tests || tests=()
# The decode part brings its own test binary when the tests part is not run.
if has decode && ! has tests; then tests=(kernels_cuda_decode_gpu_tests); parts=$parts,tests; fi

if [ "$mode" = pack ]; then
  build=${2:?build directory} dest=${3:?destination}
  rm -rf "$dest" && mkdir -p "$dest/lib" "$dest/fonts"
  stage=$(mktemp -d)
  cp "$build/app/flashviz" "$stage/"
  pack_tests=("${tests[@]}")
  has ring && pack_tests+=(kernels_cuda_ring_gpu_tests)
  for t in "${pack_tests[@]}"; do cp "$(find "$build/tests" -type f -name "$t" | head -1)" "$stage/" || exit 1; done
  strip "$stage"/*
  # Every binary carries the same CUDA kernels (tens of MB each): a dictionary larger than all of them together
  # lets xz store those once (about 10 MB instead of 55).
  tar cf - -C "$stage" . | xz -T1 --lzma2=preset=6,dict=256MiB > "$dest/bin.txz" && rm -rf "$stage"
  # The runtime a GPU server may lack (GLFW, epoxy, stb, giflib, X11 client libraries) and the GUI's font.
  runtime='/libglfw|libepoxy|libstb|libgif|libX11|libxcb|libXau|libXdmcp|libbsd|libmd\./ {print $3}'
  ldd "$build/app/flashviz" | awk "$runtime" | xargs -r cp -L -t "$dest/lib"
  cp /usr/share/fonts/truetype/dejavu/DejaVuSans.ttf /usr/share/fonts/truetype/dejavu/DejaVuSansMono.ttf "$dest/fonts/"
  git rev-parse --short HEAD > "$dest/commit.txt"   # build BUILD_DIR from HEAD
  du -sh "$dest"
  exit 0
fi

[ "$mode" = run ] || { echo "gpu_check.sh: unknown mode $mode (pack or run)" >&2; exit 2; }
src=${2:?binaries} out=${3:?output directory}
work=$(mktemp -d) bin=$(mktemp -d)
trap 'tar czf "$out/check.tgz" -C "$work" .' EXIT
tar xJf "$src/bin.txz" -C "$bin"
mkdir -p /usr/share/fonts/truetype/dejavu && cp "$src"/fonts/*.ttf /usr/share/fonts/truetype/dejavu/
[ -n "${FLASHVIZ_GL_ENV:-}" ] && source "$FLASHVIZ_GL_ENV"   # EGL on the NVIDIA GPU through glvnd
export LD_LIBRARY_PATH=$PWD/$src/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
export FLASHVIZ_BIN=$bin/flashviz PYTHONUNBUFFERED=1
summary=$out/summary.txt
say() { echo "$*" | tee -a "$summary"; }
{
  date -u +"date: %Y-%m-%dT%H:%M:%SZ"
  nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader
  echo "binaries built from commit $(cat "$src/commit.txt")"
} | tee "$summary"

has tests && say "== test binaries (gtest)"
for t in "${tests[@]}"; do
  timeout 400 "$bin/$t" > "$work/$t.log" 2>&1
  rc=$?
  say "$(printf '%-34s rc=%-3s %s' "$t" "$rc" \
    "$(grep -E '^\[  (PASSED|FAILED|SKIPPED) +\] [0-9]+ test' "$work/$t.log" | tr -s ' \n' ' ')")"
  grep -E '^\[  FAILED  \] [A-Za-z]' "$work/$t.log" | head -5 | tee -a "$summary"
done

if has trace; then
say "== trace --gpu (the instrumented kernels against the model)"
for order in kv q; do
  say "$order: $(timeout 60 "$bin/flashviz" trace --gpu --n 1000 --d 64 --sram 49152 --order $order --causal \
    --out "$work/trace-$order.jsonl" 2>&1 | tail -1)"
done
say "backward: $(timeout 60 "$bin/flashviz" trace --gpu --pass backward --n 1000 --d 64 --br 64 --bc 64 --causal \
  --out "$work/trace-backward.jsonl" 2>&1 | tail -1)"
fi

if has gui; then
say "== GUI through EGL on the GPU"
timeout 60 "$bin/flashviz" --n 1024 --d 64 --sram 49152 --step 2000 --width 1920 --height 1080 --gl egl \
  --bench-frames 300 2>&1 | tail -2 | tee -a "$summary"
for size in 1280x720 1920x1080; do
  timeout 90 "$bin/flashviz" --n 512 --d 64 --br 64 --bc 64 --order q --step 330 --panel gpu --gl egl \
    --width "${size%x*}" --height "${size#*x}" --screenshot "$out/live-gpu-$size.png" 2>&1 | tail -3 | tee -a "$summary"
done
# The same tab drawn through the host on purpose (the tab's switch, set by a session), to compare the two paths.
printf '%s\n' '{"flashviz_session": 1, "problem": {"n": 512, "d": 64, "tiles": "explicit", "br": 64, "bc": 64,' \
  '"order": "q"}, "step": 330, "tab": "gpu", "live_gpu": {"force_host_copy": true}}' > "$work/host-copy.json"
timeout 90 "$bin/flashviz" --session "$work/host-copy.json" --panel gpu --gl egl --width 1920 --height 1080 \
  --screenshot "$out/live-gpu-host-copy-1920x1080.png" 2>&1 | tail -3 | tee -a "$summary"
# The backward pass's live tab: the instrumented flash2_bwd against the model, flash2_bwd timed, dQ, dK, dV drawn.
timeout 90 "$bin/flashviz" --pass backward --n 512 --d 64 --br 64 --bc 64 --causal --step 207 --panel gpu --gl egl \
  --width 1920 --height 1080 --screenshot "$out/live-gpu-backward-1920x1080.png" 2>&1 | tail -3 | tee -a "$summary"
fi

if has causal; then
say "== causal sweep, d = 64 (B·H as docs/peers.md; TFLOP/s count half the FLOPs)"
f=$bin/flashviz n=1024,2048,4096,8192
timeout 60 "$f" bench --kernels naive,tiled --n 1024,2048 --d 64 --causal --csv "$work/causal_fp32_naive.csv" \
  2> "$work/causal_fp32_naive.log"
timeout 150 "$f" bench --kernels flash1,flash2_row,flash2_warp,math --n $n --d 64 --causal \
  --csv "$work/causal_fp32.csv" 2> "$work/causal_fp32.log"
timeout 100 "$f" bench --kernels flash2_wmma,flash2_mma,math --n $n --d 64 --dtype fp16 --causal \
  --csv "$work/causal_fp16.csv" 2> "$work/causal_fp16.log"
timeout 150 python3 scripts/peers.py --n $n --d 64 --dtype fp32 --causal --backends torch_efficient,torch_math \
  --csv "$work/causal_peers.csv" 2> "$work/causal_peers.log"
timeout 150 python3 scripts/peers.py --n $n --d 64 --dtype fp16 --causal --csv "$work/causal_peers.csv" --append \
  2>> "$work/causal_peers.log"
for csv in "$work"/causal_*.csv; do cut -d, -f1,2,5,6,7,8,10,11,14 "$csv" | tee -a "$summary"; done
grep -h -E "validation failed|error" "$work"/causal_*.log | head -10 | tee -a "$summary"
fi

# The backward pass: ours and PyTorch's backward on the same shapes, in this one run. fp16 on the
# tensor cores (flash2_bwd_mma as registered, and with its other dQ strategy: rows renamed _atomic or _dqpass)
# against the four SDPA backends; fp32 (naive_bwd at N = 1024, where its three N² matrices still fit; flash2_bwd,
# and flash2_bwd_tf32x3 at d = 64) against EFFICIENT and MATH. B·H as docs/peers.md.
if has bwd; then
say "== backward pass (TFLOP/s count 10·B·H·N²·d, halved causal)"
f=$bin/flashviz
for d in 64 128; do
  other=$([ $d = 64 ] && echo dqpass || echo atomic)  # backward_variants.h: the default is the other one
  for mask in "" --causal; do
    tag=d${d}${mask:+_causal}
    timeout 150 "$f" bench --pass backward --kernels flash2_bwd_mma --n 1024,4096,16384 --d $d --dtype fp16 $mask \
      --csv "$work/bwd_fp16_$tag.csv" 2> "$work/bwd_fp16_$tag.log"
    timeout 150 "$f" bench --pass backward --kernels flash2_bwd_mma --options 1 --n 1024,4096,16384 --d $d \
      --dtype fp16 $mask --csv "$work/bwd_fp16_${other}_$tag.csv" 2> "$work/bwd_fp16_${other}_$tag.log"
    sed -i "s/^flash2_bwd_mma,/flash2_bwd_mma_$other,/" "$work/bwd_fp16_${other}_$tag.csv"
    timeout 200 python3 scripts/peers.py --pass backward --n 1024,4096,16384 --d $d --dtype fp16 $mask \
      --csv "$work/bwd_peers_fp16_$tag.csv" 2> "$work/bwd_peers_fp16_$tag.log"
    timeout 90 "$f" bench --pass backward --kernels naive_bwd --n 1024 --d $d $mask \
      --csv "$work/bwd_fp32_naive_$tag.csv" 2> "$work/bwd_fp32_naive_$tag.log"
    timeout 90 "$f" bench --pass backward --kernels flash2_bwd,flash2_bwd_tf32x3 --n 1024,4096 --d $d $mask \
      --csv "$work/bwd_fp32_$tag.csv" 2> "$work/bwd_fp32_$tag.log"
    timeout 120 python3 scripts/peers.py --pass backward --n 1024,4096 --d $d --dtype fp32 $mask \
      --backends torch_efficient,torch_math --csv "$work/bwd_peers_fp32_$tag.csv" 2> "$work/bwd_peers_fp32_$tag.log"
  done
done
# One table: each of our rows beside every PyTorch backend's on the same (dtype, N, d, causal), with the ratio.
python3 - "$work" <<'PY' | tee -a "$summary"
import csv, glob, sys
rows = [r for path in sorted(glob.glob(sys.argv[1] + "/bwd_*.csv")) for r in csv.DictReader(open(path))]
key = lambda r: (r["dtype"], int(r["d"]), int(r["causal"]), int(r["N"]))
peers = {}
for r in rows:
    if r["kernel"].startswith("torch_"):
        peers.setdefault(key(r), {})[r["kernel"]] = r
names = ["torch_flash_bwd", "torch_cudnn_bwd", "torch_efficient_bwd", "torch_math_bwd"]
print("kernel                 dtype  d  causal      N  TFLOP/s  " + "  ".join(f"{n[6:-4]:>15s}" for n in names))
for r in sorted((r for r in rows if not r["kernel"].startswith("torch_")), key=lambda r: (key(r), r["kernel"])):
    ours = float(r["tflops"]) if r["status"] == "ok" else float("nan")
    cells = []
    for name in names:
        p = peers.get(key(r), {}).get(name)
        if p is None or p["status"] != "ok":
            cells.append(f"{'-' if p is None else 'n/a':>15s}")
        else:
            cells.append(f"{float(p['tflops']):7.1f} ({ours / float(p['tflops']):4.2f}x)")
    status = "" if r["status"] == "ok" else "  " + r["status"][:60]
    print(f"{r['kernel']:22s} {r['dtype']:5s} {r['d']:>3s} {r['causal']:>6s} {r['N']:>6s} {ours:8.1f}  "
          + "  ".join(cells) + status)
PY
grep -h -E "validation failed|error:" "$work"/bwd_*.log | head -10 | tee -a "$summary"
fi

# Decoding: flash_decode, flash_decode_paged (page 64) and decode_naive against PyTorch's SDPA backends (enable_gqa)
# on the same shapes, B = 1, 8, 64 × N = 4096, 32768, 131072, H = 32, G = 8, R = 1, d = 128; each run measures the
# device copy's bandwidth, the ceiling every row's share is of. Then flash_decode's split count forced to 1 … 128 at
# B = 1 and 8 (where the automatic rule splits), beside the automatic rule's choice.
if has decode; then
say "== decoding (GB/s of the KV cache, share of the device copy's)"
f=$bin/flashviz
for dtype in fp16 bf16; do
  timeout 300 "$f" bench --decode --dtype $dtype --csv "$work/decode_$dtype.csv" > "$work/decode_$dtype.out" \
    2> "$work/decode_$dtype.log"
  tail -5 "$work/decode_$dtype.out" | tee -a "$summary"
  timeout 300 python3 scripts/peers.py --decode --dtype $dtype --csv "$work/decode_peers_$dtype.csv" \
    2> "$work/decode_peers_$dtype.log"
  grep -E "copy|GB/s" "$work/decode_peers_$dtype.log" | head -40 | tee -a "$summary"
done
# The paged cache at a larger page, and the kernels under compute-sanitizer on small shapes.
timeout 120 "$f" bench --decode --kernels flash_decode_paged --page 256 --dtype fp16 \
  --csv "$work/decode_paged256_fp16.csv" > "$work/decode_paged256_fp16.out" 2> "$work/decode_paged256_fp16.log"
tail -3 "$work/decode_paged256_fp16.out" | tee -a "$summary"
cs=$(command -v compute-sanitizer || echo /usr/local/cuda/bin/compute-sanitizer)
filter='*fp16_B2H4G1R2N257d128*:*bf16_B1H8G2R3N1000d64_P48*:*fp16_B2H32G8R1N5000d128_P0_S0*:*fp16_B2H32G8R1N5000d128_P64_S3*'
for tool in memcheck racecheck; do
  timeout 90 "$cs" --tool $tool --error-exitcode 9 "$bin/kernels_cuda_decode_gpu_tests" --gtest_filter="$filter" \
    > "$work/decode_sanitizer_$tool.log" 2>&1
  echo "compute-sanitizer $tool rc=$? $(grep -E '^\[  PASSED|ERROR SUMMARY|RACECHECK SUMMARY' \
    "$work/decode_sanitizer_$tool.log" | tr '\n' ' ')" | tee -a "$summary"
done
for splits in 1 2 4 8 16 32 64 128 0; do
  timeout 120 "$f" bench --decode --kernels flash_decode --batch 1,8 --kv-len 4096,32768,131072 --splits $splits \
    --csv "$work/decode_splits_$splits.csv" > /dev/null 2> "$work/decode_splits_$splits.log"
done
python3 - "$work" <<'PY' | tee -a "$summary"
import csv, glob, sys
table = {}
for path in sorted(glob.glob(sys.argv[1] + "/decode_splits_*.csv")):
    forced = int(path.rsplit("_", 1)[1].split(".")[0])
    for r in csv.DictReader(open(path)):
        cell = f"{float(r['gbps']):6.0f}/{r['splits']:>3s}" if r["status"] == "ok" else "   n/a    "
        table.setdefault((int(r["B"]), int(r["N"])), {})[forced] = cell
forced = [1, 2, 4, 8, 16, 32, 64, 128, 0]
print("split sweep, flash_decode fp16 (GB/s / splits run; 0 = the automatic rule)")
print("   B       N  " + " ".join(f"{('auto' if s == 0 else s):>10}" for s in forced))
for (b, n), cells in sorted(table.items()):
    print(f"{b:4d} {n:7d}  " + " ".join(f"{cells.get(s, '-'):>10s}" for s in forced))
PY
grep -h -E "validation failed|error" "$work"/decode_*.log | head -10 | tee -a "$summary"
fi
if has ring; then
say "== ring attention (scripts/ring_device_run.sh)"
scripts/ring_device_run.sh "$bin" "$work/ring" > "$work/ring.log" 2>&1   # its files go into check.tgz
say "ring rc=$?"
cat "$work/ring/summary.txt" >> "$summary"
fi
cp "$summary" "$work/"
