// Where the last frame put its parts: for the tests (nothing overlaps, the cursor is where the frame says) and
// for headless screenshots. It is not UI state: a caller that wants it hands one to the frame
// (ScopedFrameReport around DrawUi, as RenderOffscreenFrame and InteractiveWindow do), and the panels fill in
// CurrentFrameReport() when there is one; without one they report nothing. One per drawing thread, set only for
// the frame it covers, like ImGui's current context.
#pragma once

#include <vector>

#include "viz/heatmap.h"  // ScreenRect

namespace flashviz {

struct FrameReport {
  bool s_tile_visible = false;
  ScreenRect s_tile;  // the cursor frame around S_ij in the S view
  bool q_tile_visible = false;
  ScreenRect q_tile;  // the cursor frame around Q_i
  // Where the step view put its parts (tests check that nothing overlaps).
  bool step_view_drawn = false;
  ScreenRect step_q, step_kt, step_s, step_vt, step_o, step_zoom, step_area;
  // The step view's parts drawn apart from the matrices: the backward pass's eight HBM columns and its tile grids
  // (S_ij/P_ij, dP_ij/dS_ij, dV_j, dK_j, dQ_i); decoding's pool and its grids (the split, the partials, the merge).
  std::vector<ScreenRect> tile_grids;
  // Decoding: the pool blocks framed as the current split's, and whether the split's S/P~ showed its numbers.
  std::vector<ScreenRect> decode_split_blocks;
  bool split_numbers_shown = false;
  // Ring attention: the current ring step's column in the cost model's timeline (framed with the cursor).
  bool ring_step_visible = false;
  ScreenRect ring_step;
  // The timeline's step/tile labels and the narration below them (tests check that they do not overlap).
  bool timeline_drawn = false;
  ScreenRect timeline_labels, timeline_narration, timeline_scrubber;
  // The status line in the menu bar (empty when there is no status).
  ScreenRect status;
  // The centre slot (the tabs), and whether the large S_ij / P~_ij tile showed its numbers in its cells.
  ScreenRect centre;
  bool tile_numbers_shown = false;
};

// The report of the frame being drawn, or null when no caller asked for one.
FrameReport* CurrentFrameReport();

// Makes `report` (cleared) the current one for its lifetime; null reports nothing. Restores the previous one.
class ScopedFrameReport {
 public:
  explicit ScopedFrameReport(FrameReport* report);
  ~ScopedFrameReport();
  ScopedFrameReport(const ScopedFrameReport&) = delete;
  ScopedFrameReport& operator=(const ScopedFrameReport&) = delete;

 private:
  FrameReport* previous_;
};

}  // namespace flashviz
