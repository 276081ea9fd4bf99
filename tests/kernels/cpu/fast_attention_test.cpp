#include "kernels/cpu/fast_attention.h"

#include <gtest/gtest.h>

#include <cmath>
#include <random>

#include "kernels/cpu/fast_attention_tile.h"
#include "kernels/cpu/reference.h"
#include "kernels/cpu/stepper.h"

namespace flashviz {
namespace {

double MaxAbsError(const std::vector<float>& out, const std::vector<double>& ref) {
  double worst = 0;
  for (std::size_t k = 0; k < out.size(); ++k) {
    if (!std::isfinite(out[k])) return INFINITY;
    worst = std::max(worst, std::fabs(out[k] - ref[k]));
  }
  return worst;
}

TEST(FastAttention, MatchesTheReferenceOnRandomAndEdgeShapes) {
  std::mt19937 rng(21);
  std::vector<std::pair<int, int>> shapes = {{1, 1}, {64, 64}, {65, 32}, {128, 64}, {200, 7}, {3, 130}, {257, 24}};
  for (int t = 0; t < 10; ++t) shapes.push_back({1 + static_cast<int>(rng() % 300), 1 + static_cast<int>(rng() % 96)});
  for (auto [n, d] : shapes) {
    for (bool causal : {false, true}) {
      const AttentionInputs in = MakeRandomInputs(n, d, static_cast<std::uint64_t>(n * 131 + d));
      const float scale = 1.0f / std::sqrt(static_cast<float>(d));
      std::vector<float> out(static_cast<std::size_t>(n) * d, NAN);  // poisoned: every element must be written
      FastAttention(in.q.data(), in.k.data(), in.v.data(), n, d, scale, causal, out.data(), 2);
      const auto ref = ReferenceAttention(in.q.data(), in.k.data(), in.v.data(), n, d, scale, causal);
      EXPECT_LT(MaxAbsError(out, ref), 2e-5) << "n=" << n << " d=" << d << " causal=" << causal;
    }
  }
}

TEST(FastAttention, BothInstructionSetBuildsAgree) {
  const int n = 150, d = 40;
  const AttentionInputs in = MakeRandomInputs(n, d, 77);
  std::vector<float> generic(static_cast<std::size_t>(n) * d), avx(generic.size());
  fast_attention::Workspace ws;
  for (int row = 0; row < n; row += fast_attention::kRows) {
    fast_attention::TileArgs args{in.q.data(), in.k.data(), in.v.data(), generic.data(), n, d, row, 0.2f, false};
    fast_attention::AttentionTileGeneric(args, ws);
    if (FastAttentionIsa() == "avx2+fma") {
      args.out = avx.data();
      fast_attention::AttentionTileAvx2(args, ws);
    }
  }
  const auto ref = ReferenceAttention(in.q.data(), in.k.data(), in.v.data(), n, d, 0.2, false);
  EXPECT_LT(MaxAbsError(generic, ref), 2e-5);
  if (FastAttentionIsa() == "avx2+fma") {
    EXPECT_LT(MaxAbsError(avx, ref), 2e-5);
  }
}

TEST(FastAttention, LargeScoresDoNotOverflow) {
  // Scores up to ±3·3·64 = 576 before scaling: exp must be taken relative to the running max.
  const int n = 100, d = 64;
  AttentionInputs in = MakeRandomInputs(n, d, 9);
  for (float& x : in.q) x = x > 0 ? 3.0f : -3.0f;
  std::vector<float> out(static_cast<std::size_t>(n) * d);
  FastAttention(in.q.data(), in.k.data(), in.v.data(), n, d, 1.0f, false, out.data());
  const auto ref = ReferenceAttention(in.q.data(), in.k.data(), in.v.data(), n, d, 1.0, false);
  EXPECT_LT(MaxAbsError(out, ref), 1e-4);
}

TEST(FastAttention, BatchedReportsProgressAndMatches) {
  const int b = 5, n = 130, d = 32;
  std::vector<float> qkv(static_cast<std::size_t>(b) * 3 * n * d);
  std::mt19937 rng(1);
  std::uniform_real_distribution<float> u(-3, 3);
  for (float& x : qkv) x = u(rng);
  std::vector<float> out(static_cast<std::size_t>(b) * n * d);
  double last = 0;
  FastAttentionBatched(qkv.data(), b, n, d, 0.125f, false, out.data(), 2, [&](double f) { last = std::max(last, f); });
  EXPECT_DOUBLE_EQ(last, 1.0);
  const auto ref = ReferenceAttentionBatched(qkv.data(), b, n, d, 0.125, false);
  EXPECT_LT(MaxAbsError(out, ref), 2e-5);
}

}  // namespace
}  // namespace flashviz
