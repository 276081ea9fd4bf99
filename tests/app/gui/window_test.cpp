// Real GL: one frame through an EGL context (no window system) and through a hidden GLFW window (under Xvfb
// when there is no display), with the screenshot checked: its size, that it is not blank, and that the
// current tile's cursor is where the frame report says. Skipped only when the context cannot exist here.
#include <gtest/gtest.h>

#include <cstdlib>
#include <set>

#include "app/gui/gui_app.h"

namespace flashviz {
namespace {

bool HaveDisplay() {
  const char* display = std::getenv("DISPLAY");
  return display && *display;
}

GuiOptions Options() {
  GuiOptions o;
  o.problem.n = 64;
  o.problem.d = 8;
  o.problem.br = 16;
  o.problem.bc = 16;
  o.problem.order = "q";
  o.problem_given = true;
  o.step = 4;  // Q-outer: load_q, load_kv, scores, rowmax, exp: tile pair (0, 0) is current
  o.width = 1280;
  o.height = 720;
  return o;
}

void CheckFrame(const OffscreenFrame& frame, const GuiOptions& o) {
  ASSERT_EQ(frame.image.width, o.width);
  ASSERT_EQ(frame.image.height, o.height);
  std::set<ImU32> colours;
  for (std::size_t k = 0; k < frame.image.pixels.size(); k += 7) colours.insert(frame.image.pixels[k]);
  EXPECT_GT(colours.size(), 100u) << "the frame looks blank";
  ASSERT_TRUE(frame.report.s_tile_visible);
  // The dark theme's cursor colour, just outside the S_ij tile and the Q_i tile.
  const ImU32 cursor = IM_COL32(255, 200, 0, 255);
  auto near_cursor = [&](float fx, float fy) {
    const ImU32 c = frame.image.at(static_cast<int>(fx), static_cast<int>(fy));
    for (int shift : {IM_COL32_R_SHIFT, IM_COL32_G_SHIFT, IM_COL32_B_SHIFT})
      if (std::abs(static_cast<int>((c >> shift) & 0xFF) - static_cast<int>((cursor >> shift) & 0xFF)) > 40)
        return false;
    return true;
  };
  const ScreenRect s = frame.report.s_tile, q = frame.report.q_tile;
  EXPECT_TRUE(near_cursor(s.min.x - 0.75f, (s.min.y + s.max.y) / 2)) << frame.renderer;
  EXPECT_TRUE(near_cursor((s.min.x + s.max.x) / 2, s.max.y + 0.75f)) << frame.renderer;
  EXPECT_TRUE(near_cursor(q.min.x - 0.75f, (q.min.y + q.max.y) / 2)) << frame.renderer;
  EXPECT_FALSE(near_cursor(frame.report.step_s.max.x - 3, frame.report.step_s.max.y - 3));
}

TEST(Window, ScreenshotThroughEgl) {
  const GuiOptions o = Options();
  OffscreenFrame frame;
  try {
    frame = RenderOffscreenFrame(o, GlBackend::kEgl);
  } catch (const InputError& e) {
    GTEST_SKIP() << "no EGL context here: " << e.what();
  }
  EXPECT_NE(frame.renderer.find("EGL"), std::string::npos);
  CheckFrame(frame, o);
}

TEST(Window, ScreenshotThroughAHiddenGlfwWindow) {
  if (!HaveDisplay()) GTEST_SKIP() << "no display (scripts/test runs the suite under Xvfb)";
  GuiOptions o = Options();
  o.width = 1920;
  o.height = 1080;
  const OffscreenFrame frame = RenderOffscreenFrame(o, GlBackend::kGlfw);
  EXPECT_NE(frame.renderer.find("GLFW"), std::string::npos);
  CheckFrame(frame, o);
}

TEST(Window, ScreenshotThroughWhateverThereIs) {
  // What --screenshot does by default: EGL, else a hidden window. Skipped only when neither exists.
  const GuiOptions o = Options();
  OffscreenFrame frame;
  try {
    frame = RenderOffscreenFrame(o, GlBackend::kAuto);
  } catch (const InputError& e) {
    if (HaveDisplay()) FAIL() << "a display is there, yet: " << e.what();
    GTEST_SKIP() << "neither a display nor EGL: " << e.what();
  }
  CheckFrame(frame, o);
}

}  // namespace
}  // namespace flashviz
