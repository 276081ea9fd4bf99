// The instrumented backward kernel against the model: on random shapes, causal or not, with edge tiles, the GPU's
// dK_j and dV_j after every tile iteration and the final dQ, dK, dV agree with the stepper to fp32 rounding, and
// the final gradients with the float64 reference; a changed record is caught. Skipped where there is no CUDA device.
#include <gtest/gtest.h>

#include <cmath>
#include <random>

#include "kernels/cpu/backward_reference.h"
#include "kernels/cuda/device_status.h"
#include "kernels/cuda/probe/backward_probe.h"

namespace flashviz::cuda {
namespace {

class BackwardProbe : public ::testing::Test {
 protected:
  void SetUp() override {
    if (const std::string why = CudaDeviceUnavailableReason(); !why.empty()) GTEST_SKIP() << why;
  }
};

AttentionProblem MakeBackward(int n, int d, int br, int bc, bool causal) {
  ProblemRequest r;
  r.n = n;
  r.d = d;
  r.br = br;
  r.bc = bc;
  r.causal = causal;
  r.pass = Pass::kBackward;
  return ResolveProblem(r);
}

TEST_F(BackwardProbe, AgreesWithTheModelOnRandomShapes) {
  std::mt19937 rng(23);
  for (int trial = 0; trial < 30; ++trial) {
    const int n = 1 + static_cast<int>(rng() % 200), d = 1 + static_cast<int>(rng() % 64);
    const int br = 1 + static_cast<int>(rng() % 48), bc = 1 + static_cast<int>(rng() % 48);
    const bool causal = rng() % 2;
    const AttentionProblem p = MakeBackward(n, d, br, bc, causal);
    const AttentionInputs in = MakeRandomInputs(p, static_cast<std::uint64_t>(trial));
    const Stepper model(p, &in);
    const std::string shape = "n=" + std::to_string(n) + " d=" + std::to_string(d) + " br=" + std::to_string(br) +
                              " bc=" + std::to_string(bc) + (causal ? " causal" : "");
    ASSERT_EQ(BackwardProbeNotApplicable(p), "") << shape;
    const BackwardProbeResult gpu = RunBackwardProbe(p, in, *model.saved());
    const BackwardCrossCheck check = CompareBackwardWithModel(model, gpu);
    EXPECT_TRUE(check.agrees) << check.summary << " (" << shape << ")";
    EXPECT_EQ(check.compared, model.schedule().tile_iteration_count()) << shape;
    // The final gradients against the float64 reference as well.
    const ReferenceGradients ref =
        ReferenceBackward(in.q.data(), in.k.data(), in.v.data(), in.dout.data(), n, d, p.scale, causal);
    for (const auto& [mine, theirs] :
         {std::pair{&ref.dq, &gpu.dq}, std::pair{&ref.dk, &gpu.dk}, std::pair{&ref.dv, &gpu.dv}}) {
      double top = 1, error = 0;
      for (std::size_t at = 0; at < mine->size(); ++at) {
        top = std::max(top, std::fabs((*mine)[at]));
        error = std::max(error, std::fabs((*mine)[at] - (*theirs)[at]));
      }
      EXPECT_LE(error / top, 1e-4) << shape;
    }
  }
}

TEST_F(BackwardProbe, AChangedRecordIsCaught) {
  const AttentionProblem p = MakeBackward(40, 8, 8, 16, true);
  const AttentionInputs in = MakeRandomInputs(p, 5);
  const Stepper model(p, &in);
  BackwardProbeResult gpu = RunBackwardProbe(p, in, *model.saved());
  ASSERT_TRUE(CompareBackwardWithModel(model, gpu).agrees);
  gpu.dv_after[gpu.At(3, 1, 2, 5)] += 0.01f;
  const BackwardCrossCheck check = CompareBackwardWithModel(model, gpu);
  EXPECT_FALSE(check.agrees);
  EXPECT_EQ(check.worst_i, 3);
  EXPECT_EQ(check.worst_j, 1);
  EXPECT_NE(check.summary.find("DISAGREES"), std::string::npos);
}

TEST(BackwardProbeLimits, TilesThatDoNotFitAreRefusedWithTheReason) {
  EXPECT_NE(BackwardProbeNotApplicable(MakeBackward(4096, 128, 256, 256, false)).find("shared memory"),
            std::string::npos);
  EXPECT_NE(BackwardProbeNotApplicable(MakeBackward(65536, 64, 1, 64, false)).find("larger tiles"), std::string::npos);
  EXPECT_EQ(BackwardProbeNotApplicable(MakeBackward(1024, 64, 64, 64, true)), "");
}

}  // namespace
}  // namespace flashviz::cuda
