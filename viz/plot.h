// A small 2-D plot drawn with ImDrawList only (ImPlot is not packaged): linear or log axes per axis, several
// series with a legend, a hover readout of the nearest point, and marked points. The traffic panel draws
// HBM bytes against N with it; the benchmark panel and `flashviz bench --png` draw runtime against N.
// DrawPlotAt needs no ImGui item, so it also works in an offscreen frame rasterized on the CPU (raster.h).
#pragma once

#include <imgui.h>

#include <functional>
#include <limits>
#include <string>
#include <vector>

#include "viz/heatmap.h"

namespace flashviz {

struct PlotSeries {
  std::string label;
  std::vector<double> x, y;  // same length; points with a non-finite (or, on log axes, non-positive) value are skipped
  ImU32 color = IM_COL32(80, 170, 255, 255);
  bool markers = true;
  bool dashed = false;
};

struct PlotMark {
  double x = 0, y = 0;
  std::string label;
  ImU32 color = IM_COL32(255, 200, 0, 255);
};

struct PlotAxis {
  std::string label;
  bool log = false;
  double log_base = 10;  // log axes: ticks at powers of this (2 suits N and bytes: 1 KiB, 1 MiB, ...)
  bool integer = false;  // linear axes: ticks on whole numbers only (tile indices)
  std::function<std::string(double)> format;  // tick and readout labels; empty: %.3g
  double min = std::numeric_limits<double>::quiet_NaN();  // NaN: from the data
  double max = std::numeric_limits<double>::quiet_NaN();
};

struct PlotSpec {
  std::string title;
  PlotAxis x, y;
  std::vector<PlotSeries> series;
  std::vector<PlotMark> marks;
  bool legend = true;
  std::string empty_message = "no data";
};

struct PlotHover {
  bool active = false;
  int series = -1;  // −1: a mark (index into marks)
  std::size_t index = 0;
  double x = 0, y = 0;
};

// Draws the plot into `rect`; `mouse` drives the hover highlight (pass (−FLT_MAX, −FLT_MAX) for none).
PlotHover DrawPlotAt(ImDrawList* dl, const ScreenRect& rect, const PlotSpec& spec, ImVec2 mouse);
// The plot as one ImGui item of `size` in the current window, with a tooltip for the hovered point.
PlotHover Plot(const char* id, ImVec2 size, const PlotSpec& spec);

// Tick positions: powers of the base (and, base 10, 2 and 5 within a short range) on log axes, 1-2-5 steps
// on linear ones. Exposed for tests.
std::vector<double> PlotTicks(double lo, double hi, bool log, double log_base = 10);

}  // namespace flashviz
