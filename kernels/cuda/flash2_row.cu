// flash2_row: FlashAttention-2's loop order (Q outer), one thread per query row; m_i, ℓ_i and O_i in registers.
//
// Changes versus flash1: the loops swap. A block owns Q tile i for its whole pass over the K/V tiles j, so the
// running statistics m_i, ℓ_i and the unnormalized O_i stay in the thread's registers: O_i ← e^(m_old − m_new) O_i
// + P̃_ij V_j with P̃_ij = exp(S_ij − m_new), divided by ℓ_i once, at the end. O crosses HBM once (written) instead
// of twice per K/V tile, there is one launch instead of T_c, and the causal mask ends a row's loop at its
// diagonal tile. Still one thread per query row, K_j and V_j read by every thread at once (broadcasts).
// Mirrors: FlashAttention-2 (Dao, 2023), Algorithm 1 (Q outer loop, rescaling deferred to the end); the Vortex
// report's SIMT mapping (the Vortex report: a thread per row of the Q tile, its statistics in registers).
//
// Measured: kernels/README.md's progression table, from the CSVs of docs/results/ (its index says which run).
#include <cmath>

#include "kernels/cuda/device_common.cuh"
#include "kernels/cuda/tile_sizes.h"
#include "kernels/cuda/variants.h"

namespace flashviz::cuda {
namespace {

constexpr int kBr = tiles::kFlash2RowBr;  // rows of Q_i, one thread each
constexpr int kBc = tiles::kFlash2RowBc;  // rows of K_j, V_j

template <int D>
constexpr int SharedBytes() {
  return (kBr * (D + 4) + 2 * kBc * D) * static_cast<int>(sizeof(float));
}

template <int D>
__global__ void __launch_bounds__(kBr)
    Flash2Row(const float* __restrict__ q, const float* __restrict__ k, const float* __restrict__ v,
              float* __restrict__ o, int n, int tiles_r, float scale, bool causal) {
  constexpr int kQStride = D + 4;  // each thread reads its own row 16 bytes at a time: pad against bank conflicts
  constexpr int kChunks = D / 4;
  extern __shared__ float4 shared4[];
  float* q_tile = reinterpret_cast<float*>(shared4);  // Q_i: B_r × d (padded)
  float* k_tile = q_tile + kBr * kQStride;             // K_j: B_c × d
  float* v_tile = k_tile + kBc * D;                    // V_j: B_c × d

  const std::int64_t head = blockIdx.x / tiles_r;
  const int tile = static_cast<int>(blockIdx.x % tiles_r);
  const int i = causal ? tiles_r - 1 - tile : tile;  // causal: the longest rows start first
  const int row0 = i * kBr;
  const int tid = threadIdx.x;
  const int row = row0 + tid;
  const bool active = row < n;  // rows past N load and synchronize with the others but compute nothing
  const float* q_head = q + head * n * D;
  const float* k_head = k + head * n * D;
  const float* v_head = v + head * n * D;

  // @phase load_q
  for (int idx = tid; idx < kBr * kChunks; idx += kBr) {  // Q_i, once
    const int r = idx / kChunks, c4 = idx % kChunks;
    *reinterpret_cast<float4*>(q_tile + r * kQStride + 4 * c4) =
        row0 + r < n ? *reinterpret_cast<const float4*>(q_head + static_cast<std::int64_t>(row0 + r) * D + 4 * c4)
                     : float4{};
  }
  // @phase end
  // Causal: K/V tiles after the block's last row are never needed.
  const int last_row = min(n, row0 + kBr) - 1;
  const int tiles_c = causal ? last_row / kBc + 1 : device::CeilDiv(n, kBc);

  // @phase load_q
  float o_acc[D] = {};  // unnormalized O_i row
  float m = -INFINITY, l = 0.0f;
  // @phase end
  for (int j = 0; j < tiles_c; ++j) {
    const int col0 = j * kBc;
    __syncthreads();  // everyone has finished with K_{j−1}, V_{j−1} before they are overwritten
    // @phase load_kv
    for (int idx = tid; idx < kBc * kChunks; idx += kBr) {
      const int r = idx / kChunks, c4 = idx % kChunks;
      const bool valid = col0 + r < n;
      const std::int64_t offset = static_cast<std::int64_t>(col0 + r) * D + 4 * c4;
      reinterpret_cast<float4*>(k_tile)[idx] = valid ? *reinterpret_cast<const float4*>(k_head + offset) : float4{};
      reinterpret_cast<float4*>(v_tile)[idx] = valid ? *reinterpret_cast<const float4*>(v_head + offset) : float4{};
    }
    __syncthreads();  // K_j, V_j (and, the first time, Q_i) are complete
    if (!active) continue;

    // @phase scores
    // S_ij row: s[c] = scale · Q_i[row]·K_j[c]
    float s[kBc] = {};
#pragma unroll
    for (int c4 = 0; c4 < kChunks; ++c4) {
      const float4 qv = *reinterpret_cast<const float4*>(q_tile + tid * kQStride + 4 * c4);
#pragma unroll
      for (int c = 0; c < kBc; ++c) {
        const float4 kv = *reinterpret_cast<const float4*>(k_tile + c * D + 4 * c4);  // broadcast
        s[c] += qv.x * kv.x + qv.y * kv.y + qv.z * kv.z + qv.w * kv.w;
      }
    }
    // @phase rowmax
    float m_tile = -INFINITY;
#pragma unroll
    for (int c = 0; c < kBc; ++c) {
      const int col = col0 + c;
      s[c] = (col < n && !(causal && col > row)) ? s[c] * scale : -INFINITY;
      m_tile = fmaxf(m_tile, s[c]);
    }
    if (m_tile == -INFINITY) continue;  // every key of this tile is masked for this row: nothing changes
    // m_new = max(m, rowmax S_ij); ℓ ← e^(m − m_new) ℓ + rowsum P̃_ij; O ← e^(m − m_new) O + P̃_ij V_j
    const float m_new = fmaxf(m, m_tile);
    const float alpha = expf(m - m_new);  // 0 on the first tile (m = −∞)
    // @phase exp rowsum
    float row_sum = 0.0f;
#pragma unroll
    for (int c = 0; c < kBc; ++c) {
      s[c] = expf(s[c] - m_new);
      row_sum += s[c];
    }
    // @phase rowsum
    l = alpha * l + row_sum;
    m = m_new;
    // @phase update_o
#pragma unroll
    for (int e = 0; e < D; ++e) o_acc[e] *= alpha;
#pragma unroll
    for (int c = 0; c < kBc; ++c) {
#pragma unroll
      for (int c4 = 0; c4 < kChunks; ++c4) {
        const float4 vv = *reinterpret_cast<const float4*>(v_tile + c * D + 4 * c4);  // broadcast
        o_acc[4 * c4 + 0] += s[c] * vv.x;
        o_acc[4 * c4 + 1] += s[c] * vv.y;
        o_acc[4 * c4 + 2] += s[c] * vv.z;
        o_acc[4 * c4 + 3] += s[c] * vv.w;
      }
    }
  }
  // @phase end
  if (!active) return;
  // @phase finalize
  const float inv_l = 1.0f / l;  // O_i = diag(ℓ_i)⁻¹ O_i, once
  // @phase finalize write_back
  float* o_row = o + (head * n + row) * D;
#pragma unroll
  for (int c4 = 0; c4 < kChunks; ++c4)
    *reinterpret_cast<float4*>(o_row + 4 * c4) = float4{o_acc[4 * c4] * inv_l, o_acc[4 * c4 + 1] * inv_l,
                                                         o_acc[4 * c4 + 2] * inv_l, o_acc[4 * c4 + 3] * inv_l};
  // @phase end
}

template <int D>
cudaError_t LaunchFlash2RowForD(const AttentionArgs& args) {
  const AttentionShape& shape = args.shape;
  constexpr int kShared = SharedBytes<D>();
  if (const cudaError_t error = device::AllowSharedMemory(Flash2Row<D>, kShared); error != cudaSuccess) return error;
  const int tiles_r = device::CeilDiv(shape.n, kBr);
  Flash2Row<D><<<static_cast<unsigned>(shape.Heads() * tiles_r), kBr, kShared, args.stream>>>(
      static_cast<const float*>(args.q), static_cast<const float*>(args.k), static_cast<const float*>(args.v),
      static_cast<float*>(args.o), shape.n, tiles_r, shape.scale, shape.causal);
  return cudaGetLastError();
}

}  // namespace

cudaError_t LaunchFlash2Row(const AttentionArgs& args) {
  if (const cudaError_t invalid = CheckArgs("flash2_row", args); invalid != cudaSuccess) return invalid;
  switch (args.shape.d) {
    case 32: return LaunchFlash2RowForD<32>(args);
    case 64: return LaunchFlash2RowForD<64>(args);
    case 128: return LaunchFlash2RowForD<128>(args);
    default: return cudaErrorInvalidValue;
  }
}

}  // namespace flashviz::cuda
