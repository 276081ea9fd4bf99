#include "viz/heatmap.h"

#include <algorithm>
#include <cmath>

namespace flashviz {

void FillMatrixImage(int rows, int cols, const std::function<double(int, int)>& value, const ColorScale& scale,
                     RgbaImage& image, int max_w, int max_h) {
  const int w = std::max(1, std::min(cols, max_w));
  const int h = std::max(1, std::min(rows, max_h));
  image.Resize(w, h);
  if (rows <= 0 || cols <= 0) return;
  for (int y = 0; y < h; ++y) {
    // Texel centre → cell: exact when the image has one texel per cell.
    const int r = static_cast<int>((static_cast<std::int64_t>(y) * 2 + 1) * rows / (2 * static_cast<std::int64_t>(h)));
    for (int x = 0; x < w; ++x) {
      const int c =
          static_cast<int>((static_cast<std::int64_t>(x) * 2 + 1) * cols / (2 * static_cast<std::int64_t>(w)));
      image.at(x, y) = scale(value(r, c));
    }
  }
}

ScreenRect CellGrid::Cells(int r0, int c0, int r1, int c1) const {
  const float cw = cell_w(), ch = cell_h();
  return {ImVec2(rect.min.x + cw * static_cast<float>(c0), rect.min.y + ch * static_cast<float>(r0)),
          ImVec2(rect.min.x + cw * static_cast<float>(c1), rect.min.y + ch * static_cast<float>(r1))};
}

bool CellGrid::CellAt(ImVec2 p, int* row, int* col) const {
  if (!rect.Contains(p) || rows <= 0 || cols <= 0) return false;
  *col = std::clamp(static_cast<int>((p.x - rect.min.x) / cell_w()), 0, cols - 1);
  *row = std::clamp(static_cast<int>((p.y - rect.min.y) / cell_h()), 0, rows - 1);
  return true;
}

void DrawImage(ImDrawList* dl, ImTextureID texture, const ScreenRect& rect) {
  if (texture) dl->AddImage(texture, rect.min, rect.max);
  dl->AddRect(rect.min, rect.max, ImGui::GetColorU32(ImGuiCol_Border));
}

void DrawTileLines(ImDrawList* dl, const CellGrid& grid, int row_step, int col_step, ImU32 color) {
  constexpr float kMinGap = 3.0f;
  if (row_step > 0 && row_step < grid.rows && grid.cell_h() * static_cast<float>(row_step) >= kMinGap)
    for (int r = row_step; r < grid.rows; r += row_step) {
      const float y = std::floor(grid.rect.min.y + grid.cell_h() * static_cast<float>(r)) + 0.5f;
      dl->AddLine(ImVec2(grid.rect.min.x, y), ImVec2(grid.rect.max.x, y), color);
    }
  if (col_step > 0 && col_step < grid.cols && grid.cell_w() * static_cast<float>(col_step) >= kMinGap)
    for (int c = col_step; c < grid.cols; c += col_step) {
      const float x = std::floor(grid.rect.min.x + grid.cell_w() * static_cast<float>(c)) + 0.5f;
      dl->AddLine(ImVec2(x, grid.rect.min.y), ImVec2(x, grid.rect.max.y), color);
    }
}

void DrawCursorRect(ImDrawList* dl, const ScreenRect& rect, ImU32 color, float thickness) {
  // Grown so that even a one-pixel tile shows a visible frame.
  const float g = thickness * 0.5f;
  dl->AddRect(ImVec2(rect.min.x - g, rect.min.y - g), ImVec2(rect.max.x + g, rect.max.y + g), color, 0.0f, 0,
              thickness);
}

void DrawHatch(ImDrawList* dl, const ScreenRect& rect, ImU32 color, float spacing) {
  if (rect.width() <= 0 || rect.height() <= 0) return;
  dl->PushClipRect(rect.min, rect.max, true);
  const float span = rect.width() + rect.height();
  for (float t = 0; t < span; t += spacing)
    dl->AddLine(ImVec2(rect.min.x + t, rect.min.y), ImVec2(rect.min.x + t - rect.height(), rect.max.y), color);
  dl->PopClipRect();
}

void DrawWash(ImDrawList* dl, const ScreenRect& rect, ImU32 color) {
  if (rect.width() <= 0 || rect.height() <= 0) return;
  dl->AddRectFilled(rect.min, rect.max, color);
}

}  // namespace flashviz
