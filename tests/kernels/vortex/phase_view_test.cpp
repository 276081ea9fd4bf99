#include "kernels/vortex/phase_view.h"

#include <gtest/gtest.h>

#include <algorithm>

#include "kernels/cpu/problem.h"
#include "kernels/cpu/schedule.h"

namespace flashviz::vortex {
namespace {

Mapping ReportMapping(Mode mode) { return MapToVortex(Request{kReportMachine, mode, 64, 8}); }

std::vector<StepInfo> AllSteps(const Mapping& m) {
  const Schedule schedule(ScheduleProblem(m));
  std::vector<StepInfo> steps;
  for (std::int64_t s = 0; s < schedule.step_count(); ++s) steps.push_back(schedule.Info(s));
  return steps;
}

TEST(PhaseView, ScheduleFollowsTheVortexTiles) {
  const Mapping m = ReportMapping(Mode::kSimt);
  const AttentionProblem p = ScheduleProblem(m);
  EXPECT_EQ(p.order, LoopOrder::kQOuter);
  EXPECT_EQ(p.br, 16);
  EXPECT_EQ(p.bc, 16);
  EXPECT_EQ(p.scale, 1.0);
  // Q-outer: per Q tile load_q + 4 × 6 tile phases + finalize + write_back, then done.
  EXPECT_EQ(Schedule(p).step_count(), 4 * (3 + 4 * 6) + 1);
}

TEST(PhaseView, SimtEveryStepLightsTheBlockOfItsTile) {
  const Mapping m = ReportMapping(Mode::kSimt);
  for (const StepInfo& step : AllSteps(m)) {
    const PhaseView v = ViewAt(m, step);
    if (step.phase == Phase::kDone) {
      EXPECT_FALSE(v.runs);
      continue;
    }
    ASSERT_TRUE(v.runs) << PhaseName(step.phase);
    EXPECT_EQ(v.block, step.i);
    EXPECT_EQ(v.core, step.i % 4);
    EXPECT_EQ(v.kv_tile, step.j);
    ASSERT_EQ(v.active.size(), 16u);  // one thread per row of the Q tile
    for (std::size_t x = 0; x < v.active.size(); ++x) {
      EXPECT_EQ(v.active[x].row, 16 * step.i + static_cast<int>(x));
      EXPECT_EQ(m.OwnerOfRow(v.active[x].row).warp, v.active[x].warp);
      EXPECT_EQ(m.OwnerOfRow(v.active[x].row).thread, v.active[x].thread);
    }
    EXPECT_EQ(v.concurrent_blocks.size(), 3u);  // the other three cores run the same phase on their tiles
    ASSERT_EQ(v.registers.size(), 32u);
    ASSERT_EQ(v.local_memory.size(), 3u);
    EXPECT_FALSE(v.what.empty());
    const bool in_tile_loop = step.j >= 0;
    EXPECT_EQ(v.local_memory[1].live, in_tile_loop) << PhaseName(step.phase);  // K_j
    EXPECT_TRUE(v.local_memory[0].live || step.phase == Phase::kFinalize || step.phase == Phase::kWriteBack);
  }
}

TEST(PhaseView, SimtRegistersFillAndEmptyWithThePhases) {
  const Mapping m = ReportMapping(Mode::kSimt);
  const Schedule schedule(ScheduleProblem(m));
  const auto view = [&](Phase phase, int i, int j) {
    for (std::int64_t s = 0; s < schedule.step_count(); ++s) {
      const StepInfo info = schedule.Info(s);
      if (info.phase == phase && info.i == i && info.j == j) return ViewAt(m, info);
    }
    ADD_FAILURE() << "no step " << PhaseName(phase);
    return PhaseView{};
  };
  const PhaseView load_q = view(Phase::kLoadQ, 1, -1);
  EXPECT_TRUE(load_q.registers[0].written);                            // O[0] = 0
  EXPECT_FALSE(load_q.registers[8].live);                              // the S row is empty
  EXPECT_TRUE(load_q.local_memory[0].written);                         // Q_i
  const PhaseView scores = view(Phase::kScores, 1, 2);
  EXPECT_EQ(scores.registers[8].label, "S[0]");
  EXPECT_TRUE(scores.registers[23].written);
  EXPECT_TRUE(scores.local_memory[0].read);
  EXPECT_TRUE(scores.local_memory[1].read);
  EXPECT_EQ(scores.block_ops[OpClass::kFma], 16 * 16 * 8);  // 16 threads × B_c·d
  const PhaseView exp = view(Phase::kExp, 1, 2);
  EXPECT_EQ(exp.registers[8].label, "P~[0]");
  const PhaseView update = view(Phase::kUpdateO, 1, 2);
  EXPECT_TRUE(update.registers[7].written);  // O[7]
  EXPECT_TRUE(update.local_memory[2].read);  // V_j^T
  const PhaseView write = view(Phase::kWriteBack, 1, -1);
  EXPECT_FALSE(write.registers[8].live);
  EXPECT_FALSE(write.local_memory[1].live);
  EXPECT_FALSE(write.registers[30].live);  // f30, f31 are free in this configuration
}

TEST(PhaseView, SimtSpilledRegistersAreMarked) {
  MachineConfig wide;
  wide.warps_per_core = 4;  // B_c = 32 with d = 4: 42 registers
  const Mapping m = MapToVortex(Request{wide, Mode::kSimt, 64, 4});
  const PhaseView v = ViewAt(m, StepInfo{0, Phase::kScores, 0, 0});
  ASSERT_EQ(v.registers.size(), 42u);
  EXPECT_FALSE(v.registers[31].spilled);
  EXPECT_TRUE(v.registers[32].spilled);
}

TEST(PhaseView, TcuFragmentsAndPadding) {
  const Mapping m = ReportMapping(Mode::kTcu);
  int mma_steps = 0;
  for (const StepInfo& step : AllSteps(m)) {
    const PhaseView v = ViewAt(m, step);
    if (!v.runs) continue;
    EXPECT_EQ(v.core, step.i % 4);
    EXPECT_EQ(v.active.size(), 8u);
    EXPECT_EQ(v.active[0].warp, step.i / 4);
    ASSERT_EQ(v.local_memory.size(), m.local_memory.regions.size());
    if (v.mma) {
      ++mma_steps;
      EXPECT_EQ(v.block_ops[OpClass::kMma], 8);
      for (int f : {2, 3, 6, 7, 14, 15, 16, 17}) EXPECT_TRUE(v.registers[static_cast<std::size_t>(f)].padding) << f;
      for (int f : {0, 1, 4, 5, 10, 13, 24, 31}) EXPECT_FALSE(v.registers[static_cast<std::size_t>(f)].padding) << f;
      EXPECT_TRUE(v.registers[24].written);
    } else {
      EXPECT_FALSE(v.registers[0].live);
    }
    if (step.phase == Phase::kScores) { EXPECT_EQ(v.registers[0].label, "Q[0][0..1]"); }
    if (step.phase == Phase::kUpdateO) { EXPECT_EQ(v.registers[0].label, "P~[0][0..1]"); }
    if (step.phase == Phase::kExp) { EXPECT_EQ(v.local_memory[1].holds.rfind("P~_ij", 0), 0u); }
    if (step.phase == Phase::kRowMax) { EXPECT_EQ(v.active[3].role, "row 3"); }
    if (step.phase == Phase::kExp) { EXPECT_EQ(v.active[3].role, "column 3"); }
  }
  EXPECT_EQ(mma_steps, 2 * 8 * 8);
}

TEST(PhaseView, PhasesOutsideTheProgramDoNotRun) {
  const Mapping m = ReportMapping(Mode::kSimt);
  EXPECT_FALSE(ViewAt(m, StepInfo{0, Phase::kInit, -1, -1}).runs);
  EXPECT_FALSE(ViewAt(m, StepInfo{0, Phase::kUpdateStats, 0, 0}).runs);
  EXPECT_FALSE(ViewAt(m, StepInfo{0, Phase::kScores, 99, 0}).runs);
}

// The Vortex view follows the main cursor: same phase, the Vortex tiles holding the main tiles' first rows.
TEST(PhaseView, FollowsAnotherSchedulesCursor) {
  const Mapping m = ReportMapping(Mode::kSimt);  // B_r = B_c = 16
  const Schedule vortex(ScheduleProblem(m));
  // Itself: every step maps to itself.
  for (std::int64_t s = 0; s < vortex.step_count(); ++s)
    EXPECT_EQ(VortexStepFor(vortex, vortex.problem(), vortex.Info(s)), s);
  // The main view's default: Algorithm 1 (K/V outer) with B_r = 8, B_c = 128 on N = 64.
  ProblemRequest request;
  request.n = 64;
  request.d = 8;
  const AttentionProblem main = ResolveProblem(request);
  const Schedule main_schedule(main);
  for (std::int64_t s = 0; s < main_schedule.step_count(); ++s) {
    const StepInfo info = main_schedule.Info(s);
    const std::optional<std::int64_t> mapped = VortexStepFor(vortex, main, info);
    ASSERT_TRUE(mapped.has_value()) << s;
    const StepInfo v = vortex.Info(*mapped);
    if (info.phase == Phase::kDone) {
      EXPECT_EQ(v.phase, Phase::kDone);
      continue;
    }
    const int row = main.RowBegin(std::max(info.i, 0));
    EXPECT_EQ(v.i, row / 16) << s;
    const Phase expected = info.phase == Phase::kUpdateStats ? Phase::kRowSum
                           : info.phase == Phase::kInit      ? Phase::kLoadQ
                                                             : info.phase;
    EXPECT_EQ(v.phase, expected) << s;
    if (info.j >= 0 && v.j >= 0) {
      EXPECT_EQ(v.j, main.ColBegin(info.j) / 16);
    }
  }
  // Rows past the Vortex N have no step.
  ProblemRequest longer = request;
  longer.n = 128;
  const AttentionProblem big = ResolveProblem(longer);
  EXPECT_FALSE(VortexStepFor(vortex, big, StepInfo{0, Phase::kScores, 15, 0}).has_value());
}

}  // namespace
}  // namespace flashviz::vortex
