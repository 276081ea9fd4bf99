#!/usr/bin/env bash
# Regenerates the README's screenshots that are rendered here (Mesa llvmpipe through EGL, no window), each from
# one command, so they follow the GUI as it changes:  scripts/screenshots.sh [BUILD_DIR]  (default: build)
# The NVIDIA screenshots (nvidia-h200-*, live-gpu-*) come from the GPU machine: scripts/gpu_check.sh.
# The Vortex panel's TCU pictures are written by its test: FLASHVIZ_VORTEX_SHOTS=assets/screenshots
# build/tests/kernels/vortex/vortex_panel_tests.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
app=$root/${1:-build}/app/flashviz
out=$root/assets/screenshots
[ -x "$app" ] || { echo "screenshots.sh: $app not built (scripts/build)" >&2; exit 1; }
shot() {  # shot NAME ARGS...
  local name=$1
  shift
  "$app" "$@" --screenshot "$out/$name.png" | sed "s|^|$name: |"
}
shot first-lesson-1280x720 --n 8 --d 4 --br 2 --bc 2 --seed 1 --step 40
shot assignment-n1024-1920x1080 --n 1024 --d 64 --sram 49152 --step 2000 --width 1920 --height 1080
shot traffic-n1024-1280x720 --n 1024 --d 64 --sram 49152 --step 2000 --panel traffic
shot algorithm-first-lesson-1920x1080 --n 8 --d 4 --br 2 --bc 2 --seed 1 --step 39 --panel algorithm \
  --width 1920 --height 1080
shot lesson-first-presentation-1280x720 --present --lesson first-lesson:11
shot presentation-traffic-1024x768 --present --n 64 --d 8 --br 8 --bc 8 --seed 3 --step 100 --panel traffic \
  --width 1024 --height 768
shot backward-grad-q-1920x1080 --pass backward --n 32 --d 8 --br 8 --bc 8 --seed 2 --causal --step 80 \
  --width 1920 --height 1080
shot decode-merge-1280x720 --decode --kv-len 64 --heads 4 --kv-heads 2 --page 8 --splits 4 --seed 2 --step 66 \
  --width 1280 --height 720
shot ring-merge-1280x720 --ring 4 --zigzag --causal --n 32 --d 4 --br 4 --bc 4 --seed 4 --ring-tflops 1 --step 4 \
  --width 1280 --height 720
report=(--n 64 --order q --scale none)  # the Vortex report's problem (the "Vortex report" preset)
shot vortex-q-rowmax-1280x720 "${report[@]}" --d 8 --br 16 --bc 16 --step 9
shot vortex_simt_step12 "${report[@]}" --d 8 --br 16 --bc 16 --step 12 --panel vortex
shot vortex_simt_d32_does_not_fit "${report[@]}" --d 32 --step 12 --panel vortex
# The projector set-up (large font, light theme) lives in the session, as a user would save it (Ctrl+S).
session=$(mktemp --suffix .json)
trap 'rm -f "$session"' EXIT
cat > "$session" <<'JSON'
{"flashviz_session": 1, "problem": {"n": 64, "d": 8, "tiles": "explicit", "br": 8, "bc": 8, "order": "kv",
 "causal": true, "seed": 3}, "step": 166, "theme": "light", "presentation": true}
JSON
shot causal-projector-light-1920x1080 --session "$session" --width 1920 --height 1080
