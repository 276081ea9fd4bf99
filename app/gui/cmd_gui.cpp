// flashviz [gui] [problem options | --lesson ID[:STOP]] [--screenshot PNG --step K --panel NAME --width W --height H]
//                [--ui-scale F]
//                [--bench-frames K] [--theme dark|light] [--session FILE] [--gl auto|egl|glfw]
#include <CLI/CLI.hpp>

#include <memory>

#include "app/cli/commands.h"
#include "app/gui/gui_app.h"
#include "viz/panels/panel_table.h"

namespace flashviz {
namespace {

constexpr const char* kProblemOptionNames[] = {
    "--n",     "--d",     "--br",   "--bc",     "--sram",   "--order",  "--pass",   "--scale", "--causal",   "--seed",
    "--input", "--batch", "--dout", "--decode", "--q-rows", "--kv-len", "--splits", "--heads", "--kv-heads", "--page",
    "--ring",  "--zigzag", "--ring-tflops", "--ring-link-gbps"};

}  // namespace

void AddGuiCommand(CLI::App& app, CommandList& commands) {
  auto o = std::make_shared<GuiOptions>();
  CLI::App* cmd = app.add_subcommand("gui", "The step-through window (the default): tiles, running m/ℓ, traffic");
  AddProblemOptions(*cmd, o->problem);
  // Without any problem option the window opens the first lesson, not the command line's defaults.
  cmd->get_option("--n")->description(
      "sequence length N (default 64; with no problem option at all, the first lesson: N = 8, d = 4, B_r = B_c = 2)");
  cmd->get_option("--d")->description("head dimension d (default 8; 4 in the first lesson)");
  cmd->add_option("--screenshot", o->screenshot, "render one frame offscreen into this PNG and exit (no window)");
  cmd->add_option("--step", o->step, "put the cursor at this step");
  cmd->add_option("--panel", o->panel, "open and focus this panel or tab (" + PanelIdList() + ")");
  cmd->add_option("--lesson", o->lesson,
                  "open a guided lesson, optionally at a stop (1-based): first-lesson, tiling-and-traffic, "
                  "causal-mask, vortex-mapping; e.g. first-lesson:8");
  cmd->add_option("--width", o->width, "window or screenshot width in pixels (default 1280)");
  cmd->add_option("--height", o->height, "window or screenshot height in pixels (default 720)");
  cmd->add_option("--ui-scale", o->ui_scale, "scale of text and widgets (default 1, or the monitor's)");
  cmd->add_option("--bench-frames", o->bench_frames,
                  "render this many frames, moving one phase per frame, and print the median and p95 frame time");
  cmd->add_flag("--bench-transitions", o->bench_transitions,
                "with --bench-frames: one step every 4 frames, every frame drawn inside the step's transition");
  cmd->add_option("--theme", o->theme, "dark or light")->check(CLI::IsMember({"dark", "light"}));
  cmd->add_option("--record", o->record,
                  "write an animation of --steps (one frame per step) to FILE.gif or FILE.mp4 and exit (no window)");
  cmd->add_option("--steps", o->steps, "A:B, the steps --record draws (default: the tile iteration of --step)");
  cmd->add_option("--fps", o->fps, "steps per second of --record (default 4, the playback speed)");
  cmd->add_option("--transition-frames", o->transition_frames,
                  "frames per step in --record: the transition from the step before (default 4; 1: cuts only)")
      ->check(CLI::Range(1, 30));
  cmd->add_option("--tile-csv", o->tile_csv, "write the tile at --step as CSV (S, P~, m~, ℓ~, m, ℓ, α) and exit");
  cmd->add_option("--history-csv", o->history_csv, "write m_i, ℓ_i after each K/V tile at --step as CSV and exit");
  cmd->add_flag("--present", o->present,
                "presentation mode (Ctrl+L): larger text, the step view first, side columns folded (F2 opens them)");
  cmd->add_option("--session", o->session, "open a saved session (problem, step, panels)");
  cmd->add_option("--gl", o->gl, "offscreen context for --screenshot: auto (EGL, then a hidden GLFW window), egl, glfw")
      ->check(CLI::IsMember({"auto", "egl", "glfw"}));
  commands.push_back({cmd, [o, cmd] {
                        for (const char* name : kProblemOptionNames)
                          if (cmd->get_option(name)->count() > 0) o->problem_given = true;
                        if (cmd->get_option("--bench-frames")->count() > 0 && o->bench_frames <= 0)
                          throw UsageError("--bench-frames needs a positive number of frames");
                        // An empty name would otherwise mean "no screenshot" and open the window.
                        if (cmd->get_option("--screenshot")->count() > 0 && o->screenshot.empty())
                          throw UsageError("--screenshot needs a file name");
                        if (cmd->get_option("--steps")->count() > 0 && o->record.empty())
                          throw UsageError("--steps is for --record");
                        return RunGui(*o);
                      }});
}

}  // namespace flashviz
