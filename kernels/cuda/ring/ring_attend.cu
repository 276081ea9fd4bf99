// ring_attend's four instantiations (fp16/bf16 × d = 64/128) and their launch. The kernel and its idea are in
// ring_attend_kernel.cuh.
#include "kernels/cuda/ring/ring_attend.h"

namespace flashviz::cuda {
namespace {

int SegmentTiles(const ring_detail::RingSegments& segments, int k, int rows_per_tile) {
  return k < segments.count ? (segments.rows[k] + rows_per_tile - 1) / rows_per_tile : 0;
}

template <typename T, int kD>
cudaError_t Launch(const RingAttendArgs& a, cudaStream_t stream) {
  using Traits = ring_detail::RingAttendTraits<kD>;
  auto* kernel = &ring_detail::RingAttendKernel<T, kD>;
  // Per device (the attribute belongs to the current device's context, and the NCCL transport drives one GPU per
  // thread), so it is set before every launch: cheap and idempotent.
  if (cudaError_t error = device::AllowSharedMemory(kernel, Traits::kSharedBytes); error != cudaSuccess) return error;
  ring_detail::RingAttendParams<T> p{};
  p.q = static_cast<const T*>(a.q);
  p.k = static_cast<const T*>(a.k);
  p.v = static_cast<const T*>(a.v);
  p.o_state = a.o_state;
  p.m_state = a.m_state;
  p.l_state = a.l_state;
  p.o_out = static_cast<T*>(a.o_out);
  p.lse_out = a.lse_out;
  p.q_seg = a.q_seg;
  p.kv_seg = a.kv_seg;
  p.q_rows = a.q_seg.rows[0] + (a.q_seg.count > 1 ? a.q_seg.rows[1] : 0);
  p.kv_rows = a.kv_seg.rows[0] + (a.kv_seg.count > 1 ? a.kv_seg.rows[1] : 0);
  p.q_tiles0 = SegmentTiles(a.q_seg, 0, Traits::kBr);
  p.scale_log2 = a.scale * device::kLog2e;
  p.causal = a.causal;
  p.first = a.first;
  p.last = a.last;
  const dim3 grid(p.q_tiles0 + SegmentTiles(a.q_seg, 1, Traits::kBr), a.heads);
  kernel<<<grid, Traits::kThreads, Traits::kSharedBytes, stream>>>(p);
  return cudaGetLastError();
}

}  // namespace

cudaError_t LaunchRingAttend(const RingAttendArgs& a, cudaStream_t stream) {
  if (a.dtype == DType::kFp16) return a.d == 64 ? Launch<__half, 64>(a, stream) : Launch<__half, 128>(a, stream);
  if (a.dtype == DType::kBf16)
    return a.d == 64 ? Launch<__nv_bfloat16, 64>(a, stream) : Launch<__nv_bfloat16, 128>(a, stream);
  return cudaErrorInvalidValue;
}

int RingAttendSharedBytes(int d) {
  return d == 64 ? ring_detail::RingAttendTraits<64>::kSharedBytes : ring_detail::RingAttendTraits<128>::kSharedBytes;
}

}  // namespace flashviz::cuda
