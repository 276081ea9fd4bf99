// hw4 kernel `tf32x3`: FlashAttention-2's forward pass on the tensor cores in error-compensated TF32.
//
// What it changes versus plain fp32 (attention_fp32_simt.cu): both products, S_ij = Q_i K_jᵀ and P̃_ij V_j, run
// on mma.sync m16n8k8 .tf32 instead of FFMA. One TF32 product rounds its operands to 10 mantissa bits (2^-11
// relative), which on the assignment's inputs moves O by more than 5e-3 (rounding_model_test.cpp shows it);
// so every operand is split a = hi + lo into two TF32 numbers and a·b is computed as lo·hi + hi·lo + hi·hi
// in fp32 accumulators: three tensor-core products for one, about 2^-20 relative error, fp32-class results.
//
// Shape: a block of 4 warps owns B_r = 64 query rows (16 per warp, one m16 tile) and walks the K/V tiles of
// B_c = 64 keys (Q-outer order, FlashAttention-2). Per warp:
//   - Q_i's A fragments (pre-scaled by scale·log2 e, split into hi and lo) stay in registers for the whole loop;
//   - K_j, V_j arrive in shared memory by cp.async, double-buffered (tile j + 1 loads while tile j computes);
//   - S_ij lives in the mma accumulators; m_i, ℓ_i and the rescale of O_i follow the online softmax in base 2;
//   - P̃_ij goes straight from the S accumulators into the A operand of P̃_ij V_j, with no shuffles: the key
//     order inside each 8-key step is relabelled (k position t ↔ key 2t, t + 4 ↔ key 2t + 1) and V's B
//     fragments are read in that same order.
// Shared-memory strides: K rows kD + 8 floats (the float2 fragment reads of a half-warp hit 32 distinct
// banks), V rows kD + 4 (the scalar reads of rows 2t and 2t + 1 by lanes (g, t) hit 32 distinct banks).
//
// Head dimension: kD = 32 or 64 compiled; d == kD with 16-byte-aligned rows takes the cp.async path, any
// other d ≤ 64 is zero-padded to kD (plain loads: zero columns change neither QKᵀ nor the columns of O kept).
// Edge tiles: keys ≥ N get S = −∞ (their K rows are zero-filled), rows ≥ N read Q = 0 and are not stored.
//
// Measured (NVIDIA H200, 2026-11-21, hw4_bench; README.md "hw4 on the GPU" has the table and command):
// 65.1 TFLOP/s at B = 26, N = 32768, d = 64 and 65.8 at B = 52, N = 32768, d = 32 — 1.77× and 1.79× fp32-simt,
// 1.87× and 3.11× PyTorch's fp32 EFFICIENT backend on the same inputs; max |O − float64| under 1.2e-5.
#include "kernels/cuda/hw4/hw4_internal.h"

namespace flashviz::cuda::hw4::detail {
namespace {

constexpr int kWarps = 4;
constexpr int kThreads = kWarps * 32;
constexpr int kBr = 64;  // 16 rows per warp
constexpr int kBc = 64;
static_assert(kBr == kWarps * 16);

template <int kD>
struct Tf32x3Config {
  static constexpr int kStrideK = kD + 8;
  static constexpr int kStrideV = kD + 4;
  static constexpr int kStageFloats = kBc * kStrideK + kBc * kStrideV;
  static constexpr int kSmemBytes = 2 * kStageFloats * 4;  // two stages: K_j, V_j and K_{j+1}, V_{j+1}
  // Blocks per multiprocessor the register budget is set for (__launch_bounds__), by default and with
  // kHw4AltOccupancy: left alone, ptxas takes 232 registers at d = 64 (2 blocks of 128 threads) and 146 at
  // d = 32 (3 blocks); capped at 168 / 128 for one block more it spills 136 / 32 bytes. Measured both ways.
  static constexpr int kDefaultMinBlocks = kD == 64 ? 2 : 3;
  static constexpr int kAltMinBlocks = kD == 64 ? 3 : 4;
};

// Copies K_j, V_j (keys key0 .. key0 + B_c − 1) into one shared-memory stage. Keys ≥ N become zero rows.
template <int kD, bool kVec>
__device__ __forceinline__ void LoadKvTile(const float* __restrict__ k, const float* __restrict__ v, int n, int d,
                                           int key0, float* ks, float* vs) {
  using C = Tf32x3Config<kD>;
  if constexpr (kVec) {
    constexpr int kChunksPerRow = kD / 4;
    constexpr int kIters = kBc * kChunksPerRow / kThreads;
    static_assert(kBc * kChunksPerRow % kThreads == 0);
#pragma unroll
    for (int it = 0; it < kIters; ++it) {
      const int i = static_cast<int>(threadIdx.x) + it * kThreads;
      const int r = i / kChunksPerRow, c = (i % kChunksPerRow) * 4;
      const bool valid = key0 + r < n;
      const long long offset = static_cast<long long>(valid ? key0 + r : 0) * kD + c;
      CpAsync16(ks + r * C::kStrideK + c, k + offset, valid ? 16 : 0);
      CpAsync16(vs + r * C::kStrideV + c, v + offset, valid ? 16 : 0);
    }
  } else {
    for (int i = static_cast<int>(threadIdx.x); i < kBc * kD; i += kThreads) {
      const int r = i / kD, c = i % kD;
      const bool valid = key0 + r < n && c < d;
      const long long offset = static_cast<long long>(key0 + r) * d + c;
      ks[r * C::kStrideK + c] = valid ? k[offset] : 0.0f;
      vs[r * C::kStrideV + c] = valid ? v[offset] : 0.0f;
    }
  }
}

// Q[row][col], Q[row][col + 1], zero outside N × d.
template <int kD, bool kVec>
__device__ __forceinline__ float2 LoadQPair(const float* __restrict__ q, int n, int d, int row, int col) {
  if (row >= n) return make_float2(0.0f, 0.0f);
  if constexpr (kVec) {
    return *reinterpret_cast<const float2*>(q + static_cast<long long>(row) * kD + col);
  } else {
    const float* r = q + static_cast<long long>(row) * d;
    return make_float2(col < d ? r[col] : 0.0f, col + 1 < d ? r[col + 1] : 0.0f);
  }
}

// kOInTensorCores: the first version, O_i accumulated across all tiles inside the mma instructions
// (kHw4OInTensorCores; kept to measure what the fp32 accumulation below costs and buys).
template <int kD, bool kVec, int kMinBlocks, bool kOInTensorCores>
__global__ void __launch_bounds__(kThreads, kMinBlocks) Tf32x3Kernel(const KernelParams p) {
  using C = Tf32x3Config<kD>;
  constexpr int kKSteps = kD / 8;  // k steps of S = Q Kᵀ (over d)
  constexpr int kSTiles = kBc / 8; // n tiles of S = k steps of P̃ V (over keys)
  constexpr int kOTiles = kD / 8;  // n tiles of O (over d)
  extern __shared__ float4 smem_raw[];
  float* const smem = reinterpret_cast<float*>(smem_raw);

  const long long head = blockIdx.x / p.row_tiles;
  const int tile = static_cast<int>(blockIdx.x % p.row_tiles);
  const float* const q = p.q + head * p.qkv_stride;
  const float* const k = p.k + head * p.qkv_stride;
  const float* const v = p.v + head * p.qkv_stride;
  float* const o = p.o + head * p.o_stride;
  const int n = p.n, d = p.d;
  const int warp = static_cast<int>(threadIdx.x) / 32, lane = static_cast<int>(threadIdx.x) % 32;
  const int g = lane / 4, t = lane % 4;
  const int row0 = tile * kBr + warp * 16 + g;  // this thread's two rows: row0 and row0 + 8
  const int row1 = row0 + 8;

  // Start K_0, V_0 on their way before touching Q.
  const int kv_tiles = (n + kBc - 1) / kBc;
  LoadKvTile<kD, kVec>(k, v, n, d, 0, smem, smem + kBc * C::kStrideK);
  CpAsyncCommit();

  // Q_i's A fragments, scaled into base 2: k position t ↔ column 8s + 2t, t + 4 ↔ 8s + 2t + 1. Kept as fp32
  // and split into hi, lo at each use: 12 integer/fp32 instructions per k step against 24 mma, and half the
  // registers of keeping both halves (which would cost a block per multiprocessor at d = 64).
  float qa[kKSteps][4];
#pragma unroll
  for (int s = 0; s < kKSteps; ++s) {
    const float2 x0 = LoadQPair<kD, kVec>(q, n, d, row0, 8 * s + 2 * t);
    const float2 x1 = LoadQPair<kD, kVec>(q, n, d, row1, 8 * s + 2 * t);
    qa[s][0] = x0.x * p.scale_log2;
    qa[s][1] = x1.x * p.scale_log2;
    qa[s][2] = x0.y * p.scale_log2;
    qa[s][3] = x1.y * p.scale_log2;
  }

  float o_acc[kOTiles][4];
#pragma unroll
  for (int dt = 0; dt < kOTiles; ++dt) o_acc[dt][0] = o_acc[dt][1] = o_acc[dt][2] = o_acc[dt][3] = 0.0f;
  float m_run[2] = {-INFINITY, -INFINITY};  // m_i of rows row0, row1 (base 2), the same in all 4 lanes of a quad
  float l_run[2] = {0.0f, 0.0f};            // this lane's share of ℓ_i; the quad's 4 shares are summed at the end

  for (int j = 0; j < kv_tiles; ++j) {
    const float* const ks = smem + (j & 1) * C::kStageFloats;
    const float* const vs = ks + kBc * C::kStrideK;
    if (j + 1 < kv_tiles) {
      float* const next = smem + ((j + 1) & 1) * C::kStageFloats;
      LoadKvTile<kD, kVec>(k, v, n, d, (j + 1) * kBc, next, next + kBc * C::kStrideK);
      CpAsyncCommit();
      CpAsyncWait<1>();  // K_j, V_j have landed (this thread's copies); K_{j+1}, V_{j+1} may still be in flight
    } else {
      CpAsyncWait<0>();
    }
    __syncthreads();  // every thread's copies of K_j, V_j are visible to every warp

    // S_ij = Q_i K_jᵀ (base 2). B fragment of key tile nt: b0 = K[8nt + g][8s + 2t], b1 = K[8nt + g][8s + 2t + 1].
    float s_acc[kSTiles][4];
#pragma unroll
    for (int nt = 0; nt < kSTiles; ++nt) s_acc[nt][0] = s_acc[nt][1] = s_acc[nt][2] = s_acc[nt][3] = 0.0f;
#pragma unroll
    for (int s = 0; s < kKSteps; ++s) {
      std::uint32_t qa_hi[4], qa_lo[4];
#pragma unroll
      for (int r = 0; r < 4; ++r) SplitTf32(qa[s][r], qa_hi[r], qa_lo[r]);
#pragma unroll
      for (int nt = 0; nt < kSTiles; ++nt) {
        const float2 kk = *reinterpret_cast<const float2*>(ks + (8 * nt + g) * C::kStrideK + 8 * s + 2 * t);
        std::uint32_t b0_hi, b0_lo, b1_hi, b1_lo;
        SplitTf32(kk.x, b0_hi, b0_lo);
        SplitTf32(kk.y, b1_hi, b1_lo);
        Mma3xTf32(s_acc[nt], qa_hi, qa_lo, b0_hi, b1_hi, b0_lo, b1_lo);
      }
    }
    // Keys past N (only in the last tile): S = −∞, so P̃ = 0 there.
    if ((j + 1) * kBc > n) {
#pragma unroll
      for (int nt = 0; nt < kSTiles; ++nt) {
        const int key = j * kBc + 8 * nt + 2 * t;
        if (key >= n) s_acc[nt][0] = s_acc[nt][2] = -INFINITY;
        if (key + 1 >= n) s_acc[nt][1] = s_acc[nt][3] = -INFINITY;
      }
    }

    // Online softmax: m_new = max(m_i, rowmax S_ij); α = 2^(m_i − m_new); P̃ = 2^(S − m_new);
    // ℓ_i ← α ℓ_i + rowsum P̃; O_i ← α O_i (+ P̃ V_j below). Every tile has a key < N, so m_new is finite.
    float m_new[2] = {m_run[0], m_run[1]};
#pragma unroll
    for (int nt = 0; nt < kSTiles; ++nt) {
      m_new[0] = fmaxf(m_new[0], fmaxf(s_acc[nt][0], s_acc[nt][1]));
      m_new[1] = fmaxf(m_new[1], fmaxf(s_acc[nt][2], s_acc[nt][3]));
    }
#pragma unroll
    for (int h = 0; h < 2; ++h) {  // a row's 64 scores are spread over the 4 lanes of a quad
      m_new[h] = fmaxf(m_new[h], __shfl_xor_sync(0xffffffffu, m_new[h], 1));
      m_new[h] = fmaxf(m_new[h], __shfl_xor_sync(0xffffffffu, m_new[h], 2));
    }
    const float alpha0 = Ex2(m_run[0] - m_new[0]), alpha1 = Ex2(m_run[1] - m_new[1]);  // 2^(−∞) = 0 at j = 0
    m_run[0] = m_new[0];
    m_run[1] = m_new[1];
    l_run[0] *= alpha0;
    l_run[1] *= alpha1;
    if constexpr (kOInTensorCores) {
#pragma unroll
      for (int dt = 0; dt < kOTiles; ++dt) {
        o_acc[dt][0] *= alpha0;
        o_acc[dt][1] *= alpha0;
        o_acc[dt][2] *= alpha1;
        o_acc[dt][3] *= alpha1;
      }
    }
#pragma unroll
    for (int nt = 0; nt < kSTiles; ++nt) {
      s_acc[nt][0] = Ex2(s_acc[nt][0] - m_new[0]);
      s_acc[nt][1] = Ex2(s_acc[nt][1] - m_new[0]);
      s_acc[nt][2] = Ex2(s_acc[nt][2] - m_new[1]);
      s_acc[nt][3] = Ex2(s_acc[nt][3] - m_new[1]);
      l_run[0] += s_acc[nt][0] + s_acc[nt][1];
      l_run[1] += s_acc[nt][2] + s_acc[nt][3];
    }

    // O_i ← α O_i + P̃_ij V_j. Key step nt: k position t ↔ key 8nt + 2t, t + 4 ↔ key 8nt + 2t + 1, so the A
    // fragment is this thread's own accumulators: a0 = P̃[g][2t], a1 = P̃[g+8][2t], a2 = P̃[g][2t+1],
    // a3 = P̃[g+8][2t+1]. P̃_ij V_j goes into fresh accumulators, added to O_i with fp32 FFMA (round to nearest):
    // the tensor cores' own fp32 accumulation drops low bits (rounds toward zero), and chained over all N/8 key
    // steps that bias grew to 2.6e-4 at N = 32768 (measured; 9e-6 for fp32-simt). Per tile it is 24 additions.
    float pv[kOTiles][4];
#pragma unroll
    for (int dt = 0; dt < kOTiles; ++dt) pv[dt][0] = pv[dt][1] = pv[dt][2] = pv[dt][3] = 0.0f;
    float (&pv_acc)[kOTiles][4] = kOInTensorCores ? o_acc : pv;
#pragma unroll
    for (int nt = 0; nt < kSTiles; ++nt) {
      std::uint32_t pa_hi[4], pa_lo[4];
      SplitTf32(s_acc[nt][0], pa_hi[0], pa_lo[0]);
      SplitTf32(s_acc[nt][2], pa_hi[1], pa_lo[1]);
      SplitTf32(s_acc[nt][1], pa_hi[2], pa_lo[2]);
      SplitTf32(s_acc[nt][3], pa_hi[3], pa_lo[3]);
      const float* const v0 = vs + (8 * nt + 2 * t) * C::kStrideV + g;  // V[key 8nt + 2t][8dt + g]
#pragma unroll
      for (int dt = 0; dt < kOTiles; ++dt) {
        std::uint32_t b0_hi, b0_lo, b1_hi, b1_lo;
        SplitTf32(v0[8 * dt], b0_hi, b0_lo);
        SplitTf32(v0[C::kStrideV + 8 * dt], b1_hi, b1_lo);
        Mma3xTf32(pv_acc[dt], pa_hi, pa_lo, b0_hi, b1_hi, b0_lo, b1_lo);
      }
    }
    if constexpr (!kOInTensorCores) {
#pragma unroll
      for (int dt = 0; dt < kOTiles; ++dt) {
        o_acc[dt][0] = fmaf(o_acc[dt][0], alpha0, pv[dt][0]);
        o_acc[dt][1] = fmaf(o_acc[dt][1], alpha0, pv[dt][1]);
        o_acc[dt][2] = fmaf(o_acc[dt][2], alpha1, pv[dt][2]);
        o_acc[dt][3] = fmaf(o_acc[dt][3], alpha1, pv[dt][3]);
      }
    }
    __syncthreads();  // every warp is done with this stage before the next iteration's copies overwrite it
  }

  // O_i = O_i / ℓ_i, with ℓ_i summed over the quad.
  float l0 = l_run[0], l1 = l_run[1];
  l0 += __shfl_xor_sync(0xffffffffu, l0, 1);
  l0 += __shfl_xor_sync(0xffffffffu, l0, 2);
  l1 += __shfl_xor_sync(0xffffffffu, l1, 1);
  l1 += __shfl_xor_sync(0xffffffffu, l1, 2);
  const float inv0 = 1.0f / l0, inv1 = 1.0f / l1;
#pragma unroll
  for (int dt = 0; dt < kOTiles; ++dt) {
    const int col = 8 * dt + 2 * t;
    if constexpr (kVec) {
      if (row0 < n)
        *reinterpret_cast<float2*>(o + static_cast<long long>(row0) * kD + col) =
            make_float2(o_acc[dt][0] * inv0, o_acc[dt][1] * inv0);
      if (row1 < n)
        *reinterpret_cast<float2*>(o + static_cast<long long>(row1) * kD + col) =
            make_float2(o_acc[dt][2] * inv1, o_acc[dt][3] * inv1);
    } else {
      if (row0 < n) {
        if (col < d) o[static_cast<long long>(row0) * d + col] = o_acc[dt][0] * inv0;
        if (col + 1 < d) o[static_cast<long long>(row0) * d + col + 1] = o_acc[dt][1] * inv0;
      }
      if (row1 < n) {
        if (col < d) o[static_cast<long long>(row1) * d + col] = o_acc[dt][2] * inv1;
        if (col + 1 < d) o[static_cast<long long>(row1) * d + col + 1] = o_acc[dt][3] * inv1;
      }
    }
  }
}

template <int kD, bool kVec, int kMinBlocks, bool kOInTensorCores = false>
cudaError_t Launch(const KernelParams& p, long long heads, cudaStream_t stream) {
  auto* kernel = Tf32x3Kernel<kD, kVec, kMinBlocks, kOInTensorCores>;
  constexpr int kSmem = Tf32x3Config<kD>::kSmemBytes;
  if (const cudaError_t e = cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, kSmem);
      e != cudaSuccess)
    return e;
  return LaunchInSlices(p, heads, kBr, [&](const KernelParams& slice, unsigned blocks) {
    kernel<<<blocks, kThreads, kSmem, stream>>>(slice);
  });
}

}  // namespace

cudaError_t LaunchTf32x3(const KernelParams& p, long long heads, unsigned options, cudaStream_t stream) {
  // The cp.async path needs every row start 16-byte aligned: d == kD (a multiple of 4), aligned bases and
  // head strides; the float2 stores of O need 8-byte alignment.
  const auto aligned = [](const void* ptr, unsigned bytes) {
    return reinterpret_cast<std::uintptr_t>(ptr) % bytes == 0;
  };
  const bool vec_layout = aligned(p.q, 16) && aligned(p.k, 16) && aligned(p.v, 16) && aligned(p.o, 8) &&
                          p.qkv_stride % 4 == 0 && p.o_stride % 2 == 0;
  using C32 = Tf32x3Config<32>;
  using C64 = Tf32x3Config<64>;
  const bool alt = (options & kHw4AltOccupancy) != 0;
  const bool o_in_tc = (options & kHw4OInTensorCores) != 0;
  if (p.d == 64 && vec_layout) {
    if (o_in_tc) return Launch<64, true, C64::kDefaultMinBlocks, true>(p, heads, stream);
    return alt ? Launch<64, true, C64::kAltMinBlocks>(p, heads, stream)
               : Launch<64, true, C64::kDefaultMinBlocks>(p, heads, stream);
  }
  if (p.d == 32 && vec_layout) {
    if (o_in_tc) return Launch<32, true, C32::kDefaultMinBlocks, true>(p, heads, stream);
    return alt ? Launch<32, true, C32::kAltMinBlocks>(p, heads, stream)
               : Launch<32, true, C32::kDefaultMinBlocks>(p, heads, stream);
  }
  if (p.d <= 32) return Launch<32, false, C32::kDefaultMinBlocks>(p, heads, stream);
  if (p.d <= 64) return Launch<64, false, C64::kDefaultMinBlocks>(p, heads, stream);
  return cudaErrorInvalidValue;
}

}  // namespace flashviz::cuda::hw4::detail
