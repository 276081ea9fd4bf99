// The flash2_mma kernel that ships (included by the instantiation files flash2_mma_{fp16,bf16}_d{64,128}.cu).
// flash2_mma.cu holds the story (what changes versus flash2_wmma, the measured numbers); the same kernel with one
// switch per step, which the options bits run to measure each step, is ablation/flash2_mma_ablation.cuh.
//
// [SECTION] index
//   1. PTX wrappers: cp.async, ldmatrix, mma.sync, ex2
//   2. Flags and traits: tile sizes, shared-memory layout, the XOR swizzle; one warp's S_ij, rescale and P̃_ij V_j
//      (ring_attend, kernels/cuda/ring, shares them); the flags that ship for each d
//   3. The kernel: per Q tile i, loop over K_j/V_j; S_ij, online softmax and O_i in registers
//   4. Host launch
//
// Fragment layouts used below (PTX ISA, "Matrix fragments for mma.m16n8k16"), lane = 0..31, g = lane / 4,
// c = lane % 4:
//   A (16×16, row-major), 4 registers of 2 elements: a0 = (row g, cols 2c, 2c+1), a1 = (row g+8, same cols),
//     a2 = (row g, cols 2c+8, 2c+9), a3 = (row g+8, cols 2c+8, 2c+9).
//   B (16×8, "col"), 2 registers: b0 = (rows 2c, 2c+1, col g), b1 = (rows 2c+8, 2c+9, col g).
//   C/D (16×8, fp32), 4 registers: c0, c1 = (row g, cols 2c, 2c+1), c2, c3 = (row g+8, cols 2c, 2c+1).
// Two C tiles side by side (cols 0-7 and 8-15) therefore hold exactly an A fragment's elements: that is how
// P̃_ij stays in registers between S_ij = Q_i K_jᵀ and O_i += P̃_ij V_j.
#pragma once

#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include <cmath>
#include <cstdint>
#include <type_traits>

#include "kernels/cuda/device_common.cuh"
#include "kernels/cuda/mma/flash2_mma.h"

namespace flashviz::cuda::mma_detail {

// ---------------------------------------------------------------------------------------------------------
// [SECTION] 1. PTX wrappers
// ---------------------------------------------------------------------------------------------------------

// 16-byte global → shared copy that bypasses L1 (.cg); src_bytes = 0 writes 16 zero bytes (rows past N).
__device__ __forceinline__ void CopyAsync16(std::uint32_t shared_dst, const void* global_src, int src_bytes) {
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n" ::"r"(shared_dst), "l"(global_src), "r"(src_bytes));
}
__device__ __forceinline__ void CopyAsyncCommit() {
  asm volatile("cp.async.commit_group;\n" ::);
}
__device__ __forceinline__ void CopyAsyncWaitAll() {
  asm volatile("cp.async.wait_group 0;\n" ::: "memory");
}

using device::LoadMatrixX4;
using device::LoadMatrixX4Trans;
using device::MmaM16N8K16;
using device::PackPair;
using device::SharedAddress;

// 2^x on the special-function unit (one MUFU.EX2; 2^(−∞) = +0): device_common.cuh's.
using device::FastExp2;

// ---------------------------------------------------------------------------------------------------------
// [SECTION] 2. Traits
// ---------------------------------------------------------------------------------------------------------

// The kernel's compile-time configuration, one bit per choice. The shipped kernel takes DefaultFlags<kD>() (below);
// the ablation kernels (ablation/flash2_mma_ablation.cuh: FlagsForOptions, AttentionArgs::options flipping them) are
// one kernel per combination, so a switched-off optimization costs nothing at run time.
enum Flash2MmaFlag : unsigned {
  kFlagSwizzle = 1u << 0,       // XOR-swizzled shared-memory tiles
  kFlagPipeline = 1u << 1,      // two K/V buffers, cp.async of tile j+1 under the work on tile j
  kFlagPInRegisters = 1u << 2,  // P̃_ij reused from the S accumulators as the A operand of P̃_ij V_j
  kFlagQInRegisters = 1u << 3,  // Q_i's A fragments loaded once, kept in registers for the whole loop
  kFlagTwoMTiles = 1u << 4,     // each warp owns 32 rows (two m16 tiles: every K_j/V_j fragment feeds 4 mma)
  kFlagLazyRescale = 1u << 5,   // O_i ← α·O_i skipped when no row max of the warp moved (α = 1 exactly)
};
inline constexpr unsigned kFlagCount = 6;

template <int kD, unsigned kFlags, int kKeysPerTile = 64>
struct Flash2MmaTraits {
  static constexpr int kMTiles = (kFlags & kFlagTwoMTiles) ? 2 : 1;  // m16 tiles per warp
  static constexpr int kRowsPerWarp = 16 * kMTiles;
  static constexpr int kBr = 128;  // B_r: rows of Q_i per block
  static constexpr int kWarps = kBr / kRowsPerWarp;
  static constexpr int kThreads = kWarps * 32;
  static constexpr int kBc = kKeysPerTile;  // B_c: keys per K_j/V_j tile (64; 32 with the narrow-tile trial)
  // P̃ through shared memory is laid out as rows of 8 swizzled 16-byte chunks (B_c = 64 keys of 16 bits).
  static_assert(kBc == 64 || (kFlags & kFlagPInRegisters), "P̃ in shared memory needs B_c = 64");
  static_assert(kBc % 16 == 0, "P̃'s A fragments take the keys 16 at a time");
  static constexpr bool kPipeline = (kFlags & kFlagPipeline) != 0;
  static constexpr bool kPInRegisters = (kFlags & kFlagPInRegisters) != 0;
  static constexpr int kQBytes = kBr * kD * 2;
  static constexpr int kKVTileBytes = kBc * kD * 2;
  static constexpr int kPBytes = kBr * kBc * 2;  // only when P̃ goes through shared memory
  static constexpr int kSharedBytes = kQBytes + (kPipeline ? 2 : 1) * 2 * kKVTileBytes + (kPInRegisters ? 0 : kPBytes);
  // Blocks per multiprocessor the registers are budgeted for (__launch_bounds__). 8 warps × 2 blocks → at most
  // 128 registers a thread; d = 128 with 16 rows a warp and Q_i in registers needs ~230 (64 O + 32 S + 32 Q and
  // the K fragments in flight), so that one runs a single block. 4 warps × 2 blocks → at most 255.
  static constexpr int kMinBlocksPerSm = (kMTiles == 1 && kD == 128 && (kFlags & kFlagQInRegisters)) ? 1 : 2;
};

// Byte offset of 16-byte chunk `chunk` of row `row` in a tile of kChunksPerRow chunks per row. With the
// swizzle, chunk c of row r lives at c ^ (r mod 8): the 8 rows an ldmatrix phase reads (same logical chunk,
// consecutive rows) land in 8 different 16-byte bank groups, so 128 bytes come in one shared-memory cycle.
template <int kChunksPerRow, bool kSwizzle>
__device__ __forceinline__ std::uint32_t TileOffset(int row, int chunk) {
  static_assert(!kSwizzle || kChunksPerRow >= 8, "the swizzle permutes 8 chunks");
  const int physical = kSwizzle ? (chunk ^ (row & 7)) : chunk;
  return static_cast<std::uint32_t>((row * kChunksPerRow + physical) * 16);
}

// The fragment loads below address shared memory as lane_base ⊕ column_bytes (+ row-block bytes): lane_base holds
// the lane's row and its swizzled chunk within the first pair of chunks, and the chunk pair of k-step ks is a
// compile-time XOR of ks·32 bytes. That works because every tile starts on a 1024-byte boundary and a row is
// 128 or 256 bytes: the XOR only flips chunk bits, exactly as (2ks + chunk) ^ (row mod 8) would. One LOP3 per
// ldmatrix instead of a register per (k-step, lane) pair kept live across the whole loop.
template <bool kSwizzle>
__device__ __forceinline__ std::uint32_t ChunkAddress(std::uint32_t lane_base, std::uint32_t column_bytes) {
  return kSwizzle ? (lane_base ^ column_bytes) : (lane_base + column_bytes);
}
// The lane's part of a base address: chunk `chunk` (0 or 1) of a row whose index ≡ row_mod8 (mod 8).
template <bool kSwizzle>
__device__ __forceinline__ std::uint32_t LaneChunkBytes(int chunk, int row_mod8) {
  return static_cast<std::uint32_t>((kSwizzle ? (chunk ^ row_mod8) : chunk) * 16);
}

// cp.async a tile of kRows × kD elements (row-major, row stride kD) into shared memory; rows ≥ valid_rows are
// zero-filled, so padded keys contribute 0·V and padded queries compute harmless zeros (kWhole: every row valid).
template <int kD, int kRows, int kThreads, bool kSwizzle, bool kWhole = false, typename T>
__device__ __forceinline__ void LoadTileAsync(std::uint32_t shared_tile, const T* global_tile, int valid_rows,
                                              int thread) {
  constexpr int kChunksPerRow = kD / 8;
  constexpr int kChunks = kRows * kChunksPerRow;
  static_assert(kChunks % kThreads == 0, "every thread copies the same number of chunks");
#pragma unroll
  for (int it = 0; it < kChunks / kThreads; ++it) {
    const int index = it * kThreads + thread;
    const int row = index / kChunksPerRow;
    const int chunk = index % kChunksPerRow;
    const bool valid = kWhole || row < valid_rows;
    const T* source = global_tile + static_cast<std::size_t>(valid ? row : 0) * kD + chunk * 8;
    CopyAsync16(shared_tile + TileOffset<kChunksPerRow, kSwizzle>(row, chunk), source, valid ? 16 : 0);
  }
}

// One warp's S_ij = Q_i K_jᵀ for its kM·16 rows: kM × kSTiles tiles of 16×8, fp32. Each K_j fragment feeds kM·2
// mma. Q_i's A fragments come from registers (kQInRegisters: loaded once per Q tile) or from shared memory.
template <typename T, int kM, int kSTiles, int kKSteps, int kRowBytes, bool kSwizzle, bool kQInRegisters, int kQSlots>
__device__ __forceinline__ void WarpScores(float (&s)[kM][kSTiles][4],
                                           const std::uint32_t (&q_fragment)[kM][kQSlots][4], std::uint32_t q_lane,
                                           std::uint32_t stage_k_lane) {
#pragma unroll
  for (int mi = 0; mi < kM; ++mi)
#pragma unroll
    for (int t = 0; t < kSTiles; ++t) s[mi][t][0] = s[mi][t][1] = s[mi][t][2] = s[mi][t][3] = 0.0f;
#pragma unroll
  for (int ks = 0; ks < kKSteps; ++ks) {
    std::uint32_t a[kM][4];
#pragma unroll
    for (int mi = 0; mi < kM; ++mi) {
      if constexpr (kQInRegisters) {
#pragma unroll
        for (int r = 0; r < 4; ++r) a[mi][r] = q_fragment[mi][ks][r];
      } else {
        LoadMatrixX4(a[mi], ChunkAddress<kSwizzle>(q_lane, ks * 32) + mi * 16 * kRowBytes);
      }
    }
#pragma unroll
    for (int kp = 0; kp < kSTiles / 2; ++kp) {
      std::uint32_t b[4];
      LoadMatrixX4(b, ChunkAddress<kSwizzle>(stage_k_lane, ks * 32) + kp * 16 * kRowBytes);
#pragma unroll
      for (int mi = 0; mi < kM; ++mi) {
        MmaM16N8K16<T>(s[mi][2 * kp], a[mi], b[0], b[1]);
        MmaM16N8K16<T>(s[mi][2 * kp + 1], a[mi], b[2], b[3]);
      }
    }
  }
}

// O_i ← diag(α) O_i for one warp's rows (rows g and g + 8 of each m16 tile: α[mi][0] and α[mi][1]).
template <int kM, int kOTiles>
__device__ __forceinline__ void RescaleRows(float (&o_acc)[kM][kOTiles][4], const float (&alpha)[kM][2]) {
#pragma unroll
  for (int mi = 0; mi < kM; ++mi)
#pragma unroll
    for (int t = 0; t < kOTiles; ++t) {
      o_acc[mi][t][0] *= alpha[mi][0];
      o_acc[mi][t][1] *= alpha[mi][0];
      o_acc[mi][t][2] *= alpha[mi][1];
      o_acc[mi][t][3] *= alpha[mi][1];
    }
}

// The A fragment of P̃_ij V_j's k-step u (keys 16u..16u+15) from registers: S tiles 2u and 2u+1, repacked (the
// fragment layouts above: two C tiles side by side are one A fragment).
template <typename T, int kM, int kSTiles>
__device__ __forceinline__ void PackProbabilities(std::uint32_t (&p)[kM][4], const float (&s)[kM][kSTiles][4], int u) {
#pragma unroll
  for (int mi = 0; mi < kM; ++mi) {
    p[mi][0] = PackPair<T>(s[mi][2 * u][0], s[mi][2 * u][1]);
    p[mi][1] = PackPair<T>(s[mi][2 * u][2], s[mi][2 * u][3]);
    p[mi][2] = PackPair<T>(s[mi][2 * u + 1][0], s[mi][2 * u + 1][1]);
    p[mi][3] = PackPair<T>(s[mi][2 * u + 1][2], s[mi][2 * u + 1][3]);
  }
}

// O_i += P̃ V_j for k-step u: V_j's rows 16u..16u+15 (stored key-major, read transposed) against the A fragments p.
template <typename T, int kM, int kOTiles, int kRowBytes, bool kSwizzle>
__device__ __forceinline__ void AccumulateOutput(float (&o_acc)[kM][kOTiles][4], const std::uint32_t (&p)[kM][4],
                                                 std::uint32_t stage_v_lane, int u) {
#pragma unroll
  for (int dp = 0; dp < kOTiles / 2; ++dp) {
    std::uint32_t b[4];
    LoadMatrixX4Trans(b, ChunkAddress<kSwizzle>(stage_v_lane, dp * 32) + u * 16 * kRowBytes);
#pragma unroll
    for (int mi = 0; mi < kM; ++mi) {
      MmaM16N8K16<T>(o_acc[mi][2 * dp], p[mi], b[0], b[1]);
      MmaM16N8K16<T>(o_acc[mi][2 * dp + 1], p[mi], b[2], b[3]);
    }
  }
}

// The mask on one warp's S_ij (rows g and g + 8 of each m16 tile from warp_row0; lane column pair 2c): −∞ for keys
// past N and (causal) past the row. Only where needed: on the tile that crosses N, and (causal) on tiles that cross
// this warp's diagonal.
template <int kM, int kSTiles>
__device__ __forceinline__ void MaskScores(float (&s)[kM][kSTiles][4], int kv_col0, int warp_row0, int g, int c, int n,
                                           bool causal) {
  constexpr int kBc = kSTiles * 8;
  const bool crosses_n = kv_col0 + kBc > n;
  const bool crosses_diagonal = causal && kv_col0 + kBc - 1 > warp_row0;
  if (crosses_n || crosses_diagonal) {
#pragma unroll
    for (int mi = 0; mi < kM; ++mi) {
      const int row_a = warp_row0 + mi * 16 + g, row_b = row_a + 8;
#pragma unroll
      for (int t = 0; t < kSTiles; ++t) {
#pragma unroll
        for (int e = 0; e < 2; ++e) {
          const int col = kv_col0 + t * 8 + 2 * c + e;
          const bool out = col >= n;
          if (out || (causal && col > row_a)) s[mi][t][e] = -INFINITY;
          if (out || (causal && col > row_b)) s[mi][t][2 + e] = -INFINITY;
        }
      }
    }
  }
}

// The online softmax's statistics for one warp's rows and one tile: m_new = max(m_old, rowmax S_ij),
// α = e^(scale·(m_old − m_new)), ℓ ← α·ℓ, and each row's offset scale·m_new for P̃_ij = e^(scale·(S_ij − m_new)).
// Returns whether any row's maximum moved (α ≠ 1).
template <int kM, int kSTiles>
__device__ __forceinline__ bool MoveRowMaxima(const float (&s)[kM][kSTiles][4], float (&row_max)[kM][2],
                                              float (&row_sum)[kM][2], float (&max_scaled)[kM][2],
                                              float (&alpha)[kM][2], float scale_log2) {
  bool any_max_moved = false;
#pragma unroll
  for (int mi = 0; mi < kM; ++mi) {
    float tile_max[2] = {row_max[mi][0], row_max[mi][1]};
#pragma unroll
    for (int t = 0; t < kSTiles; ++t) {
      tile_max[0] = fmaxf(tile_max[0], fmaxf(s[mi][t][0], s[mi][t][1]));
      tile_max[1] = fmaxf(tile_max[1], fmaxf(s[mi][t][2], s[mi][t][3]));
    }
#pragma unroll
    for (int r = 0; r < 2; ++r) {
      // The four lanes of a quad hold the row's B_c columns between them.
      tile_max[r] = fmaxf(tile_max[r], __shfl_xor_sync(0xffffffffu, tile_max[r], 1));
      tile_max[r] = fmaxf(tile_max[r], __shfl_xor_sync(0xffffffffu, tile_max[r], 2));
      // A row with every key so far masked keeps m = −∞; subtract 0 then so that no −∞ − (−∞) = NaN appears.
      max_scaled[mi][r] = tile_max[r] == -INFINITY ? 0.0f : tile_max[r] * scale_log2;
      const bool moved = tile_max[r] != row_max[mi][r];
      any_max_moved |= moved;
      alpha[mi][r] = moved ? FastExp2(row_max[mi][r] * scale_log2 - max_scaled[mi][r]) : 1.0f;
      row_max[mi][r] = tile_max[r];
      row_sum[mi][r] *= alpha[mi][r];
    }
  }
  return any_max_moved;
}

// P̃_ij = 2^(scale·log2e·S_ij − scale·log2e·m_new) in place of S_ij (one FFMA and one MUFU.EX2 each), added into the
// lane's part of ℓ (the quad's four partial sums are joined once, at the end: α rescales all four alike).
template <int kM, int kSTiles>
__device__ __forceinline__ void ExponentiateScores(float (&s)[kM][kSTiles][4], float (&row_sum)[kM][2],
                                                   const float (&max_scaled)[kM][2], float scale_log2) {
#pragma unroll
  for (int mi = 0; mi < kM; ++mi)
#pragma unroll
    for (int t = 0; t < kSTiles; ++t)
#pragma unroll
      for (int e = 0; e < 4; ++e) {
        s[mi][t][e] = FastExp2(fmaf(s[mi][t][e], scale_log2, -max_scaled[mi][e / 2]));
        row_sum[mi][e / 2] += s[mi][t][e];
      }
}

// O_i = diag(ℓ_i)⁻¹ O_i for one warp's rows, written straight from the accumulators in 4-byte pairs (rows ≥ N are
// padding and never stored; kWhole: there are none).
template <typename T, int kD, bool kWhole = false, int kM, int kOTiles>
__device__ __forceinline__ void StoreOutput(T* o_head, const float (&o_acc)[kM][kOTiles][4],
                                            const float (&row_sum)[kM][2], int warp_row0, int g, int c, int n) {
#pragma unroll
  for (int mi = 0; mi < kM; ++mi) {
    float inverse_sum[2];
#pragma unroll
    for (int r = 0; r < 2; ++r) {
      float sum = row_sum[mi][r];
      sum += __shfl_xor_sync(0xffffffffu, sum, 1);
      sum += __shfl_xor_sync(0xffffffffu, sum, 2);
      inverse_sum[r] = 1.0f / sum;
    }
    const int row_a = warp_row0 + mi * 16 + g, row_b = row_a + 8;
#pragma unroll
    for (int t = 0; t < kOTiles; ++t) {
      const int col = t * 8 + 2 * c;
      if (kWhole || row_a < n)
        *reinterpret_cast<std::uint32_t*>(o_head + static_cast<std::size_t>(row_a) * kD + col) =
            PackPair<T>(o_acc[mi][t][0] * inverse_sum[0], o_acc[mi][t][1] * inverse_sum[0]);
      if (kWhole || row_b < n)
        *reinterpret_cast<std::uint32_t*>(o_head + static_cast<std::size_t>(row_b) * kD + col) =
            PackPair<T>(o_acc[mi][t][2] * inverse_sum[1], o_acc[mi][t][3] * inverse_sum[1]);
    }
  }
}

// The warp shape and Q_i placement that ship for each d (options = 0), chosen from the H200 measurements in
// kernels/README.md (run of 2026-11-21, every combination timed at every N): 32 rows a warp (4 warps,
// FlashAttention-2's own warp shape) for both d; Q_i in registers at d = 64 (no spills at 168 registers), re-read
// from shared memory at d = 128 (in registers it would need > 255 and spills hundreds of bytes).
inline constexpr unsigned kFlash2MmaDefaultShapeD64 = kFlagTwoMTiles | kFlagQInRegisters;
inline constexpr unsigned kFlash2MmaDefaultShapeD128 = kFlagTwoMTiles;

template <int kD>
__host__ __device__ constexpr unsigned DefaultFlags() {
  // The lazy rescale is off by default: measured 0-5% slower (the vote and branch cut the block that ptxas
  // schedules the exponentials and the P̃V mma in), so it stays a switch, not a step.
  constexpr unsigned kAlways = kFlagSwizzle | kFlagPipeline | kFlagPInRegisters;
  return kD == 64 ? (kAlways | kFlash2MmaDefaultShapeD64) : (kAlways | kFlash2MmaDefaultShapeD128);
}

// ---------------------------------------------------------------------------------------------------------
// [SECTION] 3. The kernel
// ---------------------------------------------------------------------------------------------------------

template <typename T>
struct Flash2MmaParams {
  const T* q;
  const T* k;
  const T* v;
  T* o;
  int n;
  float scale_log2;  // scale · log2(e): exp(scale·s − scale·m) = 2^(s·scale_log2 − m·scale_log2), one FFMA + EX2
  bool causal;
  // kFlash2MmaStagger (read by the ablation kernels only): blocks with linear index in [stagger_first, stagger_end)
  // sleep stagger_ns before starting.
  int stagger_first;
  int stagger_end;
  unsigned stagger_ns;
};

// Grid: x = Q tile index (reversed when causal, so the longest rows start first), y = batch·head.
// Warp w owns rows [32w, 32w + 32) of Q_i (two m16 tiles, so every K_j/V_j fragment feeds 4 mma); its m16 tile mi
// holds rows 16·mi.. of those, and a lane holds rows g and g+8 of each m16 tile (g = lane / 4).
// This is the kernel that ships (options = 0); each options bit's other choice is in
// kernels/cuda/mma/ablation/flash2_mma_ablation.cuh, the same kernel with one switch per step.
// kWhole: without the mask and N a multiple of B_r (and so of B_c), as FlashAttention-2's Is_even_MN kernels: no
// row past N, no tile to mask, so the copies, the softmax and the store check nothing (the host's choice). ptxas
// then spills 44 bytes at d = 128 instead of 116. H200, 2026-11-27, three rounds against the kernel with the checks
// (docs/results/2026-11-27-h200-diagonal-first/call3): d = 128 +3-6% (fp16 and bf16, N = 1024, 4096, 16384), d = 64
// +2% at N = 1024 and 0.99-1.01× beyond; the causal kernel unchanged.
template <typename T, int kD, bool kWhole = false>
__global__ void __launch_bounds__(Flash2MmaTraits<kD, DefaultFlags<kD>()>::kThreads,
                                  Flash2MmaTraits<kD, DefaultFlags<kD>()>::kMinBlocksPerSm)
    Flash2MmaKernel(const Flash2MmaParams<T> params) {
  using Traits = Flash2MmaTraits<kD, DefaultFlags<kD>()>;
  // The body below is written for these choices: changing DefaultFlags alone would change Traits (the shared memory
  // asked for, the warp count) under it.
  constexpr unsigned kWrittenFor = kFlagSwizzle | kFlagPipeline | kFlagPInRegisters | kFlagTwoMTiles;
  static_assert((DefaultFlags<kD>() & (kWrittenFor | kFlagLazyRescale)) == kWrittenFor,
                "the shipped kernel swizzles, double-buffers K/V, keeps P̃ in registers, gives a warp 32 rows and "
                "rescales every tile");
  // Q_i's fragments in registers at d = 64; at d = 128 they would need more than 255 registers, so they are
  // re-read from shared memory for every K_j (DefaultFlags).
  constexpr bool kQInRegisters = (DefaultFlags<kD>() & kFlagQInRegisters) != 0;
  constexpr int kM = Traits::kMTiles, kRowsPerWarp = Traits::kRowsPerWarp;
  constexpr int kBr = Traits::kBr, kBc = Traits::kBc, kThreads = Traits::kThreads;
  constexpr int kKSteps = kD / 16;                      // k-steps of S_ij = Q_i K_jᵀ (over d)
  constexpr int kSTiles = kBc / 8;                      // n8 tiles of S_ij per m16 tile
  constexpr int kPVSteps = kBc / 16;                    // k-steps of P̃_ij V_j (over keys)
  constexpr int kOTiles = kD / 8;                       // n8 tiles of O_i per m16 tile
  constexpr int kQSlots = kQInRegisters ? kKSteps : 1;  // a one-slot placeholder when Q_i stays in shared memory

  // Q_i, then two K buffers, then two V buffers (tile j in buffer j mod 2).
  extern __shared__ __align__(1024) unsigned char shared[];  // 1024: see ChunkAddress
  const std::uint32_t shared_q = SharedAddress(shared);
  const std::uint32_t shared_k = shared_q + Traits::kQBytes;
  const std::uint32_t shared_v = shared_k + 2 * Traits::kKVTileBytes;
  // The XOR addressing (ChunkAddress) needs the 1024-byte alignment asked for above; stop loudly if not given.
  if (shared_q % 1024 != 0) __trap();

  const int thread = threadIdx.x, warp = thread / 32, lane = thread % 32;
  const int n = params.n;
  const bool causal = !kWhole && params.causal;
  static_assert(kBr % kBc == 0, "N a multiple of B_r is one of B_c");
  const int q_tile = causal ? static_cast<int>(gridDim.x - 1 - blockIdx.x) : static_cast<int>(blockIdx.x);
  const int q_row0 = q_tile * kBr;                     // first row of Q_i
  const int warp_row0 = q_row0 + warp * kRowsPerWarp;  // first row this warp owns
  const std::size_t head = static_cast<std::size_t>(blockIdx.y) * n * kD;
  const T* q_head = params.q + head;
  const T* k_head = params.k + head;
  const T* v_head = params.v + head;

  // T_c for this Q tile: causal rows never look past their own index, so tiles beyond the diagonal are skipped.
  const int last_key = causal ? min(n, q_row0 + kBr) - 1 : n - 1;
  const int kv_tiles = last_key / kBc + 1;

  // Q_i, K_0, V_0 in one cp.async group.
  LoadTileAsync<kD, kBr, kThreads, true, kWhole>(shared_q, q_head + static_cast<std::size_t>(q_row0) * kD, n - q_row0,
                                                 thread);
  LoadTileAsync<kD, kBc, kThreads, true, kWhole>(shared_k, k_head, n, thread);
  LoadTileAsync<kD, kBc, kThreads, true, kWhole>(shared_v, v_head, n, thread);
  CopyAsyncCommit();

  // Per-lane base addresses of the ldmatrix operands (row within a 16-row group, chunk within a chunk pair);
  // every such row index is ≡ lane (mod 8), which is what the swizzle keys on.
  constexpr int kRowBytes = kD * 2;
  const int lane_mod8 = lane % 8;
  // Q_i (A operand): lanes 0-15 rows 0-15 at chunk 2k, lanes 16-31 the same rows at chunk 2k+1.
  const int a_row = lane % 16, a_chunk = lane / 16;
  const std::uint32_t q_lane =
      shared_q + (warp * kRowsPerWarp + a_row) * kRowBytes + LaneChunkBytes<true>(a_chunk, lane_mod8);
  // K_j (B operand of S): lanes 0-7 keys 0-7 chunk 2k, 8-15 keys 0-7 chunk 2k+1, 16-23 keys 8-15 chunk 2k,
  // 24-31 keys 8-15 chunk 2k+1 → registers {b0, b1} of key tile 0, {b0, b1} of key tile 1.
  const int k_row = (lane / 16) * 8 + lane % 8, k_chunk = (lane / 8) % 2;
  const std::uint32_t k_lane = shared_k + k_row * kRowBytes + LaneChunkBytes<true>(k_chunk, lane_mod8);
  // V_j (B operand of P̃V, transposed): lanes 0-7 keys 0-7 chunk 2u, 8-15 keys 8-15 chunk 2u, 16-23 keys 0-7
  // chunk 2u+1, 24-31 keys 8-15 chunk 2u+1 → {b0, b1} of d tile 2u, {b0, b1} of d tile 2u+1.
  const int v_row = lane % 16, v_chunk = lane / 16;
  const std::uint32_t v_lane = shared_v + v_row * kRowBytes + LaneChunkBytes<true>(v_chunk, lane_mod8);

  std::uint32_t q_fragment[kM][kQSlots][4];
  float o_acc[kM][kOTiles][4];
#pragma unroll
  for (int mi = 0; mi < kM; ++mi)
#pragma unroll
    for (int t = 0; t < kOTiles; ++t) o_acc[mi][t][0] = o_acc[mi][t][1] = o_acc[mi][t][2] = o_acc[mi][t][3] = 0.0f;
  // Rows g and g+8 of each m16 tile: running max m_i (raw score units) and this lane's part of ℓ_i
  // (the quad's four partial sums are added once, at the end: α rescales all four alike).
  float row_max[kM][2], row_sum[kM][2];
#pragma unroll
  for (int mi = 0; mi < kM; ++mi) {
    row_max[mi][0] = row_max[mi][1] = -INFINITY;
    row_sum[mi][0] = row_sum[mi][1] = 0.0f;
  }
  const float scale_log2 = params.scale_log2;
  const int g = lane / 4, c = lane % 4;
  const bool warp_has_rows = kWhole || warp_row0 < n;

  for (int j = 0; j < kv_tiles; ++j) {
    const int stage = j & 1;
    const int kv_col0 = j * kBc;
    CopyAsyncWaitAll();
    // K_j, V_j (and Q_i at j = 0) copied by every thread are visible to all; this barrier also means every warp
    // finished tile j−1, so its buffer can take tile j+1, copied while tile j is computed.
    __syncthreads();
    if (j + 1 < kv_tiles) {
      const int next_col0 = kv_col0 + kBc;
      const int next = (j + 1) & 1;
      LoadTileAsync<kD, kBc, kThreads, true, kWhole>(shared_k + next * Traits::kKVTileBytes,
                                                     k_head + static_cast<std::size_t>(next_col0) * kD, n - next_col0,
                                                     thread);
      LoadTileAsync<kD, kBc, kThreads, true, kWhole>(shared_v + next * Traits::kKVTileBytes,
                                                     v_head + static_cast<std::size_t>(next_col0) * kD, n - next_col0,
                                                     thread);
      CopyAsyncCommit();
    }
    if constexpr (kQInRegisters) {
      if (j == 0) {
#pragma unroll
        for (int mi = 0; mi < kM; ++mi)
#pragma unroll
          for (int ks = 0; ks < kKSteps; ++ks)
            LoadMatrixX4(q_fragment[mi][ks], ChunkAddress<true>(q_lane, ks * 32) + mi * 16 * kRowBytes);
      }
    }
    // A warp whose rows are all padding, or (causal) all before this tile's first key, has nothing to add.
    if (!warp_has_rows || (causal && kv_col0 > warp_row0 + kRowsPerWarp - 1)) continue;

    const std::uint32_t stage_k_lane = k_lane + stage * Traits::kKVTileBytes;
    const std::uint32_t stage_v_lane = v_lane + stage * Traits::kKVTileBytes;

    // S_ij = Q_i K_jᵀ for this warp's rows: kM × kSTiles tiles of 16×8, fp32.
    float s[kM][kSTiles][4];
    WarpScores<T, kM, kSTiles, kKSteps, kRowBytes, true, kQInRegisters>(s, q_fragment, q_lane, stage_k_lane);

    if constexpr (!kWhole) MaskScores(s, kv_col0, warp_row0, g, c, n, causal);

    // Online softmax: m_new = max(m_old, rowmax S_ij); α = e^(scale·(m_old − m_new)); P̃_ij = e^(scale·(S_ij − m_new)).
    float max_scaled[kM][2], alpha[kM][2];
    MoveRowMaxima(s, row_max, row_sum, max_scaled, alpha, scale_log2);
    // O_i ← diag(α) O_i.
    RescaleRows(o_acc, alpha);
    ExponentiateScores(s, row_sum, max_scaled, scale_log2);

    // O_i += P̃_ij V_j. The A operand of k-step u (keys 16u..16u+15) is S tiles 2u and 2u+1, repacked in registers.
#pragma unroll
    for (int u = 0; u < kPVSteps; ++u) {
      std::uint32_t p[kM][4];
      PackProbabilities<T>(p, s, u);
      AccumulateOutput<T, kM, kOTiles, kRowBytes, true>(o_acc, p, stage_v_lane, u);
    }
  }

  // O_i = diag(ℓ_i)⁻¹ O_i, written straight from the accumulators (rows ≥ N are padding and never stored).
  if (!warp_has_rows) return;
  T* o_head = params.o + head;
  StoreOutput<T, kD, kWhole>(o_head, o_acc, row_sum, warp_row0, g, c, n);
}

// ---------------------------------------------------------------------------------------------------------
// [SECTION] 4. Host launch
// ---------------------------------------------------------------------------------------------------------

template <typename T>
Flash2MmaParams<T> MakeFlash2MmaParams(const AttentionArgs& args, float scale_log2) {
  return Flash2MmaParams<T>{static_cast<const T*>(args.q),
                            static_cast<const T*>(args.k),
                            static_cast<const T*>(args.v),
                            static_cast<T*>(args.o),
                            args.shape.n,
                            scale_log2,
                            args.shape.causal,
                            0,
                            0,
                            0};
}

// One launch of `kKernel` (the shipped kernel, or an ablation one with the same traits): a block per Q tile and head.
template <auto kKernel, typename Traits, typename T>
cudaError_t LaunchFlash2MmaGrid(const Flash2MmaParams<T>& params, int batch_heads, cudaStream_t stream) {
  // More than 48 KB of dynamic shared memory must be asked for once per kernel.
  static const cudaError_t attribute_status =
      cudaFuncSetAttribute(kKernel, cudaFuncAttributeMaxDynamicSharedMemorySize, Traits::kSharedBytes);
  if (attribute_status != cudaSuccess) return attribute_status;
  const dim3 grid((params.n + Traits::kBr - 1) / Traits::kBr, batch_heads);
  kKernel<<<grid, Traits::kThreads, Traits::kSharedBytes, stream>>>(params);
  return cudaGetLastError();
}

// The shipped kernel for one dtype and d (AttentionArgs::options = 0, already validated by LaunchFlash2Mma).
template <typename T, int kD>
cudaError_t LaunchShippedFlash2Mma(const AttentionArgs& args, float scale_log2) {
  using Traits = Flash2MmaTraits<kD, DefaultFlags<kD>()>;
  const Flash2MmaParams<T> params = MakeFlash2MmaParams<T>(args, scale_log2);
  const int batch_heads = args.shape.batch * args.shape.heads;
  if (!args.shape.causal && args.shape.n % Traits::kBr == 0)
    return LaunchFlash2MmaGrid<&Flash2MmaKernel<T, kD, true>, Traits>(params, batch_heads, args.stream);
  return LaunchFlash2MmaGrid<&Flash2MmaKernel<T, kD>, Traits>(params, batch_heads, args.stream);
}

}  // namespace flashviz::cuda::mma_detail
