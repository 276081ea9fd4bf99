// The one launch signature every CUDA attention variant has (docs/design.md, principle 4: a registry, not a switch).
// Plain C++ apart from cudaStream_t: the registry, `flashviz bench`, the GUI and the tests call variants only
// through this.
#pragma once

#include <cuda_runtime.h>

#include <cstdint>
#include <optional>
#include <string>

#include "kernels/cuda/attention_types.h"  // DType, AttentionShape, NotApplicableFunction, WorkspaceFunction

namespace flashviz::cuda {

// Q, K, V and O are device buffers of shape (batch, heads, n, d), row-major, elements of `dtype`.
// `workspace` is scratch of at least the variant's WorkspaceBytes(shape, dtype) bytes (S and P for the
// variants that materialize them, O/ℓ/m for Algorithm 1), or null when that is zero.
// `options` holds variant-specific switches (e.g. turning one optimization off to measure its gain); 0 is the
// variant as registered.
struct AttentionArgs {
  AttentionShape shape;
  DType dtype = DType::kFp32;
  const void* q = nullptr;
  const void* k = nullptr;
  const void* v = nullptr;
  void* o = nullptr;
  void* workspace = nullptr;
  std::size_t workspace_bytes = 0;
  unsigned options = 0;
  cudaStream_t stream = nullptr;
};

// Every variant file provides three functions of these types (names per variant, e.g. LaunchFlash2Warp):
using LaunchFunction = cudaError_t (*)(const AttentionArgs& args);
// NotApplicableFunction and WorkspaceFunction: attention_types.h (plain C++, shared with the catalogue).

}  // namespace flashviz::cuda
