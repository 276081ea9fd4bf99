#include "kernels/vortex/fp16.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>

#include "kernels/common/random.h"

namespace flashviz::vortex {
namespace {

TEST(RoundToFp16, KnownValues) {
  EXPECT_EQ(RoundToFp16(1.0f), 1.0f);
  EXPECT_EQ(RoundToFp16(-2.5f), -2.5f);
  EXPECT_EQ(RoundToFp16(1.0f / 3.0f), 0.333251953125f);  // 0x3555
  EXPECT_EQ(RoundToFp16(0.1f), 0.0999755859375f);        // 0x2E66
  EXPECT_EQ(RoundToFp16(2049.0f), 2048.0f);              // a tie at spacing 2: to the even significand
  EXPECT_EQ(RoundToFp16(2051.0f), 2052.0f);
  EXPECT_EQ(RoundToFp16(2050.0f), 2050.0f);
  EXPECT_EQ(RoundToFp16(65504.0f), 65504.0f);            // the largest finite fp16
  EXPECT_EQ(RoundToFp16(65519.0f), 65504.0f);
  EXPECT_TRUE(std::isinf(RoundToFp16(65520.0f)));       // rounds past the largest: infinity
  EXPECT_LT(RoundToFp16(-1e6f), 0.0f);
  EXPECT_TRUE(std::isinf(RoundToFp16(-1e6f)));
  EXPECT_EQ(RoundToFp16(kFp16MinSubnormal), kFp16MinSubnormal);  // 2^-24
  EXPECT_EQ(RoundToFp16(std::ldexp(1.0f, -25)), 0.0f);           // half the smallest subnormal: a tie, to 0
  EXPECT_EQ(RoundToFp16(std::ldexp(3.0f, -25)), std::ldexp(1.0f, -23));  // 1.5 spacings: to 2
  EXPECT_EQ(RoundToFp16(std::ldexp(1.0f, -14) * 1.0001f), std::ldexp(1.0f, -14));
  EXPECT_EQ(RoundToFp16(1e-9f), 0.0f);
  EXPECT_TRUE(std::isnan(RoundToFp16(NAN)));
  EXPECT_EQ(RoundToFp16(0.0f), 0.0f);
}

// Every result is an fp16 value: at most 11 significant bits and in range.
TEST(RoundToFp16, ResultsHaveElevenSignificantBits) {
  SplitMix64 random(7);
  for (int i = 0; i < 100000; ++i) {
    const float x = random.UniformFloat(-1.0f, 1.0f) * std::ldexp(1.0f, static_cast<int>(random.Next() % 40) - 26);
    const float h = RoundToFp16(x);
    if (h == 0.0f || std::isinf(h)) continue;
    int exponent = 0;
    const double f = std::frexp(static_cast<double>(h), &exponent);
    const int spacing_exponent = std::max(exponent - 11, -24);
    const double steps = std::ldexp(f, exponent - spacing_exponent);
    EXPECT_EQ(steps, std::nearbyint(steps)) << x;
    EXPECT_LE(std::fabs(h - x), std::ldexp(1.0, spacing_exponent - 1) * (1 + 1e-12)) << x;  // within half a spacing
  }
}

#ifdef __FLT16_MAX__
// The compiler's own binary16 conversion, where it has one, is an independent implementation to compare with.
TEST(RoundToFp16, AgreesWithTheCompilersFloat16) {
  SplitMix64 random(11);
  for (int i = 0; i < 200000; ++i) {
    const int exponent = static_cast<int>(random.Next() % 48) - 30;  // 2^-30 … 2^17
    const float x = std::ldexp(random.UniformFloat(-1.0f, 1.0f), exponent);
    const float expected = static_cast<float>(static_cast<_Float16>(x));
    const float got = RoundToFp16(x);
    if (std::isinf(expected)) {
      EXPECT_TRUE(std::isinf(got)) << x;
    } else {
      EXPECT_EQ(got, expected) << x;
    }
  }
  // Exact ties between neighbours.
  for (float x : {2049.0f, 2051.0f, 1.00048828125f, 1.00146484375f, 65520.0f, 65519.99f})
    EXPECT_EQ(RoundToFp16(x), static_cast<float>(static_cast<_Float16>(x))) << x;
}
#endif

}  // namespace
}  // namespace flashviz::vortex
