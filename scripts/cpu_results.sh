#!/usr/bin/env bash
# The measurements of the machine without a GPU, into one results folder (docs/results/ keeps them; the README's
# tables of them are written by scripts/results_tables.py):
#   scripts/cpu_results.sh BUILD_DIR OUT_DIR
# BUILD_DIR is a Release build (scripts/build default); OUT_DIR gets machine.txt (CPU, load, compiler, commit),
# the two Google Benchmark programs' JSON (cpu_attention.json, stepper.json) and frames.txt: the GUI's frame time
# (--bench-frames) under Xvfb and Mesa llvmpipe, one line per command. The machine should be otherwise idle: a
# software rasterizer and the benchmarks share its cores, so the load average is written beside the figures.
set -euo pipefail
build=${1:?build directory} out=${2:?output directory}
mkdir -p "$out"
bin=$build/app/flashviz
{
  date -u +"date: %Y-%m-%dT%H:%M:%SZ"
  echo "cpu: $(lscpu | sed -n 's/^Model name: *//p'), $(nproc) threads"
  echo "compiler: $(c++ --version | head -1), $(sed -n 's/^CMAKE_BUILD_TYPE:STRING=//p' "$build/CMakeCache.txt")"
  echo "commit: $(git rev-parse --short HEAD)$(git diff --quiet HEAD -- app kernels viz || echo ' (with local changes)')"
  echo "load average before: $(cut -d' ' -f1-3 /proc/loadavg)"
} > "$out/machine.txt"

"$build/bench/cpu_attention_bench" --benchmark_repetitions=5 --benchmark_report_aggregates_only=true \
  --benchmark_out="$out/cpu_attention.json" --benchmark_out_format=json > /dev/null
"$build/bench/stepper_bench" --benchmark_repetitions=3 --benchmark_report_aggregates_only=true \
  --benchmark_out="$out/stepper.json" --benchmark_out_format=json > /dev/null

# Each line: the options after `flashviz`, then what --bench-frames printed of the frame time and of its UI and
# model part, separated by tabs.
problem="--n 1024 --d 64 --sram 49152 --bench-frames 300"
: > "$out/frames.txt"
for extra in "" "--width 1920 --height 1080" "--panel traffic" "--order q"; do
  size=${extra:+$extra}
  [[ $extra == *--width* ]] || size="$extra --width 1280 --height 720"
  line=$(xvfb-run -a -s "-screen 0 1920x1080x24" "$bin" $problem $size 2>&1 | grep -E '^(frame time|of which)' |
         paste -sd '\t')
  printf '%s\t%s\n' "$(echo "$problem $size" | tr -s ' ')" "$line" >> "$out/frames.txt"
done
echo "load average after: $(cut -d' ' -f1-3 /proc/loadavg)" >> "$out/machine.txt"
cat "$out/machine.txt" "$out/frames.txt"
