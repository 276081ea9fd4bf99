// The backward registry with its launch functions (CUDA builds): each row of backward_registry.h joined to the
// functions backward_rows.inc names for it, and the variants' own declarations, one group per .cu file.
#pragma once

#include <cstddef>
#include <optional>
#include <span>
#include <string>
#include <string_view>

#include "kernels/cuda/backward/backward_launch.h"
#include "kernels/cuda/backward/backward_registry.h"

namespace flashviz::cuda {

struct BackwardVariant {
  const VariantInfo* info;            // the catalogue row (metadata)
  BackwardLaunchFunction launch;      // enqueues the variant on args.stream
  NotApplicableFunction own_check;    // what only the variant knows (nullptr: the catalogue's data says all)
  WorkspaceFunction workspace_bytes;  // device scratch it needs
};

std::span<const BackwardVariant> BackwardVariants();  // the order of backward_rows.inc
const BackwardVariant* FindBackwardVariant(std::string_view id);

// The catalogue's check, then the variant's own: the reason a shape or dtype cannot run, or nothing.
std::optional<std::string> BackwardNotApplicable(const BackwardVariant& variant, const AttentionShape& shape,
                                                 DType dtype);

// What every backward launch checks first: the shape is applicable, the eight tensors and L are non-null and
// 16-byte aligned (the kernels copy 16 bytes at a time), the workspace is large enough. cudaErrorInvalidValue
// if not.
cudaError_t CheckBackwardArgs(std::string_view id, const BackwardArgs& args);

// --- The progression (one .cu file each).
cudaError_t LaunchNaiveBackward(const BackwardArgs& args);      // naive_bwd.cu
cudaError_t LaunchFlash2Backward(const BackwardArgs& args);     // flash2_bwd.cu
cudaError_t LaunchFlash2BackwardTf32x3(const BackwardArgs& args);  // flash2_bwd_tf32x3.cu
cudaError_t LaunchFlash2BackwardMma(const BackwardArgs& args);  // flash2_bwd_mma.cu

// flash2_bwd_mma's options bits (BackwardArgs::options).
enum Flash2BackwardMmaOption : unsigned {
  // The other dQ strategy than the default for this d. Default at d = 64: fp32 atomics from the K/V-outer kernel
  // (a padded dSᵀ tile in shared memory, then dQ_i += dS K_j added with float2 atomics, converted at the end);
  // at d = 128: a second kernel in the Q-outer order that recomputes S, P, dP and dS per (i, j) and keeps dQ_i in
  // registers (no atomics, no dSᵀ round trip, two of the five products computed twice). Measured on the H100,
  // 2026-11-25 (kernels/README.md, backward pass), fp16, N = 1024-16384: at d = 128 the separate pass is 1.01-1.17×
  // faster at every N; at d = 64 the atomics are 1.03-1.06× faster from N = 4096 on (the separate pass 1.01-1.07×
  // at N = 1024).
  kFlash2BackwardMmaOtherDqStrategy = 1u << 0,
};
// Whether flash2_bwd_mma computes dQ in the separate Q-outer pass for this d and options word.
constexpr bool Flash2BackwardMmaSeparateDqPass(int d, unsigned options) {
  return (d == 128) != ((options & kFlash2BackwardMmaOtherDqStrategy) != 0);
}

}  // namespace flashviz::cuda
