// The step view of the backward pass (DrawStepPanel hands over to it): on the left the N × d tensors in HBM as
// columns (Q, dO and dQ row-tiled by i; K, V, dK and dV by j), one cursor over the current tiles, dQ as it stands
// in HBM with the rows grad_q read-modify-writes flagged; on the right the tiles on chip, large with their numbers:
// S_ij then P_ij with L_i beside it, dP_ij then dS_ij with D_i, dV_j and dK_j accumulating over the Q tiles, and
// dQ_i as grad_q reads it, adds to it and writes it back. Every number is the stepper's (StepState::grad).
//
// [SECTION] layout and textures
// [SECTION] the HBM columns
// [SECTION] the tiles, large
// [SECTION] the panel
#include <algorithm>
#include <cmath>

#include "kernels/common/format.h"
#include "viz/colormap.h"
#include "viz/formulas.h"
#include "viz/frame_report.h"
#include "viz/heatmap.h"
#include "viz/panels/number_grid.h"
#include "viz/panels/panels.h"
#include "viz/widgets.h"

namespace flashviz {
namespace {

// ---------------------------------------------------------------------------------------------------------
// [SECTION] layout and textures
// ---------------------------------------------------------------------------------------------------------

// One N × d tensor of HBM as a column, with the tile cursor on rows [r0, r1) (none when r0 < 0).
struct HbmColumn {
  const char* name;
  const char* help;
  char tiling;  // 'i' (B_r rows) or 'j' (B_c rows)
};

// ---------------------------------------------------------------------------------------------------------
// [SECTION] the HBM columns
// ---------------------------------------------------------------------------------------------------------

// The rows of dK and dV already written (write_dk_dv of their K/V tile has run).
bool KvGradientsWritten(const Model& m, int j) {
  const StepInfo& info = m.state().info;
  if (info.phase == Phase::kDone) return true;
  if (info.j == j) return info.phase == Phase::kWriteGrads;
  return m.KvTileStatus(j) == TileStatus::kDone;
}

void DrawHbmColumns(const Model& m, UiState& ui, const ScreenRect& area, Hovered& hovered) {
  const AttentionProblem& p = m.problem();
  const StepState& s = m.state();
  const Palette& pal = GetPalette();
  ImDrawList* dl = ImGui::GetWindowDrawList();
  const float label_h = ImGui::GetFrameHeight();
  constexpr int kColumns = 8;
  const float gap = std::floor(8.0f * ui.appearance.ui_scale);
  const float col_w =
      std::floor(std::min((area.width() - gap * (kColumns - 1)) / kColumns, 90.0f * ui.appearance.ui_scale));
  const float h = area.height() - 2 * label_h;
  if (col_w < 6 || h < 20) return;
  const AttentionInputs& in = m.inputs();
  const Reference* ref = m.reference();
  const HbmOutput* dq = m.hbm_output();
  const double input_max = std::max({AbsMax(in.q), AbsMax(in.k), AbsMax(in.v)});
  const double dout_max = AbsMax(in.dout);
  const double dq_max = ref ? FiniteAbsMax(ref->o) : 1.0;
  const double dk_max = ref && !ref->dk.empty() ? FiniteAbsMax(ref->dk) : 1.0;
  const double dv_max = ref && !ref->dv.empty() ? FiniteAbsMax(ref->dv) : 1.0;
  const ForwardSaved* saved = m.stepper().saved();
  const std::vector<double>* final_dk = saved && ref && !ref->model_dk.empty() ? &ref->model_dk : nullptr;
  const std::vector<double>* final_dv = saved && ref && !ref->model_dv.empty() ? &ref->model_dv : nullptr;

  // When a column's current tile is in use: the tiles a phase reads or writes (the cursor), or, for dQ, the rows
  // grad_q read-modify-writes (in the warning colour, with ⇄).
  const Phase phase = s.info.phase;
  const bool pair = s.info.i >= 0 && s.info.j >= 0;
  enum class Use { kPair, kDelta, kDeltaAndPair, kKv, kDq, kWritten };
  struct Column {
    const char* name;
    const char* help;
    bool q_side;
    Use use;
    std::function<double(int, int)> value;  // NaN: not in HBM yet
    ColorScale scale;
    std::string key;  // the texture's cache key: "bwd-hbm-…", apart from the tiles' own
    std::uint64_t version;
  };
  const auto in_use = [&](Use use) {
    switch (use) {
      case Use::kPair: return pair;
      case Use::kDelta: return phase == Phase::kDelta;
      case Use::kDeltaAndPair: return pair || phase == Phase::kDelta;
      case Use::kKv: return s.info.j >= 0;
      case Use::kDq: return pair;
      case Use::kWritten: return phase == Phase::kWriteGrads;
    }
    return false;
  };
  const auto input = [&](const std::vector<float>& v) {
    return [&v, d = p.d](int r, int e) { return static_cast<double>(v[static_cast<std::size_t>(r) * d + e]); };
  };
  const auto written = [&](const std::vector<double>* v) {
    return [&m, v, &p](int r, int e) {
      if (!v || !KvGradientsWritten(m, r / p.bc)) return std::numeric_limits<double>::quiet_NaN();
      return (*v)[static_cast<std::size_t>(r) * p.d + e];
    };
  };
  const double o_max = saved ? FiniteAbsMax(saved->o) : 1.0;
  const std::uint64_t step_key = m.step_version() * 2 + (ref ? 1 : 0);
  std::vector<Column> columns = {
      {"Q", "Q (N × d), read once per K/V tile at load_q (Q_i).", true, Use::kPair, input(in.q),
       ColorScale::Symmetric(input_max), "bwd-hbm-Q", m.problem_version()},
      {"O", "O (N × d), saved by the forward pass: read once, by the delta step of its Q tile (D_i = rowsum(dO_i ∘ O_i)).",
       true, Use::kDelta,
       [&](int r, int e) {
         return saved ? saved->o[static_cast<std::size_t>(r) * p.d + e] : std::numeric_limits<double>::quiet_NaN();
       },
       ColorScale::Symmetric(o_max), "bwd-hbm-O", m.problem_version()},
      {"dO", "dO (N × d), the upstream gradient: read by the delta step and once per K/V tile at load_q (dO_i).", true,
       Use::kDeltaAndPair, input(in.dout), ColorScale::Symmetric(dout_max), "bwd-hbm-dO", m.problem_version()},
      {"dQ",
       "dQ (N × d) as it stands in HBM after this step: zero at init, every K/V tile adds scale·dS_ij K_j to "
       "the rows of the Q tiles it meets (grad_q reads, adds and writes back: atomicAdd on a GPU).",
       true, Use::kDq,
       [&](int r, int e) {
         return dq ? dq->values[static_cast<std::size_t>(r) * p.d + e] : std::numeric_limits<double>::quiet_NaN();
       },
       ColorScale::Symmetric(dq_max), "bwd-hbm-dQ",
       (m.problem_version() << 40) ^ (dq ? static_cast<std::uint64_t>(dq->step) * 4 + 1 : 0) ^ (ref ? 2u : 0u)},
      {"K", "K (N × d), read once, at load_kv of its tile (K_j).", false, Use::kKv, input(in.k),
       ColorScale::Symmetric(input_max), "bwd-hbm-K", m.problem_version()},
      {"V", "V (N × d), read once, at load_kv of its tile (V_j).", false, Use::kKv, input(in.v),
       ColorScale::Symmetric(input_max), "bwd-hbm-V", m.problem_version()},
      {"dK", "dK (N × d) in HBM: written once per K/V tile, at write_dk_dv (blank until then).", false, Use::kWritten,
       written(final_dk), ColorScale::Symmetric(dk_max), "bwd-hbm-dK", step_key},
      {"dV", "dV (N × d) in HBM: written once per K/V tile, at write_dk_dv (blank until then).", false, Use::kWritten,
       written(final_dv), ColorScale::Symmetric(dv_max), "bwd-hbm-dV", step_key},
  };
  const float thick = std::max(2.0f, 2.5f * ui.appearance.ui_scale);
  const ImVec2 mouse = ImGui::GetIO().MousePos;
  for (int k = 0; k < kColumns; ++k) {
    Column& c = columns[static_cast<std::size_t>(k)];
    const float x = area.min.x + static_cast<float>(k) * (col_w + gap);
    const ScreenRect rect = Rect(x, area.min.y + label_h, col_w, h);
    if (FrameReport* report = CurrentFrameReport()) report->tile_grids.push_back(rect);
    ImGui::SetCursorScreenPos(ImVec2(x, area.min.y));
    MathText(c.name);
    MathTooltip(c.help);
    ColorScale scale = c.scale;
    scale.masked = pal.pending;  // not in HBM yet
    DrawImage(
        dl,
        CachedTexture(c.key, c.version, [&](RgbaImage& image) { FillMatrixImage(p.n, p.d, c.value, scale, image); }),
        rect);
    const CellGrid grid{rect, p.n, p.d};
    DrawTileLines(dl, grid, c.q_side ? p.br : p.bc, 0, pal.grid);
    if (c.use == Use::kWritten)
      for (int j = 0; j < p.tc(); ++j)
        if (!KvGradientsWritten(m, j))
          DrawWash(dl, grid.Cells(p.ColBegin(j), 0, p.ColBegin(j) + p.ColsInTile(j), p.d), pal.pending);
    const int tile = c.q_side ? s.info.i : s.info.j;
    if (tile >= 0 && in_use(c.use)) {
      const int r0 = c.q_side ? p.RowBegin(tile) : p.ColBegin(tile);
      const ScreenRect tile_rect = grid.Cells(r0, 0, r0 + (c.q_side ? p.RowsInTile(tile) : p.ColsInTile(tile)), p.d);
      if (c.use == Use::kDq && phase == Phase::kGradQ) {
        // The read-modify-write: dQ_i in HBM is washed, framed in the warning colour and marked ⇄.
        DrawWash(dl, tile_rect, pal.cursor_fill);
        DrawCursorRect(dl, tile_rect, pal.warn, thick);
        const ImVec2 size = CalcMathTextSize("⇄");
        const float mx = tile_rect.min.x + (tile_rect.width() - size.x) / 2;
        dl->AddRectFilled(ImVec2(mx - 2, tile_rect.min.y + 2), ImVec2(mx + size.x + 2, tile_rect.min.y + 4 + size.y),
                          pal.plot_bg);
        DrawMathText(dl, ImVec2(mx, tile_rect.min.y + 3), pal.warn, "⇄");
      } else if (c.use == Use::kDq) {
        DrawCursorRect(dl, tile_rect, pal.dim, 1.5f);  // the rows this pair will add into
      } else {
        DrawCursorRect(dl, tile_rect, pal.cursor, thick);
      }
      if (k == 0)
        if (FrameReport* report = CurrentFrameReport()) {
          report->q_tile_visible = true;
          report->q_tile = tile_rect;
        }
    }
    int row = 0, e = 0;
    ImGui::PushID(k);
    if (HitArea("##column", rect) && grid.CellAt(mouse, &row, &e)) {
      ui.cursor.hover_row = c.q_side ? row : -1;
      ui.cursor.hover_col = c.q_side ? -1 : row;
      if (c.use == Use::kDq) {
        hovered = {ExplainHbmGradient(m, row, e), true};
      } else {
        Explanation x;
        x.available = true;
        x.value = c.value(row, e);
        x.title = Sprintf("%s[%d, %d] = %s", c.name, row, e,
                          std::isfinite(x.value) ? Num(x.value, 5).c_str() : "not in HBM yet");
        x.lines.push_back(c.help);
        x.lines.push_back(Sprintf("row %d is in %s tile %c = %d", row, c.q_side ? "Q" : "K/V", c.q_side ? 'i' : 'j',
                                  row / (c.q_side ? p.br : p.bc)));
        hovered = {x, true};
      }
    }
    ImGui::PopID();
  }
  const float note_y = area.max.y - label_h + 4;
  const char* note = "HBM: Q, O, dO, dQ by Q tile i · K, V, dK, dV by K/V tile j";
  DrawMathText(dl, ImVec2(area.min.x, note_y), pal.dim,
               CalcMathTextSize(note).x <= area.width() ? note : "in HBM (hover a column)");
}

// ---------------------------------------------------------------------------------------------------------
// [SECTION] the tiles, large
// ---------------------------------------------------------------------------------------------------------

// The preprocessing step: O_i with D_i = rowsum(dO_i ∘ O_i) beside it, and dO_i (what the step reads and writes).
void DrawDeltaTiles(const Model& m, UiState& ui, const ScreenRect& area, Hovered& hovered, float half_w, float top_h,
                    float gap) {
  const StepState& s = m.state();
  const BackwardNumerics& g = s.grad;
  const int d = m.problem().d;
  std::vector<double> dout(static_cast<std::size_t>(s.rows) * d);
  for (std::size_t at = 0; at < dout.size(); ++at)
    dout[at] = m.inputs().dout[static_cast<std::size_t>(s.row_begin) * d + at];
  const auto value_of = [&](const char* name, const std::vector<double>& values, int r, int e) {
    Explanation x;
    x.available = true;
    x.value = values[static_cast<std::size_t>(r) * d + e];
    x.title = Sprintf("%s[%d, %d] = %s", name, s.row_begin + r, e, Num(x.value, 5).c_str());
    x.lines.push_back("read from HBM by the delta step of Q tile " + std::to_string(s.info.i));
    return x;
  };
  ImGui::SetCursorScreenPos(area.min);
  SectionTitle("O_i, D_i = rowsum(dO_i ∘ O_i)",
               "The preprocessing pass: O_i (saved by the forward pass) and dO_i come from HBM, each row's dot product "
               "D_i is written back (the column on the right). dS = P ∘ (dP − D) needs it in every tile pair.");
  const float y = ImGui::GetCursorScreenPos().y;
  const std::uint64_t v = m.step_version();
  DrawNumberGrid(
      "bwd-delta-O", ui, Rect(area.min.x, y, half_w, top_h), s.rows, d, g.o.empty() ? nullptr : &g.o,
      ColorScale::Symmetric(g.o.empty() ? 1.0 : FiniteAbsMax(g.o)), g.delta.empty() ? nullptr : &g.delta, "D_i",
      [&](int r, int e) { return value_of("O", g.o, r, e); }, [&](int r) { return ExplainDelta(m, r); },
      "not computed yet", v * 4, hovered, s.row_begin);
  ImGui::SetCursorScreenPos(ImVec2(area.min.x + half_w + gap, area.min.y));
  SectionTitle("dO_i", "The upstream gradient's rows of this Q tile.");
  DrawNumberGrid(
      "bwd-delta-dO", ui, Rect(area.min.x + half_w + gap, y, half_w, top_h), s.rows, d, &dout,
      ColorScale::Symmetric(FiniteAbsMax(dout)), nullptr, "", [&](int r, int e) { return value_of("dO", dout, r, e); },
      nullptr, "", v * 4 + 1, hovered, s.row_begin);
}

void DrawBackwardTiles(const Model& m, UiState& ui, const ScreenRect& area, Hovered& hovered) {
  const StepState& s = m.state();
  const BackwardNumerics& g = s.grad;
  const AttentionProblem& p = m.problem();
  const Phase phase = s.info.phase;
  const float title_h = ImGui::GetTextLineHeightWithSpacing() + 2;
  const float gap = 10.0f * ui.appearance.ui_scale;
  const float half_w = std::floor((area.width() - gap) / 2);
  const float top_h = std::floor((area.height() - 2 * title_h - ImGui::GetTextLineHeight() * 2) * 0.5f);
  const float bottom_h = area.height() - top_h - 2 * title_h - ImGui::GetTextLineHeight() * 2;
  const std::uint64_t v = m.step_version();
  const int rows = s.rows, cols = s.cols;
  const char* none = s.info.i < 0 || s.info.j < 0 ? "no tile pair at this step" : "not computed yet";

  if (phase == Phase::kDelta) return DrawDeltaTiles(m, ui, area, hovered, half_w, top_h, gap);

  // S_ij, then P_ij in its place, with L_i.
  const bool show_p = !g.p.empty();
  ImGui::SetCursorScreenPos(area.min);
  SectionTitle(show_p ? FittingTitle("P_ij = exp(S_ij − L_i)", "P_ij", half_w)
                      : FittingTitle("S_ij = scale·Q_i K_jᵀ", "S_ij", half_w),
               "Recomputed from Q_i and K_j (the forward pass stored no S), then turned into the final probabilities "
               "with the saved log-sum-exp L_i (right column): one subtraction and one exp per entry, no running "
               "maximum. P_ij overwrites S_ij in SRAM.");
  const float y1 = ImGui::GetCursorScreenPos().y;
  const ScreenRect sp_grid = DrawNumberGrid(
      "bwd-SP", ui, Rect(area.min.x, y1, half_w, top_h), rows, cols, show_p ? &g.p : (g.s.empty() ? nullptr : &g.s),
      show_p ? ColorScale::Unit() : ColorScale::Symmetric(FiniteAbsMax(g.s)), g.lse.empty() ? nullptr : &g.lse, "L_i",
      [&](int r, int c) { return show_p ? ExplainBackwardProbability(m, r, c) : ExplainBackwardScore(m, r, c); },
      [&](int r) { return ExplainLse(m, r); }, none, v * 4 + (show_p ? 1 : 0), hovered, s.row_begin);

  // The current tile pair carries the cursor, as S_ij does in the forward view.
  if (s.info.i >= 0 && s.info.j >= 0 && sp_grid.width() > 0) {
    DrawCursorRect(ImGui::GetWindowDrawList(), sp_grid, GetPalette().cursor,
                   std::max(2.0f, 2.5f * ui.appearance.ui_scale));
    if (FrameReport* report = CurrentFrameReport()) {
      report->s_tile_visible = true;
      report->s_tile = sp_grid;
      report->step_s = sp_grid;
    }
  }

  // dP_ij, then dS_ij in its place, with D_i as bars.
  const bool show_ds = !g.ds.empty();
  ImGui::SetCursorScreenPos(ImVec2(area.min.x + half_w + gap, area.min.y));
  SectionTitle(show_ds ? FittingTitle("dS_ij = P_ij ∘ (dP_ij − D_i)", "dS_ij", half_w)
                       : FittingTitle("dP_ij = dO_i V_jᵀ", "dP_ij", half_w),
               "The gradient of each probability (dP_ij = dO_i V_jᵀ), then of each score (dS_ij, the softmax's "
               "backward) in its place. D_i = rowsum(dO_i ∘ O_i) (right column, from the preprocessing pass) stands in "
               "for the whole row's rowsum(P ∘ dP).");
  const std::vector<double>* dpds = show_ds ? &g.ds : (g.dp.empty() ? nullptr : &g.dp);
  DrawNumberGrid(
      "bwd-dPdS", ui, Rect(area.min.x + half_w + gap, y1, half_w, top_h), rows, cols, dpds,
      ColorScale::Symmetric(dpds ? FiniteAbsMax(*dpds) : 1.0),
      g.delta.empty() || phase == Phase::kDelta ? nullptr : &g.delta, "D_i",
      [&](int r, int c) { return show_ds ? ExplainGradS(m, r, c) : ExplainGradP(m, r, c); },
      [&](int r) { return ExplainDelta(m, r); }, none, v * 4 + (show_ds ? 3 : 2), hovered, s.row_begin);

  // dV_j, dK_j on chip and dQ_i (HBM, read-modify-written at grad_q).
  const float y2 = y1 + top_h + ImGui::GetTextLineHeight() * 2;
  const float third_w = std::floor((area.width() - 2 * gap) / 3);
  const float grid_h = std::max(20.0f, bottom_h - ImGui::GetTextLineHeightWithSpacing());  // the ⇄ line below
  const char* kv_none = s.info.j < 0 ? "no K/V tile on chip" : "not computed yet";
  const auto title_at = [&](float x, const char* title, const char* help) {
    ImGui::SetCursorScreenPos(ImVec2(x, y2));
    SectionTitle(title, help);
  };
  title_at(area.min.x, FittingTitle(phase == Phase::kGradV ? "dV_j += P_ijᵀ dO_i" : "dV_j (on chip)", "dV_j", third_w),
           "dV_j (B_c × d): each key's share of the output gradient, summed over the Q tiles so far. It starts at 0 "
           "at load_kv, stays in SRAM, and is written to HBM once, at write_dk_dv.");
  title_at(area.min.x + third_w + gap,
           FittingTitle(phase == Phase::kGradK ? "dK_j += scale·dS_ijᵀ Q_i" : "dK_j (on chip)", "dK_j", third_w),
           "dK_j (B_c × d): summed over the Q tiles so far, on chip like dV_j, written once at write_dk_dv.");
  title_at(area.min.x + 2 * (third_w + gap),
           FittingTitle(phase == Phase::kGradQ ? "dQ_i += scale·dS_ij K_j" : "dQ_i (in HBM)", "dQ_i", third_w),
           "dQ_i (B_r × d) lives in HBM: every K/V tile's grad_q reads it, adds scale·dS_ij K_j and writes it back. "
           "On a GPU the blocks of different K/V tiles do this to the same rows at once, so the add is an atomicAdd "
           "(or a separate pass computes dQ).");
  const float y3 = ImGui::GetCursorScreenPos().y;
  const bool kv_live = s.info.j >= 0 && !g.dv.empty() && phase != Phase::kDone;
  DrawNumberGrid(
      "bwd-dV", ui, Rect(area.min.x, y3, third_w, grid_h), cols, p.d, kv_live ? &g.dv : nullptr,
      ColorScale::Symmetric(kv_live ? FiniteAbsMax(g.dv) : 1.0), nullptr, "",
      [&](int c, int e) { return ExplainGradKv(m, 'V', c, e); }, nullptr, kv_none, v * 4, hovered, -1);
  DrawNumberGrid(
      "bwd-dK", ui, Rect(area.min.x + third_w + gap, y3, third_w, grid_h), cols, p.d, kv_live ? &g.dk : nullptr,
      ColorScale::Symmetric(kv_live ? FiniteAbsMax(g.dk) : 1.0), nullptr, "",
      [&](int c, int e) { return ExplainGradKv(m, 'K', c, e); }, nullptr, kv_none, v * 4, hovered, -1);
  const bool dq_live = s.info.i >= 0 && s.info.j >= 0 && !g.dq.empty();
  const ScreenRect dq_grid = DrawNumberGrid(
      "bwd-dQ", ui, Rect(area.min.x + 2 * (third_w + gap), y3, third_w, grid_h), rows, p.d, dq_live ? &g.dq : nullptr,
      ColorScale::Symmetric(dq_live ? FiniteAbsMax(g.dq) : 1.0), nullptr, "",
      [&](int r, int e) { return ExplainGradQ(m, r, e); }, nullptr,
      s.info.i < 0 ? "no Q tile at this step" : "not on chip", v * 4, hovered, s.row_begin);
  if (phase == Phase::kGradQ && dq_live) {
    // The read-modify-write, drawn: HBM → SRAM, +, SRAM → HBM.
    const Palette& pal = GetPalette();
    const float x = area.min.x + 2 * (third_w + gap);
    ImGui::SetCursorScreenPos(ImVec2(x, dq_grid.max.y + 4));
    ImGui::PushTextWrapPos(x + third_w);
    MathTextColored(pal.warn, FittingTitle("⇄ read, add, write back", "⇄", third_w));
    MathTooltip(
        "grad_q reads dQ_i from HBM, adds scale·dS_ij K_j on chip and writes it back: on a GPU an atomicAdd, "
        "since the blocks of other K/V tiles add into the same rows at the same time.");
    ImGui::PopTextWrapPos();
  }
}

}  // namespace

// ---------------------------------------------------------------------------------------------------------
// [SECTION] the panel
// ---------------------------------------------------------------------------------------------------------

void DrawBackwardStepPanel(const Model& model, UiState& ui) {
  // The HBM columns need little width (each is N × d, drawn tall and narrow); the tiles get the rest, so their
  // numbers fit.
  const float columns_w = 8 * 44.0f * ui.appearance.ui_scale;
  const StepViewAreas areas = SplitStepView(
      ui, [&](float avail_x) { return std::clamp(columns_w, avail_x * 0.22f, avail_x * 0.32f); }, 0.38f);
  Hovered hovered;
  DrawHbmColumns(model, ui, areas.left, hovered);
  DrawBackwardTiles(model, ui, areas.right, hovered);
  FinishStepView(areas, hovered);
}

}  // namespace flashviz
