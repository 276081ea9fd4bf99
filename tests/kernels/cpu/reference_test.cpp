#include "kernels/cpu/reference.h"

#include <gtest/gtest.h>

#include <cmath>

#include "kernels/cpu/stepper.h"

namespace flashviz {
namespace {

TEST(ReferenceAttention, OneKeyReturnsItsValue) {
  const float q[2] = {0.3f, -1.0f}, k[2] = {2.0f, 1.0f}, v[2] = {5.0f, -7.0f};
  const auto o = ReferenceAttention(q, k, v, 1, 2, 0.5, false);
  EXPECT_EQ(o, (std::vector<double>{5.0, -7.0}));
}

TEST(ReferenceAttention, EqualScoresAverageTheValues) {
  const float q[4] = {0, 0, 0, 0}, k[4] = {1, 2, 3, 4}, v[4] = {1, 10, 3, 30};
  const auto o = ReferenceAttention(q, k, v, 2, 2, 1.0, false);
  EXPECT_DOUBLE_EQ(o[0], 2.0);
  EXPECT_DOUBLE_EQ(o[1], 20.0);
  // Causal: the first query sees only the first key.
  const auto c = ReferenceAttention(q, k, v, 2, 2, 1.0, true);
  EXPECT_DOUBLE_EQ(c[0], 1.0);
  EXPECT_DOUBLE_EQ(c[1], 10.0);
  EXPECT_DOUBLE_EQ(c[2], 2.0);
}

TEST(ReferenceAttention, MatchesTheFormulaWrittenOut) {
  const int n = 5, d = 3;
  const AttentionInputs in = MakeRandomInputs(n, d, 42);
  const double scale = 0.7;
  const auto o = ReferenceAttention(in.q.data(), in.k.data(), in.v.data(), n, d, scale, false);
  for (int r = 0; r < n; ++r) {
    double denom = 0, num[3] = {0, 0, 0};
    for (int c = 0; c < n; ++c) {
      double s = 0;
      for (int e = 0; e < d; ++e) s += double(in.q[r * d + e]) * in.k[c * d + e];
      const double w = std::exp(scale * s);
      denom += w;
      for (int e = 0; e < d; ++e) num[e] += w * in.v[c * d + e];
    }
    for (int e = 0; e < d; ++e) EXPECT_NEAR(o[r * d + e], num[e] / denom, 1e-12);
  }
}

TEST(ReferenceAttention, BatchedEqualsPerHead) {
  const int b = 3, n = 17, d = 4;
  std::vector<float> qkv;
  for (int h = 0; h < b; ++h) {
    const AttentionInputs in = MakeRandomInputs(n, d, static_cast<std::uint64_t>(h));
    qkv.insert(qkv.end(), in.q.begin(), in.q.end());
    qkv.insert(qkv.end(), in.k.begin(), in.k.end());
    qkv.insert(qkv.end(), in.v.begin(), in.v.end());
  }
  const auto all = ReferenceAttentionBatched(qkv.data(), b, n, d, 0.5, false, 2);
  for (int h = 0; h < b; ++h) {
    const float* q = qkv.data() + h * 3 * n * d;
    const auto one = ReferenceAttention(q, q + n * d, q + 2 * n * d, n, d, 0.5, false);
    for (int k = 0; k < n * d; ++k) EXPECT_EQ(all[h * n * d + k], one[k]);
  }
}

}  // namespace
}  // namespace flashviz
