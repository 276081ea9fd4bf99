#include "kernels/cpu/schedule.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <random>
#include <string>
#include <tuple>
#include <vector>

namespace flashviz {
namespace {

// The schedule written out as the loops of the papers, independently of Schedule's arithmetic.
std::vector<StepInfo> EnumerateSteps(const AttentionProblem& p) {
  std::vector<StepInfo> steps;
  auto add = [&](Phase phase, int i, int j) {
    steps.push_back({static_cast<std::int64_t>(steps.size()), phase, i, j});
  };
  if (p.order == LoopOrder::kKvOuter) {
    add(Phase::kInit, -1, -1);
    for (int j = 0; j < p.tc(); ++j) {
      bool loaded = false;
      for (int i = 0; i < p.tr(); ++i) {
        if (!p.TilePairActive(i, j)) continue;
        if (!loaded) add(Phase::kLoadKv, -1, j);
        loaded = true;
        for (Phase ph : {Phase::kLoadQ, Phase::kScores, Phase::kRowMax, Phase::kExp, Phase::kRowSum,
                         Phase::kUpdateStats, Phase::kUpdateO, Phase::kWriteBack})
          add(ph, i, j);
      }
    }
  } else {
    for (int i = 0; i < p.tr(); ++i) {
      add(Phase::kLoadQ, i, -1);
      for (int j = 0; j < p.tc(); ++j) {
        if (!p.TilePairActive(i, j)) continue;
        for (Phase ph : {Phase::kLoadKv, Phase::kScores, Phase::kRowMax, Phase::kExp, Phase::kRowSum, Phase::kUpdateO})
          add(ph, i, j);
      }
      add(Phase::kFinalize, i, -1);
      add(Phase::kWriteBack, i, -1);
    }
  }
  add(Phase::kDone, -1, -1);
  return steps;
}

AttentionProblem Make(int n, int br, int bc, LoopOrder order, bool causal) {
  ProblemRequest r;
  r.n = n;
  r.d = 4;
  r.br = br;
  r.bc = bc;
  r.order = order;
  r.causal = causal;
  return ResolveProblem(r);
}

TEST(Schedule, StepCountsMatchTheClosedForms) {
  const AttentionProblem kv = Make(64, 8, 16, LoopOrder::kKvOuter, false);
  EXPECT_EQ(Schedule(kv).step_count(), 1 + kv.tc() * (1 + 8 * kv.tr()) + 1);
  const AttentionProblem q = Make(64, 8, 16, LoopOrder::kQOuter, false);
  EXPECT_EQ(Schedule(q).step_count(), q.tr() * (3 + 6 * q.tc()) + 1);
}

TEST(Schedule, InfoMatchesTheLoopsOfThePapersOnRandomShapes) {
  std::mt19937 rng(7);
  for (int trial = 0; trial < 300; ++trial) {
    const int n = 1 + static_cast<int>(rng() % 70);
    const int br = 1 + static_cast<int>(rng() % 12);
    const int bc = 1 + static_cast<int>(rng() % 12);
    const LoopOrder order = rng() % 2 ? LoopOrder::kKvOuter : LoopOrder::kQOuter;
    const bool causal = rng() % 2;
    const AttentionProblem p = Make(n, br, bc, order, causal);
    const Schedule schedule(p);
    const std::vector<StepInfo> expected = EnumerateSteps(p);
    ASSERT_EQ(schedule.step_count(), static_cast<std::int64_t>(expected.size()))
        << "n=" << n << " br=" << br << " bc=" << bc << " causal=" << causal;
    std::int64_t iterations = 0;
    for (const StepInfo& step : expected) {
      ASSERT_EQ(schedule.Info(step.step), step) << "step " << step.step << " n=" << n << " br=" << br << " bc=" << bc;
      const auto first_phase = TileIterationPhases(order).front();
      if (step.phase == first_phase && step.i >= 0 && step.j >= 0) {
        EXPECT_EQ(schedule.FirstStepOfPair(step.i, step.j), step.step);
        EXPECT_EQ(schedule.TileIterationStart(iterations), step.step);
        ++iterations;
      }
    }
    EXPECT_EQ(schedule.tile_iteration_count(), iterations);
  }
}

TEST(Schedule, SkippedPairsHaveNoStep) {
  const AttentionProblem p = Make(16, 4, 4, LoopOrder::kQOuter, true);
  const Schedule schedule(p);
  EXPECT_FALSE(schedule.FirstStepOfPair(0, 1).has_value());
  EXPECT_TRUE(schedule.FirstStepOfPair(1, 1).has_value());
  EXPECT_EQ(schedule.tile_iteration_count(), 4 + 3 + 2 + 1);
}

// Toggling the order or the mask keeps the cursor where it stands: every step of one schedule maps to the same
// phase of the same pair in the other where that exists, else to the same pair, else into the same outer iteration.
TEST(Schedule, StepLikeKeepsThePhaseAndThePair) {
  for (const auto& [n, br, bc] : {std::tuple{12, 3, 2}, std::tuple{10, 4, 4}, std::tuple{9, 2, 3}}) {
    for (const LoopOrder from_order : {LoopOrder::kKvOuter, LoopOrder::kQOuter})
      for (const bool from_causal : {false, true})
        for (const LoopOrder to_order : {LoopOrder::kKvOuter, LoopOrder::kQOuter})
          for (const bool to_causal : {false, true}) {
            const Schedule from(Make(n, br, bc, from_order, from_causal)), to(Make(n, br, bc, to_order, to_causal));
            const std::vector<StepInfo> to_steps = EnumerateSteps(to.problem());
            for (std::int64_t step = 0; step < from.step_count(); ++step) {
              const StepInfo like = from.Info(step);
              const std::int64_t mapped = to.StepLike(like);
              ASSERT_GE(mapped, 0);
              ASSERT_LT(mapped, to.step_count());
              const StepInfo got = to.Info(mapped);
              const auto same = [&](const StepInfo& s) { return s.phase == like.phase && s.i == like.i && s.j == like.j; };
              const auto same_pair = [&](const StepInfo& s) { return s.i == like.i && s.j == like.j; };
              const std::string where = std::string(PhaseName(like.phase)) + " (" + std::to_string(like.i) + ", " +
                                        std::to_string(like.j) + ")";
              if (std::any_of(to_steps.begin(), to_steps.end(), same)) {
                EXPECT_TRUE(same(got)) << where;
              } else if (like.phase == Phase::kInit) {  // the q order has no init: its first step
                EXPECT_EQ(mapped, 0);
              } else if (std::any_of(to_steps.begin(), to_steps.end(), same_pair)) {
                EXPECT_TRUE(same_pair(got)) << where;
              }
              if (like.phase == Phase::kDone) { EXPECT_EQ(mapped, to.step_count() - 1); }
              if (from_order == to_order && from_causal == to_causal) { EXPECT_EQ(mapped, step) << where; }
            }
          }
  }
}

TEST(Phase, NamesRoundTrip) {
  for (int p = 0; p < kPhaseCount; ++p) EXPECT_EQ(ParsePhase(PhaseName(static_cast<Phase>(p))), static_cast<Phase>(p));
  EXPECT_EQ(PhaseName(Phase::kUpdateStats), "update_stats");
}

}  // namespace
}  // namespace flashviz
