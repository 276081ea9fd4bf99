// The registry's launch table (variants.h) joined to the catalogue, and the argument checks every launch makes:
// a CUDA build, but no GPU needed (nothing here touches a device).
#include <gtest/gtest.h>

#include <string>

#include "kernels/cuda/variants.h"

namespace flashviz::cuda {
namespace {

TEST(LaunchTable, EveryCatalogueRowHasItsFunctions) {
  ASSERT_EQ(Variants().size(), Catalogue().size());
  for (std::size_t row = 0; row < Variants().size(); ++row) {
    const Variant& variant = Variants()[row];
    EXPECT_EQ(variant.info, &Catalogue()[row]);
    EXPECT_NE(variant.launch, nullptr) << variant.info->id;
    EXPECT_NE(variant.workspace_bytes, nullptr) << variant.info->id;
    EXPECT_EQ(FindVariant(variant.info->id), &variant);
  }
}

TEST(LaunchTable, WorkspaceSizes) {
  AttentionShape shape;
  shape.batch = 2;
  shape.heads = 3;
  shape.n = 100;
  shape.d = 64;
  const double score_elements = 6.0 * 100 * 100;
  EXPECT_EQ(FindVariant("naive")->workspace_bytes(shape, DType::kFp32), 2 * score_elements * 4);
  EXPECT_EQ(FindVariant("tiled")->workspace_bytes(shape, DType::kFp32), 2 * score_elements * 4);
  EXPECT_EQ(FindVariant("math")->workspace_bytes(shape, DType::kFp16), 2 * score_elements * 2);
  EXPECT_EQ(FindVariant("flash1")->workspace_bytes(shape, DType::kFp32), 2 * 6 * 100 * 4u);  // ℓ and m
  for (const char* id : {"flash2_row", "flash2_warp", "flash2_wmma"})
    EXPECT_EQ(FindVariant(id)->workspace_bytes(shape, DType::kFp16), 0u) << id;
}

TEST(LaunchTable, LaunchRefusesBadArgumentsBeforeTouchingTheDevice) {
  alignas(16) static float storage[64];
  AttentionArgs args;
  args.shape.n = 4;
  args.shape.d = 64;
  args.q = args.k = args.v = storage;
  args.o = storage;
  // A dtype the variant does not run, a missing tensor, a misaligned one, a missing workspace: all refused.
  args.dtype = DType::kFp16;
  EXPECT_EQ(FindVariant("flash2_warp")->launch(args), cudaErrorInvalidValue);
  args.dtype = DType::kFp32;
  args.q = nullptr;
  EXPECT_EQ(FindVariant("flash2_warp")->launch(args), cudaErrorInvalidValue);
  args.q = storage + 1;
  EXPECT_EQ(FindVariant("flash2_warp")->launch(args), cudaErrorInvalidValue);
  args.q = storage;
  EXPECT_EQ(FindVariant("naive")->launch(args), cudaErrorInvalidValue);  // needs S and P
  args.options = 0x80;
  EXPECT_EQ(FindVariant("flash2_warp")->launch(args), cudaErrorInvalidValue);  // unknown options bit
}

}  // namespace
}  // namespace flashviz::cuda
