// Why the hw4 kernels compute in fp32 or error-compensated TF32 and not in fp16 or single TF32: a CPU model
// of each arithmetic — operands rounded exactly as the hardware rounds them, fp32 accumulation — run on inputs
// the assignment allows (N = 4096, d = 64, values in [−3, 3]) and compared with the float64 answer.
//
//   fp16        Q, K, V rounded to half (round to nearest even), scores accumulated in fp32, P̃ rounded to half
//               for P̃V (what an fp16 FlashAttention kernel does)
//   tf32-rna    every operand of both products rounded to TF32 by cvt.rna (10 mantissa bits, ties away)
//   tf32-trunc  the same operands fed to the tensor cores as raw fp32 bits (the low 13 bits ignored)
//   3xtf32      what the tf32x3 kernel does: a = hi + lo, both TF32, a·b = lo·hi + hi·lo + hi·hi
//   fp32        what the fp32 kernels do
//
// A score S = Q·K/√d sums 64 products of up to 3 × 3; 10 mantissa bits put up to 2^-10 on each operand near 3,
// which can move S by 24 · 2^-9 ≈ 0.05 and, between two keys of equal weight whose V rows differ by 6, moves
// O by 0.07 — fourteen times the 5e-3 margin. The adversarial inputs below are that case; the random ones show
// the typical error. The test fails if fp16 or single TF32 ever held the margin on these inputs, or if the
// arithmetic the kernels use ever came within a tenth of it.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <vector>

#include "kernels/common/random.h"
#include "kernels/cpu/reference.h"

namespace {

constexpr int kN = 4096;
constexpr int kD = 64;
constexpr double kMargin = 5e-3;
constexpr float kLog2e = 1.4426950408889634f;

enum class Arith { kFp16, kTf32Rna, kTf32Trunc, k3xTf32, kFp32 };
const char* Name(Arith a) {
  switch (a) {
    case Arith::kFp16: return "fp16";
    case Arith::kTf32Rna: return "tf32-rna";
    case Arith::kTf32Trunc: return "tf32-trunc";
    case Arith::k3xTf32: return "3xtf32";
    case Arith::kFp32: return "fp32";
  }
  return "?";
}

float FromBits(std::uint32_t bits) {
  float x;
  std::memcpy(&x, &bits, 4);
  return x;
}
std::uint32_t Bits(float x) {
  std::uint32_t bits;
  std::memcpy(&bits, &x, 4);
  return bits;
}

// IEEE half, round to nearest even, with half's exponent range (subnormals below 2^-14, overflow not reached:
// every value here is under 65504).
float RoundFp16(float x) {
  if (x == 0.0f) return x;
  const int exponent = std::max(std::ilogb(x), -14);
  const double ulp = std::ldexp(1.0, exponent - 10);
  return static_cast<float>(std::nearbyint(static_cast<double>(x) / ulp) * ulp);  // default mode: ties to even
}
// cvt.rna.tf32.f32: 10 mantissa bits, ties away from zero (adding half an ulp to the magnitude bits, then
// clearing the low 13, is exactly that for finite values).
float RoundTf32Rna(float x) { return FromBits((Bits(x) + 0x1000u) & 0xffffe000u); }
// The tensor cores reading an fp32 register as .tf32: the low 13 bits are not used.
float TruncTf32(float x) { return FromBits(Bits(x) & 0xffffe000u); }

// One operand as the arithmetic sees it (for the single-rounding models).
float Operand(Arith a, float x) {
  switch (a) {
    case Arith::kFp16: return RoundFp16(x);
    case Arith::kTf32Rna: return RoundTf32Rna(x);
    case Arith::kTf32Trunc: return TruncTf32(x);
    default: return x;
  }
}

// x·y + acc the way the arithmetic computes it; products of two rounded operands are exact in fp32 (11 × 11
// significant bits), so only the accumulation rounds.
float MulAdd(Arith a, float x, float y, float acc) {
  if (a == Arith::k3xTf32) {
    const float x_hi = TruncTf32(x), x_lo = TruncTf32(x - x_hi);
    const float y_hi = TruncTf32(y), y_lo = TruncTf32(y - y_hi);
    acc = std::fma(x_lo, y_hi, acc);
    acc = std::fma(x_hi, y_lo, acc);
    return std::fma(x_hi, y_hi, acc);
  }
  return std::fma(Operand(a, x), Operand(a, y), acc);
}

// One output row of O = softmax(QKᵀ/√d)V in the modelled arithmetic, the way the kernels order it: Q scaled by
// log2(e)/√d in fp32 (the fp16 model scales the fp32 scores instead, as fp16 kernels do), base-2 softmax in
// fp32, ℓ summed from the unrounded fp32 P̃.
std::vector<float> ModelRow(Arith a, const float* q_row, const float* k, const float* v, int n, int d) {
  const float scale = kLog2e / std::sqrt(static_cast<float>(d));
  std::vector<float> qs(static_cast<std::size_t>(d)), s(static_cast<std::size_t>(n));
  for (int e = 0; e < d; ++e) qs[e] = a == Arith::kFp16 ? q_row[e] : q_row[e] * scale;
  float m = -INFINITY;
  for (int key = 0; key < n; ++key) {
    float acc = 0.0f;
    for (int e = 0; e < d; ++e) acc = MulAdd(a, qs[e], k[static_cast<std::size_t>(key) * d + e], acc);
    s[key] = a == Arith::kFp16 ? acc * scale : acc;
    m = std::max(m, s[key]);
  }
  float l = 0.0f;
  std::vector<float> o(static_cast<std::size_t>(d), 0.0f);
  for (int key = 0; key < n; ++key) {
    const float p = std::exp2(s[key] - m);
    l += p;
    for (int e = 0; e < d; ++e) o[e] = MulAdd(a, p, v[static_cast<std::size_t>(key) * d + e], o[e]);
  }
  for (float& x : o) x /= l;
  return o;
}

struct Inputs {
  std::vector<float> q, k, v;  // N × d each
  std::vector<int> rows;       // the query rows to evaluate
};

Inputs RandomInputs() {
  Inputs in;
  for (auto* m : {&in.q, &in.k, &in.v}) m->resize(static_cast<std::size_t>(kN) * kD);
  flashviz::FillUniform(in.q, 11, -3.0f, 3.0f);
  flashviz::FillUniform(in.k, 12, -3.0f, 3.0f);
  flashviz::FillUniform(in.v, 13, -3.0f, 3.0f);
  for (int r = 0; r < kN; r += kN / 48) in.rows.push_back(r);
  return in;
}

// Two keys, A and B, of (nearly) equal score against Q = 3 everywhere, whose rounded scores differ by as much as
// the rounding allows; V_A = +3, V_B = −3, so O is the difference of their weights times 3. Every other key has
// K = −3 (score −72: weight e^-72 relative) and V = 0. `a` and `b` are the K values of keys A and B.
Inputs TwoKeyInputs(float a, float b) {
  Inputs in;
  in.q.assign(static_cast<std::size_t>(kN) * kD, 3.0f);
  in.k.assign(static_cast<std::size_t>(kN) * kD, -3.0f);
  in.v.assign(static_cast<std::size_t>(kN) * kD, 0.0f);
  for (int e = 0; e < kD; ++e) {
    in.k[e] = a;
    in.k[kD + e] = b;
    in.v[e] = 3.0f;
    in.v[kD + e] = -3.0f;
  }
  in.rows = {0};  // every row of Q is the same
  return in;
}

double WorstError(Arith a, const Inputs& in) {
  double worst = 0.0;
  const double scale = 1.0 / std::sqrt(static_cast<double>(kD));
  std::vector<double> ref(kD);
  for (int row : in.rows) {
    const float* q_row = in.q.data() + static_cast<std::size_t>(row) * kD;
    flashviz::ReferenceAttentionRows(in.q.data(), in.k.data(), in.v.data(), kN, kD, scale, false, row, row + 1,
                                     ref.data());
    const std::vector<float> o = ModelRow(a, q_row, in.k.data(), in.v.data(), kN, kD);
    for (int e = 0; e < kD; ++e) worst = std::max(worst, std::abs(static_cast<double>(o[e]) - ref[e]));
  }
  return worst;
}

TEST(Hw4RoundingModel, RoundingHelpersRoundAsTheHardwareDoes) {
  // Half and TF32 keep 10 mantissa bits: in [2, 4) the spacing is 2^-9.
  EXPECT_EQ(RoundFp16(2.0f + 0x1p-10f), 2.0f);                   // a tie: to even
  EXPECT_EQ(RoundFp16(2.0f + 3 * 0x1p-10f), 2.0f + 0x1p-8f);     // a tie: to even (up)
  EXPECT_EQ(RoundTf32Rna(2.0f + 0x1p-10f), 2.0f + 0x1p-9f);      // a tie: away from zero
  EXPECT_EQ(RoundTf32Rna(-(2.0f + 0x1p-10f)), -(2.0f + 0x1p-9f));
  EXPECT_EQ(TruncTf32(2.0f + 0x1p-9f - 0x1p-22f), 2.0f);
  EXPECT_EQ(RoundFp16(0x1p-20f), 0x1p-20f);                      // a half subnormal, exact
  EXPECT_EQ(RoundFp16(0x1p-20f + 0x1p-26f), 0x1p-20f);           // below half subnormal spacing (2^-24)
  // The 3xTF32 split is exact: hi + lo recovers all but the last few bits.
  const float x = 2.718281828f;
  const float hi = TruncTf32(x), lo = TruncTf32(x - hi);
  EXPECT_LE(std::abs(static_cast<double>(hi) + lo - x), std::ldexp(std::abs(x), -20));
}

TEST(Hw4RoundingModel, Fp16AndSingleTf32MissTheMarginFp32And3xTf32HoldIt) {
  const Inputs random = RandomInputs();
  // Nearest rounding: a just below, b just above the midpoint between 2 and 2 + 2^-9 (true scores equal to
  // 2^-20, rounded ones 0.047 apart). Truncation: a just below 2 + 2^-9 truncates to 2 = b (true scores 0.047
  // apart, truncated ones equal).
  const Inputs nearest_case = TwoKeyInputs(2.0f + 0x1p-10f - 0x1p-22f, 2.0f + 0x1p-10f + 0x1p-22f);
  const Inputs truncation_case = TwoKeyInputs(2.0f + 0x1p-9f - 0x1p-22f, 2.0f);
  std::printf("worst |O - float64| at N = %d, d = %d, values in [-3, 3]:\n", kN, kD);
  std::printf("  %-11s %12s %14s %16s\n", "arithmetic", "random", "two-key (near)", "two-key (trunc)");
  for (Arith a : {Arith::kFp16, Arith::kTf32Rna, Arith::kTf32Trunc, Arith::k3xTf32, Arith::kFp32}) {
    const double r = WorstError(a, random), n = WorstError(a, nearest_case), t = WorstError(a, truncation_case);
    std::printf("  %-11s %12.3g %14.3g %16.3g\n", Name(a), r, n, t);
    const double worst = std::max({r, n, t});
    if (a == Arith::k3xTf32 || a == Arith::kFp32) {
      EXPECT_LT(worst, kMargin / 10) << Name(a) << " should hold the margin with room to spare";
    } else {
      EXPECT_GT(worst, kMargin) << Name(a) << " held the 5e-3 margin on every input tried";
    }
  }
}

}  // namespace
