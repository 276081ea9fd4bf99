// flash2_mma's kernels for fp16, d = 64: the shipped one in its two forms (flash2_mma_kernel.cuh)
// and the ablation study's 2^kFlagCount (ablation/flash2_mma_ablation.cuh), in a file of their own so that the four
// (dtype, d) groups compile in parallel.
// The story is flash2_mma.cu.
#include "kernels/cuda/mma/ablation/flash2_mma_ablation.cuh"
#include "kernels/cuda/mma/flash2_mma_kernel.cuh"

namespace flashviz::cuda::mma_detail {

cudaError_t LaunchFlash2MmaFp16D64(const AttentionArgs& args, float scale_log2) {
  return args.options == 0 ? LaunchShippedFlash2Mma<__half, 64>(args, scale_log2)
                           : LaunchFlash2MmaAblation<__half, 64>(args, scale_log2);
}

}  // namespace flashviz::cuda::mma_detail
