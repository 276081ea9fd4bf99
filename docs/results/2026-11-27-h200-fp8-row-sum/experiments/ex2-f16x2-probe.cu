// Throughput of 2^x on the special-function unit: f32 against packed f16x2 and bf16x2 (one instruction, two results).
#include <cstdio>
#include <cstdint>
#include <cuda_runtime.h>
template <int kMode>
__global__ void k(std::uint32_t* out, int iters) {
  std::uint32_t v[8];
  for (int i = 0; i < 8; ++i) v[i] = 0x3c003c00u + threadIdx.x + i;  // small halves
  for (int it = 0; it < iters; ++it) {
#pragma unroll
    for (int i = 0; i < 8; ++i) {
      if constexpr (kMode == 0) { float f = __uint_as_float(v[i] & 0x3f0fffffu); asm volatile("ex2.approx.ftz.f32 %0, %0;" : "+f"(f)); v[i] = __float_as_uint(f); }
      if constexpr (kMode == 1) asm volatile("ex2.approx.f16x2 %0, %0;" : "+r"(v[i]));
      if constexpr (kMode == 2) asm volatile("ex2.approx.ftz.bf16x2 %0, %0;" : "+r"(v[i]));
    }
  }
  std::uint32_t s = 0;
  for (int i = 0; i < 8; ++i) s ^= v[i];
  out[blockIdx.x * blockDim.x + threadIdx.x] = s;
}
template <int kMode> float time_it(std::uint32_t* out) {
  cudaEvent_t a, b; cudaEventCreate(&a); cudaEventCreate(&b);
  const int iters = 4096, blocks = 132 * 8, threads = 256;
  k<kMode><<<blocks, threads>>>(out, iters);
  cudaEventRecord(a); k<kMode><<<blocks, threads>>>(out, iters); cudaEventRecord(b); cudaEventSynchronize(b);
  float ms; cudaEventElapsedTime(&ms, a, b);
  const double ops = double(blocks) * threads * iters * 8;  // instructions (thread level)
  printf("mode %d: %.3f ms, %.1f G thread-instructions/s, %.2f per SM per clock at 1.98 GHz\n", kMode, ms, ops / ms / 1e6,
         ops / (ms * 1e-3) / 132 / 1.98e9);
  return ms;
}
int main() {
  std::uint32_t* out; cudaMalloc(&out, 132 * 8 * 256 * 4);
  time_it<0>(out); time_it<1>(out); time_it<2>(out);
  return 0;
}
