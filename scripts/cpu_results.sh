#!/usr/bin/env bash
# The measurements of the machine without a GPU, into one results folder (docs/results/ keeps them; the README's
# tables of them are written by scripts/results_tables.py):
#   scripts/cpu_results.sh BUILD_DIR OUT_DIR [PARTS]
# BUILD_DIR is a build of scripts/build default; PARTS is a comma-separated choice of (all by default)
#   benchmarks  the two Google Benchmark programs' JSON (cpu_attention.json, stepper.json)
#   frames      frames.txt: the GUI's frame time (--bench-frames) under Xvfb and Mesa llvmpipe, a line per command
#   build-time  build_time.txt: a fresh Release build of the CUDA flagships' library (needs the CUDA toolkit)
#   record      record.txt: `flashviz --record` of 100 steps at 1280×720, as GIF and as MP4, under llvmpipe
#   rounding    rounding.txt: the hw4 rounding model's worst errors per arithmetic (a CPU model of the GPU's)
# machine.txt says when, on what CPU, with which compiler and commit, and the load average: the machine should be
# otherwise idle, since a software rasterizer, the benchmarks and the compiler share its cores.
set -euo pipefail
build=${1:?build directory} out=${2:?output directory} parts=,${3:-benchmarks,frames,build-time},
mkdir -p "$out"
bin=$build/app/flashviz
{
  date -u +"date: %Y-%m-%dT%H:%M:%SZ"
  echo "cpu: $(lscpu | sed -n 's/^Model name: *//p'), $(nproc) threads"
  echo "compiler: $(c++ --version | head -1), $(sed -n 's/^CMAKE_BUILD_TYPE:STRING=//p' "$build/CMakeCache.txt")"
  changes=$(git diff --quiet HEAD -- app kernels viz || echo ' (with local changes)')
  echo "commit: $(git rev-parse --short HEAD)$changes"
  echo "load average before: $(cut -d' ' -f1-3 /proc/loadavg)"
} >> "$out/machine.txt"

if [[ $parts == *,benchmarks,* ]]; then
  "$build/bench/cpu_attention_bench" --benchmark_repetitions=5 --benchmark_report_aggregates_only=true \
    --benchmark_out="$out/cpu_attention.json" --benchmark_out_format=json > /dev/null
  "$build/bench/stepper_bench" --benchmark_repetitions=3 --benchmark_report_aggregates_only=true \
    --benchmark_out="$out/stepper.json" --benchmark_out_format=json > /dev/null
fi

if [[ $parts == *,frames,* ]]; then
  # Each line: the options after `flashviz`, then what --bench-frames printed of the frame time and of its UI
  # and model part, separated by tabs.
  problem="--n 1024 --d 64 --sram 49152 --bench-frames 300"
  echo "# load average before: $(cut -d' ' -f1-3 /proc/loadavg)" > "$out/frames.txt"
  for extra in "" "--width 1920 --height 1080" "--panel traffic" "--order q" "--bench-transitions"; do
    size=$extra
    [[ $extra == *--width* ]] || size="$extra --width 1280 --height 720"
    line=$(xvfb-run -a -s "-screen 0 1920x1080x24" "$bin" $problem $size 2>&1 | grep -E '^(frame time|of which)' |
           paste -sd '\t')
    printf '%s\t%s\n' "$(echo "$problem $size" | tr -s ' ')" "$line" >> "$out/frames.txt"
  done
fi

if [[ $parts == *,record,* ]]; then
  # Each line: the options after `flashviz`, a tab, the wall seconds of the whole command, a tab, what it printed.
  : > "$out/record.txt"
  for file in record-100.gif record-100.mp4; do
    options="--n 64 --d 8 --br 8 --bc 8 --seed 3 --steps 100:199 --width 1280 --height 720 --record"
    start=$(date +%s.%N)
    line=$(xvfb-run -a -s "-screen 0 1920x1080x24" "$bin" $options "/tmp/flashviz-$file" 2>&1 | grep '^wrote')
    wall=$(awk -v a="$start" -v b="$(date +%s.%N)" 'BEGIN { printf "%.2f", b - a }')
    printf '%s %s\t%s\t%s\n' "$options" "$file" "$wall" "${line/\/tmp\/flashviz-/}" >> "$out/record.txt"
    rm -f "/tmp/flashviz-$file"
  done
fi

if [[ $parts == *,rounding,* ]]; then
  "$build/tests/kernels/cuda/hw4/hw4_rounding_tests" \
    --gtest_filter=Hw4RoundingModel.Fp16AndSingleTf32MissTheMarginFp32And3xTf32HoldIt |
    sed -n '/^worst |O - float64|/,/^\[/p' | grep -v '^\[' > "$out/rounding.txt"
fi

if [[ $parts == *,build-time,* ]]; then
  # What the tensor-core kernels cost in build time: a fresh Release build directory of the flagships' library
  # (flashviz_kernels with it), ccache off, configure excluded.
  fresh=$(mktemp -d)
  trap 'rm -rf "$fresh"' EXIT
  cmake -S . -B "$fresh" -DCMAKE_BUILD_TYPE=Release > /dev/null
  grep -q '^FLASHVIZ_WITH_CUDA:BOOL=ON' "$fresh/CMakeCache.txt" || { echo "build-time: no CUDA toolkit" >&2; exit 1; }
  load=$(cut -d' ' -f1-3 /proc/loadavg)
  CCACHE_DISABLE=1 /usr/bin/time -f "%e %U %S" -o "$fresh/time.txt" \
    cmake --build "$fresh" --target flashviz_cuda_mma -j"$(nproc)" > "$fresh/build.log" 2>&1 ||
    { tail -20 "$fresh/build.log" >&2; exit 1; }
  read -r wall user sys < "$fresh/time.txt"
  {
    echo "commit: $(git rev-parse --short HEAD)"
    echo "command: CCACHE_DISABLE=1 cmake --build <fresh Release build directory> --target flashviz_cuda_mma -j$(nproc)"
    echo "load average before the build: $load"
    echo "wall_s: $wall"
    echo "cpu_s: $(awk -v u="$user" -v s="$sys" 'BEGIN { print u + s }')"
  } > "$out/build_time.txt"
fi
echo "load average after: $(cut -d' ' -f1-3 /proc/loadavg)" >> "$out/machine.txt"
cat "$out/machine.txt"
