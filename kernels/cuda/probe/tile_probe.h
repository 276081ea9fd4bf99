// The live cross-check: instrumented CUDA kernels that run exactly the model's tile schedule
// (B_r, B_c, loop order, scale, causal) in fp32 and record, for every Q tile i, the running m_i and ℓ_i after
// every tile iteration j — and one O_i row under the cursor — into a debug buffer, so the GPU's numbers can
// be laid over the stepper's. Plain C++: callers need no CUDA headers.
//   kv order: `flash1` instrumented — Algorithm 1, one launch per K/V tile j, O_i, ℓ_i, m_i through HBM.
//   q order:  `flash2_row` instrumented — one block per Q tile, one thread per query row (the Vortex SIMT
//             mapping), m_i, ℓ_i and O_i on chip.
#pragma once

#include <string>
#include <vector>

#include "kernels/cpu/problem.h"
#include "kernels/cuda/device_status.h"  // CudaDeviceUnavailableReason
#include "kernels/cpu/stepper.h"

namespace flashviz::cuda {

// "NVIDIA H200 (sm_90, 132 SMs)" for device 0, or "" when there is none.
std::string CudaDeviceDescription();

struct TileProbeResult {
  std::string kernel;  // "flash1 (instrumented)" or "flash2_row (instrumented)"
  int tr = 0, tc = 0, br = 0, d = 0;
  int probe_tile = 0, probe_row = 0;  // the O_i row recorded: row probe_row of Q tile probe_tile
  // Running m_i and ℓ_i of row r of tile i after tile iteration j: [(i·T_c + j)·B_r + r]; NaN where the pair
  // is skipped (causal) or the row lies beyond N. −∞ stays −∞ (a row with every key so far masked).
  std::vector<float> m_after, l_after;
  // The probed O_i row after tile iteration j: [j·d + e] (kv: normalized; q: unnormalized, as in the model).
  std::vector<float> o_row_after;
  std::vector<float> o;  // the final O, N × d
  float kernel_ms = 0;   // the kernel(s) alone, CUDA events

  float m(int i, int j, int r) const { return m_after[(static_cast<std::size_t>(i) * tc + j) * br + r]; }
  float l(int i, int j, int r) const { return l_after[(static_cast<std::size_t>(i) * tc + j) * br + r]; }
};

// Runs the instrumented kernel of the problem's loop order on `inputs`. Throws InputError with a one-line
// reason when the device is missing or the tiles do not fit (shared memory, threads per block).
TileProbeResult RunTileProbe(const AttentionProblem& problem, const AttentionInputs& inputs, int probe_tile,
                             int probe_row);

// Why RunTileProbe cannot run this problem's tiles on this device (e.g. "B_r = 2048 rows exceed 1024 threads
// per block"), or "" when it can. Needs no device for the static limits.
std::string TileProbeNotApplicable(const AttentionProblem& problem);

}  // namespace flashviz::cuda
