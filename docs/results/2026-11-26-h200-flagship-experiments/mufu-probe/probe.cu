// Throughput of 2^x on the special-function unit in f32 and f16x2, and of the f16x2 -> e4m3x2 and f32 -> f16x2
// conversions (H200, 2026-11-26; output.txt). Built with nvcc 13.0:
//   nvcc -O3 -gencode=arch=compute_90a,code=sm_90a -o probe probe.cu
// and run on the GPU with `./probe && cuobjdump -sass probe | grep MUFU`.
#include <cstdio>
#include <cstdint>
#include <cuda_fp16.h>
__global__ void ExF32(float* out, int iters) {
  float v[8];
  for (int i = 0; i < 8; ++i) v[i] = -0.001f * (threadIdx.x + i);
  for (int k = 0; k < iters; ++k) {
#pragma unroll
    for (int i = 0; i < 8; ++i) asm volatile("ex2.approx.ftz.f32 %0, %0;" : "+f"(v[i]));
  }
  float s = 0; for (int i = 0; i < 8; ++i) s += v[i];
  out[blockIdx.x * blockDim.x + threadIdx.x] = s;
}
__global__ void ExF16x2(float* out, int iters) {
  uint32_t v[8];
  for (int i = 0; i < 8; ++i) { __half2 h = __floats2half2_rn(-0.001f * (threadIdx.x + i), -0.002f*i); v[i] = *reinterpret_cast<uint32_t*>(&h); }
  for (int k = 0; k < iters; ++k) {
#pragma unroll
    for (int i = 0; i < 8; ++i) asm volatile("ex2.approx.f16x2 %0, %0;" : "+r"(v[i]));
  }
  float s = 0; for (int i = 0; i < 8; ++i) { __half2 h = *reinterpret_cast<__half2*>(&v[i]); s += __low2float(h) + __high2float(h); }
  out[blockIdx.x * blockDim.x + threadIdx.x] = s;
}
__global__ void CvtF16x2ToE4m3(float* out, int iters) {
  uint32_t v[8]; uint32_t acc = 0;
  for (int i = 0; i < 8; ++i) { __half2 h = __floats2half2_rn(0.5f + 0.001f * (threadIdx.x + i), 0.25f); v[i] = *reinterpret_cast<uint32_t*>(&h); }
  for (int k = 0; k < iters; ++k) {
#pragma unroll
    for (int i = 0; i < 8; ++i) { uint16_t r; asm volatile("cvt.rn.satfinite.e4m3x2.f16x2 %0, %1;" : "=h"(r) : "r"(v[i])); acc += r; v[i] ^= r; }
  }
  out[blockIdx.x * blockDim.x + threadIdx.x] = acc;
}
__global__ void CvtF32ToF16x2(float* out, int iters) {
  float a[8]; uint32_t acc = 0;
  for (int i = 0; i < 8; ++i) a[i] = 0.001f * (threadIdx.x + i);
  for (int k = 0; k < iters; ++k) {
#pragma unroll
    for (int i = 0; i < 8; ++i) { uint32_t r; asm volatile("cvt.rn.f16x2.f32 %0, %1, %2;" : "=r"(r) : "f"(a[i]), "f"(a[(i+1)%8])); acc += r; a[i] = __int_as_float(__float_as_int(a[i]) ^ (r & 1)); }
  }
  out[blockIdx.x * blockDim.x + threadIdx.x] = acc;
}
int main() {
  float* out; cudaMalloc(&out, 132 * 8 * 1024 * 4);
  int sms; cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0);
  int clk; cudaDeviceGetAttribute(&clk, cudaDevAttrClockRate, 0);
  cudaEvent_t a, b; cudaEventCreate(&a); cudaEventCreate(&b);
  const int iters = 4096, threads = 1024, blocks = sms * 2;
  auto time = [&](const char* name, void (*k)(float*, int), double values_per_instr) {
    k<<<blocks, threads>>>(out, 16);
    cudaEventRecord(a); k<<<blocks, threads>>>(out, iters); cudaEventRecord(b); cudaEventSynchronize(b);
    float ms; cudaEventElapsedTime(&ms, a, b);
    double instr = double(blocks) * threads * iters * 8;
    double per_sm_clk_instr = instr / (ms * 1e-3) / sms / (clk * 1e3);
    printf("%-20s %.3f ms  thread-instr/SM/clk(at %d MHz nominal) %.2f  values/SM/clk %.2f\n", name, ms, clk/1000, per_sm_clk_instr, per_sm_clk_instr * values_per_instr);
  };
  time("ex2.f32", ExF32, 1); time("ex2.f16x2", ExF16x2, 2); time("cvt.e4m3x2.f16x2", CvtF16x2ToE4m3, 2); time("cvt.f16x2.f32", CvtF32ToF16x2, 2);
  return 0;
}
