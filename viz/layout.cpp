// [SECTION] slot geometry
// [SECTION] menu bar, session dialogs, shortcut window
// [SECTION] the slots
#include "viz/layout.h"

#include <imgui_stdlib.h>

#include <algorithm>
#include <cmath>
#include <string>

#include "kernels/common/format.h"
#include "viz/frame_report.h"
#include "viz/export.h"
#include "viz/file_picker.h"
#include "viz/lessons.h"
#include "viz/panels/lesson_panel.h"
#include "viz/panels/panel_table.h"
#include "viz/widgets.h"

namespace flashviz {
namespace {

constexpr ImGuiWindowFlags kFixed = ImGuiWindowFlags_NoMove | ImGuiWindowFlags_NoResize | ImGuiWindowFlags_NoCollapse |
                                    ImGuiWindowFlags_NoSavedSettings | ImGuiWindowFlags_NoBringToFrontOnFocus;

}  // namespace

// ---------------------------------------------------------------------------------------------------------
// [SECTION] slot geometry
// ---------------------------------------------------------------------------------------------------------

float SidebarWidth(float display_w, float s) { return std::floor(std::min(300.0f * s, display_w * 0.30f)); }
float RightColumnWidth(float w, float s) {
  return std::floor(std::min(std::clamp(w * 0.27f, 320.0f * s, 560.0f * s), w * 0.34f));
}

UiLayout ComputeUiLayout(ImVec2 display, float menu_h, float bottom_h, float s, bool sidebar, bool right, bool bottom,
                         float sidebar_w, float right_w_given) {
  UiLayout L;
  const float w = std::floor(display.x), h = std::floor(display.y);
  const float side_w = !sidebar ? 0.0f : sidebar_w >= 0 ? std::floor(sidebar_w) : SidebarWidth(w, s);
  const float right_w = !right ? 0.0f : right_w_given >= 0 ? std::floor(right_w_given) : RightColumnWidth(w, s);
  const float bottom_hh = bottom ? std::floor(std::min(bottom_h, (h - menu_h) * 0.35f)) : 0.0f;
  const float top = std::floor(menu_h);
  const float body_bottom = h - bottom_hh;
  L.has_sidebar = sidebar;
  L.has_right = right;
  L.has_bottom = bottom;
  L.sidebar = {ImVec2(0, top), ImVec2(side_w, body_bottom)};
  L.right = {ImVec2(w - right_w, top), ImVec2(w, body_bottom)};
  L.centre = {ImVec2(side_w, top), ImVec2(w - right_w, body_bottom)};
  L.bottom = {ImVec2(0, body_bottom), ImVec2(w, h)};
  return L;
}

// ---------------------------------------------------------------------------------------------------------
// [SECTION] menu bar, session dialogs, shortcut window
// ---------------------------------------------------------------------------------------------------------

namespace {

struct MenuRequests {
  bool open_save = false, open_load = false;
};

void DrawMenuBar(const Model& model, UiState& ui, MenuRequests& requests) {
  if (!ImGui::BeginMainMenuBar()) return;
  if (ImGui::BeginMenu("File")) {
    if (ImGui::MenuItem("Save session…", "Ctrl+S")) requests.open_save = true;
    if (ImGui::MenuItem("Load session…", "Ctrl+O")) requests.open_load = true;
    ImGui::Separator();
    if (ImGui::MenuItem("Export for slides…", "Ctrl+E")) ui.open_export_dialog = true;
    if (ImGui::IsItemHovered())
      MathTooltip("A PNG of the window or of the centre view, or CSVs of the current tile and of the m_i, ℓ_i history");
    ImGui::Separator();
    if (ImGui::MenuItem("Quit", "Ctrl+Q")) ui.requests.Push(UiRequest::kQuit);
    ImGui::EndMenu();
  }
  if (ImGui::BeginMenu("View")) {
    for (const PanelInfo& panel : Panels()) {
      bool open = IsPanelOpen(ui, panel);
      if (ImGui::MenuItem(PlainNotation(panel.title).c_str(), nullptr, &open, PanelApplies(panel, model))) {
        SetPanelOpen(ui, panel, open);
        if (open && panel.slot == PanelSlot::kCentreTab) ui.focus_tab = panel.id;
      }
      if (ImGui::IsItemHovered()) MathTooltip(panel.summary);
    }
    ImGui::Separator();
    if (ImGui::MenuItem("Dark theme", nullptr, ui.appearance.theme == Theme::kDark)) {
      ui.appearance.theme = Theme::kDark;
      ui.requests.Push(UiRequest::kRebuildStyle);
    }
    if (ImGui::MenuItem("Light theme", nullptr, ui.appearance.theme == Theme::kLight)) {
      ui.appearance.theme = Theme::kLight;
      ui.requests.Push(UiRequest::kRebuildStyle);
    }
    if (ImGui::MenuItem("Animate transitions", nullptr, ui.appearance.animate)) ui.appearance.animate = !ui.appearance.animate;
    if (ImGui::IsItemHovered())
      MathTooltip("One step forward at a watchable pace slides m_i and ℓ_i (α shrinks the old ℓ_i first), fades P~_ij "
                  "in over S_ij and moves loads and write-backs along the traffic arrows; off: every step is a cut");
    if (ImGui::MenuItem("Presentation mode", "Ctrl+L", ui.appearance.presentation)) {
      ui.appearance.presentation = !ui.appearance.presentation;
      ui.requests.Push(UiRequest::kRebuildStyle);
    }
    float scale = ui.appearance.ui_scale;
    ImGui::SetNextItemWidth(160);
    if (ImGui::SliderFloat("UI scale", &scale, 0.75f, 2.5f, "%.2f×")) {
      ui.appearance.ui_scale = scale;
    }
    if (ImGui::IsItemDeactivatedAfterEdit()) ui.requests.Push(UiRequest::kRebuildStyle);
    ImGui::EndMenu();
  }
  if (ImGui::BeginMenu("Presets")) {
    for (const Preset& preset : Presets()) {
      if (ImGui::MenuItem(preset.name)) {
        ui.form = preset.form;
        ui.requests.Push(UiRequest::kApplyForm);
      }
      if (ImGui::IsItemHovered()) MathTooltip(preset.description);
    }
    ImGui::EndMenu();
  }
  if (ImGui::BeginMenu("Lessons")) {
    for (const Lesson& lesson : ShippedLessons()) {
      if (ImGui::MenuItem(lesson.title.c_str())) StartLesson(ui, lesson.id);
      if (ImGui::IsItemHovered()) MathTooltip(lesson.summary.c_str());
    }
    ImGui::EndMenu();
  }
  if (ImGui::BeginMenu("Help")) {
    if (ImGui::MenuItem("Keyboard shortcuts", "F1")) ui.show_shortcuts = true;
    ImGui::EndMenu();
  }
  // The status line, the one place a save, a load or their error is reported: right-aligned, cut with "…" to
  // the room the menus leave (the whole text in a tooltip), errors in the "bad" colour.
  if (!ui.status.empty()) {
    const float room = ImGui::GetWindowWidth() - ImGui::GetCursorPosX() - 36;
    std::string shown = ui.status;
    if (ImGui::CalcTextSize(shown.c_str()).x > room) {
      while (!shown.empty() && ImGui::CalcTextSize((shown + "…").c_str()).x > room) {
        shown.pop_back();
        while (!shown.empty() && (static_cast<unsigned char>(shown.back()) & 0xC0) == 0x80) shown.pop_back();
      }
      shown += "…";
    }
    ImGui::SameLine(ImGui::GetWindowWidth() - ImGui::CalcTextSize(shown.c_str()).x - 16);
    const Palette& palette = GetPalette();
    ImGui::PushStyleColor(ImGuiCol_Text, ui.status_is_error ? ImGui::ColorConvertU32ToFloat4(palette.bad)
                                                           : ImGui::GetStyle().Colors[ImGuiCol_TextDisabled]);
    ImGui::TextUnformatted(shown.c_str());
    ImGui::PopStyleColor();
    if (FrameReport* report = CurrentFrameReport()) report->status = {ImGui::GetItemRectMin(), ImGui::GetItemRectMax()};
    if (shown != ui.status && ImGui::IsItemHovered()) MathTooltip(ui.status.c_str());
  }
  ImGui::EndMainMenuBar();
}

// The Export dialog: what to write and where (a file name for the step is proposed, the working directory).
void ExportDialog(const Model& model, UiState& ui) {
  if (!ImGui::BeginPopupModal("Export for slides", nullptr, ImGuiWindowFlags_AlwaysAutoResize)) return;
  static constexpr const char* kKinds[] = {"PNG of the window", "PNG of the centre view (the tab on screen)",
                                           "CSV of the tile: S_ij, P~_ij, m~_ij, ℓ~_ij, m_i, ℓ_i, α per row",
                                           "CSV of m_i and ℓ_i after each K/V tile (this Q tile's rows)"};
  const int before = ui.export_kind;
  for (int k = 0; k < 4; ++k) {
    ImGui::RadioButton(PlainNotation(kKinds[k]).c_str(), &ui.export_kind, k);
  }
  const auto kind = static_cast<ExportKind>(ui.export_kind);
  if (ImGui::IsWindowAppearing() || before != ui.export_kind || ui.export_path.empty())
    ui.export_path = DefaultExportName(kind, model.step());
  ImGui::SetNextItemWidth(ImGui::GetFontSize() * 30);
  if (ImGui::IsWindowAppearing()) ImGui::SetKeyboardFocusHere();  // Ctrl+E, Enter: the window as a PNG
  const bool enter = ImGui::InputText("##export-path", &ui.export_path, ImGuiInputTextFlags_EnterReturnsTrue);
  if (ImGui::Button("Export") || enter) {
    ui.requests.Push(UiRequest::kExport);
    ImGui::CloseCurrentPopup();
  }
  ImGui::SameLine();
  if (ImGui::Button("Cancel") || ImGui::IsKeyPressed(ImGui::GetKeyIndex(ImGuiKey_Escape))) ImGui::CloseCurrentPopup();
  ImGui::EndPopup();
}

void SessionDialog(const char* title, const char* button, UiState& ui, UiRequest request) {
  if (ImGui::BeginPopupModal(title, nullptr, ImGuiWindowFlags_AlwaysAutoResize)) {
    MathText("Session file (JSON): the problem, the step, the open panels and the view settings.");
    ImGui::SetNextItemWidth(ImGui::GetFontSize() * 30);
    if (ImGui::IsWindowAppearing()) ImGui::SetKeyboardFocusHere();
    const bool enter = ImGui::InputText("##path", &ui.session_path, ImGuiInputTextFlags_EnterReturnsTrue);
    ImGui::SameLine();
    // Loading takes the chosen file at once; saving keeps the field for a new name in the chosen folder.
    const bool picked = FilePickerButton("session-picker", &ui.session_path, ".json", "Choose a session file");
    if (ImGui::Button(button) || enter || (picked && request == UiRequest::kLoadSession)) {
      ui.requests.Push(request);
      ImGui::CloseCurrentPopup();
    }
    ImGui::SameLine();
    if (ImGui::Button("Cancel") || ImGui::IsKeyPressed(ImGui::GetKeyIndex(ImGuiKey_Escape))) ImGui::CloseCurrentPopup();
    ImGui::EndPopup();
  }
}

void DrawShortcuts(UiState& ui) {
  if (!ui.show_shortcuts) return;
  ImGui::SetNextWindowPos(ImVec2(ImGui::GetIO().DisplaySize.x * 0.5f, ImGui::GetIO().DisplaySize.y * 0.5f),
                          ImGuiCond_Appearing, ImVec2(0.5f, 0.5f));
  if (ImGui::Begin("Keyboard shortcuts", &ui.show_shortcuts,
                   ImGuiWindowFlags_AlwaysAutoResize | ImGuiWindowFlags_NoSavedSettings)) {
    static const char* kRows[][2] = {
        {"Space", "play / pause"},
        {"← / →", "one phase back / forward"},
        {"Shift+← / Shift+→", "one tile iteration back / forward"},
        {"Home / End", "first / last step"},
        {"[ / ]", "half / double the playback speed"},
        {"1 … 9", "the centre tabs, in order"},
        {"Ctrl+B", "forward / backward pass"},
        {"Ctrl+L", "presentation mode (projector)"},
        {"F2", "presentation mode: open or fold the side columns"},
        {"Ctrl+T", "dark / light theme"},
        {"Ctrl+= / Ctrl+-", "UI scale up / down"},
        {"Ctrl+S / Ctrl+O", "save / load the session"},
        {"Ctrl+E", "export a PNG or a CSV for slides"},
        {"PageDown / PageUp", "the lesson's next / previous stop"},
        {"F1", "this window"},
        {"Ctrl+Q", "quit"},
    };
    if (ImGui::BeginTable("##keys", 2, ImGuiTableFlags_RowBg)) {
      for (const auto& row : kRows) {
        ImGui::TableNextRow();
        ImGui::TableNextColumn();
        ImGui::TextUnformatted(row[0]);
        ImGui::TableNextColumn();
        ImGui::TextUnformatted(row[1]);
      }
      ImGui::EndTable();
    }
    MathTextColored(GetPalette().dim, "Hover any cell, bar or arrow for its value and formula.");
  }
  ImGui::End();
}

// ---------------------------------------------------------------------------------------------------------
// [SECTION] the slots
// ---------------------------------------------------------------------------------------------------------

bool AnyOpen(const UiState& ui, const Model& model, PanelSlot slot) {
  for (const PanelInfo& p : Panels())
    if (p.slot == slot && PanelShown(ui, model, p)) return true;
  return false;
}

// `overlay`: drawn over the step view (presentation mode's opened strip), so with its own background.
void PlaceWindow(const ScreenRect& r, bool overlay = false) {
  ImGui::SetNextWindowPos(r.min);
  ImGui::SetNextWindowSize(ImVec2(r.width(), r.height()));
  // The fixed windows tile the screen, and the renderer clears to ImGuiCol_WindowBg: drawing their backgrounds
  // too would fill every pixel twice, which a software rasterizer (Mesa llvmpipe) pays for on every frame.
  ImGui::SetNextWindowBgAlpha(overlay ? 1.0f : 0.0f);
}

bool LessonRunning(const UiState& ui) {
  const PanelInfo* lesson = FindPanel("lesson");
  return lesson && IsPanelOpen(ui, *lesson) && !LessonState(ui).lesson_id.empty();
}

// `lesson_only`: presentation mode keeps a running lesson on screen and folds the rest of the sidebar.
void DrawSidebar(const Model& model, UiState& ui, const ScreenRect& r, bool overlay = false, bool lesson_only = false) {
  PlaceWindow(r, overlay);
  if (ImGui::Begin("##sidebar", nullptr, kFixed | ImGuiWindowFlags_NoTitleBar)) {
    for (const PanelInfo& p : Panels()) {
      if (p.slot != PanelSlot::kSidebar || !PanelShown(ui, model, p)) continue;
      if (lesson_only && std::string_view(p.id) != "lesson") continue;
      ImGui::PushID(p.id);
      if (ImGui::CollapsingHeader((PanelTitle(p, model) + "###" + p.id).c_str(), ImGuiTreeNodeFlags_DefaultOpen))
        p.draw(model, ui);
      ImGui::PopID();
    }
  }
  ImGui::End();
}

void DrawCentre(const Model& model, UiState& ui, const ScreenRect& r) {
  PlaceWindow(r);
  if (ImGui::Begin("##centre", nullptr, kFixed | ImGuiWindowFlags_NoTitleBar | ImGuiWindowFlags_NoScrollbar |
                                            ImGuiWindowFlags_NoScrollWithMouse)) {
    if (ImGui::BeginTabBar("##tabs")) {
      for (const PanelInfo& p : Panels()) {
        if (p.slot != PanelSlot::kCentreTab || !PanelShown(ui, model, p)) continue;
        const ImGuiTabItemFlags flags = ui.focus_tab == p.id ? ImGuiTabItemFlags_SetSelected : 0;
        bool open = true;
        const std::string title = PanelTitle(p, model) + "###" + p.id;
        if (ImGui::BeginTabItem(title.c_str(), &open, flags)) {
          ui.active_tab = p.id;
          ImGui::BeginChild(p.id, ImVec2(0, 0), false,
                            ImGuiWindowFlags_NoScrollbar | ImGuiWindowFlags_NoScrollWithMouse);
          p.draw(model, ui);
          ImGui::EndChild();
          ImGui::EndTabItem();
        }
        if (!open) SetPanelOpen(ui, p, false);
      }
      ImGui::EndTabBar();
    }
    ui.focus_tab.clear();
  }
  ImGui::End();
}

void DrawRight(const Model& model, UiState& ui, const ScreenRect& r, bool overlay = false) {
  float total = 0;
  for (const PanelInfo& p : Panels())
    if (p.slot == PanelSlot::kRight && PanelShown(ui, model, p)) total += std::max(p.weight, 0.05f);
  float y = r.min.y;
  for (const PanelInfo& p : Panels()) {
    if (p.slot != PanelSlot::kRight || !PanelShown(ui, model, p)) continue;
    const float h = std::floor(r.height() * std::max(p.weight, 0.05f) / total);
    PlaceWindow({ImVec2(r.min.x, y), ImVec2(r.max.x, std::min(r.max.y, y + h))}, overlay);
    bool open = true;
    const std::string title = PanelTitle(p, model) + "###" + p.id;
    if (ImGui::Begin(title.c_str(), &open, kFixed)) p.draw(model, ui);
    ImGui::End();
    if (!open) SetPanelOpen(ui, p, false);
    y += h;
  }
}

void DrawBottom(const Model& model, UiState& ui, const ScreenRect& r) {
  PlaceWindow(r);
  if (ImGui::Begin("##bottom", nullptr, kFixed | ImGuiWindowFlags_NoTitleBar)) {
    for (const PanelInfo& p : Panels())
      if (p.slot == PanelSlot::kBottom && PanelShown(ui, model, p)) {
        ImGui::PushID(p.id);
        p.draw(model, ui);
        ImGui::PopID();
      }
  }
  ImGui::End();
}

// A folded column in presentation mode: a strip of icon buttons. Pointing at it opens the column over the step
// view (ui.peek) until the pointer leaves; F2 or ≡ opens both columns for good.
void DrawStrip(const Model& model, UiState& ui, const char* id, const ScreenRect& r, bool left) {
  PlaceWindow(r);
  if (ImGui::Begin(id, nullptr, kFixed | ImGuiWindowFlags_NoTitleBar | ImGuiWindowFlags_NoScrollbar)) {
    const float w = ImGui::GetContentRegionAvail().x;
    const auto button = [&](const char* label, const char* tip) {
      const bool pressed = ImGui::Button(label, ImVec2(w, 0));
      if (ImGui::IsItemHovered()) MathTooltip(tip);
      return pressed;
    };
    if (button(left ? "\u2261##open-left" : "\u2261##open-right",
               left ? "Show the side columns (F2): playback, the problem. Point here to look without opening."
                    : "Show the side columns (F2): the running statistics and O_i. Point here to look without "
                      "opening."))
      ui.appearance.side_columns_open = true;
    if (left && model.has_problem()) {
      const std::int64_t last = model.step_count() - 1;
      if (button(ui.cursor.playing ? "||##strip-play" : "\u25b6##strip-play", "Play / pause (Space)"))
        ui.cursor.playing = !ui.cursor.playing;
      // Hollow triangles for one phase, so they do not read as the solid ▶ of play.
      if (button("\u25c1##strip-back", "Back one phase (←)")) ui.cursor.step = std::max<std::int64_t>(0, model.step() - 1);
      if (button("\u25b7##strip-fwd", "Forward one phase (→)")) ui.cursor.step = std::min(last, model.step() + 1);
    }
  }
  ImGui::End();
}

// The "laser pointer" of presentation mode: a large ring where the pointer is over the centre view, so the room
// sees which cell the presenter means.
void DrawPointerRing(const ScreenRect& centre, float scale) {
  const ImVec2 mouse = ImGui::GetIO().MousePos;
  if (mouse.x < centre.min.x || mouse.x > centre.max.x || mouse.y < centre.min.y || mouse.y > centre.max.y) return;
  if (ImGui::IsPopupOpen(nullptr, ImGuiPopupFlags_AnyPopupId)) return;
  ImDrawList* dl = ImGui::GetForegroundDrawList();
  const ImU32 ring = (GetPalette().cursor & 0x00FFFFFF) | 0xC0000000;
  dl->AddCircle(mouse, 24.0f * scale, ring, 48, 4.0f * scale);
  dl->AddCircle(mouse, 24.0f * scale + 3.0f * scale, (ring & 0x00FFFFFF) | 0x50000000, 48, 2.0f * scale);
}

}  // namespace

void DrawUi(const Model& model, UiState& ui) {
  if (FrameReport* report = CurrentFrameReport()) *report = {};
  MenuRequests requests;
  DrawMenuBar(model, ui, requests);
  if (requests.open_save || ui.open_save_dialog) ImGui::OpenPopup("Save session");
  if (requests.open_load || ui.open_load_dialog) ImGui::OpenPopup("Load session");
  if (ui.open_export_dialog) ImGui::OpenPopup("Export for slides");
  ui.open_save_dialog = ui.open_load_dialog = ui.open_export_dialog = false;
  const ImGuiStyle& style = ImGui::GetStyle();
  const float menu_h = ImGui::GetFrameHeight();
  // The bottom strip: the scrubber and two lines of narration in the large font.
  const float large_line = LargeFont()->FontSize * (ImGui::GetFontSize() / std::max(1.0f, ImGui::GetFont()->FontSize));
  // The scrubber sits beside two label lines ("step k / n · phase", "tile iteration k of n"), the taller of the two.
  const float scrubber_row = std::max(ImGui::GetFrameHeight() * 1.3f + 2, 2 * ImGui::GetTextLineHeightWithSpacing());
  const float bottom_h = scrubber_row + 2 * large_line + style.ItemSpacing.y * 2 + style.WindowPadding.y * 2 + 4;
  // Columns widen with the text: the UI scale and the large-font mode (1.4× text) both count.
  const float layout_scale = ui.appearance.ui_scale * (ui.appearance.presentation ? 1.3f : 1.0f);
  // Presentation mode gives the step view the room: the columns fold into strips (a running lesson keeps a
  // narrower sidebar of its own), opened over the step view by pointing at a strip, or for good with F2.
  const ImVec2 display = ImGui::GetIO().DisplaySize;
  const bool fold = ui.appearance.presentation && !ui.appearance.side_columns_open;
  const bool lesson_only = fold && LessonRunning(ui);
  const float strip_w = std::floor(ImGui::GetFrameHeight() + 2 * style.WindowPadding.x);
  const float sidebar_w = !fold ? -1.0f : lesson_only ? std::floor(std::min(270.0f * layout_scale, display.x * 0.26f))
                                                      : strip_w;
  const bool has_sidebar = AnyOpen(ui, model, PanelSlot::kSidebar), has_right = AnyOpen(ui, model, PanelSlot::kRight);
  const UiLayout L = ComputeUiLayout(display, menu_h, bottom_h, layout_scale, has_sidebar, has_right,
                                     AnyOpen(ui, model, PanelSlot::kBottom), sidebar_w, fold ? strip_w : -1.0f);
  if (!fold) ui.peek.clear();
  if (L.has_sidebar) {
    if (fold && !lesson_only) DrawStrip(model, ui, "##left-strip", L.sidebar, true);
    else DrawSidebar(model, ui, L.sidebar, false, lesson_only);
  }
  DrawCentre(model, ui, L.centre);
  if (L.has_right) {
    if (fold) DrawStrip(model, ui, "##right-strip", L.right, false);
    else DrawRight(model, ui, L.right);
  }
  if (L.has_bottom) DrawBottom(model, ui, L.bottom);
  if (fold) {
    // The opened column over the step view, as long as the pointer stays on the strip or the column.
    const ImVec2 mouse = ImGui::GetIO().MousePos;
    const auto inside = [&](const ScreenRect& r) {
      return mouse.x >= r.min.x && mouse.x < r.max.x && mouse.y >= r.min.y && mouse.y < r.max.y;
    };
    const ScreenRect left_open{L.sidebar.min, ImVec2(L.sidebar.min.x + SidebarWidth(display.x, layout_scale),
                                                     L.sidebar.max.y)};
    const ScreenRect right_open{ImVec2(L.right.max.x - RightColumnWidth(display.x, layout_scale), L.right.min.y),
                                L.right.max};
    const bool any_popup = ImGui::IsPopupOpen(nullptr, ImGuiPopupFlags_AnyPopupId);
    if (!any_popup) {
      if (L.has_sidebar && !lesson_only && (inside(L.sidebar) || (ui.peek == "sidebar" && inside(left_open))))
        ui.peek = "sidebar";
      else if (L.has_right && (inside(L.right) || (ui.peek == "right" && inside(right_open))))
        ui.peek = "right";
      else
        ui.peek.clear();
    }
    if (ui.peek == "sidebar") DrawSidebar(model, ui, left_open, true);
    if (ui.peek == "right") DrawRight(model, ui, right_open, true);
    if (ui.peek.empty()) DrawPointerRing(L.centre, layout_scale);
  }
  if (FrameReport* report = CurrentFrameReport()) report->centre = L.centre;
  SessionDialog("Save session", "Save", ui, UiRequest::kSaveSession);
  SessionDialog("Load session", "Load", ui, UiRequest::kLoadSession);
  ExportDialog(model, ui);
  DrawShortcuts(ui);
}

}  // namespace flashviz
