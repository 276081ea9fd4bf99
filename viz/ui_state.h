// UiState: everything the user set or looks at, in one struct (docs/design.md, principle 6). Panels read the model
// and write only here; what they ask the app to do goes into one queue (UiRequests) that the app (app/gui)
// takes between frames, turning it into model changes; the app also handles the keyboard and playback, and
// saves and loads the state as a session. It lives in viz/ because the panels take it.
#pragma once

#include <algorithm>
#include <any>
#include <cstdint>
#include <functional>
#include <initializer_list>
#include <utility>
#include <vector>
#include <map>
#include <span>
#include <string>
#include <string_view>

#include "kernels/cpu/decode.h"
#include "kernels/cpu/problem.h"
#include "kernels/cpu/ring.h"
#include "viz/heatmap.h"
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
  Pass pass = Pass::kForward;
  ScaleMode scale_mode = ScaleMode::kDefault;
  double scale = 1.0;
  bool causal = false;
  std::uint64_t seed = 0;
  std::string input_path;  // an HW4 file: Q, K, V (and N, d) from it; empty: random inputs from `seed`
  int batch = 0;
  std::string dout_path;  // the backward pass's dO (raw float32); empty: random from `seed`
  // Decoding (kernels/cpu/decode.h): when set, these and d, M, the scale and the seed make the problem.
  bool decode = false;
  int kv_len = 64, heads = 4, kv_heads = 2, q_rows = 1, page = 8;
  bool splits_from_sram = false;  // S from M; otherwise `splits`
  int splits = 4;
  // Ring attention (kernels/cpu/ring.h): when set, these and N, d, the tiles, M, the scale, the mask and the seed make
  // the problem (never with `decode`).
  bool ring = false;
  int ring_devices = 4;
  bool zigzag = true;
  double ring_tflops = kDefaultRingTflops, ring_link_gbps = kDefaultRingLinkGbps;

  // The request for the kernels (N and d as given; with a file the app takes them from its header).
  ProblemRequest ToRequest() const;
  DecodeRequest ToDecodeRequest() const;
  RingRequest ToRingRequest() const;
  bool operator==(const ProblemForm&) const = default;
};

struct Preset {
  const char* id;
  const char* name;
  const char* description;
  ProblemForm form;
};
// First lesson (N = 8, d = 4), the Vortex report (N = 64, d = 8), the assignment (N = 1024, d = 64), causal, the
// backward pass (N = 8, d = 4), decoding (N = 64 keys, H = 4 query heads over G = 2 KV heads, S = 4 splits) and
// ring attention (N = 32 over P = 4 devices, causal, zigzag).
std::span<const Preset> Presets();
const Preset* FindPreset(const std::string& id);

enum class StepUnit { kPhase, kTileIteration };

// What panels, menus and keys ask the app to do. The controller (app/gui/controller.cpp) takes them between
// frames in the order they were asked; asking for one kind twice before it is taken is asking once.
enum class UiRequest : std::uint8_t {
  kApplyForm,         // load `form` into the model
  kInspectInputFile,  // read the header of form.input_path (the batch picker)
  kSaveSession,       // save to session_path
  kLoadSession,       // load session_path
  kRebuildStyle,      // fonts and style again before the next frame (the theme, scale or font size changed)
  kExport,            // write export_kind to export_path (PNGs are read back by the frame loop after drawing)
  kQuit,
};

class UiRequests {
 public:
  UiRequests() = default;
  UiRequests(std::initializer_list<UiRequest> requests) {
    for (const UiRequest r : requests) Push(r);
  }
  void Push(UiRequest request) {
    if (!Pending(request)) queue_.push_back(request);
  }
  bool Pending(UiRequest request) const { return std::find(queue_.begin(), queue_.end(), request) != queue_.end(); }
  // Removes `request` and says whether it was there (for the one consumer of a kind outside the controller).
  bool Take(UiRequest request) {
    const auto it = std::find(queue_.begin(), queue_.end(), request);
    if (it == queue_.end()) return false;
    queue_.erase(it);
    return true;
  }
  std::vector<UiRequest> TakeAll() { return std::exchange(queue_, {}); }
  bool empty() const { return queue_.empty(); }

 private:
  std::vector<UiRequest> queue_;
};

// The problem panel's feedback on the form (owned by the problem panel and the controller).
struct FormStatus {
  std::string problem_error;           // why the last apply failed, shown in place; empty when it worked
  int input_file_batches = 0;          // B of the form's HW4 file (0: none or unreadable), for the batch picker
  std::string input_file_info;         // "4 batches of N = 1024, d = 64", or why it cannot be read
  std::string path_edit, path_synced;  // the file field's text, and the form path it was last synced with
};

// Where the user is in the schedule and how playback moves (owned by the controller's keys and playback, the
// playback and timeline panels, and the views that point at a row).
struct CursorState {
  std::int64_t step = 0;  // the step asked for; the app moves the model there
  bool playing = false;
  float speed = 4.0f;                     // steps (or tile iterations) per second while playing
  StepUnit play_unit = StepUnit::kPhase;  // what one playback tick advances
  double play_accumulator = 0.0;          // fractional ticks carried between frames
  int jump_i = 0, jump_j = 0;             // the "jump to (i, j)" fields: the current pair, or what was typed
  std::int64_t jump_fields_step = -1;     // the step the fields last followed (they follow every move)
  std::string jump_error;
  int selected_row = -1;  // query row shown in the O_i view (−1: the first row of the current tile)
  // The animation between the step before and this one (one step forward, at a watchable speed): progress in
  // [0, 1] over `transition_seconds`; 1 when there is none (a jump, a scrub, fast playback, animations off).
  double transition = 1.0;
  double transition_seconds = 0.3;
  std::int64_t transition_step = -1;  // the step the transition leads to
  // What the mouse pointed at in the last frame (global row and key column, −1: none): other views
  // highlight the same row and column.
  int hover_row = -1, hover_col = -1;
};

// How everything is drawn (owned by the View menu and the keys; a change asks for UiRequest::kRebuildStyle).
struct Appearance {
  Theme theme = Theme::kDark;
  float ui_scale = 1.0f;
  // Presentation mode (Ctrl+L, --present): 1.4× text, the step view first: the sidebar and the right column
  // fold into narrow strips that open on hover or F2, a ring marks the hovered cell for the room.
  bool presentation = false;
  bool side_columns_open = false;  // presentation mode: the side columns at full width (F2), not folded
  bool animate = true;             // transitions between steps (View → Animate transitions)
};

struct UiState {
  // Requests to the app, taken between frames.
  UiRequests requests{UiRequest::kRebuildStyle};  // the first frame builds the fonts and the style

  ProblemForm form;        // the problem as the problem panel shows it (applied on UiRequest::kApplyForm)
  FormStatus form_status;  // what applying and inspecting the form said
  CursorState cursor;
  Appearance appearance;

  // --- panels (the panel table's rows) --------------------------------------------------------------------
  std::map<std::string, bool, std::less<>> panel_open;  // by panel id; absent: the panel's default
  std::string active_tab = "step";                      // the centre tab on screen
  std::string focus_tab;                                // select this tab on the next frame
  bool show_shortcuts = false;                          // the keyboard shortcut window
  // Presentation mode: the folded column the pointer opened over the step view ("sidebar", "right" or "").
  std::string peek;
  // Each panel's own state, under its id in the panel table (viz/panels/panel_table.h), created on first use
  // and copied with the rest of the state; the panel's header names its type and gives the accessor
  // (VortexState, BenchmarkState, LiveGpuState), built on PanelState below.
  std::map<std::string, std::any, std::less<>> panel_state;

  // --- the session and the status line --------------------------------------------------------------------
  std::string session_path = "flashviz-session.json";
  bool open_save_dialog = false, open_load_dialog = false;  // ask for the path first (Ctrl+S, Ctrl+O)
  // --- export for slides (the Export dialog, Ctrl+E) ------------------------------------------------------
  bool open_export_dialog = false;
  int export_kind = 0;          // an ExportKind (viz/export.h): window PNG, centre PNG, tile CSV, m/ℓ history CSV
  std::string export_path;      // empty: the dialog proposes DefaultExportName
  bool png_export_pending = false;  // the frame loop reads the drawn frame back into export_path
  std::string status;  // one line for the last save/load/apply result, shown at the right of the menu bar
  bool status_is_error = false;  // drawn in the "bad" colour and kept longer
  double status_time = -1.0;
};

// The eased progress of the step's transition (smoothstep of ui.cursor.transition), 1 when there is none.
inline double TransitionEase(const UiState& ui) {
  const double t = std::clamp(ui.cursor.transition, 0.0, 1.0);
  return t * t * (3 - 2 * t);
}
inline bool InTransition(const UiState& ui) { return ui.cursor.transition < 1.0; }

// The state of panel `panel_id`, of the type its header declares; a default one the first time.
template <typename State>
State& PanelState(UiState& ui, std::string_view panel_id) {
  auto it = ui.panel_state.find(panel_id);
  if (it == ui.panel_state.end()) it = ui.panel_state.emplace(std::string(panel_id), State{}).first;
  return std::any_cast<State&>(it->second);
}

// Read-only: the stored state, or a default one when the panel has none yet.
template <typename State>
const State& PanelState(const UiState& ui, std::string_view panel_id) {
  static const State kDefault{};
  const auto it = ui.panel_state.find(panel_id);
  return it == ui.panel_state.end() ? kDefault : std::any_cast<const State&>(it->second);
}

}  // namespace flashviz
