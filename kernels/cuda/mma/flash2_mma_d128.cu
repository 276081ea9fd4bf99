// flash2_mma's kernels for d = 128 (both dtypes, every options combination), in a file of their own so the two
// head dimensions compile in parallel. The kernel itself is flash2_mma_kernel.cuh; the story, flash2_mma.cu.
#include "kernels/cuda/mma/flash2_mma_kernel.cuh"

namespace flashviz::cuda::mma_detail {

cudaError_t LaunchFlash2MmaD128(const AttentionArgs& args, float scale_log2) {
  return DispatchFlash2Mma<128>(args, scale_log2);
}

}  // namespace flashviz::cuda::mma_detail
