// hw4 kernel `fp32-simt`: FlashAttention-2's forward pass in plain fp32 on the CUDA cores (FFMA), the
// baseline that `tf32x3` is measured against.
//
// Shape: a block of 128 threads owns B_r = 64 query rows and walks K/V tiles of B_c = 64 keys (Q-outer order).
// Thread (ty, tx) = (tid / 8, tid % 8) computes a 4 × 8 register block of S_ij — rows 4ty .. 4ty + 3, keys
// tx + 8c — and a 4 × (kD / 8) block of O_i — the same rows, columns 32h + 4tx .. 32h + 4tx + 3. Every inner
// loop reads float4s from shared memory: 12 16-byte loads feed 128 FFMAs (S: 4 rows of Q_i and 8 rows of K_j
// per 4 columns of d; O: 4 rows of P̃ and 4 rows of V_j per 4 keys).
//   - Q_i (scaled by scale·log2 e) is copied to shared memory once; K_j, V_j arrive by cp.async, double-buffered.
//   - A row's scores live in the 8 lanes tx = 0..7 that share ty: max and sum reduce with three shuffles.
//   - P̃_ij goes through shared memory (row-major) to change from the S layout to the A-operand layout of
//     P̃ V; the 16 rows a warp writes are the 16 rows it reads back, so __syncwarp is the only barrier needed.
// Shared-memory row strides are kD + 4 floats: a float4 row read by the 8 lanes of a quarter-warp at rows
// tx + 8c lands on 8 different 16-byte bank groups (the stride in 16-byte units is odd).
// Head dimension: kD = 32 or 64; other d ≤ 64 zero-padded as in attention_tf32x3.cu.
//
// Measured (NVIDIA H200, 2026-11-21, hw4_bench): 36.7 TFLOP/s at B = 26, N = 32768, d = 64 and at B = 52,
// N = 32768, d = 32 — about PyTorch's fp32 EFFICIENT at d = 64 (34.9), 1.7× it at d = 32 (21.2), and 0.56×
// tf32x3, which is why `auto` does not pick it.
#include "kernels/cuda/hw4/hw4_internal.h"

namespace flashviz::cuda::hw4::detail {
namespace {

constexpr int kThreads = 128;
constexpr int kBr = 64;
constexpr int kBc = 64;
constexpr int kStrideP = kBc + 4;

template <int kD>
struct SimtConfig {
  static constexpr int kStride = kD + 4;
  static constexpr int kTileFloats = kBc * kStride;
  static constexpr int kQFloats = kBr * kStride;
  // Q_i, two stages of (K_j, V_j), P̃_ij
  static constexpr int kSmemBytes = (kQFloats + 4 * kTileFloats + kBr * kStrideP) * 4;
  static constexpr int kColGroups = kD / 32;  // float4 column groups of O per thread
};

template <int kD, bool kVec>
__device__ __forceinline__ void LoadRows(const float* __restrict__ src, int n, int d, int row0, float* dst,
                                         float scale) {
  constexpr int kStride = SimtConfig<kD>::kStride;
  if constexpr (kVec) {
    constexpr int kChunksPerRow = kD / 4;
    constexpr int kIters = kBc * kChunksPerRow / kThreads;
#pragma unroll
    for (int it = 0; it < kIters; ++it) {
      const int i = static_cast<int>(threadIdx.x) + it * kThreads;
      const int r = i / kChunksPerRow, c = (i % kChunksPerRow) * 4;
      const bool valid = row0 + r < n;
      float4 x = valid ? *reinterpret_cast<const float4*>(src + static_cast<long long>(row0 + r) * kD + c)
                       : make_float4(0.0f, 0.0f, 0.0f, 0.0f);
      x.x *= scale;
      x.y *= scale;
      x.z *= scale;
      x.w *= scale;
      *reinterpret_cast<float4*>(dst + r * kStride + c) = x;
    }
  } else {
    for (int i = static_cast<int>(threadIdx.x); i < kBc * kD; i += kThreads) {
      const int r = i / kD, c = i % kD;
      dst[r * kStride + c] = row0 + r < n && c < d ? src[static_cast<long long>(row0 + r) * d + c] * scale : 0.0f;
    }
  }
}

template <int kD, bool kVec>
__device__ __forceinline__ void LoadKvTile(const float* __restrict__ k, const float* __restrict__ v, int n, int d,
                                           int key0, float* ks, float* vs) {
  constexpr int kStride = SimtConfig<kD>::kStride;
  if constexpr (kVec) {
    constexpr int kChunksPerRow = kD / 4;
    constexpr int kIters = kBc * kChunksPerRow / kThreads;
#pragma unroll
    for (int it = 0; it < kIters; ++it) {
      const int i = static_cast<int>(threadIdx.x) + it * kThreads;
      const int r = i / kChunksPerRow, c = (i % kChunksPerRow) * 4;
      const bool valid = key0 + r < n;
      const long long offset = static_cast<long long>(valid ? key0 + r : 0) * kD + c;
      CpAsync16(ks + r * kStride + c, k + offset, valid ? 16 : 0);
      CpAsync16(vs + r * kStride + c, v + offset, valid ? 16 : 0);
    }
  } else {
    LoadRows<kD, false>(k, n, d, key0, ks, 1.0f);
    LoadRows<kD, false>(v, n, d, key0, vs, 1.0f);
  }
}

template <int kD, bool kVec>
__global__ void __launch_bounds__(kThreads, 2) Fp32SimtKernel(const KernelParams p) {
  using C = SimtConfig<kD>;
  constexpr int kStride = C::kStride;
  constexpr int kG = C::kColGroups;
  extern __shared__ float4 smem_raw[];
  float* const qs = reinterpret_cast<float*>(smem_raw);
  float* const kv = qs + C::kQFloats;  // stage s: K at kv + 2s·tile, V at kv + (2s + 1)·tile
  float* const ps = kv + 4 * C::kTileFloats;

  const long long head = blockIdx.x / p.row_tiles;
  const int tile = static_cast<int>(blockIdx.x % p.row_tiles);
  const float* const q = p.q + head * p.qkv_stride;
  const float* const k = p.k + head * p.qkv_stride;
  const float* const v = p.v + head * p.qkv_stride;
  float* const o = p.o + head * p.o_stride;
  const int n = p.n, d = p.d;
  const int ty = static_cast<int>(threadIdx.x) / 8, tx = static_cast<int>(threadIdx.x) % 8;
  const int kv_tiles = (n + kBc - 1) / kBc;

  LoadKvTile<kD, kVec>(k, v, n, d, 0, kv, kv + C::kTileFloats);
  CpAsyncCommit();
  LoadRows<kD, kVec>(q, n, d, tile * kBr, qs, p.scale_log2);

  float o_acc[4][4 * kG] = {};
  float m_run[4], l_run[4];
#pragma unroll
  for (int i = 0; i < 4; ++i) m_run[i] = -INFINITY, l_run[i] = 0.0f;

  for (int j = 0; j < kv_tiles; ++j) {
    const float* const ks = kv + 2 * (j & 1) * C::kTileFloats;
    const float* const vs = ks + C::kTileFloats;
    if (j + 1 < kv_tiles) {
      float* const next = kv + 2 * ((j + 1) & 1) * C::kTileFloats;
      LoadKvTile<kD, kVec>(k, v, n, d, (j + 1) * kBc, next, next + C::kTileFloats);
      CpAsyncCommit();
      CpAsyncWait<1>();
    } else {
      CpAsyncWait<0>();
    }
    __syncthreads();  // K_j, V_j (and Q_i at j = 0) visible to every thread

    // S_ij: rows 4ty + i, keys tx + 8c.
    float s[4][8] = {};
#pragma unroll 4
    for (int e = 0; e < kD; e += 4) {
      float4 a[4], b[8];
#pragma unroll
      for (int i = 0; i < 4; ++i) a[i] = *reinterpret_cast<const float4*>(qs + (4 * ty + i) * kStride + e);
#pragma unroll
      for (int c = 0; c < 8; ++c) b[c] = *reinterpret_cast<const float4*>(ks + (tx + 8 * c) * kStride + e);
#pragma unroll
      for (int i = 0; i < 4; ++i)
#pragma unroll
        for (int c = 0; c < 8; ++c) {
          s[i][c] = fmaf(a[i].x, b[c].x, s[i][c]);
          s[i][c] = fmaf(a[i].y, b[c].y, s[i][c]);
          s[i][c] = fmaf(a[i].z, b[c].z, s[i][c]);
          s[i][c] = fmaf(a[i].w, b[c].w, s[i][c]);
        }
    }
    if ((j + 1) * kBc > n) {
#pragma unroll
      for (int c = 0; c < 8; ++c)
        if (j * kBc + tx + 8 * c >= n)
#pragma unroll
          for (int i = 0; i < 4; ++i) s[i][c] = -INFINITY;
    }

    // Online softmax per row (base 2), reduced over the 8 lanes tx that hold the row.
    float alpha[4];
#pragma unroll
    for (int i = 0; i < 4; ++i) {
      float m_new = m_run[i];
#pragma unroll
      for (int c = 0; c < 8; ++c) m_new = fmaxf(m_new, s[i][c]);
      m_new = fmaxf(m_new, __shfl_xor_sync(0xffffffffu, m_new, 1));
      m_new = fmaxf(m_new, __shfl_xor_sync(0xffffffffu, m_new, 2));
      m_new = fmaxf(m_new, __shfl_xor_sync(0xffffffffu, m_new, 4));
      alpha[i] = Ex2(m_run[i] - m_new);
      m_run[i] = m_new;
      float sum = 0.0f;
#pragma unroll
      for (int c = 0; c < 8; ++c) sum += (s[i][c] = Ex2(s[i][c] - m_new));
      l_run[i] = l_run[i] * alpha[i] + sum;  // this lane's share; summed over tx at the end
    }
    // P̃_ij to shared memory, row-major; this warp's rows only.
#pragma unroll
    for (int i = 0; i < 4; ++i)
#pragma unroll
      for (int c = 0; c < 8; ++c) ps[(4 * ty + i) * kStrideP + tx + 8 * c] = s[i][c];
    __syncwarp();

    // O_i ← α O_i + P̃_ij V_j: rows 4ty + i, columns 32h + 4tx + (0..3).
#pragma unroll
    for (int i = 0; i < 4; ++i)
#pragma unroll
      for (int c = 0; c < 4 * kG; ++c) o_acc[i][c] *= alpha[i];
#pragma unroll 2
    for (int key = 0; key < kBc; key += 4) {
      float4 a[4], b[4][kG];
#pragma unroll
      for (int i = 0; i < 4; ++i) a[i] = *reinterpret_cast<const float4*>(ps + (4 * ty + i) * kStrideP + key);
#pragma unroll
      for (int kk = 0; kk < 4; ++kk)
#pragma unroll
        for (int h = 0; h < kG; ++h)
          b[kk][h] = *reinterpret_cast<const float4*>(vs + (key + kk) * kStride + 32 * h + 4 * tx);
#pragma unroll
      for (int i = 0; i < 4; ++i) {
        const float pa[4] = {a[i].x, a[i].y, a[i].z, a[i].w};
#pragma unroll
        for (int kk = 0; kk < 4; ++kk)
#pragma unroll
          for (int h = 0; h < kG; ++h) {
            o_acc[i][4 * h + 0] = fmaf(pa[kk], b[kk][h].x, o_acc[i][4 * h + 0]);
            o_acc[i][4 * h + 1] = fmaf(pa[kk], b[kk][h].y, o_acc[i][4 * h + 1]);
            o_acc[i][4 * h + 2] = fmaf(pa[kk], b[kk][h].z, o_acc[i][4 * h + 2]);
            o_acc[i][4 * h + 3] = fmaf(pa[kk], b[kk][h].w, o_acc[i][4 * h + 3]);
          }
      }
    }
    __syncthreads();  // the stage (and P̃, within the warp) is free for the next iteration
  }

#pragma unroll
  for (int i = 0; i < 4; ++i) {
    float l = l_run[i];
    l += __shfl_xor_sync(0xffffffffu, l, 1);
    l += __shfl_xor_sync(0xffffffffu, l, 2);
    l += __shfl_xor_sync(0xffffffffu, l, 4);
    const float inv = 1.0f / l;
    const int row = tile * kBr + 4 * ty + i;
    if (row >= n) continue;
#pragma unroll
    for (int h = 0; h < kG; ++h) {
      const int col = 32 * h + 4 * tx;
      if constexpr (kVec) {
        *reinterpret_cast<float4*>(o + static_cast<long long>(row) * kD + col) =
            make_float4(o_acc[i][4 * h] * inv, o_acc[i][4 * h + 1] * inv, o_acc[i][4 * h + 2] * inv,
                        o_acc[i][4 * h + 3] * inv);
      } else {
#pragma unroll
        for (int c = 0; c < 4; ++c)
          if (col + c < d) o[static_cast<long long>(row) * d + col + c] = o_acc[i][4 * h + c] * inv;
      }
    }
  }
}

template <int kD, bool kVec>
cudaError_t Launch(const KernelParams& p, long long heads, cudaStream_t stream) {
  auto* kernel = Fp32SimtKernel<kD, kVec>;
  constexpr int kSmem = SimtConfig<kD>::kSmemBytes;
  if (const cudaError_t e = cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, kSmem);
      e != cudaSuccess)
    return e;
  return LaunchInSlices(p, heads, kBr, [&](const KernelParams& slice, unsigned blocks) {
    kernel<<<blocks, kThreads, kSmem, stream>>>(slice);
  });
}

}  // namespace

cudaError_t LaunchFp32Simt(const KernelParams& p, long long heads, unsigned, cudaStream_t stream) {
  const auto aligned = [](const void* ptr) { return reinterpret_cast<std::uintptr_t>(ptr) % 16 == 0; };
  const bool vec_layout = aligned(p.q) && aligned(p.k) && aligned(p.v) && aligned(p.o) && p.qkv_stride % 4 == 0 &&
                          p.o_stride % 4 == 0;
  if (p.d == 64 && vec_layout) return Launch<64, true>(p, heads, stream);
  if (p.d == 32 && vec_layout) return Launch<32, true>(p, heads, stream);
  if (p.d <= 32) return Launch<32, false>(p, heads, stream);
  if (p.d <= 64) return Launch<64, false>(p, heads, stream);
  return cudaErrorInvalidValue;
}

}  // namespace flashviz::cuda::hw4::detail
