// flash3_wgmma against the float64 reference: random and edge shapes (N < 128, N not a multiple of B_r = B_c =
// 128, several heads), fp16 and bf16, d = 64, 128 and 256 (B_c = 80), causal and not, both grids (one block per Q
// tile, and the persistent grid with more (head, Q tile) pairs than blocks), both consumer schedules (softmax
// overlapped with P̃V, and serial), with and without ping-pong (the other schedule), B_r = 128 and 192 at d = 64,
// both O stores (staged, direct; d = 256 stages in Q_i's buffer); plus the "not applicable" answers. Every input is fresh N(0, 1) noise from a seed printed on
// failure; the output is poisoned with NaN first, so an element the kernel never wrote fails. Tolerances as
// flash2_mma's (mma_check::Tolerance). Needs a Hopper GPU (label gpu): SKIPPED without a GPU, and on a GPU of
// another generation, with the reason.
#include <cuda_runtime.h>
#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <tuple>
#include <vector>

#include "kernels/cuda/mma/flash3_wgmma.h"
#include "kernels/cuda/mma/mma_check.h"
#include "tests/kernels/cuda/mma/device_problem.h"

namespace flashviz::cuda {
namespace {

// Empty when this machine can run the kernel, else why not.
std::string WhyNoHopper() {
  int count = 0;
  if (cudaGetDeviceCount(&count) != cudaSuccess || count == 0) return "no CUDA device";
  const auto reason = Flash3WgmmaNotApplicable(AttentionShape{1, 1, 128, 64, 0.125f, false}, DType::kFp16);
  return reason.value_or("");
}

using mma_test::FreshSeed;
// The problem with this file's kernel as its launcher.
struct DeviceProblem : mma_test::DeviceProblem {
  DeviceProblem(const AttentionShape& shape, DType dtype, unsigned options)
      : mma_test::DeviceProblem(&LaunchFlash3Wgmma, shape, dtype, options) {}
};

using Case = std::tuple<DType, int /*d*/, bool /*causal*/, unsigned /*options*/>;

class Flash3WgmmaMatchesReference : public ::testing::TestWithParam<Case> {};

TEST_P(Flash3WgmmaMatchesReference, RandomAndEdgeShapes) {
  if (const std::string why = WhyNoHopper(); !why.empty()) GTEST_SKIP() << why;
  const auto [dtype, d, causal, options] = GetParam();
  // (batch, heads, N): one row; less than one tile; one exact tile; one past it; N not a multiple of 128 with
  // several heads (the zero fill of rows past N must stay inside each head); several full tiles.
  const int shapes[][3] = {{1, 1, 1}, {1, 1, 37}, {1, 2, 128}, {2, 1, 129}, {1, 3, 200}, {2, 2, 383}, {1, 2, 1024}};
  for (const auto& s : shapes) {
    const AttentionShape shape{s[0], s[1], s[2], d, 1.0f / std::sqrt(static_cast<float>(d)), causal};
    DeviceProblem problem(shape, dtype, options);
    const std::uint64_t seed = FreshSeed();
    problem.Fill(seed);
    problem.RunAndCheck(std::to_string(s[0]) + "x" + std::to_string(s[1]) + " N=" + std::to_string(s[2]) +
                        " seed=" + std::to_string(seed));
  }
}

std::string CaseName(const ::testing::TestParamInfo<Case>& info) {
  const auto [dtype, d, causal, options] = info.param;
  std::string name = std::string(mma_check::DTypeName(dtype)) + "_d" + std::to_string(d) +
                     (causal ? "_causal_" : "_full_") + Flash3WgmmaOptionsName(options);
  for (char& ch : name)
    if (ch == '-' || ch == '+') ch = '_';
  return name;
}

INSTANTIATE_TEST_SUITE_P(EveryVariant, Flash3WgmmaMatchesReference,
                         ::testing::Combine(::testing::Values(DType::kFp16, DType::kBf16),
                                            ::testing::Values(64, 128, 256),
                                            ::testing::Bool(),
                                            ::testing::Values(0u, unsigned{kFlash3WgmmaOtherGrid},
                                                              unsigned{kFlash3WgmmaSerialSoftmax},
                                                              unsigned{kFlash3WgmmaDirectStore},
                                                              unsigned{kFlash3WgmmaOtherSchedule},
                                                              unsigned{kFlash3WgmmaOtherSchedule | kFlash3WgmmaOtherGrid},
                                                              unsigned{kFlash3WgmmaOtherRows},
                                                              unsigned{kFlash3WgmmaOtherRows | kFlash3WgmmaOtherGrid},
                                                              unsigned{kFlash3WgmmaAllOptions})),
                         CaseName);

// More (head, Q tile) pairs than the persistent grid has blocks (one per multiprocessor): every block walks
// many pairs, the producer loading the next pair's Q and K/V while the consumers finish the last one, and the
// K/V ring's phases wrap many times. B·H = 600 is more heads than an H100 or H200 has multiprocessors, so causal
// takes the longest-first schedule in L2 sections (hopper_host::SectionHeads: at N = 300, 2 sections at d = 64,
// 3-4 at d = 128, 6-8 at d = 256 with an L2 of 50-60 MB, the last one short). Sampled heads from the first to the
// last against the reference; every element checked written.
TEST(Flash3Wgmma, PersistentGridWalksManyTiles) {
  if (const std::string why = WhyNoHopper(); !why.empty()) GTEST_SKIP() << why;
  for (DType dtype : {DType::kFp16, DType::kBf16})
    for (int d : {64, 128, 256})
      for (bool causal : {false, true})
        for (unsigned options : {0u, unsigned{kFlash3WgmmaOtherGrid}, unsigned{kFlash3WgmmaSerialSoftmax},
                                 unsigned{kFlash3WgmmaDirectStore}, unsigned{kFlash3WgmmaOtherSchedule},
                                 unsigned{kFlash3WgmmaOtherRows}}) {
          DeviceProblem problem(AttentionShape{4, 150, 300, d, 1.0f / std::sqrt(static_cast<float>(d)), causal},
                                dtype, options);
          const std::uint64_t seed = FreshSeed();
          problem.Fill(seed);
          problem.RunAndCheck(Flash3WgmmaOptionsName(options) + " " + mma_check::DTypeName(dtype) + " d=" +
                                  std::to_string(d) + (causal ? " causal" : " full") + " seed=" + std::to_string(seed),
                              {0, 1, 43, 44, 131, 132, 133, 250, 399, 408, 409, 410, 599});
        }
}

// Longer sequences with a non-default scale (the running max really moves) and several heads. Beyond N = 2048 the
// host takes other kernels: three consumers at causal d = 64 (from N = 1024 without the mask), and causal d = 128 on
// the grid of one block per Q tile.
TEST(Flash3Wgmma, LongSequenceSeveralHeads) {
  if (const std::string why = WhyNoHopper(); !why.empty()) GTEST_SKIP() << why;
  for (DType dtype : {DType::kFp16, DType::kBf16})
    for (int d : {64, 128, 256})
      for (bool causal : {false, true})
        for (int n : {1500, 2300}) {
          DeviceProblem problem(AttentionShape{1, 2, n, d, 0.3f, causal}, dtype, 0);
          const std::uint64_t seed = FreshSeed();
          problem.Fill(seed);
          problem.RunAndCheck("N=" + std::to_string(n) + " d=" + std::to_string(d) + (causal ? " causal" : " full") +
                              " seed=" + std::to_string(seed));
        }
}

// The same inputs twice give the same bits: a race between the producer and the consumers (a stage reused
// before it was released, a phase read wrong) would show up as a moving result.
TEST(Flash3Wgmma, RepeatableBitForBit) {
  if (const std::string why = WhyNoHopper(); !why.empty()) GTEST_SKIP() << why;
  DeviceProblem problem(AttentionShape{2, 200, 777, 128, 0.125f, false}, DType::kBf16, 0);
  problem.Fill(FreshSeed());
  problem.ExpectRepeatableBits();
}

// Shapes and dtypes it cannot run get a reason; bad options bits and pointers are refused before any launch.
// These need no GPU where the shape itself is refused.
TEST(Flash3Wgmma, SaysWhyItDoesNotApply) {
  const AttentionShape good{1, 1, 256, 64, 0.125f, false};
  EXPECT_NE(Flash3WgmmaNotApplicable(good, DType::kFp32).value_or("").find("fp32"), std::string::npos);
  AttentionShape d256 = good;
  d256.d = 256;
  // d = 256 is not refused for its d (without a Hopper GPU it is refused for the device).
  EXPECT_EQ(Flash3WgmmaNotApplicable(d256, DType::kFp16).value_or("").find("d = "), std::string::npos);
  AttentionShape d96 = good;
  d96.d = 96;
  EXPECT_NE(Flash3WgmmaNotApplicable(d96, DType::kFp16).value_or("").find("d = 96"), std::string::npos);
  AttentionShape negative_scale = good;
  negative_scale.scale = -1.0f;
  EXPECT_TRUE(Flash3WgmmaNotApplicable(negative_scale, DType::kFp16).has_value());
  AttentionShape empty = good;
  empty.n = 0;
  EXPECT_TRUE(Flash3WgmmaNotApplicable(empty, DType::kBf16).has_value());
  EXPECT_EQ(Flash3WgmmaWorkspaceBytes(good, DType::kFp16), 0u);
  AttentionArgs args;
  args.shape = good;
  args.dtype = DType::kFp16;
  args.options = 1u << 5;
  EXPECT_EQ(LaunchFlash3Wgmma(args), cudaErrorInvalidValue);  // unknown bit: refused before any pointer is touched
  args.options = 0;
  EXPECT_EQ(LaunchFlash3Wgmma(args), cudaErrorInvalidValue);  // null tensors
  EXPECT_EQ(Flash3WgmmaOptionsName(0), "default");
  EXPECT_EQ(Flash3WgmmaOptionsName(kFlash3WgmmaOtherGrid), "other-grid");
  EXPECT_EQ(Flash3WgmmaOptionsName(kFlash3WgmmaAllOptions),
            "other-grid+serial-softmax+direct-store+other-schedule+other-rows");
  EXPECT_EQ(Flash3WgmmaOptionsName(kFlash3WgmmaOtherGrid | 32u), "other-grid+unknown-0x20");
}

}  // namespace
}  // namespace flashviz::cuda
