// Every decode variant against the float64 decode reference (kernels/cpu/decode_reference.h), through the harness
// `flashviz bench --decode` uses: every (sequence, KV head) checked, O poisoned with NaN first. Shapes: G = H
// (multi-head), G = 1 (multi-query, 32 rows in two row groups), R = 1 … 4, N smaller than one 64-key tile, N not a
// multiple of the tile or the page; split counts automatic, 1, 2 and many (more than the tiles: clamped); page sizes
// 16 (a tile spans four pages), 64 and 256 (a page spans tiles, the last one partly empty), 48 and 100 (tiles
// straddle pages). SKIPPED where no GPU is
// present (label gpu). Fresh inputs every run: the seed is printed with each failure.
#include <gtest/gtest.h>

#include <random>
#include <string>
#include <vector>

#include "kernels/common/format.h"
#include "kernels/cuda/decode/decode_harness.h"
#include "kernels/cuda/decode/decode_variants.h"
#include "kernels/cuda/device_status.h"

namespace flashviz::cuda {
namespace {

struct Case {
  std::string id;
  DType dtype;
  DecodeLaunchShape problem;
  int splits;
};

std::string CaseName(const testing::TestParamInfo<Case>& info) {
  const Case& c = info.param;
  const DecodeLaunchShape& p = c.problem;
  return Sprintf("%s_%s_B%dH%dG%dR%dN%dd%d_P%d_S%d", c.id.c_str(), std::string(DTypeName(c.dtype)).c_str(), p.batch,
                 p.heads, p.kv_heads, p.q_rows, p.kv_len, p.d, p.page_size, c.splits);
}

DecodeLaunchShape Problem(int batch, int heads, int kv_heads, int q_rows, int kv_len, int d) {
  DecodeLaunchShape p;
  p.batch = batch;
  p.heads = heads;
  p.kv_heads = kv_heads;
  p.q_rows = q_rows;
  p.kv_len = kv_len;
  p.d = d;
  return p;
}

std::vector<Case> AllCases() {
  struct Shape {
    int batch, heads, kv_heads, q_rows, kv_len;
  };
  const Shape shapes[] = {
      {2, 4, 4, 1, 100},    // G = H
      {2, 4, 1, 2, 257},    // G = 1
      {3, 8, 8, 4, 17},     // N below one tile, R = 4
      {1, 8, 2, 3, 1000},   // 12 rows padded to 16, N not a multiple of 64
      {1, 32, 1, 1, 130},   // 32 rows: two row groups
      {2, 32, 8, 1, 5000},  // many tiles per split: the pipeline's stages wrap
  };
  std::vector<Case> cases;
  for (DType dtype : {DType::kFp16, DType::kBf16})
    for (int d : {64, 128})
      for (const Shape& s : shapes) {
        const DecodeLaunchShape p = Problem(s.batch, s.heads, s.kv_heads, s.q_rows, s.kv_len, d);
        cases.push_back({"decode_naive", dtype, p, 0});
        for (int splits : {0, 1, 2, 1000}) cases.push_back({"flash_decode", dtype, p, splits});
        // Page sizes: 16 (a tile spans four pages), 64 (a page per tile), 256 (a page spans tiles), 48 and 100 (no
        // multiple of the tile: tiles straddle pages).
        for (int page : {16, 48, 64, 100, 256})
          for (int splits : {0, 3}) {
            DecodeLaunchShape paged = p;
            paged.page_size = page;
            cases.push_back({"flash_decode_paged", dtype, paged, splits});
          }
      }
  return cases;
}

std::uint64_t FreshSeed() {
  static std::random_device entropy;
  return (static_cast<std::uint64_t>(entropy()) << 32) ^ entropy();
}

class DecodeVariantTest : public testing::TestWithParam<Case> {
 protected:
  void SetUp() override {
    if (std::string why = CudaDeviceUnavailableReason(); !why.empty()) GTEST_SKIP() << why;
  }
};

TEST_P(DecodeVariantTest, MatchesFloat64Reference) {
  const Case& c = GetParam();
  DecodeMeasureOptions options;
  options.time = false;
  options.validate_all = true;
  options.seed = FreshSeed();
  options.splits = c.splits;
  const DecodeMeasurement m = MeasureDecode(*FindDecodeInfo(c.id), c.problem, c.dtype, options);
  ASSERT_EQ(m.status, MeasureStatus::kOk) << m.reason << " (seed " << options.seed << ")";
  EXPECT_LE(m.max_abs_error, m.tolerance) << "seed " << options.seed;
  EXPECT_EQ(m.validated_rows, c.problem.QueryRows());
  if (c.splits > 0 && c.id != "decode_naive") {
    EXPECT_LE(m.splits, c.splits);
  }
  std::printf("  %s: max |err| = %.3g (tolerance %.3g), %d splits\n", CaseName({c, 0}).c_str(), m.max_abs_error,
              m.tolerance, m.splits);
}

INSTANTIATE_TEST_SUITE_P(All, DecodeVariantTest, testing::ValuesIn(AllCases()), CaseName);

TEST(DecodeHarness, TimesAfterValidating) {
  if (std::string why = CudaDeviceUnavailableReason(); !why.empty()) GTEST_SKIP() << why;
  DecodeMeasureOptions options;
  options.repeats = 3;
  options.warmup = 1;
  options.seed = FreshSeed();
  const DecodeMeasurement m =
      MeasureDecode(*FindDecodeInfo("flash_decode"), Problem(2, 32, 8, 1, 4096, 128), DType::kFp16, options);
  ASSERT_EQ(m.status, MeasureStatus::kOk) << m.reason;
  EXPECT_GT(m.ms_median, 0.0);
  EXPECT_LE(m.ms_min, m.ms_median);
  EXPECT_DOUBLE_EQ(m.kv_bytes, 2.0 * 2 * 8 * 4096 * 128 * 2);
  EXPECT_NEAR(m.gbps, m.kv_bytes / (m.ms_median * 1e6), 1e-6 * m.gbps);
  EXPECT_GE(m.splits, 1);
}

TEST(DecodeHarness, CopyBandwidthIsMeasured) {
  if (std::string why = CudaDeviceUnavailableReason(); !why.empty()) GTEST_SKIP() << why;
  const CopyBandwidth copy = MeasureCopyBandwidth(64u << 20, 5);
  ASSERT_TRUE(copy.error.empty()) << copy.error;
  EXPECT_GT(copy.gbps, 100.0);
}

TEST(DecodeHarness, RefusesWhatIsNotApplicable) {
  DecodeMeasureOptions options;
  DecodeMeasurement m =
      MeasureDecode(*FindDecodeInfo("flash_decode"), Problem(1, 4, 4, 1, 64, 64), DType::kFp32, options);
  EXPECT_EQ(m.status, MeasureStatus::kNotApplicable);
  EXPECT_NE(m.reason.find("fp32"), std::string::npos) << m.reason;
  m = MeasureDecode(*FindDecodeInfo("flash_decode_paged"), Problem(1, 4, 4, 1, 64, 64), DType::kFp16, options);
  EXPECT_EQ(m.status, MeasureStatus::kNotApplicable);
  EXPECT_NE(m.reason.find("page size"), std::string::npos) << m.reason;
}

// The argument checks run before any kernel, so they hold without a GPU too.
TEST(DecodeLaunch, RejectsMissingOrMisalignedTensors) {
  alignas(16) static unsigned char storage[4096];
  DecodeArgs args;
  args.shape = Problem(1, 4, 2, 1, 64, 64);
  args.dtype = DType::kFp16;
  EXPECT_EQ(LaunchFlashDecode(args), cudaErrorInvalidValue);  // every pointer null
  EXPECT_EQ(LaunchDecodeNaive(args), cudaErrorInvalidValue);
  args.q = args.k = args.v = storage;
  args.o = storage + 4;  // misaligned
  EXPECT_EQ(LaunchFlashDecode(args), cudaErrorInvalidValue);
  args.o = storage;
  args.shape.page_size = 16;  // paged without a block table
  EXPECT_EQ(LaunchFlashDecodePaged(args), cudaErrorInvalidValue);
  args.shape.page_size = 0;
  args.shape.kv_heads = 3;  // does not divide H
  EXPECT_EQ(LaunchFlashDecode(args), cudaErrorInvalidValue);
  args.shape.kv_heads = 2;
  args.shape.kv_len = 1000;
  args.splits = 4;  // needs a workspace
  EXPECT_EQ(LaunchFlashDecode(args), cudaErrorInvalidValue);
}

}  // namespace
}  // namespace flashviz::cuda
