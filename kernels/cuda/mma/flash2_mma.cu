// flash2_mma: FlashAttention-2's forward pass with mma.sync tensor-core instructions (fp16/bf16 in, fp32 accumulate).
//
// What it changes versus the previous variant, flash2_wmma (WMMA fragments, S and P round-tripping through
// shared memory), each step an AttentionArgs::options bit (flash2_mma.h) with its measured gain (fp16, N = 8192,
// d = 64 / d = 128, non-causal: shipped TFLOP/s over the step switched off; H200, 2026-11-27, kernels/README.md):
//   1. mma.sync.m16n8k16 with the fragment layouts spelled out, so the fp32 accumulators of S_ij = Q_i K_jᵀ are
//      repacked to 16 bits as the A operand of P̃_ij V_j: P̃_ij never leaves the registers (p-smem: 1.17× / 1.11×).
//   2. ldmatrix.x4 loads the operand fragments (.trans for V_j, which is stored key-major).
//   3. Shared-memory tiles XOR-swizzled (16-byte chunk c of row r at c ^ (r mod 8)): ldmatrix reads without bank
//      conflicts (no-swizzle: 3.1× / 3.8×; the biggest step).
//   4. cp.async with two K/V buffers: K_{j+1}, V_{j+1} are copied while tile j is computed, one barrier per tile
//      (no-pipeline: 1.09× / 1.07×).
//   5. exp2 with log2(e) folded into the scale: each P̃ element is one FFMA and one MUFU.EX2.
//   6. B_r = 128, B_c = 64; 4 warps owning 32 rows each (two m16 tiles, so every K_j/V_j fragment feeds 4 mma),
//      2 blocks per SM (other-rows = 8 warps × 16 rows: 1.21× / 1.17×). Q_i's fragments stay in registers at
//      d = 64 (other-q: 1.02×) and are re-read from shared memory at d = 128, where registers would spill
//      (other-q: 1.62×). The row max and row sum live in registers, reduced across a quad with two shuffles;
//      ℓ_i's quad reduction happens once, at the end.
//   7. Causal: key tiles past the diagonal are never loaded; only tiles that cross a warp's diagonal (or N) pay
//      for the mask; warps whose rows all precede a tile skip it; the longest Q tiles are scheduled first.
//   Tried and kept off (lazy-rescale bit): skipping O_i ← α·O_i when no row max moved, 1.05× / 1.06× slower.
// It mirrors FlashAttention-2 (Dao, 2023): Algorithm 1 with the Q-outer loop, warps splitting Q rather than K.
// The kernel that ships (options = 0) is flash2_mma_kernel.cuh, the default configuration alone; the options bits run
// ablation/flash2_mma_ablation.cuh, the same kernel with each step above a compile-time switch.
//
// Measured: kernels/README.md, "flash2_mma and flash3_wgmma" (the tables are written from the run folders in
// docs/results/, the experiments that chose this code are listed there).
#include "kernels/cuda/mma/flash2_mma.h"

#include <cmath>
#include <cstdint>

#include "kernels/common/format.h"
#include "kernels/cuda/mma/flash2_mma_kernel.cuh"

namespace flashviz::cuda {
namespace mma_detail {
cudaError_t LaunchFlash2MmaFp16D64(const AttentionArgs& args, float scale_log2);
cudaError_t LaunchFlash2MmaFp16D128(const AttentionArgs& args, float scale_log2);
cudaError_t LaunchFlash2MmaBf16D64(const AttentionArgs& args, float scale_log2);
cudaError_t LaunchFlash2MmaBf16D128(const AttentionArgs& args, float scale_log2);
}  // namespace mma_detail

std::string Flash2MmaOptionsName(unsigned options) {
  if (options == 0) return "default";
  std::string name;
  const auto add = [&](const std::string& part) {
    if (!name.empty()) name += '+';
    name += part;
  };
  if (options & kFlash2MmaNoSwizzle) add("no-swizzle");
  if (options & kFlash2MmaNoPipeline) add("no-pipeline");
  if (options & kFlash2MmaPThroughSmem) add("p-smem");
  if (options & kFlash2MmaOtherQPlacement) add("other-q");
  if (options & kFlash2MmaOtherWarpRows) add("other-rows");
  if (options & kFlash2MmaLazyRescale) add("lazy-rescale");
  if (options & kFlash2MmaStagger) add("stagger");
  if (options & kFlash2MmaNarrowKvTile) add("bc32");
  if (options & ~kFlash2MmaAllOptions) add(Sprintf("unknown-0x%x", options & ~kFlash2MmaAllOptions));
  return name;
}

Flash2MmaTiles Flash2MmaTileShape(int d) {
  const unsigned shape = d == 128 ? mma_detail::kFlash2MmaDefaultShapeD128 : mma_detail::kFlash2MmaDefaultShapeD64;
  return Flash2MmaTiles{128, 64, (shape & mma_detail::kFlagTwoMTiles) ? 4 : 8};
}

std::optional<std::string> Flash2MmaNotApplicable(const AttentionShape& shape, DType dtype) {
  if (dtype == DType::kFp32) return "fp32: flash2_mma takes fp16 or bf16 inputs (mma.sync m16n8k16)";
  if (shape.d != 64 && shape.d != 128) return Sprintf("d = %d: only d = 64 and 128", shape.d);
  if (shape.n < 1) return Sprintf("N = %d: N must be at least 1", shape.n);
  if (shape.batch < 1 || shape.heads < 1)
    return Sprintf("batch %d, heads %d: both must be at least 1", shape.batch, shape.heads);
  if (static_cast<long long>(shape.batch) * shape.heads > 65535)
    return Sprintf("B·H = %lld: at most 65535 (one grid row per head)",
                   static_cast<long long>(shape.batch) * shape.heads);
  if (static_cast<long long>(shape.batch) * shape.heads * shape.n * shape.d > (1ll << 40))
    return "B·H·N·d over 2^40 elements";
  // The running max is taken on raw scores and scaled afterwards, which orders them correctly only for scale > 0.
  if (!(shape.scale > 0.0f) || !std::isfinite(shape.scale))
    return Sprintf("scale = %g: flash2_mma needs a positive finite scale", static_cast<double>(shape.scale));
  return std::nullopt;
}

std::size_t Flash2MmaWorkspaceBytes(const AttentionShape& /*shape*/, DType /*dtype*/) { return 0; }

cudaError_t LaunchFlash2Mma(const AttentionArgs& args) {
  if (Flash2MmaNotApplicable(args.shape, args.dtype)) return cudaErrorInvalidValue;
  if (args.options & ~kFlash2MmaAllOptions) return cudaErrorInvalidValue;
  // The narrow K/V tile exists for the default kernel only.
  if ((args.options & kFlash2MmaNarrowKvTile) && (args.options & kFlash2MmaKernelOptions))
    return cudaErrorInvalidValue;
  for (const void* pointer : {args.q, args.k, args.v, static_cast<const void*>(args.o)})
    if (pointer == nullptr || reinterpret_cast<std::uintptr_t>(pointer) % 16 != 0) return cudaErrorInvalidValue;
  const float scale_log2 = args.shape.scale * 1.4426950408889634f;
  if (args.dtype == DType::kFp16)
    return args.shape.d == 64 ? mma_detail::LaunchFlash2MmaFp16D64(args, scale_log2)
                              : mma_detail::LaunchFlash2MmaFp16D128(args, scale_log2);
  return args.shape.d == 64 ? mma_detail::LaunchFlash2MmaBf16D64(args, scale_log2)
                            : mma_detail::LaunchFlash2MmaBf16D128(args, scale_log2);
}

}  // namespace flashviz::cuda
