// flash_decode: split-KV decoding (Flash-Decoding) with the query heads of a KV head packed into one block.
//
// What changes versus decode_naive: (1) the KV cache is read once, not H/G times: a block serves every query row
// that reads its KV head (H/G heads × R rows, padded to the 16 rows of mma.sync m16n8k16), so q·k and p·v become
// small matrix products on the tensor cores; (2) the keys are split into ranges of whole 64-key tiles, one block per
// (sequence, KV head, split), so B = 1 still puts blocks on every SM; a merge kernel rescales the splits' partial
// (m, ℓ, O): M = max_s m_s, α_s = e^(m_s − M), ℓ = Σ α_s ℓ_s, O = Σ α_s O_s / ℓ; (3) K_j and V_j arrive by
// 16-byte cp.async copies through a 3-4 stage pipeline into XOR-swizzled shared memory (ldmatrix reads them
// without bank conflicts), so several tiles per block are in flight while the tensor cores work on the oldest.
//
// The split count (DecodeSplits, decode_registry.cpp): the forced count if one is given; otherwise about one block
// per SM, ⌊SMs / (B·G·⌈H/G·R/16⌉)⌋ splits (two per SM for the paged cache), but no split shorter than four tiles
// (256 keys); then at most one split per tile and none left empty. Decoding is bound by HBM bandwidth: the rule is
// about keeping every SM's loads in flight without a second, partial wave of blocks. The sweep that set it (H100,
// 2026-11-25, fp16, H = 32, G = 8, R = 1, d = 128; GB/s of KV cache, docs/results/2026-11-25-h100-decode-dev/run3):
//
//   splits forced      1     2     4     8    16    32    rule (splits)
//   B=1 N=4096       335   530   787   906   873   751    864 (16)
//   B=1 N=32768      378   732  1356  2002  2070  1973   2069 (16)
//   B=1 N=131072     386   765  1499  2640  2758  2700   2774 (16)
//   B=8 N=4096      2136  2134  2086  2031  1961  1830   2128 (2)
//   B=8 N=32768     2832  2935  2931  2910  2885  2836   2955 (2)
//   B=8 N=131072    2918  3094  3076  3062  3036  3020   3093 (2)
//
// The first rule (about two blocks per SM, run2) chose 5 splits at B = 8: 320 blocks for 264 slots, a second wave,
// 2809 GB/s instead of 3094 at N = 131072. The paged cache (run4) peaks at 32 splits at B = 1 (2542 GB/s against
// 2016 at 16): its tiles come from pages in random places, so it wants more tiles in flight per SM.
// Measured (same run; the device copy 2.83 TB/s, PyTorch's cuDNN backend from run2): 877-888 GB/s at B = 1,
// N = 4096 (cuDNN 889), 2088 at N = 32768 (2090), 2756-2782 at N = 131072 (2777), 3098-3112 at B ≥ 8, N ≥ 32768
// (3077-3105): on par with cuDNN everywhere, 98-110% of the copy wherever the cache is ≥ 256 MB.
#include "kernels/cuda/decode/flash_decode_kernel.cuh"

namespace flashviz::cuda {

cudaError_t LaunchFlashDecode(const DecodeArgs& args) {
  if (const cudaError_t error = CheckDecodeArgs("flash_decode", args); error != cudaSuccess) return error;
  return decode_device::LaunchFlashDecodeKernels<false>(args);
}

}  // namespace flashviz::cuda
