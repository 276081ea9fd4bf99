// THE PANEL TABLE. Every view of the GUI is one row of kPanels (panel_table.cpp) and one file in viz/panels/
// holding its draw function, `void DrawXxxPanel(const Model&, UiState&)` (docs/design.md, principle 6).
//
// To add a panel (as the benchmark, the Vortex view and the live GPU view were added):
//   1. write viz/panels/xxx_panel.cpp with `void DrawXxxPanel(const Model& model, UiState& ui)`; it draws into
//      the current ImGui window (the layout opened it: a tab, a column or the sidebar) and reads the model only;
//      it asks for changes through UiState (ui.cursor.step, ui.form + ui.requests.Push(UiRequest::kApplyForm), ...).
//      State of its own that must survive a frame or go into sessions: a struct in its header, kept under the
//      panel's id in UiState::panel_state, with an accessor beside it (see VortexState in vortex_panel.h).
//   2. declare it in viz/panels/panels.h and add one row to kPanels below the others:
//        {"xxx", "Title", PanelSlot::kCentreTab, /*open_by_default=*/true, 1.0f, &DrawXxxPanel, "what it shows"},
//   3. add the file to viz/CMakeLists.txt.
// The row's id is what `flashviz --panel xxx` opens and focuses, the key of its visibility flag
// (UiState::panel_open[id]) and its name in session files; the View menu lists every row.
#pragma once

#include <span>
#include <string>
#include <string_view>

#include "viz/model.h"
#include "viz/ui_state.h"

namespace flashviz {

enum class PanelSlot {
  kSidebar,    // left column, stacked (parameters, playback)
  kCentreTab,  // one tab of the centre area (the step view, traffic, ...)
  kRight,      // right column, stacked, heights shared by `weight` (m/ℓ, O_i)
  kBottom,     // along the bottom (timeline and narration)
};

using PanelDrawFn = void (*)(const Model&, UiState&);

struct PanelInfo {
  const char* id;        // --panel NAME, UiState::panel_open key, session files
  const char* title;     // tab or window title (no "~" markers: title bars draw plain text)
  PanelSlot slot;
  bool open_by_default;
  float weight;          // share of its column's height (kSidebar, kRight)
  PanelDrawFn draw;
  const char* summary;   // one line for the View menu's tooltip
};

std::span<const PanelInfo> Panels();
const PanelInfo* FindPanel(std::string_view id);
bool IsPanelOpen(const UiState& ui, const PanelInfo& panel);
// Whether the panel has something to show for the model's problem: decoding has its own step view, traffic,
// timeline and sidebar; the forward pass's statistics, output row, algorithm, Vortex, benchmark and live GPU
// views stay closed while it is loaded (their open flags are kept for when the forward problem returns).
bool PanelApplies(const PanelInfo& panel, const Model& model);
bool PanelShown(const UiState& ui, const Model& model, const PanelInfo& panel);
void SetPanelOpen(UiState& ui, const PanelInfo& panel, bool open);
// Opens the panel and, for a centre tab, brings it to the front. False when no panel has that id.
bool FocusPanel(UiState& ui, std::string_view id);
// The title the panel shows for this problem: the right column's panels say what they hold in the backward pass
// ("Row statistics: L_i, D_i", "Output row dQ_i"). Plain notation, as title bars draw it.
std::string PanelTitle(const PanelInfo& panel, const Model& model);
// "step, traffic, ..." for messages.
std::string PanelIdList();

}  // namespace flashviz
