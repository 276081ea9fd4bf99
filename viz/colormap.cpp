#include "viz/colormap.h"

#include <algorithm>
#include <array>
#include <cmath>

#include "kernels/common/format.h"
#include "viz/widgets.h"

namespace flashviz {
namespace {

struct Rgb {
  float r, g, b;
};

// ColorBrewer RdBu (11 classes), reversed so that negative is blue.
constexpr std::array<Rgb, 11> kRdBu = {{{5, 48, 97},
                                        {33, 102, 172},
                                        {67, 147, 195},
                                        {146, 197, 222},
                                        {209, 229, 240},
                                        {247, 247, 247},
                                        {253, 219, 199},
                                        {244, 165, 130},
                                        {214, 96, 77},
                                        {178, 24, 43},
                                        {103, 0, 31}}};

// viridis at ten evenly spaced points.
constexpr std::array<Rgb, 10> kViridis = {{{68, 1, 84},
                                           {72, 40, 120},
                                           {62, 74, 137},
                                           {49, 104, 142},
                                           {38, 130, 142},
                                           {31, 158, 137},
                                           {53, 183, 121},
                                           {109, 205, 89},
                                           {180, 222, 44},
                                           {253, 231, 37}}};

template <std::size_t N>
ImU32 Interpolate(const std::array<Rgb, N>& stops, double t) {
  if (!(t >= 0.0)) t = 0.0;  // also NaN
  if (t > 1.0) t = 1.0;
  const double x = t * (N - 1);
  const std::size_t k = std::min<std::size_t>(static_cast<std::size_t>(x), N - 2);
  const float f = static_cast<float>(x - static_cast<double>(k));
  const Rgb& a = stops[k];
  const Rgb& b = stops[k + 1];
  return IM_COL32(static_cast<int>(a.r + (b.r - a.r) * f + 0.5f), static_cast<int>(a.g + (b.g - a.g) * f + 0.5f),
                  static_cast<int>(a.b + (b.b - a.b) * f + 0.5f), 255);
}

}  // namespace

ImU32 DivergingColor(double t) { return Interpolate(kRdBu, 0.5 * (t + 1.0)); }
ImU32 SequentialColor(double t) { return Interpolate(kViridis, t); }

ImU32 ColorScale::operator()(double value) const {
  if (!std::isfinite(value) && !(value > 0)) return masked;  // −∞ and NaN
  const double span = hi - lo;
  const double t = span > 0 ? (value - lo) / span : 0.5;
  return kind == Kind::kDiverging ? DivergingColor(2.0 * t - 1.0) : SequentialColor(t);
}

ColorScale ColorScale::Symmetric(double abs_max) {
  if (!(abs_max > 0) || !std::isfinite(abs_max)) abs_max = 1.0;
  return {Kind::kDiverging, -abs_max, abs_max};
}

ColorScale ColorScale::Unit() { return {Kind::kSequential, 0.0, 1.0}; }

void DrawColorLegend(const char* label, const ColorScale& scale, float bar_width) {
  ImGui::AlignTextToFramePadding();
  MathText(label);
  ImGui::SameLine();
  const std::string lo = Sprintf("%.3g", scale.lo), hi = Sprintf("%+.3g", scale.hi);
  ImGui::TextUnformatted(lo.c_str());
  ImGui::SameLine();
  const float h = ImGui::GetTextLineHeight();
  const ImVec2 p = ImGui::GetCursorScreenPos();
  const float y = p.y + 0.5f * (ImGui::GetFrameHeight() - h);
  ImDrawList* dl = ImGui::GetWindowDrawList();
  constexpr int kSegments = 32;
  for (int s = 0; s < kSegments; ++s) {
    const double v0 = scale.lo + (scale.hi - scale.lo) * (s + 0.5) / kSegments;
    const float x0 = p.x + bar_width * s / kSegments, x1 = p.x + bar_width * (s + 1) / kSegments;
    dl->AddRectFilled(ImVec2(x0, y), ImVec2(x1 + 0.5f, y + h), scale(v0));
  }
  dl->AddRect(ImVec2(p.x, y), ImVec2(p.x + bar_width, y + h), ImGui::GetColorU32(ImGuiCol_Border));
  ImGui::Dummy(ImVec2(bar_width, ImGui::GetFrameHeight()));
  ImGui::SameLine();
  ImGui::TextUnformatted(hi.c_str());
}

ImU32 ContrastingText(ImU32 background) {
  const float r = static_cast<float>((background >> IM_COL32_R_SHIFT) & 0xFF);
  const float g = static_cast<float>((background >> IM_COL32_G_SHIFT) & 0xFF);
  const float b = static_cast<float>((background >> IM_COL32_B_SHIFT) & 0xFF);
  const float luma = 0.299f * r + 0.587f * g + 0.114f * b;
  return luma > 140.0f ? IM_COL32(0, 0, 0, 255) : IM_COL32(255, 255, 255, 255);
}

}  // namespace flashviz
