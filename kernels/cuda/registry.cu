// The registry with its functions: registry_rows.inc read a second time, keeping the three functions of each
// row, joined by position to the catalogue's metadata (registry.cpp reads the same file in the same order).
#include <cstdint>

#include "kernels/cuda/variants.h"

// The variants of other issues, when their code is in the tree (each adds its row to registry_rows.inc).
#if __has_include("kernels/cuda/hw4/hw4_kernels.h")
#include "kernels/cuda/hw4/hw4_kernels.h"
#endif
#if __has_include("kernels/cuda/mma/flash2_mma.h")
#include "kernels/cuda/mma/flash2_mma.h"
#endif

namespace flashviz::cuda {
namespace {

#define FLASHVIZ_VARIANT(launch, not_applicable, workspace, ...) Variant{nullptr, launch, not_applicable, workspace},
Variant kVariants[] = {
#include "kernels/cuda/registry_rows.inc"
};
#undef FLASHVIZ_VARIANT

std::span<const Variant> JoinedVariants() {
  // Joined once, on first use: the catalogue (plain C++) and the launch table are two tables of one order.
  [[maybe_unused]] static const bool joined = [] {
    const std::span<const VariantInfo> catalogue = Catalogue();
    static_assert(sizeof(kVariants) > 0);
    for (std::size_t row = 0; row < std::size(kVariants); ++row) kVariants[row].info = &catalogue[row];
    return true;
  }();
  return kVariants;
}

}  // namespace

std::span<const Variant> Variants() { return JoinedVariants(); }

const Variant* FindVariant(std::string_view id) {
  for (const Variant& variant : Variants())
    if (id == variant.info->id) return &variant;
  return nullptr;
}

std::optional<std::string> NotApplicable(const Variant& variant, const AttentionShape& shape, DType dtype) {
  if (auto reason = CatalogueNotApplicable(*variant.info, shape, dtype)) return reason;
  if (variant.own_check) return variant.own_check(shape, dtype);
  return std::nullopt;
}

cudaError_t CheckArgs(std::string_view id, const AttentionArgs& args) {
  const Variant* variant = FindVariant(id);
  if (!variant || NotApplicable(*variant, args.shape, args.dtype)) return cudaErrorInvalidValue;
  for (const void* pointer : {args.q, args.k, args.v, static_cast<const void*>(args.o)})
    if (pointer == nullptr || reinterpret_cast<std::uintptr_t>(pointer) % 16 != 0) return cudaErrorInvalidValue;
  const std::size_t workspace = variant->workspace_bytes ? variant->workspace_bytes(args.shape, args.dtype) : 0;
  if (workspace > 0 && (args.workspace == nullptr || args.workspace_bytes < workspace)) return cudaErrorInvalidValue;
  return cudaSuccess;
}

std::size_t NoWorkspaceBytes(const AttentionShape& /*shape*/, DType /*dtype*/) { return 0; }

}  // namespace flashviz::cuda
