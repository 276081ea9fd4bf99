// Small device helpers the progression shares: ceil division, 2^x in one instruction, cp.async, and the
// conversions between the storage dtypes and float. Nothing here is an algorithm; the kernels are in their files.
#pragma once

#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include <cstdint>

namespace flashviz::cuda::device {

inline constexpr float kLog2e = 1.4426950408889634f;

__host__ __device__ constexpr int CeilDiv(int a, int b) { return (a + b - 1) / b; }

// 2^x as one MUFU.EX2 (ex2.approx.ftz.f32: about 2 ulp; 2^−∞ = +0). With log2 e folded into the score scale,
// e^(s − m) = 2^(s·log2 e − m·log2 e) costs one FFMA and this.
__device__ __forceinline__ float FastExp2(float x) {
  float y;
  asm("ex2.approx.ftz.f32 %0, %1;" : "=f"(y) : "f"(x));
  return y;
}

// cp.async (sm_80+): a 16-byte copy from global to shared memory that skips the registers and runs while the
// thread goes on computing. valid == false writes 16 zero bytes instead (rows past N), reading nothing.
__device__ __forceinline__ void CpAsync16(void* shared, const void* global, bool valid) {
  const unsigned address = static_cast<unsigned>(__cvta_generic_to_shared(shared));
  const int source_bytes = valid ? 16 : 0;
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n" ::"r"(address), "l"(global), "r"(source_bytes)
               : "memory");
}
// Closes the group of copies issued since the last commit.
__device__ __forceinline__ void CpAsyncCommit() { asm volatile("cp.async.commit_group;\n" ::: "memory"); }
// Waits until at most kPending of this thread's committed groups are still in flight (groups complete in order).
template <int kPending>
__device__ __forceinline__ void CpAsyncWait() {
  asm volatile("cp.async.wait_group %0;\n" ::"n"(kPending) : "memory");
}

template <typename T>
__device__ __forceinline__ float ToFloat(T value);
template <>
__device__ __forceinline__ float ToFloat(float value) { return value; }
template <>
__device__ __forceinline__ float ToFloat(__half value) { return __half2float(value); }
template <>
__device__ __forceinline__ float ToFloat(__nv_bfloat16 value) { return __bfloat162float(value); }

template <typename T>
__device__ __forceinline__ T FromFloat(float value);
template <>
__device__ __forceinline__ float FromFloat(float value) { return value; }
template <>
__device__ __forceinline__ __half FromFloat(float value) { return __float2half_rn(value); }
template <>
__device__ __forceinline__ __nv_bfloat16 FromFloat(float value) { return __float2bfloat16_rn(value); }

// Raises a kernel's dynamic shared-memory limit above the default 48 KB (once per kernel is enough, but the
// call is cheap and idempotent, so launchers simply make it before each launch).
template <typename Kernel>
cudaError_t AllowSharedMemory(Kernel kernel, int bytes) {
  return cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, bytes);
}

}  // namespace flashviz::cuda::device
