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
expect_error "an unknown lesson" --lesson nope
expect_error "a lesson stop past the end" --lesson first-lesson:99

# Exports without a window: animations of a step range (GIF and MP4 by their magic bytes), CSVs of the tile and
# of the m/ℓ history; exit 2 for a usage error, nothing left behind.
for format in gif mp4; do
  "$flashviz" --n 8 --d 4 --br 2 --bc 2 --steps 3:6 --width 320 --height 200 --transition-frames 1 \
    --record "$work/a.$format" > /dev/null 2> "$work/record.log" || fail "--record $format: $(cat "$work/record.log")"
  grep -q "4 frames of 320 × 200" "$work/record.log" || fail "--record $format said: $(cat "$work/record.log")"
done
# With the transitions: the first step, then 4 frames for each of the 3 steps after it.
"$flashviz" --n 8 --d 4 --br 2 --bc 2 --steps 3:6 --width 320 --height 200 --record "$work/t.gif" \
  > /dev/null 2> "$work/record.log" || fail "--record with transitions: $(cat "$work/record.log")"
grep -q "13 frames of 320 × 200 at 16 fps" "$work/record.log" || fail "transitions: $(cat "$work/record.log")"
[ "$(head -c 6 "$work/a.gif")" = "GIF89a" ] || fail "a.gif is not a GIF"
[ "$(head -c 8 "$work/a.mp4" | tail -c 4)" = "ftyp" ] || fail "a.mp4 is not an MP4"
"$flashviz" --n 8 --d 4 --br 2 --bc 2 --step 5 --tile-csv "$work/tile.csv" --history-csv "$work/history.csv" \
  2> /dev/null || fail "--tile-csv"
[ "$(head -1 "$work/tile.csv")" = "row,key,S,P,m_tile,l_tile,m,l,alpha" ] || fail "tile CSV header"
[ "$(wc -l < "$work/tile.csv")" -eq 5 ] || fail "tile CSV: $(wc -l < "$work/tile.csv") lines for a 2 × 2 tile"
[ "$(head -1 "$work/history.csv")" = "row,j,m,l" ] || fail "history CSV header"
usage() {  # usage WHAT ARGS...: exit status 2, no file left
  local what=$1
  shift
  "$flashviz" "$@" > /dev/null 2>&1
  [ $? -eq 2 ] || fail "$what: exit status is not 2"
  [ -e "$work/u.gif" ] && fail "$what: left u.gif"
  return 0
}
usage "--record to a PNG" --record "$work/u.png"
usage "--steps without --record" --steps 1:2
usage "--steps past the end" --n 8 --d 4 --steps 0:100000 --record "$work/u.gif"
usage "--steps backwards" --n 8 --d 4 --steps 5:2 --record "$work/u.gif"
usage "two exports at once" --n 8 --d 4 --record "$work/u.gif" --screenshot "$work/u.png"
echo "gui CLI: all checks passed"
