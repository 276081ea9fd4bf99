// flash3_fp8 against float64, with the error bound kernels/cuda/mma/flash3_fp8.cu derives, per element:
//   1. on its own quantized inputs (Q̂, K̂, V̂ read back from the workspace and decoded exactly): only the kernel's
//      roundings (P̃ to e4m3, the tensor cores' accumulation, O to bf16) are left, so the bound is tight enough
//      that a wrong key order, scale or tile fails;
//   2. end to end, against the bf16 inputs, with the inputs' own rounding added to the bound.
// Shapes: N < 128, not a multiple of 128 or 32, several heads, d = 128 and 256, causal and not, the softmax
// spread (scale 1/√d) and sharp (scale 1: nearly one key per row). Plus the quantizer itself, the prequantized
// launch, repeatability and the "not applicable" answers. Needs a Hopper GPU (label gpu): SKIPPED without one.
#include <cuda_runtime.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <string>
#include <tuple>
#include <vector>

#include "kernels/cuda/mma/flash3_fp8.h"
#include "kernels/cuda/mma/mma_check.h"
#include "tests/kernels/cuda/mma/device_problem.h"

namespace flashviz::cuda {
namespace {

std::string WhyNoHopper() {
  int count = 0;
  if (cudaGetDeviceCount(&count) != cudaSuccess || count == 0) return "no CUDA device";
  return Flash3Fp8NotApplicable(AttentionShape{1, 1, 128, 128, 0.125f, false}, DType::kBf16).value_or("");
}

double DecodeE4m3(std::uint8_t byte) {
  const int sign = byte >> 7, exponent = (byte >> 3) & 15, mantissa = byte & 7;
  if (exponent == 15 && mantissa == 7) return NAN;
  const double magnitude = exponent == 0 ? std::ldexp(mantissa, -9) : std::ldexp(1.0 + mantissa / 8.0, exponent - 7);
  return sign ? -magnitude : magnitude;
}

double DecodeBf16(std::uint16_t bits) {
  const std::uint32_t word = static_cast<std::uint32_t>(bits) << 16;
  float value;
  std::memcpy(&value, &word, sizeof value);
  return value;
}

// One problem on the device (mma_test::DeviceProblem's buffers and N(0, 1) fill) with its workspace, and
// everything read back after a launch.
struct Fp8Problem : mma_test::DeviceProblem {
  Flash3Fp8Workspace layout;
  std::vector<double> q, k, v;              // the bf16 inputs
  std::vector<double> q_hat, k_hat, v_hat;  // the dequantized e4m3 copies, (head, row, column)
  std::vector<double> o;                    // the kernel's O
  double descale[3] = {0, 0, 0};

  Fp8Problem(const AttentionShape& shape, unsigned options)
      : mma_test::DeviceProblem(&LaunchFlash3Fp8, shape, DType::kBf16, options),
        layout(Flash3Fp8WorkspaceLayout(shape)) {
    EXPECT_EQ(cudaMalloc(&args.workspace, layout.bytes), cudaSuccess);
    args.workspace_bytes = layout.bytes;
  }
  ~Fp8Problem() { cudaFree(args.workspace); }

  std::vector<double> ReadBf16(const void* device) const {
    std::vector<std::uint16_t> bits(elements);
    EXPECT_EQ(cudaMemcpy(bits.data(), device, elements * 2, cudaMemcpyDeviceToHost), cudaSuccess);
    std::vector<double> values(elements);
    for (std::size_t i = 0; i < elements; ++i) values[i] = DecodeBf16(bits[i]);
    return values;
  }

  // Poison O, launch, and read back O, the inputs and the workspace's quantized copies.
  void Run(const std::string& what) {
    ASSERT_EQ(mma_check::Poison(args.o, elements, args.dtype, nullptr), cudaSuccess);
    ASSERT_EQ(launch(args), cudaSuccess) << what;
    ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess) << what;
    o = ReadBf16(args.o);
    q = ReadBf16(args.q);
    k = ReadBf16(args.k);
    v = ReadBf16(args.v);
    std::vector<std::uint8_t> workspace(layout.bytes);
    ASSERT_EQ(cudaMemcpy(workspace.data(), args.workspace, layout.bytes, cudaMemcpyDeviceToHost), cudaSuccess);
    float scales[3];
    std::memcpy(scales, workspace.data() + layout.descale, sizeof scales);
    for (int t = 0; t < 3; ++t) descale[t] = scales[t];
    const int n = args.shape.n, d = args.shape.d;
    q_hat.resize(elements);
    k_hat.resize(elements);
    v_hat.resize(elements);
    for (std::size_t i = 0; i < elements; ++i) {
      q_hat[i] = descale[0] * DecodeE4m3(workspace[layout.q + i]);
      k_hat[i] = descale[1] * DecodeE4m3(workspace[layout.k + i]);
    }
    for (std::int64_t head = 0; head < args.shape.Heads(); ++head)
      for (int key = 0; key < n; ++key)
        for (int column = 0; column < d; ++column)
          v_hat[(head * n + key) * d + column] =
              descale[2] *
              DecodeE4m3(workspace[layout.vt + (head * d + column) * layout.key_stride + Fp8KeyPosition(key)]);
  }
};

struct BoundCheck {
  double max_error = 0, max_ratio = 0;  // the largest |Ô − O| and |Ô − O| / bound
  long long violations = 0;
  std::string first_violation;
};

// Checks every element of O (of every row_step-th row of the B·H·N) against float64 with flash3_fp8.cu's bound: on
// the dequantized copies, or (end_to_end) on the bf16 inputs, the inputs' own rounding then added to the bound.
BoundCheck CheckAgainstBound(const Fp8Problem& p, bool end_to_end, int row_step = 1) {
  const int n = p.args.shape.n, d = p.args.shape.d;
  const double scale = p.args.shape.scale;
  const std::vector<double>& qr = end_to_end ? p.q : p.q_hat;
  const std::vector<double>& kr = end_to_end ? p.k : p.k_hat;
  const std::vector<double>& vr = end_to_end ? p.v : p.v_hat;
  // The tensor cores' accumulation: about 14 bits kept per addition, one addition per k32 step (flash3_fp8.cu).
  // P̃V runs 4 k32 steps per 128-key tile, the padded keys of the last included.
  const double epsilon_s = std::ldexp(d / 32 + 1, -14), epsilon_o = std::ldexp(4 * ((n + 127) / 128) + 1, -14);
  // ℓ on the tensor cores at d = 128 (Traits::kRowSumOnTensorCores, flash3_kernel.cuh): a sum of the rounded P̃, each
  // tile's 4 k32 steps from zero, then rescaled and added in fp32 (three roundings a tile).
  const bool rounded_row_sum = d == 128;
  const double epsilon_l = std::ldexp(5, -14) + std::ldexp(3 * ((n + 127) / 128), -24);
  BoundCheck result;
  std::vector<double> s(n), p_row(n), r(n);
  for (std::int64_t head = 0; head < p.args.shape.Heads(); ++head)
    for (int i = 0; i < n; ++i) {
      if ((head * n + i) % row_step != 0) continue;
      const int keys = p.args.shape.causal ? i + 1 : n;
      const double* qi = &qr[(head * n + i) * d];
      const double* qhi = &p.q_hat[(head * n + i) * d];
      double max_s = -INFINITY, perturbation = 0;
      for (int j = 0; j < keys; ++j) {
        const double* kj = &kr[(head * n + j) * d];
        const double* khj = &p.k_hat[(head * n + j) * d];
        double dot = 0, dot_hat = 0, magnitude = 0;
        for (int l = 0; l < d; ++l) {
          dot += qi[l] * kj[l];
          dot_hat += qhi[l] * khj[l];
          magnitude += std::fabs(qhi[l] * khj[l]);
        }
        s[j] = scale * dot;
        max_s = std::max(max_s, s[j]);
        // What the kernel's score can differ by: its accumulation, the fp32 exponent, and (end to end) the
        // inputs' rounding; + the exponential (2^-13) and, where ℓ sums the unrounded P̃ in fp32, that sum (N·2^-26).
        perturbation = std::max(perturbation, scale * (epsilon_s * magnitude + std::fabs(dot_hat - dot)) + 0x1p-13 +
                                                  (rounded_row_sum ? 0.0 : n * 0x1p-26));
      }
      const double kappa = std::exp(2.0 * perturbation), root_kappa = std::exp(perturbation);
      // ℓ from the rounded P̃: the kernel's weights sum to at least Σ max(0, (15/16)·p_j/√κ − 2^-18) (flash3_fp8.cu).
      double ell = 0, rounded_ell = 0, least_ell = 0;
      for (int j = 0; j < keys; ++j) {
        p_row[j] = std::exp(s[j] - max_s);
        ell += p_row[j];
        r[j] = p_row[j] >= 0x1p-14 ? p_row[j] / 16.0 : std::min(p_row[j], 0x1p-18);  // P̃'s e4m3 rounding
        rounded_ell += r[j];
        least_ell += std::max(0.0, 15.0 / 16.0 * p_row[j] / root_kappa - 0x1p-18);
      }
      for (int column = 0; column < d; ++column) {
        double reference = 0, centre = 0, weighted = 0, rounded = 0, input_rounding = 0;
        for (int j = 0; j < keys; ++j) {
          const double vj = vr[(head * n + j) * d + column], vhj = p.v_hat[(head * n + j) * d + column];
          reference += p_row[j] * vj;
          centre += p_row[j] * vhj;
          weighted += p_row[j] * std::fabs(vhj);
          rounded += r[j] * std::fabs(vhj);
          input_rounding += p_row[j] * std::fabs(vhj - vj);
        }
        reference /= ell;
        centre /= ell;
        double core;
        if (rounded_row_sum) {
          // The weighted mean of v̂ with the kernel's weights moves from centre by Σ e_j |v̂_j − centre| / Σ weights
          // (|v̂_j − centre| ≤ |v̂_j| + |centre|), then the two accumulations, then (end to end) the inputs' rounding.
          const double moved = ((root_kappa - 1) * (weighted + ell * std::fabs(centre)) +
                                root_kappa * (rounded + rounded_ell * std::fabs(centre))) /
                               least_ell;
          const double accumulated = (epsilon_o * root_kappa * (weighted + rounded) / least_ell +
                                      epsilon_l * (std::fabs(centre) + moved)) /
                                     (1 - epsilon_l);
          core = moved + accumulated + input_rounding / ell;
        } else {
          core = ((kappa * (1 + epsilon_o) - 1) * weighted + kappa * (1 + epsilon_o) * rounded + input_rounding) / ell;
        }
        const double bound = core + 0x1p-8 * (std::fabs(reference) + core);
        const double error = std::fabs(p.o[(head * n + i) * d + column] - reference);
        result.max_error = std::max(result.max_error, error);
        result.max_ratio = std::max(result.max_ratio, error / bound);
        if (!(error <= bound) && result.violations++ == 0)
          result.first_violation = "head " + std::to_string(head) + " row " + std::to_string(i) + " column " +
                                   std::to_string(column) + ": |error| " + std::to_string(error) + " > bound " +
                                   std::to_string(bound);
      }
    }
  return result;
}

using Case = std::tuple<int /*d*/, bool /*causal*/, bool /*sharp*/, unsigned /*options*/>;
class Flash3Fp8WithinBound : public ::testing::TestWithParam<Case> {};

TEST_P(Flash3Fp8WithinBound, RandomAndEdgeShapes) {
  if (const std::string why = WhyNoHopper(); !why.empty()) GTEST_SKIP() << why;
  const auto [d, causal, sharp, options] = GetParam();
  const int shapes[][3] = {{1, 1, 1}, {1, 1, 37}, {1, 2, 128}, {2, 1, 129}, {1, 3, 200}, {2, 2, 383}, {1, 2, 1024}};
  BoundCheck worst_own, worst_end_to_end;
  for (const auto& s : shapes) {
    const AttentionShape shape{s[0], s[1], s[2], d, sharp ? 1.0f : 1.0f / std::sqrt(static_cast<float>(d)), causal};
    Fp8Problem problem(shape, options);
    const std::uint64_t seed = mma_test::FreshSeed();
    problem.Fill(seed);
    const std::string what = std::to_string(s[0]) + "x" + std::to_string(s[1]) + " N=" + std::to_string(s[2]) +
                             " seed=" + std::to_string(seed);
    problem.Run(what);
    if (HasFatalFailure()) return;
    const BoundCheck own = CheckAgainstBound(problem, false), end_to_end = CheckAgainstBound(problem, true);
    EXPECT_EQ(own.violations, 0) << what << ", on its quantized inputs: " << own.first_violation;
    EXPECT_EQ(end_to_end.violations, 0) << what << ", end to end: " << end_to_end.first_violation;
    worst_own.max_error = std::max(worst_own.max_error, own.max_error);
    worst_own.max_ratio = std::max(worst_own.max_ratio, own.max_ratio);
    worst_end_to_end.max_error = std::max(worst_end_to_end.max_error, end_to_end.max_error);
    worst_end_to_end.max_ratio = std::max(worst_end_to_end.max_ratio, end_to_end.max_ratio);
  }
  // The measured error next to the bound (kernels/README.md quotes these lines).
  std::printf("fp8 error %s d=%d %s %s: on its inputs max |error| %.3g (%.2f of the bound); end to end %.3g (%.2f)\n",
              Flash3Fp8OptionsName(options).c_str(), d, causal ? "causal" : "full", sharp ? "sharp" : "spread",
              worst_own.max_error, worst_own.max_ratio, worst_end_to_end.max_error, worst_end_to_end.max_ratio);
}

std::string CaseName(const ::testing::TestParamInfo<Case>& info) {
  const auto [d, causal, sharp, options] = info.param;
  std::string name = "d" + std::to_string(d) + (causal ? "_causal" : "_full") + (sharp ? "_sharp_" : "_spread_") +
                     Flash3Fp8OptionsName(options);
  for (char& ch : name)
    if (ch == '-' || ch == '+') ch = '_';
  return name;
}

INSTANTIATE_TEST_SUITE_P(EveryShape, Flash3Fp8WithinBound,
                         ::testing::Combine(::testing::Values(128, 256), ::testing::Bool(), ::testing::Bool(),
                                            ::testing::Values(0u, unsigned{kFlash3Fp8OtherSchedule},
                                                              unsigned{kFlash3Fp8OtherGrid})),
                         CaseName);

// The quantizer: each tensor's scale maps its largest |x| to 448, every element is within e4m3's rounding of
// its input, and Vᵀ's padding keys (N to the next multiple of 32) are zeros.
TEST(Flash3Fp8, QuantizerRoundsEachInputOnce) {
  if (const std::string why = WhyNoHopper(); !why.empty()) GTEST_SKIP() << why;
  const AttentionShape shape{1, 3, 200, 128, 0.1f, false};
  Fp8Problem problem(shape, 0);
  problem.Fill(mma_test::FreshSeed());
  problem.Run("quantizer");
  if (HasFatalFailure()) return;
  const std::vector<double>* inputs[] = {&problem.q, &problem.k, &problem.v};
  const std::vector<double>* rounded[] = {&problem.q_hat, &problem.k_hat, &problem.v_hat};
  for (int t = 0; t < 3; ++t) {
    double amax = 0;
    for (double x : *inputs[t]) amax = std::max(amax, std::fabs(x));
    EXPECT_NEAR(problem.descale[t], amax / 448.0, amax / 448.0 * 1e-6) << "tensor " << t;
    for (std::size_t i = 0; i < problem.elements; ++i) {
      const double x = (*inputs[t])[i], x_hat = (*rounded[t])[i];
      ASSERT_LE(std::fabs(x_hat - x), std::fabs(x) / 16.0 + 0x1p-10 * problem.descale[t])
          << "tensor " << t << " element " << i << ": " << x << " -> " << x_hat;
    }
  }
  std::vector<std::uint8_t> workspace(problem.layout.bytes);
  ASSERT_EQ(cudaMemcpy(workspace.data(), problem.args.workspace, workspace.size(), cudaMemcpyDeviceToHost),
            cudaSuccess);
  ASSERT_EQ(problem.layout.key_stride, 224);
  for (int head = 0; head < 3; ++head)
    for (int column = 0; column < 128; ++column)
      for (int key = 200; key < 224; ++key)  // the last group's keys past N
        EXPECT_EQ(workspace[problem.layout.vt + (head * 128 + column) * 224 + Fp8KeyPosition(key)], 0)
            << "head " << head << " key " << key;
}

// Fp8KeyPosition is a permutation of each group of 32 keys.
TEST(Flash3Fp8, KeyOrderPermutesEachGroup) {
  std::vector<int> seen(64, 0);
  for (int key = 0; key < 64; ++key) {
    const int position = Fp8KeyPosition(key);
    ASSERT_EQ(position / 32, key / 32);
    ++seen[position];
  }
  for (int count : seen) EXPECT_EQ(count, 1);
  EXPECT_EQ(Fp8KeyPosition(0), 0);
  EXPECT_EQ(Fp8KeyPosition(2), 4);    // c = 1: the second lane's first byte
  EXPECT_EQ(Fp8KeyPosition(8), 2);    // h = 1: the first lane's third byte
  EXPECT_EQ(Fp8KeyPosition(16), 16);  // h = 2: the second register
}

// Cut work tiles (d = 128 without the mask, flash3_schedule.h): N = 2000 (16 K/V tiles, the last part-filled) and
// B·H = 17 make 272 work tiles; on the 132 blocks of an H100 SXM or H200, one pass of whole tiles, then 140 work
// tiles cut into 16-17 K/V tiles a block. Every 31st row against the bound: the pieces' merge is the only difference
// from whole work tiles, so its errors must stay within the same bound.
TEST(Flash3Fp8, CutWorkTilesWithinBound) {
  if (const std::string why = WhyNoHopper(); !why.empty()) GTEST_SKIP() << why;
  const AttentionShape shape{1, 17, 2000, 128, 1.0f / std::sqrt(128.0f), false};
  Fp8Problem problem(shape, 0);
  if (problem.layout.blocks == 0) GTEST_SKIP() << "272 work tiles come out in whole passes on this GPU's SM count";
  const std::uint64_t seed = mma_test::FreshSeed();
  problem.Fill(seed);
  const std::string what = "seed=" + std::to_string(seed);
  problem.Run(what);
  if (HasFatalFailure()) return;
  for (bool end_to_end : {false, true}) {
    const BoundCheck check = CheckAgainstBound(problem, end_to_end, 31);
    EXPECT_EQ(check.violations, 0) << what << (end_to_end ? ", end to end: " : ", on its inputs: ")
                                   << check.first_violation;
  }
}

// Launching on what the workspace already holds gives the same bits as quantizing first; and twice the same
// inputs give the same bits (a race between producer and consumers would move the result, and so would a merge of
// cut work tiles that depended on which piece finished last: without the mask this shape's last passes are cut).
TEST(Flash3Fp8, PrequantizedAndRepeatedLaunchesAgree) {
  if (const std::string why = WhyNoHopper(); !why.empty()) GTEST_SKIP() << why;
  for (bool causal : {false, true}) {
    Fp8Problem problem(AttentionShape{1, 17, 2000, 128, 0.09f, causal}, 0);
    problem.Fill(mma_test::FreshSeed());
    problem.Run("first");
    if (HasFatalFailure()) return;
    const std::vector<double> first = problem.o;
    problem.Run("repeated");
    EXPECT_EQ(problem.o, first);
    problem.args.options = kFlash3Fp8Prequantized;
    problem.Run("prequantized");
    EXPECT_EQ(problem.o, first);
  }
}

TEST(Flash3Fp8, SaysWhyItDoesNotApply) {
  const AttentionShape good{1, 1, 256, 128, 0.125f, false};
  EXPECT_NE(Flash3Fp8NotApplicable(good, DType::kFp16).value_or("").find("bf16"), std::string::npos);
  AttentionShape d64 = good;
  d64.d = 64;
  EXPECT_NE(Flash3Fp8NotApplicable(d64, DType::kBf16).value_or("").find("d = 64"), std::string::npos);
  AttentionShape empty = good;
  empty.n = 0;
  EXPECT_TRUE(Flash3Fp8NotApplicable(empty, DType::kBf16).has_value());
  EXPECT_GE(Flash3Fp8WorkspaceBytes(good, DType::kBf16), 3u * 256 * 128);
  AttentionArgs args;
  args.shape = good;
  args.dtype = DType::kBf16;
  args.options = 1u << 4;
  EXPECT_EQ(LaunchFlash3Fp8(args), cudaErrorInvalidValue);  // unknown bit
  args.options = 0;
  EXPECT_EQ(LaunchFlash3Fp8(args), cudaErrorInvalidValue);  // null tensors and workspace
  EXPECT_EQ(Flash3Fp8OptionsName(0), "default");
  EXPECT_EQ(Flash3Fp8OptionsName(kFlash3Fp8Prequantized), "prequantized");
  EXPECT_EQ(Flash3Fp8OptionsName(kFlash3Fp8Prequantized | kFlash3Fp8OtherSchedule), "prequantized+other-schedule");
  EXPECT_EQ(Flash3Fp8OptionsName(kFlash3Fp8OtherGrid), "other-grid");
}

}  // namespace
}  // namespace flashviz::cuda
