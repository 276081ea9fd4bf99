// Runtime against N on log-log axes, one line per kernel (and dtype, d where a plot mixes them): the plot the
// benchmark panel draws live and `flashviz bench --png` renders on the CPU. One function builds it for both,
// so the PNG is the panel's plot.
#pragma once

#include <span>
#include <string>

#include "kernels/cuda/bench_results.h"
#include "viz/plot.h"
#include "viz/raster.h"

namespace flashviz {

struct BenchPlotOptions {
  std::string title;
  bool tflops = false;  // y = TFLOP/s (linear N axis stays log) instead of ms
};

// `rows`: flashviz's own (solid lines) and PyTorch's (kernel "torch_*": dashed), mixed in any order; rows that
// are not "ok" are left out. Series are (kernel, dtype, d, causal), labelled by what differs between them.
PlotSpec BenchPlotSpec(std::span<const cuda::BenchRow> rows, const BenchPlotOptions& options);

// The plot alone in a width × height image (light theme: it goes into documents).
RgbaImage RenderBenchImage(std::span<const cuda::BenchRow> rows, const BenchPlotOptions& options, int width = 1400,
                           int height = 900);
// The same, written as a PNG. False with a one-line reason.
bool RenderBenchPng(std::span<const cuda::BenchRow> rows, const BenchPlotOptions& options, const std::string& path,
                    std::string* error, int width = 1400, int height = 900);

}  // namespace flashviz
