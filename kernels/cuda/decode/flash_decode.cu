// flash_decode: split-KV decoding (Flash-Decoding) with the query heads of a KV head packed into one block.
//
// What changes versus decode_naive: (1) the KV cache is read once, not H/G times: a block serves every query row
// that reads its KV head (H/G heads × R rows, padded to the 16 rows of mma.sync m16n8k16), so q·k and p·v become
// small matrix products on the tensor cores; (2) the keys are split into ranges of whole 64-key tiles, one block per
// (sequence, KV head, split), so B = 1 still puts blocks on every SM; the splits' partial (m, ℓ, O) are merged by
// the last block of a (sequence, KV head) to finish, M = max_s m_s, α_s = e^(m_s − M), ℓ = Σ α_s ℓ_s,
// O = Σ α_s O_s / ℓ: an arrival counter in the workspace tells a block whether it is the last, so a decoding step
// is one launch (the merge kernel it replaces cost B = 1, N = 4096 2.7 µs of 19.4: run8, 863 → 1002 GB/s);
// (3) K_j and V_j arrive by 16-byte cp.async copies through a 3-4 stage pipeline into XOR-swizzled shared memory
// (ldmatrix reads them without bank conflicts), so several tiles per block are in flight while the tensor cores
// work on the oldest.
//
// The split count (DecodeSplits, decode_registry.cpp): the forced count if one is given; otherwise about one block
// per SM, ⌊SMs / (B·G·⌈H/G·R/16⌉)⌋ splits, but no split shorter than four tiles (256 keys); then at most one split
// per tile and none left empty. Decoding is bound by HBM bandwidth: the rule is about keeping every SM's loads in
// flight without a second, partial wave of blocks. The sweep with the merge fused (H100, 2026-11-25, fp16, H = 32,
// G = 8, R = 1, d = 128; GB/s of KV cache, docs/results/2026-11-25-h100-decode-dev/run7; run3 before the fusion):
//
//   splits forced      2     4     8    16    32    64    rule (splits)
//   B=1 N=4096       555   834   982   996   895   711    1026 (16)
//   B=1 N=32768      740  1394  2072  2178  2103  1988    2179 (16)
//   B=1 N=131072     776  1526  2684  2774  2751  2717    2819 (16)
//   B=8 N=4096      2184  2173  2094  2100  2037  1565    2201 (2)
//   B=8 N=32768     2966  2947  2925  2921  2898  2851    2967 (2)
//   B=8 N=131072    3102  3089  3067  3044  3051  3052    3099 (2)
//
// The fused merge makes more splits cheaper but did not move the optimum: 16 at B = 1 (8 ≈ 16 at N = 4096), 2 at
// B = 8. Tried and dropped (run5, run6): Hopper's bulk L2 prefetch of the tiles ahead of the copies (0-35% slower
// everywhere) and a 6-stage pipeline at one block per SM (no faster than 3 stages). The first rule (about two
// blocks per SM, run2) chose 5 splits at B = 8: a second wave, 2809 GB/s instead of 3094 at N = 131072.
// Measured (run8; the device copy 2.83 TB/s, PyTorch's cuDNN backend in the same run): 1002 GB/s at B = 1,
// N = 4096 (cuDNN 873, 1.15×), 2171 at N = 32768 (2078), 2783 at N = 131072 (2771), 2181 at B = 8, N = 4096
// (2075), 2938-3094 at B ≥ 8, N ≥ 32768 (2932-3093): ahead of cuDNN where a step is latency-bound, on par where
// the cache is ≥ 256 MB and HBM is the limit.
#include "kernels/cuda/decode/flash_decode_kernel.cuh"

namespace flashviz::cuda {

cudaError_t LaunchFlashDecode(const DecodeArgs& args) {
  if (const cudaError_t error = CheckDecodeArgs("flash_decode", args); error != cudaSuccess) return error;
  return decode_device::LaunchFlashDecodeKernels<false>(args);
}

}  // namespace flashviz::cuda
