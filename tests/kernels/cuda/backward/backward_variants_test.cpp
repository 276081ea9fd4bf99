// Every backward variant against the float64 backward reference (kernels/cpu/backward_reference.h), through the
// harness `flashviz bench --pass backward` uses: dQ, dK and dV of every head checked, poisoned with NaN first.
// Shapes: N not a multiple of any tile (1, 17, 100, 257) and one of several tiles (1000), B = 2 and H = 3, causal
// and not, every supported d and dtype, and both dQ strategies of flash2_bwd_mma. SKIPPED where no GPU is present
// (label gpu). Fresh inputs every run: the seed is printed with each case.
#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <string>
#include <vector>

#include "kernels/common/format.h"
#include "kernels/cuda/backward/backward_harness.h"
#include "kernels/cuda/backward/backward_variants.h"
#include "kernels/cuda/device_status.h"
#include "tests/kernels/cuda/make_shape.h"

namespace flashviz::cuda {
namespace {

struct Case {
  std::string id;
  DType dtype;
  AttentionShape shape;
  unsigned options;
};

std::string CaseName(const testing::TestParamInfo<Case>& info) {
  const Case& c = info.param;
  return Sprintf("%s_%s_B%dH%dN%dd%d%s%s", c.id.c_str(), std::string(DTypeName(c.dtype)).c_str(), c.shape.batch,
                 c.shape.heads, c.shape.n, c.shape.d, c.shape.causal ? "_causal" : "",
                 c.options ? Sprintf("_options%u", c.options).c_str() : "");
}

std::vector<Case> AllCases() {
  std::vector<Case> cases;
  for (const VariantInfo& variant : BackwardCatalogue()) {
    const std::string id = variant.id;
    std::vector<int> dims;
    for (int d : variant.head_dims)
      if (d > 0) dims.push_back(d);
    if (dims.empty()) dims = {40, 64};  // any d: an odd-sized one and a usual one
    const std::vector<unsigned> option_words = id == "flash2_bwd_mma"
                                                   ? std::vector<unsigned>{0u, kFlash2BackwardMmaOtherDqStrategy}
                                                   : std::vector<unsigned>{0u};
    for (DType dtype : {DType::kFp32, DType::kFp16, DType::kBf16}) {
      if (!(variant.dtypes & DTypeBit(dtype))) continue;
      for (int d : dims)
        for (unsigned options : option_words)
          for (bool causal : {false, true}) {
            for (int n : {1, 17, 100, 257}) cases.push_back({id, dtype, MakeShape(2, 3, n, d, causal), options});
            // Several K/V and Q tiles (the pipelines' second buffers, the causal first tile per block), once per d.
            if (dtype != DType::kBf16) cases.push_back({id, dtype, MakeShape(1, 2, 1000, d, causal), options});
          }
    }
  }
  return cases;
}

std::uint64_t FreshSeed() {
  static std::random_device entropy;
  return (static_cast<std::uint64_t>(entropy()) << 32) ^ entropy();
}

class BackwardVariantTest : public testing::TestWithParam<Case> {
 protected:
  void SetUp() override {
    if (std::string why = CudaDeviceUnavailableReason(); !why.empty()) GTEST_SKIP() << why;
  }
};

TEST_P(BackwardVariantTest, MatchesFloat64Reference) {
  const Case& c = GetParam();
  MeasureOptions options;
  options.time = false;
  options.validate_all_rows = true;
  options.seed = FreshSeed();
  options.variant_options = c.options;
  const Measurement m = MeasureBackward(*FindBackwardInfo(c.id), c.shape, c.dtype, options);
  ASSERT_EQ(m.status, MeasureStatus::kOk) << m.reason << " (seed " << options.seed << ")";
  EXPECT_LE(m.max_abs_error, m.tolerance) << "seed " << options.seed;
  EXPECT_EQ(m.validated_rows, c.shape.Heads() * c.shape.n);
  std::printf("  %s: max |err| / max |ref| = %.3g (tolerance %.3g)\n", CaseName({c, 0}).c_str(), m.max_abs_error,
              m.tolerance);
}

INSTANTIATE_TEST_SUITE_P(All, BackwardVariantTest, testing::ValuesIn(AllCases()), CaseName);

TEST(BackwardHarness, TimesAfterValidating) {
  if (std::string why = CudaDeviceUnavailableReason(); !why.empty()) GTEST_SKIP() << why;
  MeasureOptions options;
  options.repeats = 3;
  options.warmup = 1;
  options.seed = FreshSeed();
  const Measurement m =
      MeasureBackward(*FindBackwardInfo("flash2_bwd_mma"), MakeShape(2, 4, 512, 64, true), DType::kFp16, options);
  ASSERT_EQ(m.status, MeasureStatus::kOk) << m.reason;
  EXPECT_GT(m.ms_median, 0.0);
  EXPECT_LE(m.ms_min, m.ms_median);
  EXPECT_GT(m.tflops, 0.0);
  EXPECT_GT(m.hbm_bytes, 0.0);
}

TEST(BackwardHarness, RefusesWhatIsNotApplicable) {
  MeasureOptions options;
  const Measurement m =
      MeasureBackward(*FindBackwardInfo("flash2_bwd_mma"), MakeShape(1, 1, 64, 64, false), DType::kFp32, options);
  EXPECT_EQ(m.status, MeasureStatus::kNotApplicable);
  EXPECT_NE(m.reason.find("fp16"), std::string::npos) << m.reason;
}

// The argument checks run before any CUDA call, so they hold without a GPU too.
TEST(BackwardLaunch, RejectsMissingOrMisalignedTensors) {
  alignas(16) static float storage[512];
  BackwardArgs args;
  args.shape = MakeShape(1, 1, 4, 64, false);
  args.dtype = DType::kFp16;
  EXPECT_EQ(LaunchFlash2BackwardMma(args), cudaErrorInvalidValue);  // every pointer null
  args.q = args.k = args.v = args.o = args.dout = storage;
  args.lse = storage;
  args.dq = args.dk = args.dv = storage;
  args.workspace = storage;
  args.workspace_bytes = 4;  // far less than D and the dQ accumulator
  EXPECT_EQ(LaunchFlash2BackwardMma(args), cudaErrorInvalidValue);
  args.dtype = DType::kFp32;
  args.dk = reinterpret_cast<unsigned char*>(storage) + 4;  // misaligned
  args.workspace_bytes = sizeof(storage);
  EXPECT_EQ(LaunchFlash2Backward(args), cudaErrorInvalidValue);
  EXPECT_EQ(LaunchFlash2BackwardTf32x3(args), cudaErrorInvalidValue);
  args.options = 0;
  args.dtype = DType::kFp16;
  args.dk = storage;
  args.options = 2;  // no such option
  EXPECT_EQ(LaunchFlash2BackwardMma(args), cudaErrorInvalidValue);
}

}  // namespace
}  // namespace flashviz::cuda
