#include "kernels/cpu/problem.h"

#include <gtest/gtest.h>

#include <cmath>

namespace flashviz {
namespace {

TEST(ResolveProblem, TileSizesFromSramFollowTheAssignment) {
  // M = BYTES/4 floats, B_c = ⌈M/4d⌉, B_r = min(B_c, d).
  ProblemRequest r;
  r.n = 64;
  r.d = 8;
  r.sram_bytes = 2048;  // M = 512, B_c = ⌈512/32⌉ = 16, B_r = min(16, 8) = 8
  AttentionProblem p = ResolveProblem(r);
  EXPECT_EQ(p.bc, 16);
  EXPECT_EQ(p.br, 8);
  EXPECT_EQ(p.tr(), 8);
  EXPECT_EQ(p.tc(), 4);

  r.d = 3;
  r.sram_bytes = 1000;  // M = 250, B_c = ⌈250/12⌉ = 21, B_r = min(21, 3) = 3
  p = ResolveProblem(r);
  EXPECT_EQ(p.bc, 21);
  EXPECT_EQ(p.br, 3);

  r.d = 64;
  r.sram_bytes = 1030;  // M = 257 (BYTES/4 rounds down), B_c = ⌈257/256⌉ = 2, B_r = 2
  p = ResolveProblem(r);
  EXPECT_EQ(p.bc, 2);
  EXPECT_EQ(p.br, 2);
}

TEST(ResolveProblem, DefaultsAndExplicitTiles) {
  ProblemRequest r;
  AttentionProblem p = ResolveProblem(r);
  EXPECT_EQ(p.n, 64);
  EXPECT_EQ(p.d, 8);
  EXPECT_EQ(p.sram_bytes, kDefaultSramBytes);
  EXPECT_EQ(p.bc, 128);  // ⌈4096 / 32⌉
  EXPECT_EQ(p.br, 8);
  EXPECT_DOUBLE_EQ(p.scale, 1.0 / std::sqrt(8.0));
  EXPECT_EQ(p.order, LoopOrder::kKvOuter);

  r.br = 5;
  r.bc = 7;
  r.scale = 1.0;
  p = ResolveProblem(r);
  EXPECT_EQ(p.br, 5);
  EXPECT_EQ(p.bc, 7);
  EXPECT_EQ(p.scale, 1.0);
  // Only one given: the other still comes from M.
  r.bc.reset();
  EXPECT_EQ(ResolveProblem(r).bc, 128);
}

TEST(ResolveProblem, ImpossibleRequestsAreExplained) {
  auto error_of = [](ProblemRequest r) { return ProblemRequestError(r).value_or(""); };
  ProblemRequest r;
  r.br = 0;
  EXPECT_NE(error_of(r).find("B_r = 0"), std::string::npos);
  r = {};
  r.bc = -3;
  EXPECT_NE(error_of(r).find("B_c = -3"), std::string::npos);
  r = {};
  r.d = 64;
  r.sram_bytes = 1023;  // one row each of Q, K, V, O needs 16·64 = 1024 bytes
  EXPECT_NE(error_of(r).find("too small"), std::string::npos);
  r.sram_bytes = 1024;
  EXPECT_EQ(error_of(r), "");
  r = {};
  r.n = 0;
  EXPECT_NE(error_of(r).find("N = 0"), std::string::npos);
  r = {};
  r.d = -1;
  EXPECT_NE(error_of(r).find("d = -1"), std::string::npos);
  r = {};
  r.scale = std::nan("");
  EXPECT_FALSE(error_of(r).empty());
  r = {};
  r.br = 0;
  EXPECT_THROW(ResolveProblem(r), InputError);
}

TEST(AttentionProblem, EdgeTilesAndCausalSkipping) {
  ProblemRequest r;
  r.n = 10;
  r.br = 4;
  r.bc = 3;
  r.causal = true;
  const AttentionProblem p = ResolveProblem(r);
  EXPECT_EQ(p.tr(), 3);
  EXPECT_EQ(p.tc(), 4);
  EXPECT_EQ(p.RowsInTile(2), 2);  // rows 8, 9
  EXPECT_EQ(p.ColsInTile(3), 1);  // key 9
  // Q tile 0 holds rows 0..3: K tile 1 (keys 3..5) still has key 3 ≤ 3, K tile 2 (keys 6..8) is all masked.
  EXPECT_TRUE(p.TilePairActive(0, 1));
  EXPECT_FALSE(p.TilePairActive(0, 2));
  EXPECT_TRUE(p.TilePairActive(2, 3));
  EXPECT_TRUE(p.Masked(0, 1));
  EXPECT_FALSE(p.Masked(1, 1));
}

TEST(AttentionProblem, ActiveKvTilesCountsThePairsThatDoWork) {
  for (const bool causal : {false, true})
    for (int n = 1; n <= 40; n += 3)
      for (int br = 1; br <= 9; br += 2)
        for (int bc = 1; bc <= 9; bc += 3) {
          ProblemRequest r;
          r.n = n;
          r.d = 2;
          r.br = br;
          r.bc = bc;
          r.causal = causal;
          const AttentionProblem p = ResolveProblem(r);
          for (int i = 0; i < p.tr(); ++i) {
            int active = 0;
            for (int j = 0; j < p.tc(); ++j) active += p.TilePairActive(i, j) ? 1 : 0;
            EXPECT_EQ(p.ActiveKvTiles(i), active) << "N " << n << " B_r " << br << " B_c " << bc << " i " << i;
            // Active pairs are a prefix: the last active one is ActiveKvTiles(i) − 1.
            EXPECT_TRUE(p.TilePairActive(i, p.ActiveKvTiles(i) - 1));
          }
        }
}

TEST(LoopOrder, NamesRoundTrip) {
  EXPECT_EQ(ParseLoopOrder(LoopOrderName(LoopOrder::kKvOuter)), LoopOrder::kKvOuter);
  EXPECT_EQ(ParseLoopOrder(LoopOrderName(LoopOrder::kQOuter)), LoopOrder::kQOuter);
  EXPECT_FALSE(ParseLoopOrder("qkv").has_value());
}

}  // namespace
}  // namespace flashviz
