// The algorithm panel's own state (kept in UiState under the panel's id, "algorithm"): which numbering of
// Algorithm 1 it shows, which the timeline's "line N" follows too.
#pragma once

#include <cstdint>

#include "viz/algorithm.h"
#include "viz/ui_state.h"

namespace flashviz {

struct AlgorithmPanelState {
  PseudocodeVersion version = PseudocodeVersion::kPaper;
  std::int64_t scrolled_step = -1;             // the source view scrolls to the phase's lines once per step
  std::int64_t pseudocode_scrolled_step = -1;  // and the pseudocode to the phase's line
};

inline AlgorithmPanelState& AlgorithmState(UiState& ui) { return PanelState<AlgorithmPanelState>(ui, "algorithm"); }
inline const AlgorithmPanelState& AlgorithmState(const UiState& ui) {
  return PanelState<AlgorithmPanelState>(ui, "algorithm");
}

}  // namespace flashviz
