// naive: standard attention as three kernels, one thread per output element; S and P live in HBM.
//
// Changes versus the previous variant: none, this is the baseline. S = scale·QKᵀ is computed and written to
// HBM, P = softmax(S) is read and written back, O = PV reads P once more: B·H·N² floats go through HBM four
// times, so the run time grows with N² bytes long before the arithmetic matters.
// Mirrors: the Vortex report's standard-attention baseline and FlashAttention-Kernels' first kernel
// (naive_attention: "materializes the full N×N score matrix in HBM").
//
// Measured: kernels/README.md's progression table, from the CSVs of docs/results/ (its index says which run).
#include <cmath>

#include "kernels/cuda/device_common.cuh"
#include "kernels/cuda/variants.h"

namespace flashviz::cuda {
namespace {

constexpr int kThreads = 256;

// S[row][col] = scale · Q[row]·K[col] for one head (blockIdx.y): one thread per element, d products each.
// Neighbouring threads read neighbouring rows of K, d floats apart: the loads do not coalesce.
__global__ void NaiveScores(const float* __restrict__ q, const float* __restrict__ k, float* __restrict__ s, int n,
                            int d, float scale, bool causal) {
  const std::int64_t cells = static_cast<std::int64_t>(n) * n;
  const std::int64_t cell = static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (cell >= cells) return;
  const int row = static_cast<int>(cell / n);
  const int col = static_cast<int>(cell % n);
  const std::int64_t head = blockIdx.y;
  const float* q_row = q + (head * n + row) * d;
  const float* k_row = k + (head * n + col) * d;
  float dot = 0.0f;
  for (int e = 0; e < d; ++e) dot += q_row[e] * k_row[e];
  // Causal: a key after the query gets −∞, so the softmax gives it weight e^−∞ = 0.
  s[head * cells + cell] = (causal && col > row) ? -INFINITY : scale * dot;
}

// P = softmax(S), one thread per row of S (B·H·N rows): the max, the sum of e^(s − m), then the division; three
// passes over the row. Every row keeps key 0 unmasked, so m is finite.
__global__ void NaiveSoftmax(const float* __restrict__ s, float* __restrict__ p, int n, std::int64_t rows) {
  const std::int64_t row = static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (row >= rows) return;
  const float* s_row = s + row * n;
  float* p_row = p + row * n;
  float m = -INFINITY;
  for (int col = 0; col < n; ++col) m = fmaxf(m, s_row[col]);
  float l = 0.0f;
  for (int col = 0; col < n; ++col) l += expf(s_row[col] - m);
  const float inv_l = 1.0f / l;
  for (int col = 0; col < n; ++col) p_row[col] = expf(s_row[col] - m) * inv_l;
}

// O[row][c] = Σ_j P[row][j] · V[j][c] for one head (blockIdx.y): one thread per element, N products each.
__global__ void NaiveOutput(const float* __restrict__ p, const float* __restrict__ v, float* __restrict__ o, int n,
                            int d) {
  const std::int64_t cells = static_cast<std::int64_t>(n) * d;
  const std::int64_t cell = static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (cell >= cells) return;
  const int row = static_cast<int>(cell / d);
  const int c = static_cast<int>(cell % d);
  const std::int64_t head = blockIdx.y;
  const float* p_row = p + (head * n + row) * static_cast<std::int64_t>(n);
  const float* v_col = v + head * cells + c;
  float acc = 0.0f;
  for (int j = 0; j < n; ++j) acc += p_row[j] * v_col[static_cast<std::int64_t>(j) * d];
  o[head * cells + cell] = acc;
}

}  // namespace

std::size_t NaiveWorkspaceBytes(const AttentionShape& shape, DType /*dtype*/) {
  return 2 * static_cast<std::size_t>(shape.Heads()) * shape.n * static_cast<std::size_t>(shape.n) * sizeof(float);
}

cudaError_t LaunchNaive(const AttentionArgs& args) {
  if (const cudaError_t invalid = CheckArgs("naive", args); invalid != cudaSuccess) return invalid;
  const AttentionShape& shape = args.shape;
  const std::int64_t heads = shape.Heads();
  const std::int64_t cells = static_cast<std::int64_t>(shape.n) * shape.n;
  float* s = static_cast<float*>(args.workspace);
  float* p = s + heads * cells;
  const auto* q = static_cast<const float*>(args.q);
  const auto* k = static_cast<const float*>(args.k);
  const auto* v = static_cast<const float*>(args.v);
  auto* o = static_cast<float*>(args.o);

  const dim3 score_grid(static_cast<unsigned>((cells + kThreads - 1) / kThreads), static_cast<unsigned>(heads));
  NaiveScores<<<score_grid, kThreads, 0, args.stream>>>(q, k, s, shape.n, shape.d, shape.scale, shape.causal);
  if (const cudaError_t error = cudaGetLastError(); error != cudaSuccess) return error;

  const std::int64_t rows = heads * shape.n;
  NaiveSoftmax<<<static_cast<unsigned>((rows + kThreads - 1) / kThreads), kThreads, 0, args.stream>>>(s, p, shape.n,
                                                                                                      rows);
  if (const cudaError_t error = cudaGetLastError(); error != cudaSuccess) return error;

  const std::int64_t out_cells = static_cast<std::int64_t>(shape.n) * shape.d;
  const dim3 out_grid(static_cast<unsigned>((out_cells + kThreads - 1) / kThreads), static_cast<unsigned>(heads));
  NaiveOutput<<<out_grid, kThreads, 0, args.stream>>>(p, v, o, shape.n, shape.d);
  return cudaGetLastError();
}

}  // namespace flashviz::cuda
