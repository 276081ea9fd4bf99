// The serial-softmax ablation of flash3_wgmma (the options bit serial-softmax, flash3_wgmma.h; flash3_fp8 has none):
// the consumer loop without the intra-warpgroup overlap, S_j = Q_i K_jᵀ, its softmax and P̃_j V_j one after the other,
// each GEMM waited for at once. The kernel (flash3_kernel.cuh) calls it in place of its overlapped loop when
// kFlagOverlapSoftmax is off; kernels/README.md ("flash3_wgmma: the design and what each part is worth") has what the
// overlap is worth against it.
#pragma once

#include <cstdint>

#include "kernels/cuda/mma/flash3_kernel.cuh"

namespace flashviz::cuda::wgmma_detail {

template <typename Traits>
__device__ __forceinline__ void ConsumeSerially(const SharedLayout<Traits>& smem, int it, int kv_count, int kv_col0,
                                                int q_buffer, std::uint32_t q_consumer,
                                                const std::uint32_t (&q_fragments)[Traits::kQSteps][4],
                                                float (&s)[Traits::kBc / 2], std::uint32_t (&p)[Traits::kPSteps][4],
                                                float (&o_acc)[Traits::kOAcc], float (&row_max)[2], float (&row_sum)[2],
                                                float (&alpha)[2], int row_a, int warp_row0, int quad, int lane,
                                                float scale_log2, const Flash3Params& params) {
  using T = typename Traits::Element;
  const auto release = [&](std::uint32_t barrier) {
    if (lane == 0) BarrierArrive(barrier);  // one arrival per warp, after the warp's wgmma wait
  };
  for (int j = 0; j < kv_count; ++j) {
    const RingSlot<Traits::kStages> slot(it + j);
    BarrierWait(smem.KFull(slot.stage), slot.parity);
    WgmmaFence();
    IssueScores<Traits>(s, q_consumer, q_fragments, smem.K(slot.stage));
    WgmmaCommit();
    WgmmaWait<0>();
    PinRegisters(s);
    release(smem.KEmpty(slot.stage));
    if (!Traits::kQInRegisters && j + 1 == kv_count) release(smem.QEmpty(q_buffer));
    if (SoftmaxTile<Traits>(s, row_max, row_sum, alpha, kv_col0 + j * Traits::kBc, row_a, warp_row0, quad,
                            scale_log2, params))
      Rescale(o_acc, alpha);
    PackP<T>(s, p);
    BarrierWait(smem.VFull(slot.stage), slot.parity);
    WgmmaFence();
    IssueOutput<Traits>(o_acc, p, smem.V(slot.stage));
    WgmmaCommit();
    WgmmaWait<0>();
    PinRegisters(o_acc);
    PinRegisters(p);
    release(smem.VEmpty(slot.stage));
    TakeRowSums<Traits>(o_acc, row_sum);
  }
}

}  // namespace flashviz::cuda::wgmma_detail
