// The decode registry with its functions: decode_rows.inc read a second time, keeping the launch function of each
// row, joined by position to the catalogue's metadata (decode_registry.cpp reads the same file in order).
#include <cstdint>
#include <algorithm>

#include "kernels/cuda/decode/decode_variants.h"
#include "kernels/cuda/device_status.h"

namespace flashviz::cuda {
namespace {

#define FLASHVIZ_DECODE_VARIANT(launch, ...) DecodeVariant{nullptr, launch},
DecodeVariant kDecodeVariants[] = {
#include "kernels/cuda/decode/decode_rows.inc"
};
#undef FLASHVIZ_DECODE_VARIANT

bool Aligned(const void* pointer) {
  return pointer != nullptr && reinterpret_cast<std::uintptr_t>(pointer) % 16 == 0;
}

}  // namespace

std::span<const DecodeVariant> DecodeVariants() {
  [[maybe_unused]] static const bool joined = [] {
    const std::span<const VariantInfo> catalogue = DecodeCatalogue();
    for (std::size_t row = 0; row < std::size(kDecodeVariants); ++row) kDecodeVariants[row].info = &catalogue[row];
    return true;
  }();
  return kDecodeVariants;
}

const DecodeVariant* FindDecodeVariant(std::string_view id) {
  for (const DecodeVariant& variant : DecodeVariants())
    if (id == variant.info->id) return &variant;
  return nullptr;
}

int DecodeSmCount() { return std::max(1, CurrentDeviceMultiprocessors()); }

int DecodeSplitsFor(const DecodeArgs& args) {
  return DecodeSplits(args.shape, args.splits, DecodeSmCount());
}

cudaError_t CheckDecodeArgs(std::string_view id, const DecodeArgs& args) {
  const DecodeVariant* variant = FindDecodeVariant(id);
  if (!variant || DecodeNotApplicable(*variant->info, args.shape, args.dtype)) return cudaErrorInvalidValue;
  for (const void* pointer : {args.q, args.k, args.v, static_cast<const void*>(args.o)})
    if (!Aligned(pointer)) return cudaErrorInvalidValue;
  if (args.shape.page_size > 0 && DecodeVariantIsPaged(*variant->info) && args.block_table == nullptr)
    return cudaErrorInvalidValue;
  if (args.splits < 0) return cudaErrorInvalidValue;
  if (std::string_view(variant->info->id) != "decode_naive") {
    const std::size_t needed = DecodeWorkspaceBytes(args.shape, DecodeSplitsFor(args));
    if (needed > 0 && (!Aligned(args.workspace) || args.workspace_bytes < needed)) return cudaErrorInvalidValue;
  }
  return cudaSuccess;
}

}  // namespace flashviz::cuda
