// Real input: keys and mouse clicks sent through the X server (the XTEST extension, as xdotool does) to the
// interactive window. They reach the app the way a user's do: X events, GLFW's callbacks, ImGui's GLFW
// backend, the controller's shortcuts and the panels' hit areas. Keys are tapped the way a program sends them
// (press and release back to back), which a loop waiting for input must not lose.
//
// The test program starts an X server of its own (Xvfb): XTEST's keys go to whichever window holds the server's
// one keyboard focus, and on a shared server every other client (another test's window mapped, with GLFW's
// focus-on-show, between our focus check and our key) can take it. That race lost taps under `ctest -j2`.
#include <gtest/gtest.h>

#define GLFW_INCLUDE_NONE
#include <GLFW/glfw3.h>

#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <functional>
#include <memory>
#include <string>
#include <thread>

#include "app/gui/gui_app.h"
#include "kernels/common/format.h"

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

// An Xvfb for this process alone, started before the first window (GLFW keeps its first display for the life
// of the process) and stopped at exit. Empty display name (and the reason) when it cannot start.
class PrivateXServer {
 public:
  static PrivateXServer& Get() {
    static PrivateXServer server;
    return server;
  }
  const std::string& display() const { return display_; }
  const std::string& failure() const { return failure_; }

 private:
  PrivateXServer() {
    int ready[2];
    if (::pipe(ready) != 0) {
      failure_ = "pipe failed";
      return;
    }
    pid_ = ::fork();
    if (pid_ == 0) {
      ::close(ready[0]);
      const std::string fd = std::to_string(ready[1]);
      // -displayfd: the server picks a free display number and writes it there once it accepts clients.
      ::execlp("Xvfb", "Xvfb", "-displayfd", fd.c_str(), "-screen", "0", "1920x1080x24", "-nolisten", "tcp",
               "-noreset", static_cast<char*>(nullptr));
      ::_exit(127);
    }
    ::close(ready[1]);
    std::string number;
    pollfd wait{ready[0], POLLIN, 0};
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(30);
    while (pid_ > 0 && number.find('\n') == std::string::npos && std::chrono::steady_clock::now() < deadline) {
      if (::poll(&wait, 1, 100) <= 0) continue;
      char c = 0;
      if (::read(ready[0], &c, 1) != 1) break;
      number += c;
    }
    ::close(ready[0]);
    if (number.empty() || number.find('\n') == std::string::npos) {
      failure_ = pid_ > 0 ? "Xvfb did not start (is it installed? scripts/deps installs xvfb)" : "fork failed";
      return;
    }
    display_ = ":" + number.substr(0, number.find('\n'));
    ::setenv("DISPLAY", display_.c_str(), 1);
  }
  ~PrivateXServer() {
    if (pid_ <= 0) return;
    ::kill(pid_, SIGTERM);
    ::waitpid(pid_, nullptr, 0);
  }

  pid_t pid_ = -1;
  std::string display_, failure_;
};

class RealInput : public ::testing::Test {
 protected:
  void SetUp() override {
    const PrivateXServer& server = PrivateXServer::Get();
    if (server.display().empty()) GTEST_SKIP() << "no X server of our own: " << server.failure();
    x_ = XOpenDisplay(server.display().c_str());
    ASSERT_NE(x_, nullptr) << "cannot open our own display " << server.display();
    int event_base = 0, error_base = 0, major = 0, minor = 0;
    if (!XTestQueryExtension(x_, &event_base, &error_base, &major, &minor))
      GTEST_SKIP() << "the X server has no XTEST extension";
    window_ = std::make_unique<InteractiveWindow>(Options());
    ASSERT_TRUE(TakeFocus()) << "the window never got the focus";
    ASSERT_TRUE(FramesUntil([&] { return window_->last_frame().step_view_drawn; })) << "no step view drawn";
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
  // No window manager under Xvfb: the test focuses the window itself, as a user's click would. The server is
  // ours alone, yet a tap still asks it who holds the focus (GLFW's own flag lags behind the server), without
  // turning a frame when ours has it: two taps between frames are part of what is tested. Our X window is the
  // one that holds the focus the first time GLFW reports it focused (SetUp).
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
    ASSERT_TRUE(TakeFocus()) << "the window lost the keyboard focus; the tap would go elsewhere";
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
  ASSERT_EQ(ui().cursor.step, 0);
  Tap(XK_Right);
  EXPECT_TRUE(FramesUntil([&] { return ui().cursor.step == 1; })) << "step " << ui().cursor.step;
  Tap(XK_Right);
  Tap(XK_Right);
  EXPECT_TRUE(FramesUntil([&] { return ui().cursor.step == 3; })) << "two quick taps: step " << ui().cursor.step;
  Tap(XK_Left);
  EXPECT_TRUE(FramesUntil([&] { return ui().cursor.step == 2; })) << "step " << ui().cursor.step;

  FramesUntil([&] { return model.step() == 2; });
  const std::int64_t next_tile = model.NextTileIterationStep();
  ASSERT_GT(next_tile, 3);
  Tap(XK_Right, XK_Shift_L);
  EXPECT_TRUE(FramesUntil([&] { return ui().cursor.step == next_tile; })) << "Shift+Right: step " << ui().cursor.step;

  Tap(XK_End);
  EXPECT_TRUE(FramesUntil([&] { return ui().cursor.step == model.step_count() - 1; }))
      << "End: step " << ui().cursor.step;
  Tap(XK_Home);
  EXPECT_TRUE(FramesUntil([&] { return ui().cursor.step == 0; })) << "Home: step " << ui().cursor.step;

  Tap(XK_space);
  EXPECT_TRUE(FramesUntil([&] { return ui().cursor.playing && ui().cursor.step > 0; }))
      << "Space did not start playback";
  Tap(XK_space);
  EXPECT_TRUE(FramesUntil([&] { return !ui().cursor.playing; })) << "Space did not pause";
}

// Ctrl+E opens the Export dialog with the window's PNG proposed; Enter writes it, from the frame after the dialog
// closed, at the framebuffer's size.
TEST_F(RealInput, CtrlEThenEnterWritesTheWindowAsAPng) {
  const std::filesystem::path before = std::filesystem::current_path();
  const std::filesystem::path dir = std::filesystem::temp_directory_path() / "flashviz_export_test";
  std::filesystem::create_directories(dir);
  std::filesystem::current_path(dir);
  const std::filesystem::path png = dir / Sprintf("flashviz-step-%lld.png", static_cast<long long>(ui().cursor.step));
  std::filesystem::remove(png);
  Tap(XK_e, XK_Control_L);
  FramesUntil([] { return false; }, 5);  // the dialog appears and takes the keyboard
  Tap(XK_Return);
  const bool written = FramesUntil([&] { return std::filesystem::exists(png); });
  std::filesystem::current_path(before);
  ASSERT_TRUE(written) << "no " << png << "; status: " << ui().status;
  EXPECT_EQ(ui().status.rfind("wrote", 0), 0u) << ui().status;
  std::FILE* f = std::fopen(png.c_str(), "rb");
  ASSERT_NE(f, nullptr);
  unsigned char header[24] = {};
  ASSERT_EQ(std::fread(header, 1, 24, f), 24u);
  std::fclose(f);
  const int width = (header[16] << 24) | (header[17] << 16) | (header[18] << 8) | header[19];
  int fb_width = 0, fb_height = 0;
  glfwGetFramebufferSize(window_->window(), &fb_width, &fb_height);
  EXPECT_EQ(width, fb_width);
  std::filesystem::remove_all(dir);
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
  const ScreenRect q = window_->last_frame().step_q;
  const int n = window_->model().problem().n;
  for (int row : {40, 5}) {
    Click((q.min.x + q.max.x) / 2, q.min.y + (static_cast<float>(row) + 0.5f) * q.height() / static_cast<float>(n));
    EXPECT_TRUE(FramesUntil([&] { return ui().cursor.selected_row == row; }))
        << "selected row " << ui().cursor.selected_row;
  }
}

}  // namespace
}  // namespace flashviz
