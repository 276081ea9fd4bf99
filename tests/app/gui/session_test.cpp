// Sessions: what is saved comes back, malformed files are refused with a reason and change nothing.
#include "app/gui/session.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "viz/live_gpu.h"
#include "viz/panels/panel_table.h"
#include "viz/panels/vortex_panel.h"

namespace flashviz {
namespace {

TEST(Session, RoundTripsEveryField) {
  UiState ui;
  ui.form = FindPreset("vortex")->form;
  ui.form.causal = true;
  ui.form.scale_mode = ProblemForm::ScaleMode::kCustom;
  ui.form.scale = 0.3125;
  ui.form.seed = 12345678901ULL;
  ui.form.input_path = "in.bin";
  ui.form.batch = 2;
  SetPanelOpen(ui, *FindPanel("traffic"), false);
  ui.active_tab = "step";
  ui.cursor.selected_row = 17;
  ui.appearance.theme = Theme::kLight;
  ui.appearance.ui_scale = 1.5f;
  ui.appearance.presentation = true;
  ui.cursor.speed = 32;
  ui.cursor.play_unit = StepUnit::kTileIteration;
  VortexState(ui).machine.cores = 8;
  VortexState(ui).machine.local_memory_bytes = 32768;
  VortexState(ui).mode = vortex::Mode::kTcu;
  VortexState(ui).compare_wmma = true;
  LiveGpuState(ui).variant = "flash2_row";
  LiveGpuState(ui).force_host_copy = true;
  LiveGpuState(ui).rerun_on_change = false;
  const std::string json = SessionToJson(ui, 99);

  UiState back;
  EXPECT_EQ(SessionFromJson(json, "s.json", back), 99);
  EXPECT_EQ(back.form, ui.form);
  EXPECT_FALSE(IsPanelOpen(back, *FindPanel("traffic")));
  EXPECT_TRUE(IsPanelOpen(back, *FindPanel("step")));
  EXPECT_EQ(back.focus_tab, "step");
  EXPECT_EQ(back.cursor.selected_row, 17);
  EXPECT_EQ(back.appearance.theme, Theme::kLight);
  EXPECT_FLOAT_EQ(back.appearance.ui_scale, 1.5f);
  EXPECT_TRUE(back.appearance.presentation);
  EXPECT_FLOAT_EQ(back.cursor.speed, 32);
  EXPECT_EQ(back.cursor.play_unit, StepUnit::kTileIteration);
  EXPECT_EQ(VortexState(back).machine, VortexState(ui).machine);
  EXPECT_EQ(VortexState(back).mode, vortex::Mode::kTcu);
  EXPECT_TRUE(VortexState(back).compare_wmma);
  EXPECT_EQ(LiveGpuState(back).variant, "flash2_row");
  EXPECT_TRUE(LiveGpuState(back).force_host_copy);
  EXPECT_FALSE(LiveGpuState(back).rerun_on_change);
  EXPECT_TRUE(back.requests.Pending(UiRequest::kRebuildStyle));
}

TEST(Session, MalformedSessionsChangeNothing) {
  const char* bad[] = {
      "",
      "{",
      "[]",
      R"({"problem": {}})",
      R"({"flashviz_session": 2, "problem": {}})",
      R"({"flashviz_session": 1})",
      R"({"flashviz_session": 1, "problem": {"order": "diagonal"}})",
      R"({"flashviz_session": 1, "problem": {"n": "many"}})",
      R"({"flashviz_session": 1, "problem": {}, "theme": "pink"})",
      R"({"flashviz_session": 1, "problem": {"tiles": "some"}})",
      R"({"flashviz_session": 1, "problem": {}, "panels": {"step": 3}})",
      R"({"flashviz_session": 1, "problem": {}, "vortex": {"mode": "gpu"}})",
      R"({"flashviz_session": 1, "problem": {}, "live_gpu": {"kernel": 7}})",
  };
  for (const char* text : bad) {
    UiState ui;
    ui.form.n = 77;
    ui.cursor.speed = 3;
    EXPECT_THROW(SessionFromJson(text, "bad.json", ui), InputError) << text;
    EXPECT_EQ(ui.form.n, 77) << text;
    EXPECT_FLOAT_EQ(ui.cursor.speed, 3) << text;
  }
}

TEST(Session, UnknownPanelsAreIgnoredAndValuesClamped) {
  UiState ui;
  const std::int64_t step = SessionFromJson(
      R"({"flashviz_session": 1, "problem": {"n": 16}, "panels": {"from-another-build": true},)"
      R"( "ui_scale": 100, "step": 5})",
      "s.json", ui);
  EXPECT_EQ(step, 5);
  EXPECT_EQ(ui.form.n, 16);
  EXPECT_FLOAT_EQ(ui.appearance.ui_scale, 4.0f);
}

// Numbers are checked, not converted: 4294967360 would become 64 as an int, 1e10 is undefined behaviour as one,
// and version 1.5 is not version 1.
TEST(Session, NumbersOutsideTheirFieldAreRefusedByName) {
  const struct {
    const char* text;
    const char* says;
  } cases[] = {
      {R"({"flashviz_session": 1, "problem": {"n": 4294967360}})", "\"n\" = 4294967360 is out of range"},
      {R"({"flashviz_session": 1, "problem": {"n": 1e10}})", "\"n\" must be an integer"},
      {R"({"flashviz_session": 1, "problem": {"d": -3}})", "\"d\" = -3 is out of range"},
      {R"({"flashviz_session": 1.5, "problem": {}})", "\"flashviz_session\" must be an integer"},
      {R"({"flashviz_session": 1, "problem": {"seed": -1}})", "\"seed\" = -1 is out of range"},
      {R"({"flashviz_session": 1, "problem": {"causal": 1}})", "\"causal\" must be true or false"},
      {R"({"flashviz_session": 1, "problem": {}, "step": 2.5})", "\"step\" must be an integer"},
      {R"({"flashviz_session": 1, "problem": {"scale": "big"}})", "\"scale\" must be a number"},
      {R"({"flashviz_session": 1, "problem": {}, "vortex": {"cores": 0}})", "\"cores\" = 0 is out of range"},
      {R"({"flashviz_session": 1, "problem": 3})", "\"problem\" must be an object"},
  };
  for (const auto& c : cases) {
    UiState ui;
    ui.form.n = 77;
    try {
      SessionFromJson(c.text, "s.json", ui);
      ADD_FAILURE() << c.text << " was accepted";
    } catch (const InputError& e) {
      EXPECT_NE(std::string(e.what()).find(c.says), std::string::npos) << e.what();
      EXPECT_EQ(std::string(e.what()).find("json.exception"), std::string::npos) << e.what();
    }
    EXPECT_EQ(ui.form.n, 77) << "a refused session changed the state";
  }
  UiState ui;
  SessionFromJson(R"({"flashviz_session": 1, "problem": {"seed": 18446744073709551615}})", "s.json", ui);
  EXPECT_EQ(ui.form.seed, 18446744073709551615ull);
}

TEST(Session, FilesAreWrittenWholeAndMissingFilesExplained) {
  const std::string path = (std::filesystem::temp_directory_path() / "flashviz_session_test.json").string();
  UiState ui;
  ui.form.n = 40;
  SaveSession(path, ui, 3);
  UiState back;
  EXPECT_EQ(LoadSession(path, back), 3);
  EXPECT_EQ(back.form.n, 40);
  std::filesystem::remove(path);
  try {
    LoadSession(path, back);
    FAIL() << "a missing session loaded";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find(path), std::string::npos);
  }
  EXPECT_THROW(SaveSession("/nonexistent-dir/s.json", ui, 0), InputError);
  // Not a session: a directory, a device that never ends, a FIFO; each refused at once with its reason.
  for (const std::string& not_a_file : {std::filesystem::temp_directory_path().string(), std::string("/dev/zero")}) {
    try {
      LoadSession(not_a_file, back);
      FAIL() << not_a_file << " loaded";
    } catch (const InputError& e) {
      EXPECT_NE(std::string(e.what()).find("regular files"), std::string::npos) << e.what();
    }
  }
  // Never written over the HW4 file the session names.
  const std::string hw4 = (std::filesystem::temp_directory_path() / "flashviz_session_test_input.bin").string();
  { std::ofstream(hw4) << "input"; }
  ui.form.input_path = hw4;
  EXPECT_THROW(SaveSession(hw4, ui, 0), InputError);
  std::ifstream kept(hw4);
  EXPECT_EQ(std::string(std::istreambuf_iterator<char>(kept), {}), "input");
  std::filesystem::remove(hw4);
}

}  // namespace
}  // namespace flashviz
