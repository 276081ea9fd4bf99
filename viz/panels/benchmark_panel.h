// The benchmark panel's own state (kept in UiState under the panel's id, as the panel table asks): what the next sweep
// runs, where CSVs are loaded from and exported to, and how the plot reads. The sweep itself (a background thread and
// its results) lives in benchmark_panel.cpp: it is work in progress, not something a session stores.
#pragma once

#include <cstddef>
#include <map>
#include <string>

#include "viz/ui_state.h"

namespace flashviz {

struct BenchmarkPanelState {
  bool backward = false;  // which registry the sweep runs: the forward progression, or the backward one
  bool pass_set = false;  // `backward` was set: until then the panel takes the pass being stepped through
  std::map<std::string, bool, std::less<>> kernels;  // by registry id; absent: on for the progression's steps
  int dtype = 0;                  // 0 fp32, 1 fp16, 2 bf16
  int d = 64;
  bool causal = false;
  int n_min_log2 = 9, n_max_log2 = 12;  // N from 2^min to 2^max, doubling
  bool auto_heads = true;         // B·H = min(1024, 2³²/N²) with H = 16, as docs/peers.md; else batch × heads
  int batch = 4, heads = 16;
  int repeats = 20;
  bool y_tflops = false;          // plot TFLOP/s instead of ms
  bool show_peers = true;
  // CSVs to load: ours (flashviz bench) and PyTorch's backends (scripts/peers.py). Empty: the measurements that
  // ship inside flashviz (forward: docs/results/2026-11-21-h200, an H200; backward:
  // docs/results/2026-11-25-h100-backward-mma, an H100), so the plot works from any directory.
  std::string peers_path;
  std::string results_path;
  bool samples_loaded = false;  // the shipped measurements were put on the plot once, at the first frame
  bool samples_backward = false;  // which pass's shipped measurements are on it (switching the pass reloads them)
  std::string export_csv_path = "flashviz-bench.csv";
  std::string export_png_path = "flashviz-bench.png";
  std::string message;            // the last load/export result, one line
  bool run_requested = false;     // request: start a sweep with these settings (the Run button sets it)
};

// Where the panel's sweep stands (it runs on a background thread): for tests and status lines.
struct BenchmarkProgress {
  bool running = false;
  std::size_t done = 0, total = 0;  // points of the current or last sweep
  std::size_t measured = 0;         // rows on screen that were validated and timed ("ok")
  std::size_t not_run = 0;          // rows that say why not (not applicable, failed validation, error)
};
BenchmarkProgress CurrentBenchmarkProgress();

inline BenchmarkPanelState& BenchmarkState(UiState& ui) { return PanelState<BenchmarkPanelState>(ui, "benchmark"); }

}  // namespace flashviz
