// The launch of ring_attend (ring_attend_kernel.cuh): one ring step of one device, on a stream. Internal to
// kernels/cuda/ring (it names cudaStream_t); the plain C++ API is ring_attention.h.
#pragma once

#include <cuda_runtime.h>

#include "kernels/cuda/attention_types.h"
#include "kernels/cuda/ring/ring_attend_kernel.cuh"

namespace flashviz::cuda {

struct RingAttendArgs {
  DType dtype = DType::kFp16;
  int d = 128;
  int heads = 1;  // B·H, the grid's y
  const void* q = nullptr;
  const void* k = nullptr;  // the held K/V: K then V, each [B·H][kv_rows][d]
  const void* v = nullptr;
  float* o_state = nullptr;
  float* m_state = nullptr;
  float* l_state = nullptr;
  void* o_out = nullptr;
  float* lse_out = nullptr;
  ring_detail::RingSegments q_seg, kv_seg;
  float scale = 1;
  bool causal = false, first = true, last = true;
};

// Checks nothing the caller already did (RingShapeError); returns the launch's error.
cudaError_t LaunchRingAttend(const RingAttendArgs& args, cudaStream_t stream);

// Shared memory of one block, for the record (96 KB at d = 128, 48 KB at d = 64).
int RingAttendSharedBytes(int d);

}  // namespace flashviz::cuda
