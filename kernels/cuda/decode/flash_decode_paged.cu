// flash_decode_paged: flash_decode on a paged KV cache (vLLM's PagedAttention layout, FlashAttention-2's block
// table). What changes: where a key's row lives. K and V are pools [num_blocks][G][P][d]; sequence b's logical page
// p (keys p·P … p·P + P − 1) is physical block block_table[b][p]. Each 16-byte row copy of the pipeline looks its
// page up (one int32 read through the read-only cache, shared by the K and the V copy); rows of one page of one
// KV head are contiguous, so at P ≥ 64 a whole tile comes from one page and the reads are those of flash_decode.
// Below 64 a tile gathers ⌈64/P⌉ pages: the copies stay 16 bytes wide, only the lookups multiply.
#include "kernels/cuda/decode/flash_decode_kernel.cuh"

namespace flashviz::cuda {

cudaError_t LaunchFlashDecodePaged(const DecodeArgs& args) {
  if (const cudaError_t error = CheckDecodeArgs("flash_decode_paged", args); error != cudaSuccess) return error;
  return decode_device::LaunchFlashDecodeKernels<true>(args);
}

}  // namespace flashviz::cuda
