// O_i converging: one row of the current Q tile as the algorithm holds it now, next to the exact row of the
// float64 reference, with the error of that row and of the whole tile. The q order keeps O_i unnormalized
// until finalize, so it is compared as O_i / ℓ_i. The row's m_i and ℓ_i are set against their exact values.
#include <algorithm>
#include <cmath>

#include "kernels/common/format.h"
#include "viz/formulas.h"
#include "viz/panels/panels.h"
#include "viz/widgets.h"

namespace flashviz {
namespace {

// The backward pass: one row of dQ_i as it stands in HBM against the exact dQ row, converging as the K/V tiles add
// their shares (the same question the forward view asks of O_i).
void DrawBackwardOutput(const Model& model, UiState& ui) {
  const StepState& s = model.state();
  const BackwardNumerics& g = s.grad;
  const Palette& pal = GetPalette();
  const int d = model.problem().d;
  ImGui::PushTextWrapPos(0);
  if (s.info.i < 0 || g.dq.size() != static_cast<std::size_t>(s.rows) * d) {
    MathTextColored(pal.dim, "No dQ_i at this step. Hover dQ in the step view for any row as it stands in HBM.");
    ImGui::PopTextWrapPos();
    return;
  }
  int r = ui.cursor.selected_row - s.row_begin;
  if (r < 0 || r >= s.rows) r = 0;
  const int row = s.row_begin + r;
  const Reference* ref = model.reference();
  MathTextF("dQ row %d (Q tile i = %d) in HBM after step %lld", row, s.info.i, static_cast<long long>(s.info.step));
  ImGui::SameLine();
  HelpMarker("dQ_i is the one gradient that lives in HBM during the backward pass: every K/V tile that meets the row "
             "adds scale·dS_ij K_j at its grad_q. The exact column is the float64 reference's final dQ; the row "
             "matches it once the last K/V tile has added its share. Click a row of Q to pick another.");
  ImGui::PopTextWrapPos();
  double worst = 0;
  // The table scrolls inside the room left above the error line; the panel itself never does.
  const float table_h = ImGui::GetContentRegionAvail().y - ImGui::GetTextLineHeightWithSpacing() -
                        ImGui::GetStyle().ItemSpacing.y;
  if (table_h > ImGui::GetFrameHeight() &&
      ImGui::BeginTable("##dq-row", 3, ImGuiTableFlags_BordersInnerH | ImGuiTableFlags_ScrollY,
                        ImVec2(0, table_h))) {
    ImGui::TableSetupColumn("e");
    ImGui::TableSetupColumn("dQ now");
    ImGui::TableSetupColumn("exact");
    ImGui::TableHeadersRow();
    for (int e = 0; e < d; ++e) {
      const double now = g.dq[static_cast<std::size_t>(r) * d + e];
      ImGui::TableNextRow();
      ImGui::TableNextColumn();
      ImGui::Text("%d", e);
      ImGui::TableNextColumn();
      ImGui::TextUnformatted(Num(now, 5).c_str());
      ImGui::TableNextColumn();
      if (ref) {
        const double exact = ref->o[static_cast<std::size_t>(row) * d + e];
        worst = std::max(worst, std::abs(exact - now));
        ImGui::TextUnformatted(Num(exact, 5).c_str());
      } else {
        ImGui::TextDisabled("…");
      }
    }
    ImGui::EndTable();
  }
  if (ref) MathTextF("max |dQ now − exact| over the row: %s", Num(worst, 3).c_str());
}

}  // namespace

void DrawOutputPanel(const Model& model, UiState& ui) {
  if (!model.has_problem()) return;
  if (model.problem().backward()) return DrawBackwardOutput(model, ui);
  const StepState& s = model.state();
  const TileNumerics& t = s.tile;
  const Palette& pal = GetPalette();
  const AttentionProblem& p = model.problem();
  const int d = p.d;
  if (s.info.i < 0 || t.o.empty()) {
    ImGui::PushTextWrapPos(0);
    MathTextColored(pal.dim, "No O_i on chip at this step. Hover O in the step view for any row as it stands in HBM.");
    ImGui::PopTextWrapPos();
    return;
  }
  const Reference* ref = model.reference();
  // The row: the selected one when it is in this tile, else the tile's first.
  int r = ui.cursor.selected_row - s.row_begin;
  if (r < 0 || r >= s.rows) r = 0;
  const bool normalized = p.order == LoopOrder::kKvOuter || s.info.phase == Phase::kFinalize ||
                          s.info.phase == Phase::kWriteBack;
  auto current = [&](int row, int e) {
    const double o = t.o[static_cast<std::size_t>(row) * d + e];
    if (normalized) return o;
    const double l = t.l[static_cast<std::size_t>(row)];
    return l > 0 ? o / l : 0.0;
  };
  // The transition into update_o: the row first shrinks by α (what the old O_i is worth against the new maximum:
  // α·O_i in the q order, α·ℓ_old·O_i/ℓ_new in Algorithm 1's normalized O_i), then this tile's P~_ij V_j is added.
  const StepState* before = model.previous();
  const bool rescaling = InTransition(ui) && s.info.phase == Phase::kUpdateO && before && before->info.i == s.info.i &&
                         before->tile.o.size() == t.o.size() && before->tile.l.size() == t.l.size() &&
                         t.alpha.size() == t.l.size();
  auto shown = [&](int row, int e) {
    const double now = current(row, e);
    if (!rescaling) return now;
    const auto k = static_cast<std::size_t>(row);
    const double old_o = before->tile.o[k * d + e];
    const double old_shown = normalized ? old_o : (before->tile.l[k] > 0 ? old_o / before->tile.l[k] : 0.0);
    const double shrunk = normalized ? (t.l[k] > 0 ? t.alpha[k] * t.l_prev[k] * old_o / t.l[k] : 0.0)
                                     : t.alpha[k] * old_shown;
    const double f = TransitionEase(ui);
    return f < 0.5 ? old_shown + (shrunk - old_shown) * 2 * f : shrunk + (now - shrunk) * (2 * f - 1);
  };

  ImGui::AlignTextToFramePadding();
  MathText("row");
  ImGui::SameLine();
  int row = s.row_begin + r;
  ImGui::SetNextItemWidth(std::min(160.0f * ui.appearance.ui_scale, ImGui::GetContentRegionAvail().x * 0.45f));
  if (ImGui::SliderInt("##row", &row, s.row_begin, s.row_begin + s.rows - 1)) ui.cursor.selected_row = row;
  MathTooltip("The query row shown (click a row in Q, O or the m_i bars to pick it)");
  ImGui::SameLine();
  MathTextF("(row %d of Q tile i = %d)", r, s.info.i);
  ImGui::SameLine();
  HelpMarker(normalized ? "O_i as the algorithm holds it after this step: the softmax-weighted average of V over the "
                          "keys seen so far. It converges to the exact row once every K/V tile has been seen."
                        : "The q order keeps O_i unnormalized (Σ e^(s − m_i) V) until finalize: shown here divided by "
                          "ℓ_i so it can be compared with the exact row.");

  if (!ref) {
    MathTextColored(pal.dim, "computing the exact result…");
    return;
  }
  // Errors of the row and of the whole tile.
  double row_err = 0, tile_err = 0;
  for (int rr = 0; rr < s.rows; ++rr)
    for (int e = 0; e < d; ++e) {
      const double err = std::abs(current(rr, e) - ref->o[static_cast<std::size_t>(s.row_begin + rr) * d + e]);
      tile_err = std::max(tile_err, err);
      if (rr == r) row_err = std::max(row_err, err);
    }
  const RowSoftmaxStats& exact = ref->stats[static_cast<std::size_t>(s.row_begin + r)];
  MathTextF("max |O_i − O_exact|: row %s, tile %s", Num(row_err, 3).c_str(), Num(tile_err, 3).c_str());
  MathTextColored(pal.dim, Sprintf("m_i = %s (exact %s)   ℓ_i = %s (exact %s)",
                                   Num(t.m[static_cast<std::size_t>(r)], 4).c_str(), Num(exact.m, 4).c_str(),
                                   Num(t.l[static_cast<std::size_t>(r)], 4).c_str(), Num(exact.l, 4).c_str())
                               .c_str());

  // Bars: the current value and the exact one per column e.
  const ImVec2 avail = ImGui::GetContentRegionAvail();
  const ImVec2 p0 = ImGui::GetCursorScreenPos();
  const float legend_h = ImGui::GetTextLineHeightWithSpacing();
  const ScreenRect area{ImVec2(p0.x, p0.y), ImVec2(p0.x + avail.x, p0.y + std::max(30.0f, avail.y - legend_h))};
  ImDrawList* dl = ImGui::GetWindowDrawList();
  dl->AddRectFilled(area.min, area.max, pal.plot_bg);
  const double top = model.o_abs_max() * 1.15;  // a few large values clip; the rest stay readable
  const float mid = (area.min.y + area.max.y) / 2;
  const float half = area.height() / 2 - 3;
  auto Y = [&](double v) { return mid - static_cast<float>(std::clamp(v / top, -1.0, 1.0)) * half; };
  dl->AddLine(ImVec2(area.min.x, mid), ImVec2(area.max.x, mid), pal.grid);
  const float slot = area.width() / static_cast<float>(d);
  const bool wide = slot >= 3;
  for (int e = 0; e < d; ++e) {
    const float x0 = area.min.x + slot * static_cast<float>(e);
    const double exact_v = ref->o[static_cast<std::size_t>(s.row_begin + r) * d + e];
    const double now = shown(r, e);
    if (wide) {
      dl->AddRectFilled(ImVec2(x0 + slot * 0.1f, std::min(mid, Y(exact_v))),
                        ImVec2(x0 + slot * 0.9f, std::max(mid, Y(exact_v))), pal.ghost);
      dl->AddRectFilled(ImVec2(x0 + slot * 0.3f, std::min(mid, Y(now))),
                        ImVec2(x0 + slot * 0.7f, std::max(mid, Y(now))), pal.flash);
      dl->AddLine(ImVec2(x0 + slot * 0.05f, Y(exact_v)), ImVec2(x0 + slot * 0.95f, Y(exact_v)), pal.standard, 2.0f);
    } else {
      dl->AddLine(ImVec2(x0, mid), ImVec2(x0, Y(now)), pal.flash);
      dl->AddRectFilled(ImVec2(x0, Y(exact_v) - 1), ImVec2(x0 + std::max(1.0f, slot), Y(exact_v) + 1), pal.standard);
    }
  }
  dl->AddRect(area.min, area.max, ImGui::GetColorU32(ImGuiCol_Border));
  ImGui::SetCursorScreenPos(area.min);
  ImGui::InvisibleButton("##o-bars", ImVec2(std::max(1.0f, area.width()), std::max(1.0f, area.height())));
  if (ImGui::IsItemHovered()) {
    const int e = std::clamp(static_cast<int>((ImGui::GetIO().MousePos.x - area.min.x) / slot), 0, d - 1);
    Explanation x = ExplainTileOutput(model, r, e);
    const double exact_v = ref->o[static_cast<std::size_t>(s.row_begin + r) * d + e];
    if (!normalized) x.lines.push_back(Sprintf("O_i / ℓ_i = %s", Num(current(r, e), 5).c_str()));
    x.lines.push_back(Sprintf("exact O[%d, %d] = %s   |difference| = %s", s.row_begin + r, e, Num(exact_v, 5).c_str(),
                              Num(std::abs(current(r, e) - exact_v), 3).c_str()));
    ShowExplanation(x);
  }
  ImGui::SetCursorScreenPos(ImVec2(area.min.x, area.max.y + 2));
  MathTextColored(pal.flash, normalized ? "■ O_i now" : "■ O_i / ℓ_i now");
  ImGui::SameLine();
  MathTextColored(pal.standard, "— exact row");
  ImGui::SameLine();
  MathTextColored(pal.dim, Sprintf("(e = 0…%d, scale ±%s)", d - 1, Num(top, 3).c_str()).c_str());
}

}  // namespace flashviz
