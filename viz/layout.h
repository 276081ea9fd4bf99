// The frame's UI: the menu bar and the panels of the panel table placed in their slots — a sidebar on the
// left, the centre tabs, a right column, the timeline along the bottom — sized from the display so that
// nothing overlaps at 1280×720 and the whole step view fits at 1920×1080.
#pragma once

#include <imgui.h>

#include "viz/heatmap.h"
#include "viz/model.h"
#include "viz/ui_state.h"

namespace flashviz {

struct UiLayout {
  ScreenRect sidebar, centre, right, bottom;
  bool has_sidebar = false, has_right = false, has_bottom = false;
};

// The slots for a display of `display` pixels below a menu bar of `menu_h`, with a bottom strip of `bottom_h`.
// `sidebar_w` and `right_w`, when given (≥ 0), replace the columns' widths (presentation mode's strips).
UiLayout ComputeUiLayout(ImVec2 display, float menu_h, float bottom_h, float ui_scale, bool sidebar, bool right,
                         bool bottom, float sidebar_w = -1, float right_w = -1);
// The widths the sidebar and the right column take when open, for `display` and the layout scale.
float SidebarWidth(float display_w, float ui_scale);
float RightColumnWidth(float display_w, float ui_scale);

// Draws everything for one frame (between ImGui::NewFrame and ImGui::Render).
void DrawUi(const Model& model, UiState& ui);

}  // namespace flashviz
