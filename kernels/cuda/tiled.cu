// tiled: the same three stages as naive, with shared-memory tiles; S and P still live in HBM.
//
// Changes versus naive: S = QKᵀ and O = PV are computed in 32×32 output tiles; a block stages a 32×32 tile of
// Q and of K (then of P and of V) in shared memory per k-step, so every value read from HBM serves 32 products
// instead of 1, and the loads coalesce. The softmax gives each row a block of 256 threads that reduce the max
// and the sum through a shared-memory tree. Under causal masking the tiles above the diagonal skip their
// arithmetic. What does not change: S and P (B·H·N² floats each) still cross HBM four times.
// Mirrors: FlashAttention-Kernels' tiled kernels (tiled_attention, tiled_attention_2: "stages Q/K/V tiles through
// shared memory").
//
// Measured: kernels/README.md's progression table, from the CSVs of docs/results/ (its index says which run).
#include <cmath>

#include "kernels/cuda/device_common.cuh"
#include "kernels/cuda/tile_sizes.h"
#include "kernels/cuda/variants.h"

namespace flashviz::cuda {
namespace {

constexpr int kTile = tiles::kTiled;     // 32×32 output tile, k-steps of 32
constexpr int kBlockRows = 8;            // a block is 32 × 8 threads; each thread owns 4 rows of its tile
constexpr int kRowsPerThread = kTile / kBlockRows;
constexpr int kSoftmaxThreads = 256;

// S = scale·Q Kᵀ for one 32×32 tile (rows row0.., keys col0..) of one head (blockIdx.z).
__global__ void __launch_bounds__(kTile* kBlockRows)
    TiledScores(const float* __restrict__ q, const float* __restrict__ k, float* __restrict__ s, int n, int d,
                float scale, bool causal) {
  __shared__ float q_tile[kTile][kTile + 1];  // Q rows × k; +1 column: no two threads of a warp share a bank
  __shared__ float k_tile[kTile][kTile + 1];  // K rows × k
  const int tx = threadIdx.x, ty = threadIdx.y;
  const int row0 = blockIdx.y * kTile, col0 = blockIdx.x * kTile;
  const std::int64_t head = blockIdx.z;
  const float* q_head = q + head * n * d;
  const float* k_head = k + head * n * d;
  float* s_head = s + head * static_cast<std::int64_t>(n) * n;

  // Causal: a tile whose every key follows every query of the tile is all −∞; write it, skip the products.
  if (causal && col0 > row0 + kTile - 1) {
    for (int t = 0; t < kRowsPerThread; ++t) {
      const int row = row0 + ty + kBlockRows * t, col = col0 + tx;
      if (row < n && col < n) s_head[static_cast<std::int64_t>(row) * n + col] = -INFINITY;
    }
    return;
  }
  float acc[kRowsPerThread] = {};
  for (int k0 = 0; k0 < d; k0 += kTile) {
    for (int t = 0; t < kRowsPerThread; ++t) {
      const int r = ty + kBlockRows * t;
      const bool in_k = k0 + tx < d;
      q_tile[r][tx] = (row0 + r < n && in_k) ? q_head[static_cast<std::int64_t>(row0 + r) * d + k0 + tx] : 0.0f;
      k_tile[r][tx] = (col0 + r < n && in_k) ? k_head[static_cast<std::int64_t>(col0 + r) * d + k0 + tx] : 0.0f;
    }
    __syncthreads();  // both tiles are complete before anyone reads them
    for (int kk = 0; kk < kTile; ++kk) {
      const float key = k_tile[tx][kk];
      for (int t = 0; t < kRowsPerThread; ++t) acc[t] += q_tile[ty + kBlockRows * t][kk] * key;  // broadcast
    }
    __syncthreads();  // everyone has finished reading before the next k-step overwrites the tiles
  }
  for (int t = 0; t < kRowsPerThread; ++t) {
    const int row = row0 + ty + kBlockRows * t, col = col0 + tx;
    if (row < n && col < n)
      s_head[static_cast<std::int64_t>(row) * n + col] = (causal && col > row) ? -INFINITY : scale * acc[t];
  }
}

// Combines the block's 256 values pairwise through shared memory: log2(256) = 8 steps, a barrier each.
template <typename Combine>
__device__ float BlockReduce(float value, float* scratch, Combine combine) {
  const int tid = threadIdx.x;
  scratch[tid] = value;
  __syncthreads();  // every thread's value is in place
  for (int stride = kSoftmaxThreads / 2; stride > 0; stride /= 2) {
    if (tid < stride) scratch[tid] = combine(scratch[tid], scratch[tid + stride]);
    __syncthreads();  // this level is complete before the next reads it
  }
  const float result = scratch[0];
  __syncthreads();  // everyone has read the result before the scratch is reused
  return result;
}

// P = softmax(S): one block per row (blockIdx.x over B·H·N rows), threads strided along the row.
__global__ void __launch_bounds__(kSoftmaxThreads)
    TiledSoftmax(const float* __restrict__ s, float* __restrict__ p, int n) {
  __shared__ float scratch[kSoftmaxThreads];
  const std::int64_t row = blockIdx.x;
  const float* s_row = s + row * n;
  float* p_row = p + row * n;
  float m = -INFINITY;
  for (int col = threadIdx.x; col < n; col += kSoftmaxThreads) m = fmaxf(m, s_row[col]);
  m = BlockReduce(m, scratch, [](float a, float b) { return fmaxf(a, b); });
  float l = 0.0f;
  for (int col = threadIdx.x; col < n; col += kSoftmaxThreads) l += expf(s_row[col] - m);
  l = BlockReduce(l, scratch, [](float a, float b) { return a + b; });
  const float inv_l = 1.0f / l;
  for (int col = threadIdx.x; col < n; col += kSoftmaxThreads) p_row[col] = expf(s_row[col] - m) * inv_l;
}

// O = P V for one 32 × 32 tile (rows row0.., columns c0.. of d) of one head (blockIdx.z).
__global__ void __launch_bounds__(kTile* kBlockRows)
    TiledOutput(const float* __restrict__ p, const float* __restrict__ v, float* __restrict__ o, int n, int d,
                bool causal) {
  __shared__ float p_tile[kTile][kTile + 1];  // P rows × keys
  __shared__ float v_tile[kTile][kTile + 1];  // keys × columns of V
  const int tx = threadIdx.x, ty = threadIdx.y;
  const int row0 = blockIdx.y * kTile, c0 = blockIdx.x * kTile;
  const std::int64_t head = blockIdx.z;
  const float* p_head = p + head * static_cast<std::int64_t>(n) * n;
  const float* v_head = v + head * n * d;
  // Causal: P[row][key] = 0 for key > row, so keys after the tile's last row add nothing.
  const int key_end = causal ? min(n, row0 + kTile) : n;
  float acc[kRowsPerThread] = {};
  for (int k0 = 0; k0 < key_end; k0 += kTile) {
    for (int t = 0; t < kRowsPerThread; ++t) {
      const int r = ty + kBlockRows * t;
      p_tile[r][tx] = (row0 + r < n && k0 + tx < n) ? p_head[static_cast<std::int64_t>(row0 + r) * n + k0 + tx] : 0.0f;
      v_tile[r][tx] = (k0 + r < n && c0 + tx < d) ? v_head[static_cast<std::int64_t>(k0 + r) * d + c0 + tx] : 0.0f;
    }
    __syncthreads();  // both tiles are complete before anyone reads them
    for (int kk = 0; kk < kTile; ++kk) {
      const float value = v_tile[kk][tx];
      for (int t = 0; t < kRowsPerThread; ++t) acc[t] += p_tile[ty + kBlockRows * t][kk] * value;  // broadcast
    }
    __syncthreads();  // everyone has finished reading before the next step overwrites the tiles
  }
  for (int t = 0; t < kRowsPerThread; ++t) {
    const int row = row0 + ty + kBlockRows * t, col = c0 + tx;
    if (row < n && col < d) o[(head * n + row) * d + col] = acc[t];
  }
}

}  // namespace

std::size_t TiledWorkspaceBytes(const AttentionShape& shape, DType /*dtype*/) {
  return 2 * static_cast<std::size_t>(shape.Heads()) * shape.n * static_cast<std::size_t>(shape.n) * sizeof(float);
}

cudaError_t LaunchTiled(const AttentionArgs& args) {
  if (const cudaError_t invalid = CheckArgs("tiled", args); invalid != cudaSuccess) return invalid;
  const AttentionShape& shape = args.shape;
  const std::int64_t heads = shape.Heads();
  float* s = static_cast<float*>(args.workspace);
  float* p = s + heads * static_cast<std::int64_t>(shape.n) * shape.n;
  const unsigned tiles_n = static_cast<unsigned>(device::CeilDiv(shape.n, kTile));
  const dim3 block(kTile, kBlockRows);

  TiledScores<<<dim3(tiles_n, tiles_n, static_cast<unsigned>(heads)), block, 0, args.stream>>>(
      static_cast<const float*>(args.q), static_cast<const float*>(args.k), s, shape.n, shape.d, shape.scale,
      shape.causal);
  if (const cudaError_t error = cudaGetLastError(); error != cudaSuccess) return error;

  TiledSoftmax<<<static_cast<unsigned>(heads * shape.n), kSoftmaxThreads, 0, args.stream>>>(s, p, shape.n);
  if (const cudaError_t error = cudaGetLastError(); error != cudaSuccess) return error;

  const unsigned tiles_d = static_cast<unsigned>(device::CeilDiv(shape.d, kTile));
  TiledOutput<<<dim3(tiles_d, tiles_n, static_cast<unsigned>(heads)), block, 0, args.stream>>>(
      p, static_cast<const float*>(args.v), static_cast<float*>(args.o), shape.n, shape.d, shape.causal);
  return cudaGetLastError();
}

}  // namespace flashviz::cuda
