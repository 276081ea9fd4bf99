#include "kernels/cpu/stepper.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <random>

#include "kernels/cpu/reference.h"

namespace flashviz {
namespace {

constexpr double kNegInf = -std::numeric_limits<double>::infinity();

struct Case {
  int n, d, br, bc;
  LoopOrder order;
  bool causal;
};

AttentionProblem Make(const Case& c) {
  ProblemRequest r;
  r.n = c.n;
  r.d = c.d;
  r.br = c.br;
  r.bc = c.bc;
  r.order = c.order;
  r.causal = c.causal;
  return ResolveProblem(r);
}

std::vector<Case> RandomCases(int count, unsigned seed, int max_n = 60) {
  std::mt19937 rng(seed);
  std::vector<Case> cases;
  for (int t = 0; t < count; ++t)
    cases.push_back({1 + static_cast<int>(rng() % max_n), 1 + static_cast<int>(rng() % 9),
                     1 + static_cast<int>(rng() % 11), 1 + static_cast<int>(rng() % 11),
                     rng() % 2 ? LoopOrder::kKvOuter : LoopOrder::kQOuter, rng() % 2 == 0});
  return cases;
}

double MaxAbsDiff(const std::vector<double>& a, const std::vector<double>& b) {
  EXPECT_EQ(a.size(), b.size());
  double worst = 0;
  for (std::size_t k = 0; k < a.size() && k < b.size(); ++k) worst = std::max(worst, std::fabs(a[k] - b[k]));
  return worst;
}

TEST(Stepper, FinalOutputEqualsTheReferenceOnRandomShapes) {
  for (const Case& c : RandomCases(150, 11)) {
    const AttentionProblem p = Make(c);
    const AttentionInputs in = MakeRandomInputs(c.n, c.d, 1234);
    const std::vector<double> o = Stepper(p, &in).Replay([](const StepView&) { return true; });
    const std::vector<double> ref =
        ReferenceAttention(in.q.data(), in.k.data(), in.v.data(), c.n, c.d, p.scale, c.causal);
    EXPECT_LT(MaxAbsDiff(o, ref), 1e-12) << "n=" << c.n << " d=" << c.d << " br=" << c.br << " bc=" << c.bc
                                         << " order=" << LoopOrderName(c.order) << " causal=" << c.causal;
  }
}

TEST(Stepper, FinalStatisticsAreTheRowSoftmaxStatistics) {
  for (const Case& c : RandomCases(60, 12)) {
    const AttentionProblem p = Make(c);
    const AttentionInputs in = MakeRandomInputs(c.n, c.d, 99);
    std::vector<RowSoftmaxStats> stats(static_cast<std::size_t>(c.n));
    std::vector<double> unused(static_cast<std::size_t>(c.n) * c.d);
    ReferenceAttentionRows(in.q.data(), in.k.data(), in.v.data(), c.n, c.d, p.scale, c.causal, 0, c.n, unused.data(),
                           stats.data());
    Stepper(p, &in).Replay([&](const StepView& view) {
      // The last write-back of a Q tile carries its final m_i and ℓ_i.
      const StepInfo& info = view.info();
      const bool last_write = info.phase == Phase::kWriteBack &&
                              (c.order == LoopOrder::kQOuter || info.j == p.tc() - 1);
      if (!last_write) return true;
      for (int r = 0; r < p.RowsInTile(info.i); ++r) {
        const RowSoftmaxStats& s = stats[static_cast<std::size_t>(p.RowBegin(info.i) + r)];
        EXPECT_NEAR(view.tile().m[r], s.m, 1e-12);
        EXPECT_NEAR(view.tile().l[r], s.l, 1e-9 * s.l);
        if (c.order == LoopOrder::kQOuter) {
          EXPECT_NEAR(view.tile().lse[r], s.m + std::log(s.l), 1e-12);
        }
      }
      return true;
    });
  }
}

TEST(Stepper, StateAtAgreesWithTheFullReplayAtEveryStep) {
  // StateAt computes only tile i; the full replay computes every tile. Both must see the same numbers.
  for (const Case& c : RandomCases(25, 13, 30)) {
    const AttentionProblem p = Make(c);
    const AttentionInputs in = MakeRandomInputs(c.n, c.d, 5);
    const Stepper stepper(p, &in);
    stepper.Replay([&](const StepView& view) {
      const StepState state = stepper.StateAt(view.info().step);
      EXPECT_EQ(state.info, view.info());
      EXPECT_EQ(state.ledger, view.ledger());
      EXPECT_EQ(state.sram_tiles, view.sram_tiles());
      if (view.info().i >= 0) {
        EXPECT_EQ(state.tile.m, view.tile().m);
        EXPECT_EQ(state.tile.l, view.tile().l);
        EXPECT_EQ(state.tile.o, view.tile().o);
        EXPECT_EQ(state.tile.s, view.tile().s);
        EXPECT_EQ(state.tile.p, view.tile().p);
      }
      return true;
    });
  }
}

TEST(Stepper, LedgerIsTheSameWithAndWithoutArithmetic) {
  for (const Case& c : RandomCases(40, 14)) {
    const AttentionProblem p = Make(c);
    const AttentionInputs in = MakeRandomInputs(c.n, c.d, 5);
    const Stepper counting(p, nullptr), computing(p, &in);
    for (std::int64_t k = 0; k < counting.step_count(); k += 7)
      EXPECT_EQ(counting.LedgerAt(k), computing.StateAt(k).ledger);
  }
}

TEST(Stepper, KvOrderChangesTheRunningStatisticsOnlyAtUpdateStats) {
  const AttentionProblem p = Make({20, 4, 3, 5, LoopOrder::kKvOuter, false});
  const AttentionInputs in = MakeRandomInputs(20, 4, 8);
  const Stepper stepper(p, &in);
  std::vector<double> m_before, l_before;
  stepper.Replay([&](const StepView& view) {
    const Phase phase = view.info().phase;
    if (phase == Phase::kLoadQ) {
      m_before = view.tile().m;
      l_before = view.tile().l;
    } else if (view.info().i >= 0 && phase != Phase::kUpdateStats) {
      EXPECT_EQ(view.tile().m, m_before) << PhaseName(phase);
      EXPECT_EQ(view.tile().l, l_before) << PhaseName(phase);
    } else if (phase == Phase::kUpdateStats) {
      m_before = view.tile().m;
      l_before = view.tile().l;
    }
    return true;
  });
}

TEST(Stepper, TheFirstTileIterationOfEachOrderIsAlgorithmic) {
  // One Q tile of 2 rows, one K/V tile of 3 keys, d = 2, scale 1: check every intermediate by hand formula.
  ProblemRequest r;
  r.n = 3;
  r.d = 2;
  r.br = 2;
  r.bc = 3;
  r.scale = 1.0;
  AttentionInputs in;
  in.n = 3;
  in.d = 2;
  in.q = {1, 0, 0, 1, 1, 1};
  in.k = {1, 0, 0, 2, -1, 0};
  in.v = {1, 2, 3, 4, 5, 6};
  for (LoopOrder order : {LoopOrder::kKvOuter, LoopOrder::kQOuter}) {
    r.order = order;
    const AttentionProblem p = ResolveProblem(r);
    const Stepper stepper(p, &in);
    const std::int64_t first = *stepper.schedule().FirstStepOfPair(0, 0);
    const StepState scores = stepper.StateAt(first + 1);
    ASSERT_EQ(scores.info.phase, Phase::kScores);
    EXPECT_EQ(scores.tile.s, (std::vector<double>{1, 0, -1, 0, 2, 0}));  // Q_0 K_0ᵀ
    const StepState exp_state = stepper.StateAt(first + 3);
    ASSERT_EQ(exp_state.info.phase, Phase::kExp);
    EXPECT_DOUBLE_EQ(exp_state.tile.p[0], 1.0);               // e^(1 − 1)
    EXPECT_DOUBLE_EQ(exp_state.tile.p[2], std::exp(-2.0));    // e^(−1 − 1)
    EXPECT_DOUBLE_EQ(exp_state.tile.p[4], 1.0);               // e^(2 − 2)
    const double l0 = 1 + std::exp(-1.0) + std::exp(-2.0);
    const StepState sum = stepper.StateAt(first + 4);
    EXPECT_DOUBLE_EQ(sum.tile.l_tile[0], l0);
    EXPECT_EQ(stepper.StateAt(stepper.step_count() - 1).info.phase, Phase::kDone);
  }
}

TEST(Stepper, CausalRowsWithEveryKeyMaskedStayZeroAndFinite) {
  // B_c = 1: key tile j holds key j only, so rows < j of an active pair see nothing yet.
  for (LoopOrder order : {LoopOrder::kKvOuter, LoopOrder::kQOuter}) {
    const AttentionProblem p = Make({6, 2, 3, 1, order, true});
    const AttentionInputs in = MakeRandomInputs(6, 2, 1);
    const Stepper stepper(p, &in);
    stepper.Replay([&](const StepView& view) {
      for (double x : view.tile().o) EXPECT_TRUE(std::isfinite(x));
      for (double x : view.tile().l) EXPECT_TRUE(std::isfinite(x));
      for (double x : view.tile().m) EXPECT_TRUE(std::isfinite(x) || x == kNegInf);
      return true;
    });
  }
}

TEST(Stepper, HistoryHoldsOneEntryPerFinishedTileIteration) {
  const AttentionProblem p = Make({40, 4, 8, 8, LoopOrder::kQOuter, false});
  const AttentionInputs in = MakeRandomInputs(40, 4, 2);
  const Stepper stepper(p, &in);
  const std::int64_t step = *stepper.schedule().FirstStepOfPair(2, 3) + 2;  // rowmax of (2, 3)
  const StepState state = stepper.StateAt(step);
  EXPECT_EQ(state.history_j, (std::vector<int>{0, 1, 2}));
  ASSERT_EQ(state.m_history.size(), 3u);
  // The running max never decreases.
  for (std::size_t t = 1; t < state.m_history.size(); ++t)
    for (std::size_t row = 0; row < state.m_history[t].size(); ++row)
      EXPECT_GE(state.m_history[t][row], state.m_history[t - 1][row]);
}

TEST(Stepper, HbmOutputAtTheEndIsTheResult) {
  for (LoopOrder order : {LoopOrder::kKvOuter, LoopOrder::kQOuter}) {
    const AttentionProblem p = Make({33, 5, 4, 7, order, false});
    const AttentionInputs in = MakeRandomInputs(33, 5, 3);
    const Stepper stepper(p, &in);
    const auto ref = ReferenceAttention(in.q.data(), in.k.data(), in.v.data(), 33, 5, p.scale, false);
    EXPECT_LT(MaxAbsDiff(stepper.HbmOutputAt(stepper.step_count() - 1), ref), 1e-12);
    // Before the first write-back nothing of O is in HBM but zeros.
    for (double x : stepper.HbmOutputAt(1)) EXPECT_EQ(x, 0.0);
  }
}

TEST(Stepper, RejectsInputsOfTheWrongShape) {
  const AttentionProblem p = Make({8, 4, 2, 2, LoopOrder::kKvOuter, false});
  const AttentionInputs in = MakeRandomInputs(8, 3, 0);
  EXPECT_THROW(Stepper(p, &in), std::invalid_argument);
}

}  // namespace
}  // namespace flashviz

namespace flashviz {
namespace {

// A forward replay split into shards (its Q tiles dealt out by i % count) gives every row of O exactly once: the
// rows of its own tiles, bit for bit the full replay's, and zeros elsewhere.
TEST(Stepper, ShardedReplaysTogetherAreTheFullReplay) {
  for (const LoopOrder order : {LoopOrder::kQOuter, LoopOrder::kKvOuter}) {
    const AttentionProblem p = Make({37, 5, 4, 6, order, true});
    const AttentionInputs in = MakeRandomInputs(p.n, p.d, 3);
    const Stepper stepper(p, &in);
    const std::vector<double> full = stepper.Replay([](const StepView&) { return true; });
    for (const int count : {1, 2, 3, 7}) {
      std::vector<double> combined(full.size(), 0.0);
      for (int index = 0; index < count; ++index) {
        const std::vector<double> part = stepper.Replay([](const StepView&) { return true; }, {index, count});
        ASSERT_EQ(part.size(), full.size());
        for (int row = 0; row < p.n; ++row)
          for (int e = 0; e < p.d; ++e) {
            const std::size_t at = static_cast<std::size_t>(row) * p.d + e;
            if ((row / p.br) % count == index) combined[at] = part[at];
            else EXPECT_EQ(part[at], 0.0) << "row " << row << " of another shard";
          }
      }
      EXPECT_EQ(combined, full) << LoopOrderName(order) << ", " << count << " shards";
    }
  }
}

}  // namespace
}  // namespace flashviz
