// The tiles on chip drawn large, with their numbers when they fit: a rows × cols grid of numbers over their colours,
// an optional per-row column beside it (a statistic as bars), and the hover explanation of every cell. The step
// views of the backward pass and of decoding both draw their tiles with it.
#pragma once

#include <cstdint>
#include <functional>
#include <vector>

#include "viz/colormap.h"
#include "viz/formulas.h"
#include "viz/heatmap.h"
#include "viz/ui_state.h"

namespace flashviz {

// A screen rectangle with whole-pixel corners.
ScreenRect Rect(float x, float y, float w, float h);
// The largest finite |v| (1 when there is none): a colour range.
double FiniteAbsMax(const std::vector<double>& v);
double AbsMax(const std::vector<float>& v);

// What the pointer is over this frame (shown as one tooltip after the view is drawn).
struct Hovered {
  Explanation explanation;
  bool any = false;
};

// An invisible button over `rect`: true while the pointer is over it.
bool HitArea(const char* id, const ScreenRect& rect);

using CellExplainer = std::function<Explanation(int r, int c)>;
using RowExplainer = std::function<Explanation(int r)>;

// A rows × cols grid of numbers (when they fit) over their colours, with an optional per-row column beside it
// (`row_stat`, drawn as bars with `stat_name` under it). `values` null or of the wrong size draws an empty grid
// with `empty_text`. `version` keys the texture; `row_offset_for_hover` ≥ 0 sets ui.cursor.hover_row. Returns the
// grid's rectangle (recorded in the frame report's tile_grids).
ScreenRect DrawNumberGrid(const char* id, UiState& ui, ScreenRect area, int rows, int cols,
                          const std::vector<double>* values, const ColorScale& scale,
                          const std::vector<double>* row_stat, const char* stat_name, const CellExplainer& explain,
                          const RowExplainer& explain_row, const char* empty_text, std::uint64_t version,
                          Hovered& hovered, int row_offset_for_hover);

// A step view in two areas: a margin for the cursor frames drawn just outside their tiles, then a left area
// `left_w(avail.x)` wide beside the right one, or (narrower than 640 px at scale 1) `stacked_left_share` of the
// height above it.
struct StepViewAreas {
  ImVec2 origin, avail;  // the whole view
  ScreenRect left, right;
};
StepViewAreas SplitStepView(const UiState& ui, const std::function<float(float avail_x)>& left_w,
                            float stacked_left_share);
// Reports where the view went (its zoom: the right area), leaves the cursor under the view and shows the hover.
void FinishStepView(const StepViewAreas& areas, const Hovered& hovered);

// The title with the step's formula when it fits in `width` (with its "(?)"), else the short one.
const char* FittingTitle(const char* full, const char* brief, float width);

}  // namespace flashviz
