// A benchmark sweep and its results as data: what `flashviz bench`, the GUI's benchmark panel and
// scripts/peers.py agree on. The sweep's points (kernels × N at one d, dtype, B·H), one row per point, and the
// CSV they share (columns kernel, dtype, B, H, N, d, causal, ms_median, ms_min, tflops, max_abs_error,
// hbm_bytes, gpu, status). Plain C++, in every build: a build without CUDA still loads and plots CSVs.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "kernels/cuda/attention_types.h"
#include "kernels/cuda/registry.h"

namespace flashviz::cuda {

struct SweepSpec {
  std::vector<std::string> kernels;  // registry ids, in the order to run
  std::vector<int> n_values;         // sequence lengths N
  int d = 64;
  int batch = 0;                     // 0: B = max(1, AutoHeads(N) / heads)
  int heads = 16;
  DType dtype = DType::kFp32;
  bool causal = false;
  int repeats = 20;
  int warmup = 2;
  std::uint64_t seed = 1;
  unsigned variant_options = 0;
};

// B·H that fills the GPU at sequence length N while keeping B·H·N² near 2³² (docs/peers.md's shapes: 1024 up to
// N = 2048, 256 at 4096, 64 at 8192, 16 at 16384).
std::int64_t AutoHeads(int n);

struct SweepPoint {
  const VariantInfo* variant;
  AttentionShape shape;  // scale 1/√d
};
// N outer, kernels inner. Throws InputError (one line) for an unknown kernel id or an impossible number.
std::vector<SweepPoint> SweepPoints(const SweepSpec& spec);

struct BenchRow {
  std::string kernel;  // registry id, or a peer's name ("torch_flash")
  std::string dtype;
  int batch = 0, heads = 0, n = 0, d = 0;
  bool causal = false;
  double ms_median = 0, ms_min = 0, tflops = 0, max_abs_error = 0, hbm_bytes = 0;  // NaN where not measured
  std::string gpu;
  std::string status;  // "ok", or "not applicable: <reason>", "validation failed: ...", "error: ..."
  bool Ok() const { return status == "ok"; }
};

std::string BenchCsvHeader();                // the header line, with '\n'
std::string BenchCsvLine(const BenchRow& row);  // one line, with '\n'; fields with commas or quotes are quoted
// Reads a CSV with at least the columns kernel, dtype, B, H, N, d, ms_median (any order, others ignored; empty
// numbers are NaN). Throws InputError("<source>: line L: ...") on malformed input.
std::vector<BenchRow> ParseBenchCsv(std::string_view text, const std::string& source);
// ParseBenchCsv of a file, read through kernels/common/files.h within a size bound (a benchmark CSV is a few
// hundred rows: a file far beyond that is not one, and is not read into memory). Throws InputError.
std::vector<BenchRow> ReadBenchCsv(const std::string& path);

// "42 points: 7 kernels × N = 512 to 16384, d = 64, fp32, H = 16, B·H = min(1024, 2³²/N²)": for progress
// headers and plot titles.
std::string DescribeSweep(const SweepSpec& spec, std::size_t points);

}  // namespace flashviz::cuda
