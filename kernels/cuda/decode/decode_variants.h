// The decode registry with its launch functions (CUDA builds): each row of decode_registry.h joined to the function
// decode_rows.inc names for it, and the variants' declarations.
#pragma once

#include <span>
#include <string_view>

#include "kernels/cuda/decode/decode_launch.h"
#include "kernels/cuda/decode/decode_registry.h"

namespace flashviz::cuda {

struct DecodeVariant {
  const VariantInfo* info;      // the catalogue row (metadata)
  DecodeLaunchFunction launch;  // enqueues the variant on args.stream
};

std::span<const DecodeVariant> DecodeVariants();  // the order of decode_rows.inc
const DecodeVariant* FindDecodeVariant(std::string_view id);

// The multiprocessors of the current device (cudaDevAttrMultiProcessorCount), asked once per device.
int DecodeSmCount();
// The split count flash_decode runs `args` with: DecodeSplits(args.shape, args.splits, DecodeSmCount()).
int DecodeSplitsFor(const DecodeArgs& args);

// What every decode launch checks first: the problem is applicable, the tensors (and the block table when paged)
// are non-null and 16-byte aligned, the workspace is large enough. cudaErrorInvalidValue if not.
cudaError_t CheckDecodeArgs(std::string_view id, const DecodeArgs& args);

// --- The progression.
cudaError_t LaunchDecodeNaive(const DecodeArgs& args);       // decode_naive.cu
cudaError_t LaunchFlashDecode(const DecodeArgs& args);       // flash_decode.cu
cudaError_t LaunchFlashDecodePaged(const DecodeArgs& args);  // flash_decode_paged.cu

}  // namespace flashviz::cuda
