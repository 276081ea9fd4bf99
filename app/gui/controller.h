// What the app does around the panels every frame, the same with a window, offscreen or in a test with no GL:
//   model.Update → keyboard → playback → requests → DrawUi (the panels) → requests
// Requests are what panels ask for through UiState: a problem edit, an HW4 file to inspect, a session to save
// or load, a step. Applying them is the app's job (panels get the model read-only).
#pragma once

#include <imgui.h>

#include <functional>

#include "viz/model.h"
#include "viz/ui_state.h"

namespace flashviz {

// io.KeyMap as ImGui's GLFW backend sets it, with io.KeysDown indexed by GLFW key codes: headless frames
// (tests) press keys the way the window does.
void InstallGlfwKeyMap(ImGuiIO& io);

// The status line: one line at the right of the menu bar; errors in the "bad" colour and kept longer.
void SetStatus(UiState& ui, std::string text, bool error = false);
// Loads ui.form into the model (random inputs from the seed, or an HW4 file). False with ui.form_status.problem_error
// set (the model keeps its problem).
bool ApplyForm(Model& model, UiState& ui);
// Reads the header of ui.form.input_path into ui.form_status.input_file_batches / input_file_info.
void InspectInputFile(UiState& ui);
void HandleKeyboard(const Model& model, UiState& ui);
void AdvancePlayback(const Model& model, UiState& ui, double dt);
// Takes the queued requests in order (sessions, the input file, the form) and moves the model to ui.cursor.step.
void ApplyRequests(Model& model, UiState& ui);
// Rebuilds the fonts and the style when UiRequest::kRebuildStyle is queued; call before ImGui::NewFrame. `upload_fonts`
// gives the renderer the new font atlas.
void ApplyStyle(UiState& ui, const std::function<void()>& upload_fonts);
// Starts the transition of a step reached one step forward at a watchable pace, or advances the running one
// by `dt` seconds (ui.cursor.transition); RunUiFrame calls it.
void UpdateTransition(const Model& model, UiState& ui, double dt);
// One frame of UI between ImGui::NewFrame and ImGui::Render.
void RunUiFrame(Model& model, UiState& ui, double dt);

}  // namespace flashviz
