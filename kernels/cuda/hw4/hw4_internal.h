// Between hw4_kernels.cu (dispatch, checks) and the one .cu file per kernel: each kernel file launches its own
// template instances. Not for use outside kernels/cuda/hw4.
#pragma once

#include <cuda_runtime.h>

#include <optional>
#include <string>

#include "kernels/cuda/hw4/hw4_device.cuh"
#include "kernels/cuda/hw4/hw4_kernels.h"

namespace flashviz::cuda::hw4::detail {

// Each launcher runs `heads` heads of p (p.row_tiles is set here, not by the caller) and returns the first
// launch error. The caller has checked d against what the kernel takes.
// `options`: Hw4Options bits (hw4_kernels.h); a kernel ignores the bits that are not its own.
cudaError_t LaunchTf32x3(const KernelParams& p, long long heads, unsigned options, cudaStream_t stream);
cudaError_t LaunchFp32Simt(const KernelParams& p, long long heads, unsigned options, cudaStream_t stream);
// fp32-general picks its block height from d and the device's shared memory: 16 rows, else 8.
int Fp32GeneralRowsPerBlock(int d);  // 0: d does not fit in this device's shared memory
std::optional<std::string> Fp32GeneralNotApplicable(int d);
cudaError_t LaunchFp32General(const KernelParams& p, long long heads, unsigned options, cudaStream_t stream);

// Launches one block per (head, tile of rows_per_block rows), grid.x = heads × T_r, in slices of heads small
// enough for grid.x's limit (2^31 − 1): launch_one(params of the slice, blocks).
template <typename LaunchOne>
cudaError_t LaunchInSlices(KernelParams p, long long heads, int rows_per_block, LaunchOne&& launch_one) {
  p.row_tiles = (p.n + rows_per_block - 1) / rows_per_block;
  const long long max_heads = 0x7fffffffLL / p.row_tiles;
  for (long long first = 0; first < heads; first += max_heads) {
    const long long count = heads - first < max_heads ? heads - first : max_heads;
    KernelParams slice = p;
    slice.q += first * p.qkv_stride;
    slice.k += first * p.qkv_stride;
    slice.v += first * p.qkv_stride;
    slice.o += first * p.o_stride;
    launch_one(slice, static_cast<unsigned>(count * p.row_tiles));
    if (const cudaError_t e = cudaGetLastError(); e != cudaSuccess) return e;
  }
  return cudaSuccess;
}

}  // namespace flashviz::cuda::hw4::detail
