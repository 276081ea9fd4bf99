// The GUI model: its cached states are the stepper's, tile statuses follow the schedule, O in HBM stays equal
// to Stepper::HbmOutputAt while it is patched step by step (forward and back), and the sweep counts.
#include "viz/model.h"

#include <gtest/gtest.h>

#include <random>

namespace flashviz {
namespace {

struct Shape {
  int n, d, br, bc;
  LoopOrder order;
  bool causal;
  Pass pass = Pass::kForward;
};

AttentionProblem Make(const Shape& s) {
  ProblemRequest r;
  r.n = s.n;
  r.d = s.d;
  r.br = s.br;
  r.bc = s.bc;
  r.order = s.order;
  r.causal = s.causal;
  r.pass = s.pass;
  return ResolveProblem(r);
}

const Shape kSetups[] = {
    {8, 4, 2, 2, LoopOrder::kKvOuter, false}, {8, 4, 2, 2, LoopOrder::kQOuter, false},
    {13, 3, 4, 3, LoopOrder::kKvOuter, true}, {13, 3, 4, 3, LoopOrder::kQOuter, true},
    {20, 5, 3, 7, LoopOrder::kKvOuter, false}, {20, 5, 6, 4, LoopOrder::kQOuter, true},
    // The backward pass: its output view is dQ in HBM, written at every grad_q.
    {8, 4, 2, 2, LoopOrder::kKvOuter, false, Pass::kBackward}, {13, 3, 4, 3, LoopOrder::kQOuter, true, Pass::kBackward},
};

void Load(Model& model, const Shape& s, std::uint64_t seed = 7) {
  const AttentionProblem p = Make(s);
  model.SetProblem(p, std::make_shared<AttentionInputs>(MakeRandomInputs(p, seed)), ProblemOrigin{seed, "", 0});
}

TEST(Model, CachedStatesAreTheSteppersInAnyOrderOfMoves) {
  for (const Shape& s : kSetups) {
    Model model;
    Load(model, s);
    std::mt19937 rng(3);
    for (int move = 0; move < 120; ++move) {
      std::int64_t target = model.step();
      switch (rng() % 3) {
        case 0: target += 1; break;
        case 1: target -= 1; break;
        default: target = static_cast<std::int64_t>(rng() % static_cast<unsigned>(model.step_count())); break;
      }
      model.SetStep(target);
      const std::int64_t step = model.step();
      ASSERT_GE(step, 0);
      ASSERT_LT(step, model.step_count());
      const StepState expected = model.stepper().StateAt(step);
      ASSERT_EQ(model.state().info, expected.info);
      ASSERT_EQ(model.state().ledger, expected.ledger);
      ASSERT_EQ(model.state().tile.o, expected.tile.o);
      ASSERT_EQ(model.state().tile.m, expected.tile.m);
      if (step > 0) {
        ASSERT_NE(model.previous(), nullptr);
        ASSERT_EQ(model.previous()->info, model.stepper().Info(step - 1));
        ASSERT_EQ(model.previous()->tile.o, model.stepper().StateAt(step - 1).tile.o);
      } else {
        ASSERT_EQ(model.previous(), nullptr);
      }
    }
  }
}

TEST(Model, HbmOutputMatchesTheStepperWhilePatchedForwardAndBack) {
  for (const Shape& s : kSetups) {
    Model model;
    Load(model, s);
    auto check = [&] {
      model.WaitIdle();
      model.Update();
      ASSERT_TRUE(model.hbm_output_current()) << "step " << model.step();
      ASSERT_EQ(model.hbm_output()->values, model.stepper().HbmOutputAt(model.step())) << "step " << model.step();
    };
    for (std::int64_t k = 0; k < model.step_count(); ++k) {
      model.SetStep(k);
      check();
    }
    for (std::int64_t k = model.step_count() - 1; k >= 0; --k) {
      model.SetStep(k);
      check();
    }
    model.SetStep(model.step_count() / 2);  // a jump, then single steps again
    check();
    model.SetStep(model.step() + 1);
    check();
  }
}

TEST(Model, TileStatusFollowsTheSchedule) {
  for (const Shape& s : kSetups) {
    Model model;
    Load(model, s);
    const AttentionProblem& p = model.problem();
    const int per = model.phases_per_iteration();
    for (std::int64_t k = 0; k < model.step_count(); ++k) {
      model.SetStep(k);
      const StepInfo info = model.state().info;
      for (int i = 0; i < p.tr(); ++i)
        for (int j = 0; j < p.tc(); ++j) {
          const auto first = model.schedule().FirstStepOfPair(i, j);
          const TileStatus status = model.PairStatus(i, j);
          if (!first) {
            ASSERT_EQ(status, TileStatus::kMasked);
            continue;
          }
          const bool inside = k >= *first && k < *first + per;
          ASSERT_EQ(inside, info.i == i && info.j == j);
          ASSERT_EQ(status,
                    inside ? TileStatus::kCurrent : (*first + per <= k ? TileStatus::kDone : TileStatus::kPending))
              << "pair " << i << "," << j << " at step " << k;
        }
      // Q_i is done exactly when no later step of the schedule involves row tile i.
      for (int i = 0; i < p.tr(); ++i) {
        bool later = false;
        for (std::int64_t t = k + 1; t < model.step_count() && !later; ++t) later = model.stepper().Info(t).i == i;
        const TileStatus q = model.QTileStatus(i);
        if (info.i == i) { ASSERT_EQ(q, TileStatus::kCurrent); }
        else { ASSERT_EQ(q == TileStatus::kDone, !later && k > 0) << "Q tile " << i << " at step " << k; }
      }
      for (int j = 0; j < p.tc(); ++j) {
        bool later = false;
        for (std::int64_t t = k + 1; t < model.step_count() && !later; ++t) later = model.stepper().Info(t).j == j;
        const TileStatus kv = model.KvTileStatus(j);
        if (info.j == j) { ASSERT_EQ(kv, TileStatus::kCurrent); }
        else { ASSERT_EQ(kv == TileStatus::kDone, !later && k > 0) << "K/V tile " << j << " at step " << k; }
      }
    }
  }
}

TEST(Model, TileIterationNavigation) {
  for (const Shape& s : kSetups) {
    Model model;
    Load(model, s);
    const Schedule& sched = model.schedule();
    const int per = model.phases_per_iteration();
    for (std::int64_t k = 0; k < model.step_count(); ++k) {
      model.SetStep(k);
      std::int64_t containing = -1, next = model.step_count() - 1, previous = 0;
      for (std::int64_t t = 0; t < sched.tile_iteration_count(); ++t) {
        const std::int64_t start = sched.TileIterationStart(t);
        if (k >= start && k < start + per) containing = t;
        if (start > k && next == model.step_count() - 1) next = start;
        if (start < k) previous = start;
      }
      ASSERT_EQ(model.tile_iteration(), containing) << k;
      ASSERT_EQ(model.NextTileIterationStep(), next) << k;
      ASSERT_EQ(model.PreviousTileIterationStep(), previous) << k;
    }
  }
}

TEST(Model, ReferenceIsTheFullExactResult) {
  Model model;
  Load(model, {20, 5, 6, 4, LoopOrder::kQOuter, true});
  model.WaitIdle();
  model.Update();
  const Reference* ref = model.reference();
  ASSERT_NE(ref, nullptr);
  const auto& in = model.inputs();
  const std::vector<double> exact =
      ReferenceAttention(in.q.data(), in.k.data(), in.v.data(), 20, 5, model.problem().scale, true, 1);
  EXPECT_EQ(ref->o, exact);
  // The final state equals it within rounding.
  const std::vector<double> final_o = model.stepper().HbmOutputAt(model.step_count() - 1);
  for (std::size_t k = 0; k < exact.size(); ++k) EXPECT_NEAR(final_o[k], exact[k], 1e-12);
}

TEST(Model, SweepCountsEveryNWithCountOnlySteppers) {
  AttentionProblem p = Make({100, 8, 16, 16, LoopOrder::kKvOuter, false});
  std::atomic<bool> cancel{false};
  const Sweep sweep = ComputeSweep(p, 1 << 20, cancel);
  ASSERT_FALSE(sweep.points.empty());
  bool has_current = false;
  for (const SweepPoint& point : sweep.points) {
    AttentionProblem at = p;
    at.n = point.n;
    EXPECT_EQ(point.flash_hbm_bytes, Stepper(at, nullptr).FinalLedger().HbmBytes());
    EXPECT_EQ(point.standard_hbm_bytes, StandardAttentionLedger(point.n, 8).HbmBytes());
    has_current |= point.n == 100;
  }
  EXPECT_TRUE(has_current);
  EXPECT_FALSE(sweep.note.empty());  // the largest N do not fit in 2^20 steps with 16-row tiles
  cancel = true;
  EXPECT_TRUE(ComputeSweep(p, 1 << 20, cancel).points.empty());
}

TEST(Model, GuiLimitsAreExplained) {
  ProblemRequest r;
  r.n = 1 << 20;
  r.d = 64;
  EXPECT_TRUE(GuiProblemError(ResolveProblem(r)).has_value());
  r.n = 32768;
  r.d = 64;
  r.br = r.bc = 1;
  const auto steps = GuiProblemError(ResolveProblem(r));
  ASSERT_TRUE(steps.has_value());
  EXPECT_NE(steps->find("steps"), std::string::npos);
  r.n = 1024;
  r.br.reset();
  r.bc.reset();
  r.sram_bytes = 49152;
  EXPECT_FALSE(GuiProblemError(ResolveProblem(r)).has_value());
}

TEST(Model, SettingAProblemThatDoesNotMatchItsInputsKeepsTheOldOne) {
  Model model;
  Load(model, kSetups[0]);
  const AttentionProblem other = Make({16, 4, 4, 4, LoopOrder::kKvOuter, false});
  EXPECT_THROW(model.SetProblem(other, std::make_shared<AttentionInputs>(MakeRandomInputs(8, 4, 1)), {}),
               std::invalid_argument);
  EXPECT_EQ(model.problem().n, 8);
  model.SetStep(5);
  EXPECT_EQ(model.step(), 5);
}

}  // namespace
}  // namespace flashviz

namespace flashviz {
namespace {

// The Vortex report is built once per request and its view once per step; both equal what kernels/vortex builds
// directly, and a request that cannot be mapped gives its reason instead.
TEST(Model, VortexReportIsBuiltOncePerRequestAndItsViewOncePerStep) {
  Model model;
  Load(model, {64, 8, 16, 16, LoopOrder::kQOuter, false});
  vortex::Request request{vortex::kReportMachine, vortex::Mode::kSimt, 64, 8};
  std::string error;
  const vortex::Report* report = model.VortexReport(request, &error);
  ASSERT_NE(report, nullptr) << error;
  EXPECT_EQ(model.VortexReport(request, nullptr), report) << "rebuilt for the same request";
  const vortex::Report direct = vortex::BuildReport(request);
  EXPECT_EQ(report->mapping.br, direct.mapping.br);
  EXPECT_EQ(report->counts[1].total.Total(), direct.counts[1].total.Total());

  for (const std::int64_t step : {std::int64_t{0}, std::int64_t{9}, std::int64_t{40}}) {
    model.SetStep(step);
    const vortex::PhaseView& view = model.VortexView(request);
    const vortex::PhaseView expected = vortex::ViewAtMainStep(direct, model.problem(), model.state().info);
    EXPECT_EQ(view.phase, expected.phase) << "step " << step;
    EXPECT_EQ(view.block, expected.block) << "step " << step;
    EXPECT_EQ(view.kv_tile, expected.kv_tile) << "step " << step;
    EXPECT_EQ(&model.VortexView(request), &view) << "the view of one step is built once";
  }

  request.machine.cores = 2;
  const vortex::Report* other = model.VortexReport(request, nullptr);
  ASSERT_NE(other, nullptr);
  EXPECT_EQ(other->request.machine.cores, 2);
  request.n = 48;  // not a power of two
  EXPECT_EQ(model.VortexReport(request, &error), nullptr);
  EXPECT_NE(error.find("power of two"), std::string::npos) << error;
}

}  // namespace
}  // namespace flashviz
