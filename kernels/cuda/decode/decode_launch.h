// The one launch signature of the decoding kernels: every decode variant takes DecodeArgs, so the registry
// (decode_rows.inc), `flashviz bench --decode`, the tests and the harness call them alike. Plain C++ apart from
// cudaStream_t, like backward_launch.h.
#pragma once

#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>

#include "kernels/cuda/decode/decode_registry.h"  // DecodeLaunchShape, the layouts

namespace flashviz::cuda {

// q, o: [B][H][R][d]; k, v: [B][G][N][d], or with shape.page_size = P > 0 the pools [blocks][G][P][d] that
// block_table ([B][⌈N/P⌉] int32, physical block of each logical page) indexes (decode_registry.h). Elements of
// `dtype` (fp16 or bf16), every pointer 16-byte aligned. `workspace`: at least DecodeWorkspaceBytes for the split
// count in use (DecodeSplits(shape, splits, SM count)), zero-filled before its first use (its arrival counters; the
// kernels leave them 0), used by one launch at a time; `splits`: 0 for the automatic rule, > 0 forces a count (the
// sweep and the tests use it).
struct DecodeArgs {
  DecodeLaunchShape shape;
  DType dtype = DType::kFp16;
  const void* q = nullptr;
  const void* k = nullptr;
  const void* v = nullptr;
  void* o = nullptr;
  const std::int32_t* block_table = nullptr;
  void* workspace = nullptr;
  std::size_t workspace_bytes = 0;
  int splits = 0;
  cudaStream_t stream = nullptr;
};

using DecodeLaunchFunction = cudaError_t (*)(const DecodeArgs& args);

}  // namespace flashviz::cuda
