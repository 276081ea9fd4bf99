// The Vortex panel's own state (kept in UiState under the panel's id, as the panel table asks): the machine being
// edited, the program, the thread whose registers are shown and the display toggles.
#pragma once

#include "kernels/vortex/config.h"
#include "viz/ui_state.h"

namespace flashviz {

struct VortexPanelState {
  vortex::MachineConfig machine;          // starts as the report's 4 cores × 2 warps × 8 threads
  vortex::Mode mode = vortex::Mode::kSimt;
  bool color_lanes = false;               // TCU fragments coloured by lane instead of by value
  bool compare_wmma = false;              // show NVIDIA's 16×16×16 WMMA tile beside the 8×8 one
  // The thread whose register file is shown (a click in the thread grid); −1: the first active thread.
  int pinned_core = -1, pinned_warp = -1, pinned_thread = -1;
};

inline VortexPanelState& VortexState(UiState& ui) { return PanelState<VortexPanelState>(ui, "vortex"); }
inline const VortexPanelState& VortexState(const UiState& ui) { return PanelState<VortexPanelState>(ui, "vortex"); }

}  // namespace flashviz
