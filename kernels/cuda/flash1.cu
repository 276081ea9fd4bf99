// flash1: FlashAttention's Algorithm 1 as written: K/V outer loop, O_i, ℓ_i, m_i through HBM every iteration.
//
// Changes versus tiled: the three stages fuse. For each K/V tile j (the outer loop: one launch per j, since
// every launch must see the O_i the previous one wrote) each block loads K_j, V_j and one Q tile i into shared
// memory and computes, on chip, S_ij = scale·Q_i K_jᵀ, m̃_ij = rowmax(S_ij), P̃_ij = exp(S_ij − m̃_ij),
// ℓ̃_ij = rowsum(P̃_ij), then m_new, ℓ_new and O_i ← diag(ℓ_new)⁻¹(diag(ℓ_i) e^(m_i − m_new) O_i +
// e^(m̃_ij − m_new) P̃_ij V_j) with O_i, ℓ_i, m_i read from and written back to HBM (lines 9–13 of the algorithm).
// S and P never reach HBM; the price is O's round trip per K/V tile: T_c·B·H·N·d floats each way. One thread
// per query row (B_r = 64 threads a block), as the course assignment's starting code maps it.
// Mirrors: FlashAttention (Dao et al., 2022), Algorithm 1, and the course assignment (CS542200 HW4: the same loop
// order and tile sizes from M); both in docs/sources.md.
//
// Measured: kernels/README.md's progression table, from the CSVs of docs/results/ (its index says which run).
#include <cmath>

#include "kernels/cuda/device_common.cuh"
#include "kernels/cuda/tile_sizes.h"
#include "kernels/cuda/variants.h"

namespace flashviz::cuda {
namespace {

constexpr int kBr = tiles::kFlash1Br;  // rows of Q_i, one thread each
constexpr int kBc = tiles::kFlash1Bc;  // rows of K_j, V_j

// Line 2 of Algorithm 1: O = 0, ℓ = 0, m = −∞ in HBM.
__global__ void Flash1Init(float* __restrict__ o, float* __restrict__ l, float* __restrict__ m, std::int64_t rows,
                           int d) {
  // @phase init
  const std::int64_t stride = static_cast<std::int64_t>(gridDim.x) * blockDim.x;
  for (std::int64_t i = static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < rows * d; i += stride) {
    o[i] = 0.0f;
    if (i < rows) {
      l[i] = 0.0f;
      m[i] = -INFINITY;
    }
  }
  // @phase end
}

template <int D>
constexpr int SharedBytes() {
  return (kBr * (D + 4) + 2 * kBc * D) * static_cast<int>(sizeof(float));
}

// Lines 7–13 for one K/V tile j and one Q tile i (blockIdx.x walks the Q tiles of every head).
template <int D>
__global__ void __launch_bounds__(kBr)
    Flash1Step(const float* __restrict__ q, const float* __restrict__ k, const float* __restrict__ v,
               float* __restrict__ o, float* __restrict__ l_hbm, float* __restrict__ m_hbm, int n, int first_tile,
               int tiles, int j, float scale, bool causal) {
  constexpr int kQStride = D + 4;  // a thread reads its own row 16 bytes at a time; the pad spreads the rows
                                   // of 8 neighbouring threads over all 32 banks
  extern __shared__ float4 shared4[];
  float* q_tile = reinterpret_cast<float*>(shared4);  // Q_i: B_r × d (padded)
  float* k_tile = q_tile + kBr * kQStride;             // K_j: B_c × d
  float* v_tile = k_tile + kBc * D;                    // V_j: B_c × d

  const std::int64_t head = blockIdx.x / tiles;
  const int i = first_tile + static_cast<int>(blockIdx.x % tiles);
  const int row0 = i * kBr, col0 = j * kBc;
  const int tid = threadIdx.x;
  const float* q_head = q + head * n * D;
  const float* k_head = k + head * n * D;
  const float* v_head = v + head * n * D;

  // Load K_j, V_j (line 7) and Q_i (line 9), 16 bytes a thread at a time, coalesced; rows past N are zeros.
  constexpr int kChunks = D / 4;
  // @phase load_kv
  for (int idx = tid; idx < kBc * kChunks; idx += kBr) {
    const int r = idx / kChunks, c4 = idx % kChunks;
    const bool valid = col0 + r < n;
    const std::int64_t offset = static_cast<std::int64_t>(col0 + r) * D + 4 * c4;
    reinterpret_cast<float4*>(k_tile)[idx] = valid ? *reinterpret_cast<const float4*>(k_head + offset) : float4{};
    reinterpret_cast<float4*>(v_tile)[idx] = valid ? *reinterpret_cast<const float4*>(v_head + offset) : float4{};
  }
  // @phase load_q
  for (int idx = tid; idx < kBr * kChunks; idx += kBr) {
    const int r = idx / kChunks, c4 = idx % kChunks;
    const bool valid = row0 + r < n;
    *reinterpret_cast<float4*>(q_tile + r * kQStride + 4 * c4) =
        valid ? *reinterpret_cast<const float4*>(q_head + static_cast<std::int64_t>(row0 + r) * D + 4 * c4)
              : float4{};
  }
  __syncthreads();  // Q_i, K_j and V_j are in shared memory for every thread (the only barrier: rows are independent)

  const int row = row0 + tid;
  if (row >= n) return;

  // @phase scores
  // Line 10: this row of S_ij, s[c] = scale · Q_i[row]·K_j[c]; K_j is read by all threads at once (broadcast).
  float s[kBc] = {};
#pragma unroll
  for (int c4 = 0; c4 < kChunks; ++c4) {
    const float4 qv = *reinterpret_cast<const float4*>(q_tile + tid * kQStride + 4 * c4);
#pragma unroll
    for (int c = 0; c < kBc; ++c) {
      const float4 kv = *reinterpret_cast<const float4*>(k_tile + c * D + 4 * c4);
      s[c] += qv.x * kv.x + qv.y * kv.y + qv.z * kv.z + qv.w * kv.w;
    }
  }
  // @phase rowmax
  // Line 11: m̃_ij, P̃_ij, ℓ̃_ij. Masked keys (past N; after the query when causal) are −∞.
  float m_tile = -INFINITY;
#pragma unroll
  for (int c = 0; c < kBc; ++c) {
    const int col = col0 + c;
    s[c] = (col < n && !(causal && col > row)) ? s[c] * scale : -INFINITY;
    m_tile = fmaxf(m_tile, s[c]);
  }
  if (m_tile == -INFINITY) return;  // every key of K_j is masked for this row: O_i, ℓ_i, m_i stay as they are
  // @phase exp rowsum
  float l_tile = 0.0f;
#pragma unroll
  for (int c = 0; c < kBc; ++c) {
    s[c] = expf(s[c] - m_tile);  // P̃_ij
    l_tile += s[c];
  }
  // @phase update_stats
  // Line 12: m_new = max(m_i, m̃_ij), ℓ_new = e^(m_i − m_new) ℓ_i + e^(m̃_ij − m_new) ℓ̃_ij, from m_i, ℓ_i in HBM.
  const std::int64_t stat = head * n + row;
  const float m_old = m_hbm[stat], l_old = l_hbm[stat];
  const float m_new = fmaxf(m_old, m_tile);
  const float old_weight = expf(m_old - m_new) * l_old;  // diag(ℓ_i) e^(m_i − m_new); 0 on the first tile
  const float tile_weight = expf(m_tile - m_new);
  const float l_new = old_weight + tile_weight * l_tile;
  const float inv_l_new = 1.0f / l_new;
  // @phase update_o
  // Line 13: O_i ← diag(ℓ_new)⁻¹ (diag(ℓ_i) e^(m_i − m_new) O_i + e^(m̃_ij − m_new) P̃_ij V_j), 4 columns at a time,
  // O_i read from HBM and written back.
  float* o_row = o + stat * D;
#pragma unroll
  for (int c4 = 0; c4 < kChunks; ++c4) {
    float4 pv{};
#pragma unroll
    for (int c = 0; c < kBc; ++c) {
      const float4 vv = *reinterpret_cast<const float4*>(v_tile + c * D + 4 * c4);  // broadcast
      pv.x += s[c] * vv.x;
      pv.y += s[c] * vv.y;
      pv.z += s[c] * vv.z;
      pv.w += s[c] * vv.w;
    }
    const float4 old = *reinterpret_cast<const float4*>(o_row + 4 * c4);
    float4 updated;
    updated.x = (old_weight * old.x + tile_weight * pv.x) * inv_l_new;
    updated.y = (old_weight * old.y + tile_weight * pv.y) * inv_l_new;
    updated.z = (old_weight * old.z + tile_weight * pv.z) * inv_l_new;
    updated.w = (old_weight * old.w + tile_weight * pv.w) * inv_l_new;
    *reinterpret_cast<float4*>(o_row + 4 * c4) = updated;
  }
  // @phase write_back
  // Line 14: ℓ_i ← ℓ_new, m_i ← m_new.
  l_hbm[stat] = l_new;
  m_hbm[stat] = m_new;
  // @phase end
}

template <int D>
cudaError_t LaunchFlash1ForD(const AttentionArgs& args) {
  const AttentionShape& shape = args.shape;
  const std::int64_t heads = shape.Heads();
  auto* o = static_cast<float*>(args.o);
  float* l = static_cast<float*>(args.workspace);
  float* m = l + heads * shape.n;
  Flash1Init<<<1024, 256, 0, args.stream>>>(o, l, m, heads * shape.n, D);
  if (const cudaError_t error = cudaGetLastError(); error != cudaSuccess) return error;

  constexpr int kShared = SharedBytes<D>();
  if (const cudaError_t error = device::AllowSharedMemory(Flash1Step<D>, kShared); error != cudaSuccess) return error;
  const int tiles_r = device::CeilDiv(shape.n, kBr), tiles_c = device::CeilDiv(shape.n, kBc);
  for (int j = 0; j < tiles_c; ++j) {  // line 6: the outer loop over K/V tiles, one launch each
    // Causal: Q tiles whose rows all precede K_j's first key get nothing from it; launch only the others.
    const int first_tile = shape.causal ? (j * kBc) / kBr : 0;
    const int tiles = tiles_r - first_tile;
    Flash1Step<D><<<static_cast<unsigned>(heads * tiles), kBr, kShared, args.stream>>>(
        static_cast<const float*>(args.q), static_cast<const float*>(args.k), static_cast<const float*>(args.v), o,
        l, m, shape.n, first_tile, tiles, j, shape.scale, shape.causal);
    if (const cudaError_t error = cudaGetLastError(); error != cudaSuccess) return error;
  }
  return cudaSuccess;
}

}  // namespace

std::size_t Flash1WorkspaceBytes(const AttentionShape& shape, DType /*dtype*/) {
  return 2 * static_cast<std::size_t>(shape.Heads()) * shape.n * sizeof(float);  // ℓ and m
}

cudaError_t LaunchFlash1(const AttentionArgs& args) {
  if (const cudaError_t invalid = CheckArgs("flash1", args); invalid != cudaSuccess) return invalid;
  switch (args.shape.d) {
    case 32: return LaunchFlash1ForD<32>(args);
    case 64: return LaunchFlash1ForD<64>(args);
    case 128: return LaunchFlash1ForD<128>(args);
    default: return cudaErrorInvalidValue;
  }
}

}  // namespace flashviz::cuda
