// flash2_bwd: FlashAttention-2's backward schedule in fp32, the way flashviz's CPU model of the backward pass
// steps through it. D = rowsum(dO ∘ O) first; then one block per (K/V tile j, head) holds dK_j and dV_j in
// registers while it walks the Q tiles i that meet tile j:
//
//   S_ij = scale·Q_i K_jᵀ (masked),  P_ij = exp(S_ij − L_i)      (recomputed from the saved L: nothing N² stored)
//   dV_j += P_ijᵀ dO_i,  dP_ij = dO_i V_jᵀ,  dS_ij = P_ij ∘ (dP_ij − D_i)
//   dK_j += scale·dS_ijᵀ Q_i,  dQ_i += scale·dS_ij K_j            (atomicAdd: other blocks own the other j)
//
// P_ij and dS_ij live in shared memory between the products; K_j, V_j, Q_i and dO_i are shared-memory tiles with
// rows padded by one float, so the column-wise reads of the products hit 32 different banks.
//
// The `// @phase NAME` markers tie its lines to the model's phases: the algorithm panel (viz/algorithm.h) shows this
// file beside FlashAttention-2's Algorithm 2 with the current step's lines marked.
#include "kernels/cuda/backward/backward_common.cuh"
#include "kernels/cuda/backward/backward_tiles.h"
#include "kernels/cuda/backward/backward_variants.h"

namespace flashviz::cuda {
namespace {

constexpr int kBr = backward_tiles::kFlash2Br;
constexpr int kBc = backward_tiles::kFlash2Bc;
constexpr int kThreads = backward_tiles::kFlash2Threads;
// Thread roles (256 threads): S and dP: row t/8, keys t%8 + 8u; dK and dV: key t/4, dims t%4 + 4u; dQ: row t/8,
// dims t%8 + 8u. Each role covers its whole tile exactly.
static_assert(kBr * 8 == kThreads && kBc * 4 == kThreads, "the thread roles assume 32 rows, 64 keys, 256 threads");

template <int kD>
struct Flash2BackwardLayout {
  static constexpr int kStride = kD + 1;    // floats per padded row of K_j, V_j, Q_i, dO_i
  static constexpr int kPStride = kBc + 1;  // floats per padded row of P_ij and dS_ij
  static constexpr int kFloats = 2 * kBc * kStride + 2 * kBr * kStride + 2 * kBr * kPStride + 2 * kBr;
  static constexpr int kBytes = kFloats * static_cast<int>(sizeof(float));
};

// Rows [row0, row0 + rows) of an N×d head into a padded shared tile; rows past N are zeros.
template <int kD>
__device__ __forceinline__ void LoadRows(float* tile, const float* __restrict__ head, int row0, int rows, int n) {
  for (int index = threadIdx.x; index < rows * kD; index += kThreads) {
    const int r = index / kD, e = index % kD;
    tile[r * (kD + 1) + e] = row0 + r < n ? head[static_cast<std::int64_t>(row0 + r) * kD + e] : 0.0f;
  }
}

template <int kD>
__global__ void __launch_bounds__(kThreads)
    Flash2BackwardKernel(const float* __restrict__ q, const float* __restrict__ k, const float* __restrict__ v,
                         const float* __restrict__ dout, const float* __restrict__ lse, const float* __restrict__ delta,
                         float* dq, float* __restrict__ dk, float* __restrict__ dv, int n, float scale, bool causal) {
  using Layout = Flash2BackwardLayout<kD>;
  constexpr int kStride = Layout::kStride, kPStride = Layout::kPStride;
  extern __shared__ float shared[];
  float* k_s = shared;
  float* v_s = k_s + kBc * kStride;
  float* q_s = v_s + kBc * kStride;
  float* do_s = q_s + kBr * kStride;
  float* p_s = do_s + kBr * kStride;
  float* ds_s = p_s + kBr * kPStride;
  float* l_s = ds_s + kBr * kPStride;
  float* delta_s = l_s + kBr;

  const int t = threadIdx.x;
  const int col0 = blockIdx.x * kBc;
  const std::int64_t head = static_cast<std::int64_t>(blockIdx.y) * n;  // first row of this head
  q += head * kD;
  k += head * kD;
  v += head * kD;
  dout += head * kD;
  dq += head * kD;
  // @phase load_kv
  LoadRows<kD>(k_s, k, col0, kBc, n);
  LoadRows<kD>(v_s, v, col0, kBc, n);

  constexpr int kKvDims = kD / 4, kQDims = kD / 8;
  const int kv_key = t / 4, kv_dim0 = t % 4;  // dK_j, dV_j role
  const int s_row = t / 8, s_key0 = t % 8;    // S, dP and dQ role
  float dk_acc[kKvDims] = {}, dv_acc[kKvDims] = {};
  // @phase end

  const int q_tiles = (n + kBr - 1) / kBr;
  for (int i = causal ? col0 / kBr : 0; i < q_tiles; ++i) {
    const int row0 = i * kBr;
    // @phase load_q
    __syncthreads();  // every thread is done with the previous Q_i, dO_i, P_ij, dS_ij
    LoadRows<kD>(q_s, q, row0, kBr, n);
    LoadRows<kD>(do_s, dout, row0, kBr, n);
    if (t < kBr) {
      const bool valid = row0 + t < n;
      l_s[t] = valid ? lse[head + row0 + t] : 0.0f;
      delta_s[t] = valid ? delta[head + row0 + t] : 0.0f;
    }
    __syncthreads();

    // S_ij and dP_ij, 8 entries of one row per thread: every Q/dO value read feeds 8 FMAs.
    // @phase scores grad_p
    float s[8] = {}, dp[8] = {};
    for (int e = 0; e < kD; ++e) {
      const float qe = q_s[s_row * kStride + e], doe = do_s[s_row * kStride + e];
#pragma unroll
      for (int u = 0; u < 8; ++u) {
        s[u] += qe * k_s[(s_key0 + 8 * u) * kStride + e];
        dp[u] += doe * v_s[(s_key0 + 8 * u) * kStride + e];
      }
    }
    const int row = row0 + s_row;
    // @phase probs grad_s
#pragma unroll
    for (int u = 0; u < 8; ++u) {
      const int key = s_key0 + 8 * u, col = col0 + key;
      const bool masked = row >= n || col >= n || (causal && col > row);
      const float p = masked ? 0.0f : expf(scale * s[u] - l_s[s_row]);
      p_s[s_row * kPStride + key] = p;
      ds_s[s_row * kPStride + key] = p * (dp[u] - delta_s[s_row]);
    }
    __syncthreads();

    // dV_j += P_ijᵀ dO_i and dK_j += dS_ijᵀ Q_i (scale applied once, at the end).
    // @phase grad_v grad_k
    for (int r = 0; r < kBr; ++r) {
      const float p = p_s[r * kPStride + kv_key], ds = ds_s[r * kPStride + kv_key];
#pragma unroll
      for (int u = 0; u < kKvDims; ++u) {
        dv_acc[u] += p * do_s[r * kStride + kv_dim0 + 4 * u];
        dk_acc[u] += ds * q_s[r * kStride + kv_dim0 + 4 * u];
      }
    }
    // dQ_i += scale·dS_ij K_j, added to HBM: the blocks of the other K/V tiles add theirs to the same rows.
    // @phase grad_q
    if (row < n) {
      float dq_acc[kQDims] = {};
      for (int key = 0; key < kBc; ++key) {
        const float ds = ds_s[s_row * kPStride + key];
#pragma unroll
        for (int u = 0; u < kQDims; ++u) dq_acc[u] += ds * k_s[key * kStride + s_key0 + 8 * u];
      }
#pragma unroll
      for (int u = 0; u < kQDims; ++u)
        atomicAdd(dq + static_cast<std::int64_t>(row) * kD + s_key0 + 8 * u, scale * dq_acc[u]);
    }
    // @phase end
  }

  // @phase write_dk_dv
  const int key_row = col0 + kv_key;
  if (key_row >= n) return;
#pragma unroll
  for (int u = 0; u < kKvDims; ++u) {
    const std::int64_t index = (head + key_row) * kD + kv_dim0 + 4 * u;
    dk[index] = scale * dk_acc[u];
    dv[index] = dv_acc[u];
  }
  // @phase end
}

template <int kD>
cudaError_t LaunchFlash2BackwardD(const BackwardArgs& args, const float* delta) {
  auto* kernel = &Flash2BackwardKernel<kD>;
  constexpr int kBytes = Flash2BackwardLayout<kD>::kBytes;
  if (const cudaError_t error = device::AllowSharedMemory(kernel, kBytes); error != cudaSuccess) return error;
  const dim3 grid(device::CeilDiv(args.shape.n, kBc), static_cast<unsigned>(args.shape.Heads()));
  kernel<<<grid, kThreads, kBytes, args.stream>>>(
      static_cast<const float*>(args.q), static_cast<const float*>(args.k), static_cast<const float*>(args.v),
      static_cast<const float*>(args.dout), args.lse, delta, static_cast<float*>(args.dq), static_cast<float*>(args.dk),
      static_cast<float*>(args.dv), args.shape.n, args.shape.scale, args.shape.causal);
  return cudaGetLastError();
}

}  // namespace

cudaError_t LaunchFlash2Backward(const BackwardArgs& args) {
  if (const cudaError_t error = CheckBackwardArgs("flash2_bwd", args); error != cudaSuccess) return error;
  const AttentionShape& shape = args.shape;
  const std::int64_t rows = shape.Heads() * shape.n;
  auto* delta = static_cast<float*>(args.workspace);
  // dQ is summed by atomicAdd from every K/V tile's block: it starts at zero.
  // @phase init
  if (const cudaError_t error =
          cudaMemsetAsync(args.dq, 0, static_cast<std::size_t>(rows) * shape.d * sizeof(float), args.stream);
      error != cudaSuccess)
    return error;
  // @phase delta
  if (const cudaError_t error =
          backward_device::LaunchRowDot<float>(args.dout, args.o, delta, rows, shape.d, args.stream);
      error != cudaSuccess)
    return error;
  // @phase end
  switch (shape.d) {
    case 32:
      return LaunchFlash2BackwardD<32>(args, delta);
    case 64:
      return LaunchFlash2BackwardD<64>(args, delta);
    case 128:
      return LaunchFlash2BackwardD<128>(args, delta);
    default:
      return cudaErrorInvalidValue;
  }
}

}  // namespace flashviz::cuda
