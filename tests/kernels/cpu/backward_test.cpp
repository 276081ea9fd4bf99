// The backward pass of the model: its gradients against the float64 autograd-style reference (and that reference
// against finite differences), its schedule, and its ledger against closed forms.
#include "kernels/cpu/backward.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <random>

#include "kernels/cpu/backward_reference.h"
#include "kernels/cpu/reference.h"

namespace flashviz {
namespace {

struct Case {
  int n, d, br, bc;
  bool causal;
};

AttentionProblem MakeBackward(const Case& c) {
  ProblemRequest r;
  r.n = c.n;
  r.d = c.d;
  r.br = c.br;
  r.bc = c.bc;
  r.causal = c.causal;
  r.pass = Pass::kBackward;
  return ResolveProblem(r);
}

AttentionInputs MakeInputs(const Case& c, std::uint64_t seed) {
  AttentionInputs in = MakeRandomInputs(c.n, c.d, seed);
  in.dout = MakeRandomUpstreamGradient(c.n, c.d, seed);
  return in;
}

std::vector<Case> RandomCases(int count, unsigned seed, int max_n) {
  std::mt19937 rng(seed);
  std::vector<Case> cases;
  for (int t = 0; t < count; ++t)
    cases.push_back({1 + static_cast<int>(rng() % max_n), 1 + static_cast<int>(rng() % 9),
                     1 + static_cast<int>(rng() % 13), 1 + static_cast<int>(rng() % 13), rng() % 2 == 0});
  return cases;
}

// max |a − b| / max |b|: relative to the tensor's scale, so rows of tiny gradients are not judged on their own.
double RelativeError(const double* a, const double* b, std::size_t count) {
  double err = 0, scale = 0;
  for (std::size_t k = 0; k < count; ++k) {
    err = std::max(err, std::fabs(a[k] - b[k]));
    scale = std::max(scale, std::fabs(b[k]));
  }
  return scale > 0 ? err / scale : err;
}

std::string Describe(const Case& c) {
  return "n=" + std::to_string(c.n) + " d=" + std::to_string(c.d) + " br=" + std::to_string(c.br) +
         " bc=" + std::to_string(c.bc) + (c.causal ? " causal" : "");
}

TEST(Backward, GradientsEqualTheReferenceOnRandomShapes) {
  std::vector<Case> cases = RandomCases(120, 5, 70);
  // Both sizes of tile against N, edge tiles of one row, and a problem of a few hundred rows.
  cases.push_back({1, 4, 1, 1, false});
  cases.push_back({1, 4, 8, 8, true});
  cases.push_back({33, 8, 32, 32, true});
  cases.push_back({300, 16, 64, 48, true});
  cases.push_back({257, 32, 32, 64, false});
  for (const Case& c : cases) {
    const AttentionProblem p = MakeBackward(c);
    const AttentionInputs in = MakeInputs(c, 77);
    const std::vector<double> grads = Stepper(p, &in).Replay([](const StepView&) { return true; });
    const ReferenceGradients ref =
        ReferenceBackward(in.q.data(), in.k.data(), in.v.data(), in.dout.data(), c.n, c.d, p.scale, c.causal);
    const std::size_t nd = static_cast<std::size_t>(c.n) * c.d;
    ASSERT_EQ(grads.size(), 3 * nd) << Describe(c);
    EXPECT_LT(RelativeError(grads.data(), ref.dq.data(), nd), 1e-9) << "dQ " << Describe(c);
    EXPECT_LT(RelativeError(grads.data() + nd, ref.dk.data(), nd), 1e-9) << "dK " << Describe(c);
    EXPECT_LT(RelativeError(grads.data() + 2 * nd, ref.dv.data(), nd), 1e-9) << "dV " << Describe(c);
  }
}

// The reference itself, against central differences of the forward reference: d(Σ dO ∘ O)/dx for a few entries
// of Q, K and V.
TEST(Backward, ReferenceMatchesFiniteDifferences) {
  for (const bool causal : {false, true}) {
    const int n = 9, d = 5;
    AttentionInputs in = MakeInputs({n, d, 1, 1, causal}, 3);
    const double scale = DefaultScale(d);
    const ReferenceGradients ref =
        ReferenceBackward(in.q.data(), in.k.data(), in.v.data(), in.dout.data(), n, d, scale, causal);
    auto loss = [&] {
      const std::vector<double> o = ReferenceAttention(in.q.data(), in.k.data(), in.v.data(), n, d, scale, causal, 1);
      double sum = 0;
      for (std::size_t k = 0; k < o.size(); ++k) sum += in.dout[k] * o[k];
      return sum;
    };
    struct Probe {
      std::vector<float>* tensor;
      const std::vector<double>* grad;
    };
    for (const Probe probe : {Probe{&in.q, &ref.dq}, Probe{&in.k, &ref.dk}, Probe{&in.v, &ref.dv}}) {
      for (const std::size_t at : {std::size_t{0}, std::size_t{17}, std::size_t{n * d - 1}}) {
        const float x = (*probe.tensor)[at];
        const float h = 1.0f / 256;  // exact in float, so x ± h is what the difference divides by
        (*probe.tensor)[at] = x + h;
        const double up = loss();
        (*probe.tensor)[at] = x - h;
        const double down = loss();
        (*probe.tensor)[at] = x;
        EXPECT_NEAR((up - down) / (2 * h), (*probe.grad)[at], 2e-4) << "entry " << at << (causal ? " causal" : "");
      }
    }
  }
}

TEST(Backward, ScheduleHasTheDeltaPrologueAndOneOuterIterationPerKvTile) {
  for (const Case& c : RandomCases(200, 9, 90)) {
    const AttentionProblem p = MakeBackward(c);
    const Schedule schedule(p);
    std::int64_t expected = 1 + p.tr() + 1;
    for (int j = 0; j < p.tc(); ++j) {
      int active = 0;
      for (int i = 0; i < p.tr(); ++i) active += p.TilePairActive(i, j);
      if (active > 0) expected += 2 + 8 * active;
    }
    ASSERT_EQ(schedule.step_count(), expected) << Describe(c);
    EXPECT_EQ(schedule.Info(0).phase, Phase::kInit);
    for (int i = 0; i < p.tr(); ++i) EXPECT_EQ(schedule.Info(1 + i), (StepInfo{1 + i, Phase::kDelta, i, -1}));
    // The walk emits exactly the schedule's steps.
    std::int64_t walked = 0;
    Stepper(p, nullptr).Replay([&](const StepView& view) {
      EXPECT_EQ(view.info(), schedule.Info(walked)) << Describe(c);
      ++walked;
      return true;
    });
    EXPECT_EQ(walked, expected);
  }
}

// Closed forms, non-causal: init writes dQ (Nd); delta reads O, dO (Nd each) and writes D (N); each K/V tile reads
// K_j, V_j and writes dK_j, dV_j once (Nd each in all); each of the T_c passes over the Q tiles reads Q, dO (Nd
// each), L, D (N each) and reads and writes dQ (Nd each).
TEST(Backward, LedgerEqualsTheClosedForms) {
  for (const Case& base : RandomCases(150, 21, 200)) {
    Case c = base;
    c.causal = false;
    const AttentionProblem p = MakeBackward(c);
    const Ledger ledger = Stepper(p, nullptr).FinalLedger();
    const std::int64_t nd = 4LL * c.n * c.d, n = 4LL * c.n, tc = p.tc();
    EXPECT_EQ(ledger[HbmTensor::kQ], (Traffic{tc * nd, 0})) << Describe(c);
    EXPECT_EQ(ledger[HbmTensor::kK], (Traffic{nd, 0}));
    EXPECT_EQ(ledger[HbmTensor::kV], (Traffic{nd, 0}));
    EXPECT_EQ(ledger[HbmTensor::kO], (Traffic{nd, 0}));
    EXPECT_EQ(ledger[HbmTensor::kDO], (Traffic{nd + tc * nd, 0}));
    EXPECT_EQ(ledger[HbmTensor::kLse], (Traffic{tc * n, 0}));
    EXPECT_EQ(ledger[HbmTensor::kD], (Traffic{tc * n, n}));
    EXPECT_EQ(ledger[HbmTensor::kDQ], (Traffic{tc * nd, nd + tc * nd}));
    EXPECT_EQ(ledger[HbmTensor::kDK], (Traffic{0, nd}));
    EXPECT_EQ(ledger[HbmTensor::kDV], (Traffic{0, nd}));
    for (const HbmTensor t :
         {HbmTensor::kS, HbmTensor::kP, HbmTensor::kDP, HbmTensor::kDS, HbmTensor::kL, HbmTensor::kM})
      EXPECT_EQ(ledger[t], Traffic{}) << HbmTensorName(t);
  }
}

// Causal: every active pair moves its Q tile's rows once; the K/V side is unchanged.
TEST(Backward, CausalLedgerCountsOnlyActivePairs) {
  for (const Case& base : RandomCases(150, 23, 200)) {
    Case c = base;
    c.causal = true;
    const AttentionProblem p = MakeBackward(c);
    const Ledger ledger = Stepper(p, nullptr).FinalLedger();
    std::int64_t pair_rows = 0;
    for (int j = 0; j < p.tc(); ++j)
      for (int i = 0; i < p.tr(); ++i)
        if (p.TilePairActive(i, j)) pair_rows += p.RowsInTile(i);
    const std::int64_t d = c.d;
    EXPECT_EQ(ledger[HbmTensor::kQ].read_bytes, 4 * pair_rows * d) << Describe(c);
    EXPECT_EQ(ledger[HbmTensor::kDQ].read_bytes, 4 * pair_rows * d);
    EXPECT_EQ(ledger[HbmTensor::kDQ].write_bytes, 4 * (c.n * d + pair_rows * d));
    EXPECT_EQ(ledger[HbmTensor::kLse].read_bytes, 4 * pair_rows);
    EXPECT_EQ(ledger[HbmTensor::kK].read_bytes, 4LL * c.n * d);
  }
}

TEST(Backward, StandardBackwardReadsTheStoredPAndWritesDpAndDs) {
  for (const auto& [n, d] : {std::pair{1, 1}, std::pair{64, 8}, std::pair{1000, 64}}) {
    const Ledger s = StandardAttentionBackwardLedger(n, d);
    const std::int64_t nn = 4LL * n * n, nd = 4LL * n * d;
    EXPECT_EQ(s.HbmReadBytes(), 5 * nn + 5 * nd);
    EXPECT_EQ(s.HbmWriteBytes(), 2 * nn + 3 * nd);
    EXPECT_EQ(s[HbmTensor::kP].read_bytes, 2 * nn);
    EXPECT_EQ(s[HbmTensor::kDS].read_bytes, 2 * nn);
  }
}

// The state after any step, rebuilt for its tiles only, equals what the full replay holds at that step.
TEST(Backward, StateAtEqualsTheFullReplayAtEveryStep) {
  for (const Case& c : {Case{13, 3, 4, 5, true}, Case{11, 2, 3, 3, false}, Case{20, 4, 8, 6, true}}) {
    const AttentionProblem p = MakeBackward(c);
    const AttentionInputs in = MakeInputs(c, 5);
    const Stepper stepper(p, &in);
    std::vector<BackwardNumerics> full;
    std::vector<Ledger> ledgers;
    std::vector<SramTiles> tiles;
    stepper.Replay([&](const StepView& view) {
      full.push_back(view.grad());
      ledgers.push_back(view.ledger());
      tiles.push_back(view.sram_tiles());
      return true;
    });
    ASSERT_EQ(static_cast<std::int64_t>(full.size()), stepper.step_count());
    for (std::int64_t step = 0; step < stepper.step_count(); ++step) {
      const StepState state = stepper.StateAt(step);
      const BackwardNumerics& a = state.grad;
      const BackwardNumerics& b = full[static_cast<std::size_t>(step)];
      const std::string where =
          Describe(c) + " step " + std::to_string(step) + " " + std::string(PhaseName(state.info.phase));
      EXPECT_EQ(state.ledger, ledgers[static_cast<std::size_t>(step)]) << where;
      EXPECT_EQ(state.sram_tiles, tiles[static_cast<std::size_t>(step)]) << where;
      EXPECT_EQ(a.s, b.s) << where;
      EXPECT_EQ(a.p, b.p) << where;
      EXPECT_EQ(a.ds, b.ds) << where;
      EXPECT_EQ(a.delta, b.delta) << where;
      EXPECT_EQ(a.dk, b.dk) << where;
      EXPECT_EQ(a.dv, b.dv) << where;
      EXPECT_EQ(a.dq, b.dq) << where;
      EXPECT_EQ(a.dq_prev, b.dq_prev) << where;
    }
  }
}

TEST(Backward, DqInHbmGrowsToTheFinalGradient) {
  const Case c{24, 4, 8, 8, true};
  const AttentionProblem p = MakeBackward(c);
  const AttentionInputs in = MakeInputs(c, 8);
  const Stepper stepper(p, &in);
  const std::vector<double> grads = stepper.Replay([](const StepView&) { return true; });
  const std::vector<double> at_start = stepper.HbmOutputAt(0);
  const std::vector<double> at_end = stepper.HbmOutputAt(stepper.step_count() - 1);
  EXPECT_TRUE(std::all_of(at_start.begin(), at_start.end(), [](double x) { return x == 0.0; }));
  ASSERT_EQ(at_end.size(), static_cast<std::size_t>(c.n) * c.d);
  EXPECT_TRUE(std::equal(at_end.begin(), at_end.end(), grads.begin()));
}

TEST(Backward, SavedForwardMatchesTheReferenceOutputAndLogSumExp) {
  const Case c{37, 6, 8, 5, true};
  const AttentionProblem p = MakeBackward(c);
  const AttentionInputs in = MakeInputs(c, 2);
  const Stepper stepper(p, &in);
  const ReferenceGradients ref =
      ReferenceBackward(in.q.data(), in.k.data(), in.v.data(), in.dout.data(), c.n, c.d, p.scale, c.causal);
  ASSERT_NE(stepper.saved(), nullptr);
  EXPECT_LT(RelativeError(stepper.saved()->o.data(), ref.o.data(), ref.o.size()), 1e-12);
  EXPECT_LT(RelativeError(stepper.saved()->lse.data(), ref.lse.data(), ref.lse.size()), 1e-12);
}

// Tiles from M: every tile the backward pass holds at once fits, and one row more each would not.
TEST(Backward, TilesFromMFitInM) {
  for (const int d : {1, 4, 8, 64, 128})
    for (const std::int64_t sram : {std::int64_t{16384}, std::int64_t{49152}, std::int64_t{229376}}) {
      ProblemRequest r;
      r.n = 1000;
      r.d = d;
      r.sram_bytes = sram;
      r.pass = Pass::kBackward;
      const AttentionProblem p = ResolveProblem(r);
      ASSERT_EQ(p.br, p.bc);
      const auto floats = [d](std::int64_t b) { return 7 * b * d + 2 * b * b + 2 * b; };
      EXPECT_LE(4 * floats(p.bc), sram) << "d=" << d;
      EXPECT_GT(4 * floats(p.bc + 1), sram) << "d=" << d;
      EXPECT_LE(Stepper(p, nullptr).FinalLedger().sram_peak_bytes, sram) << "d=" << d;
    }
}

// An M that cannot hold one row of every tile is refused for tiles from M (the forward pass's minimum is lower).
TEST(Backward, AnMTooSmallForOneRowOfEveryTileIsRefused) {
  ProblemRequest r;
  r.n = 100;
  r.d = 64;
  r.sram_bytes = 1024;
  EXPECT_FALSE(ProblemRequestError(r).has_value());  // the forward pass: 4·4·d bytes suffice
  r.pass = Pass::kBackward;
  const auto error = ProblemRequestError(r);
  ASSERT_TRUE(error.has_value());
  EXPECT_NE(error->find("4·(7d + 4)"), std::string::npos) << *error;
  r.br = r.bc = 1;  // tiles given: the budget is only what the occupancy is shown against
  EXPECT_FALSE(ProblemRequestError(r).has_value());
}

// A walk focused on one tile pair shows nothing of other pairs: their steps see empty arrays (no earlier pair's
// numbers left on view), and a K/V tile outside the focus keeps no dK_j, dV_j.
TEST(Backward, AFocusedWalkShowsNothingOfOtherPairs) {
  const Case c{20, 3, 4, 5, true};
  const AttentionProblem p = MakeBackward(c);
  const AttentionInputs in = MakeInputs(c, 4);
  const Stepper stepper(p, &in);
  const int focus_i = 3, focus_j = 2;
  int others = 0;
  WalkBackward(stepper.schedule(), &in, stepper.saved(), BackwardFocus{false, focus_i, focus_j},
               [&](const StepView& view) {
                 const StepInfo& info = view.info();
                 if (info.i < 0 || info.j < 0 || info.i == focus_i || info.j == focus_j) return true;
                 ++others;
                 EXPECT_TRUE(view.grad().s.empty() && view.grad().p.empty() && view.grad().ds.empty())
                     << "step " << info.step;
                 EXPECT_TRUE(view.grad().dk.empty() && view.grad().dv.empty()) << "step " << info.step;
                 return true;
               });
  EXPECT_GT(others, 0);
}

TEST(Backward, NeedsTheUpstreamGradient) {
  const AttentionProblem p = MakeBackward({8, 2, 4, 4, false});
  const AttentionInputs in = MakeRandomInputs(8, 2, 1);
  EXPECT_THROW(Stepper(p, &in), std::invalid_argument);
}

}  // namespace
}  // namespace flashviz
