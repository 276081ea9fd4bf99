// flash2_bwd_tf32x3: flash2_bwd's schedule with its five products on the tensor cores in error-compensated TF32,
// fp32 in and out. The trick is the forward hw4 kernel's (kernels/cuda/hw4/attention_tf32x3.cu): every fp32
// operand is split into hi + lo TF32 numbers and a·b is computed as lo·hi + hi·lo + hi·hi with mma.sync m16n8k8
// in fp32 accumulators, about 2^-20 relative error: fp32-class results from three tensor-core products for one.
//
// A block of 4 warps per (K/V tile j of 64 keys, head) keeps dK_j and dV_j in registers and walks the Q tiles of
// 64 rows that meet j. Each warp owns 16 keys and computes the TRANSPOSED tiles S_ijᵀ = K_j Q_iᵀ and
// dP_ijᵀ = V_j dO_iᵀ (keys as the mma's rows), so that Pᵀ and dSᵀ, computed in those accumulators, are already
// the A operands of dV_j += P_ijᵀ dO_i and dK_j += dS_ijᵀ Q_i (the forward kernel's P-in-registers relabelling:
// k position t ↔ query 2t, t + 4 ↔ query 2t + 1, and the B fragments read in that order). dQ_i += scale·dS_ij K_j
// needs queries as rows across the warps: each warp stores its dSᵀ slice into shared memory, and after a barrier
// each warp multiplies 16 query rows of it and adds them to dQ in HBM with float2 atomics (other blocks own the
// other j). Q_{i+1}, dO_{i+1} are copied by cp.async under that dQ step, into the buffers just freed.
//
// Shared memory: K_j, V_j, Q_i, dO_i rows of d + 4 floats and dSᵀ rows of B_r + 4, so every fragment read below,
// rows g (or 2t, 2t + 1) by columns t (or g), hits 32 distinct banks. 87.5 KB at d = 64: two blocks a multiprocessor.
// The tensor cores' own fp32 accumulation truncates, so each Q tile's dK_j, dV_j share is summed in fresh
// accumulators and added with FADD (round to nearest), as the forward kernel does for O.
#include "kernels/cuda/backward/backward_common.cuh"
#include "kernels/cuda/backward/backward_tiles.h"
#include "kernels/cuda/backward/backward_variants.h"
#include "kernels/cuda/hw4/hw4_device.cuh"

namespace flashviz::cuda {
namespace {

using hw4::CpAsync16;
using hw4::CpAsyncCommit;
using hw4::CpAsyncWait;
using hw4::Mma3xTf32;
using hw4::SplitTf32;

constexpr int kBr = backward_tiles::kTf32x3Br;
constexpr int kBc = backward_tiles::kTf32x3Bc;
constexpr int kWarps = backward_tiles::kTf32x3Warps;
constexpr int kThreads = 32 * kWarps;
static_assert(kBc == 16 * kWarps && kBr == 16 * kWarps, "a warp owns 16 keys of K_j and 16 rows of dQ_i");
constexpr int kQTiles = kBr / 8;    // n8 tiles (queries) of Sᵀ and dPᵀ = k steps of dV and dK
constexpr int kKeySteps = kBc / 8;  // k steps (keys) of dQ

template <int kD>
struct Tf32x3BackwardLayout {
  static constexpr int kStride = kD + 4;     // floats per row of K_j, V_j, Q_i, dO_i
  static constexpr int kDsStride = kBr + 4;  // floats per row (key) of dSᵀ
  static constexpr int kK = 0;
  static constexpr int kV = kK + kBc * kStride;
  static constexpr int kQ = kV + kBc * kStride;
  static constexpr int kDo = kQ + kBr * kStride;
  static constexpr int kDs = kDo + kBr * kStride;
  static constexpr int kL = kDs + kBc * kDsStride;
  static constexpr int kDelta = kL + kBr;
  static constexpr int kBytes = (kDelta + kBr) * static_cast<int>(sizeof(float));
  static_assert(kStride % 4 == 0, "cp.async writes 16-byte chunks of each row");
};

// Rows [row0, row0 + kRows) of an N×d head into a shared tile by 16-byte cp.async; rows past N become zeros.
template <int kD, int kRows>
__device__ __forceinline__ void LoadRowsAsync(float* tile, const float* __restrict__ head, int row0, int n) {
  constexpr int kChunksPerRow = kD / 4;
  static_assert(kRows * kChunksPerRow % kThreads == 0);
#pragma unroll
  for (int it = 0; it < kRows * kChunksPerRow / kThreads; ++it) {
    const int index = static_cast<int>(threadIdx.x) + it * kThreads;
    const int r = index / kChunksPerRow, c = (index % kChunksPerRow) * 4;
    const bool valid = row0 + r < n;
    CpAsync16(tile + r * (kD + 4) + c, head + static_cast<std::int64_t>(valid ? row0 + r : 0) * kD + c, valid ? 16 : 0);
  }
}

// The A fragment of a product whose k index is the query, from accumulators whose columns are queries:
// a0 = A[g][2t], a1 = A[g+8][2t], a2 = A[g][2t+1], a3 = A[g+8][2t+1] (hw4_device.cuh's relabelling).
__device__ __forceinline__ void SplitAccumulatorAsA(const float (&acc)[4], std::uint32_t (&hi)[4],
                                                    std::uint32_t (&lo)[4]) {
  SplitTf32(acc[0], hi[0], lo[0]);
  SplitTf32(acc[2], hi[1], lo[1]);
  SplitTf32(acc[1], hi[2], lo[2]);
  SplitTf32(acc[3], hi[3], lo[3]);
}

// acc += Aᵀ-in-registers × B over the B_r queries: A from `a_acc` (keys × queries), B rows 2t and 2t + 1 of each
// 8-query step from `b_tile` (queries × d, shared), then total += acc with FADD.
template <int kD>
__device__ __forceinline__ void AccumulateKeyProduct(float (&total)[kD / 8][4], const float (&a_acc)[kQTiles][4],
                                                     const float* b_tile, int g, int t) {
  constexpr int kStride = kD + 4;
  float acc[kD / 8][4] = {};
#pragma unroll
  for (int qt = 0; qt < kQTiles; ++qt) {
    std::uint32_t a_hi[4], a_lo[4];
    SplitAccumulatorAsA(a_acc[qt], a_hi, a_lo);
    const float* b_row = b_tile + (8 * qt + 2 * t) * kStride + g;  // B[query 8qt + 2t][dim 8dt + g]
#pragma unroll
    for (int dt = 0; dt < kD / 8; ++dt) {
      std::uint32_t b0_hi, b0_lo, b1_hi, b1_lo;
      SplitTf32(b_row[8 * dt], b0_hi, b0_lo);
      SplitTf32(b_row[kStride + 8 * dt], b1_hi, b1_lo);
      Mma3xTf32(acc[dt], a_hi, a_lo, b0_hi, b1_hi, b0_lo, b1_lo);
    }
  }
#pragma unroll
  for (int dt = 0; dt < kD / 8; ++dt)
#pragma unroll
    for (int e = 0; e < 4; ++e) total[dt][e] += acc[dt][e];
}

template <int kD>
__global__ void __launch_bounds__(kThreads, 2)
    Flash2BackwardTf32x3Kernel(const float* __restrict__ q, const float* __restrict__ k, const float* __restrict__ v,
                               const float* __restrict__ dout, const float* __restrict__ lse,
                               const float* __restrict__ delta, float* dq, float* __restrict__ dk,
                               float* __restrict__ dv, int n, float scale, bool causal) {
  using L = Tf32x3BackwardLayout<kD>;
  constexpr int kStride = L::kStride, kDsStride = L::kDsStride;
  constexpr int kDimSteps = kD / 8;  // k steps (over d) of Sᵀ and dPᵀ = n8 tiles of dK, dV and dQ
  extern __shared__ float4 shared_raw[];
  float* const shared = reinterpret_cast<float*>(shared_raw);
  const float* const k_s = shared + L::kK;
  const float* const v_s = shared + L::kV;
  float* const q_s = shared + L::kQ;
  float* const do_s = shared + L::kDo;
  float* const ds_s = shared + L::kDs;
  float* const l_s = shared + L::kL;
  float* const delta_s = shared + L::kDelta;

  const int thread = static_cast<int>(threadIdx.x), warp = thread / 32, lane = thread % 32;
  const int g = lane / 4, t = lane % 4;
  const int col0 = blockIdx.x * kBc;
  const std::int64_t head = static_cast<std::int64_t>(blockIdx.y) * n;  // first row of this head
  q += head * kD;
  k += head * kD;
  v += head * kD;
  dout += head * kD;
  dq += head * kD;

  // Q_i, dO_i by cp.async; L_i, D_i through registers (stored by store_rows once the tile's readers are done).
  float l_next = 0.0f, delta_next = 0.0f;
  const auto load_q_tile = [&](int i) {
    LoadRowsAsync<kD, kBr>(q_s, q, i * kBr, n);
    LoadRowsAsync<kD, kBr>(do_s, dout, i * kBr, n);
    CpAsyncCommit();
    const int row = i * kBr + thread;
    if (thread < kBr) {
      l_next = row < n ? lse[head + row] : 0.0f;
      delta_next = row < n ? delta[head + row] : 0.0f;
    }
  };
  const auto store_rows = [&] {
    if (thread < kBr) {
      l_s[thread] = l_next;
      delta_s[thread] = delta_next;
    }
  };
  LoadRowsAsync<kD, kBc>(shared + L::kK, k, col0, n);
  LoadRowsAsync<kD, kBc>(shared + L::kV, v, col0, n);
  const int q_tiles = (n + kBr - 1) / kBr;
  const int first_tile = causal ? col0 / kBr : 0;  // causal: Q tiles wholly before key col0 see none of j
  load_q_tile(first_tile);
  store_rows();

  const int warp_key0 = warp * 16;  // this warp's keys in K_j; the lane's are warp_key0 + g and + g + 8
  const float* const k_a = k_s + (warp_key0 + g) * kStride + t;  // A[g][t] of Sᵀ's k step 0
  const float* const v_a = v_s + (warp_key0 + g) * kStride + t;
  float dk_acc[kDimSteps][4] = {}, dv_acc[kDimSteps][4] = {};

  for (int i = first_tile; i < q_tiles; ++i) {
    const int row0 = i * kBr;
    CpAsyncWait<0>();
    __syncthreads();  // Q_i, dO_i, L_i, D_i visible to all; every warp finished tile i − 1's dQ step (dSᵀ free)

    // Sᵀ = K_j Q_iᵀ and dPᵀ = V_j dO_iᵀ: 16 keys × B_r queries a warp. k positions are dims 8s + t and 8s + t + 4;
    // B[dim][query] = Q[query 8qt + g][dim].
    float s_acc[kQTiles][4] = {}, dp_acc[kQTiles][4] = {};
#pragma unroll
    for (int s = 0; s < kDimSteps; ++s) {
      std::uint32_t k_hi[4], k_lo[4], v_hi[4], v_lo[4];
#pragma unroll
      for (int r = 0; r < 4; ++r) {  // a0..a3: (key g, dim t), (g + 8, t), (g, t + 4), (g + 8, t + 4)
        const int offset = (r % 2) * 8 * kStride + (r / 2) * 4 + 8 * s;
        SplitTf32(k_a[offset], k_hi[r], k_lo[r]);
        SplitTf32(v_a[offset], v_hi[r], v_lo[r]);
      }
#pragma unroll
      for (int qt = 0; qt < kQTiles; ++qt) {
        const int b_offset = (8 * qt + g) * kStride + 8 * s + t;
        std::uint32_t b0_hi, b0_lo, b1_hi, b1_lo;
        SplitTf32(q_s[b_offset], b0_hi, b0_lo);
        SplitTf32(q_s[b_offset + 4], b1_hi, b1_lo);
        Mma3xTf32(s_acc[qt], k_hi, k_lo, b0_hi, b1_hi, b0_lo, b1_lo);
        SplitTf32(do_s[b_offset], b0_hi, b0_lo);
        SplitTf32(do_s[b_offset + 4], b1_hi, b1_lo);
        Mma3xTf32(dp_acc[qt], v_hi, v_lo, b0_hi, b1_hi, b0_lo, b1_lo);
      }
    }

    // Pᵀ = exp(scale·Sᵀ − L) and dSᵀ = Pᵀ ∘ (dPᵀ − D), in place. Entry e of tile qt: key g + 8·(e / 2), query
    // 8qt + 2t + e % 2. Masked entries (keys or queries past N, causal keys after the query) get P = dS = 0.
#pragma unroll
    for (int qt = 0; qt < kQTiles; ++qt)
#pragma unroll
      for (int e = 0; e < 4; ++e) {
        const int query = 8 * qt + 2 * t + e % 2, row = row0 + query;
        const int col = col0 + warp_key0 + g + 8 * (e / 2);
        const bool masked = row >= n || col >= n || (causal && col > row);
        const float p = masked ? 0.0f : expf(scale * s_acc[qt][e] - l_s[query]);
        s_acc[qt][e] = p;
        dp_acc[qt][e] = p * (dp_acc[qt][e] - delta_s[query]);
      }

    // dV_j += P_ijᵀ dO_i and dK_j += dS_ijᵀ Q_i (scale applied once, at the end).
    AccumulateKeyProduct<kD>(dv_acc, s_acc, do_s, g, t);
    AccumulateKeyProduct<kD>(dk_acc, dp_acc, q_s, g, t);

    // This warp's dSᵀ rows into shared memory for dQ, whose rows are queries.
#pragma unroll
    for (int qt = 0; qt < kQTiles; ++qt) {
      float* const ds_row = ds_s + (warp_key0 + g) * kDsStride + 8 * qt + 2 * t;
      *reinterpret_cast<float2*>(ds_row) = make_float2(dp_acc[qt][0], dp_acc[qt][1]);
      *reinterpret_cast<float2*>(ds_row + 8 * kDsStride) = make_float2(dp_acc[qt][2], dp_acc[qt][3]);
    }
    __syncthreads();  // dSᵀ complete; every warp is done with Q_i, dO_i, L_i and D_i
    if (i + 1 < q_tiles) load_q_tile(i + 1);

    // dQ_i += scale·dS_ij K_j for this warp's 16 query rows. k positions t ↔ key 8ks + 2t, t + 4 ↔ 8ks + 2t + 1:
    // A[query][key] = dSᵀ[key][query], B[key][dim] = K_j rows 2t and 2t + 1 at column 8dt + g.
    const int warp_query0 = warp * 16;
    float dq_acc[kDimSteps][4] = {};
#pragma unroll
    for (int ks = 0; ks < kKeySteps; ++ks) {
      const float* const a_row = ds_s + (8 * ks + 2 * t) * kDsStride + warp_query0 + g;
      std::uint32_t a_hi[4], a_lo[4];
      SplitTf32(a_row[0], a_hi[0], a_lo[0]);
      SplitTf32(a_row[8], a_hi[1], a_lo[1]);
      SplitTf32(a_row[kDsStride], a_hi[2], a_lo[2]);
      SplitTf32(a_row[kDsStride + 8], a_hi[3], a_lo[3]);
      const float* const b_row = k_s + (8 * ks + 2 * t) * kStride + g;
#pragma unroll
      for (int dt = 0; dt < kDimSteps; ++dt) {
        std::uint32_t b0_hi, b0_lo, b1_hi, b1_lo;
        SplitTf32(b_row[8 * dt], b0_hi, b0_lo);
        SplitTf32(b_row[kStride + 8 * dt], b1_hi, b1_lo);
        Mma3xTf32(dq_acc[dt], a_hi, a_lo, b0_hi, b1_hi, b0_lo, b1_lo);
      }
    }
    const int dq_row0 = row0 + warp_query0 + g, dq_row1 = dq_row0 + 8;
#pragma unroll
    for (int dt = 0; dt < kDimSteps; ++dt) {
      const int dim = 8 * dt + 2 * t;
      if (dq_row0 < n)
        backward_device::AtomicAddPair(dq + static_cast<std::int64_t>(dq_row0) * kD + dim, scale * dq_acc[dt][0],
                                       scale * dq_acc[dt][1]);
      if (dq_row1 < n)
        backward_device::AtomicAddPair(dq + static_cast<std::int64_t>(dq_row1) * kD + dim, scale * dq_acc[dt][2],
                                       scale * dq_acc[dt][3]);
    }
    store_rows();  // L_{i+1}, D_{i+1}: the loads issued before the dQ step have landed by now
  }

  // dK_j = scale·Σ dS_ijᵀ Q_i, dV_j = Σ P_ijᵀ dO_i: entry e of tile dt is key g + 8·(e / 2), dim 8dt + 2t + e % 2.
#pragma unroll
  for (int half = 0; half < 2; ++half) {
    const int key = col0 + warp_key0 + g + 8 * half;
    if (key >= n) continue;
#pragma unroll
    for (int dt = 0; dt < kDimSteps; ++dt) {
      const std::int64_t index = (head + key) * kD + 8 * dt + 2 * t;
      *reinterpret_cast<float2*>(dk + index) =
          make_float2(scale * dk_acc[dt][2 * half], scale * dk_acc[dt][2 * half + 1]);
      *reinterpret_cast<float2*>(dv + index) = make_float2(dv_acc[dt][2 * half], dv_acc[dt][2 * half + 1]);
    }
  }
}

template <int kD>
cudaError_t LaunchFlash2BackwardTf32x3D(const BackwardArgs& args, const float* delta) {
  auto* kernel = &Flash2BackwardTf32x3Kernel<kD>;
  constexpr int kBytes = Tf32x3BackwardLayout<kD>::kBytes;
  if (const cudaError_t error = device::AllowSharedMemory(kernel, kBytes); error != cudaSuccess) return error;
  const dim3 grid(device::CeilDiv(args.shape.n, kBc), static_cast<unsigned>(args.shape.Heads()));
  kernel<<<grid, kThreads, kBytes, args.stream>>>(
      static_cast<const float*>(args.q), static_cast<const float*>(args.k), static_cast<const float*>(args.v),
      static_cast<const float*>(args.dout), args.lse, delta, static_cast<float*>(args.dq), static_cast<float*>(args.dk),
      static_cast<float*>(args.dv), args.shape.n, args.shape.scale, args.shape.causal);
  return cudaGetLastError();
}

}  // namespace

cudaError_t LaunchFlash2BackwardTf32x3(const BackwardArgs& args) {
  if (const cudaError_t error = CheckBackwardArgs("flash2_bwd_tf32x3", args); error != cudaSuccess) return error;
  const AttentionShape& shape = args.shape;
  const std::int64_t rows = shape.Heads() * shape.n;
  auto* delta = static_cast<float*>(args.workspace);
  // dQ is summed by atomics from every K/V tile's block: it starts at zero.
  if (const cudaError_t error =
          cudaMemsetAsync(args.dq, 0, static_cast<std::size_t>(rows) * shape.d * sizeof(float), args.stream);
      error != cudaSuccess)
    return error;
  if (const cudaError_t error =
          backward_device::LaunchRowDot<float>(args.dout, args.o, delta, rows, shape.d, args.stream);
      error != cudaSuccess)
    return error;
  switch (shape.d) {
    case 32:
      return LaunchFlash2BackwardTf32x3D<32>(args, delta);
    case 64:
      return LaunchFlash2BackwardTf32x3D<64>(args, delta);
    default:
      return cudaErrorInvalidValue;
  }
}

}  // namespace flashviz::cuda
