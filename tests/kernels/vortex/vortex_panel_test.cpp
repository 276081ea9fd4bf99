// The Vortex panel drawn headless (ImGui with io.DisplaySize and an in-memory font atlas, no window, no GL) for
// many frames: every step of the report's problem in SIMT and TCU mode, with the mouse sweeping the panel (the
// tooltips and the thread picker run), the display toggles, and machine edits that fit, do not fit or are
// malformed. With FLASHVIZ_VORTEX_SHOTS=DIR it also writes the panel alone, SIMT and TCU, as PNGs into DIR.
#include <gtest/gtest.h>
#include <imgui.h>

#include <cstdlib>
#include <memory>
#include <string>

#include "kernels/cpu/problem.h"
#include "kernels/cpu/stepper.h"
#include "tests/viz/headless.h"
#include "viz/model.h"
#include "viz/panels/panel_table.h"
#include "viz/panels/vortex_panel.h"
#include "viz/panels/panels.h"
#include "viz/raster.h"
#include "viz/ui_state.h"

namespace flashviz {
namespace {

using Headless = testing::HeadlessImGui;

void Load(Model& model, UiState& ui, const ProblemForm& form) {
  ui.form = form;
  const AttentionProblem p = ResolveProblem(form.ToRequest());
  // No WaitIdle: the panel reads nothing the model computes in the background (the HBM-bytes sweep, O in HBM),
  // and the next SetProblem cancels that work.
  model.SetProblem(p, std::make_shared<AttentionInputs>(MakeRandomInputs(p.n, p.d, form.seed)), {form.seed, "", 0});
}

void DrawPanelWindow(const Model& model, UiState& ui) {
  ImGui::SetNextWindowPos(ImVec2(0, 0));
  ImGui::SetNextWindowSize(ImGui::GetIO().DisplaySize);
  ImGui::Begin("Vortex", nullptr, ImGuiWindowFlags_NoDecoration | ImGuiWindowFlags_NoSavedSettings);
  DrawVortexPanel(model, ui);
  ImGui::End();
}

// One frame; the mouse at `mouse`, pressed when `click`. Applies a form the panel asked for, as the app does.
void Frame(Model& model, UiState& ui, ImVec2 mouse, bool click) {
  ImGuiIO& io = ImGui::GetIO();
  io.MousePos = mouse;
  io.MouseDown[0] = click;
  model.Update();
  ImGui::NewFrame();
  DrawPanelWindow(model, ui);
  ImGui::Render();
  if (TextureBackend* t = GetTextureBackend()) t->EndFrame();
  if (ui.requests.Take(UiRequest::kApplyForm)) Load(model, ui, ui.form);
}

ImVec2 Sweep(int frame, ImVec2 display) {
  // A coarse raster over the panel, a different point every frame.
  const int columns = 23, rows = 17;
  return ImVec2(display.x * static_cast<float>((frame * 7) % columns + 0.5f) / columns,
                display.y * static_cast<float>((frame * 5) % rows + 0.5f) / rows);
}

ProblemForm ReportForm(bool tcu) {
  ProblemForm form = FindPreset("vortex")->form;
  if (tcu) {
    form.tiles_from_sram = false;
    form.br = form.bc = 8;
  }
  return form;
}

TEST(VortexPanel, RegisteredInThePanelTable) {
  const PanelInfo* panel = FindPanel("vortex");
  ASSERT_NE(panel, nullptr);
  EXPECT_EQ(panel->draw, &DrawVortexPanel);
  EXPECT_EQ(panel->slot, PanelSlot::kCentreTab);
}

TEST(VortexPanel, EveryStepBothModesManyFrames) {
  const ImVec2 display(1400, 900);
  Headless imgui(display);
  Model model;
  UiState ui;
  int frame = 0;
  for (bool tcu : {false, true}) {
    VortexState(ui).mode = tcu ? vortex::Mode::kTcu : vortex::Mode::kSimt;
    VortexState(ui).color_lanes = tcu;
    VortexState(ui).compare_wmma = tcu;
    Load(model, ui, ReportForm(tcu));
    for (std::int64_t step = 0; step < model.step_count(); ++step) {
      model.SetStep(step);
      ui.cursor.step = step;
      Frame(model, ui, Sweep(frame, display), frame % 11 == 0);
      ++frame;
      ASSERT_GT(ImGui::GetDrawData()->TotalVtxCount, 0) << "step " << step;
    }
  }
  EXPECT_GT(frame, 500);
  // The thread picker: a click somewhere over the grid pinned some thread, and the pin stays in range.
  if (VortexState(ui).pinned_core >= 0) {
    EXPECT_LT(VortexState(ui).pinned_core, VortexState(ui).machine.cores);
    EXPECT_LT(VortexState(ui).pinned_warp, VortexState(ui).machine.warps_per_core);
    EXPECT_LT(VortexState(ui).pinned_thread, VortexState(ui).machine.threads_per_warp);
  }
}

TEST(VortexPanel, EditedMachinesAndProblemsThatDoNotFit) {
  const ImVec2 display(1280, 720);
  Headless imgui(display);
  Model model;
  UiState ui;
  Load(model, ui, ReportForm(false));
  struct Case {
    int cores, warps, threads;
    std::int64_t lmem;
    int fp_registers;
    vortex::Mode mode;
  };
  const Case cases[] = {
      {1, 1, 8, 16384, 32, vortex::Mode::kSimt},   {3, 2, 8, 16384, 32, vortex::Mode::kSimt},
      {8, 4, 8, 16384, 32, vortex::Mode::kSimt},   {64, 2, 8, 16384, 32, vortex::Mode::kSimt},
      {4, 2, 8, 1024, 32, vortex::Mode::kSimt},    {4, 4, 8, 16384, 16, vortex::Mode::kSimt},
      {4, 3, 8, 16384, 32, vortex::Mode::kSimt},   {4, 2, 4, 16384, 32, vortex::Mode::kTcu},
      {4, 1, 4, 16384, 32, vortex::Mode::kTcu},    {4, 2, 16, 2048, 32, vortex::Mode::kTcu},
      {0, 2, 8, 16384, 32, vortex::Mode::kSimt},   {4, 2, 8, -5, 32, vortex::Mode::kSimt},
  };
  int frame = 0;
  for (const Case& c : cases) {
    VortexState(ui).machine = {c.cores, c.warps, c.threads, c.lmem, c.fp_registers};
    VortexState(ui).mode = c.mode;
    VortexState(ui).pinned_core = 2;  // may lie outside the machine: the panel falls back to an active thread
    VortexState(ui).pinned_warp = 5;
    VortexState(ui).pinned_thread = 9;
    for (std::int64_t step : {std::int64_t{0}, std::int64_t{5}, model.step_count() / 2, model.step_count() - 1}) {
      model.SetStep(step);
      for (int k = 0; k < 3; ++k) Frame(model, ui, Sweep(frame++, display), false);
      ASSERT_GT(ImGui::GetDrawData()->TotalVtxCount, 0);
    }
  }
  // Problems the programs cannot take or do not fit: d = 32, N = 48 (not a power of two), a long sequence.
  VortexState(ui).machine = vortex::kReportMachine;
  for (const auto& [n, d] : {std::pair{64, 32}, std::pair{48, 8}, std::pair{1024, 64}, std::pair{8, 4}}) {
    ProblemForm form = ReportForm(false);
    form.n = n;
    form.d = d;
    Load(model, ui, form);
    for (const vortex::Mode mode : {vortex::Mode::kSimt, vortex::Mode::kTcu}) {
      VortexState(ui).mode = mode;
      for (std::int64_t step : {std::int64_t{0}, model.step_count() / 3, model.step_count() - 2}) {
        model.SetStep(step);
        for (int k = 0; k < 2; ++k) Frame(model, ui, Sweep(frame++, display), k == 1);
      }
      ASSERT_GT(ImGui::GetDrawData()->TotalVtxCount, 0) << n << " " << d;
    }
  }
}

// Optional: the panel alone as PNGs (SIMT and TCU at chosen steps), for the README and by-eye checks.
TEST(VortexPanel, WritesScreenshotsWhenAsked) {
  const char* dir = std::getenv("FLASHVIZ_VORTEX_SHOTS");
  if (!dir) GTEST_SKIP() << "set FLASHVIZ_VORTEX_SHOTS=DIR to write the panel's PNGs";
  Model model;
  UiState ui;
  struct Shot {
    bool tcu;
    std::int64_t step;
    const char* name;
  };
  for (const Shot& shot : {Shot{false, 12, "vortex_simt_update_o.png"}, Shot{true, 14, "vortex_tcu_scores.png"},
                           Shot{true, 18, "vortex_tcu_update_o_wmma.png"}}) {
    VortexState(ui).mode = shot.tcu ? vortex::Mode::kTcu : vortex::Mode::kSimt;
    VortexState(ui).color_lanes = false;
    VortexState(ui).compare_wmma = shot.tcu && shot.step == 18;
    Load(model, ui, ReportForm(shot.tcu));
    model.SetStep(shot.step);
    std::string error;
    ASSERT_TRUE(RenderToPng(1400, shot.tcu ? 1060 : 720, [&] { DrawVortexPanel(model, ui); },
                            std::string(dir) + "/" + shot.name, &error))
        << error;
  }
}

}  // namespace
}  // namespace flashviz
