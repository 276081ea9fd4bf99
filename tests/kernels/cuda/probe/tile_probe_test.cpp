// The instrumented kernels against the model: on random shapes in both orders, causal or not, with
// edge tiles, the GPU's m_i, ℓ_i after every tile iteration, the probed O_i row and the final O agree with the
// stepper to fp32 rounding. Skipped where there is no CUDA device.
#include <gtest/gtest.h>

#include <cmath>
#include <random>

#include "kernels/cpu/reference.h"
#include "kernels/cuda/probe/cross_check.h"

namespace flashviz::cuda {
namespace {

class TileProbe : public ::testing::Test {
 protected:
  void SetUp() override {
    if (const std::string why = CudaDeviceUnavailableReason(); !why.empty()) GTEST_SKIP() << why;
  }
};

AttentionProblem Make(int n, int d, int br, int bc, LoopOrder order, bool causal) {
  ProblemRequest r;
  r.n = n;
  r.d = d;
  r.br = br;
  r.bc = bc;
  r.order = order;
  r.causal = causal;
  return ResolveProblem(r);
}

TEST_F(TileProbe, AgreesWithTheModelOnRandomShapes) {
  std::mt19937 rng(17);
  for (int trial = 0; trial < 40; ++trial) {
    const int n = 1 + static_cast<int>(rng() % 300), d = 1 + static_cast<int>(rng() % 64);
    const int br = 1 + static_cast<int>(rng() % 64), bc = 1 + static_cast<int>(rng() % 64);
    const LoopOrder order = trial % 2 ? LoopOrder::kQOuter : LoopOrder::kKvOuter;
    const bool causal = rng() % 2;
    const AttentionProblem p = Make(n, d, br, bc, order, causal);
    const AttentionInputs in = MakeRandomInputs(n, d, static_cast<std::uint64_t>(trial));
    const Stepper model(p, &in);
    const int probe_tile = static_cast<int>(rng() % p.tr());
    const int probe_row = static_cast<int>(rng() % p.RowsInTile(probe_tile));
    const TileProbeResult gpu = RunTileProbe(p, in, probe_tile, probe_row);
    const CrossCheck check = CompareWithModel(model, gpu);
    EXPECT_TRUE(check.agrees) << check.summary << " (n=" << n << " d=" << d << " br=" << br << " bc=" << bc
                              << " order=" << LoopOrderName(order) << " causal=" << causal << ")";
    EXPECT_EQ(check.compared, [&] {
      int rows = 0;
      for (int i = 0; i < p.tr(); ++i)
        for (int j = 0; j < p.tc(); ++j) rows += p.TilePairActive(i, j) ? p.RowsInTile(i) : 0;
      return rows;
    }());
  }
}

TEST_F(TileProbe, FinalOutputIsTheReference) {
  for (LoopOrder order : {LoopOrder::kKvOuter, LoopOrder::kQOuter}) {
    const AttentionProblem p = Make(200, 32, 16, 48, order, false);
    const AttentionInputs in = MakeRandomInputs(200, 32, 3);
    const TileProbeResult gpu = RunTileProbe(p, in, 0, 0);
    const auto ref = ReferenceAttention(in.q.data(), in.k.data(), in.v.data(), 200, 32, p.scale, false);
    double worst = 0;
    for (std::size_t at = 0; at < ref.size(); ++at) worst = std::max(worst, std::fabs(gpu.o[at] - ref[at]));
    EXPECT_LT(worst, 1e-5) << LoopOrderName(order);
    EXPECT_GT(gpu.kernel_ms, 0.0f);
  }
}

TEST_F(TileProbe, SkippedPairsStayUnrecorded) {
  const AttentionProblem p = Make(64, 8, 16, 16, LoopOrder::kQOuter, true);
  const AttentionInputs in = MakeRandomInputs(64, 8, 1);
  const TileProbeResult gpu = RunTileProbe(p, in, 0, 0);
  EXPECT_TRUE(std::isnan(gpu.m(0, 1, 0)));  // tile 0 never meets K/V tile 1 under the causal mask
  EXPECT_FALSE(std::isnan(gpu.m(1, 1, 0)));
  EXPECT_TRUE(std::isnan(gpu.o_row_after[1 * 8]));
}

TEST_F(TileProbe, AMismatchIsReportedNotHidden) {
  const AttentionProblem p = Make(40, 8, 8, 8, LoopOrder::kKvOuter, false);
  const AttentionInputs in = MakeRandomInputs(40, 8, 2);
  TileProbeResult gpu = RunTileProbe(p, in, 1, 3);
  gpu.l_after[(2 * p.tc() + 3) * p.br + 5] *= 1.001f;  // one ℓ value off by 0.1%
  const CrossCheck check = CompareWithModel(Stepper(p, &in), gpu);
  EXPECT_FALSE(check.agrees);
  EXPECT_NE(check.summary.find("DISAGREES"), std::string::npos);
  EXPECT_EQ(check.worst_i, 2);
  EXPECT_EQ(check.worst_j, 3);
  EXPECT_EQ(check.worst_row, 5);
}

TEST(TileProbeLimits, TilesThatCannotRunSayWhy) {
  EXPECT_NE(TileProbeNotApplicable(Make(4096, 8, 2048, 8, LoopOrder::kQOuter, false)).find("1024 threads"),
            std::string::npos);
  EXPECT_NE(TileProbeNotApplicable(Make(4096, 256, 64, 256, LoopOrder::kQOuter, false)).find("shared memory"),
            std::string::npos);
  EXPECT_EQ(TileProbeNotApplicable(Make(1024, 64, 64, 64, LoopOrder::kKvOuter, false)), "");
}

}  // namespace
}  // namespace flashviz::cuda
