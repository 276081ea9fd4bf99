// Device helpers shared by the hw4 kernels: the kernel parameters, cp.async, exp2, the TF32 split and the
// m16n8k8 TF32 tensor-core instruction.
#pragma once

#include <cuda_runtime.h>

#include <cstdint>

namespace flashviz::cuda::hw4 {

// What every hw4 kernel receives (by value). Head h = blockIdx.x / row_tiles; its Q, K, V start at
// q/k/v + h·qkv_stride and O at o + h·o_stride. scale_log2 = scale·log2(e): the kernels fold it into Q so the
// softmax runs in base 2 (exp(x) = 2^(x·log2 e)) with one ex2 per score.
struct KernelParams {
  const float* q;
  const float* k;
  const float* v;
  float* o;
  long long qkv_stride;
  long long o_stride;
  int n;
  int d;
  int row_tiles;  // T_r = ⌈N / B_r⌉
  float scale_log2;
};

constexpr float kLog2e = 1.4426950408889634f;

__device__ __forceinline__ float Ex2(float x) {
  float y;
  asm("ex2.approx.ftz.f32 %0, %1;" : "=f"(y) : "f"(x));
  return y;
}

// 16-byte asynchronous copy global → shared; src_bytes = 0 writes zeros (rows past N) without reading.
__device__ __forceinline__ void CpAsync16(void* smem, const void* gmem, int src_bytes) {
  const unsigned dst = static_cast<unsigned>(__cvta_generic_to_shared(smem));
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n" ::"r"(dst), "l"(gmem), "r"(src_bytes));
}
__device__ __forceinline__ void CpAsyncCommit() { asm volatile("cp.async.commit_group;\n" ::); }
template <int kPending>
__device__ __forceinline__ void CpAsyncWait() {
  asm volatile("cp.async.wait_group %0;\n" ::"n"(kPending));
}

// x = hi + lo with hi and lo both TF32 numbers (fp32 with the low 13 mantissa bits zero): hi keeps x's top
// 10 mantissa bits, lo the next 10 or so. hi·hi + hi·lo + lo·hi then reproduces x·y to about 2^-20 relative
// (the dropped lo·lo term and lo's own truncation), against 2^-11 for one TF32 product.
__device__ __forceinline__ void SplitTf32(float x, std::uint32_t& hi, std::uint32_t& lo) {
  hi = __float_as_uint(x) & 0xffffe000u;
  lo = __float_as_uint(x - __uint_as_float(hi)) & 0xffffe000u;
}

// D += A·B for one 16×8×8 tile: A 16×8 (row), B 8×8 (col), TF32 operands, fp32 accumulators. Fragments
// (g = lane / 4, t = lane % 4; "k position" p is the index along the 8-long product dimension):
//   a0 = A[g][p=t], a1 = A[g+8][p=t], a2 = A[g][p=t+4], a3 = A[g+8][p=t+4]
//   b0 = B[p=t][g], b1 = B[p=t+4][g]
//   d0 = D[g][2t], d1 = D[g][2t+1], d2 = D[g+8][2t], d3 = D[g+8][2t+1]
// Which real index a k position stands for is free as long as A and B agree: the kernels map p = t to 2t
// and p = t + 4 to 2t + 1, so each thread's two values are neighbours in memory.
__device__ __forceinline__ void MmaTf32(float (&d)[4], const std::uint32_t (&a)[4], std::uint32_t b0,
                                        std::uint32_t b1) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ < 800
  __trap();  // TF32 tensor cores start with sm_80; Hw4KernelNotApplicable keeps older GPUs away from here
#else
  asm("mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, "
      "{%0,%1,%2,%3};\n"
      : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
      : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1));
#endif
}

// The three products of error-compensated TF32, small terms first.
__device__ __forceinline__ void Mma3xTf32(float (&d)[4], const std::uint32_t (&a_hi)[4], const std::uint32_t (&a_lo)[4],
                                          std::uint32_t b0_hi, std::uint32_t b1_hi, std::uint32_t b0_lo,
                                          std::uint32_t b1_lo) {
  MmaTf32(d, a_lo, b0_hi, b1_hi);
  MmaTf32(d, a_hi, b0_lo, b1_lo);
  MmaTf32(d, a_hi, b0_hi, b1_hi);
}

}  // namespace flashviz::cuda::hw4
