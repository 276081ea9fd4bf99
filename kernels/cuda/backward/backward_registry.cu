// The backward registry with its functions: backward_rows.inc read a second time, keeping the three functions of
// each row, joined by position to the catalogue's metadata (backward_registry.cpp reads the same file in order).
#include <cstdint>

#include "kernels/cuda/backward/backward_variants.h"

namespace flashviz::cuda {
namespace {

#define FLASHVIZ_BACKWARD_VARIANT(launch, not_applicable, workspace, ...) \
  BackwardVariant{nullptr, launch, not_applicable, workspace},
BackwardVariant kBackwardVariants[] = {
#include "kernels/cuda/backward/backward_rows.inc"
};
#undef FLASHVIZ_BACKWARD_VARIANT

}  // namespace

std::span<const BackwardVariant> BackwardVariants() {
  // Joined once, on first use: the catalogue (plain C++) and the launch table are two tables of one order.
  [[maybe_unused]] static const bool joined = [] {
    const std::span<const VariantInfo> catalogue = BackwardCatalogue();
    for (std::size_t row = 0; row < std::size(kBackwardVariants); ++row) kBackwardVariants[row].info = &catalogue[row];
    return true;
  }();
  return kBackwardVariants;
}

const BackwardVariant* FindBackwardVariant(std::string_view id) {
  for (const BackwardVariant& variant : BackwardVariants())
    if (id == variant.info->id) return &variant;
  return nullptr;
}

std::optional<std::string> BackwardNotApplicable(const BackwardVariant& variant, const AttentionShape& shape,
                                                 DType dtype) {
  if (auto reason = CatalogueNotApplicable(*variant.info, shape, dtype)) return reason;
  if (variant.own_check) return variant.own_check(shape, dtype);
  return std::nullopt;
}

cudaError_t CheckBackwardArgs(std::string_view id, const BackwardArgs& args) {
  const BackwardVariant* variant = FindBackwardVariant(id);
  if (!variant || BackwardNotApplicable(*variant, args.shape, args.dtype)) return cudaErrorInvalidValue;
  for (const void* pointer :
       {args.q, args.k, args.v, args.o, args.dout, static_cast<const void*>(args.lse),
        static_cast<const void*>(args.dq), static_cast<const void*>(args.dk), static_cast<const void*>(args.dv)})
    if (pointer == nullptr || reinterpret_cast<std::uintptr_t>(pointer) % 16 != 0) return cudaErrorInvalidValue;
  const std::size_t workspace = variant->workspace_bytes ? variant->workspace_bytes(args.shape, args.dtype) : 0;
  if (workspace > 0 && (args.workspace == nullptr || args.workspace_bytes < workspace ||
                        reinterpret_cast<std::uintptr_t>(args.workspace) % 16 != 0))
    return cudaErrorInvalidValue;
  return cudaSuccess;
}

}  // namespace flashviz::cuda
