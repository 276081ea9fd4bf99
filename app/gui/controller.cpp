// [SECTION] keyboard
// [SECTION] playback
// [SECTION] requests: problem, HW4 file, sessions, step
// [SECTION] style and the frame
#include "app/gui/controller.h"

#define GLFW_INCLUDE_NONE
#include <GLFW/glfw3.h>

#include <algorithm>
#include <cmath>
#include <functional>
#include <new>

#include "app/cli/problem_options.h"
#include "app/gui/session.h"
#include "app/io/hw4_file.h"
#include "kernels/common/files.h"
#include "kernels/common/format.h"
#include "viz/export.h"
#include "viz/layout.h"
#include "viz/panels/lesson_panel.h"
#include "viz/panels/panel_table.h"
#include "viz/texture.h"
#include "viz/theme.h"

namespace flashviz {
void SetStatus(UiState& ui, std::string text, bool error) {
  ui.status = std::move(text);
  ui.status_is_error = error;
  ui.status_time = ImGui::GetCurrentContext() ? ImGui::GetTime() : 0.0;
}

namespace {

std::int64_t LastStep(const Model& m) { return std::max<std::int64_t>(0, m.step_count() - 1); }

// The first step of the tile iteration `ahead` iterations after the one containing (or following) `step`.
std::int64_t TileIterationsAhead(const Model& m, std::int64_t step, std::int64_t ahead) {
  if (m.decode_mode() || m.ring_mode()) {  // the splits and merges of decoding, the ring's steps
    for (const std::int64_t start : m.ring_mode() ? RingUnitStarts(m.ring_stepper()) : DecodeUnitStarts(m.decode_stepper()))
      if (start > step && --ahead == 0) return start;
    return LastStep(m);
  }
  const Schedule& s = m.schedule();
  std::int64_t lo = 0, hi = s.tile_iteration_count();
  while (lo < hi) {  // first t whose start is > step
    const std::int64_t mid = lo + (hi - lo) / 2;
    if (s.TileIterationStart(mid) <= step) lo = mid + 1;
    else hi = mid;
  }
  const std::int64_t t = lo + ahead - 1;
  return t < s.tile_iteration_count() ? s.TileIterationStart(t) : LastStep(m);
}

}  // namespace

// ---------------------------------------------------------------------------------------------------------
// [SECTION] keyboard
// ---------------------------------------------------------------------------------------------------------

void InstallGlfwKeyMap(ImGuiIO& io) {
  io.KeyMap[ImGuiKey_Tab] = GLFW_KEY_TAB;
  io.KeyMap[ImGuiKey_LeftArrow] = GLFW_KEY_LEFT;
  io.KeyMap[ImGuiKey_RightArrow] = GLFW_KEY_RIGHT;
  io.KeyMap[ImGuiKey_UpArrow] = GLFW_KEY_UP;
  io.KeyMap[ImGuiKey_DownArrow] = GLFW_KEY_DOWN;
  io.KeyMap[ImGuiKey_PageUp] = GLFW_KEY_PAGE_UP;
  io.KeyMap[ImGuiKey_PageDown] = GLFW_KEY_PAGE_DOWN;
  io.KeyMap[ImGuiKey_Home] = GLFW_KEY_HOME;
  io.KeyMap[ImGuiKey_End] = GLFW_KEY_END;
  io.KeyMap[ImGuiKey_Insert] = GLFW_KEY_INSERT;
  io.KeyMap[ImGuiKey_Delete] = GLFW_KEY_DELETE;
  io.KeyMap[ImGuiKey_Backspace] = GLFW_KEY_BACKSPACE;
  io.KeyMap[ImGuiKey_Space] = GLFW_KEY_SPACE;
  io.KeyMap[ImGuiKey_Enter] = GLFW_KEY_ENTER;
  io.KeyMap[ImGuiKey_Escape] = GLFW_KEY_ESCAPE;
  io.KeyMap[ImGuiKey_KeyPadEnter] = GLFW_KEY_KP_ENTER;
  io.KeyMap[ImGuiKey_A] = GLFW_KEY_A;
  io.KeyMap[ImGuiKey_C] = GLFW_KEY_C;
  io.KeyMap[ImGuiKey_V] = GLFW_KEY_V;
  io.KeyMap[ImGuiKey_X] = GLFW_KEY_X;
  io.KeyMap[ImGuiKey_Y] = GLFW_KEY_Y;
  io.KeyMap[ImGuiKey_Z] = GLFW_KEY_Z;
}

void HandleKeyboard(const Model& m, UiState& ui) {
  const ImGuiIO& io = ImGui::GetIO();
  if (io.WantTextInput || !m.has_problem()) return;  // keys belong to the text field being edited
  auto pressed = [](int key, bool repeat) { return key >= 0 && ImGui::IsKeyPressed(key, repeat); };
  if (io.KeyCtrl) {
    if (pressed(GLFW_KEY_S, false)) ui.open_save_dialog = true;
    if (pressed(GLFW_KEY_O, false)) ui.open_load_dialog = true;
    if (pressed(GLFW_KEY_E, false)) ui.open_export_dialog = true;
    if (pressed(GLFW_KEY_Q, false)) ui.requests.Push(UiRequest::kQuit);
    if (pressed(GLFW_KEY_B, false)) {  // forward ⇄ backward pass, the cursor kept on the same tile pair
      ui.form.pass = ui.form.pass == Pass::kForward ? Pass::kBackward : Pass::kForward;
      ui.requests.Push(UiRequest::kApplyForm);
    }
    if (pressed(GLFW_KEY_L, false)) {
      ui.appearance.presentation = !ui.appearance.presentation;
      ui.requests.Push(UiRequest::kRebuildStyle);
    }
    if (pressed(GLFW_KEY_T, false)) {
      ui.appearance.theme = ui.appearance.theme == Theme::kDark ? Theme::kLight : Theme::kDark;
      ui.requests.Push(UiRequest::kRebuildStyle);
    }
    if (pressed(GLFW_KEY_EQUAL, false) || pressed(GLFW_KEY_KP_ADD, false)) {
      ui.appearance.ui_scale = std::min(2.5f, ui.appearance.ui_scale + 0.25f);
      ui.requests.Push(UiRequest::kRebuildStyle);
    }
    if (pressed(GLFW_KEY_MINUS, false) || pressed(GLFW_KEY_KP_SUBTRACT, false)) {
      ui.appearance.ui_scale = std::max(0.75f, ui.appearance.ui_scale - 0.25f);
      ui.requests.Push(UiRequest::kRebuildStyle);
    }
    return;
  }
  const std::int64_t last = LastStep(m);
  if (pressed(ImGui::GetKeyIndex(ImGuiKey_Space), false)) {
    ui.cursor.playing = !ui.cursor.playing;
    if (ui.cursor.playing && ui.cursor.step >= last) ui.cursor.step = 0;
  }
  if (pressed(ImGui::GetKeyIndex(ImGuiKey_LeftArrow), true))
    ui.cursor.step = io.KeyShift ? m.PreviousTileIterationStep() : std::max<std::int64_t>(0, ui.cursor.step - 1);
  if (pressed(ImGui::GetKeyIndex(ImGuiKey_RightArrow), true))
    ui.cursor.step = io.KeyShift ? m.NextTileIterationStep() : std::min(last, ui.cursor.step + 1);
  if (pressed(ImGui::GetKeyIndex(ImGuiKey_Home), false)) ui.cursor.step = 0;
  if (pressed(ImGui::GetKeyIndex(ImGuiKey_End), false)) ui.cursor.step = last;
  if (pressed(GLFW_KEY_LEFT_BRACKET, true)) ui.cursor.speed = std::max(0.25f, ui.cursor.speed / 2);
  if (pressed(GLFW_KEY_RIGHT_BRACKET, true)) ui.cursor.speed = std::min(240.0f, ui.cursor.speed * 2);
  if (pressed(GLFW_KEY_F1, false)) ui.show_shortcuts = !ui.show_shortcuts;
  if (pressed(GLFW_KEY_F2, false) && ui.appearance.presentation)
    ui.appearance.side_columns_open = !ui.appearance.side_columns_open;
  // A presenter's clicker sends PageDown / PageUp: the lesson's next and previous stop.
  if (pressed(ImGui::GetKeyIndex(ImGuiKey_PageDown), false)) LessonStep(ui, 1);
  if (pressed(ImGui::GetKeyIndex(ImGuiKey_PageUp), false)) LessonStep(ui, -1);
  int tab = 0;
  for (const PanelInfo& p : Panels()) {
    if (p.slot != PanelSlot::kCentreTab || !PanelShown(ui, m, p)) continue;
    if (tab < 9 && pressed(GLFW_KEY_1 + tab, false)) ui.focus_tab = p.id;
    ++tab;
  }
}

// ---------------------------------------------------------------------------------------------------------
// [SECTION] playback
// ---------------------------------------------------------------------------------------------------------

void AdvancePlayback(const Model& m, UiState& ui, double dt) {
  if (!ui.cursor.playing || !m.has_problem()) {
    ui.cursor.play_accumulator = 0.0;
    return;
  }
  const std::int64_t last = LastStep(m);
  if (ui.cursor.step >= last) {
    ui.cursor.playing = false;
    return;
  }
  ui.cursor.play_accumulator += std::clamp(dt, 0.0, 0.25) * static_cast<double>(ui.cursor.speed);
  const auto ticks = static_cast<std::int64_t>(std::floor(ui.cursor.play_accumulator));
  if (ticks <= 0) return;
  ui.cursor.play_accumulator -= static_cast<double>(ticks);
  ui.cursor.step = ui.cursor.play_unit == StepUnit::kPhase ? std::min(last, ui.cursor.step + ticks)
                                                           : TileIterationsAhead(m, ui.cursor.step, ticks);
}

// ---------------------------------------------------------------------------------------------------------
// [SECTION] requests
// ---------------------------------------------------------------------------------------------------------

namespace {

// Runs `load`; a user's mistake or a problem too large for memory becomes the form's error (false).
bool LoadOrExplain(UiState& ui, const std::function<void()>& load) {
  try {
    load();
  } catch (const InputError& e) {
    ui.form_status.problem_error = e.what();
    return false;
  } catch (const std::bad_alloc&) {
    ui.form_status.problem_error = "out of memory for this problem's inputs";
    return false;
  }
  ui.form_status.problem_error.clear();
  return true;
}

// The decode form: resolved, checked against the GUI's limits and loaded over the forward problem (which is loaded
// first when there is none, so that the views that stay with it always have one).
bool ApplyDecodeForm(Model& model, UiState& ui) {
  const ProblemForm& f = ui.form;
  const bool loaded = LoadOrExplain(ui, [&] {
    if (!model.has_problem()) {
      const LoadedProblem loaded = LoadProblem(ProblemOptions{}, true);
      model.SetProblem(loaded.problem, loaded.inputs, ProblemOrigin{});
    }
    const DecodeRequest request = f.ToDecodeRequest();
    if (auto error = DecodeRequestError(request)) throw InputError(*error);
    const DecodeProblem problem = ResolveDecodeProblem(request, f.seed);
    if (auto error = DecodeGuiProblemError(problem)) throw InputError(*error);
    model.SetDecodeProblem(problem, std::make_shared<DecodeInputs>(MakeRandomDecodeInputs(problem, f.seed)));
  });
  if (!loaded) return false;
  ui.cursor.step = 0;
  ui.cursor.playing = false;
  ui.cursor.selected_row = -1;
  return true;
}

// The ring form: resolved, checked against the GUI's limits and loaded over the forward problem, as decoding is.
bool ApplyRingForm(Model& model, UiState& ui) {
  const ProblemForm& f = ui.form;
  const bool loaded = LoadOrExplain(ui, [&] {
    if (!model.has_problem()) {
      const LoadedProblem loaded = LoadProblem(ProblemOptions{}, true);
      model.SetProblem(loaded.problem, loaded.inputs, ProblemOrigin{});
    }
    const RingProblem problem = ResolveRingProblem(f.ToRingRequest());
    if (auto error = RingGuiProblemError(problem)) throw InputError(*error);
    model.SetRingProblem(problem, std::make_shared<AttentionInputs>(MakeRandomInputs(problem.n, problem.d, f.seed)));
  });
  if (!loaded) return false;
  ui.cursor.step = 0;
  ui.cursor.playing = false;
  ui.cursor.selected_row = -1;
  return true;
}

}  // namespace

bool ApplyForm(Model& model, UiState& ui) {
  if (ui.form.ring) {
    ui.form.decode = false;  // two different problems: the ring switch, set last, wins
    return ApplyRingForm(model, ui);
  }
  if (ui.form.decode) return ApplyDecodeForm(model, ui);
  const ProblemForm& f = ui.form;
  ProblemOptions options;
  if (f.input_path.empty()) {
    options.n = f.n;
    options.d = f.d;
  }
  if (!f.tiles_from_sram) {
    options.br = f.br;
    options.bc = f.bc;
  }
  options.sram_bytes = f.sram_bytes;
  options.order = std::string(LoopOrderName(f.order));
  options.pass = std::string(PassName(f.pass));
  options.dout = f.pass == Pass::kBackward ? f.dout_path : std::string();
  if (f.scale_mode == ProblemForm::ScaleMode::kNone) options.scale = "none";
  else if (f.scale_mode == ProblemForm::ScaleMode::kCustom) options.scale = Sprintf("%.17g", f.scale);
  options.causal = f.causal;
  options.seed = f.seed;
  options.input = f.input_path;
  options.batch = f.batch;
  // Where the cursor stands, to stand there again when only the order, the mask or the numbers change.
  const bool had_problem = model.has_problem() && !model.decode_mode() && !model.ring_mode();
  const StepInfo position = had_problem ? model.schedule().Info(model.step()) : StepInfo{};
  const int old_tr = had_problem ? model.problem().tr() : -1, old_tc = had_problem ? model.problem().tc() : -1;
  const bool loaded = LoadOrExplain(ui, [&] {
    // Check the size before making inputs: an impossible N must not allocate first.
    const LoadedProblem counted = LoadProblem(options, false);
    if (auto error = GuiProblemError(counted.problem)) throw InputError(*error);
    LoadedProblem problem = LoadProblem(options, true);
    model.SetProblem(problem.problem, problem.inputs, ProblemOrigin{f.seed, f.input_path, f.batch});
  });
  if (!loaded) return false;
  ui.form.n = model.problem().n;  // from the file, when there is one
  ui.form.d = model.problem().d;
  const bool same_grid = model.problem().tr() == old_tr && model.problem().tc() == old_tc;
  ui.cursor.step = same_grid ? model.schedule().StepLike(position) : 0;
  ui.cursor.playing = false;
  if (!same_grid || ui.cursor.selected_row >= model.problem().n) ui.cursor.selected_row = -1;
  return true;
}

void InspectInputFile(UiState& ui) {
  ui.form_status.input_file_batches = 0;
  ui.form_status.input_file_info.clear();
  if (ui.form.input_path.empty()) return;
  try {
    const Hw4Input header = ReadHw4Header(ui.form.input_path);
    ui.form_status.input_file_batches = header.b;
    ui.form_status.input_file_info =
        Sprintf("%d batch%s of N = %d, d = %d", header.b, header.b == 1 ? "" : "es", header.n, header.d);
  } catch (const InputError& e) {
    ui.form_status.input_file_info = e.what();
  }
}

void ApplyRequests(Model& model, UiState& ui) {
  for (const UiRequest request : ui.requests.TakeAll()) {
    switch (request) {
      case UiRequest::kLoadSession:
        try {
          const std::int64_t step = LoadSession(ui.session_path, ui);
          InspectInputFile(ui);
          if (ApplyForm(model, ui)) {
            ui.cursor.step = std::clamp<std::int64_t>(step, 0, LastStep(model));
            SetStatus(ui, "loaded " + ui.session_path);
          } else {
            SetStatus(ui, "session loaded, but its problem cannot be run: " + ui.form_status.problem_error, true);
          }
        } catch (const InputError& e) {
          SetStatus(ui, e.what(), true);
        }
        break;
      case UiRequest::kSaveSession:
        try {
          SaveSession(ui.session_path, ui, model.step());
          SetStatus(ui, "saved " + ui.session_path);
        } catch (const InputError& e) {
          SetStatus(ui, e.what(), true);
        }
        break;
      case UiRequest::kInspectInputFile:
        InspectInputFile(ui);
        break;
      case UiRequest::kApplyForm:
        ApplyForm(model, ui);
        break;
      case UiRequest::kExport:
        if (ui.export_kind == static_cast<int>(ExportKind::kWindowPng) ||
            ui.export_kind == static_cast<int>(ExportKind::kCentrePng)) {
          ui.png_export_pending = true;  // the frame loop reads the next drawn frame back
        } else {
          try {
            WriteWholeFile(ui.export_path, ui.export_kind == static_cast<int>(ExportKind::kTileCsv) ? TileCsv(model)
                                                                                                   : HistoryCsv(model));
            SetStatus(ui, "wrote " + ui.export_path);
          } catch (const InputError& e) {
            SetStatus(ui, e.what(), true);
          }
        }
        break;
      case UiRequest::kRebuildStyle:  // taken by ApplyStyle before the next frame
      case UiRequest::kQuit:          // taken by the frame loop
        ui.requests.Push(request);
        break;
    }
  }
  if (model.has_problem()) {
    ui.cursor.step = std::clamp<std::int64_t>(ui.cursor.step, 0, LastStep(model));
    model.SetStep(ui.cursor.step);
  }
}

// ---------------------------------------------------------------------------------------------------------
// [SECTION] style and the frame
// ---------------------------------------------------------------------------------------------------------

void ApplyStyle(UiState& ui, const std::function<void()>& upload_fonts) {
  if (!ui.requests.Take(UiRequest::kRebuildStyle)) return;
  ImGuiIO& io = ImGui::GetIO();
  io.Fonts->Clear();
  std::string note;
  LoadFonts(*io.Fonts, FontSizeFor(ui.appearance.ui_scale, ui.appearance.presentation), &note);
  if (!note.empty()) SetStatus(ui, note);
  io.Fonts->Build();
  ApplyTheme(ui.appearance.theme, ui.appearance.ui_scale);
  if (upload_fonts) upload_fonts();
}

void UpdateTransition(const Model& model, UiState& ui, double dt) {
  CursorState& c = ui.cursor;
  if (c.transition_step != model.step()) {
    // One step forward at a watchable pace animates; a jump, a scrub or fast playback shows the step at once.
    const double steps_per_second = !c.playing ? 0.0 : c.play_unit == StepUnit::kPhase ? c.speed : 1e9;
    const bool one_forward = c.transition_step >= 0 && model.step() == c.transition_step + 1;
    c.transition = ui.appearance.animate && one_forward && steps_per_second <= 8.0 ? 0.0 : 1.0;
    // The transition takes most of a playback tick (0.4 s at most), 0.3 s for a step by hand.
    c.transition_seconds = c.playing ? std::min(0.4, 0.75 / std::max(steps_per_second, 0.25)) : 0.3;
    c.transition_step = model.step();
  } else if (c.transition < 1.0) {
    c.transition = std::min(1.0, c.transition + dt / c.transition_seconds);
  }
}

void RunUiFrame(Model& model, UiState& ui, double dt) {
  model.Update();
  HandleKeyboard(model, ui);
  AdvancePlayback(model, ui, dt);
  ApplyRequests(model, ui);
  UpdateTransition(model, ui, dt);
  DrawUi(model, ui);
  ApplyRequests(model, ui);
  // Errors stay long enough to be read in full; the confirmations of a save or a load go sooner.
  if (!ui.status.empty() && ImGui::GetTime() - ui.status_time > (ui.status_is_error ? 30.0 : 10.0)) ui.status.clear();
  if (TextureBackend* textures = GetTextureBackend()) textures->EndFrame();
}

}  // namespace flashviz
