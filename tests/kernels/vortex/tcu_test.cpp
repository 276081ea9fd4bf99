#include "kernels/vortex/tcu.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <set>
#include <tuple>

#include "kernels/vortex/fp16.h"
#include "kernels/vortex/inputs.h"

namespace flashviz::vortex {
namespace {

// ---- fragments ---------------------------------------------------------------------------------------------------

TEST(TcuFragments, EveryElementHasExactlyOneSlot) {
  for (Fragment f : {Fragment::kA, Fragment::kB, Fragment::kC}) {
    const FragmentShape shape = ShapeOf(f);
    const int per_register = shape.element_bytes == 2 ? 2 : 1;
    // Lanes × registers × halves cover the tile exactly.
    EXPECT_EQ(shape.rows * shape.cols, kTcuThreads * kTcuFragmentRegisters * per_register) << FragmentName(f);
    std::set<std::tuple<int, int, int>> slots;
    for (int row = 0; row < shape.rows; ++row)
      for (int col = 0; col < shape.cols; ++col) {
        const FragmentSlot s = SlotOf(f, row, col);
        ASSERT_GE(s.lane, 0);
        ASSERT_LT(s.lane, kTcuThreads);
        ASSERT_GE(s.reg, 0);
        ASSERT_LT(s.reg, kTcuFragmentRegisters);
        ASSERT_LT(s.half, per_register);
        EXPECT_TRUE(slots.insert({s.lane, s.reg, s.half}).second) << FragmentName(f) << " " << row << "," << col;
        const auto elements = ElementsOf(f, s.lane, s.reg);
        ASSERT_EQ(static_cast<int>(elements.size()), per_register);
        EXPECT_EQ(elements[static_cast<std::size_t>(s.half)].row, row);
        EXPECT_EQ(elements[static_cast<std::size_t>(s.half)].col, col);
      }
  }
  EXPECT_EQ(ShapeOf(Fragment::kA).first_register, 0);
  EXPECT_EQ(ShapeOf(Fragment::kB).first_register, 10);
  EXPECT_EQ(ShapeOf(Fragment::kC).first_register, 24);
}

TEST(TcuFragments, PaddingLivesInWholeRegisters) {
  std::vector<int> a, b, c;
  for (int reg = 0; reg < 8; ++reg) {
    if (RegisterIsPadding(Fragment::kA, reg)) a.push_back(reg);
    if (RegisterIsPadding(Fragment::kB, reg)) b.push_back(reg);
    if (RegisterIsPadding(Fragment::kC, reg)) c.push_back(reg);
  }
  EXPECT_EQ(a, (std::vector<int>{2, 3, 6, 7}));  // A's columns 8–15
  EXPECT_EQ(b, (std::vector<int>{4, 5, 6, 7}));  // B's rows 8–15
  EXPECT_TRUE(c.empty());
  // Half of A's and half of B's register slots hold padding.
  int padded = 0;
  for (int row = 0; row < 8; ++row)
    for (int col = 0; col < 16; ++col) padded += IsPadding(Fragment::kA, row, col);
  EXPECT_EQ(padded, 64);
}

TEST(TcuFragments, MicroOpsCoverTheProductOnce) {
  const auto ops = MmaMicroOps();
  ASSERT_EQ(static_cast<int>(ops.size()), kMicroOpsPerMma);
  std::set<std::tuple<int, int, int>> covered;  // (row, col, k)
  int only_padding = 0;
  for (const MicroOp& op : ops) {
    EXPECT_EQ(op.rows * op.cols * op.k_count, 4 * 2 * 4);  // 4×2 outputs, 2 words = 4 fp16 of K
    only_padding += op.only_padding;
    for (int r = op.row_begin; r < op.row_begin + op.rows; ++r)
      for (int c = op.col_begin; c < op.col_begin + op.cols; ++c)
        for (int k = op.k_begin; k < op.k_begin + op.k_count; ++k) EXPECT_TRUE(covered.insert({r, c, k}).second);
  }
  EXPECT_EQ(covered.size(), 8u * 8u * 16u);
  EXPECT_EQ(only_padding, 16);
}

TEST(TcuFragments, UsefulFractionOfTheTiles) {
  EXPECT_EQ(MacsPerMma(kVortexTcuTile), 1024);
  EXPECT_EQ(MacsPerMma(kNvidiaWmmaTile), 4096);
  EXPECT_DOUBLE_EQ(UsefulFraction(kVortexTcuTile, 8), 0.5);
  EXPECT_DOUBLE_EQ(UsefulFraction(kNvidiaWmmaTile, 8), 0.5);
  EXPECT_DOUBLE_EQ(UsefulFraction(kNvidiaWmmaTile, 64), 1.0);
  EXPECT_DOUBLE_EQ(UsefulFraction(kNvidiaWmmaTile, 24), 24.0 / 32.0);
}

// ---- numerics ----------------------------------------------------------------------------------------------------

// An fp16 rounding written independently of the model's (bit manipulation of the float instead of frexp/nearbyint).
float TestHalf(float x) {
  std::uint32_t bits;
  std::memcpy(&bits, &x, sizeof bits);
  const std::uint32_t sign = bits & 0x80000000u;
  const int biased = static_cast<int>((bits >> 23) & 0xff);
  std::uint32_t mantissa = bits & 0x7fffffu;
  const float signed_one = sign ? -1.0f : 1.0f;
  if (biased == 255) return x;
  if (biased == 0) return 0.0f * signed_one;  // float subnormals are far below fp16's range
  int e = biased - 127;
  if (e > 15) return signed_one * std::numeric_limits<float>::infinity();
  if (e >= -14) {
    std::uint32_t kept = mantissa >> 13, rest = mantissa & 0x1fffu;
    if (rest > 0x1000u || (rest == 0x1000u && (kept & 1u))) ++kept;
    if (kept == 0x400u) {
      kept = 0;
      ++e;
    }
    if (e > 15) return signed_one * std::numeric_limits<float>::infinity();
    return signed_one * std::ldexp(1.0f + static_cast<float>(kept) / 1024.0f, e);
  }
  // Subnormal fp16: a multiple of 2^-24. The float is (mantissa | 2^23)·2^(e − 23).
  const std::uint32_t full = mantissa | 0x800000u;
  const int shift = (e - 23) + 24 > 0 ? 0 : -((e - 23) + 24);  // bits to drop to reach units of 2^-24
  if (shift > 24) return 0.0f * signed_one;
  std::uint32_t kept = full >> shift;
  const std::uint32_t rest = full & ((1u << shift) - 1u), half = 1u << (shift - 1);
  if (rest > half || (rest == half && (kept & 1u))) ++kept;
  return signed_one * std::ldexp(static_cast<float>(kept), -24);
}

TEST(TcuNumerics, TestHalfAgreesWithTheModelsRounding) {
  for (float x : {1.0f / 3.0f, 0.1f, 2049.0f, 2051.0f, 65519.0f, 65520.0f, 6.0e-8f, 3.0e-8f, 1e-5f, -7.77f})
    EXPECT_EQ(TestHalf(x), RoundToFp16(x)) << x;
}

// The TCU program for one head, written out again in the test: fp16 operands, fp32 sums in ascending K order.
std::vector<float> TestTcu(const AttentionInputs& in) {
  std::vector<float> out(in.q.size());
  const int tiles = in.n / 8;
  for (int i = 0; i < tiles; ++i) {
    float o[8][8] = {}, m[8], l[8] = {};
    std::fill(m, m + 8, -std::numeric_limits<float>::infinity());
    for (int j = 0; j < tiles; ++j) {
      float s[8][8], p[8][8], beta[8];
      for (int r = 0; r < 8; ++r)
        for (int c = 0; c < 8; ++c) {
          float acc = 0.0f;
          for (int e = 0; e < 8; ++e)
            acc += TestHalf(in.q[(8 * i + r) * 8 + e]) * TestHalf(in.k[(8 * j + c) * 8 + e]);
          for (int e = 8; e < 16; ++e) acc += 0.0f * 0.0f;  // the padding multiplies zeros
          s[r][c] = acc;
        }
      for (int r = 0; r < 8; ++r) {
        const float rowmax = *std::max_element(s[r], s[r] + 8);
        float rowsum = 0.0f;
        for (int c = 0; c < 8; ++c) {
          const float e = std::exp(s[r][c] - rowmax);
          p[r][c] = TestHalf(e);
          rowsum += e;
        }
        const float m_new = std::max(m[r], rowmax);
        const float alpha = std::exp(m[r] - m_new);
        beta[r] = std::exp(rowmax - m_new);
        l[r] = alpha * l[r] + beta[r] * rowsum;
        m[r] = m_new;
        for (int c = 0; c < 8; ++c) o[r][c] *= alpha;
      }
      for (int r = 0; r < 8; ++r)
        for (int c = 0; c < 8; ++c) {
          float acc = 0.0f;
          for (int k = 0; k < 8; ++k) acc += p[r][k] * TestHalf(in.v[(8 * j + k) * 8 + c]);
          for (int k = 8; k < 16; ++k) acc += 0.0f * 0.0f;
          o[r][c] += beta[r] * acc;
        }
    }
    for (int r = 0; r < 8; ++r) {
      const float inv_l = 1.0f / l[r];
      for (int c = 0; c < 8; ++c) out[(8 * i + r) * 8 + c] = o[r][c] * inv_l;
    }
  }
  return out;
}

TEST(TcuNumerics, MatchesAnIndependentFp16Reference) {
  for (int n : {8, 64, 128}) {
    const AttentionInputs in = ReportInputs(n, 8);
    const std::vector<float> model = RunTcuProgram(in);
    const std::vector<float> reference = TestTcu(in);
    ASSERT_EQ(model.size(), reference.size());
    for (std::size_t x = 0; x < model.size(); ++x) ASSERT_EQ(model[x], reference[x]) << "N = " << n << " element " << x;
  }
}

TEST(TcuNumerics, Fp16RoundingErrorIsVisibleAndFp32IsNot) {
  const AttentionInputs in = ReportInputs(64, 8);
  const NumericsResult r = RunNumerics(in, 16);
  ASSERT_EQ(r.o_tcu.size(), 512u);
  // About 1e-2 at the report's sizes (inputs in [−5, 5], no scaling: scores up to ~100).
  EXPECT_GT(r.max_error_tcu, 2e-3);
  EXPECT_LT(r.max_error_tcu, 5e-2);
  EXPECT_LT(r.max_error_simt, 1e-4);
  EXPECT_GT(r.max_error_tcu, 100 * r.max_error_simt);
  EXPECT_EQ(r.simt_outside_check, 0);
  EXPECT_GT(r.tcu_outside_check, 0);  // the program's 1e-3 check is too tight for fp16
  // Without the TCU shape only the SIMT part runs.
  const NumericsResult d16 = RunNumerics(ReportInputs(64, 16), 16);
  EXPECT_TRUE(d16.o_tcu.empty());
  EXPECT_LT(d16.max_error_simt, 1e-4);
}

TEST(TcuNumerics, SnapshotShowsTheFragmentsOfOneTileIteration) {
  const AttentionInputs in = ReportInputs(64, 8);
  const TcuTileSnapshot first = TcuSnapshot(in, 2, 0);
  const TcuTileSnapshot second = TcuSnapshot(in, 2, 1);
  EXPECT_EQ(second.i, 2);
  EXPECT_EQ(second.j, 1);
  for (int r = 0; r < 8; ++r) {
    for (int k = 0; k < 16; ++k) {
      const bool pad = k >= 8;
      EXPECT_EQ(second.q_a[r * 16 + k], pad ? 0.0f : TestHalf(in.q[(16 + r) * 8 + k]));
      EXPECT_EQ(second.p_a[r * 16 + k] == 0.0f || !pad, true);
      EXPECT_EQ(second.kt_b[k * 8 + r], pad ? 0.0f : TestHalf(in.k[(8 + r) * 8 + k]));  // K_1^T[k][n], n = r
      EXPECT_EQ(second.v_b[k * 8 + r], pad ? 0.0f : TestHalf(in.v[(8 + k) * 8 + r]));
    }
    // The statistics chain from one tile iteration to the next.
    EXPECT_EQ(second.m_before[r], first.m_after[r]);
    EXPECT_EQ(second.l_before[r], first.l_after[r]);
    EXPECT_EQ(first.alpha[r], 0.0f);  // e^(−inf − m_new) on the first tile
    EXPECT_EQ(second.m_after[r], std::max(first.m_after[r], second.rowmax[r]));
    EXPECT_EQ(second.rowmax[r], *std::max_element(&second.s[r * 8], &second.s[r * 8] + 8));
  }
  EXPECT_THROW(TcuSnapshot(in, 8, 0), std::invalid_argument);
  EXPECT_THROW(TcuSnapshot(ReportInputs(64, 16), 0, 0), std::invalid_argument);
}

}  // namespace
}  // namespace flashviz::vortex
