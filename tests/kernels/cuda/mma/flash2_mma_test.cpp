// flash2_mma against the float64 reference: random and edge shapes (N < 128, N not a multiple of 64 or 128,
// B·H > 1), fp16 and bf16, causal and not, every options combination; plus the "not applicable" answers.
// Every input is fresh N(0, 1) noise from a seed printed on failure; the output is poisoned with NaN first, so an
// element the kernel never wrote fails the test. Tolerance (relative Frobenius error over whole heads, against the
// reference computed on the same rounded inputs): fp16 2e-3, bf16 1e-2 (mma_check::Tolerance).
#include <cuda_runtime.h>
#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <tuple>
#include <vector>

#include "kernels/cuda/mma/flash2_mma.h"
#include "kernels/cuda/mma/mma_check.h"
#include "tests/kernels/cuda/mma/device_problem.h"

namespace flashviz::cuda {
namespace {

bool HaveGpu() {
  int count = 0;
  return cudaGetDeviceCount(&count) == cudaSuccess && count > 0;
}

using mma_test::FreshSeed;
// The problem with this file's kernel as its launcher.
struct DeviceProblem : mma_test::DeviceProblem {
  DeviceProblem(const AttentionShape& shape, DType dtype, unsigned options)
      : mma_test::DeviceProblem(&LaunchFlash2Mma, shape, dtype, options) {}
};

using Case = std::tuple<DType, int /*d*/, bool /*causal*/, unsigned /*options*/>;

class Flash2MmaMatchesReference : public ::testing::TestWithParam<Case> {};

TEST_P(Flash2MmaMatchesReference, RandomAndEdgeShapes) {
  if (!HaveGpu()) GTEST_SKIP() << "no CUDA device";
  const auto [dtype, d, causal, options] = GetParam();
  // (batch, heads, N): one row; less than one tile; exact tiles; N not a multiple of B_c = 64 or B_r = 128;
  // several heads with a ragged last Q tile.
  const int shapes[][3] = {{1, 1, 1},    {1, 1, 37},  {1, 2, 64},  {1, 1, 128},
                           {2, 1, 129}, {1, 3, 200}, {2, 2, 256}, {2, 2, 383}};
  for (const auto& s : shapes) {
    const AttentionShape shape{s[0], s[1], s[2], d, 1.0f / std::sqrt(static_cast<float>(d)), causal};
    DeviceProblem problem(shape, dtype, options);
    const std::uint64_t seed = FreshSeed();
    problem.Fill(seed);
    problem.RunAndCheck(::testing::PrintToString(s[0]) + "x" + ::testing::PrintToString(s[1]) + " N=" +
                        std::to_string(s[2]) + " seed=" + std::to_string(seed));
  }
}

std::string CaseName(const ::testing::TestParamInfo<Case>& info) {
  const auto [dtype, d, causal, options] = info.param;
  std::string name = std::string(mma_check::DTypeName(dtype)) + "_d" + std::to_string(d) +
                     (causal ? "_causal_" : "_full_") + Flash2MmaOptionsName(options);
  for (char& ch : name)
    if (ch == '-' || ch == '+') ch = '_';
  return name;
}

// Every compiled kernel, the launch-only stagger on the default kernel, the narrow K/V tile (B_c = 32; alone and
// staggered), and all the switches of the 64 kernels at once.
std::vector<unsigned> AllOptions() {
  std::vector<unsigned> options;
  for (unsigned o = 0; o <= kFlash2MmaKernelOptions; ++o) options.push_back(o);
  options.push_back(kFlash2MmaStagger);
  options.push_back(kFlash2MmaNarrowKvTile);
  options.push_back(kFlash2MmaNarrowKvTile | kFlash2MmaStagger);
  options.push_back(kFlash2MmaAllOptions & ~kFlash2MmaNarrowKvTile);
  return options;
}

INSTANTIATE_TEST_SUITE_P(EveryVariant, Flash2MmaMatchesReference,
                         ::testing::Combine(::testing::Values(DType::kFp16, DType::kBf16), ::testing::Values(64, 128),
                                            ::testing::Bool(), ::testing::ValuesIn(AllOptions())),
                         CaseName);

// A longer sequence with a non-default scale, many key tiles (the running max really moves) and several heads.
TEST(Flash2Mma, LongSequenceSeveralHeads) {
  if (!HaveGpu()) GTEST_SKIP() << "no CUDA device";
  for (DType dtype : {DType::kFp16, DType::kBf16})
    for (bool causal : {false, true}) {
      DeviceProblem problem(AttentionShape{2, 2, 1000, 128, 0.3f, causal}, dtype, 0);
      const std::uint64_t seed = FreshSeed();
      problem.Fill(seed);
      problem.RunAndCheck("N=1000 seed=" + std::to_string(seed));
    }
}

// The same inputs twice give the same bits: a race between warps would show up as a moving result.
TEST(Flash2Mma, RepeatableBitForBit) {
  if (!HaveGpu()) GTEST_SKIP() << "no CUDA device";
  DeviceProblem problem(AttentionShape{1, 4, 777, 64, 0.125f, true}, DType::kBf16, 0);
  problem.Fill(FreshSeed());
  problem.ExpectRepeatableBits();
}

// The shipped kernel (options = 0) and the ablation study's kernel with the default flags, which the stagger runs
// (a launch option that only delays some blocks' start), give the same bits: every step's ablation is measured on the
// code that ships with that one step changed. N = 777 runs the shipped kernel's checking form; without the mask,
// N = 1024 runs its whole-tiles form (kWhole), which skips checks that change nothing there.
TEST(Flash2Mma, ShippedKernelIsTheAblationDefault) {
  if (!HaveGpu()) GTEST_SKIP() << "no CUDA device";
  for (DType dtype : {DType::kFp16, DType::kBf16})
    for (int d : {64, 128})
      for (bool causal : {false, true}) {
        for (int n : {777, 1024}) {
          DeviceProblem problem(AttentionShape{1, 3, n, d, 1.0f / std::sqrt(static_cast<float>(d)), causal}, dtype, 0);
          problem.Fill(FreshSeed());
          problem.ExpectSameBits(kFlash2MmaStagger);
        }
      }
}

// Shapes and dtypes it cannot run get a reason, never a silent skip; bad options bits are refused.
TEST(Flash2Mma, SaysWhyItDoesNotApply) {
  const AttentionShape good{1, 1, 256, 64, 0.125f, false};
  EXPECT_FALSE(Flash2MmaNotApplicable(good, DType::kFp16).has_value());
  EXPECT_FALSE(Flash2MmaNotApplicable(good, DType::kBf16).has_value());
  EXPECT_NE(Flash2MmaNotApplicable(good, DType::kFp32).value_or("").find("fp32"), std::string::npos);
  AttentionShape d96 = good;
  d96.d = 96;
  EXPECT_NE(Flash2MmaNotApplicable(d96, DType::kFp16).value_or("").find("d = 96"), std::string::npos);
  AttentionShape negative_scale = good;
  negative_scale.scale = -1.0f;
  EXPECT_TRUE(Flash2MmaNotApplicable(negative_scale, DType::kFp16).has_value());
  AttentionShape empty = good;
  empty.n = 0;
  EXPECT_TRUE(Flash2MmaNotApplicable(empty, DType::kFp16).has_value());
  EXPECT_EQ(Flash2MmaWorkspaceBytes(good, DType::kFp16), 0u);
  AttentionArgs args;
  args.shape = good;
  args.dtype = DType::kFp16;
  args.options = 1u << 8;
  EXPECT_EQ(LaunchFlash2Mma(args), cudaErrorInvalidValue);  // refused before any pointer is touched
  args.options = kFlash2MmaNarrowKvTile | kFlash2MmaNoSwizzle;  // the narrow tile exists for the default only
  EXPECT_EQ(LaunchFlash2Mma(args), cudaErrorInvalidValue);
  EXPECT_EQ(Flash2MmaOptionsName(kFlash2MmaNoSwizzle | kFlash2MmaPThroughSmem), "no-swizzle+p-smem");
  EXPECT_EQ(Flash2MmaOptionsName(kFlash2MmaLazyRescale | kFlash2MmaStagger), "lazy-rescale+stagger");
  EXPECT_EQ(Flash2MmaTileShape(64).block_rows, 128);
  EXPECT_EQ(Flash2MmaTileShape(128).block_cols, 64);
}

// The timing driver's SM clock (mma_check::MeasureSmClockMhz) is a real clock: above an idle multiprocessor's lowest
// and not above the device's peak beyond the global timer's resolution over the window (a microsecond in 500).
TEST(MmaCheck, MeasuresTheSmClockWithinTheDevicesRange) {
  if (!HaveGpu()) GTEST_SKIP() << "no CUDA device";
  int device = 0, peak_khz = 0;
  ASSERT_EQ(cudaGetDevice(&device), cudaSuccess);
  ASSERT_EQ(cudaDeviceGetAttribute(&peak_khz, cudaDevAttrClockRate, device), cudaSuccess);
  double mhz = 0;
  ASSERT_EQ(mma_check::MeasureSmClockMhz(nullptr, &mhz), cudaSuccess);
  EXPECT_GT(mhz, 100.0);
  EXPECT_LE(mhz, peak_khz / 1000.0 * 1.01);
}

}  // namespace
}  // namespace flashviz::cuda
