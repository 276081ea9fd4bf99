// The monkey: thousands of frames of random key presses, mouse moves and clicks, parameter edits (valid and
// invalid), scrubbing, panel toggles, theme and scale changes and session saves/loads. No crash, the model
// always valid, the cursor always in range (and, under the ASan preset, no leak and no undefined behaviour).
#include <gtest/gtest.h>
#define GLFW_INCLUDE_NONE
#include <GLFW/glfw3.h>

#include <filesystem>
#include <array>
#include <cmath>
#include <limits>
#include <random>

#include "app/gui/controller.h"
#include "app/io/hw4_file.h"
#include "tests/viz/headless.h"
#include "viz/panels/panel_table.h"

namespace flashviz {
namespace {

#ifdef __SANITIZE_ADDRESS__
constexpr int kFrames = 2500;
#else
constexpr int kFrames = 6000;
#endif

std::string WriteHw4(const std::string& name, int b, int n, int d) {
  Hw4Input input;
  input.b = b;
  input.n = n;
  input.d = d;
  for (int k = 0; k < b * 3 * n * d; ++k) input.qkv.push_back(static_cast<float>((k * 7919) % 601) / 100.0f - 3.0f);
  const std::string path = (std::filesystem::temp_directory_path() / name).string();
  const std::vector<std::uint8_t> bytes = SerializeHw4(input);
  std::FILE* f = std::fopen(path.c_str(), "wb");
  std::fwrite(bytes.data(), 1, bytes.size(), f);
  std::fclose(f);
  return path;
}

TEST(Monkey, ThousandsOfRandomFrames) {
  testing::HeadlessImGui imgui(ImVec2(1280, 720));
  ImGuiIO& io = ImGui::GetIO();
  InstallGlfwKeyMap(io);
  Model model;
  UiState ui;
  ui.form = FindPreset("first-lesson")->form;
  ASSERT_TRUE(ApplyForm(model, ui));
  const std::string good_file = WriteHw4("flashviz_monkey_good.bin", 2, 24, 4);
  const std::string garbage = (std::filesystem::temp_directory_path() / "flashviz_monkey_garbage.bin").string();
  {
    std::FILE* f = std::fopen(garbage.c_str(), "wb");
    std::fputs("garbage", f);
    std::fclose(f);
  }
  const std::string session = (std::filesystem::temp_directory_path() / "flashviz_monkey_session.json").string();

  std::mt19937 rng(20240611);
  auto pick = [&](auto... values) {
    const std::array<std::common_type_t<decltype(values)...>, sizeof...(values)> all{values...};
    return all[rng() % all.size()];
  };
  const int keys[] = {GLFW_KEY_SPACE, GLFW_KEY_LEFT, GLFW_KEY_RIGHT, GLFW_KEY_HOME, GLFW_KEY_END,
                      GLFW_KEY_LEFT_BRACKET, GLFW_KEY_RIGHT_BRACKET, GLFW_KEY_1, GLFW_KEY_2, GLFW_KEY_3,
                      GLFW_KEY_F1, GLFW_KEY_ESCAPE, GLFW_KEY_ENTER, GLFW_KEY_TAB};
  int held_key = -1;
  int problems_applied = 0, problems_refused = 0, decode_frames = 0, ring_frames = 0;
  for (int frame = 0; frame < kFrames; ++frame) {
    // Keys: press one now and then, with modifiers sometimes; release the last one.
    if (held_key >= 0) io.KeysDown[held_key] = false;
    held_key = -1;
    io.KeyShift = io.KeyCtrl = false;
    if (rng() % 3 == 0) {
      held_key = keys[rng() % std::size(keys)];
      io.KeyShift = rng() % 4 == 0;
      if (rng() % 40 == 0) {  // Ctrl shortcuts, rarely (a font rebuild each)
        io.KeyCtrl = true;
        held_key = pick(GLFW_KEY_L, GLFW_KEY_T, GLFW_KEY_EQUAL, GLFW_KEY_MINUS, GLFW_KEY_S, GLFW_KEY_O);
      }
      io.KeysDown[held_key] = true;
    }
    // The mouse: wander, click, drag, scroll.
    io.MousePos = ImVec2(static_cast<float>(rng() % 1280), static_cast<float>(rng() % 720));
    io.MouseDown[0] = rng() % 5 == 0;
    io.MouseWheel = rng() % 10 == 0 ? static_cast<float>(static_cast<int>(rng() % 5) - 2) : 0.0f;
    // Parameter edits, valid or not.
    if (rng() % 25 == 0) {
      ProblemForm& f = ui.form;
      switch (rng() % 16) {
        case 0: f.n = pick(-5, 0, 1, 2, 7, 8, 33, 64, 129, 256, 100000000); break;
        case 1: f.d = pick(0, 1, 3, 4, 8, 17, 2000); break;
        case 2: f.tiles_from_sram = !f.tiles_from_sram; break;
        case 3: f.br = pick(-1, 0, 1, 2, 5, 9, 100, 1 << 30); break;
        case 4: f.bc = pick(-1, 0, 1, 3, 8, 64, 1 << 30); break;
        case 5:
          f.sram_bytes = pick(std::int64_t{0}, std::int64_t{10}, std::int64_t{64}, std::int64_t{1024},
                              std::int64_t{16384}, std::int64_t{49152}, std::int64_t{1} << 42);
          break;
        case 6: f.order = rng() % 2 ? LoopOrder::kKvOuter : LoopOrder::kQOuter; break;
        case 7:
          f.scale_mode = static_cast<ProblemForm::ScaleMode>(rng() % 3);
          f.scale = pick(0.0, -1.0, 0.5, 1e300, std::nan(""), std::numeric_limits<double>::infinity());
          break;
        case 8: f.causal = !f.causal; break;
        case 9: f.seed = rng(); break;
        case 10:
          f.input_path = pick(std::string(), good_file, garbage, std::string("/nonexistent/x.bin"));
          f.batch = pick(-1, 0, 1, 2);
          ui.requests.Push(UiRequest::kInspectInputFile);
          break;
        case 11:
          f.decode = !f.decode;
          break;
        case 12:  // decoding's fields, valid or not
          f.kv_len = pick(-1, 0, 1, 9, 64, 300, 1 << 30);
          f.heads = pick(0, 1, 3, 4, 8);
          f.kv_heads = pick(0, 1, 2, 3, 8);
          f.q_rows = pick(0, 1, 2, 100);
          f.page = pick(0, 1, 8, 16, 1000);
          f.splits_from_sram = rng() % 2 == 0;
          f.splits = pick(-1, 1, 3, 64, 100000);
          break;
        case 13:
          f.ring = !f.ring;
          break;
        case 14:  // the ring's fields, valid or not
          f.ring_devices = pick(-1, 0, 1, 2, 3, 4, 8, 65);
          f.zigzag = rng() % 2 == 0;
          f.ring_tflops = pick(0.0, -1.0, 1e-6, 300.0, std::nan(""), std::numeric_limits<double>::infinity());
          f.ring_link_gbps = pick(0.0, 1.0, 300.0, 1e12, std::nan(""));
          break;
        default: f = Presets()[rng() % Presets().size()].form; break;
      }
      if (f.n > 300 && f.n < 1000000) f.n = 300;  // valid but big problems are slow under ASan; keep them small
      ui.requests.Push(UiRequest::kApplyForm);
    }
    if (rng() % 15 == 0) ui.cursor.step = static_cast<std::int64_t>(rng() % (model.step_count() + 20)) - 10;
    if (rng() % 60 == 0) {
      const auto panels = Panels();
      const PanelInfo& p = panels[rng() % panels.size()];
      SetPanelOpen(ui, p, rng() % 3 != 0);
      if (rng() % 2) ui.focus_tab = p.id;
    }
    if (rng() % 200 == 0) {
      ui.session_path = pick(session, std::string("/nonexistent/s.json"), garbage);
      ui.requests.Push(rng() % 2 ? UiRequest::kSaveSession : UiRequest::kLoadSession);
    }
    if (rng() % 300 == 0) {
      ui.appearance.ui_scale = pick(0.75f, 1.0f, 1.5f);
      ui.requests.Push(UiRequest::kRebuildStyle);
    }
    ui.cursor.playing = ui.cursor.playing || rng() % 50 == 0;
    ui.cursor.speed = rng() % 30 == 0 ? pick(0.25f, 4.0f, 240.0f) : ui.cursor.speed;

    const bool applying = ui.requests.Pending(UiRequest::kApplyForm);
    ApplyStyle(ui, [&] { imgui.UploadFonts(); });
    ImGui::NewFrame();
    RunUiFrame(model, ui, static_cast<double>(rng() % 100) / 1000.0);
    ImGui::Render();
    if (applying) (ui.form_status.problem_error.empty() ? problems_applied : problems_refused) += 1;

    ASSERT_TRUE(model.has_problem());
    ASSERT_GE(model.step(), 0);
    ASSERT_LT(model.step(), model.step_count());
    if (model.ring_mode()) {
      ++ring_frames;
      ASSERT_EQ(model.ring_state().info, model.ring_stepper().Info(model.step()));
      ASSERT_FALSE(RingGuiProblemError(model.ring_problem()).has_value());
    } else if (model.decode_mode()) {
      ++decode_frames;
      ASSERT_EQ(model.decode_state().info, model.decode_stepper().Info(model.step()));
      ASSERT_FALSE(DecodeGuiProblemError(model.decode_problem()).has_value());
    } else {
      ASSERT_EQ(model.state().info, model.stepper().Info(model.step()));
    }
    ASSERT_FALSE(GuiProblemError(model.problem()).has_value());
    ui.requests.Take(UiRequest::kQuit);
  }
  // Both kinds of edit happened, so the test exercised both paths.
  EXPECT_GT(problems_applied, 20);
  EXPECT_GT(problems_refused, 20);
  EXPECT_GT(decode_frames, 200);  // decoding's views were drawn too
  EXPECT_GT(ring_frames, 200);    // and the ring's
  std::filesystem::remove(good_file);
  std::filesystem::remove(garbage);
  std::filesystem::remove(session);
}

}  // namespace
}  // namespace flashviz
