// What every backward variant shares on the device: the preprocessing step D = rowsum(dO ∘ O) (FlashAttention-2's
// first kernel of the backward pass), the paired atomic add into dQ and the conversion of an fp32 accumulator into
// the output dtype. Nothing
// here is a schedule; the variants are in their files.
#pragma once

#include <cuda_runtime.h>

#include <cstdint>

#include "kernels/cuda/device_common.cuh"

namespace flashviz::cuda::backward_device {

// D_r = Σ_e dO_re · O_re for every row r of every head (B·H·N rows of d elements), one warp per row, fp32 sums.
// dS = P ∘ (dP − D) needs it for whole rows before any K/V tile is done, so it is a pass of its own.
template <typename T>
__global__ void RowDotKernel(const T* __restrict__ dout, const T* __restrict__ o, float* __restrict__ delta,
                             std::int64_t rows, int d) {
  const std::int64_t row = static_cast<std::int64_t>(blockIdx.x) * (blockDim.x / 32) + threadIdx.x / 32;
  const int lane = threadIdx.x % 32;
  if (row >= rows) return;
  const T* dout_row = dout + row * d;
  const T* o_row = o + row * d;
  float sum = 0.0f;
  for (int e = lane; e < d; e += 32) sum += device::ToFloat(dout_row[e]) * device::ToFloat(o_row[e]);
#pragma unroll
  for (int offset = 16; offset > 0; offset /= 2) sum += __shfl_xor_sync(0xffffffffu, sum, offset);
  if (lane == 0) delta[row] = sum;
}

template <typename T>
cudaError_t LaunchRowDot(const void* dout, const void* o, float* delta, std::int64_t rows, int d, cudaStream_t stream) {
  constexpr int kWarps = 8;
  const auto blocks = static_cast<unsigned>((rows + kWarps - 1) / kWarps);
  RowDotKernel<T>
      <<<blocks, kWarps * 32, 0, stream>>>(static_cast<const T*>(dout), static_cast<const T*>(o), delta, rows, d);
  return cudaGetLastError();
}

// target[0] += x, target[1] += y: one vector atomic (RED.E.ADD.F32x2) on sm_90, where the float2 overload exists.
// dQ_i's rows are added into by every K/V tile's block at once.
__device__ __forceinline__ void AtomicAddPair(float* target, float x, float y) {
#if __CUDA_ARCH__ >= 900
  atomicAdd(reinterpret_cast<float2*>(target), make_float2(x, y));
#else
  atomicAdd(target, x);
  atomicAdd(target + 1, y);
#endif
}

// out[i] = T(accumulator[i]) for count elements (the fp32 dQ accumulator into the output dtype).
template <typename T>
__global__ void ConvertKernel(const float* __restrict__ accumulator, T* __restrict__ out, std::int64_t count) {
  const std::int64_t stride = static_cast<std::int64_t>(gridDim.x) * blockDim.x;
  for (std::int64_t i = static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < count; i += stride)
    out[i] = device::FromFloat<T>(accumulator[i]);
}

}  // namespace flashviz::cuda::backward_device
