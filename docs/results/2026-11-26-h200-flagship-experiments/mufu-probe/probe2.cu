// Whether the e4m3 conversion, max and fma run beside 2^x (one of each per group, 8 independent groups a thread;
// H200, 2026-11-26; output.txt). Built like probe.cu; run as ./probe2. The conversion-only rows are not
// throughputs: with constant inputs the compiler hoists most of the conversions.
#include <cstdio>
#include <cstdint>
#include <cuda_fp16.h>
template <int kMode>
__global__ void Mix(float* out, int iters) {
  float v[8]; float w[8]; uint32_t acc = 0;
  for (int i = 0; i < 8; ++i) { v[i] = -0.001f * (threadIdx.x + i); w[i] = 0.5f + 0.01f * i; }
  for (int k = 0; k < iters; ++k) {
#pragma unroll
    for (int i = 0; i < 8; ++i) {
      if (kMode & 1) asm volatile("ex2.approx.ftz.f32 %0, %0;" : "+f"(v[i]));
      if (kMode & 2) { uint16_t r; asm volatile("cvt.rn.satfinite.e4m3x2.f32 %0, %1, %2;" : "=h"(r) : "f"(w[i]), "f"(w[(i+3)%8])); acc += r; }
      if (kMode & 4) { uint32_t r; asm volatile("cvt.rn.f16x2.f32 %0, %1, %2;" : "=r"(r) : "f"(w[i]), "f"(w[(i+5)%8])); acc ^= r; }
      if (kMode & 8) { asm volatile("max.f32 %0, %0, %1;" : "+f"(w[i]) : "f"(v[(i+1)%8])); }
      if (kMode & 16) { asm volatile("fma.rn.f32 %0, %0, %1, %2;" : "+f"(w[i]) : "f"(v[(i+1)%8]), "f"(v[(i+2)%8])); }
    }
  }
  float s = acc; for (int i = 0; i < 8; ++i) s += v[i] + w[i];
  out[blockIdx.x * blockDim.x + threadIdx.x] = s;
}
int main() {
  float* out; cudaMalloc(&out, 132 * 8 * 1024 * 4);
  int sms; cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0);
  int clk; cudaDeviceGetAttribute(&clk, cudaDevAttrClockRate, 0);
  cudaEvent_t a, b; cudaEventCreate(&a); cudaEventCreate(&b);
  const int iters = 4096, threads = 1024, blocks = sms * 2;
  auto time = [&](const char* name, void (*k)(float*, int)) {
    k<<<blocks, threads>>>(out, 16);
    cudaEventRecord(a); k<<<blocks, threads>>>(out, iters); cudaEventRecord(b); cudaEventSynchronize(b);
    float ms; cudaEventElapsedTime(&ms, a, b);
    double groups = double(blocks) * threads * iters * 8;  // one of each op per group
    printf("%-28s %.3f ms  SM-clk per 32 groups (per warp-instr of each) %.2f\n", name, ms, (ms * 1e-3) * sms * (clk * 1e3) / (groups / 32));
  };
  time("ex2", Mix<1>); time("cvt.e4m3x2.f32", Mix<2>); time("cvt.f16x2.f32", Mix<4>);
  time("ex2+cvt.e4m3", Mix<3>); time("ex2+cvt.f16x2", Mix<5>); time("max", Mix<8>); time("fma", Mix<16>);
  time("ex2+max", Mix<9>); time("ex2+cvt.e4m3+max+fma", Mix<27>);
  return 0;
}
