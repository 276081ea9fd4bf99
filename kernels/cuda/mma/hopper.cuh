// The Hopper instructions the sm_90a kernels of kernels/cuda/mma issue, as inline PTX: mbarrier, TMA
// (cp.async.bulk.tensor), wgmma (fence/commit/wait, shared-memory descriptors, and the instructions themselves,
// wgmma_ops.inc), setmaxnreg. Device code only; include it from a translation unit built for sm_90a alone.
#pragma once

#include <cuda.h>  // CUtensorMap
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_fp8.h>

#include <cstdint>

#include "kernels/cuda/device_common.cuh"

namespace flashviz::cuda::hopper {

using device::SharedAddress;

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
    asm volatile("{\n.reg .pred p;\nmbarrier.try_wait.parity.shared::cta.b64 p, [%1], %2;\nselp.u32 %0, 1, 0, p;\n}\n"
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
__device__ __forceinline__ void WgmmaFence() {
  asm volatile("wgmma.fence.sync.aligned;\n" ::: "memory");
}
__device__ __forceinline__ void WgmmaCommit() {
  asm volatile("wgmma.commit_group.sync.aligned;\n" ::: "memory");
}
template <int kPending>
__device__ __forceinline__ void WgmmaWait() {
  asm volatile("wgmma.wait_group.sync.aligned %0;\n" ::"n"(kPending) : "memory");
}
// wgmma.wait_group N placed after the instructions that compute `anchor`. Nothing in the overlapped loop's softmax
// depends on the wait for P̃V, and ptxas placed that wait right after the softmax's first FMNMX, so the softmax ran
// after the product instead of beside it (source-level Nsight Compute of Flash3WgmmaKernel, kernels/README.md).
// Here a branch on `anchor` ends the basic block after the softmax, and the SASS shows the wait there (the same
// README). Both sides wait (two spellings, so that the compiler does not merge them into one wait before the
// branch): ptxas sees every path wait and keeps the wgmma pipeline (a wait predicated on `anchor` instead made it
// serialize the wgmma, C7514). An .aligned wait must be taken by the whole warpgroup: the callers pass the bits of
// sums of non-negative floats, whose sign bit is clear (an arithmetic NaN is 0x7FFFFFFF), so `anchor` is never
// 0xFFFFFFFF and every warp takes the first side; lane 0's value makes the branch warp-uniform besides.
template <int kPending>
__device__ __forceinline__ void WgmmaWaitAfter(std::uint32_t anchor) {
  if (__shfl_sync(0xffffffffu, anchor, 0) != 0xFFFFFFFFu)
    asm volatile("wgmma.wait_group.sync.aligned %0;\n" ::"n"(kPending) : "memory");
  else
    asm volatile("wgmma.wait_group.sync.aligned %0; // anchor\n" ::"n"(kPending) : "memory");
}
// A barrier for one warpgroup (128 threads) of the block: id 1 + consumer (0 is __syncthreads).
__device__ __forceinline__ void WarpgroupBarrier(int id) {
  asm volatile("bar.sync %0, 128;\n" ::"r"(id) : "memory");
}
// The same barrier, returning whether `value` was true in any of the 128 threads.
__device__ __forceinline__ bool WarpgroupBarrierOr(int id, bool value) {
  std::uint32_t any;
  asm volatile("{\n.reg .pred p, q;\nsetp.ne.u32 p, %1, 0;\nbar.red.or.pred q, %2, 128, p;\nselp.u32 %0, 1, 0, q;\n}\n"
               : "=r"(any)
               : "r"(static_cast<std::uint32_t>(value)), "r"(id)
               : "memory");
  return any != 0;
}
// Named barrier `id` of `threads` threads in all, some waiting (sync) and some only arriving: the two consumer
// warpgroups hand each other the turn for the softmax this way (ping-pong, flash3_kernel.cuh).
__device__ __forceinline__ void NamedBarrierSync(int id, int threads) {
  asm volatile("bar.sync %0, %1;\n" ::"r"(id), "r"(threads) : "memory");
}
__device__ __forceinline__ void NamedBarrierArrive(int id, int threads) {
  asm volatile("bar.arrive %0, %1;\n" ::"r"(id), "r"(threads) : "memory");
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

// The descriptor `bytes` (a multiple of 16) further on. The start address is the low 14 bits in 16-byte units, and
// a shared-memory address (under 228 KB) never carries out of them, so one 32-bit addition to the low word gives
// SwizzledDescriptor(address + bytes, ...) exactly: a k-step's descriptor from the tile's, instead of masking and
// shifting each address anew.
__device__ __forceinline__ std::uint64_t DescriptorAdvance(std::uint64_t descriptor, std::uint32_t bytes) {
  const std::uint32_t low = static_cast<std::uint32_t>(descriptor) + (bytes >> 4);
  return (descriptor & 0xFFFFFFFF00000000ull) | low;
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
#include "kernels/cuda/mma/wgmma_ops.inc"

}  // namespace flashviz::cuda::hopper
