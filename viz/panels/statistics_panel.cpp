// The running statistics of the current Q tile: m_i and ℓ_i per row as bars, the values they had when this
// tile iteration began drawn as ghosts, the rescale factor α = e^(m_old − m_new) called out where a new row
// maximum appeared, and the history of m_i and ℓ_i over the K/V tiles so far (StepState::m_history).
#include <algorithm>
#include <cmath>

#include "kernels/common/format.h"
#include "viz/formulas.h"
#include "viz/narration.h"
#include "viz/panels/panels.h"
#include "viz/plot.h"
#include "viz/widgets.h"

namespace flashviz {
namespace {

bool Finite(double v) { return std::isfinite(v); }

struct Range {
  double lo = std::numeric_limits<double>::infinity(), hi = -std::numeric_limits<double>::infinity();
  void Take(double v) {
    if (!Finite(v)) return;
    lo = std::min(lo, v);
    hi = std::max(hi, v);
  }
  void Take(const std::vector<double>& values) {
    for (double v : values) Take(v);
  }
  bool empty() const { return lo > hi; }
};

// One column of horizontal bars: value and ghost per row, over [lo, hi] with a zero line where it falls inside.
void DrawBars(ImDrawList* dl, const ScreenRect& area, int rows, float row_h, const std::vector<double>& value,
              const std::vector<double>& ghost, double lo, double hi, const std::vector<bool>& flagged, int highlight) {
  const Palette& pal = GetPalette();
  dl->AddRectFilled(area.min, area.max, pal.plot_bg);
  const double span = hi > lo ? hi - lo : 1.0;
  auto X = [&](double v) {
    return area.min.x + static_cast<float>((std::clamp(v, lo, hi) - lo) / span) * area.width();
  };
  const float base = lo < 0 && hi > 0 ? X(0.0) : X(lo);
  if (lo < 0 && hi > 0) dl->AddLine(ImVec2(base, area.min.y), ImVec2(base, area.max.y), pal.grid);
  const float pad = row_h > 5 ? std::max(1.0f, row_h * 0.15f) : 0.0f;
  for (int r = 0; r < rows; ++r) {
    const float y0 = area.min.y + row_h * static_cast<float>(r) + pad,
                y1 = area.min.y + row_h * static_cast<float>(r + 1) - pad;
    if (r == highlight) dl->AddRectFilled(ImVec2(area.min.x, y0 - pad), ImVec2(area.max.x, y1 + pad), pal.cursor_fill);
    const auto k = static_cast<std::size_t>(r);
    if (k < ghost.size() && Finite(ghost[k])) {
      const float x = X(ghost[k]);
      dl->AddRectFilled(ImVec2(std::min(base, x), y0), ImVec2(std::max(base, x), y1), pal.ghost);
      dl->AddLine(ImVec2(x, y0), ImVec2(x, y1), pal.dim, 1.5f);
    }
    if (k < value.size() && Finite(value[k])) {
      const float x = X(value[k]);
      const bool flag = k < flagged.size() && flagged[k];
      const ImU32 color = flag ? pal.warn : pal.flash;
      const float inset = (y1 - y0) * 0.2f;
      dl->AddRectFilled(ImVec2(std::min(base, x), y0 + inset), ImVec2(std::max(base, x) + 1, y1 - inset), color);
    }
  }
  dl->AddRect(area.min, area.max, ImGui::GetColorU32(ImGuiCol_Border));
}

// The live GPU view's recorded values for the current problem and tile, when there are any.
const LiveGpuView* CurrentGpuValues(const Model& m) {
  const LiveGpuView& gpu = m.live_gpu();
  const int i = m.state().info.i;
  if (!gpu.has_probe() || gpu.problem_version != m.problem_version() || i < 0 || i >= gpu.tr) return nullptr;
  return &gpu;
}

void HistoryPlot(const char* id, const char* title, const Model& m, bool is_m, int highlight, ImVec2 size) {
  const StepState& s = m.state();
  PlotSpec spec;
  spec.title = title;
  spec.x.integer = true;
  spec.x.format = [](double v) { return Sprintf("%.0f", v); };
  spec.legend = false;
  spec.empty_message = "after the first tile iteration";
  // The x axis spans every K/V tile this Q tile meets from its first iteration on, so points appear in place as
  // the tiles go by (an axis fitted to the points so far was −1…1 around a single point).
  spec.x.min = -0.25;
  spec.x.max = m.problem().ActiveKvTiles(s.info.i) - 0.75;
  const auto& history = is_m ? s.m_history : s.l_history;
  const int rows = std::min(s.rows, 8);  // a few rows keep the plot readable; the highlighted one stands out
  for (int r = 0; r < s.rows; ++r) {
    if (r >= rows && r != highlight) continue;
    PlotSeries series;
    series.label = Sprintf("row %d", s.row_begin + r);
    series.color = r == highlight ? GetPalette().cursor : ImGui::GetColorU32(ImGuiCol_PlotLines, 0.75f);
    for (std::size_t h = 0; h < history.size(); ++h) {
      if (static_cast<std::size_t>(r) >= history[h].size()) continue;
      series.x.push_back(s.history_j[h]);
      series.y.push_back(history[h][static_cast<std::size_t>(r)]);
    }
    spec.series.push_back(std::move(series));
  }
  // The GPU's values of the same rows after the same K/V tiles, dashed over the model's lines: where they
  // agree (to fp32 rounding) the dashes sit on the line; a disagreement shows as a gap, in the "bad" colour.
  if (const LiveGpuView* gpu = CurrentGpuValues(m)) {
    for (int r = 0; r < s.rows; ++r) {
      if (r >= rows && r != highlight) continue;
      PlotSeries series;
      series.label = Sprintf("row %d on the GPU", s.row_begin + r);
      series.color = gpu->agrees ? GetPalette().good : GetPalette().bad;
      series.dashed = true;
      for (int j : s.history_j) {
        series.x.push_back(j);
        series.y.push_back(is_m ? gpu->GpuM(s.info.i, j, r) : gpu->GpuL(s.info.i, j, r));
      }
      spec.series.push_back(std::move(series));
    }
  }
  // Highlighted series last, so it is drawn on top.
  std::stable_partition(spec.series.begin(), spec.series.end(),
                        [&](const PlotSeries& series) { return series.color != GetPalette().cursor; });
  Plot(id, size, spec);
}

// The backward pass has no running statistics: the per-row numbers it reads are L_i (saved by the forward pass)
// and D_i (the preprocessing pass), shown as bars for the Q tile on chip.
void DrawBackwardStatistics(const Model& model, UiState& ui) {
  const StepState& s = model.state();
  const BackwardNumerics& g = s.grad;
  const Palette& pal = GetPalette();
  ImGui::PushTextWrapPos(0);
  if (s.info.i < 0 || (g.lse.empty() && g.delta.empty())) {
    MathTextColored(pal.dim, s.info.phase == Phase::kDone
                                 ? "All tiles are done: dQ, dK and dV are complete in HBM."
                                 : "No Q tile is on chip at this step: its L_i and D_i appear at load_q (D_i already "
                                   "at its delta step).");
    ImGui::PopTextWrapPos();
    return;
  }
  MathTextF("Q tile i = %d, rows %d–%d%s", s.info.i, s.row_begin, s.row_begin + s.rows - 1,
            s.info.j >= 0 ? Sprintf(", K/V tile j = %d", s.info.j).c_str() : "");
  ImGui::SameLine();
  HelpMarker("L_i = m_i + log ℓ_i: the log-sum-exp of each row over every key, saved by the forward pass, so "
             "P_ij = exp(S_ij − L_i) needs no running maximum. D_i = rowsum(dO_i ∘ O_i): computed once by the "
             "preprocessing pass, it is the rowsum(P ∘ dP) that dS = P ∘ (dP − D) needs.");
  ImGui::PopTextWrapPos();
  const ImVec2 avail = ImGui::GetContentRegionAvail();
  const float header_h = ImGui::GetTextLineHeightWithSpacing();
  const float col_w = (avail.x - ImGui::GetStyle().ItemSpacing.x) / 2;
  const float bars_h = std::max(40.0f, std::min(avail.y - header_h, 24.0f * ImGui::GetFontSize()));
  const float row_h = bars_h / static_cast<float>(std::max(s.rows, 1));
  const ImVec2 p0 = ImGui::GetCursorScreenPos();
  ImDrawList* dl = ImGui::GetWindowDrawList();
  const int highlight = ui.cursor.hover_row >= s.row_begin && ui.cursor.hover_row < s.row_begin + s.rows
                            ? ui.cursor.hover_row - s.row_begin
                            : -1;
  const std::vector<bool> none;
  struct Column {
    const char* name;
    const std::vector<double>& values;
  };
  const Column columns[2] = {{"L_i", g.lse}, {"D_i", g.delta}};
  for (int k = 0; k < 2; ++k) {
    const float x = p0.x + static_cast<float>(k) * (col_w + ImGui::GetStyle().ItemSpacing.x);
    if (columns[k].values.empty()) {  // L_i comes on chip at load_q; the delta step has only D_i
      ImGui::SetCursorScreenPos(ImVec2(x, p0.y));
      MathTextColored(pal.dim, Sprintf("%s: from load_q", columns[k].name).c_str());
      continue;
    }
    Range range;
    range.Take(columns[k].values);
    range.lo = std::min(range.lo, 0.0);
    range.hi = std::max(range.hi, 0.0);
    if (range.lo == range.hi) range.hi = range.lo + 1;
    ImGui::SetCursorScreenPos(ImVec2(x, p0.y));
    MathTextF("%s  [%s, %s]", columns[k].name, Num(range.lo, 3).c_str(), Num(range.hi, 3).c_str());
    const ScreenRect area{ImVec2(x, p0.y + header_h), ImVec2(x + col_w, p0.y + header_h + bars_h)};
    DrawBars(dl, area, s.rows, row_h, columns[k].values, {}, range.lo, range.hi, none, highlight);
    if (row_h >= ImGui::GetFontSize())
      for (int r = 0; r < static_cast<int>(columns[k].values.size()); ++r) {
        const std::string text = Num(columns[k].values[static_cast<std::size_t>(r)], 3);
        const float y = area.min.y + row_h * static_cast<float>(r) + (row_h - ImGui::GetFontSize()) / 2;
        dl->AddText(ImVec2(area.max.x - ImGui::CalcTextSize(text.c_str()).x - 3, y), ImGui::GetColorU32(ImGuiCol_Text),
                    text.c_str());
      }
    ImGui::SetCursorScreenPos(area.min);
    ImGui::PushID(k);
    ImGui::InvisibleButton("##bars", ImVec2(std::max(1.0f, area.width()), std::max(1.0f, area.height())));
    if (ImGui::IsItemHovered()) {
      const int r = std::clamp(static_cast<int>((ImGui::GetIO().MousePos.y - area.min.y) / row_h), 0, s.rows - 1);
      ui.cursor.hover_row = s.row_begin + r;
      ShowExplanation(k == 0 ? ExplainLse(model, r) : ExplainDelta(model, r));
    }
    ImGui::PopID();
  }
}

}  // namespace

void DrawStatisticsPanel(const Model& model, UiState& ui) {
  if (!model.has_problem()) return;
  if (model.problem().backward()) return DrawBackwardStatistics(model, ui);
  const StepState& s = model.state();
  const TileNumerics& t = s.tile;
  const Palette& pal = GetPalette();
  const bool kv = model.problem().order == LoopOrder::kKvOuter;
  if (s.info.i < 0 || t.m.empty()) {
    ImGui::PushTextWrapPos(0);
    MathTextColored(pal.dim,
                    s.info.phase == Phase::kDone
                        ? "All tiles are done: every row's m_i and ℓ_i are final (see the O_i view)."
                        : "No Q tile is on chip at this step: m_i and ℓ_i of a tile appear when it is loaded.");
    ImGui::PopTextWrapPos();
    return;
  }
  const int highlight = ui.cursor.selected_row >= s.row_begin && ui.cursor.selected_row < s.row_begin + s.rows
                            ? ui.cursor.selected_row - s.row_begin
                            : (ui.cursor.hover_row >= s.row_begin && ui.cursor.hover_row < s.row_begin + s.rows
                                   ? ui.cursor.hover_row - s.row_begin
                                   : -1);

  MathTextF("Q tile i = %d, rows %d–%d%s", s.info.i, s.row_begin, s.row_begin + s.rows - 1,
            s.info.j >= 0 ? Sprintf(", K/V tile j = %d", s.info.j).c_str() : "");
  ImGui::SameLine();
  HelpMarker("m_i: the running maximum of each row's scores over the keys seen so far. ℓ_i: the running sum of "
             "e^(s − m_i) over those keys, the softmax denominator relative to m_i. Both start at −∞ and 0 and are "
             "exact once every K/V tile has been seen. Ghosts (grey) are the values when this tile iteration began.");

  // α callout.
  ImGui::PushTextWrapPos(0);
  const MaxChangeCounts changes = CountMaxChanges(t);
  if (changes.known()) {
    // α ≠ 1 somewhere (first scores or a new maximum) is what the learner should notice: the warning colour.
    const bool rescales = changes.first + changes.grew > 0;
    if (rescales) ImGui::PushStyleColor(ImGuiCol_Text, pal.warn);
    MathTextF("%s", RescaleSummary(s).c_str());
    if (rescales) ImGui::PopStyleColor();
    ImGui::SameLine();
    HelpMarker(kv ? "Where a tile brings a larger score, m_i grows and everything accumulated against the old "
                    "maximum is rescaled: ℓ_new = α·ℓ_i + e^(m~_ij − m_new)·ℓ~_ij and O_i likewise (update_o). "
                    "In a row's first tile m_old = −∞, so α = 0: there is nothing earlier to keep. Orange bars are "
                    "the rows whose maximum grew."
                  : "Where a tile brings a larger score, m_i grows at rowmax and ℓ_i and O_i are multiplied by "
                    "α = e^(m_old − m_new) before this tile's share is added. In a row's first tile m_old = −∞, so "
                    "α = 0: there is nothing earlier to keep. Orange bars are the rows whose maximum grew.");
  } else {
    MathTextColored(pal.dim, "α = e^(m_old − m_new) appears once the new maxima are known");
  }
  if (const LiveGpuView* gpu = CurrentGpuValues(model)) {
    // The cross-check in one line; a mismatch is never quiet (the live GPU tab has the details).
    MathTextColored(gpu->agrees ? pal.good : pal.bad,
                    Sprintf("%s %s: max |Δm| = %s, max |Δℓ|/ℓ = %s (dashed: the GPU)", gpu->probe_kernel.c_str(),
                            gpu->agrees ? "agrees" : "DISAGREES — MISMATCH", Num(gpu->max_m_error, 2).c_str(),
                            Num(gpu->max_l_rel_error, 2).c_str()).c_str());
    ImGui::SameLine();
    HelpMarker("The instrumented kernel of the live GPU tab ran these same tiles on the GPU in fp32 and recorded "
               "m_i and ℓ_i after every tile iteration. The dashed lines below are its values.");
  }
  ImGui::PopTextWrapPos();

  // Bars for m_i and ℓ_i.
  const ImVec2 avail = ImGui::GetContentRegionAvail();
  // The history plots need about six text lines to say anything; the bars take the rest.
  const float plot_h = std::clamp(avail.y * 0.42f, 6.5f * ImGui::GetFontSize(), 14.0f * ImGui::GetFontSize());
  const float header_h = ImGui::GetTextLineHeightWithSpacing();
  const float bars_h = std::max(40.0f, avail.y - plot_h - header_h - ImGui::GetStyle().ItemSpacing.y * 2);
  const float col_w = (avail.x - ImGui::GetStyle().ItemSpacing.x) / 2;
  const ImVec2 p0 = ImGui::GetCursorScreenPos();
  ImDrawList* dl = ImGui::GetWindowDrawList();
  const float row_h = bars_h / static_cast<float>(s.rows);
  std::vector<bool> flagged(static_cast<std::size_t>(s.rows), false);
  for (std::size_t r = 0; r < t.alpha.size() && r < t.m_prev.size(); ++r)
    flagged[r] = RowMaxChange(t, static_cast<int>(r)) == MaxChange::kGrew;

  Range mr;
  mr.Take(t.m);
  mr.Take(t.m_prev);
  mr.Take(t.m_tile);
  for (const auto& h : s.m_history) mr.Take(h);
  if (mr.empty()) mr = {0, 1};
  if (mr.lo == mr.hi) mr = {mr.lo - 1, mr.hi + 1};
  const double m_pad = 0.08 * (mr.hi - mr.lo);
  Range lr;
  lr.Take(t.l);
  lr.Take(t.l_prev);
  for (const auto& h : s.l_history) lr.Take(h);
  if (lr.empty() || lr.hi <= 0) lr = {0, 1};

  ImGui::SetCursorScreenPos(p0);
  MathTextF("m_i  [%s, %s]", Num(mr.lo, 3).c_str(), Num(mr.hi, 3).c_str());
  ImGui::SetCursorScreenPos(ImVec2(p0.x + col_w + ImGui::GetStyle().ItemSpacing.x, p0.y));
  MathTextF("ℓ_i  [0, %s]", Num(lr.hi, 3).c_str());
  const ScreenRect m_area{ImVec2(p0.x, p0.y + header_h), ImVec2(p0.x + col_w, p0.y + header_h + bars_h)};
  const ScreenRect l_area{ImVec2(p0.x + col_w + ImGui::GetStyle().ItemSpacing.x, m_area.min.y),
                          ImVec2(p0.x + avail.x, m_area.max.y)};
  // During the step's transition the bars slide from the step before: m_i to its new maximum, and ℓ_i, where
  // this step rescales it, first shrinks to α·ℓ_old, then grows by the tile's share.
  std::vector<double> m_shown = t.m, l_shown = t.l;
  const StepState* before = model.previous();
  if (InTransition(ui) && before && before->info.i == s.info.i && before->tile.m.size() == t.m.size() &&
      before->tile.l.size() == t.l.size()) {
    const double e = TransitionEase(ui);
    const auto lerp = [](double a, double b, double f) { return a + (b - a) * f; };
    for (std::size_t r = 0; r < t.m.size(); ++r) {
      const double m_old = before->tile.m[r], l_old = before->tile.l[r];
      if (Finite(m_old) && Finite(t.m[r])) m_shown[r] = lerp(m_old, t.m[r], e);
      if (!Finite(l_old) || !Finite(t.l[r]) || l_old == t.l[r]) continue;
      if (r < t.alpha.size() && Finite(t.alpha[r])) {
        const double shrunk = t.alpha[r] * l_old;
        l_shown[r] = e < 0.5 ? lerp(l_old, shrunk, 2 * e) : lerp(shrunk, t.l[r], 2 * e - 1);
      } else {
        l_shown[r] = lerp(l_old, t.l[r], e);
      }
    }
  }
  DrawBars(dl, m_area, s.rows, row_h, m_shown, t.m_prev, mr.lo - m_pad, mr.hi + m_pad, flagged, highlight);
  DrawBars(dl, l_area, s.rows, row_h, l_shown, t.l_prev, 0.0, lr.hi * 1.08, flagged, highlight);
  if (row_h >= ImGui::GetFontSize())
    for (int r = 0; r < s.rows; ++r) {
      const auto k = static_cast<std::size_t>(r);
      const float y = m_area.min.y + row_h * static_cast<float>(r) + (row_h - ImGui::GetFontSize()) / 2;
      const std::string text = Num(t.m[k], 3) + (flagged[k] ? "  α=" + Num(t.alpha[k], 2) : "");
      dl->AddText(ImVec2(m_area.max.x - ImGui::CalcTextSize(text.c_str()).x - 3, y), ImGui::GetColorU32(ImGuiCol_Text),
                  text.c_str());
      const std::string ltext = Num(t.l[k], 3);
      dl->AddText(ImVec2(l_area.max.x - ImGui::CalcTextSize(ltext.c_str()).x - 3, y), ImGui::GetColorU32(ImGuiCol_Text),
                  ltext.c_str());
    }

  // Hover: the formulas with their numbers.
  const ImVec2 mouse = ImGui::GetIO().MousePos;
  ImGui::SetCursorScreenPos(m_area.min);
  ImGui::InvisibleButton("##m-bars", ImVec2(std::max(1.0f, m_area.width()), std::max(1.0f, m_area.height())));
  if (ImGui::IsItemHovered()) {
    const int r = std::clamp(static_cast<int>((mouse.y - m_area.min.y) / row_h), 0, s.rows - 1);
    ui.cursor.hover_row = s.row_begin + r;
    Explanation x = ExplainRunningMax(model, r);
    if (!t.alpha.empty()) {
      const Explanation a = ExplainRescale(model, r);
      x.lines.push_back(a.title);
      x.lines.insert(x.lines.end(), a.lines.begin(), a.lines.end());
    }
    ShowExplanation(x);
    if (ImGui::IsItemClicked()) ui.cursor.selected_row = s.row_begin + r;
  }
  ImGui::SetCursorScreenPos(l_area.min);
  ImGui::InvisibleButton("##l-bars", ImVec2(std::max(1.0f, l_area.width()), std::max(1.0f, l_area.height())));
  if (ImGui::IsItemHovered()) {
    const int r = std::clamp(static_cast<int>((mouse.y - l_area.min.y) / row_h), 0, s.rows - 1);
    ui.cursor.hover_row = s.row_begin + r;
    ShowExplanation(ExplainRunningSum(model, r));
    if (ImGui::IsItemClicked()) ui.cursor.selected_row = s.row_begin + r;
  }

  // History over j.
  ImGui::SetCursorScreenPos(ImVec2(p0.x, m_area.max.y + ImGui::GetStyle().ItemSpacing.y));
  HistoryPlot("##m-history", "m_i after K/V tile j", model, true, highlight, ImVec2(col_w, plot_h));
  ImGui::SameLine();
  HistoryPlot("##l-history", "ℓ_i after K/V tile j", model, false, highlight,
              ImVec2(avail.x - col_w - ImGui::GetStyle().ItemSpacing.x, plot_h));
}

}  // namespace flashviz
