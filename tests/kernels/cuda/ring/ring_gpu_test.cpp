// Ring attention on the GPU against the float64 reference (kernels/cpu/reference.h), every row of every head, with O
// and L poisoned with NaN first, through the harness `flashviz bench --ring` uses. The virtual transport (P virtual
// devices on one GPU, cudaMemcpyAsync in place of NCCL) for P = 1, 2, 3, 4, 8: non-causal and causal, contiguous
// and zigzag, fp16 and bf16, d = 64 and 128, on N = 1000 (chunks of uneven length, several Q and K/V tiles, edge
// tiles), N = 2P + 1 (chunks of one or two rows: the zigzag's tiny case) and N = 2053 with B·H = 4. Then the NCCL
// transport on the machine's GPUs (SKIPPED with the reason where fewer than 2 GPUs or no loadable NCCL), the timing
// and the refusals. SKIPPED where no GPU is present (label gpu). Fresh inputs every run: the seed is printed with
// each failure.
#include <gtest/gtest.h>

#include <cstdio>
#include <random>
#include <string>
#include <vector>

#include "kernels/common/format.h"
#include "kernels/cuda/device_status.h"
#include "kernels/cuda/ring/ring_attention.h"

namespace flashviz::cuda {
namespace {

struct Case {
  RingShape shape;
  RingTransportKind transport;
};

std::string CaseName(const testing::TestParamInfo<Case>& info) {
  const RingShape& s = info.param.shape;
  return Sprintf("%s_P%d_%s_%s_%s_d%d_B%dH%dN%d", std::string(RingTransportName(info.param.transport)).c_str(),
                 s.devices, s.causal ? "causal" : "full", s.zigzag ? "zigzag" : "contiguous",
                 std::string(DTypeName(s.dtype)).c_str(), s.d, s.batch, s.heads, s.n);
}

RingShape Shape(int p, bool causal, bool zigzag, DType dtype, int d, int batch, int heads, int n) {
  RingShape s;
  s.devices = p;
  s.causal = causal;
  s.zigzag = zigzag;
  s.dtype = dtype;
  s.d = d;
  s.batch = batch;
  s.heads = heads;
  s.n = n;
  return s;
}

std::vector<Case> VirtualCases() {
  std::vector<Case> cases;
  for (int p : {1, 2, 3, 4, 8})
    for (DType dtype : {DType::kFp16, DType::kBf16})
      for (int d : {64, 128})
        for (bool causal : {false, true})
          for (bool zigzag : {false, true}) {
            cases.push_back({Shape(p, causal, zigzag, dtype, d, 1, 2, 1000), RingTransportKind::kVirtual});
            cases.push_back({Shape(p, causal, zigzag, dtype, d, 2, 1, 2 * p + 1), RingTransportKind::kVirtual});
          }
  // Longer chunks (several K/V tiles a step, both pipeline stages in turn) and B·H = 4.
  for (int p : {2, 4})
    for (bool zigzag : {false, true})
      cases.push_back({Shape(p, true, zigzag, DType::kFp16, 128, 2, 2, 2053), RingTransportKind::kVirtual});
  return cases;
}

std::vector<Case> NcclCases() {
  std::vector<Case> cases;
  for (int p : {2, 4})
    for (DType dtype : {DType::kFp16, DType::kBf16}) {
      cases.push_back({Shape(p, true, true, dtype, 128, 1, 2, 1000), RingTransportKind::kNccl});
      cases.push_back({Shape(p, false, false, dtype, 64, 2, 1, 1000), RingTransportKind::kNccl});
      cases.push_back({Shape(p, true, false, dtype, 128, 1, 1, 2 * p + 1), RingTransportKind::kNccl});
    }
  return cases;
}

std::uint64_t FreshSeed() {
  static std::random_device entropy;
  return (static_cast<std::uint64_t>(entropy()) << 32) ^ entropy();
}

// Why this case cannot run here (the test is then SKIPPED with it), or empty.
std::string SkipReason(const Case& c) {
  if (std::string why = CudaDeviceUnavailableReason(); !why.empty()) return why;
  if (c.transport != RingTransportKind::kNccl) return {};
  if (const int gpus = RingGpuCount(); gpus < 2) return Sprintf("the nccl transport needs 2 GPUs; %d here", gpus);
  if (auto why = NcclUnavailableReason()) return *why;
  if (c.shape.devices > RingGpuCount())
    return Sprintf("P = %d needs %d GPUs; %d here", c.shape.devices, c.shape.devices, RingGpuCount());
  return {};
}

// The communicators NCCL keeps between measurements are destroyed before the process ends.
class ReleaseCommunicators : public testing::Environment {
 public:
  void TearDown() override { ReleaseRingCommunicators(); }
};
[[maybe_unused]] testing::Environment* const release_environment =
    testing::AddGlobalTestEnvironment(new ReleaseCommunicators);

class RingTest : public testing::TestWithParam<Case> {
 protected:
  void SetUp() override {
    if (std::string why = SkipReason(GetParam()); !why.empty()) GTEST_SKIP() << why;
  }
};

TEST_P(RingTest, MatchesFloat64ReferenceOnEveryRow) {
  const Case& c = GetParam();
  RingMeasureOptions options;
  options.transport = c.transport;
  options.time = false;
  options.validate_all = true;
  options.seed = FreshSeed();
  const RingMeasurement m = MeasureRing(c.shape, options);
  ASSERT_EQ(m.status, MeasureStatus::kOk) << m.reason << " (seed " << options.seed << ")";
  EXPECT_LE(m.max_abs_error, m.tolerance) << "seed " << options.seed;
  EXPECT_EQ(m.validated_rows, c.shape.Heads() * c.shape.n);
  std::printf("  %s: max |O err| %.3g (tolerance %.3g), max |L err| %.3g\n", CaseName({c, 0}).c_str(), m.max_abs_error,
              m.tolerance, m.lse_max_error);
}

INSTANTIATE_TEST_SUITE_P(Virtual, RingTest, testing::ValuesIn(VirtualCases()), CaseName);
INSTANTIATE_TEST_SUITE_P(Nccl, RingTest, testing::ValuesIn(NcclCases()), CaseName);

void ExpectTimed(RingTransportKind transport) {
  RingMeasureOptions options;
  options.transport = transport;
  options.repeats = 3;
  options.warmup = 1;
  options.seed = FreshSeed();
  const RingShape shape = Shape(2, true, true, DType::kFp16, 128, 1, 4, 4096);
  const RingMeasurement m = MeasureRing(shape, options);
  ASSERT_EQ(m.status, MeasureStatus::kOk) << m.reason;
  EXPECT_GT(m.ms_median, 0.0);
  EXPECT_LE(m.ms_min, m.ms_median);
  EXPECT_NEAR(m.tflops_per_gpu, RingFlops(shape) / (m.ms_median * 1e-3) / 2 * 1e-12, 1e-9 * m.tflops_per_gpu);
  EXPECT_GT(m.compute_ms, 0.0);
  EXPECT_GT(m.exchange_ms, 0.0);
  // Sampled, of the first and the last head: the first and last row of each of the 4 chunks, and 16 random ones.
  EXPECT_GE(m.validated_rows, 2 * 8);
  EXPECT_LE(m.validated_rows, 2 * (8 + 16));
  std::printf("  %s: ring %.3f ms, compute alone %.3f ms, exchanges alone %.3f ms\n",
              std::string(RingTransportName(transport)).c_str(), m.ms_median, m.compute_ms, m.exchange_ms);
}

TEST(RingHarness, TimesTheVirtualRingAfterValidating) {
  if (std::string why = CudaDeviceUnavailableReason(); !why.empty()) GTEST_SKIP() << why;
  ExpectTimed(RingTransportKind::kVirtual);
}

TEST(RingHarness, TimesTheNcclRingAfterValidating) {
  Case c{Shape(2, true, true, DType::kFp16, 128, 1, 4, 4096), RingTransportKind::kNccl};
  if (std::string why = SkipReason(c); !why.empty()) GTEST_SKIP() << why;
  ExpectTimed(RingTransportKind::kNccl);
}

TEST(RingHarness, RefusesWhatIsNotApplicable) {
  if (std::string why = CudaDeviceUnavailableReason(); !why.empty()) GTEST_SKIP() << why;
  RingMeasureOptions options;
  options.time = false;
  RingMeasurement m = MeasureRing(Shape(2, false, false, DType::kFp32, 64, 1, 1, 100), options);
  EXPECT_EQ(m.status, MeasureStatus::kNotApplicable);
  EXPECT_NE(m.reason.find("fp32"), std::string::npos) << m.reason;
  m = MeasureRing(Shape(4, true, true, DType::kFp16, 64, 1, 1, 7), options);
  EXPECT_EQ(m.status, MeasureStatus::kNotApplicable);
  options.transport = RingTransportKind::kNccl;
  if (!NcclUnavailableReason()) {
    m = MeasureRing(Shape(RingGpuCount() + 1, false, false, DType::kFp16, 64, 1, 1, 1000), options);
    EXPECT_EQ(m.status, MeasureStatus::kNotApplicable);
    EXPECT_NE(m.reason.find("GPUs"), std::string::npos) << m.reason;
  }
  // 10⁶ virtual devices' worth of memory on one GPU: refused before anything is allocated.
  options.transport = RingTransportKind::kVirtual;
  m = MeasureRing(Shape(64, false, false, DType::kFp16, 128, 64, 1000, 1 << 20), options);
  EXPECT_EQ(m.status, MeasureStatus::kNotApplicable);
  EXPECT_NE(m.reason.find("does not fit"), std::string::npos) << m.reason;
}

}  // namespace
}  // namespace flashviz::cuda
