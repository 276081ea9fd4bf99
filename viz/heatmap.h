// Heatmaps of matrices: an image per matrix (point-sampled when larger than the texture cap, never drawn
// cell by cell) stretched over a screen rectangle, with exact cell lookup for hover, tile lines, the cursor
// and the status washes (finished tiles faded, masked tiles greyed).
#pragma once

#include <imgui.h>

#include <functional>

#include "viz/colormap.h"
#include "viz/texture.h"

namespace flashviz {

struct ScreenRect {
  ImVec2 min, max;
  float width() const { return max.x - min.x; }
  float height() const { return max.y - min.y; }
  bool Contains(ImVec2 p) const { return p.x >= min.x && p.y >= min.y && p.x < max.x && p.y < max.y; }
};

// The most texels an image gets per side; larger matrices are point-sampled (texel centre → cell).
inline constexpr int kMaxTexelsPerSide = 2048;

// Fills `image` with `rows` × `cols` cells (at most max_w × max_h texels, point-sampled).
void FillMatrixImage(int rows, int cols, const std::function<double(int row, int col)>& value,
                     const ColorScale& scale, RgbaImage& image, int max_w = kMaxTexelsPerSide,
                     int max_h = kMaxTexelsPerSide);

// A rows × cols grid of cells stretched over a screen rectangle.
struct CellGrid {
  ScreenRect rect;
  int rows = 1, cols = 1;
  float cell_w() const { return rect.width() / static_cast<float>(cols); }
  float cell_h() const { return rect.height() / static_cast<float>(rows); }
  // The rectangle of cells [r0, r1) × [c0, c1).
  ScreenRect Cells(int r0, int c0, int r1, int c1) const;
  // The cell under `p`, or false outside the grid.
  bool CellAt(ImVec2 p, int* row, int* col) const;
};

void DrawImage(ImDrawList* dl, ImTextureID texture, const ScreenRect& rect);
// Lines at every multiple of `row_step` rows and `col_step` columns (0: none), only where they are at
// least 3 px apart, so a 1024-row matrix does not turn grey with lines.
void DrawTileLines(ImDrawList* dl, const CellGrid& grid, int row_step, int col_step, ImU32 color);
void DrawCursorRect(ImDrawList* dl, const ScreenRect& rect, ImU32 color, float thickness);
// Diagonal hatching (masked tiles), clipped to `rect`.
void DrawHatch(ImDrawList* dl, const ScreenRect& rect, ImU32 color, float spacing);
// A light wash with a frame: what lies outside the data (e.g. rows of O not yet written).
void DrawWash(ImDrawList* dl, const ScreenRect& rect, ImU32 color);

}  // namespace flashviz
