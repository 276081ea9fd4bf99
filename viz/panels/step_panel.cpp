// The step view: Q, Kᵀ, S, Vᵀ and O laid out as the products they take part in (S = Q Kᵀ with Kᵀ above S and
// Q to its left; O = P~V with O to the right of S and V below it, transposed so that V_j lines up with K_j and
// S_ij), one cursor over the current tiles in all of them, and the current S_ij and P~_ij large on the right.
// S is drawn as what it is: a grid of tiles of which only the current one has values (it is never stored).
//
// [SECTION] layout
// [SECTION] textures (one per matrix, rebuilt only when the problem, the step or O in HBM changes)
// [SECTION] status washes and the cursor
// [SECTION] the matrices
// [SECTION] the tile, large
// [SECTION] legends and the panel
#include <algorithm>
#include <cmath>

#include "kernels/common/format.h"
#include "viz/colormap.h"
#include "viz/frame_report.h"
#include "viz/formulas.h"
#include "viz/heatmap.h"
#include "viz/panels/panels.h"
#include "viz/widgets.h"

namespace flashviz {
namespace {

// ---------------------------------------------------------------------------------------------------------
// [SECTION] layout
// ---------------------------------------------------------------------------------------------------------

struct StepLayout {
  ScreenRect q, kt, s, vt, o;  // the matrices
  ScreenRect zoom;             // the column with S_ij and P~_ij large
  float label_h = 0;
  bool zoom_below = false;
};

float CursorThickness(float scale) { return std::max(2.0f, 2.5f * scale); }

ScreenRect Rect(float x, float y, float w, float h) {
  return {ImVec2(std::floor(x), std::floor(y)), ImVec2(std::floor(x + w), std::floor(y + h))};
}

StepLayout ComputeStepLayout(ImVec2 origin, ImVec2 avail, const AttentionProblem& p, float scale, float label_h,
                             float legend_h) {
  StepLayout L;
  L.label_h = label_h;
  const float gap = 6.0f * scale;
  const float min_band = 20.0f * scale;
  // Room for the cursor's frame, which is drawn just outside the tiles it marks.
  const float margin = std::ceil(CursorThickness(scale)) + 1;
  origin.x += margin;
  avail.x -= 2 * margin;
  // The tile column goes to the right when there is room, else below.
  L.zoom_below = avail.x < 520.0f * scale;
  // As wide as the tile needs with readable numbers (cells of ~48 px), within a third of the panel.
  const float zoom_need = (static_cast<float>(p.bc) + 2.0f) * 48.0f * scale;
  const float zoom_w = L.zoom_below ? avail.x
                                    : std::clamp(zoom_need, std::min(200.0f * scale, avail.x * 0.36f),
                                                 std::max(avail.x * 0.36f, 200.0f * scale));
  const float zoom_h = L.zoom_below ? std::max(avail.y * 0.4f, 160.0f * scale) : avail.y - legend_h;
  const float mat_w = L.zoom_below ? avail.x : avail.x - zoom_w - 2 * gap;
  const float mat_h = (L.zoom_below ? avail.y - zoom_h - gap : avail.y) - legend_h - gap;
  const double aspect = static_cast<double>(p.d) / static_cast<double>(p.n);
  auto band_for = [&](float side) {
    return std::floor(std::min(std::max(static_cast<float>(side * aspect), min_band), 0.35f * side));
  };
  auto fits = [&](float side) {
    const float band = band_for(side);
    return side + 2 * band + 2 * gap <= mat_w && side + 2 * band + 3 * label_h + 2 * gap <= mat_h;
  };
  // The largest S that fits with its bands (they grow with it): bisection, as the band is clamped.
  float lo = 16.0f, hi = std::max(16.0f, std::min(mat_w, mat_h));
  for (int k = 0; k < 30; ++k) {
    const float mid = 0.5f * (lo + hi);
    (fits(mid) ? lo : hi) = mid;
  }
  const float side = std::floor(lo), band = band_for(side);
  const float block_w = side + 2 * band + 2 * gap;
  const float x0 = origin.x + std::max(0.0f, (mat_w - block_w) / 2);
  const float y0 = origin.y + label_h;
  L.kt = Rect(x0 + band + gap, y0, side, band);
  L.q = Rect(x0, y0 + band + gap, band, side);
  L.s = Rect(x0 + band + gap, y0 + band + gap, side, side);
  L.o = Rect(L.s.max.x + gap, L.s.min.y, band, side);
  L.vt = Rect(L.s.min.x, L.s.max.y + gap, side, band);
  L.zoom = L.zoom_below ? Rect(origin.x, origin.y + avail.y - legend_h - zoom_h, zoom_w, zoom_h)
                        : Rect(origin.x + mat_w + 2 * gap, origin.y, zoom_w, zoom_h);
  return L;
}

// ---------------------------------------------------------------------------------------------------------
// [SECTION] textures
// ---------------------------------------------------------------------------------------------------------

double InputAbsMax(const Model& m) { return std::max({m.q_abs_max(), m.k_abs_max(), m.v_abs_max()}); }

double OutputAbsMax(const Model& m) { return m.o_abs_max(); }

ImTextureID InputTexture(const Model& m, char which, bool transposed) {
  const AttentionProblem& p = m.problem();
  const std::vector<float>& data = which == 'Q' ? m.inputs().q : which == 'K' ? m.inputs().k : m.inputs().v;
  const ColorScale scale = ColorScale::Symmetric(InputAbsMax(m));
  const char key[2] = {which, 0};
  return CachedTexture(key, m.problem_version(), [&](RgbaImage& image) {
    if (transposed)
      FillMatrixImage(p.d, p.n, [&](int e, int key_row) { return data[static_cast<std::size_t>(key_row) * p.d + e]; },
                      scale, image);
    else
      FillMatrixImage(p.n, p.d, [&](int row, int e) { return data[static_cast<std::size_t>(row) * p.d + e]; }, scale,
                      image);
  });
}

ImTextureID OutputTexture(const Model& m) {
  const HbmOutput* out = m.hbm_output();
  if (!out) return nullptr;
  const AttentionProblem& p = m.problem();
  const ColorScale scale = ColorScale::Symmetric(OutputAbsMax(m));
  const std::uint64_t version =
      (m.problem_version() << 40) ^ (static_cast<std::uint64_t>(out->step) << 1) ^ (m.reference() ? 1u : 0u);
  return CachedTexture("O", version, [&](RgbaImage& image) {
    FillMatrixImage(p.n, p.d, [&](int row, int e) { return out->values[static_cast<std::size_t>(row) * p.d + e]; },
                    scale, image);
  });
}

// One texel per tile pair (point-sampled past 512 a side), coloured by its status.
ImTextureID ScoreStatusTexture(const Model& m) {
  const AttentionProblem& p = m.problem();
  const Palette& pal = GetPalette();
  return CachedTexture("S-status", m.step_version(), [&](RgbaImage& image) {
    const int w = std::min(p.tc(), 512), h = std::min(p.tr(), 512);
    image.Resize(w, h);
    for (int y = 0; y < h; ++y) {
      const int i =
          static_cast<int>((2 * static_cast<std::int64_t>(y) + 1) * p.tr() / (2 * static_cast<std::int64_t>(h)));
      for (int x = 0; x < w; ++x) {
        const int j =
            static_cast<int>((2 * static_cast<std::int64_t>(x) + 1) * p.tc() / (2 * static_cast<std::int64_t>(w)));
        ImU32 color = pal.pending;
        switch (m.PairStatus(i, j)) {
          case TileStatus::kMasked: color = pal.masked; break;
          case TileStatus::kDone: color = pal.discarded; break;
          case TileStatus::kCurrent: color = pal.pending; break;
          case TileStatus::kPending: color = pal.pending; break;
        }
        image.at(x, y) = color;
      }
    }
  });
}

// What the S_ij/P~_ij tile holds now: S (scores, rowmax) or P~ (from exp on, in place), and its colour scale.
struct TileValues {
  const std::vector<double>* values = nullptr;
  bool is_p = false;
  ColorScale scale;
};

double FiniteAbsMax(const std::vector<double>& v) {
  double m = 0;
  for (double x : v)
    if (std::isfinite(x)) m = std::max(m, std::abs(x));
  return m > 0 ? m : 1.0;
}

TileValues CurrentTileValues(const Model& m) {
  const TileNumerics& t = m.state().tile;
  if (!t.p.empty()) return {&t.p, true, ColorScale::Unit()};
  if (!t.s.empty()) return {&t.s, false, ColorScale::Symmetric(FiniteAbsMax(t.s))};
  return {};
}

ImTextureID TileTexture(const Model& m, const char* key, const std::vector<double>& values, const ColorScale& scale) {
  const StepState& s = m.state();
  ColorScale with_mask = scale;
  with_mask.masked = GetPalette().masked;
  return CachedTexture(key, m.step_version(), [&](RgbaImage& image) {
    FillMatrixImage(s.rows, s.cols, [&](int r, int c) { return values[static_cast<std::size_t>(r) * s.cols + c]; },
                    with_mask, image);
  });
}

// ---------------------------------------------------------------------------------------------------------
// [SECTION] status washes and the cursor
// ---------------------------------------------------------------------------------------------------------

// Runs of tiles [first, last] with the same status along one axis: few rectangles even for thousands of tiles.
template <class StatusOf, class Draw>
void ForEachRun(int count, StatusOf status_of, Draw draw) {
  int begin = 0;
  while (begin < count) {
    const TileStatus status = status_of(begin);
    int end = begin + 1;
    while (end < count && status_of(end) == status) ++end;
    draw(begin, end, status);
    begin = end;
  }
}

void DrawRowTileWashes(ImDrawList* dl, const Model& m, const CellGrid& grid, bool output) {
  const AttentionProblem& p = m.problem();
  const Palette& pal = GetPalette();
  ForEachRun(p.tr(), [&](int i) { return m.QTileStatus(i); }, [&](int a, int b, TileStatus status) {
    const ScreenRect r = grid.Cells(p.RowBegin(a), 0, p.RowBegin(b - 1) + p.RowsInTile(b - 1), grid.cols);
    if (status == TileStatus::kDone) DrawWash(dl, r, pal.done_wash);
  });
  if (output && p.order == LoopOrder::kQOuter) {  // rows of O that are not in HBM yet
    ForEachRun(p.tr(), [&](int i) { return m.OutputTileWritten(i) ? TileStatus::kDone : TileStatus::kPending; },
               [&](int a, int b, TileStatus status) {
                 if (status != TileStatus::kPending) return;
                 const ScreenRect r = grid.Cells(p.RowBegin(a), 0, p.RowBegin(b - 1) + p.RowsInTile(b - 1), grid.cols);
                 DrawWash(dl, r, pal.pending);
               });
  }
}

void DrawColumnTileWashes(ImDrawList* dl, const Model& m, const CellGrid& grid) {
  const AttentionProblem& p = m.problem();
  const Palette& pal = GetPalette();
  ForEachRun(p.tc(), [&](int j) { return m.KvTileStatus(j); }, [&](int a, int b, TileStatus status) {
    if (status != TileStatus::kDone) return;
    DrawWash(dl, grid.Cells(0, p.ColBegin(a), grid.rows, p.ColBegin(b - 1) + p.ColsInTile(b - 1)), pal.done_wash);
  });
}

// ---------------------------------------------------------------------------------------------------------
// [SECTION] the matrices
// ---------------------------------------------------------------------------------------------------------

struct Hovered {
  Explanation explanation;
  bool any = false;
};

// An invisible button over `rect` so that hovering and clicking behave like any ImGui item.
bool HitArea(const char* id, const ScreenRect& rect, bool* clicked) {
  ImGui::SetCursorScreenPos(rect.min);
  ImGui::InvisibleButton(id, ImVec2(std::max(rect.width(), 1.0f), std::max(rect.height(), 1.0f)));
  *clicked = ImGui::IsItemClicked();
  return ImGui::IsItemHovered();
}

void DrawCrossHighlight(ImDrawList* dl, const CellGrid& grid, int row, int col) {
  const ImU32 c = GetPalette().cursor_fill;
  if (row >= 0 && row < grid.rows) DrawWash(dl, grid.Cells(row, 0, row + 1, grid.cols), c);
  if (col >= 0 && col < grid.cols) DrawWash(dl, grid.Cells(0, col, grid.rows, col + 1), c);
}

void DrawMatrices(const Model& m, UiState& ui, const StepLayout& L, Hovered& hovered) {
  const AttentionProblem& p = m.problem();
  const StepState& st = m.state();
  const Palette& pal = GetPalette();
  ImDrawList* dl = ImGui::GetWindowDrawList();
  const float thick = CursorThickness(ui.appearance.ui_scale);
  const int cur_i = st.info.i, cur_j = st.info.j;
  const int prev_hover_row = ui.cursor.hover_row, prev_hover_col = ui.cursor.hover_col;
  ui.cursor.hover_row = ui.cursor.hover_col = -1;

  const CellGrid gq{L.q, p.n, p.d}, gkt{L.kt, p.d, p.n}, gvt{L.vt, p.d, p.n}, go{L.o, p.n, p.d}, gs{L.s, p.n, p.n};

  // Q and O: rows in Q tiles.
  DrawImage(dl, InputTexture(m, 'Q', false), L.q);
  DrawImage(dl, OutputTexture(m), L.o);
  DrawRowTileWashes(dl, m, gq, false);
  DrawRowTileWashes(dl, m, go, true);
  DrawTileLines(dl, gq, p.br, 0, pal.grid);
  DrawTileLines(dl, go, p.br, 0, pal.grid);
  // Kᵀ and Vᵀ: columns in K/V tiles.
  DrawImage(dl, InputTexture(m, 'K', true), L.kt);
  DrawImage(dl, InputTexture(m, 'V', true), L.vt);
  DrawColumnTileWashes(dl, m, gkt);
  DrawColumnTileWashes(dl, m, gvt);
  DrawTileLines(dl, gkt, 0, p.bc, pal.grid);
  DrawTileLines(dl, gvt, 0, p.bc, pal.grid);

  // S: the status of every tile pair, and values only inside the current tile.
  DrawImage(dl, ScoreStatusTexture(m), L.s);
  const TileValues tv = CurrentTileValues(m);
  if (tv.values && st.rows > 0 && st.cols > 0)
    dl->AddImage(TileTexture(m, "S-current", *tv.values, tv.scale),
                 gs.Cells(st.row_begin, st.col_begin, st.row_begin + st.rows, st.col_begin + st.cols).min,
                 gs.Cells(st.row_begin, st.col_begin, st.row_begin + st.rows, st.col_begin + st.cols).max);
  if (p.causal && static_cast<std::int64_t>(p.tr()) * p.tc() <= 4096)
    for (int i = 0; i < p.tr(); ++i)
      for (int j = 0; j < p.tc(); ++j)
        if (!p.TilePairActive(i, j))
          DrawHatch(
              dl,
              gs.Cells(p.RowBegin(i), p.ColBegin(j), p.RowBegin(i) + p.RowsInTile(i), p.ColBegin(j) + p.ColsInTile(j)),
              pal.grid, 7.0f * ui.appearance.ui_scale);
  DrawTileLines(dl, gs, p.br, p.bc, pal.grid);

  DrawCrossHighlight(dl, gq, prev_hover_row, -1);
  DrawCrossHighlight(dl, go, prev_hover_row, -1);
  DrawCrossHighlight(dl, gs, prev_hover_row, prev_hover_col);
  DrawCrossHighlight(dl, gkt, -1, prev_hover_col);
  DrawCrossHighlight(dl, gvt, -1, prev_hover_col);

  // The cursor: the current tiles in every matrix at once.
  if (cur_i >= 0) {
    const int r0 = p.RowBegin(cur_i), r1 = r0 + p.RowsInTile(cur_i);
    const ScreenRect qr = gq.Cells(r0, 0, r1, p.d);
    DrawCursorRect(dl, qr, pal.cursor, thick);
    DrawCursorRect(dl, go.Cells(r0, 0, r1, p.d), pal.cursor, thick);
    if (FrameReport* report = CurrentFrameReport()) {
      report->q_tile_visible = true;
      report->q_tile = qr;
    }
    if (cur_j < 0) DrawWash(dl, gs.Cells(r0, 0, r1, p.n), pal.cursor_fill);
  }
  if (cur_j >= 0) {
    const int c0 = p.ColBegin(cur_j), c1 = c0 + p.ColsInTile(cur_j);
    DrawCursorRect(dl, gkt.Cells(0, c0, p.d, c1), pal.cursor, thick);
    DrawCursorRect(dl, gvt.Cells(0, c0, p.d, c1), pal.cursor, thick);
    if (cur_i < 0) DrawWash(dl, gs.Cells(0, c0, p.n, c1), pal.cursor_fill);
  }
  if (cur_i >= 0 && cur_j >= 0) {
    const ScreenRect sr = gs.Cells(st.row_begin, st.col_begin, st.row_begin + st.rows, st.col_begin + st.cols);
    DrawCursorRect(dl, sr, pal.cursor, thick);
    if (FrameReport* report = CurrentFrameReport()) {
      report->s_tile_visible = true;
      report->s_tile = sr;
    }
  }

  // Hover and clicks, per matrix.
  const ImVec2 mouse = ImGui::GetIO().MousePos;
  bool clicked = false;
  int row = 0, col = 0;
  if (HitArea("##Q", L.q, &clicked) && gq.CellAt(mouse, &row, &col)) {
    hovered = {ExplainInput(m, 'Q', row, col), true};
    ui.cursor.hover_row = row;
    if (clicked) ui.cursor.selected_row = row;
  }
  if (HitArea("##Kt", L.kt, &clicked) && gkt.CellAt(mouse, &row, &col)) {
    hovered = {ExplainInput(m, 'K', col, row), true};
    ui.cursor.hover_col = col;
  }
  if (HitArea("##Vt", L.vt, &clicked) && gvt.CellAt(mouse, &row, &col)) {
    hovered = {ExplainInput(m, 'V', col, row), true};
    ui.cursor.hover_col = col;
  }
  if (HitArea("##O", L.o, &clicked) && go.CellAt(mouse, &row, &col)) {
    hovered = {ExplainHbmOutput(m, row, col), true};
    ui.cursor.hover_row = row;
    if (clicked) ui.cursor.selected_row = row;
  }
  if (HitArea("##S", L.s, &clicked) && gs.CellAt(mouse, &row, &col)) {
    const int i = row / p.br, j = col / p.bc;
    ui.cursor.hover_row = row;
    ui.cursor.hover_col = col;
    if (m.PairStatus(i, j) == TileStatus::kCurrent && tv.values)
      hovered = {tv.is_p ? ExplainProbability(m, row - st.row_begin, col - st.col_begin)
                         : ExplainScore(m, row - st.row_begin, col - st.col_begin),
                 true};
    else
      hovered = {ExplainScoreTile(m, i, j), true};
    if (clicked)
      if (const auto first = m.schedule().FirstStepOfPair(i, j)) ui.cursor.step = *first;
  }
}

void LabelAt(ImVec2 pos, const char* text, const char* help) {
  ImGui::SetCursorScreenPos(pos);
  MathText(text);
  if (help) {
    ImGui::SameLine();
    HelpMarker(help);
  }
}

float LabelWidth(const char* text, bool help) {
  return CalcMathTextSize(text).x + (help ? ImGui::CalcTextSize("(?)").x + ImGui::GetStyle().ItemSpacing.x : 0);
}

void DrawMatrixLabels(const Model& m, const StepLayout& L) {
  const AttentionProblem& p = m.problem();
  const float spacing = ImGui::GetStyle().ItemSpacing.x;
  const float y_top = L.kt.min.y - L.label_h + (L.label_h - ImGui::GetTextLineHeight()) / 2 - 1;
  // Q and O above their columns; Kᵀ centred over its band, kept between them.
  const char* q_help = "Q (N × d): one query row per token. Q_i is tile i: B_r consecutive rows. Hover a cell for "
                       "its value; click to follow that row in the O_i view.";
  const char* o_help = "O (N × d) as it stands in HBM after this step. kv order: every O_i is rewritten after each "
                       "K/V tile, normalized over the keys seen so far. q order: O_i is written once, at write_back "
                       "(unwritten rows are blank).";
  const char* k_help = "Kᵀ (d × N): K transposed, so that K_j (B_c consecutive keys) is the column band j that S_ij "
                       "shares. S = scale·Q Kᵀ.";
  const char* v_help = "Vᵀ (d × N): V transposed, so that V_j lines up with K_j and with the columns of S_ij. "
                       "O_i = Σ_j P~_ij V_j (normalized).";
  LabelAt(ImVec2(L.q.min.x, y_top), "Q", nullptr);
  MathTooltip(q_help);
  LabelAt(ImVec2(L.o.min.x, y_top), m.hbm_output_current() ? "O" : "O …", nullptr);
  MathTooltip(o_help);
  const std::string kt = Sprintf("Kᵀ  (%d × %d)", p.d, p.n);
  const float kw = LabelWidth(kt.c_str(), true);
  const float kx = std::clamp(L.kt.min.x + (L.kt.width() - kw) / 2, L.q.max.x + spacing + CalcMathTextSize("Q").x,
                              std::max(L.q.max.x + spacing, L.o.min.x - kw - spacing));
  LabelAt(ImVec2(kx, y_top), kt.c_str(), k_help);
  const float y_bottom = L.vt.max.y + (L.label_h - ImGui::GetTextLineHeight()) / 2;
  const std::string vt = Sprintf("Vᵀ  (%d × %d)", p.d, p.n);
  const float vw = LabelWidth(vt.c_str(), true);
  LabelAt(ImVec2(std::max(L.q.min.x, L.vt.min.x + (L.vt.width() - vw) / 2), y_bottom), vt.c_str(), v_help);
  const std::string s = Sprintf("S (%d × %d, %d × %d tiles) is never stored", p.n, p.n, p.tr(), p.tc());
  LabelAt(
      ImVec2(L.q.min.x, y_bottom + L.label_h), s.c_str(),
      "S is drawn as its tiles. Only the current tile S_ij exists, in SRAM: it gets values at scores, becomes P~_ij "
      "at exp, and is thrown away when the tile pair ends. Finished tiles are shaded, pending ones plain, "
      "masked ones (causal) grey and hatched. Click a tile to jump to its first step.");
}

// ---------------------------------------------------------------------------------------------------------
// [SECTION] the tile, large
// ---------------------------------------------------------------------------------------------------------

// One tile grid with its per-row statistic beside it; numbers inside cells when they fit.
// `fade_from`: while the step's transition runs, those values (S_ij under P~_ij at exp) are drawn over the grid
// and fade out, so P~_ij appears in place of S_ij.
void DrawTileGrid(const Model& m, UiState& ui, const char* id, ScreenRect area, const std::vector<double>* values,
                  const ColorScale& scale, bool is_p, const std::vector<double>& row_stat, const char* stat_name,
                  Hovered& hovered, const std::vector<double>* fade_from = nullptr,
                  const ColorScale& fade_scale = ColorScale::Unit()) {
  const StepState& st = m.state();
  const Palette& pal = GetPalette();
  ImDrawList* dl = ImGui::GetWindowDrawList();
  const int rows = std::max(st.rows, 1), cols = std::max(st.cols, 1);
  ImFont* mono = MonoFont();
  const float mono_size = mono->FontSize;
  // Two decimals where they fit, else one.
  const float num_w2 = mono->CalcTextSizeA(mono_size, FLT_MAX, 0, "-0.00").x + 6;
  const float num_w1 = mono->CalcTextSizeA(mono_size, FLT_MAX, 0, "-0.0").x + 4;
  const float stat_share = 1.7f;
  float cell =
      std::min(area.width() / (static_cast<float>(cols) + stat_share + 0.3f), area.height() / static_cast<float>(rows));
  cell = std::floor(std::min(cell, 72.0f * ui.appearance.ui_scale));
  if (cell < 1) return;
  const bool numbers = cell >= num_w1 && cell >= mono_size + 4;
  const int decimals = cell >= num_w2 ? 2 : 1;
  const ScreenRect grid_rect =
      Rect(area.min.x, area.min.y, cell * static_cast<float>(cols), cell * static_cast<float>(rows));
  const float stat_x = grid_rect.max.x + cell * 0.3f;
  const ScreenRect stat_rect = Rect(stat_x, area.min.y, cell * stat_share, cell * static_cast<float>(rows));
  const CellGrid grid{grid_rect, rows, cols};

  if (!values || st.rows == 0 || st.cols == 0) {
    dl->AddRectFilled(grid_rect.min, grid_rect.max, pal.pending);
    dl->AddRect(grid_rect.min, grid_rect.max, ImGui::GetColorU32(ImGuiCol_Border));
    const Phase phase = st.info.phase;
    const char* text = st.rows == 0 || st.cols == 0 ? "no tile pair at this step"
                       : phase == Phase::kLoadKv || phase == Phase::kLoadQ || (!is_p && phase == Phase::kScores)
                           ? "not computed yet"
                       : phase == Phase::kWriteBack ? "discarded: the tile pair is done"
                                                    : "not computed yet";
    const ImVec2 size = ImGui::CalcTextSize(text);
    // Inside the empty tile when it fits, else just under it.
    const ImVec2 at = size.x + 8 < grid_rect.width() ? ImVec2(grid_rect.min.x + (grid_rect.width() - size.x) / 2,
                                                              grid_rect.min.y + (grid_rect.height() - size.y) / 2)
                                                     : ImVec2(grid_rect.min.x, grid_rect.max.y + 2);
    dl->AddText(at, pal.dim, text);
    return;
  }
  DrawImage(dl, TileTexture(m, id, *values, scale), grid_rect);
  if (fade_from && InTransition(ui) && fade_from->size() == values->size()) {
    const auto alpha = static_cast<int>(255.0 * (1.0 - TransitionEase(ui)));
    dl->AddImage(TileTexture(m, (std::string(id) + "-fade").c_str(), *fade_from, fade_scale), grid_rect.min,
                 grid_rect.max, ImVec2(0, 0), ImVec2(1, 1), IM_COL32(255, 255, 255, alpha));
  }
  if (cell >= 6) DrawTileLines(dl, grid, 1, 1, pal.grid);
  if (FrameReport* report = CurrentFrameReport()) report->tile_numbers_shown = numbers;
  if (numbers)
    for (int r = 0; r < rows; ++r)
      for (int c = 0; c < cols; ++c) {
        const double v = (*values)[static_cast<std::size_t>(r) * cols + c];
        const std::string text = CellNum(v, decimals);
        const ScreenRect cr = grid.Cells(r, c, r + 1, c + 1);
        const ImVec2 size = mono->CalcTextSizeA(mono_size, FLT_MAX, 0, text.c_str());
        ColorScale masked_scale = scale;
        masked_scale.masked = pal.masked;
        dl->AddText(mono, mono_size,
                    ImVec2(cr.min.x + (cr.width() - size.x) / 2, cr.min.y + (cr.height() - size.y) / 2),
                    ContrastingText(masked_scale(v)), text.c_str());
      }
  // The row statistic (m~ or ℓ~) as a column of numbers or small bars.
  if (!row_stat.empty()) {
    dl->AddRect(stat_rect.min, stat_rect.max, ImGui::GetColorU32(ImGuiCol_Border));
    double top = 0;
    for (double v : row_stat)
      if (std::isfinite(v)) top = std::max(top, std::abs(v));
    for (int r = 0; r < rows && r < static_cast<int>(row_stat.size()); ++r) {
      const ScreenRect cr =
          Rect(stat_rect.min.x, stat_rect.min.y + cell * static_cast<float>(r), stat_rect.width(), cell);
      const double v = row_stat[static_cast<std::size_t>(r)];
      if (numbers) {
        const std::string text = CellNum(v, decimals);
        const ImVec2 size = mono->CalcTextSizeA(mono_size, FLT_MAX, 0, text.c_str());
        dl->AddText(mono, mono_size, ImVec2(cr.max.x - size.x - 3, cr.min.y + (cr.height() - size.y) / 2),
                    ImGui::GetColorU32(ImGuiCol_Text), text.c_str());
      } else if (std::isfinite(v) && top > 0) {
        const float w = static_cast<float>(std::abs(v) / top) * (cr.width() - 2);
        dl->AddRectFilled(ImVec2(cr.min.x + 1, cr.min.y + 1), ImVec2(cr.min.x + 1 + w, cr.max.y - (cell > 3 ? 1 : 0)),
                          v < 0 ? DivergingColor(-0.6) : DivergingColor(0.6));
      }
    }
    const ImVec2 name_size = CalcMathTextSize(stat_name);
    if (stat_rect.max.y + name_size.y < area.max.y + ImGui::GetTextLineHeight())
      DrawMathText(dl, ImVec2(stat_rect.min.x, stat_rect.max.y + 1), pal.dim, stat_name);
  }
  DrawCrossHighlight(dl, grid, ui.cursor.hover_row - st.row_begin, ui.cursor.hover_col - st.col_begin);

  bool clicked = false;
  int r = 0, c = 0;
  const ImVec2 mouse = ImGui::GetIO().MousePos;
  ImGui::PushID(id);
  if (HitArea("##grid", grid_rect, &clicked) && grid.CellAt(mouse, &r, &c)) {
    hovered = {is_p ? ExplainProbability(m, r, c) : ExplainScore(m, r, c), true};
    ui.cursor.hover_row = st.row_begin + r;
    ui.cursor.hover_col = st.col_begin + c;
    if (clicked) ui.cursor.selected_row = st.row_begin + r;
  }
  if (!row_stat.empty() && HitArea("##stat", stat_rect, &clicked)) {
    const int rr = std::clamp(static_cast<int>((mouse.y - stat_rect.min.y) / cell), 0, rows - 1);
    hovered = {is_p ? ExplainTileSum(m, rr) : ExplainTileMax(m, rr), true};
    ui.cursor.hover_row = st.row_begin + rr;
  }
  ImGui::PopID();
}

void DrawTileZoom(const Model& m, UiState& ui, const StepLayout& L, Hovered& hovered) {
  const StepState& st = m.state();
  const TileNumerics& t = st.tile;
  const bool kv = m.problem().order == LoopOrder::kKvOuter;
  const float line = ImGui::GetFrameHeightWithSpacing();
  const float grid_h = std::floor((L.zoom.height() - 2 * line - ImGui::GetTextLineHeightWithSpacing() * 2) / 2);

  ImGui::SetCursorScreenPos(L.zoom.min);
  SectionTitle("S_ij = scale·Q_i K_jᵀ",
               "The scores of the current tile pair: B_r query rows against B_c keys, computed in SRAM at the scores "
               "phase. The column on the right is the row maximum (m~_ij in Algorithm 1, rowmax(S_ij) in the Q-outer "
               "order). Hover a cell for the dot product with its numbers.");
  const float y1 = ImGui::GetCursorScreenPos().y;
  const std::vector<double>* s_values = t.s.empty() ? nullptr : &t.s;
  const ColorScale s_scale = ColorScale::Symmetric(t.s.empty() ? 1.0 : FiniteAbsMax(t.s));
  DrawTileGrid(m, ui, "zoom-S", Rect(L.zoom.min.x, y1, L.zoom.width(), grid_h), s_values, s_scale, false, t.m_tile,
               kv ? "m~_ij" : "max", hovered);

  const float y2 = y1 + grid_h + ImGui::GetTextLineHeightWithSpacing() + 4;
  ImGui::SetCursorScreenPos(ImVec2(L.zoom.min.x, y2));
  SectionTitle(kv ? "P~_ij = exp(S_ij − m~_ij)" : "P~_ij = exp(S_ij − m_i)",
               kv ? "Unnormalized probabilities of this tile: each row shifted by its own tile maximum m~_ij, so each "
                    "row's largest entry is 1. P~_ij overwrites S_ij in SRAM. The column on the right is the row sum "
                    "ℓ~_ij."
                  : "Unnormalized probabilities against the running maximum m_i (already updated at rowmax). P~_ij "
                    "overwrites S_ij in SRAM. The column on the right is rowsum(P~_ij).");
  const float y3 = ImGui::GetCursorScreenPos().y;
  // At exp, P~_ij appears in place of S_ij: S fades out over it during the step's transition.
  const bool exp_now = st.info.phase == Phase::kExp && !t.s.empty();
  DrawTileGrid(m, ui, "zoom-P", Rect(L.zoom.min.x, y3, L.zoom.width(), grid_h), t.p.empty() ? nullptr : &t.p,
               ColorScale::Unit(), true, t.l_tile, kv ? "ℓ~_ij" : "sum", hovered, exp_now ? &t.s : nullptr, s_scale);
}

// ---------------------------------------------------------------------------------------------------------
// [SECTION] legends and the panel
// ---------------------------------------------------------------------------------------------------------

void DrawLegends(const Model& m, float width) {
  // Four legends on one line: the bars get what the labels and numbers leave.
  const float text = ImGui::CalcTextSize("Q, Kᵀ, Vᵀ -2.99 +2.99 O -2.99 +2.99 S_ij -9.99 +9.99 P~_ij 0 +1").x +
                     ImGui::GetStyle().ItemSpacing.x * 12 + 3 * 18;
  const float bar = std::clamp((width - text) / 4, 24.0f, 120.0f);
  DrawColorLegend("Q, Kᵀ, Vᵀ", ColorScale::Symmetric(InputAbsMax(m)), bar);
  ImGui::SameLine(0, 18);
  DrawColorLegend("O", ColorScale::Symmetric(OutputAbsMax(m)), bar);
  ImGui::SameLine(0, 18);
  const TileNumerics& t = m.state().tile;
  DrawColorLegend("S_ij", ColorScale::Symmetric(t.s.empty() ? 1.0 : FiniteAbsMax(t.s)), bar);
  ImGui::SameLine(0, 18);
  DrawColorLegend("P~_ij", ColorScale::Unit(), bar);
}

}  // namespace

void DrawStepPanel(const Model& model, UiState& ui) {
  if (!model.has_problem()) {
    ImGui::TextDisabled("No problem loaded: choose one in the sidebar.");
    return;
  }
  const ImVec2 origin = ImGui::GetCursorScreenPos();
  const ImVec2 avail = ImGui::GetContentRegionAvail();
  if (avail.x < 120 || avail.y < 120) {
    ImGui::TextDisabled("The window is too small for the step view.");
    return;
  }
  if (model.ring_mode()) return DrawRingStepPanel(model, ui);
  if (model.decode_mode()) return DrawDecodeStepPanel(model, ui);
  if (model.problem().backward()) return DrawBackwardStepPanel(model, ui);
  const float legend_h = ImGui::GetFrameHeightWithSpacing();
  const StepLayout L = ComputeStepLayout(origin, avail, model.problem(),
                                         ui.appearance.ui_scale * (ui.appearance.presentation ? 1.2f : 1.0f),
                                         ImGui::GetFrameHeight(), legend_h);
  Hovered hovered;
  DrawMatrices(model, ui, L, hovered);
  if (FrameReport* report = CurrentFrameReport()) {
    report->step_view_drawn = true;
    report->step_q = L.q;
    report->step_kt = L.kt;
    report->step_s = L.s;
    report->step_vt = L.vt;
    report->step_o = L.o;
    report->step_zoom = L.zoom;
    report->step_area = {origin, ImVec2(origin.x + avail.x, origin.y + avail.y)};
  }
  DrawMatrixLabels(model, L);
  DrawTileZoom(model, ui, L, hovered);
  ImGui::SetCursorScreenPos(ImVec2(origin.x, origin.y + avail.y - legend_h + 2));
  DrawLegends(model, avail.x);
  if (hovered.any) ShowExplanation(hovered.explanation);
}

}  // namespace flashviz
