// The one launch signature every CUDA attention variant has (DESIGN.md principle 4: a registry, not a switch).
// Plain C++ apart from cudaStream_t: the registry, `flashviz bench`, the GUI and the tests call variants only
// through this.
#pragma once

#include <cuda_runtime.h>

#include <cstdint>
#include <optional>
#include <string>

namespace flashviz::cuda {

enum class DType : std::uint8_t { kFp32, kFp16, kBf16 };

struct AttentionShape {
  int batch = 1;
  int heads = 1;
  int n = 0;      // sequence length N (any N ≥ 1, not only multiples of the tile)
  int d = 0;      // head dimension
  float scale = 1.0f;  // applied to Q·Kᵀ (1/√d by default)
  bool causal = false; // key index > query index is masked
};

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
// Why the variant cannot run this shape and dtype ("d = 96: only d = 64 and 128"), or nothing when it can.
using NotApplicableFunction = std::optional<std::string> (*)(const AttentionShape& shape, DType dtype);
using WorkspaceFunction = std::size_t (*)(const AttentionShape& shape, DType dtype);

}  // namespace flashviz::cuda
