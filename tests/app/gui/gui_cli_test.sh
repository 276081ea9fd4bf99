#!/usr/bin/env bash
# `flashviz gui` as a user runs it: --screenshot writes a PNG of the requested size (checked from its header),
# --bench-frames prints frame times, and bad options end with one line on stderr, a non-zero status and no
# file left behind. Prints "[  SKIPPED ]" when neither a display nor EGL is available.
# Usage: gui_cli_test.sh path/to/flashviz
set -u
flashviz=$1
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
fail() { echo "FAIL: $*"; exit 1; }

if ! "$flashviz" --screenshot "$work/probe.png" --width 64 --height 64 > "$work/probe.log" 2>&1; then
  if [ -z "${DISPLAY:-}" ]; then
    echo "[  SKIPPED ] no display and no EGL: $(cat "$work/probe.log")"
    exit 0
  fi
  fail "--screenshot failed with a display present: $(cat "$work/probe.log")"
fi

png_size() {  # width height of a PNG, from its IHDR chunk
  python3 - "$1" <<'PY'
import struct, sys
data = open(sys.argv[1], 'rb').read(32)
assert data[:8] == b'\x89PNG\r\n\x1a\n', 'not a PNG'
w, h = struct.unpack('>II', data[16:24])
print(w, h)
PY
}

"$flashviz" --n 64 --d 8 --br 16 --bc 16 --order q --causal --screenshot "$work/traffic.png" --step 40 \
  --panel traffic --width 800 --height 600 --theme light > "$work/out.log" 2>&1 \
  || fail "screenshot: $(cat "$work/out.log")"
[ "$(png_size "$work/traffic.png")" = "800 600" ] || fail "wrong size: $(png_size "$work/traffic.png")"
grep -q "wrote $work/traffic.png" "$work/out.log" || fail "no confirmation line: $(cat "$work/out.log")"
"$flashviz" gui --screenshot "$work/default.png" --ui-scale 1.5 > /dev/null 2>&1 || fail "the default problem"
[ "$(png_size "$work/default.png")" = "1280 720" ] || fail "default size"

# A session saved by hand opens too.
cat > "$work/s.json" <<'JSON'
{"flashviz_session": 1, "problem": {"n": 32, "d": 4, "tiles": "explicit", "br": 8, "bc": 8, "order": "kv"},
 "step": 12, "panels": {"traffic": false}, "theme": "light"}
JSON
"$flashviz" --session "$work/s.json" --screenshot "$work/session.png" > /dev/null 2>&1 || fail "session"

"$flashviz" --n 64 --d 8 --bench-frames 5 --width 640 --height 480 > "$work/bench.log" 2>&1 \
  || fail "bench: $(cat "$work/bench.log")"
grep -q "frame time: median" "$work/bench.log" || fail "bench printed no frame times"

expect_error() {  # expect_error WHAT ARGS...: non-zero, one line on stderr, no PNG left
  local what=$1
  shift
  rm -f "$work/bad.png"
  if "$flashviz" "$@" --screenshot "$work/bad.png" > /dev/null 2> "$work/err"; then fail "$what: succeeded"; fi
  [ "$(wc -l < "$work/err")" -eq 1 ] || fail "$what: stderr is not one line: $(cat "$work/err")"
  ls "$work" | grep -q "bad.png" && fail "$what: left $(ls "$work" | grep bad.png)"
  return 0
}
expect_error "unknown panel" --panel nope
expect_error "step past the end" --n 8 --d 4 --step 100000
expect_error "tiny width" --width 10
expect_error "N = 0" --n 0
expect_error "too big for the GUI" --n 1048576 --d 1024
expect_error "missing session" --session "$work/none.json"
expect_error "session and options" --session "$work/s.json" --n 8
expect_error "bad theme" --theme pink
expect_error "bad scale" --ui-scale 9
expect_error "missing input" --input "$work/none.bin"
expect_error "unwritable output" --n 8 --d 4 --screenshot /nonexistent-dir/x.png
echo "gui CLI: all checks passed"
