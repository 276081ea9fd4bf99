// FlashAttention-2's backward pass as the stepper walks it (stepper.h is the interface every view uses; this is
// its backward half). The same contract as the forward walk: the ledger is incremented only where the schedule
// loads or stores a tile, arithmetic runs only for the tiles asked for, and nothing N² is ever held.
#pragma once

#include <functional>
#include <vector>

#include "kernels/cpu/schedule.h"
#include "kernels/cpu/stepper.h"

namespace flashviz {

// Which tile pairs get arithmetic: every pair, or those of Q tile `i` (its dQ_i) and of K/V tile `j` (its dK_j,
// dV_j). A default focus computes nothing.
struct BackwardFocus {
  bool all = false;
  int i = -1;
  int j = -1;
};

// The forward pass in the Q-outer order over the same tiles (the model's own arithmetic), and D from its O.
ForwardSaved RunForwardForBackward(const AttentionProblem& problem, const AttentionInputs& inputs);

// Walks the backward schedule, calling `visit` after every step (false stops it). Returns true when the walk
// finished; `gradients` (when not null, with focus.all) then holds dQ, dK and dV (3 · N × d) and `dq_in_hbm`
// (when not null) dQ as it stands in HBM after the last step visited (N × d, rows outside the focus are 0).
bool WalkBackward(const Schedule& schedule, const AttentionInputs* inputs, const ForwardSaved* saved,
                  BackwardFocus focus, const std::function<bool(const StepView&)>& visit,
                  std::vector<double>* gradients = nullptr, std::vector<double>* dq_in_hbm = nullptr);

}  // namespace flashviz
