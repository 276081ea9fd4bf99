// The backward catalogue without a GPU: every row complete and unique, the FLOP count of the papers, the
// workspace sizes the kernels index into, the reasons a shape is refused, and the sweep's checks.
#include <gtest/gtest.h>

#include <set>
#include <string>

#include "kernels/common/input_error.h"
#include "kernels/cuda/backward/backward_registry.h"
#include "tests/kernels/cuda/make_shape.h"

namespace flashviz::cuda {
namespace {

TEST(BackwardCatalogue, RowsAreCompleteAndUnique) {
  std::set<std::string> ids;
  ASSERT_EQ(BackwardCatalogue().size(), 4u);
  for (const VariantInfo& v : BackwardCatalogue()) {
    EXPECT_TRUE(ids.insert(v.id).second) << v.id;
    for (const char* text : {v.name, v.changes, v.teaches, v.mirrors, v.tiles, v.launch, v.workspace})
      EXPECT_GT(std::string(text).size(), 3u) << v.id;
    EXPECT_NE(v.dtypes, 0u) << v.id;
    EXPECT_NE(v.hbm_bytes, nullptr) << v.id;
    EXPECT_EQ(FindBackwardInfo(v.id), &v);
    EXPECT_EQ(FindVariantInfo(v.id), nullptr) << v.id << ": backward ids stay apart from the forward registry's";
  }
  EXPECT_EQ(std::string(BackwardCatalogue()[0].id), "naive_bwd");
  EXPECT_EQ(std::string(BackwardCatalogue()[1].id), "flash2_bwd");
  EXPECT_EQ(std::string(BackwardCatalogue()[2].id), "flash2_bwd_tf32x3");
  EXPECT_EQ(std::string(BackwardCatalogue()[3].id), "flash2_bwd_mma");
  EXPECT_EQ(FindBackwardInfo("flash2_mma"), nullptr);
}

TEST(BackwardCatalogue, FlopsAreTwoAndAHalfForwards) {
  EXPECT_DOUBLE_EQ(BackwardFlops(MakeShape(2, 3, 1024, 64, false)), 10.0 * 6 * 1024.0 * 1024 * 64);
  EXPECT_DOUBLE_EQ(BackwardFlops(MakeShape(2, 3, 1024, 64, true)), 5.0 * 6 * 1024.0 * 1024 * 64);
}

TEST(BackwardCatalogue, WorkspaceHoldsWhatTheKernelsIndex) {
  const AttentionShape shape = MakeShape(2, 3, 17, 64, false);
  const std::size_t rows = 6 * 17;
  EXPECT_EQ(NaiveBackwardWorkspaceBytes(shape, DType::kFp32), (3 * 6 * 17 * 17 + rows) * sizeof(float));
  EXPECT_EQ(Flash2BackwardWorkspaceBytes(shape, DType::kFp32), rows * sizeof(float));
  // D rounded up to whole 16-byte groups (104 floats), then the fp32 dQ accumulator.
  EXPECT_EQ(MmaBackwardWorkspaceBytes(shape, DType::kFp16), (104 + rows * 64) * sizeof(float));
}

TEST(BackwardCatalogue, RefusesWhatTheKernelsCannotRun) {
  const VariantInfo& naive = *FindBackwardInfo("naive_bwd");
  const VariantInfo& mma = *FindBackwardInfo("flash2_bwd_mma");
  const VariantInfo& flash2 = *FindBackwardInfo("flash2_bwd");
  EXPECT_FALSE(CatalogueNotApplicable(naive, MakeShape(1, 1, 100, 40, true), DType::kFp32));
  EXPECT_TRUE(CatalogueNotApplicable(naive, MakeShape(1, 1, 100, 64, false), DType::kFp16));
  EXPECT_FALSE(CatalogueNotApplicable(mma, MakeShape(1, 1, 100, 128, false), DType::kBf16));
  const auto reason = CatalogueNotApplicable(mma, MakeShape(1, 1, 100, 96, false), DType::kFp16);
  ASSERT_TRUE(reason);
  EXPECT_NE(reason->find("64, 128"), std::string::npos) << *reason;
  EXPECT_TRUE(CatalogueNotApplicable(mma, MakeShape(1, 1, 100, 64, false), DType::kFp32));
  EXPECT_TRUE(CatalogueNotApplicable(flash2, MakeShape(1, 1, 100, 256, false), DType::kFp32));
  const VariantInfo& tf32x3 = *FindBackwardInfo("flash2_bwd_tf32x3");
  EXPECT_FALSE(CatalogueNotApplicable(tf32x3, MakeShape(1, 1, 100, 64, true), DType::kFp32));
  EXPECT_TRUE(CatalogueNotApplicable(tf32x3, MakeShape(1, 1, 100, 128, false), DType::kFp32));
  EXPECT_TRUE(CatalogueNotApplicable(tf32x3, MakeShape(1, 1, 100, 64, false), DType::kFp16));
}

TEST(BackwardCatalogue, ByteModelsOrderTheProgression) {
  // naive_bwd's three N² matrices grow 4× when N doubles. The fused schedules grow as N²/B_c·d too (Q_i, dO_i
  // read and dQ_i read and written once per K/V tile; caches not counted), which is why their tiles matter:
  // the half-type kernel with its wider Q tiles moves less than the fp32 one.
  const AttentionShape shape = MakeShape(1, 16, 4096, 64, false);
  AttentionShape twice = shape;
  twice.n *= 2;
  EXPECT_NEAR(NaiveBackwardHbmBytes(twice, DType::kFp32) / NaiveBackwardHbmBytes(shape, DType::kFp32), 4.0, 0.05);
  const double flash2 = Flash2BackwardHbmBytes(shape, DType::kFp32);
  EXPECT_LT(MmaBackwardAtomicHbmBytes(shape, DType::kFp16), flash2);
  // flash2_bwd_tf32x3 keeps flash2_bwd's B_c, so its K/V tiles read Q_i, dO_i and add to dQ_i as often.
  EXPECT_EQ(FindBackwardInfo("flash2_bwd_tf32x3")->hbm_bytes(shape, DType::kFp32), flash2);
  // Causal masking halves (about) the visits, never adds any.
  AttentionShape causal = shape;
  causal.causal = true;
  EXPECT_LT(MmaBackwardAtomicHbmBytes(causal, DType::kFp16), 0.6 * MmaBackwardAtomicHbmBytes(shape, DType::kFp16));
  EXPECT_LT(MmaBackwardDqPassHbmBytes(causal, DType::kFp16), MmaBackwardDqPassHbmBytes(shape, DType::kFp16));
}

TEST(BackwardCatalogue, SweepPointsCheckIdsAndShapes) {
  SweepSpec spec;
  spec.kernels = {"flash2_bwd", "flash2_bwd_mma"};
  spec.n_values = {1024, 4096};
  spec.d = 64;
  const auto points = BackwardSweepPoints(spec);
  ASSERT_EQ(points.size(), 4u);
  EXPECT_EQ(std::string(points[0].variant->id), "flash2_bwd");
  EXPECT_EQ(std::string(points[1].variant->id), "flash2_bwd_mma");
  EXPECT_EQ(points[0].shape.n, 1024);
  EXPECT_EQ(points[2].shape.n, 4096);
  EXPECT_EQ(points[2].shape.Heads(), AutoHeads(4096));
  spec.kernels = {"flash2_mma"};  // a forward id
  EXPECT_THROW(BackwardSweepPoints(spec), InputError);
  spec.kernels = {"flash2_bwd"};
  spec.repeats = 3;
  EXPECT_THROW(BackwardSweepPoints(spec), InputError);
}

}  // namespace
}  // namespace flashviz::cuda
