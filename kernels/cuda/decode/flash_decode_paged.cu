// flash_decode_paged: flash_decode on a paged KV cache (vLLM's PagedAttention layout, FlashAttention-2's block
// table). What changes: where a key's row lives. K and V are pools [num_blocks][G][P][d]; sequence b's logical page
// p (keys p·P … p·P + P − 1) is physical block block_table[b][p]. A block reads its split's entries of the table
// into shared memory once, at its start (one coalesced read); rows of one page of one KV head are contiguous, so
// when P is a multiple of the 64-key tile a whole tile comes from one page: one lookup per tile, then the copies of
// flash_decode. Otherwise every row looks its page up (a division and a shared-memory read), a tile gathers
// ⌈64/P⌉ + 1 pages at most, and the split rule gives two blocks per SM to hide that arithmetic.
//
// Measured (H100, fp16, H = 32, G = 8, R = 1, d = 128, P = 64; docs/results/2026-11-25-h100-decode-dev/run8): 94%
// of flash_decode at B = 1, N = 4096 (938 against 1002 GB/s: the table read is one more DRAM round trip before the
// first copy, in a step of 19 µs), 97-99% elsewhere. The per-row lookups (run4) had cost 6-10% at small batches:
// at one block per SM the index arithmetic, not the memory, held a block back.
#include "kernels/cuda/decode/flash_decode_kernel.cuh"

namespace flashviz::cuda {

cudaError_t LaunchFlashDecodePaged(const DecodeArgs& args) {
  if (const cudaError_t error = CheckDecodeArgs("flash_decode_paged", args); error != cudaSuccess) return error;
  return decode_device::LaunchFlashDecodeKernels<true>(args);
}

}  // namespace flashviz::cuda
