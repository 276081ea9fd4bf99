// hw4 kernel `fp32-general`: plain fp32 FlashAttention-2 for any head dimension up to kMaxHeadDim — the path
// for every valid file whose d the fast kernels (d ≤ 64) do not take. Correct first, reasonably quick second.
//
// Shape: a block of kRows × 8 threads owns kRows query rows (16, or 8 when 16 rows of Q_i and O_i do not fit
// in the device's shared memory) and walks K/V tiles of B_c = 64 keys. Q_i (scaled by scale·log2 e) and the
// running O_i stay in shared memory (kRows × d each); K_j and V_j pass through one 64 × 64 staging buffer,
// 64 columns of d at a time, so shared memory grows with d only through Q_i and O_i.
// Thread (r, c8) = (tid / 8, tid % 8) owns row r: keys c8 + 8c of S_ij (a row's scores sit in 8 neighbouring
// lanes, reduced with three shuffles) and the columns c8 + 8c of each 64-wide chunk of O_i.
#include "kernels/cuda/hw4/hw4_internal.h"

namespace flashviz::cuda::hw4::detail {
namespace {

constexpr int kBc = 64;
constexpr int kChunk = 64;            // columns of d staged at a time
constexpr int kStageStride = kChunk + 1;  // K chunk read along rows tx + 8c: odd stride, no bank conflicts

std::size_t GeneralSmemBytes(int rows, int d) {
  return sizeof(float) * (2 * static_cast<std::size_t>(rows) * d  // Q_i, O_i
                          + static_cast<std::size_t>(kBc) * kStageStride  // K_j / V_j chunk
                          + static_cast<std::size_t>(rows) * (kBc + 1)    // P̃_ij
                          + rows);                                        // α per row
}

template <int kRows>
__global__ void __launch_bounds__(kRows * 8) Fp32GeneralKernel(const KernelParams p) {
  constexpr int kThreads = kRows * 8;
  extern __shared__ float4 smem_raw[];
  const int n = p.n, d = p.d;
  float* const qs = reinterpret_cast<float*>(smem_raw);
  float* const os = qs + kRows * d;
  float* const stage = os + kRows * d;
  float* const ps = stage + kBc * kStageStride;
  float* const alpha_s = ps + kRows * (kBc + 1);

  const long long head = blockIdx.x / p.row_tiles;
  const int tile = static_cast<int>(blockIdx.x % p.row_tiles);
  const float* const q = p.q + head * p.qkv_stride;
  const float* const k = p.k + head * p.qkv_stride;
  const float* const v = p.v + head * p.qkv_stride;
  float* const o = p.o + head * p.o_stride;
  const int r = static_cast<int>(threadIdx.x) / 8, c8 = static_cast<int>(threadIdx.x) % 8;
  const int row0 = tile * kRows;

  for (int i = static_cast<int>(threadIdx.x); i < kRows * d; i += kThreads) {
    const int rr = i / d, cc = i % d;
    qs[i] = row0 + rr < n ? q[static_cast<long long>(row0 + rr) * d + cc] * p.scale_log2 : 0.0f;
    os[i] = 0.0f;
  }
  float m_run = -INFINITY, l_run = 0.0f;  // row r's m_i and ℓ_i, identical in its 8 lanes

  const int kv_tiles = (n + kBc - 1) / kBc;
  for (int j = 0; j < kv_tiles; ++j) {
    const int key0 = j * kBc;
    // S_ij, 64 columns of d at a time.
    float s[8] = {};
    for (int e0 = 0; e0 < d; e0 += kChunk) {
      const int width = min(kChunk, d - e0);
      __syncthreads();  // the previous chunk (or V_j of the last tile) has been read by every thread
      for (int i = static_cast<int>(threadIdx.x); i < kBc * width; i += kThreads) {
        const int key = i / width, cc = i % width;
        stage[key * kStageStride + cc] = key0 + key < n ? k[static_cast<long long>(key0 + key) * d + e0 + cc] : 0.0f;
      }
      __syncthreads();  // K_j chunk staged (and Q_i, O_i initialised on the first pass)
      for (int cc = 0; cc < width; ++cc) {
        const float qv = qs[r * d + e0 + cc];
#pragma unroll
        for (int c = 0; c < 8; ++c) s[c] = fmaf(qv, stage[(c8 + 8 * c) * kStageStride + cc], s[c]);
      }
    }
    float m_new = m_run;
#pragma unroll
    for (int c = 0; c < 8; ++c) {
      if (key0 + c8 + 8 * c >= n) s[c] = -INFINITY;
      m_new = fmaxf(m_new, s[c]);
    }
    m_new = fmaxf(m_new, __shfl_xor_sync(0xffffffffu, m_new, 1));
    m_new = fmaxf(m_new, __shfl_xor_sync(0xffffffffu, m_new, 2));
    m_new = fmaxf(m_new, __shfl_xor_sync(0xffffffffu, m_new, 4));
    const float alpha = Ex2(m_run - m_new);
    float sum = 0.0f;
#pragma unroll
    for (int c = 0; c < 8; ++c) sum += (s[c] = Ex2(s[c] - m_new));
    sum += __shfl_xor_sync(0xffffffffu, sum, 1);
    sum += __shfl_xor_sync(0xffffffffu, sum, 2);
    sum += __shfl_xor_sync(0xffffffffu, sum, 4);
    l_run = l_run * alpha + sum;
    m_run = m_new;
#pragma unroll
    for (int c = 0; c < 8; ++c) ps[r * (kBc + 1) + c8 + 8 * c] = s[c];
    if (c8 == 0) alpha_s[r] = alpha;

    // O_i ← α O_i + P̃_ij V_j, 64 columns at a time; element (r, e0 + c8 + 8c) belongs to this thread alone.
    for (int e0 = 0; e0 < d; e0 += kChunk) {
      const int width = min(kChunk, d - e0);
      __syncthreads();  // P̃_ij and α written; the staging buffer is free
      for (int i = static_cast<int>(threadIdx.x); i < kBc * width; i += kThreads) {
        const int key = i / width, cc = i % width;
        stage[key * kStageStride + cc] = key0 + key < n ? v[static_cast<long long>(key0 + key) * d + e0 + cc] : 0.0f;
      }
      __syncthreads();  // V_j chunk staged
      const float a = alpha_s[r];
#pragma unroll
      for (int c = 0; c < 8; ++c) {
        const int cc = c8 + 8 * c;
        if (cc >= width) break;
        float acc = os[r * d + e0 + cc] * a;
        for (int key = 0; key < kBc; ++key) acc = fmaf(ps[r * (kBc + 1) + key], stage[key * kStageStride + cc], acc);
        os[r * d + e0 + cc] = acc;
      }
    }
  }
  __syncthreads();  // every thread is done with α and has its part of O_i in shared memory
  if (c8 == 0) alpha_s[r] = l_run;  // α's slot now holds ℓ_i
  __syncthreads();
  for (int i = static_cast<int>(threadIdx.x); i < kRows * d; i += kThreads) {
    const int rr = i / d, cc = i % d;
    if (row0 + rr < n) o[static_cast<long long>(row0 + rr) * d + cc] = os[i] / alpha_s[rr];
  }
}

template <int kRows>
cudaError_t Launch(const KernelParams& p, long long heads, cudaStream_t stream) {
  auto* kernel = Fp32GeneralKernel<kRows>;
  const std::size_t smem = GeneralSmemBytes(kRows, p.d);
  if (const cudaError_t e =
          cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, static_cast<int>(smem));
      e != cudaSuccess)
    return e;
  return LaunchInSlices(p, heads, kRows, [&](const KernelParams& slice, unsigned blocks) {
    kernel<<<blocks, kRows * 8, smem, stream>>>(slice);
  });
}

int MaxOptinSharedMemory() {
  int device = 0, bytes = 0;
  if (cudaGetDevice(&device) != cudaSuccess ||
      cudaDeviceGetAttribute(&bytes, cudaDevAttrMaxSharedMemoryPerBlockOptin, device) != cudaSuccess)
    return 48 * 1024;
  return bytes;
}

}  // namespace

int Fp32GeneralRowsPerBlock(int d) {
  const std::size_t limit = static_cast<std::size_t>(MaxOptinSharedMemory());
  if (GeneralSmemBytes(16, d) <= limit) return 16;
  if (GeneralSmemBytes(8, d) <= limit) return 8;
  return 0;
}

std::optional<std::string> Fp32GeneralNotApplicable(int d) {
  if (Fp32GeneralRowsPerBlock(d) == 0)
    return "d = " + std::to_string(d) + ": 8 rows of Q_i and O_i need " + std::to_string(GeneralSmemBytes(8, d)) +
           " bytes of shared memory, more than this GPU gives a block (" + std::to_string(MaxOptinSharedMemory()) + ")";
  return std::nullopt;
}

cudaError_t LaunchFp32General(const KernelParams& p, long long heads, unsigned, cudaStream_t stream) {
  switch (Fp32GeneralRowsPerBlock(p.d)) {
    case 16: return Launch<16>(p, heads, stream);
    case 8: return Launch<8>(p, heads, stream);
    default: return cudaErrorInvalidValue;
  }
}

}  // namespace flashviz::cuda::hw4::detail
