// naive_bwd: the backward pass of standard attention the way autograd runs it, one matrix product per kernel,
// P, dP and dS materialized in HBM (B·H·N² fp32 each). Correctness first: every product is the same 32×32 tiled
// shared-memory GEMM, with the transposes done by the loads.
//
//   P  = exp(scale·Q Kᵀ − L)  (masked entries 0)      dP = dO Vᵀ
//   D  = rowsum(dO ∘ O)                               dS = P ∘ (dP − D)
//   dV = Pᵀ dO                dQ = scale·dS K         dK = scale·dSᵀ Q
#include "kernels/cuda/backward/backward_common.cuh"
#include "kernels/cuda/backward/backward_tiles.h"
#include "kernels/cuda/backward/backward_variants.h"

namespace flashviz::cuda {
namespace {

constexpr int kTile = backward_tiles::kNaiveGemm;
constexpr int kThreads = 256;  // 32 columns × 8 row groups; each thread 4 rows of one column

enum class Epilogue {
  kScaled,         // C = alpha · A·B
  kProbabilities,  // C = exp(alpha · A·B − L_row), 0 where (causal) column > row: P from the saved L
};

struct GemmShape {
  int rows, cols, depth;                // C is rows × cols, the sum runs over depth
  std::int64_t a_head, b_head, c_head;  // elements per head of A, B, C
};

// C = op(A) · op(B) per head (blockIdx.z), op = transpose when the flag says so. A is rows × depth (stored
// depth × rows when transposed), B is depth × cols (stored cols × depth when transposed). Each tile is loaded
// along the stored matrix's contiguous dimension, so the global reads coalesce whatever the transpose.
template <bool kTransA, bool kTransB, Epilogue kEpilogue>
__global__ void __launch_bounds__(kThreads)
    TiledGemmKernel(const float* __restrict__ a, const float* __restrict__ b, float* __restrict__ c, GemmShape shape,
                    float alpha, const float* __restrict__ lse, bool causal) {
  __shared__ float a_tile[kTile][kTile + 1];  // [row][k]; +1: column reads hit 32 different banks
  __shared__ float b_tile[kTile][kTile + 1];  // [k][col]
  const int thread = threadIdx.x, tx = thread % kTile, ty = thread / kTile;
  const int row0 = blockIdx.y * kTile, col0 = blockIdx.x * kTile;
  const std::int64_t head = blockIdx.z;
  a += head * shape.a_head;
  b += head * shape.b_head;
  c += head * shape.c_head;
  float acc[kTile / 8] = {};
  for (int k0 = 0; k0 < shape.depth; k0 += kTile) {
    for (int index = thread; index < kTile * kTile; index += kThreads) {
      const int fast = index % kTile, slow = index / kTile;  // fast: the stored matrix's contiguous index
      {
        const int r = kTransA ? fast : slow, k = kTransA ? slow : fast;
        const int gr = row0 + r, gk = k0 + k;
        float value = 0.0f;
        if (gr < shape.rows && gk < shape.depth)
          value = kTransA ? a[static_cast<std::int64_t>(gk) * shape.rows + gr]
                          : a[static_cast<std::int64_t>(gr) * shape.depth + gk];
        a_tile[r][k] = value;
      }
      {
        const int col = kTransB ? slow : fast, k = kTransB ? fast : slow;
        const int gc = col0 + col, gk = k0 + k;
        float value = 0.0f;
        if (gc < shape.cols && gk < shape.depth)
          value = kTransB ? b[static_cast<std::int64_t>(gc) * shape.depth + gk]
                          : b[static_cast<std::int64_t>(gk) * shape.cols + gc];
        b_tile[k][col] = value;
      }
    }
    __syncthreads();
#pragma unroll 8
    for (int k = 0; k < kTile; ++k) {
      const float bk = b_tile[k][tx];
#pragma unroll
      for (int u = 0; u < kTile / 8; ++u) acc[u] += a_tile[ty + 8 * u][k] * bk;
    }
    __syncthreads();
  }
  const int col = col0 + tx;
  if (col >= shape.cols) return;
#pragma unroll
  for (int u = 0; u < kTile / 8; ++u) {
    const int row = row0 + ty + 8 * u;
    if (row >= shape.rows) continue;
    float value = alpha * acc[u];
    if constexpr (kEpilogue == Epilogue::kProbabilities)
      value = causal && col > row ? 0.0f : expf(value - lse[head * shape.rows + row]);
    c[static_cast<std::int64_t>(row) * shape.cols + col] = value;
  }
}

// dS = P ∘ (dP − D_row), elementwise over B·H·N² entries.
__global__ void ScoreGradientKernel(const float* __restrict__ p, const float* __restrict__ dp,
                                    const float* __restrict__ delta, float* __restrict__ ds, std::int64_t count,
                                    int n) {
  const std::int64_t stride = static_cast<std::int64_t>(gridDim.x) * blockDim.x;
  for (std::int64_t i = static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < count; i += stride)
    ds[i] = p[i] * (dp[i] - delta[i / n]);  // i / n: the row (head·N + query) of entry i
}

template <bool kTransA, bool kTransB, Epilogue kEpilogue = Epilogue::kScaled>
cudaError_t Gemm(const float* a, const float* b, float* c, const GemmShape& shape, int heads, float alpha,
                 cudaStream_t stream, const float* lse = nullptr, bool causal = false) {
  const dim3 grid(device::CeilDiv(shape.cols, kTile), device::CeilDiv(shape.rows, kTile), heads);
  TiledGemmKernel<kTransA, kTransB, kEpilogue><<<grid, kThreads, 0, stream>>>(a, b, c, shape, alpha, lse, causal);
  return cudaGetLastError();
}

}  // namespace

cudaError_t LaunchNaiveBackward(const BackwardArgs& args) {
  if (const cudaError_t error = CheckBackwardArgs("naive_bwd", args); error != cudaSuccess) return error;
  const AttentionShape& shape = args.shape;
  const int n = shape.n, d = shape.d, heads = static_cast<int>(shape.Heads());
  const std::int64_t square = static_cast<std::int64_t>(n) * n, panel = static_cast<std::int64_t>(n) * d;
  auto* p = static_cast<float*>(args.workspace);
  float* dp = p + square * heads;
  float* ds = dp + square * heads;
  float* delta = ds + square * heads;
  const auto* q = static_cast<const float*>(args.q);
  const auto* k = static_cast<const float*>(args.k);
  const auto* v = static_cast<const float*>(args.v);
  const auto* dout = static_cast<const float*>(args.dout);
  const cudaStream_t stream = args.stream;
  const GemmShape scores{n, n, d, panel, panel, square};  // N×N from two N×d panels
  const GemmShape panels{n, d, n, square, panel, panel};  // N×d from an N×N matrix and an N×d panel
  cudaError_t error =
      Gemm<false, true, Epilogue::kProbabilities>(q, k, p, scores, heads, shape.scale, stream, args.lse, shape.causal);
  if (error == cudaSuccess) error = Gemm<false, true>(dout, v, dp, scores, heads, 1.0f, stream);
  if (error == cudaSuccess)
    error = backward_device::LaunchRowDot<float>(args.dout, args.o, delta, shape.Heads() * n, d, stream);
  if (error == cudaSuccess) {
    ScoreGradientKernel<<<2048, 256, 0, stream>>>(p, dp, delta, ds, square * heads, n);
    error = cudaGetLastError();
  }
  if (error == cudaSuccess)
    error = Gemm<true, false>(p, dout, static_cast<float*>(args.dv), panels, heads, 1.0f, stream);
  if (error == cudaSuccess)
    error = Gemm<false, false>(ds, k, static_cast<float*>(args.dq), panels, heads, shape.scale, stream);
  if (error == cudaSuccess)
    error = Gemm<true, false>(ds, static_cast<const float*>(args.q), static_cast<float*>(args.dk), panels, heads,
                              shape.scale, stream);
  return error;
}

}  // namespace flashviz::cuda
