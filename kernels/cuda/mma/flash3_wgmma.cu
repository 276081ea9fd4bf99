// flash3_wgmma: FlashAttention's forward pass on Hopper's own instructions (sm_90a), after FlashAttention-3
// (Shah, Bikshandi, Zhang, Thakkar, Ramani, Dao, 2024): fp16/bf16 in, fp32 accumulation, d = 64, 128 and 256,
// causal, any N. The same kernel runs e4m3 inputs as flash3_fp8 (flash3_fp8.cu).
//
// [SECTION] index
//   1. PTX wrappers: hopper.cuh (mbarrier, TMA, wgmma and its descriptors, setmaxnreg; the wgmma instructions in
//      wgmma_ops.inc, written by scripts/wgmma_ops.py)
//   2. Traits and 3. the kernel: flash3_kernel.cuh (producer warpgroup (TMA), two consumer warpgroups (wgmma +
//      online softmax))
//   4. Host (this file): tensor maps, grid, dispatch, the registry's three functions
//
// What it changes versus flash2_mma (mma.sync, ldmatrix, cp.async issued by every thread):
//   1. wgmma.mma_async: one warpgroup (4 warps, 128 threads) multiplies a 64-row slice of Q_i by a whole K_j
//      tile in one asynchronous instruction stream reading both operands from shared memory (S = Q K_jᵀ,
//      m64n128k16, d/16 of them; at d = 128 without the mask Q_i from registers); P̃ V_j takes P̃ from registers
//      as the A operand (m64n{d}k16, B_c/16 of them; m64n{d + 8} where 8 columns of ones sum ℓ on the tensor cores,
//      flash3_kernel.cuh).
//      The S accumulators of a warp have the m16n8 layout of mma.sync, so P̃ is repacked in place as before.
//   2. TMA: one thread copies a whole 128 × 64 box of Q, K or V per instruction through a tensor map (a
//      __grid_constant__ kernel parameter), with the 128-byte swizzle wgmma reads without bank conflicts, rows
//      past N of the head zero-filled by the hardware; completion is counted in bytes on an mbarrier.
//   3. Warp specialization: warpgroup 0 only issues copies (setmaxnreg: 24 registers), warpgroups 1 and 2 only
//      compute (240 registers each), each owning 64 rows of the B_r = 128 rows; K/V go through a ring of
//      stages (full/empty mbarriers), so copies run ahead of the math by up to kStages tiles. At d = 64 from
//      N = 2048 (without the mask from 1024) three consumer warpgroups (160 registers each) own B_r = 192 rows,
//      and Q_i has two buffers.
//   4. Intra-warpgroup overlap (FlashAttention-3's Algorithm 2): S_j and P̃_{j−1} V_{j−1} are issued together,
//      S_j alone is waited for, and its softmax runs while the tensor cores finish P̃_{j−1} V_{j−1} (with two
//      16-bit consumers; with three and in fp8 ptxas waits for the product before the softmax, which measured
//      faster there: Traits::kWaitAfterSoftmax).
//   5. Persistent grid (d = 64, d = 128 without the mask, causal d = 128 up to N = 2048; causal tiles longest first
//      in L2 sections of heads): one block per multiprocessor walks (head, Q tile)
//      pairs; the producer loads the next pair's Q and K_0/V_0 while the consumers finish the last tile of the
//      current one.
//   6. O leaves through a shared-memory staging tile in 16-byte coalesced stores.
//   Options bits switch 4, 5 and 6, the consumer count at d = 64, and ping-pong scheduling of two consumer
//   warpgroups (they take turns for the softmax; the default at d = 256 without the mask and at d = 64 with two
//   consumers, within the runs' spread or slower at d = 128 and on causal d = 256's 64-key tiles)
//   (flash3_wgmma.h; d = 256 has no room for a staging tile beside its Q_i and K/V stages: on the grid of one block
//   per Q tile it stages O in Q_i's buffer, on the persistent one it stores O straight from the accumulators).
//   Not done (FlashAttention-3 does it): a TMA store of O.
//
// Shared-memory layout (the 128-byte swizzle, CU_TENSOR_MAP_SWIZZLE_128B ≡ wgmma's swizzle mode 1): a tile of
// R rows × d columns (16 bits) is stored as d/64 column blocks of R rows × 128 bytes (64 elements); in each row the
// 16-byte chunk c sits at c ^ (row mod 8); every block starts on a 1024-byte boundary (8 rows).
//   - Q_i and K_j are K-major operands (K = d): descriptor start = block base + k-step's 32 bytes within the
//     row, stride byte offset (8 rows to the next 8) = 1024, leading byte offset unused for swizzled K-major.
//   - V_j is the N-major B operand of P̃V (N = d, contiguous; K = keys): start = V base + 16 keys · 128 bytes per
//     k-step, stride byte offset (8 keys to the next 8) = 1024, leading byte offset (one 64-column block to the
//     next) = B_c · 128.
// B_c = 128 keys at d = 64 and 128; 80 at d = 256, 64 there with the causal mask (Flash3Traits).
//
// Measured: kernels/README.md, "flash2_mma and flash3_wgmma" (the tables are written from the run folders in
// docs/results/, the experiments that chose this code are listed there).
#include "kernels/cuda/mma/flash3_wgmma.h"

#include <cuda.h>  // CUtensorMap and its enums only: the encoder is reached through the runtime (no -lcuda)
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <type_traits>

#include "kernels/common/format.h"
#include "kernels/cuda/device_status.h"
#include "kernels/cuda/mma/ablation/flash3_serial_loop.cuh"
#include "kernels/cuda/mma/flash3_kernel.cuh"
#include "kernels/cuda/mma/hopper_host.h"

#if defined(__CUDA_ARCH__) && !defined(__CUDA_ARCH_FEAT_SM90_ALL)
#error "flash3_wgmma.cu must be compiled for sm_90a only (-gencode=arch=compute_90a,code=sm_90a): wgmma, setmaxnreg"
#endif

namespace flashviz::cuda {

// ---------------------------------------------------------------------------------------------------------
// [SECTION] 4. Host
// ---------------------------------------------------------------------------------------------------------

// ---- Shared with flash3_fp8 (hopper_host.h).

namespace hopper_host {

namespace {
// cuTensorMapEncodeTiled through the runtime's driver entry point (the driver library is loaded by the runtime
// anyway; linking libcuda directly would tie the build to a driver stub).
using EncodeTiledFunction = CUresult (*)(CUtensorMap*, CUtensorMapDataType, cuuint32_t, void*, const cuuint64_t*,
                                         const cuuint64_t*, const cuuint32_t*, const cuuint32_t*, CUtensorMapInterleave,
                                         CUtensorMapSwizzle, CUtensorMapL2promotion, CUtensorMapFloatOOBfill);

EncodeTiledFunction TensorMapEncoder() {
  static const EncodeTiledFunction encoder = [] {
    void* function = nullptr;
    cudaDriverEntryPointQueryResult found = cudaDriverEntryPointSymbolNotFound;
    if (cudaGetDriverEntryPointByVersion("cuTensorMapEncodeTiled", &function, 12000, cudaEnableDefault, &found) !=
            cudaSuccess ||
        found != cudaDriverEntryPointSuccess)
      return static_cast<EncodeTiledFunction>(nullptr);
    return reinterpret_cast<EncodeTiledFunction>(function);
  }();
  return encoder;
}
}  // namespace

bool EncodeTensorMap3d(CUtensorMap* map, CUtensorMapDataType type, int element_bytes, const void* data, int columns,
                       int rows, int heads, int box_rows) {
  const EncodeTiledFunction encode = TensorMapEncoder();
  if (encode == nullptr) return false;
  const cuuint64_t dims[3] = {static_cast<cuuint64_t>(columns), static_cast<cuuint64_t>(rows),
                              static_cast<cuuint64_t>(heads)};
  const cuuint64_t strides[2] = {static_cast<cuuint64_t>(columns) * element_bytes,
                                 static_cast<cuuint64_t>(rows) * columns * element_bytes};  // bytes
  const cuuint32_t box[3] = {static_cast<cuuint32_t>(128 / element_bytes), static_cast<cuuint32_t>(box_rows), 1};
  const cuuint32_t element_strides[3] = {1, 1, 1};
  const CUresult result =
      encode(map, type, 3, const_cast<void*>(data), dims, strides, box, element_strides, CU_TENSOR_MAP_INTERLEAVE_NONE,
             CU_TENSOR_MAP_SWIZZLE_128B, CU_TENSOR_MAP_L2_PROMOTION_L2_256B, CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE);
  return result == CUDA_SUCCESS;
}

std::optional<std::string> DeviceNotHopper(const char* kernel) {
  int device = 0, major = 0, minor = 0;
  if (cudaGetDevice(&device) != cudaSuccess ||
      cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, device) != cudaSuccess ||
      cudaDeviceGetAttribute(&minor, cudaDevAttrComputeCapabilityMinor, device) != cudaSuccess) {
    cudaGetLastError();  // leave no sticky error behind for the caller
    return Sprintf("no CUDA device: %s needs a Hopper GPU (compute capability 9.0)", kernel);
  }
  if (major != 9 || minor != 0)
    return Sprintf("compute capability %d.%d: %s needs a Hopper GPU (9.0; wgmma and TMA, sm_90a)", major, minor,
                   kernel);
  return std::nullopt;
}

int SectionHeads(int heads, long long kv_bytes_per_head) {
  const long long l2_bytes = CurrentDeviceL2Bytes();
  // An unknown L2 size keeps the order measured before the sections: one section of all heads.
  if (heads <= CurrentDeviceMultiprocessors() || l2_bytes == 0) return std::max(heads, 1);
  return static_cast<int>(std::clamp(l2_bytes / 2 / std::max(1LL, kv_bytes_per_head), 1LL, 1LL * heads));
}

}  // namespace hopper_host

namespace {

using wgmma_detail::Flash3Params;
using wgmma_detail::Flash3Traits;

// The (B·H, N, d) tensor as a 3-D tensor map (d fastest) read in boxes of 64 columns × box_rows rows × 1 head
// with the 128-byte swizzle; out-of-range rows of a head read as zeros.
bool EncodeTensorMap(CUtensorMap* map, const void* data, DType dtype, int batch_heads, int n, int d, int box_rows) {
  return hopper_host::EncodeTensorMap3d(
      map, dtype == DType::kFp16 ? CU_TENSOR_MAP_DATA_TYPE_FLOAT16 : CU_TENSOR_MAP_DATA_TYPE_BFLOAT16, 2, data, d, n,
      batch_heads, box_rows);
}

// Compute capability 9.0 (the sm_90a code runs nowhere else), asked once.
std::optional<std::string> DeviceNotHopper() {
  static const std::optional<std::string> reason = hopper_host::DeviceNotHopper("flash3_wgmma");
  return reason;
}

// Causal 16-bit d = 256: K/V tiles of 64 keys and the mask as selects (kFlagNarrowKeys, kFlagSelectMask), without
// ping-pong. With 80-key tiles the select mask spilled (68 bytes) and measured 1-12% slower; with 64 it fits the
// registers. H200, 2026-11-28, against the 80-key kernel with the branching mask, three rounds a call
// (docs/results/2026-11-28-h200-d256-narrow-keys/, calls 2 and 3): +7-9% at N = 1024 (fp16 and bf16, either schedule),
// +3-15% at 2048, within the calls' spread from 4096 (0.98-1.09×; that kernel's own rounds spread up to 10% there).
// Ping-pong with it spills 20 bytes (24 with Q_i by consumer) and measured the same (±3% at N = 1024, mixed beyond):
// off, the other-schedule bit turns it on. Q_i in one part per consumer (kFlagQByConsumer), against the kernel without
// it, five rounds (calls 7 and 8): +1-2% at causal N = 1024 (every round above), +1% at 2048, within the spread beyond;
// without the mask 1.00× at N = 1024 and 0.97× in bf16 at 2048, so causal only.
constexpr unsigned kCausalD256 =
    wgmma_detail::kFlagNarrowKeys | wgmma_detail::kFlagSelectMask | wgmma_detail::kFlagQByConsumer;

// The kernel for these options on top of kBase (the consumer count, the causal select mask, causal d = 256's 64-key
// tiles): each compile-time options bit flips one flag of the default kernel (overlap on, staged store on). The default
// kernel alone also walks causal K/V tiles diagonal first (d = 64 and 128) and, at d = 64 without the mask, skips the
// mask test (kFlagDiagonalFirst, kFlagWholeKeyTiles, below): the options bits' kernels walk first to last and test each
// tile, so their ratios at those shapes count that too (their table, kernels/README.md, predates both).
template <typename T, int kD, unsigned kBase>
cudaError_t LaunchWithFlags(const AttentionArgs& args, const CUtensorMap& q_map, const CUtensorMap& k_map,
                            const CUtensorMap& v_map, bool persistent, int multiprocessors) {
  using Traits = wgmma_detail::Flash3TraitsOf<T, kD, kBase>;
  using wgmma_detail::kFlagLongestFirst;
  using wgmma_detail::kFlagOverlapSoftmax;
  using wgmma_detail::LaunchFlash3Kernel;
  const int n = args.shape.n, batch_heads = args.shape.batch * args.shape.heads;
  const int q_tiles = (n + Traits::kBr - 1) / Traits::kBr;
  const Flash3Params params{args.o,
                            nullptr,
                            n,
                            q_tiles,
                            q_tiles * batch_heads,
                            hopper_host::SectionHeads(batch_heads, 2LL * n * kD * static_cast<long long>(sizeof(T))),
                            args.shape.scale * 1.4426950408889634f,
                            args.shape.causal ? 1 : 0};
  // d = 256 has no staging tile of its own: below, it stages O in Q_i's buffer on the grid of one block per Q tile.
  constexpr unsigned kStaged = Traits::kCanStageO ? wgmma_detail::kFlagStagedStore : 0u;
  constexpr unsigned kDefault = kBase | kFlagOverlapSoftmax | kStaged;
  const unsigned flags = kDefault ^ ((args.options & kFlash3WgmmaSerialSoftmax) ? kFlagOverlapSoftmax : 0u) ^
                         ((args.options & kFlash3WgmmaDirectStore) ? kStaged : 0u);
  // Ping-pong takes turns between two consumers: with three the bit changes nothing. The default at d = 256 (H200,
  // 2026-11-26, with O staged in Q_i and the turns around the GEMMs' issue: 1-15% faster at N = 1024 and 4096, within
  // ±3% at 16384; the softmax's turns, 2026-11-28, the same) and causal at d = 64 with two consumers (below N = 2048,
  // or with the other-rows bit; 2026-11-28, the softmax's turns: +3-4% at N = 1024, +2% at 1536, five rounds against
  // the kernel without them, timed alone), not at d = 128 (causal 0.95-0.99×) nor at d = 64 without the mask (not
  // measured: there two consumers run only below N = 1024, or with the other-rows bit); the other-schedule bit flips
  // it. Causal d = 256 (kCausalD256, 64-key tiles) is without it by default. Causal on the persistent grid, ping-pong
  // walks first to last: with the diagonal first as well it measured 1% lower at d = 64 (2026-11-28).
  constexpr unsigned kPingPong = Traits::kConsumers == 2 ? wgmma_detail::kFlagPingPong : 0u;
  const bool ping_pong_by_default = (kD == 256 && (kBase & wgmma_detail::kFlagNarrowKeys) == 0) ||
                                    (kD == 64 && Traits::kConsumers == 2 && args.shape.causal);
  const bool ping_pong =
      (ping_pong_by_default != ((args.options & kFlash3WgmmaOtherSchedule) != 0)) && flags == kDefault;
  // d = 256 on the grid of one block per Q tile: O stages in Q_i's buffer, which no next tile needs there (the
  // direct-store bit stores from the accumulators instead). The same day: 6% faster at N = 1024 without the mask,
  // 11-12% causal; within the spread at 4096 and 16384 (−7% to +3%).
  if constexpr (!Traits::kCanStageO) {
    constexpr unsigned kStagedInQ = wgmma_detail::kFlagStagedStore | wgmma_detail::kFlagStageOInQ;
    if (!persistent && !(args.options & kFlash3WgmmaDirectStore)) {
      if (flags == kBase) return LaunchFlash3Kernel<T, kD, kBase | kStagedInQ>(args.stream, q_map, k_map, v_map, params,
                                                                                false, multiprocessors);
      return ping_pong ? LaunchFlash3Kernel<T, kD, kDefault | kStagedInQ | kPingPong>(args.stream, q_map, k_map, v_map,
                                                                                      params, false, multiprocessors)
                       : LaunchFlash3Kernel<T, kD, kDefault | kStagedInQ>(args.stream, q_map, k_map, v_map, params,
                                                                          false, multiprocessors);
    }
  }
  // Causal on the persistent grid: longest tiles first (the default kernel only; the ablation bits keep the
  // head-major order they were measured with). H200, docs/results/2026-11-25-h200-flash3-arrive run4. Causal d = 128
  // and 256 always come with the select mask in kBase, so without it these kernels are never launched and not built.
  constexpr bool kMayBeCausal = kD == 64 || (kBase & wgmma_detail::kFlagSelectMask) != 0;
  // Causal, where one K/V tile of a work tile crosses the diagonal: that tile first (the default kernel only).
  constexpr unsigned kDiagonalFirst = Traits::kBr == Traits::kBc ? wgmma_detail::kFlagDiagonalFirst : 0u;
  if constexpr (kMayBeCausal) {
    if (args.shape.causal && persistent && flags == kDefault)
      return ping_pong ? LaunchFlash3Kernel<T, kD, kDefault | kFlagLongestFirst | kPingPong>(
                             args.stream, q_map, k_map, v_map, params, true, multiprocessors)
                       : LaunchFlash3Kernel<T, kD, kDefault | kFlagLongestFirst | kDiagonalFirst>(
                             args.stream, q_map, k_map, v_map, params, true, multiprocessors);
  }
  if (ping_pong)
    return LaunchFlash3Kernel<T, kD, kDefault | kPingPong>(args.stream, q_map, k_map, v_map, params, persistent,
                                                           multiprocessors);
  // Causal d = 128 on the grid of one block per Q tile: the diagonal first too (kBase has the select mask only when
  // causal; at d = 256, B_r ≠ B_c, kDiagonalFirst is 0).
  constexpr unsigned kCausalOnly = (kBase & wgmma_detail::kFlagSelectMask) != 0 ? kDiagonalFirst : 0u;
  // d = 64 without the mask and N a multiple of B_c: a softmax that never masks (kFlagWholeKeyTiles). H200,
  // 2026-11-27, three rounds against the kernel that tests each tile (docs/results/2026-11-27-h200-diagonal-first/
  // call4): +2-6% at N = 1024, 4096 and 16384, both dtypes; at d = 128 (Q_i in registers) 0.95-0.99×, not taken.
  if constexpr (kD == 64) {
    if (flags == kDefault && !args.shape.causal && n % Traits::kBc == 0)
      return LaunchFlash3Kernel<T, kD, kDefault | wgmma_detail::kFlagWholeKeyTiles>(args.stream, q_map, k_map, v_map,
                                                                                   params, persistent, multiprocessors);
  }
  if (flags == kDefault)
    return LaunchFlash3Kernel<T, kD, kDefault | kCausalOnly>(args.stream, q_map, k_map, v_map, params, persistent,
                                                             multiprocessors);
  if (flags == kBase)
    return LaunchFlash3Kernel<T, kD, kBase>(args.stream, q_map, k_map, v_map, params, persistent, multiprocessors);
  if constexpr (kStaged != 0) {
    if (flags == (kBase | kFlagOverlapSoftmax))
      return LaunchFlash3Kernel<T, kD, kBase | kFlagOverlapSoftmax>(args.stream, q_map, k_map, v_map, params,
                                                                    persistent, multiprocessors);
    return LaunchFlash3Kernel<T, kD, kBase | kStaged>(args.stream, q_map, k_map, v_map, params, persistent,
                                                      multiprocessors);
  }
  return cudaErrorInvalidValue;  // unreachable: without a staging tile the flags are kDefault or kBase
}

}  // namespace

std::string Flash3WgmmaOptionsName(unsigned options) {
  if (options == 0) return "default";
  std::string name;
  const auto add = [&](const std::string& part) { name += (name.empty() ? "" : "+") + part; };
  if (options & kFlash3WgmmaOtherGrid) add("other-grid");
  if (options & kFlash3WgmmaSerialSoftmax) add("serial-softmax");
  if (options & kFlash3WgmmaDirectStore) add("direct-store");
  if (options & kFlash3WgmmaOtherSchedule) add("other-schedule");
  if (options & kFlash3WgmmaOtherRows) add("other-rows");
  if (options & ~kFlash3WgmmaAllOptions) add(Sprintf("unknown-0x%x", options & ~kFlash3WgmmaAllOptions));
  return name;
}

std::optional<std::string> Flash3WgmmaNotApplicable(const AttentionShape& shape, DType dtype) {
  if (dtype == DType::kFp32) return "fp32: flash3_wgmma takes fp16 or bf16 inputs (wgmma .f16/.bf16)";
  if (shape.d != 64 && shape.d != 128 && shape.d != 256) return Sprintf("d = %d: only d = 64, 128 and 256", shape.d);
  if (shape.n < 1) return Sprintf("N = %d: N must be at least 1", shape.n);
  if (shape.batch < 1 || shape.heads < 1)
    return Sprintf("batch %d, heads %d: both must be at least 1", shape.batch, shape.heads);
  const long long batch_heads = static_cast<long long>(shape.batch) * shape.heads;
  if (batch_heads * ((shape.n + 63) / 64) > 0x7fffffffll)  // B_r ≥ 64
    return Sprintf("B·H = %lld with N = %d: more than 2^31 - 1 (head, Q tile) pairs", batch_heads, shape.n);
  if (batch_heads * shape.n * shape.d > (1ll << 40)) return "B·H·N·d over 2^40 elements (the tensor map's reach)";
  // The running max is taken on raw scores and scaled afterwards: that orders them right only for scale > 0.
  if (!(shape.scale > 0.0f) || !std::isfinite(shape.scale))
    return Sprintf("scale = %g: flash3_wgmma needs a positive finite scale", static_cast<double>(shape.scale));
  return DeviceNotHopper();
}

std::size_t Flash3WgmmaWorkspaceBytes(const AttentionShape& /*shape*/, DType /*dtype*/) { return 0; }

cudaError_t LaunchFlash3Wgmma(const AttentionArgs& args) {
  if (args.options & ~kFlash3WgmmaAllOptions) return cudaErrorInvalidValue;
  for (const void* pointer : {args.q, args.k, args.v, static_cast<const void*>(args.o)})
    if (pointer == nullptr || reinterpret_cast<std::uintptr_t>(pointer) % 16 != 0) return cudaErrorInvalidValue;
  if (auto reason = Flash3WgmmaNotApplicable(args.shape, args.dtype))
    return reason->rfind("compute capability", 0) == 0 || reason->rfind("no CUDA", 0) == 0 ? cudaErrorInvalidDevice
                                                                                            : cudaErrorInvalidValue;
  const int batch_heads = args.shape.batch * args.shape.heads, n = args.shape.n, d = args.shape.d;
  // Q_i in boxes of B_r rows (192 at d = 64 with three consumers, 128 else; 64, one consumer's, at causal d = 256),
  // K_j and V_j of B_c rows (at d = 256 80, causal 64; else 128).
  // d = 64: three consumer warpgroups (B_r = 192) from N = 2048, and without the mask from N = 1024; two below.
  // H200, 2026-11-26, two rounds: three are 1-4% faster at N = 2048 and 4096 and 10-13% at 16384, 2-15% slower at
  // 1024, where 192 leaves two thirds of the last Q tile empty and the causal diagonal is coarser. 2026-11-27, with the
  // wait for P̃V kept after the softmax (docs/results/2026-11-27-h200-rescale-and-carry): at N = 1024 three are 4%
  // faster without the mask (two calls) and 0.88× with it. The other-rows bit takes the other.
  const bool three_by_default = n >= 2048 || (!args.shape.causal && n >= 1024);
  const bool three_consumers = d == 64 && (three_by_default != ((args.options & kFlash3WgmmaOtherRows) != 0));
  // Causal d = 256 takes kCausalD256's kernels (below): Q_i in boxes of one consumer's rows (kFlagQByConsumer), K_j and
  // V_j of its 64 keys, both as that kernel's traits have them.
  using CausalD256 = wgmma_detail::Flash3TraitsOf<__half, 256, kCausalD256>;
  const bool causal_d256 = d == 256 && args.shape.causal;
  const int q_box_rows = three_consumers ? Flash3Traits<__half, 64, 3>::kBr
                         : causal_d256   ? CausalD256::kBr / CausalD256::kQParts
                                         : 128;
  const int kv_box_rows = causal_d256 ? CausalD256::kBc : d == 256 ? Flash3Traits<__half, 256>::kBc : 128;
  CUtensorMap q_map, k_map, v_map;
  if (!EncodeTensorMap(&q_map, args.q, args.dtype, batch_heads, n, d, q_box_rows) ||
      !EncodeTensorMap(&k_map, args.k, args.dtype, batch_heads, n, d, kv_box_rows) ||
      !EncodeTensorMap(&v_map, args.v, args.dtype, batch_heads, n, d, kv_box_rows))
    return cudaErrorInvalidValue;
  // Default grid (kernels/README.md): persistent, except causal at d = 128 beyond N = 2048, where one block per Q
  // tile (the hardware balancing the uneven tiles) is as fast at N = 4096 and 3% faster at 16384, while at
  // N = 1024, whose work tiles have 1-8 K/V tiles, the persistent grid's producer loading the next tile's Q and K/V
  // during the last one's epilogue makes it 15-22% faster (H200, 2026-11-26, with the L2 sections of the
  // longest-first schedule; N = 2048 itself was not measured); causal at d = 64 the persistent grid was 7-14%
  // faster (2026-11-21). d = 256 runs one block per Q tile with and without the mask (2026-11-26, first call: 2-8%
  // faster than persistent without it; later calls: within ±5% but fp16 N = 16384, 10% faster; causal, even with
  // the sections, 2-15% faster at all but one shape).
  const bool default_persistent = d == 256 ? false : !(args.shape.causal && d == 128 && n > 2048);
  const bool persistent = default_persistent != ((args.options & kFlash3WgmmaOtherGrid) != 0);
  const int multiprocessors = CurrentDeviceMultiprocessors();
  const auto launch = [&](auto element, auto head_dim) {
    using T = decltype(element);
    constexpr int kD = decltype(head_dim)::value;
    if constexpr (kD == 64) {
      if (three_consumers)
        return LaunchWithFlags<T, kD, wgmma_detail::kFlagThreeConsumers>(args, q_map, k_map, v_map, persistent,
                                                                          multiprocessors);
    }
    // Causal d = 128 masks with selects (d = 64 always does; d = 256 with 80-key tiles would spill, 68 bytes, and
    // measured 1-12% slower: it takes 64-key tiles for it, kCausalD256). H200, 2026-11-27, against the branching
    // form, three rounds in one call: +10% and +14% at N = 1024 (fp16, bf16), +3% at 4096, +2% at 16384
    // (docs/results/2026-11-27-h200-select-mask/).
    if constexpr (kD == 128) {
      if (args.shape.causal)
        return LaunchWithFlags<T, kD, wgmma_detail::kFlagSelectMask>(args, q_map, k_map, v_map, persistent,
                                                                     multiprocessors);
    }
    if constexpr (kD == 256) {
      if (causal_d256)
        return LaunchWithFlags<T, kD, kCausalD256>(args, q_map, k_map, v_map, persistent, multiprocessors);
    }
    return LaunchWithFlags<T, kD, 0>(args, q_map, k_map, v_map, persistent, multiprocessors);
  };
  using D64 = std::integral_constant<int, 64>;
  using D128 = std::integral_constant<int, 128>;
  using D256 = std::integral_constant<int, 256>;
  const auto for_dtype = [&](auto element) {
    return d == 64 ? launch(element, D64{}) : d == 128 ? launch(element, D128{}) : launch(element, D256{});
  };
  return args.dtype == DType::kFp16 ? for_dtype(__half{}) : for_dtype(__nv_bfloat16{});
}

}  // namespace flashviz::cuda
