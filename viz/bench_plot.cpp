#include "viz/bench_plot.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <set>
#include <tuple>

#include "kernels/common/format.h"
#include "viz/raster.h"

namespace flashviz {
namespace {

// Distinct hues that read on both themes; a kernel keeps its colour wherever it appears.
constexpr ImU32 kColors[] = {
    IM_COL32(230, 75, 60, 255),   IM_COL32(240, 150, 40, 255),  IM_COL32(200, 180, 30, 255),
    IM_COL32(90, 180, 60, 255),   IM_COL32(30, 170, 160, 255),  IM_COL32(60, 120, 230, 255),
    IM_COL32(150, 90, 220, 255),  IM_COL32(130, 130, 130, 255), IM_COL32(170, 110, 60, 255),
    IM_COL32(220, 80, 170, 255),  IM_COL32(100, 200, 230, 255), IM_COL32(120, 150, 40, 255),
};

using SeriesKey = std::tuple<std::string, std::string, int, bool>;  // kernel, dtype, d, causal

// The k-th series of one kernel (another dtype or d): the kernel's hue, darker, then lighter, in turn.
ImU32 Shade(ImU32 color, int k) {
  if (k == 0) return color;
  const float factor = k % 2 ? 0.6f : 1.35f;
  const auto channel = [&](int shift) {
    const float value = static_cast<float>((color >> shift) & 0xFF) * factor;
    return static_cast<ImU32>(std::clamp(value, 0.0f, 255.0f)) << shift;
  };
  return channel(IM_COL32_R_SHIFT) | channel(IM_COL32_G_SHIFT) | channel(IM_COL32_B_SHIFT) | (color & IM_COL32_A_MASK);
}

}  // namespace

PlotSpec BenchPlotSpec(std::span<const cuda::BenchRow> rows, const BenchPlotOptions& options) {
  PlotSpec spec;
  spec.title = options.title;
  spec.x.label = "N (sequence length)";
  spec.x.log = true;
  spec.x.log_base = 2;
  spec.x.format = [](double v) { return Sprintf("%.0f", v); };
  spec.y.label = options.tflops ? "TFLOP/s" : "runtime (ms, median)";
  spec.y.log = true;
  spec.y.format = [](double v) { return Sprintf(v < 10 ? "%.3g" : "%.0f", v); };
  spec.empty_message = "no measurements yet: run a sweep or load a CSV";

  std::map<SeriesKey, std::vector<std::pair<double, double>>> points;
  std::vector<SeriesKey> order;  // first appearance
  std::set<std::string> dtypes;
  std::set<int> dims;
  std::set<bool> causal;
  for (const cuda::BenchRow& row : rows) {
    const double y = options.tflops ? row.tflops : row.ms_median;
    if (!row.Ok() || !std::isfinite(y) || y <= 0) continue;
    const SeriesKey key{row.kernel, row.dtype, row.d, row.causal};
    if (!points.count(key)) order.push_back(key);
    points[key].push_back({static_cast<double>(row.n), y});
    dtypes.insert(row.dtype);
    dims.insert(row.d);
    causal.insert(row.causal);
  }
  std::map<std::string, std::size_t> color_of;
  std::map<std::string, int> series_of;  // how many series of each kernel so far
  for (const SeriesKey& key : order) {
    const auto& [kernel, dtype, d, is_causal] = key;
    if (!color_of.count(kernel)) color_of[kernel] = color_of.size() % std::size(kColors);
    PlotSeries series;
    series.label = kernel;
    if (dtypes.size() > 1) series.label += " " + dtype;
    if (dims.size() > 1) series.label += Sprintf(" d=%d", d);
    if (causal.size() > 1 && is_causal) series.label += " causal";
    auto& xy = points[key];
    std::sort(xy.begin(), xy.end());
    for (const auto& [x, y] : xy) {
      series.x.push_back(x);
      series.y.push_back(y);
    }
    series.color = Shade(kColors[color_of[kernel]], series_of[kernel]++);
    // PyTorch's backends dashed: the peers, not ours.
    series.dashed = kernel.rfind("torch_", 0) == 0;
    spec.series.push_back(std::move(series));
  }
  return spec;
}

RgbaImage RenderBenchImage(std::span<const cuda::BenchRow> rows, const BenchPlotOptions& options, int width,
                           int height) {
  const PlotSpec spec = BenchPlotSpec(rows, options);
  return RenderFrameOnCpu(
      width, height,
      [&] {
        const ImVec2 origin = ImGui::GetCursorScreenPos();
        const ImVec2 size = ImGui::GetContentRegionAvail();
        DrawPlotAt(ImGui::GetWindowDrawList(), ScreenRect{origin, ImVec2(origin.x + size.x, origin.y + size.y)}, spec,
                   ImVec2(-FLT_MAX, -FLT_MAX));
      },
      Theme::kLight);
}

bool RenderBenchPng(std::span<const cuda::BenchRow> rows, const BenchPlotOptions& options, const std::string& path,
                    std::string* error, int width, int height) {
  return WritePng(RenderBenchImage(rows, options, width, height), path, error);
}

}  // namespace flashviz
