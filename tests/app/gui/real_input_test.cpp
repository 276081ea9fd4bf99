// Real input: keys and mouse clicks sent through the X server (the XTEST extension, as xdotool does) to the
// interactive window, under Xvfb in CI. They reach the app the way a user's do: X events, GLFW's callbacks,
// ImGui's GLFW backend, the controller's shortcuts and the panels' hit areas. Keys are tapped the way a
// program sends them (press and release back to back), which a loop waiting for input must not lose.
#include <gtest/gtest.h>

#define GLFW_INCLUDE_NONE
#include <GLFW/glfw3.h>

#include <chrono>
#include <cstdlib>
#include <functional>
#include <memory>
#include <string>
#include <thread>

#include "app/gui/gui_app.h"

// Xlib last: its macros (None, True, False, Status, ...) would clash with the headers above.
#include <X11/Xlib.h>
#include <X11/extensions/XTest.h>
#include <X11/keysym.h>

namespace flashviz {
namespace {

GuiOptions Options() {
  GuiOptions o;
  o.problem.n = 64;
  o.problem.d = 8;
  o.problem.br = 16;
  o.problem.bc = 16;
  o.problem.order = "q";
  o.problem_given = true;
  o.step = 0;
  o.width = 1280;
  o.height = 720;
  return o;
}

class RealInput : public ::testing::Test {
 protected:
  void SetUp() override {
    const char* display = std::getenv("DISPLAY");
    if (!display || !*display) GTEST_SKIP() << "no display (scripts/test runs the suite under Xvfb)";
    x_ = XOpenDisplay(nullptr);
    if (!x_) GTEST_SKIP() << "cannot open display " << display;
    int event_base = 0, error_base = 0, major = 0, minor = 0;
    if (!XTestQueryExtension(x_, &event_base, &error_base, &major, &minor))
      GTEST_SKIP() << "the X server has no XTEST extension";
    window_ = std::make_unique<InteractiveWindow>(Options());
    ASSERT_TRUE(TakeFocus()) << "the window never got the focus";
    ASSERT_TRUE(FramesUntil([&] { return window_->ui().report.step_view_drawn; })) << "no step view drawn";
  }
  void TearDown() override {
    window_.reset();
    if (x_) XCloseDisplay(x_);
  }

  // Turns the main loop until `done` holds; false after `frames` frames without it.
  bool FramesUntil(const std::function<bool()>& done, int frames = 80) {
    for (int k = 0; k < frames; ++k) {
      if (!window_->Frame()) return false;
      if (done()) return true;
    }
    return false;
  }
  // No window manager under Xvfb: the test focuses the window itself, as a user's click would. XTEST's keys go
  // to whichever window holds the X server's focus, so a tap first asks the server (GLFW's own focus flag lags
  // behind another client's XSetInputFocus) and takes the focus back if another window has it, without turning
  // a frame when ours has it: two taps between frames are part of what is tested. Our X window is the one that
  // holds the focus the first time GLFW reports it focused (SetUp).
  ::Window ServerFocus() const {
    ::Window focus = 0;
    int revert_to = 0;
    XGetInputFocus(x_, &focus, &revert_to);
    return focus;
  }
  bool Focused() const {
    const bool glfw_focused = glfwGetWindowAttrib(window_->window(), GLFW_FOCUSED) != 0;
    return glfw_focused && (own_x_window_ == 0 || ServerFocus() == own_x_window_);
  }
  bool TakeFocus() {
    if (Focused()) return true;
    const bool focused = FramesUntil([&] {
      if (Focused()) return true;
      glfwFocusWindow(window_->window());
      return false;
    });
    if (focused && own_x_window_ == 0) own_x_window_ = ServerFocus();
    return focused;
  }
  void Key(KeySym symbol, bool down) {
    XTestFakeKeyEvent(x_, XKeysymToKeycode(x_, symbol), down ? True : False, CurrentTime);
  }
  // Press and release in one go, with an optional modifier held around them, then 30 ms without a frame: GLFW
  // reads a release followed by a press of the same key within 20 ms as the keyboard's auto-repeat (X servers
  // without detectable auto-repeat, Xvfb among them, send repeats that way), and no hand taps that fast.
  void Tap(KeySym symbol, KeySym modifier = NoSymbol) {
    ASSERT_TRUE(TakeFocus()) << "another X client holds the keyboard focus; the tap would go to it";
    if (modifier != NoSymbol) Key(modifier, true);
    Key(symbol, true);
    Key(symbol, false);
    if (modifier != NoSymbol) Key(modifier, false);
    XSync(x_, False);
    std::this_thread::sleep_for(std::chrono::milliseconds(30));
  }
  // A left click at (x, y) in the window's framebuffer pixels (the same as window coordinates here).
  void Click(float x, float y) {
    int wx = 0, wy = 0;
    glfwGetWindowPos(window_->window(), &wx, &wy);
    XTestFakeMotionEvent(x_, -1, wx + static_cast<int>(x), wy + static_cast<int>(y), CurrentTime);
    XSync(x_, False);
    FramesUntil([] { return false; }, 3);  // ImGui sees the pointer over the item before the press
    XTestFakeButtonEvent(x_, 1, True, CurrentTime);
    XTestFakeButtonEvent(x_, 1, False, CurrentTime);
    XSync(x_, False);
  }
  const UiState& ui() const { return window_->ui(); }

  Display* x_ = nullptr;
  ::Window own_x_window_ = 0;
  std::unique_ptr<InteractiveWindow> window_;
};

TEST_F(RealInput, ArrowsHomeEndAndSpaceDriveTheCursor) {
  const Model& model = window_->model();
  ASSERT_EQ(ui().step, 0);
  Tap(XK_Right);
  EXPECT_TRUE(FramesUntil([&] { return ui().step == 1; })) << "step " << ui().step;
  Tap(XK_Right);
  Tap(XK_Right);
  EXPECT_TRUE(FramesUntil([&] { return ui().step == 3; })) << "two quick taps: step " << ui().step;
  Tap(XK_Left);
  EXPECT_TRUE(FramesUntil([&] { return ui().step == 2; })) << "step " << ui().step;

  FramesUntil([&] { return model.step() == 2; });
  const std::int64_t next_tile = model.NextTileIterationStep();
  ASSERT_GT(next_tile, 3);
  Tap(XK_Right, XK_Shift_L);
  EXPECT_TRUE(FramesUntil([&] { return ui().step == next_tile; })) << "Shift+Right: step " << ui().step;

  Tap(XK_End);
  EXPECT_TRUE(FramesUntil([&] { return ui().step == model.step_count() - 1; })) << "End: step " << ui().step;
  Tap(XK_Home);
  EXPECT_TRUE(FramesUntil([&] { return ui().step == 0; })) << "Home: step " << ui().step;

  Tap(XK_space);
  EXPECT_TRUE(FramesUntil([&] { return ui().playing && ui().step > 0; })) << "Space did not start playback";
  Tap(XK_space);
  EXPECT_TRUE(FramesUntil([&] { return !ui().playing; })) << "Space did not pause";
}

TEST_F(RealInput, NumberKeysSwitchTheCentreTabs) {
  ASSERT_EQ(ui().active_tab, "step");
  Tap(XK_2);
  EXPECT_TRUE(FramesUntil([&] { return ui().active_tab != "step"; })) << "still on " << ui().active_tab;
  const std::string second = ui().active_tab;
  Tap(XK_1);
  EXPECT_TRUE(FramesUntil([&] { return ui().active_tab == "step"; })) << "still on " << ui().active_tab;
  EXPECT_NE(second, "step");
}

TEST_F(RealInput, AClickOnARowOfQSelectsIt) {
  const ScreenRect q = ui().report.step_q;
  const int n = window_->model().problem().n;
  for (int row : {40, 5}) {
    Click((q.min.x + q.max.x) / 2, q.min.y + (static_cast<float>(row) + 0.5f) * q.height() / static_cast<float>(n));
    EXPECT_TRUE(FramesUntil([&] { return ui().selected_row == row; })) << "selected row " << ui().selected_row;
  }
}

}  // namespace
}  // namespace flashviz
