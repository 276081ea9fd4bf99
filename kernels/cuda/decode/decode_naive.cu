// decode_naive: the starting point of the decoding progression. One block per (sequence, query head), no split:
// each block walks every key of its KV head's cache for each of its R query rows, so the cache is read H/G times
// (the repeats mostly from L2 when the heads of a group run together) and a batch of B sequences is only B·H blocks.
// Four warps take interleaved keys; a warp handles one key at a time, each lane d/32 consecutive elements (4 or 8
// bytes), q·k summed by shuffles, the online softmax in fp32 (m, ℓ, O per warp), the warps merged at the end.
// Exact to fp32 (no rounding of P̃): it is also the baseline the faster kernels' errors compare with.
#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <type_traits>

#include "kernels/cuda/decode/decode_variants.h"
#include "kernels/cuda/device_common.cuh"

namespace flashviz::cuda {
namespace {

constexpr int kWarps = 4;

template <typename T, int kPerLane>
__device__ __forceinline__ void LoadLane(const T* source, float (&out)[kPerLane]) {
  // kPerLane 16-bit elements in one 4- or 8-byte load.
  using Vector = std::conditional_t<kPerLane == 4, uint2, unsigned>;
  union {
    Vector vector;
    T element[kPerLane];
  } bits;
  bits.vector = *reinterpret_cast<const Vector*>(source);
#pragma unroll
  for (int u = 0; u < kPerLane; ++u) out[u] = device::ToFloat(bits.element[u]);
}

template <typename T, int kD>
__global__ void __launch_bounds__(32 * kWarps)
    DecodeNaiveKernel(const T* __restrict__ q, const T* __restrict__ k, const T* __restrict__ v, T* __restrict__ o,
                      int heads, int kv_heads, int q_rows, int kv_len, float scale_log2) {
  constexpr int kPerLane = kD / 32;
  __shared__ float merge_o[kWarps][kD];
  __shared__ float merge_m[kWarps], merge_l[kWarps];
  const int h = blockIdx.x, b = blockIdx.y, warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  const int g = static_cast<int>(static_cast<std::int64_t>(h) * kv_heads / heads);
  const std::int64_t head_offset = (static_cast<std::int64_t>(b) * kv_heads + g) * kv_len * kD + lane * kPerLane;
  for (int r = 0; r < q_rows; ++r) {
    const std::int64_t row = (static_cast<std::int64_t>(b) * heads + h) * q_rows + r;
    float q_lane[kPerLane], acc[kPerLane] = {};
    LoadLane<T, kPerLane>(q + row * kD + lane * kPerLane, q_lane);
    float m = -INFINITY, l = 0.0f;
    for (int key = warp; key < kv_len; key += kWarps) {
      float k_lane[kPerLane], v_lane[kPerLane];
      LoadLane<T, kPerLane>(k + head_offset + static_cast<std::int64_t>(key) * kD, k_lane);
      LoadLane<T, kPerLane>(v + head_offset + static_cast<std::int64_t>(key) * kD, v_lane);
      float dot = 0.0f;
#pragma unroll
      for (int u = 0; u < kPerLane; ++u) dot += q_lane[u] * k_lane[u];
#pragma unroll
      for (int offset = 16; offset > 0; offset /= 2) dot += __shfl_xor_sync(0xffffffffu, dot, offset);
      const float s = dot * scale_log2, m_new = fmaxf(m, s);
      const float alpha = exp2f(m - m_new), p = exp2f(s - m_new);
      l = l * alpha + p;
#pragma unroll
      for (int u = 0; u < kPerLane; ++u) acc[u] = acc[u] * alpha + p * v_lane[u];
      m = m_new;
    }
#pragma unroll
    for (int u = 0; u < kPerLane; ++u) merge_o[warp][lane * kPerLane + u] = acc[u];
    if (lane == 0) {
      merge_m[warp] = m;
      merge_l[warp] = l;
    }
    __syncthreads();  // the four warps' (m, ℓ, O) are in shared memory
    float m_all = -INFINITY;
#pragma unroll
    for (int w = 0; w < kWarps; ++w) m_all = fmaxf(m_all, merge_m[w]);
    for (int col = threadIdx.x; col < kD; col += 32 * kWarps) {
      float l_all = 0.0f, o_all = 0.0f;
#pragma unroll
      for (int w = 0; w < kWarps; ++w) {
        const float alpha = exp2f(merge_m[w] - m_all);  // 0 for a warp with no key (N < 4)
        l_all += alpha * merge_l[w];
        o_all += alpha * merge_o[w][col];
      }
      o[row * kD + col] = device::FromFloat<T>(o_all / l_all);
    }
    __syncthreads();  // the merge is read before the next row overwrites it
  }
}

template <typename T, int kD>
cudaError_t LaunchTyped(const DecodeArgs& args) {
  const DecodeLaunchShape& s = args.shape;
  const dim3 grid(static_cast<unsigned>(s.heads), static_cast<unsigned>(s.batch));
  DecodeNaiveKernel<T, kD><<<grid, 32 * kWarps, 0, args.stream>>>(
      static_cast<const T*>(args.q), static_cast<const T*>(args.k), static_cast<const T*>(args.v),
      static_cast<T*>(args.o), s.heads, s.kv_heads, s.q_rows, s.kv_len, s.Scale() * device::kLog2e);
  return cudaGetLastError();
}

}  // namespace

cudaError_t LaunchDecodeNaive(const DecodeArgs& args) {
  if (const cudaError_t error = CheckDecodeArgs("decode_naive", args); error != cudaSuccess) return error;
  const bool half = args.dtype == DType::kFp16;
  if (args.shape.d == 64) return half ? LaunchTyped<__half, 64>(args) : LaunchTyped<__nv_bfloat16, 64>(args);
  return half ? LaunchTyped<__half, 128>(args) : LaunchTyped<__nv_bfloat16, 128>(args);
}

}  // namespace flashviz::cuda
