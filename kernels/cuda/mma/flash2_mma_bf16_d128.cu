// flash2_mma's kernels for bf16, d = 128: all 2^kFlagCount option combinations, in a file of their own so the
// four (dtype, d) groups compile in parallel. The kernel is flash2_mma_kernel.cuh; the story, flash2_mma.cu.
#include "kernels/cuda/mma/flash2_mma_kernel.cuh"

namespace flashviz::cuda::mma_detail {

cudaError_t LaunchFlash2MmaBf16D128(const AttentionArgs& args, float scale_log2) {
  return DispatchFlash2Mma<__nv_bfloat16, 128>(args, scale_log2);
}

}  // namespace flashviz::cuda::mma_detail
