// Small device helpers the progression shares: ceil division, 2^x in one instruction, cp.async, and the
// conversions between the storage dtypes and float. Nothing here is an algorithm; the kernels are in their files.
#pragma once

#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include <cstdint>
#include <type_traits>

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

// The tensor-core building blocks of the mma.sync kernels (flash2_mma, flash_decode).
__device__ __forceinline__ std::uint32_t SharedAddress(const void* pointer) {
  return static_cast<std::uint32_t>(__cvta_generic_to_shared(pointer));
}

// Four 8×8 matrices of 16-bit elements; lanes 8m..8m+7 give the row addresses of matrix m.
__device__ __forceinline__ void LoadMatrixX4(std::uint32_t (&r)[4], std::uint32_t address) {
  asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0, %1, %2, %3}, [%4];\n"
               : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
               : "r"(address));
}
// The same, each 8×8 matrix transposed on the way (V_j is stored key-major; the B operand wants it d-major).
__device__ __forceinline__ void LoadMatrixX4Trans(std::uint32_t (&r)[4], std::uint32_t address) {
  asm volatile("ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16 {%0, %1, %2, %3}, [%4];\n"
               : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
               : "r"(address));
}

// D = A·B + D, 16×8×16, fp32 accumulators.
template <typename T>
__device__ __forceinline__ void MmaM16N8K16(float (&d)[4], const std::uint32_t (&a)[4], std::uint32_t b0,
                                            std::uint32_t b1) {
  if constexpr (std::is_same_v<T, __half>) {
    asm volatile(
        "mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%0, %1, %2, %3}, {%4, %5, %6, %7}, {%8, %9}, "
        "{%0, %1, %2, %3};\n"
        : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
        : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1));
  } else {
    asm volatile(
        "mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 {%0, %1, %2, %3}, {%4, %5, %6, %7}, {%8, %9}, "
        "{%0, %1, %2, %3};\n"
        : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
        : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1));
  }
}

// Two floats → one 32-bit register of two 16-bit elements, `low` in the low half (the lower column index).
template <typename T>
__device__ __forceinline__ std::uint32_t PackPair(float low, float high) {
  if constexpr (std::is_same_v<T, __half>) {
    const __half2 pair = __floats2half2_rn(low, high);
    return *reinterpret_cast<const std::uint32_t*>(&pair);
  } else {
    const __nv_bfloat162 pair = __floats2bfloat162_rn(low, high);
    return *reinterpret_cast<const std::uint32_t*>(&pair);
  }
}

}  // namespace flashviz::cuda::device
