// Colour scales for the heatmaps: a diverging map for signed values (Q, K, V, S, O: blue below zero, near
// white at zero, red above; ColorBrewer's RdBu) and a sequential map for values in [0, 1] (P~_ij, viridis).
#pragma once

#include <imgui.h>

#include <string>

namespace flashviz {

ImU32 DivergingColor(double t);   // t in [−1, 1]; clamped
ImU32 SequentialColor(double t);  // t in [0, 1]; clamped

struct ColorScale {
  enum class Kind { kDiverging, kSequential };
  Kind kind = Kind::kDiverging;
  double lo = -1.0, hi = 1.0;  // the values at the two ends of the map
  ImU32 masked = IM_COL32(128, 128, 128, 255);  // for −∞ (a causally masked score) and NaN

  ImU32 operator()(double value) const;
  static ColorScale Symmetric(double abs_max);  // diverging over [−abs_max, abs_max]
  static ColorScale Unit();                     // sequential over [0, 1]
};

// A horizontal colour bar with its end values, `label` in front: one ImGui item.
void DrawColorLegend(const char* label, const ColorScale& scale, float bar_width);

// Black or white, whichever reads better on `background` (for numbers printed inside cells).
ImU32 ContrastingText(ImU32 background);

}  // namespace flashviz
