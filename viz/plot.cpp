// [SECTION] axes: ranges, ticks, mapping
// [SECTION] drawing: frame, grid, series, marks, legend, hover
#include "viz/plot.h"

#include <algorithm>
#include <cmath>

#include "kernels/common/format.h"
#include "viz/theme.h"
#include "viz/widgets.h"

namespace flashviz {
namespace {

// ---------------------------------------------------------------------------------------------------------
// [SECTION] axes
// ---------------------------------------------------------------------------------------------------------

bool Usable(double v, bool log) { return std::isfinite(v) && (!log || v > 0); }

struct AxisMap {
  double lo = 0, hi = 1;  // in data units
  bool log = false;
  float p0 = 0, p1 = 1;   // screen coordinates of lo and hi
  double T(double v) const { return log ? std::log10(v) : v; }
  float operator()(double v) const {
    const double a = T(lo), b = T(hi);
    const double t = b > a ? (T(v) - a) / (b - a) : 0.5;
    return p0 + static_cast<float>(t) * (p1 - p0);
  }
};

void DataRange(const PlotSpec& spec, bool x_axis, double* lo, double* hi) {
  const PlotAxis& axis = x_axis ? spec.x : spec.y;
  double a = std::numeric_limits<double>::infinity(), b = -a;
  auto take = [&](double v) {
    if (!Usable(v, axis.log)) return;
    a = std::min(a, v);
    b = std::max(b, v);
  };
  for (const PlotSeries& s : spec.series)
    for (std::size_t k = 0; k < std::min(s.x.size(), s.y.size()); ++k)
      if (Usable(s.x[k], spec.x.log) && Usable(s.y[k], spec.y.log)) take(x_axis ? s.x[k] : s.y[k]);
  for (const PlotMark& m : spec.marks)
    if (Usable(m.x, spec.x.log) && Usable(m.y, spec.y.log)) take(x_axis ? m.x : m.y);
  if (std::isfinite(axis.min)) a = axis.min;
  if (std::isfinite(axis.max)) b = axis.max;
  if (!(a <= b)) {  // no data
    a = axis.log ? 1 : 0;
    b = axis.log ? 10 : 1;
  }
  if (a == b) {
    if (axis.log) {
      a /= 2;
      b *= 2;
    } else {
      a -= 1;
      b += 1;
    }
  }
  if (axis.log) {  // whole powers of the base are easier to read
    const double base = axis.log_base > 1 ? axis.log_base : 10.0;
    const double lb = std::log(base);
    if (!std::isfinite(axis.min)) a = std::pow(base, std::floor(std::log(a) / lb + 1e-9));
    if (!std::isfinite(axis.max)) b = std::pow(base, std::ceil(std::log(b) / lb - 1e-9));
    if (a == b) b = a * base;
  } else if (!std::isfinite(axis.min) || !std::isfinite(axis.max)) {
    const double pad = 0.05 * (b - a);
    if (!std::isfinite(axis.min)) a -= pad;
    if (!std::isfinite(axis.max)) b += pad;
  }
  *lo = a;
  *hi = b;
}

std::string Format(const PlotAxis& axis, double v) { return axis.format ? axis.format(v) : Sprintf("%.3g", v); }

}  // namespace

std::vector<double> PlotTicks(double lo, double hi, bool log, double log_base) {
  std::vector<double> ticks;
  if (!(hi > lo)) return ticks;
  if (log) {
    if (!(lo > 0)) return ticks;
    const double base = log_base > 1 ? log_base : 10.0;
    const double lb = std::log(base);
    const int k0 = static_cast<int>(std::ceil(std::log(lo) / lb - 1e-9));   // the first power ≥ lo
    const int k1 = static_cast<int>(std::floor(std::log(hi) / lb + 1e-9));  // the last power ≤ hi
    const int stride = std::max(1, (k1 - k0 + 8) / 8);                      // at most 8 labelled powers
    for (int k = k0; k <= k1; k += stride) ticks.push_back(std::pow(base, k));
    if (base == 10.0 && k1 - k0 <= 2)  // a short range: 2 and 5 within each decade as well
      for (int k = k0 - 1; k <= k1; ++k)
        for (double f : {2.0, 5.0}) {
          const double v = std::pow(base, k) * f;
          if (v >= lo && v <= hi) ticks.push_back(v);
        }
    std::sort(ticks.begin(), ticks.end());
    return ticks;
  }
  const double raw = (hi - lo) / 6.0;
  const double mag = std::pow(10.0, std::floor(std::log10(raw)));
  double step = mag;
  for (double f : {1.0, 2.0, 5.0, 10.0})
    if (mag * f >= raw) {
      step = mag * f;
      break;
    }
  for (double v = std::ceil(lo / step) * step; v <= hi + step * 1e-9; v += step)
    ticks.push_back(std::abs(v) < step * 1e-9 ? 0.0 : v);
  return ticks;
}

// ---------------------------------------------------------------------------------------------------------
// [SECTION] drawing
// ---------------------------------------------------------------------------------------------------------

PlotHover DrawPlotAt(ImDrawList* dl, const ScreenRect& rect, const PlotSpec& spec, ImVec2 mouse) {
  PlotHover hover;
  const Palette& pal = GetPalette();
  ImFont* font = ImGui::GetFont();
  const float fs = ImGui::GetFontSize();
  const ImU32 text = ImGui::GetColorU32(ImGuiCol_Text);
  const ImU32 dim = pal.dim;
  const ImU32 grid = ImGui::GetColorU32(ImGuiCol_Border, 0.6f);

  dl->AddRectFilled(rect.min, rect.max, pal.plot_bg);
  float top = rect.min.y + 4;
  if (!spec.title.empty()) {
    DrawMathText(dl, ImVec2(rect.min.x + 6, top), text, spec.title.c_str(), font, fs);
    top += fs + 4;
  }
  if (!spec.y.label.empty()) {  // ImGui draws no rotated text: the y label stands above its axis
    DrawMathText(dl, ImVec2(rect.min.x + 6, top), dim, ("\u2191 " + spec.y.label).c_str(), font, fs);
    top += fs + 6;
  }
  top += fs / 2;  // room for the top tick label
  double xlo, xhi, ylo, yhi;
  DataRange(spec, true, &xlo, &xhi);
  DataRange(spec, false, &ylo, &yhi);
  auto ticks = [](double lo, double hi, const PlotAxis& axis) {
    std::vector<double> t = PlotTicks(lo, hi, axis.log, axis.log_base);
    if (axis.integer && !axis.log) {
      std::erase_if(t, [](double v) { return v != std::round(v); });
      if (t.empty())
        for (double v = std::ceil(lo); v <= hi; v += 1) t.push_back(v);
    }
    return t;
  };
  const std::vector<double> xt = ticks(xlo, xhi, spec.x), yt = ticks(ylo, yhi, spec.y);
  float label_w = 0;
  for (double v : yt) label_w = std::max(label_w, font->CalcTextSizeA(fs, FLT_MAX, 0, Format(spec.y, v).c_str()).x);
  const float left = rect.min.x + 10 + label_w;
  const float bottom = rect.max.y - 6 - fs - (spec.x.label.empty() ? 0 : fs + 4);
  const float right = rect.max.x - 12;
  if (right - left < 40 || bottom - top < 30) return hover;  // too small to say anything
  const AxisMap mx{xlo, xhi, spec.x.log, left, right}, my{ylo, yhi, spec.y.log, bottom, top};

  // Grid and tick labels (a label that would touch the previous one is left out; its grid line stays).
  float last_label_end = -FLT_MAX;
  for (double v : xt) {
    const float x = mx(v);
    dl->AddLine(ImVec2(x, top), ImVec2(x, bottom), grid);
    const std::string s = Format(spec.x, v);
    const float w = font->CalcTextSizeA(fs, FLT_MAX, 0, s.c_str()).x;
    const float lx = std::clamp(x - w / 2, rect.min.x, rect.max.x - w);
    if (lx < last_label_end + fs * 0.5f) continue;
    dl->AddText(font, fs, ImVec2(lx, bottom + 3), dim, s.c_str());
    last_label_end = lx + w;
  }
  // Upwards from the bottom, a label closer than a line and a bit to the last one drawn is left out (a short
  // log axis has a tick every octave: at 100 px they were drawn over each other).
  float last_label_y = FLT_MAX;
  for (double v : yt) {
    const float y = my(v);
    dl->AddLine(ImVec2(left, y), ImVec2(right, y), grid);
    if (last_label_y - y < fs * 1.15f) continue;
    const std::string s = Format(spec.y, v);
    const float w = font->CalcTextSizeA(fs, FLT_MAX, 0, s.c_str()).x;
    dl->AddText(font, fs, ImVec2(left - 4 - w, y - fs / 2), dim, s.c_str());
    last_label_y = y;
  }
  dl->AddRect(ImVec2(left, top), ImVec2(right, bottom), ImGui::GetColorU32(ImGuiCol_Border));
  if (!spec.x.label.empty()) {
    const ImVec2 size = CalcMathTextSize(spec.x.label.c_str(), font, fs);
    DrawMathText(dl, ImVec2((left + right - size.x) / 2, rect.max.y - 4 - fs), text, spec.x.label.c_str(), font, fs);
  }
  bool any = false;
  dl->PushClipRect(ImVec2(left - 4, top - 4), ImVec2(right + 4, bottom + 4), true);
  float best = 12.0f * 12.0f;
  ImVec2 best_pos;
  ImU32 best_color = 0;
  for (std::size_t s = 0; s < spec.series.size(); ++s) {
    const PlotSeries& series = spec.series[s];
    std::vector<ImVec2> pts;
    std::vector<std::size_t> index;
    for (std::size_t k = 0; k < std::min(series.x.size(), series.y.size()); ++k)
      if (Usable(series.x[k], spec.x.log) && Usable(series.y[k], spec.y.log)) {
        pts.emplace_back(mx(series.x[k]), my(series.y[k]));
        index.push_back(k);
      }
    any |= !pts.empty();
    if (series.dashed) {
      for (std::size_t k = 1; k < pts.size(); ++k) {
        const ImVec2 a = pts[k - 1], b = pts[k];
        const float len = std::hypot(b.x - a.x, b.y - a.y);
        for (float t = 0; t < len; t += 10) {
          const float t1 = std::min(len, t + 6);
          dl->AddLine(ImVec2(a.x + (b.x - a.x) * t / len, a.y + (b.y - a.y) * t / len),
                      ImVec2(a.x + (b.x - a.x) * t1 / len, a.y + (b.y - a.y) * t1 / len), series.color, 2.0f);
        }
      }
    } else if (pts.size() > 1) {
      dl->AddPolyline(pts.data(), static_cast<int>(pts.size()), series.color, 0, 2.0f);
    }
    for (std::size_t k = 0; k < pts.size(); ++k) {
      if (series.markers) dl->AddCircleFilled(pts[k], 3.0f, series.color);
      const float dx = pts[k].x - mouse.x, dy = pts[k].y - mouse.y;
      if (dx * dx + dy * dy < best) {
        best = dx * dx + dy * dy;
        hover = {true, static_cast<int>(s), index[k], series.x[index[k]], series.y[index[k]]};
        best_pos = pts[k];
        best_color = series.color;
      }
    }
  }
  for (std::size_t m = 0; m < spec.marks.size(); ++m) {
    const PlotMark& mark = spec.marks[m];
    if (!Usable(mark.x, spec.x.log) || !Usable(mark.y, spec.y.log)) continue;
    any = true;
    const ImVec2 p(mx(mark.x), my(mark.y));
    dl->AddCircle(p, 7.0f, mark.color, 0, 2.5f);
    dl->AddCircleFilled(p, 3.0f, mark.color);
    if (!mark.label.empty()) {
      const ImVec2 size = CalcMathTextSize(mark.label.c_str(), font, fs);
      const float lx = std::max(left + 2, p.x + 10 + size.x < right ? p.x + 10 : p.x - 10 - size.x);
      DrawMathText(dl, ImVec2(lx, p.y - fs - 2), mark.color, mark.label.c_str(), font, fs);
    }
    const float dx = p.x - mouse.x, dy = p.y - mouse.y;
    if (dx * dx + dy * dy <= best) {  // a mark wins a tie with a series point under it
      best = dx * dx + dy * dy;
      hover = {true, -1, m, mark.x, mark.y};
      best_pos = p;
      best_color = mark.color;
    }
  }
  if (hover.active) dl->AddCircle(best_pos, 6.0f, best_color, 0, 2.0f);
  dl->PopClipRect();
  if (!any) {
    // Wrapped to the axes' width: a narrow plot (the running statistics' history at 1280×720) would otherwise
    // spill the message over its tick labels and the panel's edge.
    const float wrap = std::max(right - left - 8, fs * 4);
    const ImVec2 size = font->CalcTextSizeA(fs, FLT_MAX, wrap, spec.empty_message.c_str());
    dl->AddText(font, fs, ImVec2((left + right - size.x) / 2, (top + bottom - size.y) / 2), dim,
                spec.empty_message.c_str(), nullptr, wrap);
  }

  // Legend, top-left inside the axes: as many entries as the axes hold, then "+ k more" (a short plot of many
  // series drew its legend far below the axes, over the panel's next section).
  if (spec.legend && !spec.series.empty()) {
    const ImVec2 p0(left + 6, top + 6);
    const float row = fs + 3;
    const auto fit = static_cast<std::size_t>(std::max(1.0f, std::floor((bottom - p0.y - 4) / row)));
    const std::size_t total = spec.series.size();
    const std::size_t shown = total <= fit ? total : fit - 1;
    const std::string more = total > shown ? Sprintf("+ %zu more (hover a line)", total - shown) : std::string();
    float w = more.empty() ? 0.0f : CalcMathTextSize(more.c_str(), font, fs).x - 30;
    for (std::size_t s = 0; s < shown; ++s)
      w = std::max(w, CalcMathTextSize(spec.series[s].label.c_str(), font, fs).x);
    const std::size_t lines = shown + (more.empty() ? 0 : 1);
    dl->AddRectFilled(p0, ImVec2(p0.x + w + 34, p0.y + row * static_cast<float>(lines) + 4),
                      (pal.plot_bg & 0x00FFFFFF) | 0xE0000000);
    for (std::size_t s = 0; s < shown; ++s) {
      const float y = p0.y + 2 + row * static_cast<float>(s);
      dl->AddLine(ImVec2(p0.x + 4, y + fs / 2), ImVec2(p0.x + 24, y + fs / 2), spec.series[s].color, 2.5f);
      DrawMathText(dl, ImVec2(p0.x + 30, y), text, spec.series[s].label.c_str(), font, fs);
    }
    if (!more.empty())
      DrawMathText(dl, ImVec2(p0.x + 4, p0.y + 2 + row * static_cast<float>(shown)), dim, more.c_str(), font, fs);
  }
  return hover;
}

PlotHover Plot(const char* id, ImVec2 size, const PlotSpec& spec) {
  const ImVec2 p = ImGui::GetCursorScreenPos();
  ImGui::InvisibleButton(id, ImVec2(std::max(size.x, 1.0f), std::max(size.y, 1.0f)));
  const bool hovered = ImGui::IsItemHovered();
  const ScreenRect rect{p, ImVec2(p.x + size.x, p.y + size.y)};
  const PlotHover hover = DrawPlotAt(ImGui::GetWindowDrawList(), rect, spec,
                                     hovered ? ImGui::GetIO().MousePos : ImVec2(-FLT_MAX, -FLT_MAX));
  if (hovered && hover.active) {
    ImGui::BeginTooltip();
    const std::string& label = hover.series >= 0 ? spec.series[static_cast<std::size_t>(hover.series)].label
                                                 : spec.marks[hover.index].label;
    MathText(label.c_str());
    MathTextF("%s = %s", spec.x.label.empty() ? "x" : spec.x.label.c_str(), Format(spec.x, hover.x).c_str());
    MathTextF("%s = %s", spec.y.label.empty() ? "y" : spec.y.label.c_str(), Format(spec.y, hover.y).c_str());
    ImGui::EndTooltip();
  }
  return hover;
}

}  // namespace flashviz
