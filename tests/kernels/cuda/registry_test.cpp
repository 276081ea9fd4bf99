// The catalogue of CUDA variants (registry.h): plain C++, so these run in every build, GPU or not.
#include "kernels/cuda/registry.h"
#include "tests/kernels/cuda/make_shape.h"

#include <gtest/gtest.h>

#include <cmath>
#include <set>
#include <string>
#include <vector>

namespace flashviz::cuda {
namespace {

TEST(Registry, TheProgressionIsListedInItsOrder) {
  const std::vector<std::string> expected = {"naive", "tiled", "flash1", "flash2_row", "flash2_warp", "flash2_wmma",
                                             "math"};
  std::vector<std::string> found;
  for (const VariantInfo& variant : Catalogue())
    for (const std::string& id : expected)
      if (id == variant.id) found.push_back(id);
  EXPECT_EQ(found, expected);  // other issues' rows may sit between them; these keep their order
  EXPECT_EQ(std::string(Catalogue().back().id), "math");  // the yardstick stays last
}

TEST(Registry, EveryRowIsComplete) {
  std::set<std::string> ids;
  for (const VariantInfo& variant : Catalogue()) {
    SCOPED_TRACE(variant.id);
    EXPECT_TRUE(ids.insert(variant.id).second) << "duplicate id";
    for (const char* text : {variant.name, variant.changes, variant.teaches, variant.mirrors, variant.tiles,
                             variant.launch, variant.workspace})
      EXPECT_TRUE(text != nullptr && std::string(text).size() > 3);
    EXPECT_NE(variant.dtypes, 0u);
    EXPECT_EQ(variant.dtypes & ~kAllDTypes, 0u);
    EXPECT_GT(variant.max_head_dim, 0);
    int previous = 0;
    for (int d : variant.head_dims) {
      if (d == 0) break;
      EXPECT_GT(d, previous) << "head dims ascending";
      EXPECT_LE(d, variant.max_head_dim);
      previous = d;
    }
    ASSERT_NE(variant.hbm_bytes, nullptr);
    EXPECT_GE(variant.hbm_bytes(MakeShape(1, 2, 256, 64), DType::kFp32),
              FusedHbmBytes(MakeShape(1, 2, 256, 64), DType::kFp32));
    EXPECT_EQ(FindVariantInfo(variant.id), &variant);
  }
  EXPECT_EQ(FindVariantInfo("no_such_kernel"), nullptr);
}

TEST(Registry, EveryVariantRunsATypicalShapeInEachOfItsDtypes) {
  for (const VariantInfo& variant : Catalogue())
    for (DType dtype : {DType::kFp32, DType::kFp16, DType::kBf16}) {
      if (!(variant.dtypes & DTypeBit(dtype))) continue;
      // d = 64, or the smallest d of a variant that lists its head dimensions without 64 (flash3_fp8: 128).
      const int d = variant.head_dims[0] != 0 && variant.head_dims[0] > 64 ? variant.head_dims[0] : 64;
      EXPECT_EQ(CatalogueNotApplicable(variant, MakeShape(2, 8, 1000, d), dtype), std::nullopt) << variant.id;
      EXPECT_EQ(CatalogueNotApplicable(variant, MakeShape(1, 1, 1, d, true), dtype), std::nullopt) << variant.id;
    }
}

TEST(Registry, NotApplicableSaysWhy) {
  const VariantInfo& warp = *FindVariantInfo("flash2_warp");
  const VariantInfo& wmma = *FindVariantInfo("flash2_wmma");
  const VariantInfo& naive = *FindVariantInfo("naive");
  EXPECT_EQ(CatalogueNotApplicable(warp, MakeShape(1, 1, 128, 64), DType::kFp16).value_or(""),
            "fp16: flash2_warp runs fp32 only");
  EXPECT_EQ(CatalogueNotApplicable(wmma, MakeShape(1, 1, 128, 64), DType::kFp32).value_or(""),
            "fp32: flash2_wmma runs fp16, bf16 only");
  EXPECT_EQ(CatalogueNotApplicable(warp, MakeShape(1, 1, 128, 96), DType::kFp32).value_or(""),
            "d = 96: flash2_warp supports 32, 64, 128");
  EXPECT_EQ(CatalogueNotApplicable(naive, MakeShape(1, 1, 128, 2000), DType::kFp32).value_or(""),
            "d = 2000: naive supports any d ≤ 1024");
  EXPECT_EQ(CatalogueNotApplicable(naive, MakeShape(1, 1, 0, 64), DType::kFp32).value_or(""),
            "N = 0: N must be at least 1");
  EXPECT_EQ(CatalogueNotApplicable(naive, MakeShape(0, 4, 16, 64), DType::kFp32).value_or(""),
            "B = 0, H = 4: both must be at least 1");
  EXPECT_EQ(CatalogueNotApplicable(warp, MakeShape(700, 100, 16, 64), DType::kFp32).value_or(""),
            "B·H = 70000: at most 65535 heads per launch");
  AttentionShape infinite = MakeShape(1, 1, 16, 64);
  infinite.scale = INFINITY;
  EXPECT_EQ(CatalogueNotApplicable(warp, infinite, DType::kFp32).value_or(""), "scale = inf: must be finite");
  // naive/tiled/math take any d up to their limit, odd ones too.
  EXPECT_EQ(CatalogueNotApplicable(naive, MakeShape(1, 1, 16, 37), DType::kFp32), std::nullopt);
}

TEST(Registry, FlopsAreFourBHN2dHalvedForCausal) {
  EXPECT_DOUBLE_EQ(AttentionFlops(MakeShape(2, 3, 100, 64)), 4.0 * 6 * 100 * 100 * 64);
  EXPECT_DOUBLE_EQ(AttentionFlops(MakeShape(2, 3, 100, 64, true)), 2.0 * 6 * 100 * 100 * 64);
}

TEST(Registry, ByteModels) {
  const AttentionShape shape = MakeShape(1, 4, 1024, 64);
  // Q, K, V read and O written once: 4 tensors of B·H·N·d elements.
  EXPECT_DOUBLE_EQ(FusedHbmBytes(shape, DType::kFp16), 4.0 * 4 * 1024 * 64 * 2);
  // Materializing adds S and P written and read: 4·B·H·N² elements.
  EXPECT_DOUBLE_EQ(MaterializedFp32HbmBytes(shape, DType::kFp32) - FusedHbmBytes(shape, DType::kFp32),
                   4.0 * 4 * 1024 * 1024 * 4);
  EXPECT_DOUBLE_EQ(MaterializedHbmBytes(shape, DType::kFp16) - FusedHbmBytes(shape, DType::kFp16),
                   4.0 * 4 * 1024 * 1024 * 2);
  // Algorithm 1 moves O_i through HBM once per K/V tile: far more than the fused pass, less when causal.
  const double algorithm1 = Algorithm1HbmBytes(shape, DType::kFp32);
  EXPECT_GT(algorithm1, 10 * FusedHbmBytes(shape, DType::kFp32));
  EXPECT_LT(Algorithm1HbmBytes(MakeShape(1, 4, 1024, 64, true), DType::kFp32), algorithm1);
}

TEST(Registry, TextForms) {
  EXPECT_EQ(DTypesText(kAllDTypes), "fp32, fp16, bf16");
  EXPECT_EQ(HeadDimsText(*FindVariantInfo("flash1")), "32, 64, 128");
  EXPECT_EQ(HeadDimsText(*FindVariantInfo("math")), "any d ≤ 1024");
  for (DType dtype : {DType::kFp32, DType::kFp16, DType::kBf16}) EXPECT_EQ(ParseDType(DTypeName(dtype)), dtype);
  EXPECT_EQ(ParseDType("fp8"), std::nullopt);
}

}  // namespace
}  // namespace flashviz::cuda
