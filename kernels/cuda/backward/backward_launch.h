// The one launch signature of the backward pass: every backward variant takes BackwardArgs, so the
// registry (backward_rows.inc), `flashviz bench --pass backward`, the tests and the GUI call them alike.
// Plain C++ apart from cudaStream_t, like attention_launch.h for the forward pass.
#pragma once

#include <cuda_runtime.h>

#include <cstddef>

#include "kernels/cuda/attention_types.h"  // DType, AttentionShape, NotApplicableFunction, WorkspaceFunction

namespace flashviz::cuda {

// Q, K, V, O, dO, dQ, dK, dV: device buffers of shape (batch, heads, n, d), row-major, elements of `dtype`.
// lse: L = m + log ℓ per query row, fp32, shape (batch, heads, n), as FlashAttention-2's forward saves it (the
// causal mask here never masks a whole row, so L is always finite). `workspace`: scratch of at least the variant's
// BackwardWorkspaceBytes (D = rowsum(dO ∘ O), the fp32 dQ accumulator, P and dP for the naive variant).
// `options`: variant-specific switches; 0 is the variant as registered.
struct BackwardArgs {
  AttentionShape shape;
  DType dtype = DType::kFp32;
  const void* q = nullptr;
  const void* k = nullptr;
  const void* v = nullptr;
  const void* o = nullptr;
  const void* dout = nullptr;
  const float* lse = nullptr;
  void* dq = nullptr;
  void* dk = nullptr;
  void* dv = nullptr;
  void* workspace = nullptr;
  std::size_t workspace_bytes = 0;
  unsigned options = 0;
  cudaStream_t stream = nullptr;
};

using BackwardLaunchFunction = cudaError_t (*)(const BackwardArgs& args);

}  // namespace flashviz::cuda
