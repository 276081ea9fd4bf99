// flash2_mma's ablation kernels: the shipped kernel (flash2_mma_kernel.cuh) with each step a compile-time switch that
// an AttentionArgs::options bit flips (flash2_mma.h), and two trials kept as switches (the staggered start and
// B_c = 32). Every combination of the six flags is a kernel of its own, so that each step's gain is measured on the
// code that ships with that one step changed (kernels/README.md, "flash2_mma: what each step is worth").
#pragma once

#include <cuda_runtime.h>

#include <cmath>
#include <cstdint>
#include <utility>

#include "kernels/cuda/mma/flash2_mma.h"
#include "kernels/cuda/mma/flash2_mma_kernel.cuh"

namespace flashviz::cuda::mma_detail {

// Flash2MmaKernel (flash2_mma_kernel.cuh) with every step a compile-time switch: kFlags are DefaultFlags<kD>() with the
// options bits' flags flipped (FlagsForOptions), kKeysPerTile B_c. With the default flags and B_c = 64 it is the
// shipped kernel's checking form line for line, but for the stagger's sleep (the shipped whole-tiles form, taken
// without the mask when N is a multiple of 128, also leaves out the bounds and the mask); the tests check that the two
// give the same bits, both forms (the stagger alone runs this one).
// Grid: x = Q tile index (reversed when causal, so the longest rows start first), y = batch·head.
// Warp w owns rows [w·16·kMTiles, (w+1)·16·kMTiles) of Q_i; its m16 tile mi holds rows 16·mi.. of those, and a
// lane holds rows g and g+8 of each m16 tile (g = lane / 4).
template <typename T, int kD, unsigned kFlags, int kKeysPerTile>
__global__ void __launch_bounds__(Flash2MmaTraits<kD, kFlags, kKeysPerTile>::kThreads,
                                  Flash2MmaTraits<kD, kFlags, kKeysPerTile>::kMinBlocksPerSm)
    Flash2MmaAblationKernel(const Flash2MmaParams<T> params) {
  using Traits = Flash2MmaTraits<kD, kFlags, kKeysPerTile>;
  constexpr bool kSwizzle = (kFlags & kFlagSwizzle) != 0;
  constexpr bool kPipeline = Traits::kPipeline;
  constexpr bool kPInRegisters = Traits::kPInRegisters;
  constexpr bool kQInRegisters = (kFlags & kFlagQInRegisters) != 0;
  constexpr bool kLazyRescale = (kFlags & kFlagLazyRescale) != 0;
  constexpr int kM = Traits::kMTiles, kRowsPerWarp = Traits::kRowsPerWarp;
  constexpr int kBr = Traits::kBr, kBc = Traits::kBc, kThreads = Traits::kThreads;
  constexpr int kKSteps = kD / 16;                      // k-steps of S_ij = Q_i K_jᵀ (over d)
  constexpr int kSTiles = kBc / 8;                      // n8 tiles of S_ij per m16 tile
  constexpr int kPVSteps = kBc / 16;                    // k-steps of P̃_ij V_j (over keys)
  constexpr int kOTiles = kD / 8;                       // n8 tiles of O_i per m16 tile
  constexpr int kQSlots = kQInRegisters ? kKSteps : 1;  // a one-slot placeholder when Q_i stays in shared memory

  extern __shared__ __align__(1024) unsigned char shared[];  // 1024: see ChunkAddress
  const std::uint32_t shared_q = SharedAddress(shared);
  const std::uint32_t shared_k = shared_q + Traits::kQBytes;
  const std::uint32_t shared_v = shared_k + (kPipeline ? 2 : 1) * Traits::kKVTileBytes;
  const std::uint32_t shared_p = shared_v + (kPipeline ? 2 : 1) * Traits::kKVTileBytes;
  // The XOR addressing (ChunkAddress) needs the 1024-byte alignment asked for above; stop loudly if not given.
  if (shared_q % 1024 != 0) __trap();

  const int thread = threadIdx.x, warp = thread / 32, lane = thread % 32;
  const int n = params.n;
  const int q_tile = params.causal ? static_cast<int>(gridDim.x - 1 - blockIdx.x) : static_cast<int>(blockIdx.x);
  const int q_row0 = q_tile * kBr;                     // first row of Q_i
  const int warp_row0 = q_row0 + warp * kRowsPerWarp;  // first row this warp owns
  const std::size_t head = static_cast<std::size_t>(blockIdx.y) * n * kD;
  const T* q_head = params.q + head;
  const T* k_head = params.k + head;
  const T* v_head = params.v + head;

  // Stagger (option): the first wave's second block on each multiprocessor starts half a tile late.
  const int linear_block = static_cast<int>(blockIdx.y * gridDim.x + blockIdx.x);
  if (linear_block >= params.stagger_first && linear_block < params.stagger_end) __nanosleep(params.stagger_ns);

  // T_c for this Q tile: causal rows never look past their own index, so tiles beyond the diagonal are skipped.
  const int last_key = params.causal ? min(n, q_row0 + kBr) - 1 : n - 1;
  const int kv_tiles = last_key / kBc + 1;

  // Q_i, K_0, V_0 in one cp.async group.
  LoadTileAsync<kD, kBr, kThreads, kSwizzle>(shared_q, q_head + static_cast<std::size_t>(q_row0) * kD, n - q_row0,
                                             thread);
  LoadTileAsync<kD, kBc, kThreads, kSwizzle>(shared_k, k_head, n, thread);
  LoadTileAsync<kD, kBc, kThreads, kSwizzle>(shared_v, v_head, n, thread);
  CopyAsyncCommit();

  // Per-lane base addresses of the ldmatrix operands (row within a 16-row group, chunk within a chunk pair);
  // every such row index is ≡ lane (mod 8), which is what the swizzle keys on.
  constexpr int kRowBytes = kD * 2, kPRowBytes = kBc * 2;
  const int lane_mod8 = lane % 8;
  // Q_i (A operand): lanes 0-15 rows 0-15 at chunk 2k, lanes 16-31 the same rows at chunk 2k+1.
  const int a_row = lane % 16, a_chunk = lane / 16;
  const std::uint32_t q_lane =
      shared_q + (warp * kRowsPerWarp + a_row) * kRowBytes + LaneChunkBytes<kSwizzle>(a_chunk, lane_mod8);
  // K_j (B operand of S): lanes 0-7 keys 0-7 chunk 2k, 8-15 keys 0-7 chunk 2k+1, 16-23 keys 8-15 chunk 2k,
  // 24-31 keys 8-15 chunk 2k+1 → registers {b0, b1} of key tile 0, {b0, b1} of key tile 1.
  const int k_row = (lane / 16) * 8 + lane % 8, k_chunk = (lane / 8) % 2;
  const std::uint32_t k_lane = shared_k + k_row * kRowBytes + LaneChunkBytes<kSwizzle>(k_chunk, lane_mod8);
  // V_j (B operand of P̃V, transposed): lanes 0-7 keys 0-7 chunk 2u, 8-15 keys 8-15 chunk 2u, 16-23 keys 0-7
  // chunk 2u+1, 24-31 keys 8-15 chunk 2u+1 → {b0, b1} of d tile 2u, {b0, b1} of d tile 2u+1.
  const int v_row = lane % 16, v_chunk = lane / 16;
  const std::uint32_t v_lane = shared_v + v_row * kRowBytes + LaneChunkBytes<kSwizzle>(v_chunk, lane_mod8);
  // P̃_ij through shared memory (option): this warp's kRowsPerWarp × B_c slice, read back like Q_i.
  const std::uint32_t warp_p = shared_p + warp * kRowsPerWarp * kPRowBytes;
  const std::uint32_t p_load_lane = warp_p + a_row * kPRowBytes + LaneChunkBytes<kSwizzle>(a_chunk, lane_mod8);

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
  const bool warp_has_rows = warp_row0 < n;

  for (int j = 0; j < kv_tiles; ++j) {
    const int stage = kPipeline ? (j & 1) : 0;
    const int kv_col0 = j * kBc;
    if constexpr (!kPipeline) {
      if (j > 0) {
        __syncthreads();  // every warp is done with K_{j−1}, V_{j−1}: the one buffer may be overwritten
        LoadTileAsync<kD, kBc, kThreads, kSwizzle>(shared_k, k_head + static_cast<std::size_t>(kv_col0) * kD,
                                                   n - kv_col0, thread);
        LoadTileAsync<kD, kBc, kThreads, kSwizzle>(shared_v, v_head + static_cast<std::size_t>(kv_col0) * kD,
                                                   n - kv_col0, thread);
        CopyAsyncCommit();
      }
    }
    CopyAsyncWaitAll();
    // K_j, V_j (and Q_i at j = 0) copied by every thread are visible to all; with two buffers this barrier
    // also means every warp finished tile j−1, so its buffer can take tile j+1.
    __syncthreads();
    if constexpr (kPipeline) {
      if (j + 1 < kv_tiles) {
        const int next_col0 = kv_col0 + kBc;
        const int next = (j + 1) & 1;
        LoadTileAsync<kD, kBc, kThreads, kSwizzle>(shared_k + next * Traits::kKVTileBytes,
                                                   k_head + static_cast<std::size_t>(next_col0) * kD, n - next_col0,
                                                   thread);
        LoadTileAsync<kD, kBc, kThreads, kSwizzle>(shared_v + next * Traits::kKVTileBytes,
                                                   v_head + static_cast<std::size_t>(next_col0) * kD, n - next_col0,
                                                   thread);
        CopyAsyncCommit();
      }
    }
    if constexpr (kQInRegisters) {
      if (j == 0) {
#pragma unroll
        for (int mi = 0; mi < kM; ++mi)
#pragma unroll
          for (int ks = 0; ks < kKSteps; ++ks)
            LoadMatrixX4(q_fragment[mi][ks], ChunkAddress<kSwizzle>(q_lane, ks * 32) + mi * 16 * kRowBytes);
      }
    }
    // A warp whose rows are all padding, or (causal) all before this tile's first key, has nothing to add.
    if (!warp_has_rows || (params.causal && kv_col0 > warp_row0 + kRowsPerWarp - 1)) continue;

    const std::uint32_t stage_k_lane = k_lane + stage * Traits::kKVTileBytes;
    const std::uint32_t stage_v_lane = v_lane + stage * Traits::kKVTileBytes;

    // S_ij = Q_i K_jᵀ for this warp's rows: kM × kSTiles tiles of 16×8, fp32.
    float s[kM][kSTiles][4];
    WarpScores<T, kM, kSTiles, kKSteps, kRowBytes, kSwizzle, kQInRegisters>(s, q_fragment, q_lane, stage_k_lane);

    MaskScores(s, kv_col0, warp_row0, g, c, n, params.causal);

    // Online softmax: m_new = max(m_old, rowmax S_ij); α = e^(scale·(m_old − m_new)); P̃_ij = e^(scale·(S_ij − m_new)).
    float max_scaled[kM][2], alpha[kM][2];
    const bool any_max_moved = MoveRowMaxima(s, row_max, row_sum, max_scaled, alpha, scale_log2);
    // O_i ← diag(α) O_i. With the lazy rescale the warp skips it when no row's max moved (every α is exactly 1,
    // so the result is bit-identical); after the first few tiles of random data that is most tiles.
    if (!kLazyRescale || __any_sync(0xffffffffu, any_max_moved)) RescaleRows(o_acc, alpha);
    ExponentiateScores(s, row_sum, max_scaled, scale_log2);

    // O_i += P̃_ij V_j. The A operand of k-step u (keys 16u..16u+15) is S tiles 2u and 2u+1, repacked.
    if constexpr (!kPInRegisters) {
      __syncwarp();  // the lanes finished reading last tile's P̃ (ldmatrix below) before it is overwritten
      // Row g, chunk t (cols 8t..8t+7), bytes 4c..4c+3 of the chunk (cols 2c, 2c+1); row g+8 is 8 rows down.
      const std::uint32_t p_store_lane = warp_p + g * kPRowBytes + LaneChunkBytes<kSwizzle>(0, g % 8) + 4 * c;
#pragma unroll
      for (int mi = 0; mi < kM; ++mi)
#pragma unroll
        for (int t = 0; t < kSTiles; ++t) {
          const std::uint32_t top = PackPair<T>(s[mi][t][0], s[mi][t][1]);
          const std::uint32_t bottom = PackPair<T>(s[mi][t][2], s[mi][t][3]);
          const std::uint32_t address = ChunkAddress<kSwizzle>(p_store_lane, t * 16) + mi * 16 * kPRowBytes;
          asm volatile("st.shared.b32 [%0], %1;\n" ::"r"(address), "r"(top));
          asm volatile("st.shared.b32 [%0], %1;\n" ::"r"(address + 8 * kPRowBytes), "r"(bottom));
        }
      __syncwarp();  // P̃ written by all lanes before any lane reads a fragment of it
    }
#pragma unroll
    for (int u = 0; u < kPVSteps; ++u) {
      std::uint32_t p[kM][4];
      if constexpr (kPInRegisters) {
        PackProbabilities<T>(p, s, u);
      } else {
#pragma unroll
        for (int mi = 0; mi < kM; ++mi)
          LoadMatrixX4(p[mi], ChunkAddress<kSwizzle>(p_load_lane, u * 32) + mi * 16 * kPRowBytes);
      }
      AccumulateOutput<T, kM, kOTiles, kRowBytes, kSwizzle>(o_acc, p, stage_v_lane, u);
    }
  }

  // O_i = diag(ℓ_i)⁻¹ O_i, written straight from the accumulators (rows ≥ N are padding and never stored).
  if (!warp_has_rows) return;
  T* o_head = params.o + head;
  StoreOutput<T, kD>(o_head, o_acc, row_sum, warp_row0, g, c, n);
}

// Each options bit flips one flag of the default (so options = 0 is the default, and a bit always means
// "the other choice" for that one decision).
constexpr unsigned FlagsForOptions(unsigned default_flags, unsigned options) {
  unsigned flip = 0;
  if (options & kFlash2MmaNoSwizzle) flip |= kFlagSwizzle;
  if (options & kFlash2MmaNoPipeline) flip |= kFlagPipeline;
  if (options & kFlash2MmaPThroughSmem) flip |= kFlagPInRegisters;
  if (options & kFlash2MmaOtherQPlacement) flip |= kFlagQInRegisters;
  if (options & kFlash2MmaOtherWarpRows) flip |= kFlagTwoMTiles;
  if (options & kFlash2MmaLazyRescale) flip |= kFlagLazyRescale;
  return default_flags ^ flip;  // kFlash2MmaStagger is a launch parameter, not a flag
}

template <typename T, int kD, unsigned kFlags, int kKeysPerTile = 64>
cudaError_t LaunchFlash2MmaFlags(const Flash2MmaParams<T>& params, int batch_heads, cudaStream_t stream) {
  return LaunchFlash2MmaGrid<&Flash2MmaAblationKernel<T, kD, kFlags, kKeysPerTile>,
                             Flash2MmaTraits<kD, kFlags, kKeysPerTile>>(params, batch_heads, stream);
}

template <typename T, int kD, unsigned... kFlags>
cudaError_t LaunchByFlags(unsigned flags, const Flash2MmaParams<T>& params, int batch_heads, cudaStream_t stream,
                          std::integer_sequence<unsigned, kFlags...>) {
  using Launcher = cudaError_t (*)(const Flash2MmaParams<T>&, int, cudaStream_t);
  static constexpr Launcher kTable[] = {&LaunchFlash2MmaFlags<T, kD, kFlags>...};
  return kTable[flags](params, batch_heads, stream);
}

// One dtype and d: the kernel for AttentionArgs::options ≠ 0 (already validated by LaunchFlash2Mma; options = 0 runs
// the shipped kernel, LaunchShippedFlash2Mma).
template <typename T, int kD>
cudaError_t LaunchFlash2MmaAblation(const AttentionArgs& args, float scale_log2) {
  Flash2MmaParams<T> params = MakeFlash2MmaParams<T>(args, scale_log2);
  if (args.options & kFlash2MmaStagger) {
    // The hardware hands the first blocks out one per multiprocessor, then a second one each (2 blocks fit):
    // blocks [SMs, 2·SMs) are the second slots. Half a K/V tile: 4·B_r·B_c·d FLOP at about 2.6 TFLOP/s per
    // multiprocessor (350 TFLOP/s over 132), shared by the two blocks → ≈ 1.6 µs at d = 128, 0.8 µs at d = 64.
    static int multiprocessors = 0;
    if (multiprocessors == 0) {
      int device = 0;
      if (cudaGetDevice(&device) != cudaSuccess ||
          cudaDeviceGetAttribute(&multiprocessors, cudaDevAttrMultiProcessorCount, device) != cudaSuccess)
        return cudaErrorInvalidDevice;
    }
    params.stagger_first = multiprocessors;
    params.stagger_end = 2 * multiprocessors;
    params.stagger_ns = kD == 128 ? 1600u : 800u;
  }
  if (args.options & kFlash2MmaNarrowKvTile)
    return LaunchFlash2MmaFlags<T, kD, DefaultFlags<kD>(), 32>(params, args.shape.batch * args.shape.heads,
                                                               args.stream);
  const unsigned flags = FlagsForOptions(DefaultFlags<kD>(), args.options & kFlash2MmaKernelOptions);
  return LaunchByFlags<T, kD>(flags, params, args.shape.batch * args.shape.heads, args.stream,
                              std::make_integer_sequence<unsigned, 1u << kFlagCount>{});
}

}  // namespace flashviz::cuda::mma_detail
