#include "viz/panels/number_grid.h"

#include <algorithm>
#include <cfloat>
#include <cmath>

#include "viz/frame_report.h"
#include "viz/widgets.h"

namespace flashviz {

ScreenRect Rect(float x, float y, float w, float h) {
  return {ImVec2(std::floor(x), std::floor(y)), ImVec2(std::floor(x + w), std::floor(y + h))};
}

double FiniteAbsMax(const std::vector<double>& v) {
  double m = 0;
  for (double x : v)
    if (std::isfinite(x)) m = std::max(m, std::abs(x));
  return m > 0 ? m : 1.0;
}

double AbsMax(const std::vector<float>& v) {
  double m = 0;
  for (float x : v) m = std::max(m, static_cast<double>(std::abs(x)));
  return m > 0 ? m : 1.0;
}

bool HitArea(const char* id, const ScreenRect& rect) {
  ImGui::SetCursorScreenPos(rect.min);
  ImGui::InvisibleButton(id, ImVec2(std::max(rect.width(), 1.0f), std::max(rect.height(), 1.0f)));
  return ImGui::IsItemHovered();
}

ScreenRect DrawNumberGrid(const char* id, UiState& ui, ScreenRect area, int rows, int cols,
                          const std::vector<double>* values, const ColorScale& scale,
                          const std::vector<double>* row_stat, const char* stat_name, const CellExplainer& explain,
                          const RowExplainer& explain_row, const char* empty_text, std::uint64_t version,
                          Hovered& hovered, int row_offset_for_hover) {
  const Palette& pal = GetPalette();
  ImDrawList* dl = ImGui::GetWindowDrawList();
  rows = std::max(rows, 1);
  cols = std::max(cols, 1);
  ImFont* mono = MonoFont();
  const float mono_size = mono->FontSize;
  const float num_w2 = mono->CalcTextSizeA(mono_size, FLT_MAX, 0, "-0.00").x + 6;
  const float num_w1 = mono->CalcTextSizeA(mono_size, FLT_MAX, 0, "-0.0").x + 4;
  const float stat_share = row_stat ? 1.7f : 0.0f;
  float cell =
      std::min(area.width() / (static_cast<float>(cols) + stat_share + 0.3f), area.height() / static_cast<float>(rows));
  cell = std::floor(std::min(cell, 80.0f * ui.appearance.ui_scale));
  if (cell < 1) return {area.min, area.min};
  const ScreenRect grid_rect =
      Rect(area.min.x, area.min.y, cell * static_cast<float>(cols), cell * static_cast<float>(rows));
  const CellGrid grid{grid_rect, rows, cols};
  FrameReport* report = CurrentFrameReport();
  if (report) report->tile_grids.push_back(grid_rect);
  if (!values || values->size() != static_cast<std::size_t>(rows) * cols) {
    dl->AddRectFilled(grid_rect.min, grid_rect.max, pal.pending);
    dl->AddRect(grid_rect.min, grid_rect.max, ImGui::GetColorU32(ImGuiCol_Border));
    const ImVec2 size = ImGui::CalcTextSize(empty_text);
    const ImVec2 at = size.x + 8 < grid_rect.width() ? ImVec2(grid_rect.min.x + (grid_rect.width() - size.x) / 2,
                                                              grid_rect.min.y + (grid_rect.height() - size.y) / 2)
                                                     : ImVec2(grid_rect.min.x, grid_rect.max.y + 2);
    dl->AddText(at, pal.dim, empty_text);
    return grid_rect;
  }
  ColorScale with_mask = scale;
  with_mask.masked = pal.masked;
  DrawImage(dl,
            CachedTexture(id, version,
                          [&](RgbaImage& image) {
                            FillMatrixImage(
                                rows, cols,
                                [&](int r, int c) { return (*values)[static_cast<std::size_t>(r) * cols + c]; },
                                with_mask, image);
                          }),
            grid_rect);
  if (cell >= 6) DrawTileLines(dl, grid, 1, 1, pal.grid);
  const bool numbers = cell >= num_w1 && cell >= mono_size + 4;
  if (report) report->tile_numbers_shown = numbers;
  const int decimals = cell >= num_w2 ? 2 : 1;
  if (numbers)
    for (int r = 0; r < rows; ++r)
      for (int c = 0; c < cols; ++c) {
        const double v = (*values)[static_cast<std::size_t>(r) * cols + c];
        if (std::isnan(v)) continue;  // a value that does not exist yet (a partial not written): no number
        const std::string text = CellNum(v, decimals);
        const ScreenRect cr = grid.Cells(r, c, r + 1, c + 1);
        const ImVec2 size = mono->CalcTextSizeA(mono_size, FLT_MAX, 0, text.c_str());
        dl->AddText(mono, mono_size,
                    ImVec2(cr.min.x + (cr.width() - size.x) / 2, cr.min.y + (cr.height() - size.y) / 2),
                    ContrastingText(with_mask(v)), text.c_str());
      }
  ScreenRect stat_rect{};
  if (row_stat && row_stat->size() == static_cast<std::size_t>(rows)) {
    stat_rect = Rect(grid_rect.max.x + cell * 0.3f, area.min.y, cell * stat_share, cell * static_cast<float>(rows));
    dl->AddRect(stat_rect.min, stat_rect.max, ImGui::GetColorU32(ImGuiCol_Border));
    const double top = FiniteAbsMax(*row_stat);
    for (int r = 0; r < rows; ++r) {
      const ScreenRect cr =
          Rect(stat_rect.min.x, stat_rect.min.y + cell * static_cast<float>(r), stat_rect.width(), cell);
      const double v = (*row_stat)[static_cast<std::size_t>(r)];
      if (std::isfinite(v)) {  // D_i as a bar: its sign and size against the tile's largest
        const float w = static_cast<float>(std::abs(v) / top) * (cr.width() - 2);
        dl->AddRectFilled(ImVec2(cr.min.x + 1, cr.min.y + 1), ImVec2(cr.min.x + 1 + w, cr.max.y - 1),
                          v < 0 ? DivergingColor(-0.45) : DivergingColor(0.45));
      }
      if (numbers) {
        const std::string text = CellNum(v, decimals);
        const ImVec2 size = mono->CalcTextSizeA(mono_size, FLT_MAX, 0, text.c_str());
        // A shadow in the window's colour keeps the digits legible where the bar ends under them.
        const ImVec2 at(cr.max.x - size.x - 3, cr.min.y + (cr.height() - size.y) / 2);
        for (const ImVec2 offset : {ImVec2(1, 1), ImVec2(-1, -1), ImVec2(1, -1), ImVec2(-1, 1)})
          dl->AddText(mono, mono_size, ImVec2(at.x + offset.x, at.y + offset.y), ImGui::GetColorU32(ImGuiCol_WindowBg),
                      text.c_str());
        dl->AddText(mono, mono_size, at, ImGui::GetColorU32(ImGuiCol_Text), text.c_str());
      }
    }
    DrawMathText(dl, ImVec2(stat_rect.min.x, stat_rect.max.y + 1), pal.dim, stat_name);
  }
  const ImVec2 mouse = ImGui::GetIO().MousePos;
  int r = 0, c = 0;
  ImGui::PushID(id);
  if (HitArea("##grid", grid_rect) && grid.CellAt(mouse, &r, &c)) {
    hovered = {explain(r, c), true};
    if (row_offset_for_hover >= 0) ui.cursor.hover_row = row_offset_for_hover + r;
  }
  if (row_stat && stat_rect.width() > 0 && HitArea("##stat", stat_rect)) {
    const int rr = std::clamp(static_cast<int>((mouse.y - stat_rect.min.y) / cell), 0, rows - 1);
    hovered = {explain_row(rr), true};
  }
  ImGui::PopID();
  return grid_rect;
}

const char* FittingTitle(const char* full, const char* brief, float width) {
  const float help = ImGui::CalcTextSize("(?)").x + ImGui::GetStyle().ItemSpacing.x * 2;
  return CalcMathTextSize(full).x + help <= width ? full : brief;
}

StepViewAreas SplitStepView(const UiState& ui, const std::function<float(float avail_x)>& left_w,
                            float stacked_left_share) {
  StepViewAreas a;
  const float margin = std::ceil(std::max(2.0f, 2.5f * ui.appearance.ui_scale)) + 1;
  a.origin = ImGui::GetCursorScreenPos();
  a.avail = ImGui::GetContentRegionAvail();
  const ImVec2 origin(a.origin.x + margin, a.origin.y + margin);
  const ImVec2 avail(a.avail.x - 2 * margin, a.avail.y - 2 * margin);
  const bool stacked = avail.x < 640.0f * ui.appearance.ui_scale;
  const float gap = 12.0f * ui.appearance.ui_scale;
  const float w = stacked ? avail.x : std::floor(left_w(avail.x));
  const float h = stacked ? std::floor(avail.y * stacked_left_share) : avail.y;
  a.left = {origin, ImVec2(origin.x + w, origin.y + h)};
  a.right = stacked ? ScreenRect{ImVec2(origin.x, origin.y + h + gap), ImVec2(origin.x + avail.x, origin.y + avail.y)}
                    : ScreenRect{ImVec2(origin.x + w + gap, origin.y), ImVec2(origin.x + avail.x, origin.y + avail.y)};
  return a;
}

void FinishStepView(const StepViewAreas& a, const Hovered& hovered) {
  if (FrameReport* report = CurrentFrameReport()) {
    report->step_view_drawn = true;
    report->step_area = {a.origin, ImVec2(a.origin.x + a.avail.x, a.origin.y + a.avail.y)};
    report->step_zoom = a.right;
  }
  ImGui::SetCursorScreenPos(ImVec2(a.origin.x, a.origin.y + a.avail.y));
  if (hovered.any) ShowExplanation(hovered.explanation);
}

}  // namespace flashviz
