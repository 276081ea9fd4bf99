// ring_attend: one ring step of one device, FlashAttention-2 with mma.sync m16n8k16 (fp16/bf16 in, fp32 accumulate)
// that CONTINUES the online softmax instead of starting it.
//
// The idea. FlashAttention-2 keeps, per query row i, the running max m_i, the running sum ℓ_i and the unnormalized
// O_i, and folds every K_j/V_j tile in with m_new = max(m_i, rowmax S_ij), α = e^(m_i − m_new),
// ℓ_i ← α ℓ_i + rowsum e^(S_ij − m_new), O_i ← α O_i + e^(S_ij − m_new) V_j. Nothing in that recurrence cares
// whether tile j is on this device or arrived from another one a moment ago: so the ring's merge needs no kernel
// of its own. Per Q tile this kernel reads (m_i, ℓ_i, O_i) from HBM (fp32; ring step 0 starts from −∞, 0, 0),
// streams the tiles of the K/V the device holds at this step through shared memory, and writes (m_i, ℓ_i, O_i)
// back; at the last step it writes O_i/ℓ_i in the input dtype and L_i = m_i + log ℓ_i instead.
//
// What differs from flash2_mma (kernels/cuda/mma/flash2_mma_kernel.cuh, whose tile loader and swizzled
// addressing this reuses, with its shipped warp shape: B_r = 128 rows in 4 warps of 32, B_c = 64, two K/V stages
// with cp.async, P̃_ij kept in registers, Q_i in registers at d = 64):
//   - rows are LOCAL to a device's slice but the causal mask is by GLOBAL index: the Q rows and the held K/V are
//     each one or two runs of consecutive sequence rows ("segments": zigzag holds chunks p and 2P − 1 − p). A Q
//     tile never straddles two segments, and neither does a K/V tile, so inside a tile global = first + offset;
//   - a K/V tile that lies entirely above the diagonal (every key after every row of Q_i) is never loaded; a Q
//     tile that meets no key at a middle ring step leaves its state as it is and returns at once;
//   - the running max is kept in the log2 domain (m2 = scale·log2 e·max s), so the stored m_i = m2·ln 2 is in the
//     paper's units and L_i = m_i + ln ℓ_i; a row that has met no unmasked key keeps m = −∞, ℓ = 0, O = 0 and no
//     −∞ − (−∞) is ever formed (the exponent subtracts 0 for such rows, α is 1 when m did not move).
//
// Measured (4 × H200 through NCCL, 2026-11-26, fp16, d = 128, H = 32; kernels/README.md's ring table): 309-325
// TFLOP/s on one GPU, flash2_mma's class; on four GPUs 3.69× one GPU at N = 65536 without the mask, 3.57× causal with
// the zigzag slices.
#pragma once

#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include <cmath>
#include <cstdint>

#include "kernels/cuda/device_common.cuh"
#include "kernels/cuda/mma/flash2_mma_kernel.cuh"  // LoadTileAsync, ChunkAddress, LaneChunkBytes (the swizzle)

namespace flashviz::cuda::ring_detail {

using device::LoadMatrixX4;
using device::LoadMatrixX4Trans;
using device::MmaM16N8K16;
using device::PackPair;
using device::SharedAddress;
using mma_detail::ChunkAddress;
using mma_detail::LaneChunkBytes;
using mma_detail::LoadTileAsync;

inline constexpr float kLn2 = 0.6931471805599453f;

// One or two runs of consecutive sequence rows stored one after the other in a device's buffer.
struct RingSegments {
  int count = 1;
  int begin[2] = {0, 0};  // global row of each run's first row
  int rows[2] = {0, 0};   // its length (0 for an absent second run)
};

template <typename T>
struct RingAttendParams {
  const T* q;  // [B·H][q_rows][d]
  const T* k;  // [B·H][kv_rows][d], the K/V held at this ring step
  const T* v;
  float* o_state;  // [B·H][q_rows][d] unnormalized O_i, fp32 (read unless first, written unless last)
  float* m_state;  // [B·H][q_rows] m_i (natural units: scale·max s), fp32
  float* l_state;  // [B·H][q_rows] ℓ_i, fp32
  T* o_out;        // last step: [B·H][q_rows][d] O_i/ℓ_i
  float* lse_out;  // last step: [B·H][q_rows] L_i = m_i + ln ℓ_i
  RingSegments q_seg, kv_seg;
  int q_rows, kv_rows;
  int q_tiles0;      // Q tiles of segment 0; grid.x adds those of segment 1
  float scale_log2;  // scale·log2 e
  bool causal, first, last;
};

template <int kD>
struct RingAttendTraits {
  static constexpr int kMTiles = 2;  // m16 tiles per warp: 32 rows a warp, FlashAttention-2's warp shape
  static constexpr int kRowsPerWarp = 16 * kMTiles;
  static constexpr int kBr = 128;  // B_r
  static constexpr int kWarps = kBr / kRowsPerWarp;
  static constexpr int kThreads = kWarps * 32;
  static constexpr int kBc = 64;                   // B_c
  static constexpr bool kQInRegisters = kD == 64;  // flash2_mma's measured choice (d = 128 would spill)
  static constexpr int kQBytes = kBr * kD * 2;
  static constexpr int kKVTileBytes = kBc * kD * 2;
  static constexpr int kSharedBytes = kQBytes + 2 * 2 * kKVTileBytes;  // Q_i; K_j, V_j in two stages each
  static constexpr int kMinBlocksPerSm = 2;
};

// Grid: x = Q tile (segment 0's tiles, then segment 1's; reversed when causal so the tiles with the most keys start
// first), y = batch·head. Warp w owns rows [32w, 32w + 32) of Q_i; a lane holds rows g and g + 8 of each m16 tile.
template <typename T, int kD>
__global__ void __launch_bounds__(RingAttendTraits<kD>::kThreads, RingAttendTraits<kD>::kMinBlocksPerSm)
    RingAttendKernel(const RingAttendParams<T> params) {
  using Traits = RingAttendTraits<kD>;
  constexpr bool kSwizzle = true;
  constexpr int kM = Traits::kMTiles, kRowsPerWarp = Traits::kRowsPerWarp;
  constexpr int kBr = Traits::kBr, kBc = Traits::kBc, kThreads = Traits::kThreads;
  constexpr int kKSteps = kD / 16;    // k-steps of S_ij = Q_i K_jᵀ
  constexpr int kSTiles = kBc / 8;    // n8 tiles of S_ij per m16 tile
  constexpr int kPVSteps = kBc / 16;  // k-steps of P̃_ij V_j
  constexpr int kOTiles = kD / 8;     // n8 tiles of O_i per m16 tile
  constexpr bool kQInRegisters = Traits::kQInRegisters;
  constexpr int kQSlots = kQInRegisters ? kKSteps : 1;

  extern __shared__ __align__(1024) unsigned char shared[];  // 1024: the XOR addressing of ChunkAddress
  const std::uint32_t shared_q = SharedAddress(shared);
  const std::uint32_t shared_k = shared_q + Traits::kQBytes;
  const std::uint32_t shared_v = shared_k + 2 * Traits::kKVTileBytes;
  if (shared_q % 1024 != 0) __trap();

  const int thread = threadIdx.x, warp = thread / 32, lane = thread % 32;
  const int g = lane / 4, c = lane % 4;

  // Q_i: which segment, its local rows (in the device's buffer) and its global rows (in the sequence).
  const int tile = params.causal ? static_cast<int>(gridDim.x - 1 - blockIdx.x) : static_cast<int>(blockIdx.x);
  // (Segment fields are picked with selects, never indexed by a run-time value: that would copy the parameters to
  // local memory.)
  const bool q_second = tile >= params.q_tiles0;
  const int q_tile_in_segment = q_second ? tile - params.q_tiles0 : tile;
  const int q_local0 = (q_second ? params.q_seg.rows[0] : 0) + q_tile_in_segment * kBr;
  const int q_valid = min(kBr, (q_second ? params.q_seg.rows[1] : params.q_seg.rows[0]) - q_tile_in_segment * kBr);
  const int q_global0 = (q_second ? params.q_seg.begin[1] : params.q_seg.begin[0]) + q_tile_in_segment * kBr;
  const int q_global_last = q_global0 + q_valid - 1;

  // T_c per K/V segment: causal rows never look past q_global_last, so tiles beyond it are never loaded.
  auto segment_tiles = [&](int begin, int rows) {
    const int keys = params.causal ? min(rows, q_global_last - begin + 1) : rows;
    return keys > 0 ? (keys + kBc - 1) / kBc : 0;
  };
  const int kv_tiles0 = segment_tiles(params.kv_seg.begin[0], params.kv_seg.rows[0]);
  const int kv_tiles1 = params.kv_seg.count > 1 ? segment_tiles(params.kv_seg.begin[1], params.kv_seg.rows[1]) : 0;
  const int total_tiles = kv_tiles0 + kv_tiles1;
  // A middle ring step with nothing to add (the whole held K/V after Q_i): the state in HBM is already right.
  if (total_tiles == 0 && !params.first && !params.last) return;

  const std::size_t bh = blockIdx.y;
  const T* q_head = params.q + bh * params.q_rows * kD;
  const T* k_head = params.k + bh * params.kv_rows * kD;
  const T* v_head = params.v + bh * params.kv_rows * kD;

  // K/V tile t of this block's list: its segment, first local key row, first global key and valid keys.
  auto tile_keys = [&](int t, int& local0, int& global0, int& valid) {
    const bool second = t >= kv_tiles0;
    const int in_segment = (second ? t - kv_tiles0 : t) * kBc;
    local0 = (second ? params.kv_seg.rows[0] : 0) + in_segment;
    global0 = (second ? params.kv_seg.begin[1] : params.kv_seg.begin[0]) + in_segment;
    valid = min(kBc, (second ? params.kv_seg.rows[1] : params.kv_seg.rows[0]) - in_segment);
  };

  if (total_tiles > 0) {  // Q_i, K_0, V_0 in one cp.async group
    int local0, global0, valid;
    tile_keys(0, local0, global0, valid);
    LoadTileAsync<kD, kBr, kThreads, kSwizzle>(shared_q, q_head + static_cast<std::size_t>(q_local0) * kD, q_valid,
                                               thread);
    LoadTileAsync<kD, kBc, kThreads, kSwizzle>(shared_k, k_head + static_cast<std::size_t>(local0) * kD, valid, thread);
    LoadTileAsync<kD, kBc, kThreads, kSwizzle>(shared_v, v_head + static_cast<std::size_t>(local0) * kD, valid, thread);
    mma_detail::CopyAsyncCommit();
  }

  // The running state of rows g, g + 8 of each m16 tile: m2 = scale·log2 e·max s, this lane's part of ℓ_i (the
  // quad's four parts are added at the end: α rescales them alike) and O_i's accumulators.
  const int warp_row0 = warp * kRowsPerWarp;  // within Q_i
  const bool warp_has_rows = warp_row0 < q_valid;
  float m2[kM][2], row_sum[kM][2];
  float o_acc[kM][kOTiles][4];
  const std::size_t state_row0 = bh * params.q_rows + q_local0;  // Q_i's first row in m, ℓ (× d in O)
#pragma unroll
  for (int mi = 0; mi < kM; ++mi)
#pragma unroll
    for (int r = 0; r < 2; ++r) {
      const int row = warp_row0 + mi * 16 + g + 8 * r;  // within Q_i
      const bool load = !params.first && row < q_valid;
      m2[mi][r] = load ? params.m_state[state_row0 + row] * device::kLog2e : -INFINITY;
      row_sum[mi][r] = load && c == 0 ? params.l_state[state_row0 + row] : 0.0f;
#pragma unroll
      for (int t = 0; t < kOTiles; ++t) {
        float2 o = make_float2(0.0f, 0.0f);
        if (load) o = *reinterpret_cast<const float2*>(params.o_state + (state_row0 + row) * kD + t * 8 + 2 * c);
        o_acc[mi][t][2 * r] = o.x;
        o_acc[mi][t][2 * r + 1] = o.y;
      }
    }

  constexpr int kRowBytes = kD * 2;
  const int lane_mod8 = lane % 8;
  // ldmatrix lane bases, as flash2_mma: Q_i (A) lanes 0-15 rows 0-15 at chunk 2k, 16-31 at chunk 2k+1; K_j (B of S)
  // keys (lane/16)·8 + lane%8 at chunk (lane/8)%2; V_j (B of P̃V, transposed) keys lane%16 at chunk lane/16.
  const int a_row = lane % 16, a_chunk = lane / 16;
  const std::uint32_t q_lane =
      shared_q + (warp_row0 + a_row) * kRowBytes + LaneChunkBytes<kSwizzle>(a_chunk, lane_mod8);
  const int k_row = (lane / 16) * 8 + lane % 8, k_chunk = (lane / 8) % 2;
  const std::uint32_t k_lane = shared_k + k_row * kRowBytes + LaneChunkBytes<kSwizzle>(k_chunk, lane_mod8);
  const int v_row = lane % 16, v_chunk = lane / 16;
  const std::uint32_t v_lane = shared_v + v_row * kRowBytes + LaneChunkBytes<kSwizzle>(v_chunk, lane_mod8);

  std::uint32_t q_fragment[kM][kQSlots][4];
  const float scale_log2 = params.scale_log2;
  const int warp_global0 = q_global0 + warp_row0;

  for (int t = 0; t < total_tiles; ++t) {
    const int stage = t & 1;
    int key_local0, key_global0, key_valid;
    tile_keys(t, key_local0, key_global0, key_valid);
    mma_detail::CopyAsyncWaitAll();
    // K_j, V_j (and Q_i at t = 0) copied by every thread are visible to all; and every warp has finished tile t − 1,
    // so its stage may take tile t + 1.
    __syncthreads();
    if (t + 1 < total_tiles) {
      int next_local0, next_global0, next_valid;
      tile_keys(t + 1, next_local0, next_global0, next_valid);
      const int next = (t + 1) & 1;
      LoadTileAsync<kD, kBc, kThreads, kSwizzle>(shared_k + next * Traits::kKVTileBytes,
                                                 k_head + static_cast<std::size_t>(next_local0) * kD, next_valid,
                                                 thread);
      LoadTileAsync<kD, kBc, kThreads, kSwizzle>(shared_v + next * Traits::kKVTileBytes,
                                                 v_head + static_cast<std::size_t>(next_local0) * kD, next_valid,
                                                 thread);
      mma_detail::CopyAsyncCommit();
    }
    if constexpr (kQInRegisters) {
      if (t == 0) {
#pragma unroll
        for (int mi = 0; mi < kM; ++mi)
#pragma unroll
          for (int ks = 0; ks < kKSteps; ++ks)
            LoadMatrixX4(q_fragment[mi][ks], ChunkAddress<kSwizzle>(q_lane, ks * 32) + mi * 16 * kRowBytes);
      }
    }
    // A warp whose rows are all padding, or (causal) all before this tile's first key, has nothing to add.
    if (!warp_has_rows || (params.causal && key_global0 > warp_global0 + kRowsPerWarp - 1)) continue;

    const std::uint32_t stage_k_lane = k_lane + stage * Traits::kKVTileBytes;
    const std::uint32_t stage_v_lane = v_lane + stage * Traits::kKVTileBytes;

    // S_ij = Q_i K_jᵀ (raw, unscaled), kM × kSTiles tiles of 16×8 in fp32 (flash2_mma's warp step).
    float s[kM][kSTiles][4];
    mma_detail::WarpScores<T, kM, kSTiles, kKSteps, kRowBytes, kSwizzle, kQInRegisters>(s, q_fragment, q_lane,
                                                                                        stage_k_lane);

    // Mask only where needed: keys past the segment's end (zero-filled, not keys), and (causal) a tile that crosses
    // this warp's diagonal, by global indices: key > query is masked.
    const bool crosses_end = key_valid < kBc;
    const bool crosses_diagonal = params.causal && key_global0 + kBc - 1 > warp_global0;
    if (crosses_end || crosses_diagonal) {
#pragma unroll
      for (int mi = 0; mi < kM; ++mi) {
        const int row_a = warp_global0 + mi * 16 + g, row_b = row_a + 8;
#pragma unroll
        for (int st = 0; st < kSTiles; ++st) {
#pragma unroll
          for (int e = 0; e < 2; ++e) {
            const int offset = st * 8 + 2 * c + e;
            const int col = key_global0 + offset;
            const bool out = offset >= key_valid;
            if (out || (params.causal && col > row_a)) s[mi][st][e] = -INFINITY;
            if (out || (params.causal && col > row_b)) s[mi][st][2 + e] = -INFINITY;
          }
        }
      }
    }

    // Online softmax in the log2 domain: m2_new = max(m2, scale·log2 e·rowmax S_ij); α = 2^(m2 − m2_new);
    // P̃_ij = 2^(scale·log2 e·S_ij − m2_new).
    float subtract[kM][2], alpha[kM][2];
#pragma unroll
    for (int mi = 0; mi < kM; ++mi) {
      float tile_max[2] = {-INFINITY, -INFINITY};
#pragma unroll
      for (int st = 0; st < kSTiles; ++st) {
        tile_max[0] = fmaxf(tile_max[0], fmaxf(s[mi][st][0], s[mi][st][1]));
        tile_max[1] = fmaxf(tile_max[1], fmaxf(s[mi][st][2], s[mi][st][3]));
      }
#pragma unroll
      for (int r = 0; r < 2; ++r) {
        // The four lanes of a quad hold the row's B_c columns between them.
        tile_max[r] = fmaxf(tile_max[r], __shfl_xor_sync(0xffffffffu, tile_max[r], 1));
        tile_max[r] = fmaxf(tile_max[r], __shfl_xor_sync(0xffffffffu, tile_max[r], 2));
        const float m2_new = fmaxf(m2[mi][r], tile_max[r] * scale_log2);  // −∞·scale stays −∞ (scale > 0)
        // Both −∞ (no unmasked key yet): α = 1 and the exponent subtracts 0, so no −∞ − (−∞) = NaN appears.
        alpha[mi][r] = m2_new == m2[mi][r] ? 1.0f : device::FastExp2(m2[mi][r] - m2_new);
        subtract[mi][r] = m2_new == -INFINITY ? 0.0f : m2_new;
        m2[mi][r] = m2_new;
        row_sum[mi][r] *= alpha[mi][r];
      }
    }
    mma_detail::RescaleRows(o_acc, alpha);
#pragma unroll
    for (int mi = 0; mi < kM; ++mi)
#pragma unroll
      for (int st = 0; st < kSTiles; ++st)
#pragma unroll
        for (int e = 0; e < 4; ++e) {
          s[mi][st][e] = device::FastExp2(fmaf(s[mi][st][e], scale_log2, -subtract[mi][e / 2]));
          row_sum[mi][e / 2] += s[mi][st][e];
        }

        // O_i += P̃_ij V_j: two S tiles side by side are one A fragment (flash2_mma_kernel.cuh's header says why).
#pragma unroll
    for (int u = 0; u < kPVSteps; ++u) {
      std::uint32_t p[kM][4];
      mma_detail::PackProbabilities<T>(p, s, u);
      mma_detail::AccumulateOutput<T, kM, kOTiles, kRowBytes, kSwizzle>(o_acc, p, stage_v_lane, u);
    }
  }

  // Write back: the state (m_i, ℓ_i, O_i) for the next ring step, or at the last one O_i/ℓ_i and L_i. Rows past
  // Q_i's end are padding and never stored.
  if (!warp_has_rows) return;
#pragma unroll
  for (int mi = 0; mi < kM; ++mi)
#pragma unroll
    for (int r = 0; r < 2; ++r) {
      float sum = row_sum[mi][r];
      sum += __shfl_xor_sync(0xffffffffu, sum, 1);
      sum += __shfl_xor_sync(0xffffffffu, sum, 2);
      const int row = warp_row0 + mi * 16 + g + 8 * r;
      if (row >= q_valid) continue;
      const std::size_t at = state_row0 + row;
      if (params.last) {
        // Every row meets its own key by the last step, so ℓ > 0; a row that somehow did not is written as O = 0,
        // L = −∞ rather than NaN.
        const float inverse = sum > 0 ? 1.0f / sum : 0.0f;
#pragma unroll
        for (int ot = 0; ot < kOTiles; ++ot)
          *reinterpret_cast<std::uint32_t*>(params.o_out + at * kD + ot * 8 + 2 * c) =
              PackPair<T>(o_acc[mi][ot][2 * r] * inverse, o_acc[mi][ot][2 * r + 1] * inverse);
        if (c == 0) params.lse_out[at] = sum > 0 ? m2[mi][r] * kLn2 + logf(sum) : -INFINITY;
      } else {
#pragma unroll
        for (int ot = 0; ot < kOTiles; ++ot)
          *reinterpret_cast<float2*>(params.o_state + at * kD + ot * 8 + 2 * c) =
              make_float2(o_acc[mi][ot][2 * r], o_acc[mi][ot][2 * r + 1]);
        if (c == 0) {
          params.m_state[at] = m2[mi][r] * kLn2;
          params.l_state[at] = sum;
        }
      }
    }
}

}  // namespace flashviz::cuda::ring_detail
