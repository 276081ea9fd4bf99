// flash2_wmma: the two matrix products of flash2 on the tensor cores, through WMMA (fp16/bf16 in, fp32 accumulate).
//
// Changes versus flash2_warp (same Q-outer algorithm):
//   1. S_ij = Q_i K_jᵀ and P̃_ij V_j are 16×16×16 WMMA fragment products (wmma::mma_sync, HMMA on the tensor
//      cores) with fp32 accumulators; inputs are fp16 or bf16, half the bytes of fp32. Each warp owns 16 rows
//      of Q_i (B_r = 128 with 8 warps at d ≤ 64, 64 with 4 warps at d = 128) and runs its own softmax, so no
//      barrier is needed between warps for it.
//   2. WMMA does not say which fragment element holds which (row, column). So S_ij goes through shared memory
//      (store_matrix_sync) for the row softmax, two lanes per row, and P̃_ij comes back as an fp16/bf16 A
//      fragment (load_matrix_sync). O_i stays in accumulator fragments all along; to rescale its rows by
//      e^(m_old − m_new) the kernel reads, once, which row each of its accumulator elements belongs to, off a
//      probe fragment loaded from a tile whose every element is its row index.
//   3. cp.async copies of K_{j+1} and V_{j+1} overlap the work on tile j, as in flash2_warp.
// What it costs: S_ij's round trip through shared memory and the repacking of P̃_ij. flash2_mma uses
// mma.sync with the fragment layouts spelled out and keeps P̃_ij in registers instead.
// Mirrors: NVIDIA's counterpart of the Vortex TCU (the Vortex report: an 8×8 tensor unit fed from the register file);
// the CUDA C++ Programming Guide, "Warp Matrix Functions".
//
// Measured: kernels/README.md's progression table, from the CSVs of docs/results/ (its index says which run).
#include <mma.h>

#include <cmath>

#include "kernels/cuda/device_common.cuh"
#include "kernels/cuda/tile_sizes.h"
#include "kernels/cuda/variants.h"

namespace flashviz::cuda {
namespace {

namespace wmma = nvcuda::wmma;
constexpr unsigned kFullMask = 0xffffffffu;
constexpr int kFrag = 16;  // WMMA's m = n = k = 16

template <typename T, int D, int WARPS>
struct WmmaGeometry {
  static constexpr int kThreads = 32 * WARPS;
  static constexpr int kBr = kFrag * WARPS;
  static constexpr int kBc = tiles::kFlash2WmmaBc;
  static constexpr int kStride = D + 8;               // elements: consecutive rows 16 bytes apart modulo 128
  static constexpr int kScoreStride = kBc + 8;        // S scratch row (floats), also P̃'s row (elements of T)
  static constexpr int kTileBytes = kStride * static_cast<int>(sizeof(T));
  static constexpr int kQBytes = kBr * kTileBytes;
  static constexpr int kKVBytes = kBc * kTileBytes;
  static constexpr int kScratchBytes = kFrag * kScoreStride * static_cast<int>(sizeof(float));
  static constexpr int kRowStatBytes = kFrag * static_cast<int>(sizeof(float));  // α, later 1/ℓ, per row
  static constexpr int kWarpBytes = kScratchBytes + 2 * kRowStatBytes;           // (padded to 32 bytes)
  static constexpr int kSharedBytes = kQBytes + 2 * kKVBytes + WARPS * kWarpBytes;
  // load/store_matrix_sync need 256-bit aligned pointers: every region starts at a multiple of 32 bytes.
  static_assert(kQBytes % 32 == 0 && kKVBytes % 32 == 0 && kWarpBytes % 32 == 0, "32-byte aligned regions");
  static_assert(D % kFrag == 0 && kBc % kFrag == 0, "whole fragments");
};

template <typename T>
__device__ __forceinline__ void StoreFour(T* destination, float a, float b, float c, float d);
template <>
__device__ __forceinline__ void StoreFour(__half* destination, float a, float b, float c, float d) {
  const __half2 lo = __floats2half2_rn(a, b), hi = __floats2half2_rn(c, d);
  uint2 bits;
  bits.x = *reinterpret_cast<const unsigned*>(&lo);
  bits.y = *reinterpret_cast<const unsigned*>(&hi);
  *reinterpret_cast<uint2*>(destination) = bits;
}
template <>
__device__ __forceinline__ void StoreFour(__nv_bfloat16* destination, float a, float b, float c, float d) {
  const __nv_bfloat162 lo = __floats2bfloat162_rn(a, b), hi = __floats2bfloat162_rn(c, d);
  uint2 bits;
  bits.x = *reinterpret_cast<const unsigned*>(&lo);
  bits.y = *reinterpret_cast<const unsigned*>(&hi);
  *reinterpret_cast<uint2*>(destination) = bits;
}

// `rows` rows of a (B·H, N, D) tensor of T from `first_row` into a shared tile, 16-byte cp.async copies; rows
// past N become zeros.
template <typename T, int D, int kThreads>
__device__ __forceinline__ void CopyRows(T* tile, int stride, const T* head_base, int first_row, int rows, int n) {
  constexpr int kChunks = D * static_cast<int>(sizeof(T)) / 16;
  constexpr int kPerChunk = 16 / static_cast<int>(sizeof(T));
  for (int idx = threadIdx.x; idx < rows * kChunks; idx += kThreads) {
    const int r = idx / kChunks, c = idx % kChunks;
    const bool valid = first_row + r < n;
    const T* source = valid ? head_base + static_cast<std::int64_t>(first_row + r) * D + c * kPerChunk : head_base;
    device::CpAsync16(tile + r * stride + c * kPerChunk, source, valid);
  }
}

template <typename T, int D, int WARPS>
__global__ void __launch_bounds__(32 * WARPS)
    Flash2Wmma(const T* __restrict__ q, const T* __restrict__ k, const T* __restrict__ v, T* __restrict__ o, int n,
               int tiles_r, float scale_log2, bool causal) {
  using G = WmmaGeometry<T, D, WARPS>;
  using Accumulator = wmma::fragment<wmma::accumulator, kFrag, kFrag, kFrag, float>;
  constexpr int kBc = G::kBc;
  constexpr int kOFrags = D / kFrag;
  extern __shared__ float4 shared4[];
  unsigned char* shared = reinterpret_cast<unsigned char*>(shared4);
  T* q_tile = reinterpret_cast<T*>(shared);                                 // Q_i  B_r × (d + 8)
  T* k_tile = reinterpret_cast<T*>(shared + G::kQBytes);                    // K_j  B_c × (d + 8)
  T* v_tile = reinterpret_cast<T*>(shared + G::kQBytes + G::kKVBytes);      // V_j  B_c × (d + 8)
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  unsigned char* warp_area = shared + G::kQBytes + 2 * G::kKVBytes + warp * G::kWarpBytes;
  float* scores = reinterpret_cast<float*>(warp_area);  // this warp's S_ij rows (fp32), then P̃_ij (T) in place
  T* probs = reinterpret_cast<T*>(warp_area);
  float* row_stat = reinterpret_cast<float*>(warp_area + G::kScratchBytes);  // α per row, at the end 1/ℓ

  const std::int64_t head = blockIdx.x / tiles_r;
  const int tile = static_cast<int>(blockIdx.x % tiles_r);
  const int i = causal ? tiles_r - 1 - tile : tile;
  const int row0 = i * G::kBr;
  const int warp_row0 = row0 + warp * kFrag;
  const T* q_head = q + head * n * D;
  const T* k_head = k + head * n * D;
  const T* v_head = v + head * n * D;
  const int last_row = min(n, row0 + G::kBr) - 1;
  const int tiles_c = causal ? last_row / kBc + 1 : device::CeilDiv(n, kBc);

  CopyRows<T, D, G::kThreads>(q_tile, G::kStride, q_head, row0, G::kBr, n);
  CopyRows<T, D, G::kThreads>(k_tile, G::kStride, k_head, 0, kBc, n);
  device::CpAsyncCommit();  // group {Q_i, K_0}
  CopyRows<T, D, G::kThreads>(v_tile, G::kStride, v_head, 0, kBc, n);
  device::CpAsyncCommit();  // group {V_0}

  // Which row of the 16×16 accumulator each of this thread's elements holds, 4 bits per element: WMMA does not
  // say, so load a tile whose element (r, c) is r and read the answer back.
  unsigned row_of = 0;
  {
    for (int idx = lane; idx < kFrag * kFrag; idx += 32)
      scores[(idx / kFrag) * G::kScoreStride + idx % kFrag] = static_cast<float>(idx / kFrag);
    __syncwarp();  // the probe tile is complete
    Accumulator probe;
    wmma::load_matrix_sync(probe, scores, G::kScoreStride, wmma::mem_row_major);
    static_assert(Accumulator::num_elements * 4 <= 32, "4 bits per element");
#pragma unroll
    for (int e = 0; e < Accumulator::num_elements; ++e) row_of |= static_cast<unsigned>(probe.x[e]) << (4 * e);
    __syncwarp();  // every lane has read the probe before the scratch is reused
  }

  Accumulator o_frag[kOFrags];
#pragma unroll
  for (int f = 0; f < kOFrags; ++f) wmma::fill_fragment(o_frag[f], 0.0f);
  // The softmax maps two lanes to each of the warp's 16 rows, 32 keys each (16-byte chunks 2·c + half).
  const int my_row = lane / 2, half = lane % 2;
  const int row = warp_row0 + my_row;
  float m_run = -INFINITY, l_run = 0.0f;  // m in log2 units; ℓ: this lane's partial sum

  for (int j = 0; j < tiles_c; ++j) {
    const int col0 = j * kBc;
    device::CpAsyncWait<1>();  // K_j (and Q_i) have landed for this thread...
    __syncthreads();           // ...and for every thread

    // S = Q_w K_jᵀ for this warp's 16 rows: kBc/16 accumulators, d/16 steps.
    Accumulator s_frag[kBc / kFrag];
#pragma unroll
    for (int f = 0; f < kBc / kFrag; ++f) wmma::fill_fragment(s_frag[f], 0.0f);
#pragma unroll
    for (int kk = 0; kk < D / kFrag; ++kk) {
      wmma::fragment<wmma::matrix_a, kFrag, kFrag, kFrag, T, wmma::row_major> a;
      wmma::load_matrix_sync(a, q_tile + warp * kFrag * G::kStride + kk * kFrag, G::kStride);
#pragma unroll
      for (int f = 0; f < kBc / kFrag; ++f) {
        // K_j stored row-major (key, d) is Kᵀ stored column-major: the B operand as is.
        wmma::fragment<wmma::matrix_b, kFrag, kFrag, kFrag, T, wmma::col_major> b;
        wmma::load_matrix_sync(b, k_tile + f * kFrag * G::kStride + kk * kFrag, G::kStride);
        wmma::mma_sync(s_frag[f], a, b, s_frag[f]);
      }
    }
    __syncthreads();  // every warp has finished reading K_j: its buffer may take K_{j+1}
    if (j + 1 < tiles_c) CopyRows<T, D, G::kThreads>(k_tile, G::kStride, k_head, col0 + kBc, kBc, n);
    device::CpAsyncCommit();

#pragma unroll
    for (int f = 0; f < kBc / kFrag; ++f)
      wmma::store_matrix_sync(scores + f * kFrag, s_frag[f], G::kScoreStride, wmma::mem_row_major);
    __syncwarp();  // the warp's S rows are in the scratch

    // Online softmax in base 2 on this lane's 32 scores of row `row`.
    const bool needs_mask = col0 + kBc > n || (causal && col0 + kBc - 1 > warp_row0);
    float x[kBc / 2];
    float tile_max = -INFINITY;
#pragma unroll
    for (int c = 0; c < kBc / 8; ++c) {
      const int first = 8 * c + 4 * half;
      const float4 chunk = *reinterpret_cast<const float4*>(scores + my_row * G::kScoreStride + first);
      const float values[4] = {chunk.x, chunk.y, chunk.z, chunk.w};
#pragma unroll
      for (int e = 0; e < 4; ++e) {
        const int col = col0 + first + e;
        float value = values[e] * scale_log2;
        if (needs_mask && (col >= n || (causal && col > row))) value = -INFINITY;
        x[4 * c + e] = value;
        tile_max = fmaxf(tile_max, value);
      }
    }
    tile_max = fmaxf(tile_max, __shfl_xor_sync(kFullMask, tile_max, 1));  // the row's other lane
    const float m_new = fmaxf(m_run, tile_max);
    const float m_use = m_new == -INFINITY ? 0.0f : m_new;
    const float alpha = device::FastExp2(m_run - m_use);
    float row_sum = 0.0f;
#pragma unroll
    for (int e = 0; e < kBc / 2; ++e) {
      x[e] = device::FastExp2(x[e] - m_use);
      row_sum += x[e];
    }
    l_run = alpha * l_run + row_sum;
    m_run = m_new;
    __syncwarp();  // every lane has read its scores: P̃ may overwrite them
#pragma unroll
    for (int c = 0; c < kBc / 8; ++c)
      StoreFour(probs + my_row * G::kScoreStride + 8 * c + 4 * half, x[4 * c], x[4 * c + 1], x[4 * c + 2],
                x[4 * c + 3]);
    if (half == 0) row_stat[my_row] = alpha;
    __syncwarp();  // P̃ and α are in place for the whole warp

    // O_w rows × α, through the row map.
#pragma unroll
    for (int e = 0; e < Accumulator::num_elements; ++e) {
      const float factor = row_stat[(row_of >> (4 * e)) & 15u];
#pragma unroll
      for (int f = 0; f < kOFrags; ++f) o_frag[f].x[e] *= factor;
    }
    device::CpAsyncWait<1>();  // V_j has landed (only K_{j+1} may be in flight)
    __syncthreads();           // ... for every thread

    // O_w += P̃_w V_j
#pragma unroll
    for (int kk = 0; kk < kBc / kFrag; ++kk) {
      wmma::fragment<wmma::matrix_a, kFrag, kFrag, kFrag, T, wmma::row_major> pa;
      wmma::load_matrix_sync(pa, probs + kk * kFrag, G::kScoreStride);
#pragma unroll
      for (int f = 0; f < kOFrags; ++f) {
        wmma::fragment<wmma::matrix_b, kFrag, kFrag, kFrag, T, wmma::row_major> vb;
        wmma::load_matrix_sync(vb, v_tile + kk * kFrag * G::kStride + f * kFrag, G::kStride);
        wmma::mma_sync(o_frag[f], pa, vb, o_frag[f]);
      }
    }
    __syncthreads();  // every warp has finished reading V_j (and its own P̃)
    if (j + 1 < tiles_c) CopyRows<T, D, G::kThreads>(v_tile, G::kStride, v_head, col0 + kBc, kBc, n);
    device::CpAsyncCommit();
  }

  // O_w = diag(ℓ)⁻¹ O_w: the two lanes of a row add their partial sums.
  const float l = l_run + __shfl_xor_sync(kFullMask, l_run, 1);
  if (half == 0) row_stat[my_row] = 1.0f / l;
  __syncwarp();
#pragma unroll
  for (int e = 0; e < Accumulator::num_elements; ++e) {
    const float factor = row_stat[(row_of >> (4 * e)) & 15u];
#pragma unroll
    for (int f = 0; f < kOFrags; ++f) o_frag[f].x[e] *= factor;
  }
  // Out through the scratch, up to 64 columns at a time, so each lane writes a contiguous half row.
  constexpr int kChunkCols = D < kBc ? D : kBc;
  constexpr int kHalfCols = kChunkCols / 2;
#pragma unroll
  for (int chunk = 0; chunk < D / kChunkCols; ++chunk) {
#pragma unroll
    for (int f = 0; f < kChunkCols / kFrag; ++f)
      wmma::store_matrix_sync(scores + f * kFrag, o_frag[chunk * (kChunkCols / kFrag) + f], G::kScoreStride,
                              wmma::mem_row_major);
    __syncwarp();  // the chunk is in the scratch
    if (row < n) {
      T* o_row = o + (head * n + row) * D + chunk * kChunkCols + half * kHalfCols;
      const float* source = scores + my_row * G::kScoreStride + half * kHalfCols;
#pragma unroll
      for (int e = 0; e < kHalfCols; e += 4)
        StoreFour(o_row + e, source[e], source[e + 1], source[e + 2], source[e + 3]);
    }
    __syncwarp();  // every lane has copied its part before the next chunk overwrites the scratch
  }
}

template <typename T, int D, int WARPS>
cudaError_t LaunchWmma(const AttentionArgs& args) {
  using G = WmmaGeometry<T, D, WARPS>;
  const AttentionShape& shape = args.shape;
  if (const cudaError_t error = device::AllowSharedMemory(Flash2Wmma<T, D, WARPS>, G::kSharedBytes);
      error != cudaSuccess)
    return error;
  const int tiles_r = device::CeilDiv(shape.n, G::kBr);
  Flash2Wmma<T, D, WARPS>
      <<<static_cast<unsigned>(shape.Heads() * tiles_r), G::kThreads, G::kSharedBytes, args.stream>>>(
          static_cast<const T*>(args.q), static_cast<const T*>(args.k), static_cast<const T*>(args.v),
          static_cast<T*>(args.o), shape.n, tiles_r, shape.scale * device::kLog2e, shape.causal);
  return cudaGetLastError();
}

// The registered block height per d (tile_sizes.h), or the other one with kFlash2WmmaOtherWarps.
template <typename T, int D>
cudaError_t LaunchWmmaForWarps(const AttentionArgs& args) {
  constexpr int kWarps = tiles::Flash2WmmaWarps(D);
  constexpr int kOtherWarps = kWarps == 8 ? 4 : 8;
  return (args.options & kFlash2WmmaOtherWarps) ? LaunchWmma<T, D, kOtherWarps>(args) : LaunchWmma<T, D, kWarps>(args);
}

template <typename T>
cudaError_t LaunchWmmaForD(const AttentionArgs& args) {
  switch (args.shape.d) {
    case 32: return LaunchWmmaForWarps<T, 32>(args);
    case 64: return LaunchWmmaForWarps<T, 64>(args);
    case 128: return LaunchWmmaForWarps<T, 128>(args);
    default: return cudaErrorInvalidValue;
  }
}

}  // namespace

cudaError_t LaunchFlash2Wmma(const AttentionArgs& args) {
  if (const cudaError_t invalid = CheckArgs("flash2_wmma", args); invalid != cudaSuccess) return invalid;
  if (args.options & ~unsigned{kFlash2WmmaOtherWarps}) return cudaErrorInvalidValue;
  return args.dtype == DType::kFp16 ? LaunchWmmaForD<__half>(args) : LaunchWmmaForD<__nv_bfloat16>(args);
}

}  // namespace flashviz::cuda
