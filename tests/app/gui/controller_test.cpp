// The frame logic with no window: keys, playback, problem edits (invalid ones explained in place, the model
// kept), HW4 files, sessions through the UI requests.
#include "app/gui/controller.h"

#include <gtest/gtest.h>
#define GLFW_INCLUDE_NONE
#include <GLFW/glfw3.h>

#include <cmath>
#include <filesystem>
#include <functional>

#include "app/io/hw4_file.h"
#include "tests/viz/headless.h"
#include "viz/export.h"
#include "viz/lessons.h"
#include "viz/panels/lesson_panel.h"
#include "viz/frame_report.h"

namespace flashviz {
namespace {

class Controller : public ::testing::Test {
 protected:
  void SetUp() override {
    InstallGlfwKeyMap(ImGui::GetIO());
    ui.form = FindPreset("first-lesson")->form;
    ASSERT_TRUE(ApplyForm(model, ui)) << ui.form_status.problem_error;
  }
  // One frame with `key` held (GLFW key code) and the modifiers given.
  void Frame(int key = -1, bool shift = false, bool ctrl = false, double dt = 1.0 / 60) {
    ImGuiIO& io = ImGui::GetIO();
    if (key >= 0) io.KeysDown[key] = true;
    io.KeyShift = shift;
    io.KeyCtrl = ctrl;
    ApplyStyle(ui, [&] { imgui.UploadFonts(); });
    ImGui::NewFrame();
    RunUiFrame(model, ui, dt);
    ImGui::Render();
    if (key >= 0) io.KeysDown[key] = false;
    io.KeyShift = io.KeyCtrl = false;
    // A frame with the key up, so the next press is a new press.
    ImGui::NewFrame();
    RunUiFrame(model, ui, 0.0);
    ImGui::Render();
  }
  testing::HeadlessImGui imgui;
  Model model;
  UiState ui;
};

TEST_F(Controller, ArrowsHomeEndAndShiftForTileIterations) {
  Frame(GLFW_KEY_RIGHT);
  EXPECT_EQ(model.step(), 1);
  Frame(GLFW_KEY_RIGHT);
  EXPECT_EQ(model.step(), 2);
  Frame(GLFW_KEY_LEFT);
  EXPECT_EQ(model.step(), 1);
  const std::int64_t next_tile = model.NextTileIterationStep();
  Frame(GLFW_KEY_RIGHT, /*shift=*/true);
  EXPECT_EQ(model.step(), next_tile);
  EXPECT_EQ(model.state().info.phase, TileIterationPhases(model.problem().order).front());
  const std::int64_t previous_tile = model.PreviousTileIterationStep();
  Frame(GLFW_KEY_LEFT, true);
  EXPECT_EQ(model.step(), previous_tile);
  Frame(GLFW_KEY_END);
  EXPECT_EQ(model.step(), model.step_count() - 1);
  Frame(GLFW_KEY_RIGHT);
  EXPECT_EQ(model.step(), model.step_count() - 1);  // clamped
  Frame(GLFW_KEY_HOME);
  EXPECT_EQ(model.step(), 0);
  Frame(GLFW_KEY_LEFT);
  EXPECT_EQ(model.step(), 0);
}

TEST_F(Controller, SpacePlaysAtTheChosenSpeedAndStopsAtTheEnd) {
  ui.cursor.speed = 60;  // one step per frame at 60 fps
  Frame(GLFW_KEY_SPACE);
  EXPECT_TRUE(ui.cursor.playing);
  for (int k = 0; k < 30; ++k) Frame(-1, false, false, 1.0 / 60);
  EXPECT_GE(model.step(), 25);
  EXPECT_LE(model.step(), 31);
  Frame(GLFW_KEY_SPACE);
  EXPECT_FALSE(ui.cursor.playing);
  const std::int64_t paused = model.step();
  for (int k = 0; k < 10; ++k) Frame();
  EXPECT_EQ(model.step(), paused);
  // By tile iteration, fast: every tick lands on the start of a tile iteration, and it ends at the last step.
  ui.cursor.play_unit = StepUnit::kTileIteration;
  ui.cursor.speed = 240;
  ui.cursor.playing = true;
  for (int k = 0; k < 400 && ui.cursor.playing; ++k) {
    Frame(-1, false, false, 1.0 / 60);
    if (ui.cursor.playing && model.tile_iteration() >= 0) {
      EXPECT_EQ(model.state().info.phase, TileIterationPhases(model.problem().order).front());
    }
  }
  EXPECT_FALSE(ui.cursor.playing);
  EXPECT_EQ(model.step(), model.step_count() - 1);
}

TEST_F(Controller, SpeedKeysAndViewShortcuts) {
  ui.cursor.speed = 8;
  Frame(GLFW_KEY_RIGHT_BRACKET);
  EXPECT_FLOAT_EQ(ui.cursor.speed, 16);
  Frame(GLFW_KEY_LEFT_BRACKET);
  Frame(GLFW_KEY_LEFT_BRACKET);
  EXPECT_FLOAT_EQ(ui.cursor.speed, 4);
  Frame(GLFW_KEY_L, false, true);
  EXPECT_TRUE(ui.appearance.presentation);
  Frame(GLFW_KEY_T, false, true);
  EXPECT_EQ(ui.appearance.theme, Theme::kLight);
  Frame(GLFW_KEY_3);
  EXPECT_EQ(ui.active_tab, "traffic");
  Frame(GLFW_KEY_F1);
  EXPECT_TRUE(ui.show_shortcuts);
  Frame(GLFW_KEY_Q, false, true);
  EXPECT_TRUE(ui.requests.Pending(UiRequest::kQuit));
}

TEST_F(Controller, InvalidEditsAreExplainedAndTheModelIsKept) {
  const AttentionProblem before = model.problem();
  model.SetStep(5);
  ui.cursor.step = 5;
  struct Bad {
    const char* what;
    std::function<void(ProblemForm&)> edit;
  };
  const Bad bad[] = {
      {"N = 0", [](ProblemForm& f) { f.n = 0; }},
      {"d = 0", [](ProblemForm& f) { f.d = 0; }},
      {"B_r = 0", [](ProblemForm& f) { f.tiles_from_sram = false; f.br = 0; }},
      {"tiny SRAM", [](ProblemForm& f) { f.tiles_from_sram = true; f.sram_bytes = 8; }},
      {"NaN scale", [](ProblemForm& f) { f.scale_mode = ProblemForm::ScaleMode::kCustom; f.scale = std::nan(""); }},
      {"too large for the GUI", [](ProblemForm& f) { f.n = 1 << 20; f.d = 1024; }},
      {"too many steps", [](ProblemForm& f) { f.n = 32768; f.d = 8; f.tiles_from_sram = false; f.br = f.bc = 1; }},
      {"missing file", [](ProblemForm& f) { f.input_path = "/nonexistent/in.bin"; }},
  };
  for (const Bad& b : bad) {
    ProblemForm form = FindPreset("first-lesson")->form;
    b.edit(form);
    ui.form = form;
    ui.requests.Push(UiRequest::kApplyForm);
    Frame();
    EXPECT_FALSE(ui.form_status.problem_error.empty()) << b.what;
    EXPECT_EQ(model.problem().n, before.n) << b.what;
    EXPECT_EQ(model.problem().br, before.br) << b.what;
    EXPECT_EQ(model.step(), 5) << b.what;
  }
  ui.form = FindPreset("causal")->form;
  ui.requests.Push(UiRequest::kApplyForm);
  Frame();
  EXPECT_TRUE(ui.form_status.problem_error.empty());
  EXPECT_TRUE(model.problem().causal);
  EXPECT_EQ(model.step(), 0);
}

// Toggling the loop order or the causal mask keeps the cursor on the same phase of the same tile pair (the
// issue: it went back to step 0), and a problem of another tile grid starts at step 0.
TEST_F(Controller, TogglingTheOrderOrTheMaskKeepsThePosition) {
  std::int64_t step = 0;
  while (model.schedule().Info(step).phase != Phase::kRowMax || model.schedule().Info(step).i != 2 ||
         model.schedule().Info(step).j != 1)
    ++step;
  ui.cursor.step = step;
  ui.cursor.selected_row = 5;
  Frame();
  ASSERT_EQ(model.step(), step);
  for (const auto& toggle : std::vector<std::function<void(ProblemForm&)>>{
           [](ProblemForm& f) { f.order = LoopOrder::kQOuter; }, [](ProblemForm& f) { f.causal = true; },
           [](ProblemForm& f) { f.order = LoopOrder::kKvOuter; }, [](ProblemForm& f) { f.seed = 7; }}) {
    toggle(ui.form);
    ui.requests.Push(UiRequest::kApplyForm);
    Frame();
    ASSERT_TRUE(ui.form_status.problem_error.empty()) << ui.form_status.problem_error;
    const StepInfo info = model.schedule().Info(model.step());
    EXPECT_EQ(info.phase, Phase::kRowMax) << LoopOrderName(model.problem().order);
    EXPECT_EQ(info.i, 2);
    EXPECT_EQ(info.j, 1);
    EXPECT_EQ(ui.cursor.selected_row, 5);
  }
  ui.form.n = 16;  // 8 × 8 tiles now
  ui.requests.Push(UiRequest::kApplyForm);
  Frame();
  EXPECT_EQ(model.step(), 0);
  EXPECT_EQ(ui.cursor.selected_row, -1);
}

// A lesson from the menu's entry point: it loads its problem, stands at its first stop, and PageDown / PageUp
// (a presenter's clicker) move between stops; a stop with a question stands one step before it until answered.
TEST_F(Controller, ALessonWalksWithPageDownAndPageUp) {
  ASSERT_TRUE(StartLesson(ui, "causal-mask"));
  const Lesson& lesson = *FindLesson("causal-mask");
  for (int k = 0; k < 3; ++k) Frame();
  EXPECT_TRUE(model.problem().causal);
  EXPECT_EQ(model.problem().n, lesson.form.n);
  EXPECT_EQ(model.step(), StopStep(model.schedule(), lesson.stops[0]).value_or(-1));
  Frame(GLFW_KEY_PAGE_DOWN);
  Frame();
  EXPECT_EQ(LessonState(ui).stop, 1);
  ASSERT_TRUE(lesson.stops[1].question.has_value());
  EXPECT_EQ(model.step(), StopStep(model.schedule(), lesson.stops[1]).value_or(-1) - 1);
  EXPECT_EQ(ui.active_tab, lesson.stops[1].panel);
  Frame(GLFW_KEY_PAGE_UP);
  Frame();
  EXPECT_EQ(LessonState(ui).stop, 0);
  EXPECT_EQ(model.step(), StopStep(model.schedule(), lesson.stops[0]).value_or(-1));
  // The last stop turns the mask off: the lesson's own problem follows.
  LessonStep(ui, static_cast<int>(lesson.stops.size()) - 1);
  for (int k = 0; k < 3; ++k) Frame();
  EXPECT_FALSE(model.problem().causal);
  EXPECT_EQ(model.step(), model.step_count() - 1);
}

// The Export dialog's CSVs go through the request queue: the tile at the current step, whole or not at all.
TEST_F(Controller, ExportWritesTheTileAndTheHistoryAsCsv) {
  ui.cursor.step = 7;  // update_stats of tile pair (0, 0): every column of the tile is filled in
  Frame();
  const std::string path = (std::filesystem::temp_directory_path() / "flashviz_controller_tile.csv").string();
  ui.export_kind = static_cast<int>(ExportKind::kTileCsv);
  ui.export_path = path;
  ui.requests.Push(UiRequest::kExport);
  Frame();
  EXPECT_EQ(ui.status, "wrote " + path);
  std::FILE* f = std::fopen(path.c_str(), "rb");
  ASSERT_NE(f, nullptr);
  char line[200] = {};
  ASSERT_NE(std::fgets(line, sizeof(line), f), nullptr);
  EXPECT_STREQ(line, "row,key,S,P,m_tile,l_tile,m,l,alpha\n");
  ASSERT_NE(std::fgets(line, sizeof(line), f), nullptr);
  EXPECT_EQ(std::string(line).rfind("0,0,", 0), 0u) << line;
  EXPECT_EQ(std::string(line).find(",,"), std::string::npos) << "a column left empty at update_stats: " << line;
  std::fclose(f);
  std::filesystem::remove(path);
  ui.export_path = "/nonexistent-dir/tile.csv";
  ui.requests.Push(UiRequest::kExport);
  Frame();
  EXPECT_TRUE(ui.status_is_error) << ui.status;
}

// One step forward at a watchable pace starts a transition that runs its course in transition_seconds; a jump,
// fast playback or animations off show the step at once.
TEST_F(Controller, TransitionsFollowOneStepForwardOnly) {
  Frame();
  Frame(GLFW_KEY_RIGHT);
  EXPECT_EQ(model.step(), 1);
  EXPECT_TRUE(InTransition(ui));
  const double after_two_frames = ui.cursor.transition;
  UpdateTransition(model, ui, ui.cursor.transition_seconds / 2);
  EXPECT_NEAR(ui.cursor.transition, after_two_frames + 0.5, 1e-9);
  UpdateTransition(model, ui, ui.cursor.transition_seconds);
  EXPECT_EQ(ui.cursor.transition, 1.0);
  EXPECT_FALSE(InTransition(ui));

  Frame(GLFW_KEY_END);  // a jump
  EXPECT_FALSE(InTransition(ui));
  Frame(GLFW_KEY_HOME);
  ui.appearance.animate = false;
  Frame(GLFW_KEY_RIGHT);
  EXPECT_FALSE(InTransition(ui)) << "animations are off";
  ui.appearance.animate = true;
  ui.cursor.playing = true;
  ui.cursor.speed = 60;  // faster than a transition can be watched
  Frame(-1, false, false, 1.0 / 30);
  EXPECT_GT(model.step(), 1);
  EXPECT_FALSE(InTransition(ui)) << "fast playback";
}

TEST_F(Controller, Hw4FilesWithABatchPicker) {
  Hw4Input input;
  input.b = 3;
  input.n = 12;
  input.d = 4;
  for (int k = 0; k < 3 * 3 * 12 * 4; ++k) input.qkv.push_back(static_cast<float>((k * 37) % 11) / 4.0f - 1.0f);
  const std::string path = (std::filesystem::temp_directory_path() / "flashviz_controller_test.bin").string();
  const std::vector<std::uint8_t> bytes = SerializeHw4(input);
  std::FILE* f = std::fopen(path.c_str(), "wb");
  ASSERT_NE(f, nullptr);
  std::fwrite(bytes.data(), 1, bytes.size(), f);
  std::fclose(f);

  ui.form.input_path = path;
  ui.form.batch = 2;
  ui.requests.Push(UiRequest::kInspectInputFile);
  ui.requests.Push(UiRequest::kApplyForm);
  Frame();
  EXPECT_TRUE(ui.form_status.problem_error.empty()) << ui.form_status.problem_error;
  EXPECT_EQ(ui.form_status.input_file_batches, 3);
  EXPECT_EQ(model.problem().n, 12);
  EXPECT_EQ(model.problem().d, 4);
  EXPECT_EQ(ui.form.n, 12);
  EXPECT_EQ(model.inputs().q[0], input.q(2)[0]);
  ui.form.batch = 3;  // out of range
  ui.requests.Push(UiRequest::kApplyForm);
  Frame();
  EXPECT_FALSE(ui.form_status.problem_error.empty());
  EXPECT_EQ(model.inputs().q[0], input.q(2)[0]);

  // A file that is not HW4 is explained.
  f = std::fopen(path.c_str(), "wb");
  std::fputs("not an hw4 file", f);
  std::fclose(f);
  ui.form.batch = 0;
  ui.requests.Push(UiRequest::kInspectInputFile);
  ui.requests.Push(UiRequest::kApplyForm);
  Frame();
  EXPECT_FALSE(ui.form_status.problem_error.empty());
  EXPECT_EQ(ui.form_status.input_file_batches, 0);
  EXPECT_FALSE(ui.form_status.input_file_info.empty());
  std::filesystem::remove(path);
}

TEST_F(Controller, SessionsThroughTheRequests) {
  const std::string path = (std::filesystem::temp_directory_path() / "flashviz_controller_session.json").string();
  ui.form = FindPreset("vortex")->form;
  ui.requests.Push(UiRequest::kApplyForm);
  Frame();
  ui.cursor.step = 40;
  Frame();
  ui.session_path = path;
  ui.requests.Push(UiRequest::kSaveSession);
  Frame();
  EXPECT_NE(ui.status.find("saved"), std::string::npos) << ui.status;

  ui.form = FindPreset("first-lesson")->form;
  ui.requests.Push(UiRequest::kApplyForm);
  Frame();
  EXPECT_EQ(model.problem().n, 8);
  ui.requests.Push(UiRequest::kLoadSession);
  Frame();
  EXPECT_NE(ui.status.find("loaded"), std::string::npos) << ui.status;
  EXPECT_EQ(model.problem().n, 64);
  EXPECT_EQ(model.step(), 40);
  std::filesystem::remove(path);

  ui.session_path = "/nonexistent/s.json";
  ui.requests.Push(UiRequest::kLoadSession);
  Frame();
  EXPECT_NE(ui.status.find("/nonexistent/s.json"), std::string::npos);
  EXPECT_TRUE(ui.status_is_error);
  EXPECT_EQ(model.problem().n, 64);
}

// A malformed session under a long name: one status line, in the error colour, saying why in words (not
// nlohmann's "[json.exception.parse_error.101]"), cut to fit the menu bar instead of running off the screen.
TEST_F(Controller, ASessionErrorIsOneReadableLineThatFits) {
  const std::string path =
      (std::filesystem::temp_directory_path() / (std::string(150, 'x') + "_flashviz_malformed.json")).string();
  std::FILE* f = std::fopen(path.c_str(), "wb");
  ASSERT_NE(f, nullptr);
  std::fputs("{\"flashviz_session\": 1, \"problem\": {\"n\": 8,,}}", f);
  std::fclose(f);
  ui.session_path = path;
  ui.requests.Push(UiRequest::kLoadSession);
  FrameReport report;
  {
    const ScopedFrameReport reporting(&report);
    Frame();
  }
  std::filesystem::remove(path);
  EXPECT_TRUE(ui.status_is_error);
  EXPECT_NE(ui.status.find("malformed session"), std::string::npos) << ui.status;
  EXPECT_EQ(ui.status.find("json.exception"), std::string::npos) << ui.status;
  EXPECT_GT(report.status.width(), 0);
  EXPECT_GE(report.status.min.x, 0);
  EXPECT_LE(report.status.max.x, ImGui::GetIO().DisplaySize.x);
}

}  // namespace
}  // namespace flashviz
