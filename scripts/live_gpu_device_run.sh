#!/usr/bin/env bash
# The live GPU view on a machine with an NVIDIA Hopper GPU. BIN_DIR holds binaries built for sm_90 (gzipped where
# large), with DejaVu Sans (what scripts/deps installs on Debian) in BIN_DIR/fonts and the GLFW/epoxy/stb/X11
# runtime in BIN_DIR/lib; OUT_DIR gets the logs and screenshots. Run from the repository root:
#   scripts/live_gpu_device_run.sh egl|glx|mesa BIN_DIR OUT_DIR
#   egl:  EGL on the NVIDIA GPU: the instrumented kernels against the model, the live tab rendered headless (label
#         gpu tests), trace --gpu on both orders, a screenshot of the live tab through interop.
#   glx:  an X server with GLX on the NVIDIA GPU (interop) and on Mesa llvmpipe (host copy): the interop tests on
#         both, and the same live-tab screenshot through each.
#   mesa: the live-tab screenshot through EGL on the NVIDIA GPU (interop), then the same with GL on Mesa, where
#         CUDA cannot register the textures (host copy); MESA_DEBS names a folder of Mesa's EGL and llvmpipe
#         packages (.deb) to unpack.
# Where the NVIDIA GL libraries are not installed system-wide, FLASHVIZ_GL_ENV (EGL) and FLASHVIZ_X_ENV (an X
# server with GLX) name scripts to source first.
set -uo pipefail
mode=$1 bin=$2 out=$3
for f in "$bin"/*.gz; do [ -e "$f" ] && gunzip -f "$f"; done
chmod +x "$bin"/* 2>/dev/null
mkdir -p /usr/share/fonts/truetype/dejavu && cp "$bin"/fonts/*.ttf /usr/share/fonts/truetype/dejavu/
nvidia-smi -L | tee "$out/gpu-$mode.txt"
shot="--n 512 --d 64 --br 64 --bc 64 --order q --step 330 --panel gpu --width 1920 --height 1080"
if [ "$mode" = egl ]; then
  [ -n "${FLASHVIZ_GL_ENV:-}" ] && source "$FLASHVIZ_GL_ENV"
  export LD_LIBRARY_PATH=$PWD/$bin/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
  echo "== instrumented kernels vs the model"
  "$bin/cuda_probe_tests" 2>&1 | tee "$out/tests-egl.log" | grep -E '^\[  (PASSED|FAILED|SKIPPED)'
  echo "== the live tab rendered headless"
  "$bin/live_view_tests" 2>&1 | tee -a "$out/tests-egl.log" |
    grep -E '^\[  (PASSED|FAILED|SKIPPED)|Failure|Expected|Which' | head
  echo "== trace --gpu"
  for order in kv q; do
    "$bin/flashviz" trace --gpu --n 1000 --d 64 --sram 49152 --order $order --causal --out /tmp/t.jsonl 2>&1 | tail -1
  done
  echo "== screenshots"
  "$bin/flashviz" $shot --gl egl --screenshot "$out/live-gpu-egl-interop-1920x1080.png" 2>&1 | tail -2
  "$bin/flashviz" --n 64 --d 8 --br 16 --bc 16 --causal --order q --step 60 --panel gpu --width 1280 --height 720 \
    --gl egl --screenshot "$out/live-gpu-causal-1280x720.png" 2>&1 | tail -2
elif [ "$mode" = mesa ]; then
  [ -n "${FLASHVIZ_GL_ENV:-}" ] && source "$FLASHVIZ_GL_ENV"  # the glvnd EGL loader, NVIDIA's vendor first
  LD_LIBRARY_PATH=$PWD/$bin/lib "$bin/flashviz" $shot --gl egl \
    --screenshot "$out/live-gpu-egl-interop-1920x1080.png" 2>&1 | tail -2
  mkdir -p /opt/mesa && for f in "${MESA_DEBS:?a folder of Mesa .deb packages}"/*.deb; do dpkg -x "$f" /opt/mesa; done
  export LD_LIBRARY_PATH=$PWD/$bin/lib:/opt/mesa/usr/lib/x86_64-linux-gnu
  export __EGL_VENDOR_LIBRARY_FILENAMES=/opt/mesa/usr/share/glvnd/egl_vendor.d/50_mesa.json
  export LIBGL_DRIVERS_PATH=/opt/mesa/usr/lib/x86_64-linux-gnu/dri
  "$bin/flashviz" $shot --gl egl --screenshot "$out/live-gpu-egl-mesa-host-copy-1920x1080.png" 2>&1 | tail -2
else
  [ -n "${FLASHVIZ_X_ENV:-}" ] && source "$FLASHVIZ_X_ENV"   # an X server, GLX on the NVIDIA GPU
  mesa() {
    (unset __GLX_VENDOR_LIBRARY_NAME; export LIBGL_DRIVERS_PATH=${MESA_DRI_DIR:-/usr/lib/x86_64-linux-gnu/dri}; "$@")
  }
  echo "== interop, GLX on the NVIDIA GPU"
  export FLASHVIZ_TEST_GL=glfw  # the test's context through GLX (a hidden GLFW window), not EGL
  "$bin/interop_tests" 2>&1 | tee "$out/tests-glx.log" | grep -E 'renderer|^\[  (PASSED|FAILED)'
  echo "== interop, GLX on Mesa llvmpipe (fallback expected)"
  mesa "$bin/interop_tests" 2>&1 | tee -a "$out/tests-glx.log" | grep -E 'renderer|^\[  (PASSED|FAILED)'
  echo "== screenshots through GLX"
  "$bin/flashviz" $shot --gl glfw --screenshot "$out/live-gpu-glx-nvidia-interop-1920x1080.png" 2>&1 | tail -2
  mesa "$bin/flashviz" $shot --gl glfw --screenshot "$out/live-gpu-glx-mesa-host-copy-1920x1080.png" 2>&1 | tail -2
fi
