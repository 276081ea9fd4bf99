// The live cross-check of the backward pass: an instrumented fp32 kernel that runs exactly the model's backward
// schedule (B_r, B_c, scale, causal; FlashAttention-2's order: one block per K/V tile j with dK_j and dV_j in shared
// memory, the Q tiles i that meet it in order, dQ_i added into HBM by atomicAdd) and records dK_j and dV_j after
// every tile iteration, so the GPU's numbers can be laid over the stepper's. Plain C++: callers need no CUDA
// headers.
#pragma once

#include <string>
#include <vector>

#include "kernels/cpu/stepper.h"

namespace flashviz::cuda {

struct BackwardProbeResult {
  std::string kernel;  // "flash2_bwd (instrumented)"
  int tr = 0, tc = 0, bc = 0, d = 0;
  // dK_j and dV_j after tile iteration (i, j): [((j·T_r + i)·B_c + c)·d + e]; NaN where the pair is skipped (causal)
  // or the key lies beyond N.
  std::vector<float> dk_after, dv_after;
  std::vector<float> dq, dk, dv;  // the final gradients, N × d each
  float kernel_ms = 0;            // the kernels alone (D, then the K/V tiles), CUDA events

  std::size_t At(int i, int j, int c, int e) const { return ((static_cast<std::size_t>(j) * tr + i) * bc + c) * d + e; }
};

// Runs the instrumented backward kernel on `inputs` (with dO) and the O and L the model's forward pass saved
// (ForwardSaved, rounded to fp32: the GPU computes D from them itself). Throws InputError with a one-line reason
// when the device is missing or the tiles do not fit.
BackwardProbeResult RunBackwardProbe(const AttentionProblem& problem, const AttentionInputs& inputs,
                                     const ForwardSaved& saved);

// Why RunBackwardProbe cannot run this problem's tiles (shared memory, the size of the record), or "" when it can.
std::string BackwardProbeNotApplicable(const AttentionProblem& problem);

struct BackwardCrossCheck {
  // The model's dK_j, dV_j after every tile iteration in the layout of BackwardProbeResult (NaN where the GPU has
  // none), for overlays.
  std::vector<double> model_dk_after, model_dv_after;
  double max_dk_error = 0, max_dv_error = 0;  // relative to the largest |value| of the tile (or 1)
  double max_grad_error = 0;                  // the final dQ, dK, dV, relative to each tensor's largest |value|
  int worst_i = -1, worst_j = -1;
  int compared = 0;  // tile iterations compared
  bool agrees = false;
  std::string summary;  // one line for the UI / stderr
};

// fp32 rounding of sums over a Q tile's rows, a K/V tile's keys and d, relative to the values' magnitude.
inline constexpr double kBackwardCrossCheckTolerance = 1e-4;

// max |GPU − model| over dK_j (dk true) or dV_j after tile iteration (i, j), relative to the model tile's largest
// |value| (at least 1); infinity where the GPU recorded NaN.
double BackwardTileError(const AttentionProblem& problem, const BackwardProbeResult& gpu,
                         const std::vector<double>& model_tile, bool dk, int i, int j);

// `model` must be the backward pass with the inputs the GPU ran on.
BackwardCrossCheck CompareBackwardWithModel(const Stepper& model, const BackwardProbeResult& gpu);

}  // namespace flashviz::cuda
