// UiState: everything the user set or looks at, in one struct (docs/design.md, principle 6). Panels read the model
// and write only here; the app (app/gui) turns the requests in it into model changes between frames, handles
// the keyboard and playback, and saves and loads it as a session. It lives in viz/ because the panels take it.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <span>
#include <string>

#include "kernels/cpu/problem.h"
#include "viz/heatmap.h"
#include "viz/live_gpu.h"
#include "viz/panels/benchmark_panel.h"
#include "viz/panels/vortex_panel.h"
#include "viz/theme.h"

namespace flashviz {

// The problem as the parameter panel edits it (before validation) and as sessions store it.
struct ProblemForm {
  enum class ScaleMode { kDefault, kNone, kCustom };  // 1/√d, 1, or `scale`

  int n = 64, d = 8;
  bool tiles_from_sram = true;  // B_c = ⌈M/4d⌉, B_r = min(B_c, d); otherwise `br` and `bc` as given
  std::int64_t sram_bytes = kDefaultSramBytes;
  int br = 16, bc = 16;
  LoopOrder order = LoopOrder::kKvOuter;
  ScaleMode scale_mode = ScaleMode::kDefault;
  double scale = 1.0;
  bool causal = false;
  std::uint64_t seed = 0;
  std::string input_path;  // an HW4 file: Q, K, V (and N, d) from it; empty: random inputs from `seed`
  int batch = 0;

  // The request for the kernels (N and d as given; with a file the app takes them from its header).
  ProblemRequest ToRequest() const;
  bool operator==(const ProblemForm&) const = default;
};

struct Preset {
  const char* id;
  const char* name;
  const char* description;
  ProblemForm form;
};
// First lesson (N = 8, d = 4), the Vortex report (N = 64, d = 8), the assignment (N = 1024, d = 64), causal.
std::span<const Preset> Presets();
const Preset* FindPreset(const std::string& id);

enum class StepUnit { kPhase, kTileIteration };

struct UiState {
  // --- the problem -------------------------------------------------------------------------------------
  ProblemForm form;                 // what the parameter panel shows
  bool apply_form = false;          // request: load `form` into the model (app/gui does it this frame)
  std::string problem_error;        // why the last apply failed, shown in place; empty when it worked
  bool inspect_input_file = false;  // request: read the header of form.input_path
  int input_file_batches = 0;       // B of that file (0: none or unreadable), for the batch picker
  std::string input_file_info;      // "4 batches of N = 1024, d = 64", or why it cannot be read
  std::string path_edit, path_synced;  // the file field's text, and the form path it was last synced with

  // --- the cursor and playback --------------------------------------------------------------------------
  std::int64_t step = 0;  // the step asked for; the app moves the model there
  bool playing = false;
  float speed = 4.0f;                     // steps (or tile iterations) per second while playing
  StepUnit play_unit = StepUnit::kPhase;  // what one playback tick advances
  double play_accumulator = 0.0;          // fractional ticks carried between frames
  int jump_i = 0, jump_j = 0;             // the "jump to (i, j)" fields
  std::string jump_error;
  int selected_row = -1;  // query row shown in the O_i view (−1: the first row of the current tile)
  // What the mouse pointed at in the last frame (global row and key column, −1: none): other views
  // highlight the same row and column.
  int hover_row = -1, hover_col = -1;

  // --- panels -------------------------------------------------------------------------------------------
  std::map<std::string, bool, std::less<>> panel_open;  // by panel id; absent: the panel's default
  std::string active_tab = "step";                      // the centre tab on screen
  std::string focus_tab;                                // request: select this tab on the next frame
  bool show_shortcuts = false;                          // the keyboard shortcut window
  VortexPanelState vortex;                              // the Vortex panel (viz/panels/vortex_panel.h)
  BenchmarkPanelState benchmark;                        // the benchmark panel (viz/panels/benchmark_panel.h)
  LiveGpuRequest live_gpu;                              // the live GPU view (viz/live_gpu.h)

  // --- appearance ---------------------------------------------------------------------------------------
  Theme theme = Theme::kDark;
  float ui_scale = 1.0f;
  bool large_font = false;  // projector mode: 1.4× text
  bool style_dirty = true;  // request: rebuild fonts and style before the next frame

  // --- the session and the app --------------------------------------------------------------------------
  std::string session_path = "flashviz-session.json";
  bool request_save_session = false, request_load_session = false;  // the app saves/loads session_path
  bool open_save_dialog = false, open_load_dialog = false;          // ask for the path first (Ctrl+S, Ctrl+O)
  bool request_quit = false;
  std::string status;  // one line for the last save/load/apply result
  double status_time = -1.0;

  // --- what the last frame drew (tests and screenshots read this) ----------------------------------------
  struct FrameReport {
    bool s_tile_visible = false;
    ScreenRect s_tile;  // the cursor frame around S_ij in the S view
    bool q_tile_visible = false;
    ScreenRect q_tile;  // the cursor frame around Q_i
    // Where the step view put its parts (tests check that nothing overlaps).
    bool step_view_drawn = false;
    ScreenRect step_q, step_kt, step_s, step_vt, step_o, step_zoom, step_area;
    // The timeline's step/tile labels and the narration below them (tests check that they do not overlap).
    bool timeline_drawn = false;
    ScreenRect timeline_labels, timeline_narration;
  } report;
};

}  // namespace flashviz
