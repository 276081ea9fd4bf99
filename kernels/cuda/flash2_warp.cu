// flash2_warp: query rows shared by the lanes of a warp, S_ij and P̃_ij V_j register-blocked like a GEMM.
//
// Changes versus flash2_row (same Q-outer algorithm, a different mapping of it onto threads):
//   1. Each query row is shared by 16 lanes (half a warp); each thread computes a TM × TN block of S_ij
//      (8 × 4 at d = 64: 8 rows, 4 keys) and owns a TM × TD block of O_i (8 rows × 4 columns), so every 16-byte
//      value read from shared memory feeds 8 to 32 FMAs instead of 4: a GEMM micro-kernel, twice per tile.
//   2. The row max of S_ij is reduced across those 16 lanes with __shfl_xor_sync (4 steps, no shared memory, no
//      barrier); the row sum ℓ_i stays a per-thread partial until the very end (one reduction per row in total).
//   3. Shared-memory layouts chosen so the 16-byte loads never conflict: Q_i and K_j rows padded to d + 4 floats
//      (an odd number of 16-byte chunks), a thread's rows interleaved with its neighbour half-warp's, P̃_ij rows
//      padded to B_c + 16 floats.
//   4. cp.async copies of K_{j+1} (issued as soon as S_ij is done) and V_{j+1} (as soon as P̃_ij V_j is done) run
//      while the arithmetic on tile j goes on.
//   5. exp2 with log2 e folded into the score scale: each P̃ element is one FFMA and one MUFU.EX2.
// P̃_ij goes through shared memory: the thread that computes P̃[r][c] is not the one that needs it for O[r][:].
// Mirrors: FlashAttention-Kernels' final kernel (online_warp: warp-shuffle reductions replace shared-memory
// trees) and the naive FlashAttention V1 notes (__shfl reductions over a row), both in docs/sources.md; the
// register blocking of SIMT GEMM micro-kernels (CUTLASS, llm.c).
//
// Measured: kernels/README.md's progression table, from the CSVs of docs/results/ (its index says which run).
#include <cmath>

#include "kernels/cuda/device_common.cuh"
#include "kernels/cuda/tile_sizes.h"
#include "kernels/cuda/variants.h"

namespace flashviz::cuda {
namespace {

constexpr unsigned kFullMask = 0xffffffffu;

// The tile geometry, all compile-time. Thread t: column group cg = t % 16 (the lane within its half-warp),
// row group rg = t / 16 (two per warp, adjacent). Its rows: a·16 + rg (a < TM). Its keys: cg + 16·b (b < TN).
// Its O columns: g·16·VW + cg·VW + e (g < TG, e < VW).
template <int D, int BR, int BC>
struct Geometry {
  static constexpr int kThreads = tiles::kFlash2WarpThreads;
  static constexpr int kColGroups = 16;
  static constexpr int kRowGroups = kThreads / kColGroups;
  static constexpr int TM = BR / kRowGroups;
  static constexpr int TN = BC / kColGroups;
  static constexpr int VW = D >= 64 ? 4 : 2;         // O columns per vector load of V (float4 or float2)
  static constexpr int TG = D / (kColGroups * VW);    // vector groups of O columns per thread
  static constexpr int kQStride = D + 4;  // (d + 4)/4 is odd: 8 consecutive rows hit 8 different 16-byte bank groups
  static constexpr int kKStride = D + 4;
  static constexpr int kVStride = D;      // V rows are read whole by the 16 lanes of a half-warp: no pad needed
  static constexpr int kPStride = BC + 16;  // rows r and r + 1 (the two half-warps) 16 banks apart
  static constexpr int kSharedFloats = BR * kQStride + BC * kKStride + BC * kVStride + BR * kPStride;
  static constexpr int kSharedBytes = kSharedFloats * static_cast<int>(sizeof(float));
  // Two blocks share a multiprocessor when their shared memory fits twice (227 KB, 1 KB reserved per block).
  static constexpr int kMinBlocks = 2 * (kSharedBytes + 1024) <= 227 * 1024 ? 2 : 1;
  static_assert(BR % kRowGroups == 0 && BC % kColGroups == 0 && D % (kColGroups * VW) == 0, "tile shape");
};

template <int VW>
struct VectorOf;
template <>
struct VectorOf<4> {
  using Type = float4;
};
template <>
struct VectorOf<2> {
  using Type = float2;
};

__device__ __forceinline__ float Lane(const float4& v, int e) {
  return e == 0 ? v.x : e == 1 ? v.y : e == 2 ? v.z : v.w;
}
__device__ __forceinline__ float Lane(const float2& v, int e) { return e == 0 ? v.x : v.y; }

// Copies `rows` rows of a (B·H, N, D) tensor, starting at `first_row`, into a shared tile of row stride `stride`
// with 16-byte cp.async copies spread over the block; rows past N become zeros.
template <int D, int kThreads>
__device__ __forceinline__ void CopyRows(float* tile, int stride, const float* head_base, int first_row, int rows,
                                         int n) {
  constexpr int kChunks = D / 4;
  for (int idx = threadIdx.x; idx < rows * kChunks; idx += kThreads) {
    const int r = idx / kChunks, c4 = idx % kChunks;
    const bool valid = first_row + r < n;
    const float* source = valid ? head_base + static_cast<std::int64_t>(first_row + r) * D + 4 * c4 : head_base;
    device::CpAsync16(tile + r * stride + 4 * c4, source, valid);
  }
}

template <int D, int BR, int BC>
__global__ void __launch_bounds__(tiles::kFlash2WarpThreads, (Geometry<D, BR, BC>::kMinBlocks))
    Flash2Warp(const float* __restrict__ q, const float* __restrict__ k, const float* __restrict__ v,
               float* __restrict__ o, int n, int tiles_r, float scale_log2, bool causal) {
  using G = Geometry<D, BR, BC>;
  constexpr int TM = G::TM, TN = G::TN, VW = G::VW, TG = G::TG;
  using Vec = typename VectorOf<VW>::Type;
  extern __shared__ float4 shared4[];
  float* q_tile = reinterpret_cast<float*>(shared4);  // Q_i   BR × (D + 4)
  float* k_tile = q_tile + BR * G::kQStride;           // K_j   BC × (D + 4)
  float* v_tile = k_tile + BC * G::kKStride;           // V_j   BC × D
  float* p_tile = v_tile + BC * G::kVStride;           // P̃_ij  BR × (BC + 16)

  const int tid = threadIdx.x;
  const int cg = tid % G::kColGroups;
  const int rg = tid / G::kColGroups;
  const std::int64_t head = blockIdx.x / tiles_r;
  const int tile = static_cast<int>(blockIdx.x % tiles_r);
  const int i = causal ? tiles_r - 1 - tile : tile;  // causal: the longest rows start first
  const int row0 = i * BR;
  const float* q_head = q + head * n * D;
  const float* k_head = k + head * n * D;
  const float* v_head = v + head * n * D;
  const int last_row = min(n, row0 + BR) - 1;
  const int tiles_c = causal ? last_row / BC + 1 : device::CeilDiv(n, BC);

  // Two groups of copies in flight from here on: {Q_i, K_0} then {V_0}; later {K_{j+1}} and {V_{j+1}}.
  CopyRows<D, G::kThreads>(q_tile, G::kQStride, q_head, row0, BR, n);
  CopyRows<D, G::kThreads>(k_tile, G::kKStride, k_head, 0, BC, n);
  device::CpAsyncCommit();
  CopyRows<D, G::kThreads>(v_tile, G::kVStride, v_head, 0, BC, n);
  device::CpAsyncCommit();

  float o_acc[TM][TG * VW] = {};
  float m_run[TM], l_run[TM];  // m in log2 units (scores × scale·log2 e); ℓ: this thread's partial row sum
#pragma unroll
  for (int a = 0; a < TM; ++a) {
    m_run[a] = -INFINITY;
    l_run[a] = 0.0f;
  }

  for (int j = 0; j < tiles_c; ++j) {
    const int col0 = j * BC;
    device::CpAsyncWait<1>();  // this thread's copies of K_j (and Q_i) have landed; V_j may still be in flight
    __syncthreads();           // ... and every other thread's

    // S_ij = Q_i K_jᵀ: a TM × TN block per thread, d/4 steps of one 16-byte load per row and per key.
    float s[TM][TN] = {};
#pragma unroll
    for (int c4 = 0; c4 < D / 4; ++c4) {
      float4 kv[TN];
#pragma unroll
      for (int b = 0; b < TN; ++b)
        kv[b] = *reinterpret_cast<const float4*>(k_tile + (cg + 16 * b) * G::kKStride + 4 * c4);
#pragma unroll
      for (int a = 0; a < TM; ++a) {
        const float4 qv = *reinterpret_cast<const float4*>(q_tile + (a * 16 + rg) * G::kQStride + 4 * c4);
#pragma unroll
        for (int b = 0; b < TN; ++b) {
          s[a][b] = fmaf(qv.x, kv[b].x, s[a][b]);
          s[a][b] = fmaf(qv.y, kv[b].y, s[a][b]);
          s[a][b] = fmaf(qv.z, kv[b].z, s[a][b]);
          s[a][b] = fmaf(qv.w, kv[b].w, s[a][b]);
        }
      }
    }
    __syncthreads();  // every thread has finished reading K_j: its buffer may take K_{j+1}
    if (j + 1 < tiles_c) CopyRows<D, G::kThreads>(k_tile, G::kKStride, k_head, col0 + BC, BC, n);
    device::CpAsyncCommit();  // (empty on the last tile: keeps the wait counts the same every iteration)

    // Online softmax in base 2. Keys past N, and after the query under causal masking, are −∞.
    const bool needs_mask = col0 + BC > n || (causal && col0 + BC - 1 > row0);
#pragma unroll
    for (int a = 0; a < TM; ++a) {
      const int row = row0 + a * 16 + rg;
      float tile_max = -INFINITY;
#pragma unroll
      for (int b = 0; b < TN; ++b) {
        const int col = col0 + cg + 16 * b;
        float x = s[a][b] * scale_log2;
        if (needs_mask && (col >= n || (causal && col > row))) x = -INFINITY;
        s[a][b] = x;
        tile_max = fmaxf(tile_max, x);
      }
      // The 16 lanes of this row agree on its max (xor offsets below 16 stay within the half-warp).
#pragma unroll
      for (int offset = 8; offset > 0; offset /= 2)
        tile_max = fmaxf(tile_max, __shfl_xor_sync(kFullMask, tile_max, offset));
      const float m_new = fmaxf(m_run[a], tile_max);
      const float m_use = m_new == -INFINITY ? 0.0f : m_new;  // a row with no unmasked key yet: 2^(−∞ − 0) = 0
      const float alpha = device::FastExp2(m_run[a] - m_use);
      float row_sum = 0.0f;
#pragma unroll
      for (int b = 0; b < TN; ++b) {
        const float p = device::FastExp2(s[a][b] - m_use);
        row_sum += p;
        p_tile[(a * 16 + rg) * G::kPStride + cg + 16 * b] = p;
      }
      l_run[a] = alpha * l_run[a] + row_sum;
      m_run[a] = m_new;
#pragma unroll
      for (int e = 0; e < TG * VW; ++e) o_acc[a][e] *= alpha;
    }
    device::CpAsyncWait<1>();  // V_j has landed (only K_{j+1} may still be in flight)
    __syncthreads();           // V_j and every thread's P̃_ij are visible

    // O_i += P̃_ij V_j: per 4 keys, TM 16-byte loads of P̃ and 4·TG loads of V feed 4·TM·TG·VW FMAs.
#pragma unroll
    for (int c4 = 0; c4 < BC / 4; ++c4) {
      float4 pv[TM];
#pragma unroll
      for (int a = 0; a < TM; ++a)
        pv[a] = *reinterpret_cast<const float4*>(p_tile + (a * 16 + rg) * G::kPStride + 4 * c4);
#pragma unroll
      for (int u = 0; u < 4; ++u) {
        const float* v_row = v_tile + (4 * c4 + u) * G::kVStride;
#pragma unroll
        for (int g = 0; g < TG; ++g) {
          const Vec vv = *reinterpret_cast<const Vec*>(v_row + g * 16 * VW + cg * VW);
#pragma unroll
          for (int a = 0; a < TM; ++a) {
            const float p = Lane(pv[a], u);
#pragma unroll
            for (int e = 0; e < VW; ++e) o_acc[a][g * VW + e] = fmaf(p, Lane(vv, e), o_acc[a][g * VW + e]);
          }
        }
      }
    }
    __syncthreads();  // every thread has finished reading V_j and P̃_ij
    if (j + 1 < tiles_c) CopyRows<D, G::kThreads>(v_tile, G::kVStride, v_head, col0 + BC, BC, n);
    device::CpAsyncCommit();
  }

  // O_i = diag(ℓ_i)⁻¹ O_i: the 16 lanes of a row add their partial sums first.
#pragma unroll
  for (int a = 0; a < TM; ++a) {
    float l = l_run[a];
#pragma unroll
    for (int offset = 8; offset > 0; offset /= 2) l += __shfl_xor_sync(kFullMask, l, offset);
    const int row = row0 + a * 16 + rg;
    if (row >= n) continue;
    const float inv_l = 1.0f / l;
    float* o_row = o + (head * n + row) * D;
#pragma unroll
    for (int g = 0; g < TG; ++g) {
      Vec out;
      float* out_lanes = reinterpret_cast<float*>(&out);
#pragma unroll
      for (int e = 0; e < VW; ++e) out_lanes[e] = o_acc[a][g * VW + e] * inv_l;
      *reinterpret_cast<Vec*>(o_row + g * 16 * VW + cg * VW) = out;
    }
  }
}

template <int D, int BR, int BC>
cudaError_t LaunchFlash2WarpTiles(const AttentionArgs& args) {
  using G = Geometry<D, BR, BC>;
  const AttentionShape& shape = args.shape;
  if (const cudaError_t error = device::AllowSharedMemory(Flash2Warp<D, BR, BC>, G::kSharedBytes);
      error != cudaSuccess)
    return error;
  const int tiles_r = device::CeilDiv(shape.n, BR);
  Flash2Warp<D, BR, BC><<<static_cast<unsigned>(shape.Heads() * tiles_r), G::kThreads, G::kSharedBytes, args.stream>>>(
      static_cast<const float*>(args.q), static_cast<const float*>(args.k), static_cast<const float*>(args.v),
      static_cast<float*>(args.o), shape.n, tiles_r, shape.scale * device::kLog2e, shape.causal);
  return cudaGetLastError();
}

}  // namespace

cudaError_t LaunchFlash2Warp(const AttentionArgs& args) {
  if (const cudaError_t invalid = CheckArgs("flash2_warp", args); invalid != cudaSuccess) return invalid;
  if (args.options & ~unsigned{kFlash2WarpSmallTiles}) return cudaErrorInvalidValue;
  const bool small = args.options & kFlash2WarpSmallTiles;
  static_assert(tiles::Flash2WarpBr(64) == 128 && tiles::Flash2WarpBr(128) == 64 && tiles::Flash2WarpBc(64) == 64);
  switch (args.shape.d) {
    case 32: return small ? LaunchFlash2WarpTiles<32, 64, 64>(args) : LaunchFlash2WarpTiles<32, 128, 64>(args);
    case 64: return small ? LaunchFlash2WarpTiles<64, 64, 64>(args) : LaunchFlash2WarpTiles<64, 128, 64>(args);
    case 128: return small ? LaunchFlash2WarpTiles<128, 64, 32>(args) : LaunchFlash2WarpTiles<128, 64, 64>(args);
    default: return cudaErrorInvalidValue;
  }
}

}  // namespace flashviz::cuda
