// The GUI program: the interactive window, one offscreen frame (--screenshot), and the frame-time benchmark
// (--bench-frames). All three share the state set-up and the per-frame controller.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>

#include "app/cli/problem_options.h"
#include "app/gui/gl_context.h"
#include "viz/frame_report.h"
#include "viz/model.h"
#include "viz/ui_state.h"

namespace flashviz {

struct GuiOptions {
  ProblemOptions problem;
  bool problem_given = false;  // any problem option was on the command line
  std::string session;         // --session FILE
  std::string screenshot;      // --screenshot PNG
  std::optional<std::int64_t> step;
  std::string panel;
  std::string lesson;  // --lesson ID[:STOP]: a shipped lesson, at its STOP-th stop (1-based)
  int width = 1280, height = 720;
  std::optional<float> ui_scale;
  int bench_frames = 0;
  bool bench_transitions = false;  // --bench-transitions: a step every 4 frames, each frame inside its transition
  std::string theme = "dark";
  bool present = false;  // --present: presentation mode
  // Exports without a window: an animation of a step range, CSVs of the tile and of the m/ℓ history.
  std::string record;          // --record FILE.gif|FILE.mp4
  std::string steps;           // --steps A:B (default: the tile iteration of the starting step)
  double fps = 4;              // --fps: steps per second of the animation
  int transition_frames = 4;   // --transition-frames: frames per step, the transition between steps (1: cuts)
  std::string tile_csv, history_csv;  // --tile-csv FILE, --history-csv FILE
  std::string gl = "auto";  // offscreen context: auto (EGL, then a hidden GLFW window), egl, glfw
};

// The model and UI state the options ask for: a session, the problem options, or the first-lesson preset;
// then --step, --panel, --theme, --ui-scale. Throws InputError with a one-line reason.
void InitGuiState(const GuiOptions& options, Model& model, UiState& ui);

struct OffscreenFrame {
  RgbaImage image;
  FrameReport report;    // where its parts are (tests)
  std::string renderer;  // which context drew it
  std::string live_gpu;  // when the live GPU view ran: its drawing path and cross-check, in one line
};
// Renders one frame of width × height offscreen with OpenGL (after background work has finished, so the
// frame is complete). Throws InputError when no GL context can be made.
OffscreenFrame RenderOffscreenFrame(const GuiOptions& options, GlBackend backend);

// The interactive program: a visible window and the main loop, one turn at a time (RunGui turns it until the
// window closes; a test drives it with real X input under Xvfb). Throws InputError when no window opens.
class InteractiveWindow {
 public:
  explicit InteractiveWindow(const GuiOptions& options);
  ~InteractiveWindow();
  InteractiveWindow(const InteractiveWindow&) = delete;
  InteractiveWindow& operator=(const InteractiveWindow&) = delete;
  // Waits for input (at most 0.1 s while nothing moves), then draws and shows one frame. False once the
  // window was closed or the user asked to quit.
  bool Frame();
  GLFWwindow* window() const;
  const Model& model() const;
  const UiState& ui() const;
  const FrameReport& last_frame() const;  // where the last frame put its parts (tests)

 private:
  struct Parts;
  std::unique_ptr<Parts> parts_;
};

// Runs what the options ask for; returns the exit status.
int RunGui(const GuiOptions& options);

}  // namespace flashviz
