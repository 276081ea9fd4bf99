// flash3_wgmma: FlashAttention's forward pass on Hopper's own instructions (sm_90a), after FlashAttention-3
// (Shah, Bikshandi, Zhang, Thakkar, Ramani, Dao, 2024): fp16/bf16 in, fp32 accumulation, d = 64 and 128, causal,
// any N.
//
// [SECTION] index
//   1. PTX wrappers: mbarrier, TMA (cp.async.bulk.tensor), wgmma (fence/commit/wait, the SS and RS forms,
//      shared-memory descriptors), setmaxnreg, ex2
//   2. Traits: tiles, stages, the shared-memory layout
//   3. The kernel: producer warpgroup (TMA) and two consumer warpgroups (wgmma + online softmax)
//   4. Host: tensor maps, grid, dispatch, the registry's three functions
//
// What it changes versus flash2_mma (mma.sync, ldmatrix, cp.async issued by every thread):
//   1. wgmma.mma_async: one warpgroup (4 warps, 128 threads) multiplies a 64-row slice of Q_i by a whole K_j
//      tile in one asynchronous instruction stream reading both operands from shared memory (S = Q K_jᵀ,
//      m64n128k16, d/16 of them); P̃ V_j takes P̃ from registers as the A operand (m64n{d}k16, B_c/16 of them).
//      The S accumulators of a warp have the m16n8 layout of mma.sync, so P̃ is repacked in place as before.
//   2. TMA: one thread copies a whole 128 × 64 box of Q, K or V per instruction through a tensor map (a
//      __grid_constant__ kernel parameter), with the 128-byte swizzle wgmma reads without bank conflicts, rows
//      past N of the head zero-filled by the hardware; completion is counted in bytes on an mbarrier.
//   3. Warp specialization: warpgroup 0 only issues copies (setmaxnreg: 24 registers), warpgroups 1 and 2 only
//      compute (240 registers each), each owning 64 rows of the B_r = 128 rows; K/V go through a ring of
//      stages (full/empty mbarriers), so copies run ahead of the math by up to kStages tiles.
//   4. Intra-warpgroup overlap (FlashAttention-3's Algorithm 2): S_j and P̃_{j−1} V_{j−1} are issued together,
//      S_j alone is waited for, and its softmax runs while the tensor cores finish P̃_{j−1} V_{j−1}.
//   5. Persistent grid (all but causal d = 128): one block per multiprocessor walks (head, Q tile) pairs; the
//      producer loads the next pair's Q and K_0/V_0 while the consumers finish the last tile of the current one.
//   6. O leaves through a shared-memory staging tile in 16-byte coalesced stores.
//   Options bits switch 4, 5 and 6 (flash3_wgmma.h). Not done (FlashAttention-3 does it): ping-pong scheduling of
//   the two consumer warpgroups with named barriers, a third consumer warpgroup at d = 64, a TMA store of O, fp8.
//
// Shared-memory layout (the 128-byte swizzle, CU_TENSOR_MAP_SWIZZLE_128B ≡ wgmma's swizzle mode 1): a tile of
// R rows × d columns is stored as d/64 column blocks of R rows × 128 bytes (64 elements); in each row the
// 16-byte chunk c sits at c ^ (row mod 8); every block starts on a 1024-byte boundary (8 rows).
//   - Q_i and K_j are K-major operands (K = d): descriptor start = block base + k-step's 32 bytes within the
//     row, stride byte offset (8 rows to the next 8) = 1024, leading byte offset unused for swizzled K-major.
//   - V_j is the N-major B operand of P̃V (N = d, contiguous; K = keys): start = V base + 16 keys · 128 bytes per
//     k-step, stride byte offset (8 keys to the next 8) = 1024, leading byte offset (one 64-column block to the
//     next) = B_c · 128.
//
// Measured: kernels/README.md, "flash2_mma and flash3_wgmma" (the tables are written from the run folders in
// docs/results/, the experiments that chose this code are listed there).
#include "kernels/cuda/mma/flash3_wgmma.h"

#include <cuda.h>  // CUtensorMap and its enums only: the encoder is reached through the runtime (no -lcuda)
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <type_traits>

#include "kernels/common/format.h"
#include "kernels/cuda/device_common.cuh"

#if defined(__CUDA_ARCH__) && !defined(__CUDA_ARCH_FEAT_SM90_ALL)
#error "flash3_wgmma.cu must be compiled for sm_90a only (-gencode=arch=compute_90a,code=sm_90a): wgmma, setmaxnreg"
#endif

namespace flashviz::cuda {
namespace wgmma_detail {

// ---------------------------------------------------------------------------------------------------------
// [SECTION] 1. PTX wrappers
// ---------------------------------------------------------------------------------------------------------

__device__ __forceinline__ std::uint32_t SharedAddress(const void* pointer) {
  return static_cast<std::uint32_t>(__cvta_generic_to_shared(pointer));
}

// mbarrier: `count` arrivals (plus, for the TMA barriers, the bytes announced by expect_tx) complete a phase.
__device__ __forceinline__ void BarrierInit(std::uint32_t barrier, int count) {
  asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;\n" ::"r"(barrier), "r"(count) : "memory");
}
// Arrive once and announce `bytes` that copies will complete on this barrier in the current phase.
__device__ __forceinline__ void BarrierArriveExpectBytes(std::uint32_t barrier, std::uint32_t bytes) {
  asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;\n" ::"r"(barrier), "r"(bytes) : "memory");
}
__device__ __forceinline__ void BarrierArrive(std::uint32_t barrier) {
  asm volatile("mbarrier.arrive.shared::cta.b64 _, [%0];\n" ::"r"(barrier) : "memory");
}
// Wait until the phase of parity `parity` has completed (a fresh barrier is in phase 0).
__device__ __forceinline__ void BarrierWait(std::uint32_t barrier, std::uint32_t parity) {
  std::uint32_t done = 0;
  do {
    asm volatile(
        "{\n.reg .pred p;\nmbarrier.try_wait.parity.shared::cta.b64 p, [%1], %2;\nselp.u32 %0, 1, 0, p;\n}\n"
        : "=r"(done)
        : "r"(barrier), "r"(parity)
        : "memory");
  } while (!done);
}

// TMA: the box of tensor map `map` at coordinates (column, row, head) into shared memory, completing on
// `barrier`. Elements outside the tensor (rows ≥ N of the head) arrive as zeros and still count as bytes.
__device__ __forceinline__ void TmaLoad3d(std::uint32_t destination, const CUtensorMap& map, int column, int row,
                                          int head, std::uint32_t barrier) {
  asm volatile(
      "cp.async.bulk.tensor.3d.shared::cluster.global.tile.mbarrier::complete_tx::bytes [%0], [%1, {%2, %3, %4}], "
      "[%5];\n" ::"r"(destination),
      "l"(reinterpret_cast<std::uint64_t>(&map)), "r"(column), "r"(row), "r"(head), "r"(barrier)
      : "memory");
}
__device__ __forceinline__ void TmaPrefetchDescriptor(const CUtensorMap& map) {
  asm volatile("prefetch.tensormap [%0];\n" ::"l"(reinterpret_cast<std::uint64_t>(&map)) : "memory");
}

// wgmma ordering: fence before the first wgmma that reads registers written by ordinary instructions (the
// accumulators, P̃); commit the issued ones as a group; wait until at most N groups are in flight.
__device__ __forceinline__ void WgmmaFence() { asm volatile("wgmma.fence.sync.aligned;\n" ::: "memory"); }
__device__ __forceinline__ void WgmmaCommit() { asm volatile("wgmma.commit_group.sync.aligned;\n" ::: "memory"); }
template <int kPending>
__device__ __forceinline__ void WgmmaWait() {
  asm volatile("wgmma.wait_group.sync.aligned %0;\n" ::"n"(kPending) : "memory");
}
// A barrier for one warpgroup (128 threads) of the block: id 1 + consumer (0 is __syncthreads).
__device__ __forceinline__ void WarpgroupBarrier(int id) {
  asm volatile("bar.sync %0, 128;\n" ::"r"(id) : "memory");
}

// Ties registers to this point of the program, so that the compiler neither reads an accumulator before the
// wgmma that writes it has been waited for nor reuses an operand register while a wgmma may still read it.
template <int kCount>
__device__ __forceinline__ void PinRegisters(float (&r)[kCount]) {
#pragma unroll
  for (int i = 0; i < kCount; ++i) asm volatile("" : "+f"(r[i])::"memory");
}
template <int kCount>
__device__ __forceinline__ void PinRegisters(std::uint32_t (&r)[kCount][4]) {
#pragma unroll
  for (int i = 0; i < kCount; ++i)
#pragma unroll
    for (int e = 0; e < 4; ++e) asm volatile("" : "+r"(r[i][e])::"memory");
}

// A shared-memory matrix descriptor with the 128-byte swizzle (mode 1, bits 62-63): start address, leading and
// stride byte offsets, each in 16-byte units.
__device__ __forceinline__ std::uint64_t SwizzledDescriptor(std::uint32_t address, std::uint32_t leading_bytes,
                                                            std::uint32_t stride_bytes) {
  return static_cast<std::uint64_t>((address & 0x3FFFF) >> 4) |
         (static_cast<std::uint64_t>((leading_bytes >> 4) & 0x3FFF) << 16) |
         (static_cast<std::uint64_t>((stride_bytes >> 4) & 0x3FFF) << 32) | (1ull << 62);
}

template <int kRegisters>
__device__ __forceinline__ void SetMaxRegistersIncrease() {
  asm volatile("setmaxnreg.inc.sync.aligned.u32 %0;\n" ::"n"(kRegisters));
}
template <int kRegisters>
__device__ __forceinline__ void SetMaxRegistersDecrease() {
  asm volatile("setmaxnreg.dec.sync.aligned.u32 %0;\n" ::"n"(kRegisters));
}

// 2^x on the special-function unit (2^(−∞) = +0) and two floats packed into one register: device_common.cuh's.
using device::FastExp2;
using device::PackPair;

// The wgmma instructions, one specialization per (element type, N): the accumulator list is spelled out
// because inline PTX takes no arrays. Accumulator layout (per warp w of the warpgroup: rows 16w..16w+15;
// g = lane / 4, c = lane % 4): d[4t], d[4t+1] = (row g, cols 8t+2c, 8t+2c+1), d[4t+2], d[4t+3] = row g+8.
template <typename T, int kN>
struct Wgmma;

template <>
struct Wgmma<__half, 64> {
  // D (+)= A·B, m64n64k16, A from registers (per warp the m16n8k16 A layout), B from shared memory, N-major.
  static __device__ __forceinline__ void RS(float (&d)[32], const std::uint32_t (&a)[4], std::uint64_t b_desc,
                                            int accumulate) {
    asm volatile(
        "{\n.reg .pred p;\nsetp.ne.b32 p, %37, 0;\n"
        "wgmma.mma_async.sync.aligned.m64n64k16.f32.f16.f16 "
        "{%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, %16, %17, %18, %19, %20, %21, %22, "
        "%23, %24, %25, %26, %27, %28, %29, %30, %31}, {%32, %33, %34, %35}, %36, p, 1, 1, 1;\n}\n"
        : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]), "+f"(d[7]), "+f"(d[8]),
          "+f"(d[9]), "+f"(d[10]), "+f"(d[11]), "+f"(d[12]), "+f"(d[13]), "+f"(d[14]), "+f"(d[15]), "+f"(d[16]),
          "+f"(d[17]), "+f"(d[18]), "+f"(d[19]), "+f"(d[20]), "+f"(d[21]), "+f"(d[22]), "+f"(d[23]), "+f"(d[24]),
          "+f"(d[25]), "+f"(d[26]), "+f"(d[27]), "+f"(d[28]), "+f"(d[29]), "+f"(d[30]), "+f"(d[31])
        : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "l"(b_desc), "r"(accumulate));
  }
};

template <>
struct Wgmma<__nv_bfloat16, 64> {
  // D (+)= A·B, m64n64k16, A from registers (per warp the m16n8k16 A layout), B from shared memory, N-major.
  static __device__ __forceinline__ void RS(float (&d)[32], const std::uint32_t (&a)[4], std::uint64_t b_desc,
                                            int accumulate) {
    asm volatile(
        "{\n.reg .pred p;\nsetp.ne.b32 p, %37, 0;\n"
        "wgmma.mma_async.sync.aligned.m64n64k16.f32.bf16.bf16 "
        "{%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, %16, %17, %18, %19, %20, %21, %22, "
        "%23, %24, %25, %26, %27, %28, %29, %30, %31}, {%32, %33, %34, %35}, %36, p, 1, 1, 1;\n}\n"
        : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]), "+f"(d[7]), "+f"(d[8]),
          "+f"(d[9]), "+f"(d[10]), "+f"(d[11]), "+f"(d[12]), "+f"(d[13]), "+f"(d[14]), "+f"(d[15]), "+f"(d[16]),
          "+f"(d[17]), "+f"(d[18]), "+f"(d[19]), "+f"(d[20]), "+f"(d[21]), "+f"(d[22]), "+f"(d[23]), "+f"(d[24]),
          "+f"(d[25]), "+f"(d[26]), "+f"(d[27]), "+f"(d[28]), "+f"(d[29]), "+f"(d[30]), "+f"(d[31])
        : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "l"(b_desc), "r"(accumulate));
  }
};

template <>
struct Wgmma<__half, 128> {
  // D (+)= A·B, m64n128k16, A and B from shared memory, both K-major; accumulate = 0 ignores D's old value.
  static __device__ __forceinline__ void SS(float (&d)[64], std::uint64_t a_desc, std::uint64_t b_desc,
                                            int accumulate) {
    asm volatile(
        "{\n.reg .pred p;\nsetp.ne.b32 p, %66, 0;\n"
        "wgmma.mma_async.sync.aligned.m64n128k16.f32.f16.f16 "
        "{%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, %16, %17, %18, %19, %20, %21, %22, "
        "%23, %24, %25, %26, %27, %28, %29, %30, %31, %32, %33, %34, %35, %36, %37, %38, %39, %40, %41, %42, %43, %44, "
        "%45, %46, %47, %48, %49, %50, %51, %52, %53, %54, %55, %56, %57, %58, %59, %60, %61, %62, %63}, %64, %65, p, "
        "1, 1, 0, 0;\n}\n"
        : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]), "+f"(d[7]), "+f"(d[8]),
          "+f"(d[9]), "+f"(d[10]), "+f"(d[11]), "+f"(d[12]), "+f"(d[13]), "+f"(d[14]), "+f"(d[15]), "+f"(d[16]),
          "+f"(d[17]), "+f"(d[18]), "+f"(d[19]), "+f"(d[20]), "+f"(d[21]), "+f"(d[22]), "+f"(d[23]), "+f"(d[24]),
          "+f"(d[25]), "+f"(d[26]), "+f"(d[27]), "+f"(d[28]), "+f"(d[29]), "+f"(d[30]), "+f"(d[31]), "+f"(d[32]),
          "+f"(d[33]), "+f"(d[34]), "+f"(d[35]), "+f"(d[36]), "+f"(d[37]), "+f"(d[38]), "+f"(d[39]), "+f"(d[40]),
          "+f"(d[41]), "+f"(d[42]), "+f"(d[43]), "+f"(d[44]), "+f"(d[45]), "+f"(d[46]), "+f"(d[47]), "+f"(d[48]),
          "+f"(d[49]), "+f"(d[50]), "+f"(d[51]), "+f"(d[52]), "+f"(d[53]), "+f"(d[54]), "+f"(d[55]), "+f"(d[56]),
          "+f"(d[57]), "+f"(d[58]), "+f"(d[59]), "+f"(d[60]), "+f"(d[61]), "+f"(d[62]), "+f"(d[63])
        : "l"(a_desc), "l"(b_desc), "r"(accumulate));
  }
  // D (+)= A·B, m64n128k16, A from registers (per warp the m16n8k16 A layout), B from shared memory, N-major.
  static __device__ __forceinline__ void RS(float (&d)[64], const std::uint32_t (&a)[4], std::uint64_t b_desc,
                                            int accumulate) {
    asm volatile(
        "{\n.reg .pred p;\nsetp.ne.b32 p, %69, 0;\n"
        "wgmma.mma_async.sync.aligned.m64n128k16.f32.f16.f16 "
        "{%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, %16, %17, %18, %19, %20, %21, %22, "
        "%23, %24, %25, %26, %27, %28, %29, %30, %31, %32, %33, %34, %35, %36, %37, %38, %39, %40, %41, %42, %43, %44, "
        "%45, %46, %47, %48, %49, %50, %51, %52, %53, %54, %55, %56, %57, %58, %59, %60, %61, %62, %63}, {%64, %65, "
        "%66, %67}, %68, p, 1, 1, 1;\n}\n"
        : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]), "+f"(d[7]), "+f"(d[8]),
          "+f"(d[9]), "+f"(d[10]), "+f"(d[11]), "+f"(d[12]), "+f"(d[13]), "+f"(d[14]), "+f"(d[15]), "+f"(d[16]),
          "+f"(d[17]), "+f"(d[18]), "+f"(d[19]), "+f"(d[20]), "+f"(d[21]), "+f"(d[22]), "+f"(d[23]), "+f"(d[24]),
          "+f"(d[25]), "+f"(d[26]), "+f"(d[27]), "+f"(d[28]), "+f"(d[29]), "+f"(d[30]), "+f"(d[31]), "+f"(d[32]),
          "+f"(d[33]), "+f"(d[34]), "+f"(d[35]), "+f"(d[36]), "+f"(d[37]), "+f"(d[38]), "+f"(d[39]), "+f"(d[40]),
          "+f"(d[41]), "+f"(d[42]), "+f"(d[43]), "+f"(d[44]), "+f"(d[45]), "+f"(d[46]), "+f"(d[47]), "+f"(d[48]),
          "+f"(d[49]), "+f"(d[50]), "+f"(d[51]), "+f"(d[52]), "+f"(d[53]), "+f"(d[54]), "+f"(d[55]), "+f"(d[56]),
          "+f"(d[57]), "+f"(d[58]), "+f"(d[59]), "+f"(d[60]), "+f"(d[61]), "+f"(d[62]), "+f"(d[63])
        : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "l"(b_desc), "r"(accumulate));
  }
};

template <>
struct Wgmma<__nv_bfloat16, 128> {
  // D (+)= A·B, m64n128k16, A and B from shared memory, both K-major; accumulate = 0 ignores D's old value.
  static __device__ __forceinline__ void SS(float (&d)[64], std::uint64_t a_desc, std::uint64_t b_desc,
                                            int accumulate) {
    asm volatile(
        "{\n.reg .pred p;\nsetp.ne.b32 p, %66, 0;\n"
        "wgmma.mma_async.sync.aligned.m64n128k16.f32.bf16.bf16 "
        "{%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, %16, %17, %18, %19, %20, %21, %22, "
        "%23, %24, %25, %26, %27, %28, %29, %30, %31, %32, %33, %34, %35, %36, %37, %38, %39, %40, %41, %42, %43, %44, "
        "%45, %46, %47, %48, %49, %50, %51, %52, %53, %54, %55, %56, %57, %58, %59, %60, %61, %62, %63}, %64, %65, p, "
        "1, 1, 0, 0;\n}\n"
        : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]), "+f"(d[7]), "+f"(d[8]),
          "+f"(d[9]), "+f"(d[10]), "+f"(d[11]), "+f"(d[12]), "+f"(d[13]), "+f"(d[14]), "+f"(d[15]), "+f"(d[16]),
          "+f"(d[17]), "+f"(d[18]), "+f"(d[19]), "+f"(d[20]), "+f"(d[21]), "+f"(d[22]), "+f"(d[23]), "+f"(d[24]),
          "+f"(d[25]), "+f"(d[26]), "+f"(d[27]), "+f"(d[28]), "+f"(d[29]), "+f"(d[30]), "+f"(d[31]), "+f"(d[32]),
          "+f"(d[33]), "+f"(d[34]), "+f"(d[35]), "+f"(d[36]), "+f"(d[37]), "+f"(d[38]), "+f"(d[39]), "+f"(d[40]),
          "+f"(d[41]), "+f"(d[42]), "+f"(d[43]), "+f"(d[44]), "+f"(d[45]), "+f"(d[46]), "+f"(d[47]), "+f"(d[48]),
          "+f"(d[49]), "+f"(d[50]), "+f"(d[51]), "+f"(d[52]), "+f"(d[53]), "+f"(d[54]), "+f"(d[55]), "+f"(d[56]),
          "+f"(d[57]), "+f"(d[58]), "+f"(d[59]), "+f"(d[60]), "+f"(d[61]), "+f"(d[62]), "+f"(d[63])
        : "l"(a_desc), "l"(b_desc), "r"(accumulate));
  }
  // D (+)= A·B, m64n128k16, A from registers (per warp the m16n8k16 A layout), B from shared memory, N-major.
  static __device__ __forceinline__ void RS(float (&d)[64], const std::uint32_t (&a)[4], std::uint64_t b_desc,
                                            int accumulate) {
    asm volatile(
        "{\n.reg .pred p;\nsetp.ne.b32 p, %69, 0;\n"
        "wgmma.mma_async.sync.aligned.m64n128k16.f32.bf16.bf16 "
        "{%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, %16, %17, %18, %19, %20, %21, %22, "
        "%23, %24, %25, %26, %27, %28, %29, %30, %31, %32, %33, %34, %35, %36, %37, %38, %39, %40, %41, %42, %43, %44, "
        "%45, %46, %47, %48, %49, %50, %51, %52, %53, %54, %55, %56, %57, %58, %59, %60, %61, %62, %63}, {%64, %65, "
        "%66, %67}, %68, p, 1, 1, 1;\n}\n"
        : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]), "+f"(d[7]), "+f"(d[8]),
          "+f"(d[9]), "+f"(d[10]), "+f"(d[11]), "+f"(d[12]), "+f"(d[13]), "+f"(d[14]), "+f"(d[15]), "+f"(d[16]),
          "+f"(d[17]), "+f"(d[18]), "+f"(d[19]), "+f"(d[20]), "+f"(d[21]), "+f"(d[22]), "+f"(d[23]), "+f"(d[24]),
          "+f"(d[25]), "+f"(d[26]), "+f"(d[27]), "+f"(d[28]), "+f"(d[29]), "+f"(d[30]), "+f"(d[31]), "+f"(d[32]),
          "+f"(d[33]), "+f"(d[34]), "+f"(d[35]), "+f"(d[36]), "+f"(d[37]), "+f"(d[38]), "+f"(d[39]), "+f"(d[40]),
          "+f"(d[41]), "+f"(d[42]), "+f"(d[43]), "+f"(d[44]), "+f"(d[45]), "+f"(d[46]), "+f"(d[47]), "+f"(d[48]),
          "+f"(d[49]), "+f"(d[50]), "+f"(d[51]), "+f"(d[52]), "+f"(d[53]), "+f"(d[54]), "+f"(d[55]), "+f"(d[56]),
          "+f"(d[57]), "+f"(d[58]), "+f"(d[59]), "+f"(d[60]), "+f"(d[61]), "+f"(d[62]), "+f"(d[63])
        : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "l"(b_desc), "r"(accumulate));
  }
};

// ---------------------------------------------------------------------------------------------------------
// [SECTION] 2. Traits
// ---------------------------------------------------------------------------------------------------------

// The kernel's compile-time choice (AttentionArgs::options flips it; see flash3_wgmma.h).
enum Flash3Flag : unsigned {
  // Inside a consumer warpgroup, the softmax of tile j runs while the tensor cores add P̃_{j−1} V_{j−1}
  // (FlashAttention-3's intra-warpgroup overlap): S_j and P̃_{j−1}V_{j−1} are issued together, S_j is waited for
  // alone, and O is rescaled once the product landed. Off: S_j, softmax, P̃_j V_j one after the other.
  kFlagOverlapSoftmax = 1u << 0,
  // O_i leaves through a shared-memory staging tile in 16-byte coalesced stores (a warp writes 512 contiguous
  // bytes) instead of 4-byte stores straight from the accumulators (a warp instruction: 8 rows × 16 bytes).
  kFlagStagedStore = 1u << 1,
  // Causal on the persistent grid (the host sets it, no options bit): the work tiles longest first over all heads
  // and the grid's passes snaking (DecodeWorkTile, BlockWork), so the static schedule ends with short tiles everywhere
  // instead of some blocks' long ones. Off: head-major, which keeps a head's K/V in L2 for the blocks running at once.
  kFlagLongestFirst = 1u << 2,
};
inline constexpr unsigned kFlash3FlagCount = 3;

template <int kD>
struct Flash3Traits {
  static constexpr int kBr = 128;                  // B_r: two consumer warpgroups × 64 rows
  static constexpr int kBc = 128;                  // B_c: keys per K_j/V_j tile (the N of S = Q K_jᵀ)
  static constexpr int kBox = 64;                  // columns per TMA box / swizzle block: 64 × 2 bytes = 128
  static constexpr int kColumnBlocks = kD / kBox;  // 1 or 2
  // K/V ring depth: d = 64 fits three (16 KB Q + 3 × 32 KB), d = 128 two (32 KB Q + 2 × 64 KB).
  static constexpr int kStages = kD == 64 ? 3 : 2;
  static constexpr int kConsumers = 2;
  static constexpr int kThreads = 128 * (1 + kConsumers);
  static constexpr int kQBytes = kBr * kD * 2;
  static constexpr int kTileBytes = kBc * kD * 2;  // one K_j or V_j tile
  static constexpr int kQBlockBytes = kBr * 128;   // one 64-column block of Q_i
  static constexpr int kKVBlockBytes = kBc * 128;  // one 64-column block of K_j or V_j
  // Byte offsets from the 1024-aligned base: Q | K stages | V stages | O staging | barriers. (The O staging tile
  // cannot reuse Q_i's buffer: the producer is already loading the next work tile's Q into it.)
  static constexpr int kKOffset = kQBytes;
  static constexpr int kVOffset = kKOffset + kStages * kTileBytes;
  static constexpr int kOOffset = kVOffset + kStages * kTileBytes;
  static constexpr int kBarrierOffset = kOOffset + kQBytes;
  // Barriers: Q full, Q empty, then per stage K full, V full, K empty, V empty (K_j is released after S_j,
  // V_j after P̃_j V_j, which with the overlap comes one tile later).
  static constexpr int kBarriers = 2 + 4 * kStages;
  static constexpr int kSharedBytes = kBarrierOffset + kBarriers * 8 + 1024;  // + 1024 to align the base
  // An arrival per consumer warp releases a buffer.
  static constexpr int kReleaseCount = 4 * kConsumers;
  static_assert(kSharedBytes <= 227 * 1024, "fits one block per multiprocessor");
};

// Registers: the kernel starts at 65536 / 384 → 168 a thread (__launch_bounds__(384, 1)); the producer gives
// back to 24 and the consumers take 240 (24·128 + 2·240·128 = 64512 = 168·384).
inline constexpr int kProducerRegisters = 24;
inline constexpr int kConsumerRegisters = 240;

struct Flash3Params {
  void* o;
  int n;
  int q_tiles;       // T_r = ⌈N / B_r⌉
  int work_tiles;    // T_r · B·H (head, Q tile) pairs, head-major
  float scale_log2;  // scale · log2(e)
  int causal;
};

// Work tile w: Q tile `rank` of head h (causal: rank 0 is the last, longest, Q tile). Head-major, w = h·T_r + rank,
// as in flash2_mma: consecutive tiles share a head, so blocks running at one time read the same K/V from L2. Longest
// first (kFlagLongestFirst), w = rank·(B·H) + h: every head's longest tile before any shorter one.
struct WorkTile {
  int head;
  int q_row0;
  int kv_tiles;
};
template <int kBr, int kBc, bool kLongestFirst>
__device__ __forceinline__ WorkTile DecodeWorkTile(int w, const Flash3Params& params) {
  WorkTile tile;
  int rank;
  if constexpr (kLongestFirst) {
    const int heads = params.work_tiles / params.q_tiles;
    rank = w / heads;
    tile.head = w - rank * heads;
  } else {
    tile.head = w / params.q_tiles;
    rank = w - tile.head * params.q_tiles;
  }
  tile.q_row0 = (params.causal ? params.q_tiles - 1 - rank : rank) * kBr;
  const int last_key = params.causal ? min(params.n, tile.q_row0 + kBr) - 1 : params.n - 1;
  tile.kv_tiles = last_key / kBc + 1;
  return tile;
}

// The block's `local`-th work tile, or ≥ params.work_tiles when it has no more.
// The grid's G blocks take tiles pass by pass (pass p: p·G … p·G + G − 1); longest first, the passes snake (block
// b takes p·G + b on even passes, p·G + G − 1 − b on odd ones), so a block that drew one of the longer tiles of a
// pass draws one of the shorter of the next.
template <bool kLongestFirst>
__device__ __forceinline__ int BlockWork(int local, const Flash3Params& params) {
  if constexpr (!kLongestFirst) {
    return static_cast<int>(blockIdx.x) + local * static_cast<int>(gridDim.x);
  } else {
    const int blocks = static_cast<int>(gridDim.x), block = static_cast<int>(blockIdx.x);
    const long long base = static_cast<long long>(local) * blocks;
    if (base >= params.work_tiles) return params.work_tiles;
    const int w = static_cast<int>(base) + ((local & 1) ? blocks - 1 - block : block);
    return w < params.work_tiles ? w : params.work_tiles;
  }
}

// The shared-memory addresses of a block's buffers and barriers.
template <int kD>
struct SharedLayout {
  using Traits = Flash3Traits<kD>;
  std::uint32_t base;
  __device__ std::uint32_t Q() const { return base; }
  __device__ std::uint32_t K(int stage) const { return base + Traits::kKOffset + stage * Traits::kTileBytes; }
  __device__ std::uint32_t V(int stage) const { return base + Traits::kVOffset + stage * Traits::kTileBytes; }
  __device__ std::uint32_t O() const { return base + Traits::kOOffset; }
  __device__ std::uint32_t QFull() const { return base + Traits::kBarrierOffset; }
  __device__ std::uint32_t QEmpty() const { return QFull() + 8; }
  __device__ std::uint32_t KFull(int stage) const { return QFull() + 16 + 32 * stage; }
  __device__ std::uint32_t VFull(int stage) const { return KFull(stage) + 8; }
  __device__ std::uint32_t KEmpty(int stage) const { return KFull(stage) + 16; }
  __device__ std::uint32_t VEmpty(int stage) const { return KFull(stage) + 24; }
};

// Position `it` of the K/V ring (counted over the block's whole life): its stage and the parity of the phase
// that the stage's fill number it / kStages completes.
template <int kStages>
struct RingSlot {
  int stage;
  std::uint32_t parity;
  __device__ explicit RingSlot(int it) : stage(it % kStages), parity(static_cast<std::uint32_t>(it / kStages) & 1u) {}
};

// ---------------------------------------------------------------------------------------------------------
// [SECTION] 3. The kernel
// ---------------------------------------------------------------------------------------------------------

// The producer: one thread issues every copy. V_{it−1} is issued after K_it, so that a K stage, which frees
// early (after S_it), is refilled without waiting for the V stage, which frees late (after P̃V). The next
// work tile's Q waits until both consumers ran their last S GEMM on the current one.
template <int kD, bool kLongestFirst>
__device__ __forceinline__ void Produce(const SharedLayout<kD>& smem, const CUtensorMap& q_map,
                                        const CUtensorMap& k_map, const CUtensorMap& v_map,
                                        const Flash3Params& params) {
  using Traits = Flash3Traits<kD>;
  constexpr int kStages = Traits::kStages;
  const auto load_tile = [&](const CUtensorMap& map, std::uint32_t destination, std::uint32_t full, int row,
                             int head) {
#pragma unroll
    for (int block = 0; block < Traits::kColumnBlocks; ++block)
      TmaLoad3d(destination + block * Traits::kKVBlockBytes, map, block * Traits::kBox, row, head, full);
  };
  const auto load_v = [&](int it, int row, int head) {
    const RingSlot<kStages> slot(it);
    if (it >= kStages) BarrierWait(smem.VEmpty(slot.stage), slot.parity ^ 1u);
    BarrierArriveExpectBytes(smem.VFull(slot.stage), Traits::kTileBytes);
    load_tile(v_map, smem.V(slot.stage), smem.VFull(slot.stage), row, head);
  };
  int it = 0, local = 0;
  int pending_v_row = -1, pending_v_head = 0;  // V_{it−1}, not issued yet (row −1: none)
  for (int work = BlockWork<kLongestFirst>(0, params); work < params.work_tiles;
       work = BlockWork<kLongestFirst>(++local, params)) {
    const WorkTile tile = DecodeWorkTile<Traits::kBr, Traits::kBc, kLongestFirst>(work, params);
    if (local > 0) BarrierWait(smem.QEmpty(), static_cast<std::uint32_t>(local - 1) & 1u);
    BarrierArriveExpectBytes(smem.QFull(), Traits::kQBytes);
#pragma unroll
    for (int block = 0; block < Traits::kColumnBlocks; ++block)
      TmaLoad3d(smem.Q() + block * Traits::kQBlockBytes, q_map, block * Traits::kBox, tile.q_row0, tile.head,
                smem.QFull());
    for (int j = 0; j < tile.kv_tiles; ++j, ++it) {
      const RingSlot<kStages> slot(it);
      // The fill before this one (fill number it / kStages − 1) completed phase parity ^ 1 of the empty barrier.
      if (it >= kStages) BarrierWait(smem.KEmpty(slot.stage), slot.parity ^ 1u);
      BarrierArriveExpectBytes(smem.KFull(slot.stage), Traits::kTileBytes);
      load_tile(k_map, smem.K(slot.stage), smem.KFull(slot.stage), j * Traits::kBc, tile.head);
      if (pending_v_row >= 0) load_v(it - 1, pending_v_row, pending_v_head);
      pending_v_row = j * Traits::kBc;
      pending_v_head = tile.head;
    }
  }
  if (pending_v_row >= 0) load_v(it - 1, pending_v_row, pending_v_head);
}

// A consumer warp's rows g and g+8 (of its 16) in one tile: masking, the online-softmax statistics, and P̃ in
// place of S (as floats). Returns α for the two rows (O_i must be multiplied by it).
template <int kSAcc>
__device__ __forceinline__ void SoftmaxTile(float (&s)[kSAcc], float (&row_max)[2], float (&row_sum)[2],
                                            float (&alpha)[2], int kv_col0, int row_a, int warp_row0, int quad,
                                            const Flash3Params& params) {
  constexpr int kBc = 2 * kSAcc, kSTiles = kBc / 8;
  const int n = params.n;
  const float scale_log2 = params.scale_log2;
  // Mask only where needed: the tile that crosses N, and (causal) tiles that cross this warp's diagonal.
  const bool crosses_n = kv_col0 + kBc > n;
  const bool crosses_diagonal = params.causal && kv_col0 + kBc - 1 > warp_row0;
  if (crosses_n || crosses_diagonal) {
    const int row_b = row_a + 8;
#pragma unroll
    for (int t = 0; t < kSTiles; ++t)
#pragma unroll
      for (int e = 0; e < 2; ++e) {
        const int col = kv_col0 + t * 8 + 2 * quad + e;
        const bool out = col >= n;
        if (out || (params.causal && col > row_a)) s[4 * t + e] = -INFINITY;
        if (out || (params.causal && col > row_b)) s[4 * t + 2 + e] = -INFINITY;
      }
  }
  // m_new = max(m_old, rowmax S); α = 2^(scale·log2e·(m_old − m_new)); P̃ = 2^(scale·log2e·S − scale·log2e·m_new).
  // A quad of lanes holds a row's B_c keys.
  float tile_max[2] = {row_max[0], row_max[1]};
#pragma unroll
  for (int t = 0; t < kSTiles; ++t) {
    tile_max[0] = fmaxf(tile_max[0], fmaxf(s[4 * t], s[4 * t + 1]));
    tile_max[1] = fmaxf(tile_max[1], fmaxf(s[4 * t + 2], s[4 * t + 3]));
  }
  float max_scaled[2];
#pragma unroll
  for (int r = 0; r < 2; ++r) {
    tile_max[r] = fmaxf(tile_max[r], __shfl_xor_sync(0xffffffffu, tile_max[r], 1));
    tile_max[r] = fmaxf(tile_max[r], __shfl_xor_sync(0xffffffffu, tile_max[r], 2));
    // A row with every key so far masked keeps m = −∞; subtract 0 then, so that no −∞ − (−∞) = NaN appears.
    max_scaled[r] = tile_max[r] == -INFINITY ? 0.0f : tile_max[r] * scale_log2;
    alpha[r] = tile_max[r] != row_max[r] ? FastExp2(row_max[r] * scale_log2 - max_scaled[r]) : 1.0f;
    row_max[r] = tile_max[r];
    row_sum[r] *= alpha[r];
  }
#pragma unroll
  for (int i = 0; i < kSAcc; ++i) {
    const int r = (i / 2) % 2;  // accumulators 4t, 4t+1 are row g; 4t+2, 4t+3 row g+8
    s[i] = FastExp2(fmaf(s[i], scale_log2, -max_scaled[r]));
    row_sum[r] += s[i];
  }
}

// P̃ (as floats in the S accumulators) → the A operand of k-step u (keys 16u..16u+15): S tiles 2u and 2u+1.
template <typename T, int kSAcc>
__device__ __forceinline__ void PackP(const float (&s)[kSAcc], std::uint32_t (&p)[kSAcc / 8][4]) {
#pragma unroll
  for (int u = 0; u < kSAcc / 8; ++u) {
    p[u][0] = PackPair<T>(s[8 * u], s[8 * u + 1]);      // row g,     keys 16u + 2c, +1
    p[u][1] = PackPair<T>(s[8 * u + 2], s[8 * u + 3]);  // row g + 8, the same keys
    p[u][2] = PackPair<T>(s[8 * u + 4], s[8 * u + 5]);  // row g,     keys 16u + 8 + 2c, +1
    p[u][3] = PackPair<T>(s[8 * u + 6], s[8 * u + 7]);  // row g + 8
  }
}

template <int kCount>
__device__ __forceinline__ void Rescale(float (&o)[kCount], const float (&alpha)[2]) {
#pragma unroll
  for (int i = 0; i < kCount; ++i) o[i] *= alpha[(i / 2) % 2];
}

// S = Q_i K_jᵀ for this consumer's 64 rows: d/16 k-steps of m64n128k16; k-step ks reads 32 bytes at
// (ks mod 4)·32 of column block ks / 4 of both operands. Issued, not waited for.
template <typename T, int kD>
__device__ __forceinline__ void IssueScores(float (&s)[Flash3Traits<kD>::kBc / 2], std::uint32_t q_consumer,
                                            std::uint32_t k_stage) {
  using Traits = Flash3Traits<kD>;
#pragma unroll
  for (int ks = 0; ks < kD / 16; ++ks) {
    const std::uint32_t within = (ks % 4) * 32;
    const std::uint64_t a_desc = SwizzledDescriptor(q_consumer + (ks / 4) * Traits::kQBlockBytes + within, 16, 1024);
    const std::uint64_t b_desc = SwizzledDescriptor(k_stage + (ks / 4) * Traits::kKVBlockBytes + within, 16, 1024);
    Wgmma<T, Traits::kBc>::SS(s, a_desc, b_desc, ks > 0);
  }
}
// O += P̃ V_j: B_c/16 k-steps of m64n{d}k16, V_j N-major. Issued, not waited for.
template <typename T, int kD>
__device__ __forceinline__ void IssueOutput(float (&o)[kD / 2], const std::uint32_t (&p)[Flash3Traits<kD>::kBc / 16][4],
                                            std::uint32_t v_stage) {
  using Traits = Flash3Traits<kD>;
#pragma unroll
  for (int u = 0; u < Traits::kBc / 16; ++u)
    Wgmma<T, kD>::RS(o, p[u], SwizzledDescriptor(v_stage + u * 16 * 128, Traits::kKVBlockBytes, 1024), 1);
}

// Grid: block b takes work tiles b, b + gridDim.x, ... (one each with one block per tile). Warpgroup 0 is the
// producer, warpgroups 1 and 2 the consumers: consumer c owns rows 64c..64c+63 of Q_i, its warp w rows 16w.. of
// those, and a lane rows g and g+8 of its warp's 16. Both sides walk the same work tiles and K/V tiles; the K/V
// ring position `it` counts tiles over the block's whole life.
template <typename T, int kD, unsigned kFlags>
__global__ void __launch_bounds__(Flash3Traits<kD>::kThreads, 1)
    Flash3WgmmaKernel(const __grid_constant__ CUtensorMap q_map, const __grid_constant__ CUtensorMap k_map,
                      const __grid_constant__ CUtensorMap v_map, const Flash3Params params) {
  using Traits = Flash3Traits<kD>;
  constexpr int kBr = Traits::kBr, kBc = Traits::kBc, kStages = Traits::kStages;
  constexpr bool kOverlap = (kFlags & kFlagOverlapSoftmax) != 0;
  constexpr bool kLongestFirst = (kFlags & kFlagLongestFirst) != 0;
  constexpr bool kStagedStore = (kFlags & kFlagStagedStore) != 0;
  extern __shared__ unsigned char shared_raw[];
  const SharedLayout<kD> smem{(SharedAddress(shared_raw) + 1023u) & ~1023u};

  const int warpgroup = threadIdx.x / 128;
  if (threadIdx.x == 0) {
    BarrierInit(smem.QFull(), 1);
    BarrierInit(smem.QEmpty(), Traits::kReleaseCount);
    for (int stage = 0; stage < kStages; ++stage) {
      BarrierInit(smem.KFull(stage), 1);
      BarrierInit(smem.VFull(stage), 1);
      BarrierInit(smem.KEmpty(stage), Traits::kReleaseCount);
      BarrierInit(smem.VEmpty(stage), Traits::kReleaseCount);
    }
    // The initialized barriers must be visible to the copy engine (the async proxy) as well.
    asm volatile("fence.mbarrier_init.release.cluster;\nfence.proxy.async.shared::cta;\n" ::: "memory");
  }
  __syncthreads();

  if (warpgroup == 0) {
    // ---- Producer warpgroup: one thread issues every TMA copy; the other 127 give their registers back, leave.
    SetMaxRegistersDecrease<kProducerRegisters>();
    if (threadIdx.x == 0) {
      TmaPrefetchDescriptor(q_map);
      TmaPrefetchDescriptor(k_map);
      TmaPrefetchDescriptor(v_map);
      Produce<kD, kLongestFirst>(smem, q_map, k_map, v_map, params);
    }
  } else {
    // ---- Consumer warpgroups: S = Q_i K_jᵀ (wgmma SS), online softmax in registers, O_i += P̃ V_j (wgmma RS).
    SetMaxRegistersIncrease<kConsumerRegisters>();
    const int consumer = warpgroup - 1;
    const int warp = (threadIdx.x / 32) % 4, lane = threadIdx.x % 32;
    const int g = lane / 4, quad = lane % 4;
    const int n = params.n;
    constexpr int kSAcc = kBc / 2;  // S accumulators a thread holds: 64 rows × 128 keys / 128 threads
    constexpr int kOAcc = kD / 2;   // O accumulators: 64 rows × d / 128 threads
    // Q_i rows of this consumer: 64 rows × 128 bytes into each column block.
    const std::uint32_t q_consumer = smem.Q() + consumer * 64 * 128;
    const auto release = [&](std::uint32_t barrier) {
      if (lane == 0) BarrierArrive(barrier);  // one arrival per warp, after the warp's wgmma wait
    };
    int it = 0, local = 0;
    for (int work = BlockWork<kLongestFirst>(0, params); work < params.work_tiles;
         work = BlockWork<kLongestFirst>(++local, params)) {
      const WorkTile tile = DecodeWorkTile<kBr, kBc, kLongestFirst>(work, params);
      const int warp_row0 = tile.q_row0 + consumer * 64 + warp * 16;
      const int row_a = warp_row0 + g;
      float o_acc[kOAcc];
#pragma unroll
      for (int i = 0; i < kOAcc; ++i) o_acc[i] = 0.0f;
      float row_max[2] = {-INFINITY, -INFINITY}, row_sum[2] = {0.0f, 0.0f}, alpha[2];
      float s[kSAcc];
      std::uint32_t p[kSAcc / 8][4];
      BarrierWait(smem.QFull(), static_cast<std::uint32_t>(local) & 1u);

      if constexpr (kOverlap) {
        // Tile 0: S_0 alone.
        {
          const RingSlot<kStages> slot(it);
          BarrierWait(smem.KFull(slot.stage), slot.parity);
          WgmmaFence();
          IssueScores<T, kD>(s, q_consumer, smem.K(slot.stage));
          WgmmaCommit();
          WgmmaWait<0>();
          PinRegisters(s);
          release(smem.KEmpty(slot.stage));
          if (tile.kv_tiles == 1) release(smem.QEmpty());
          SoftmaxTile(s, row_max, row_sum, alpha, 0, row_a, warp_row0, quad, params);
          PackP<T>(s, p);
        }
        // Tile j ≥ 1: issue S_j and P̃_{j−1} V_{j−1}; wait for S_j only, run its softmax while the tensor cores
        // finish the product, then wait for that, rescale O by α_j and repack P̃_j.
        for (int j = 1; j < tile.kv_tiles; ++j) {
          const RingSlot<kStages> slot(it + j), previous(it + j - 1);
          BarrierWait(smem.KFull(slot.stage), slot.parity);
          WgmmaFence();
          IssueScores<T, kD>(s, q_consumer, smem.K(slot.stage));
          WgmmaCommit();
          BarrierWait(smem.VFull(previous.stage), previous.parity);
          // o_acc and p were last written by ordinary instructions (Rescale, PackP) and the wait's loop stands
          // between the fence above and this product: it needs a fence of its own, which ptxas would otherwise
          // inject (C7519, "warpgroup.arrive is injected"). Waiting for V_{j−1} before the fence above instead, so
          // one fence serves both, costs 1-8% (docs/results/2026-11-25-h200-flash3-arrive).
          WgmmaFence();
          IssueOutput<T, kD>(o_acc, p, smem.V(previous.stage));
          WgmmaCommit();
          WgmmaWait<1>();
          PinRegisters(s);
          release(smem.KEmpty(slot.stage));
          if (j + 1 == tile.kv_tiles) release(smem.QEmpty());
          SoftmaxTile(s, row_max, row_sum, alpha, j * kBc, row_a, warp_row0, quad, params);
          WgmmaWait<0>();
          PinRegisters(o_acc);
          PinRegisters(p);
          release(smem.VEmpty(previous.stage));
          Rescale(o_acc, alpha);
          PackP<T>(s, p);
        }
        // The last tile's P̃ V.
        const RingSlot<kStages> last(it + tile.kv_tiles - 1);
        BarrierWait(smem.VFull(last.stage), last.parity);
        WgmmaFence();
        IssueOutput<T, kD>(o_acc, p, smem.V(last.stage));
        WgmmaCommit();
        WgmmaWait<0>();
        PinRegisters(o_acc);
        PinRegisters(p);
        release(smem.VEmpty(last.stage));
      } else {
        for (int j = 0; j < tile.kv_tiles; ++j) {
          const RingSlot<kStages> slot(it + j);
          BarrierWait(smem.KFull(slot.stage), slot.parity);
          WgmmaFence();
          IssueScores<T, kD>(s, q_consumer, smem.K(slot.stage));
          WgmmaCommit();
          WgmmaWait<0>();
          PinRegisters(s);
          release(smem.KEmpty(slot.stage));
          if (j + 1 == tile.kv_tiles) release(smem.QEmpty());
          SoftmaxTile(s, row_max, row_sum, alpha, j * kBc, row_a, warp_row0, quad, params);
          Rescale(o_acc, alpha);
          PackP<T>(s, p);
          BarrierWait(smem.VFull(slot.stage), slot.parity);
          WgmmaFence();
          IssueOutput<T, kD>(o_acc, p, smem.V(slot.stage));
          WgmmaCommit();
          WgmmaWait<0>();
          PinRegisters(o_acc);
          PinRegisters(p);
          release(smem.VEmpty(slot.stage));
        }
      }
      it += tile.kv_tiles;

      // O_i = diag(ℓ_i)⁻¹ O_i. Staged: the warpgroup writes its 64 rows, converted to 16 bits, into the O staging
      // tile (Q's swizzled layout: the 8 rows of one store land in 8 bank groups), then copies them out row after
      // row in 16-byte stores. Direct: 4-byte pairs straight from the accumulators. Rows ≥ N are never stored.
      float inverse_sum[2];
#pragma unroll
      for (int r = 0; r < 2; ++r) {
        float sum = row_sum[r];
        sum += __shfl_xor_sync(0xffffffffu, sum, 1);
        sum += __shfl_xor_sync(0xffffffffu, sum, 2);
        inverse_sum[r] = 1.0f / sum;
      }
      T* o_head = static_cast<T*>(params.o) + static_cast<std::size_t>(tile.head) * n * kD;
      const int row_b = row_a + 8;
      if constexpr (kStagedStore) WarpgroupBarrier(1 + consumer);  // the last tile's copy-out has read the tile
#pragma unroll
      for (int t = 0; t < kD / 8; ++t) {
        const std::uint32_t top = PackPair<T>(o_acc[4 * t] * inverse_sum[0], o_acc[4 * t + 1] * inverse_sum[0]);
        const std::uint32_t bottom =
            PackPair<T>(o_acc[4 * t + 2] * inverse_sum[1], o_acc[4 * t + 3] * inverse_sum[1]);
        if constexpr (kStagedStore) {
          const int tile_row = consumer * 64 + warp * 16 + g;  // tile_row + 8 has the same swizzle
          const std::uint32_t address = smem.O() + (t / 8) * Traits::kQBlockBytes + tile_row * 128 +
                                        (((t % 8) ^ (tile_row % 8)) * 16) + 4 * quad;
          asm volatile("st.shared.b32 [%0], %1;\n" ::"r"(address), "r"(top));
          asm volatile("st.shared.b32 [%0], %1;\n" ::"r"(address + 8 * 128), "r"(bottom));
        } else {
          const int col = t * 8 + 2 * quad;
          if (row_a < n) *reinterpret_cast<std::uint32_t*>(o_head + static_cast<std::size_t>(row_a) * kD + col) = top;
          if (row_b < n)
            *reinterpret_cast<std::uint32_t*>(o_head + static_cast<std::size_t>(row_b) * kD + col) = bottom;
        }
      }
      if constexpr (kStagedStore) {
        WarpgroupBarrier(1 + consumer);  // the warpgroup's 64 rows are in shared memory
        constexpr int kChunksPerRow = kD / 8;
        const int thread_in_group = threadIdx.x % 128;
#pragma unroll
        for (int step = 0; step < 64 * kChunksPerRow / 128; ++step) {
          const int index = step * 128 + thread_in_group;
          const int row = index / kChunksPerRow, chunk = index % kChunksPerRow;
          const int tile_row = consumer * 64 + row;
          if (tile.q_row0 + tile_row < n) {
            uint4 value;
            asm volatile("ld.shared.v4.b32 {%0, %1, %2, %3}, [%4];\n"
                         : "=r"(value.x), "=r"(value.y), "=r"(value.z), "=r"(value.w)
                         : "r"(smem.O() + (chunk / 8) * Traits::kQBlockBytes + tile_row * 128 +
                               (((chunk % 8) ^ (tile_row % 8)) * 16)));
            *reinterpret_cast<uint4*>(o_head + static_cast<std::size_t>(tile.q_row0 + tile_row) * kD + chunk * 8) =
                value;
          }
        }
      }
    }
  }
}

}  // namespace wgmma_detail

// ---------------------------------------------------------------------------------------------------------
// [SECTION] 4. Host
// ---------------------------------------------------------------------------------------------------------

namespace {

using wgmma_detail::Flash3Params;
using wgmma_detail::Flash3Traits;

// cuTensorMapEncodeTiled through the runtime's driver entry point (the driver library is loaded by the runtime
// anyway; linking libcuda directly would tie the build to a driver stub).
using EncodeTiledFunction = CUresult (*)(CUtensorMap*, CUtensorMapDataType, cuuint32_t, void*, const cuuint64_t*,
                                         const cuuint64_t*, const cuuint32_t*, const cuuint32_t*, CUtensorMapInterleave,
                                         CUtensorMapSwizzle, CUtensorMapL2promotion, CUtensorMapFloatOOBfill);

EncodeTiledFunction TensorMapEncoder() {
  static const EncodeTiledFunction encoder = [] {
    void* function = nullptr;
    cudaDriverEntryPointQueryResult found = cudaDriverEntryPointSymbolNotFound;
    if (cudaGetDriverEntryPointByVersion("cuTensorMapEncodeTiled", &function, 12000, cudaEnableDefault, &found) !=
            cudaSuccess ||
        found != cudaDriverEntryPointSuccess)
      return static_cast<EncodeTiledFunction>(nullptr);
    return reinterpret_cast<EncodeTiledFunction>(function);
  }();
  return encoder;
}

// The (B·H, N, d) tensor as a 3-D tensor map (d fastest) read in boxes of 64 columns × 128 rows × 1 head with
// the 128-byte swizzle; out-of-range rows of a head read as zeros.
bool EncodeTensorMap(CUtensorMap* map, const void* data, DType dtype, int batch_heads, int n, int d) {
  const EncodeTiledFunction encode = TensorMapEncoder();
  if (encode == nullptr) return false;
  const cuuint64_t dims[3] = {static_cast<cuuint64_t>(d), static_cast<cuuint64_t>(n),
                              static_cast<cuuint64_t>(batch_heads)};
  const cuuint64_t strides[2] = {static_cast<cuuint64_t>(d) * 2, static_cast<cuuint64_t>(n) * d * 2};  // bytes
  const cuuint32_t box[3] = {64, 128, 1};
  const cuuint32_t element_strides[3] = {1, 1, 1};
  const CUresult result = encode(
      map, dtype == DType::kFp16 ? CU_TENSOR_MAP_DATA_TYPE_FLOAT16 : CU_TENSOR_MAP_DATA_TYPE_BFLOAT16, 3,
      const_cast<void*>(data), dims, strides, box, element_strides, CU_TENSOR_MAP_INTERLEAVE_NONE,
      CU_TENSOR_MAP_SWIZZLE_128B, CU_TENSOR_MAP_L2_PROMOTION_L2_256B, CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE);
  return result == CUDA_SUCCESS;
}

// Compute capability 9.0 (the sm_90a code runs nowhere else), asked once.
std::optional<std::string> DeviceNotHopper() {
  static const std::optional<std::string> reason = []() -> std::optional<std::string> {
    int device = 0, major = 0, minor = 0;
    if (cudaGetDevice(&device) != cudaSuccess ||
        cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, device) != cudaSuccess ||
        cudaDeviceGetAttribute(&minor, cudaDevAttrComputeCapabilityMinor, device) != cudaSuccess) {
      cudaGetLastError();  // leave no sticky error behind for the caller
      return "no CUDA device: flash3_wgmma needs a Hopper GPU (compute capability 9.0)";
    }
    if (major != 9 || minor != 0)
      return Sprintf("compute capability %d.%d: flash3_wgmma needs a Hopper GPU (9.0; wgmma and TMA, sm_90a)", major,
                     minor);
    return std::nullopt;
  }();
  return reason;
}

template <typename T, int kD, unsigned kFlags>
cudaError_t LaunchKernel(const AttentionArgs& args, const CUtensorMap& q_map, const CUtensorMap& k_map,
                         const CUtensorMap& v_map, const Flash3Params& params, bool persistent) {
  using Traits = Flash3Traits<kD>;
  auto* kernel = &wgmma_detail::Flash3WgmmaKernel<T, kD, kFlags>;
  static const cudaError_t attribute_status =
      cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, Traits::kSharedBytes);
  if (attribute_status != cudaSuccess) return attribute_status;
  static int multiprocessors = 0;
  if (multiprocessors == 0) {
    int device = 0;
    const cudaError_t status = cudaGetDevice(&device);
    if (status == cudaSuccess) cudaDeviceGetAttribute(&multiprocessors, cudaDevAttrMultiProcessorCount, device);
    if (status != cudaSuccess || multiprocessors <= 0) return status != cudaSuccess ? status : cudaErrorInvalidDevice;
  }
  const int blocks = persistent ? std::min(params.work_tiles, multiprocessors) : params.work_tiles;
  kernel<<<blocks, Traits::kThreads, Traits::kSharedBytes, args.stream>>>(q_map, k_map, v_map, params);
  return cudaGetLastError();
}

}  // namespace

std::string Flash3WgmmaOptionsName(unsigned options) {
  if (options == 0) return "default";
  std::string name;
  const auto add = [&](const std::string& part) { name += (name.empty() ? "" : "+") + part; };
  if (options & kFlash3WgmmaOtherGrid) add("other-grid");
  if (options & kFlash3WgmmaSerialSoftmax) add("serial-softmax");
  if (options & kFlash3WgmmaDirectStore) add("direct-store");
  if (options & ~kFlash3WgmmaAllOptions) add(Sprintf("unknown-0x%x", options & ~kFlash3WgmmaAllOptions));
  return name;
}

std::optional<std::string> Flash3WgmmaNotApplicable(const AttentionShape& shape, DType dtype) {
  if (dtype == DType::kFp32) return "fp32: flash3_wgmma takes fp16 or bf16 inputs (wgmma .f16/.bf16)";
  if (shape.d != 64 && shape.d != 128) return Sprintf("d = %d: only d = 64 and 128", shape.d);
  if (shape.n < 1) return Sprintf("N = %d: N must be at least 1", shape.n);
  if (shape.batch < 1 || shape.heads < 1)
    return Sprintf("batch %d, heads %d: both must be at least 1", shape.batch, shape.heads);
  const long long batch_heads = static_cast<long long>(shape.batch) * shape.heads;
  if (batch_heads * ((shape.n + 127) / 128) > 0x7fffffffll)
    return Sprintf("B·H = %lld with N = %d: more than 2^31 - 1 (head, Q tile) pairs", batch_heads, shape.n);
  if (batch_heads * shape.n * shape.d > (1ll << 40)) return "B·H·N·d over 2^40 elements (the tensor map's reach)";
  // The running max is taken on raw scores and scaled afterwards: that orders them right only for scale > 0.
  if (!(shape.scale > 0.0f) || !std::isfinite(shape.scale))
    return Sprintf("scale = %g: flash3_wgmma needs a positive finite scale", static_cast<double>(shape.scale));
  return DeviceNotHopper();
}

std::size_t Flash3WgmmaWorkspaceBytes(const AttentionShape& /*shape*/, DType /*dtype*/) { return 0; }

cudaError_t LaunchFlash3Wgmma(const AttentionArgs& args) {
  if (args.options & ~kFlash3WgmmaAllOptions) return cudaErrorInvalidValue;
  for (const void* pointer : {args.q, args.k, args.v, static_cast<const void*>(args.o)})
    if (pointer == nullptr || reinterpret_cast<std::uintptr_t>(pointer) % 16 != 0) return cudaErrorInvalidValue;
  if (auto reason = Flash3WgmmaNotApplicable(args.shape, args.dtype))
    return reason->rfind("compute capability", 0) == 0 || reason->rfind("no CUDA", 0) == 0 ? cudaErrorInvalidDevice
                                                                                            : cudaErrorInvalidValue;
  const int batch_heads = args.shape.batch * args.shape.heads, n = args.shape.n, d = args.shape.d;
  CUtensorMap q_map, k_map, v_map;
  if (!EncodeTensorMap(&q_map, args.q, args.dtype, batch_heads, n, d) ||
      !EncodeTensorMap(&k_map, args.k, args.dtype, batch_heads, n, d) ||
      !EncodeTensorMap(&v_map, args.v, args.dtype, batch_heads, n, d))
    return cudaErrorInvalidValue;
  const int q_tiles = (n + 127) / 128;
  const Flash3Params params{args.o, n, q_tiles, q_tiles * batch_heads, args.shape.scale * 1.4426950408889634f,
                            args.shape.causal ? 1 : 0};
  // Default grid (H200 run of 2026-11-21, kernels/README.md): persistent, except causal at d = 128, where one
  // block per Q tile (the hardware balancing the uneven tiles) measured 4-10% faster; causal at d = 64 the
  // persistent grid was 7-14% faster (the producer prefetching the next tile matters more for short tiles).
  const bool default_persistent = !(args.shape.causal && d == 128);
  const bool persistent = default_persistent != ((args.options & kFlash3WgmmaOtherGrid) != 0);
  // Each compile-time options bit flips one flag of the default kernel (overlap on, staged store on).
  const unsigned flags = (wgmma_detail::kFlagOverlapSoftmax | wgmma_detail::kFlagStagedStore) ^
                         ((args.options & kFlash3WgmmaSerialSoftmax) ? wgmma_detail::kFlagOverlapSoftmax : 0u) ^
                         ((args.options & kFlash3WgmmaDirectStore) ? wgmma_detail::kFlagStagedStore : 0u);
  // Causal on the persistent grid: longest tiles first (the default kernel only; the ablation bits keep the
  // head-major order they were measured with). H200, docs/results/2026-11-25-h200-flash3-arrive run4.
  const bool longest_first =
      args.shape.causal && persistent && flags == (wgmma_detail::kFlagOverlapSoftmax | wgmma_detail::kFlagStagedStore);
  const auto launch = [&](auto element, auto head_dim) {
    using T = decltype(element);
    constexpr int kD = decltype(head_dim)::value;
    using wgmma_detail::kFlagOverlapSoftmax;
    using wgmma_detail::kFlagStagedStore;
    using wgmma_detail::kFlagLongestFirst;
    if (longest_first)
      return LaunchKernel<T, kD, kFlagOverlapSoftmax | kFlagStagedStore | kFlagLongestFirst>(args, q_map, k_map, v_map,
                                                                                             params, true);
    switch (flags) {
      case 0: return LaunchKernel<T, kD, 0>(args, q_map, k_map, v_map, params, persistent);
      case kFlagOverlapSoftmax:
        return LaunchKernel<T, kD, kFlagOverlapSoftmax>(args, q_map, k_map, v_map, params, persistent);
      case kFlagStagedStore:
        return LaunchKernel<T, kD, kFlagStagedStore>(args, q_map, k_map, v_map, params, persistent);
      default:
        return LaunchKernel<T, kD, kFlagOverlapSoftmax | kFlagStagedStore>(args, q_map, k_map, v_map, params,
                                                                           persistent);
    }
  };
  using D64 = std::integral_constant<int, 64>;
  using D128 = std::integral_constant<int, 128>;
  if (args.dtype == DType::kFp16) return d == 64 ? launch(__half{}, D64{}) : launch(__half{}, D128{});
  return d == 64 ? launch(__nv_bfloat16{}, D64{}) : launch(__nv_bfloat16{}, D128{});
}

}  // namespace flashviz::cuda
