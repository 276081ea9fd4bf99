#include "kernels/vortex/counting.h"

#include <gtest/gtest.h>

namespace flashviz::vortex {
namespace {

using O = OpClass;

// Closed forms derived by hand from the report's programs, held against the model's walk.

TEST(CountingModel, BaselineAttentionThreeKernels) {
  for (auto [n, d] : {std::pair{4, 2}, std::pair{64, 8}, std::pair{128, 16}}) {
    const ProgramCounts c = CountProgram(Program::kAttention, kReportMachine, n, d);
    ASSERT_TRUE(c.applicable);
    const std::int64_t nn = std::int64_t{n} * n, nd = std::int64_t{n} * d;
    // QK^T: N² threads × d FMAs; PV: N·d threads × N FMAs.
    EXPECT_EQ(c.total[O::kFma], nn * d + nd * n);
    // Loads: QK^T 2d per element, softmax 3 passes over a row of S/P, PV 2N per element.
    EXPECT_EQ(c.total[O::kGlobalLoad], 2 * nn * d + 3 * nn + 2 * nd * n);
    // Stores: S (N²), P twice (exp pass and normalize pass), O.
    EXPECT_EQ(c.total[O::kGlobalStore], nn + 2 * nn + nd);
    EXPECT_EQ(c.total[O::kExp], nn);
    EXPECT_EQ(c.total[O::kFpOther], std::int64_t{n} * (4 * n - 1));  // max, sub, add, div per row
    EXPECT_EQ(c.total[O::kLocalLoad] + c.total[O::kLocalStore] + c.total[O::kBarrier] + c.total[O::kMma], 0);
    EXPECT_EQ(c.total.GlobalReadBytes(), 4 * c.total[O::kGlobalLoad]);
    EXPECT_EQ(c.threads_launched, nn + n + nd);
  }
  const ProgramCounts small = CountProgram(Program::kAttention, kReportMachine, 4, 2);
  EXPECT_EQ(small.total[O::kFma], 64);
  EXPECT_EQ(small.total[O::kGlobalLoad], 176);  // 2·16·2 + 3·16 + 2·8·4
  EXPECT_EQ(small.total[O::kGlobalStore], 56);
}

TEST(CountingModel, SimtFlashSmallCaseByHand) {
  // 1 core × 1 warp × 8 threads, N = 16, d = 2: B_r = 8, B_c = 8, T_r = 2 blocks, T_c = 2 K/V tiles.
  MachineConfig m;
  m.cores = 1;
  m.warps_per_core = 1;
  const ProgramCounts c = CountProgram(Program::kSimtFlash, m, 16, 2);
  ASSERT_TRUE(c.applicable);
  EXPECT_EQ(c.br, 8);
  EXPECT_EQ(c.bc, 8);
  // Per thread: Q row d loads + per tile (B_c/B_r = 1) K and V rows of d: 2 + 2·(2·2) = 10; 16 threads.
  EXPECT_EQ(c.total[O::kGlobalLoad], 16 * 10);
  EXPECT_EQ(c.total[O::kLocalStore], 16 * 10);
  // Per tile: scores B_c·d, ℓ_new 1, P·V B_c·d, O update d → 2·(16 + 1 + 16 + 2) = 70.
  EXPECT_EQ(c.total[O::kFma], 16 * 70);
  // Per tile: scores 2·B_c·d (Q and K re-read), P·V B_c·d → 2·48.
  EXPECT_EQ(c.total[O::kLocalLoad], 16 * 96);
  // Per tile: B_c exps + alpha, beta.
  EXPECT_EQ(c.total[O::kExp], 16 * 2 * 10);
  // Per tile: rowmax 7, sub 8, rowsum 8, m_new 1, 2 subs, 1 mul (ℓ), d muls (O) = 29; then 1/ℓ and d muls.
  EXPECT_EQ(c.total[O::kFpOther], 16 * (2 * 29 + 3));
  EXPECT_EQ(c.total[O::kBarrier], 16 * 2 * 2);
  EXPECT_EQ(c.total[O::kGlobalStore], 16 * 2);
  EXPECT_EQ(c.total[O::kMma] + c.total[O::kConvert], 0);
}

TEST(CountingModel, SimtFlashClosedForms) {
  for (int n : {16, 64, 256}) {
    for (int d : {4, 8, 16}) {
      const ProgramCounts c = CountProgram(Program::kSimtFlash, kReportMachine, n, d);
      ASSERT_TRUE(c.applicable);
      const std::int64_t br = c.br, bc = c.bc, tr = n / br, tc = n / bc, nd = std::int64_t{n} * d;
      // Each block reads Q_i once and every K_j, V_j once: N·d·(1 + 2·T_r) floats; writes O once.
      EXPECT_EQ(c.total.GlobalReadBytes(), 4 * nd * (1 + 2 * tr)) << n << " " << d;
      EXPECT_EQ(c.total.GlobalWriteBytes(), 4 * nd);
      EXPECT_EQ(c.total[O::kFma], std::int64_t{n} * tc * (2 * bc * d + d + 1));
      EXPECT_EQ(c.total[O::kExp], std::int64_t{n} * tc * (bc + 2));
      EXPECT_EQ(c.total[O::kBarrier], std::int64_t{n} * tc * 2);
      EXPECT_EQ(c.total[O::kLocalLoad], std::int64_t{n} * tc * 3 * bc * d);
      (void)br;
    }
  }
  // The report's configuration: 64 threads, 4 tiles each.
  const ProgramCounts report = CountProgram(Program::kSimtFlash, kReportMachine, 64, 8);
  EXPECT_EQ(report.total[O::kFma], 64 * 4 * (2 * 16 * 8 + 9));
  EXPECT_EQ(report.total.GlobalReadBytes(), 4 * 512 * 9);
}

TEST(CountingModel, TcuFlashClosedForms) {
  for (int n : {8, 16, 64, 512}) {
    const ProgramCounts c = CountProgram(Program::kTcuFlash, kReportMachine, n, 8);
    ASSERT_TRUE(c.applicable);
    const std::int64_t tr = n / 8, tc = n / 8, nd = std::int64_t{n} * 8;
    EXPECT_EQ(c.mma_sync, 2 * tr * tc);  // two per tile iteration, one warp per block
    EXPECT_EQ(c.mma_micro_ops, 64 * tr * tc);
    EXPECT_EQ(c.total[O::kMma], 8 * c.mma_sync);  // counted once per thread of the warp
    EXPECT_EQ(c.total.GlobalReadBytes(), 4 * nd * (1 + 2 * tr));
    EXPECT_EQ(c.total.GlobalWriteBytes(), 4 * nd);
    // Exps: 64 per tile (the P~ tile) + alpha, beta for each of 8 rows.
    EXPECT_EQ(c.total[O::kExp], tr * tc * (64 + 16));
    // FMAs: l_new per row and β·(P~V) per O element; the products themselves are inside mma_sync.
    EXPECT_EQ(c.total[O::kFma], tr * tc * (8 + 64));
    // Conversions: Q_i once, K_j and V_j per tile, P~ per tile (64 each).
    EXPECT_EQ(c.total[O::kConvert], tr * (64 + tc * 3 * 64));
    // Barriers: after load_q, then 7 per tile (load, S, rowmax, exp, rowsum, P~V, accumulate), 8 threads each.
    EXPECT_EQ(c.total[O::kBarrier], 8 * tr * (1 + 7 * tc));
  }
  EXPECT_FALSE(CountProgram(Program::kTcuFlash, kReportMachine, 64, 16).applicable);
  EXPECT_FALSE(CountProgram(Program::kTcuFlash, kReportMachine, 4, 8).applicable);
}

TEST(CountingModel, PhasesSumToTheTotal) {
  for (Program p : {Program::kAttention, Program::kSimtFlash, Program::kTcuFlash}) {
    const ProgramCounts c = CountProgram(p, kReportMachine, 64, 8);
    OpCounts sum;
    for (const ProgramPhase& phase : c.phases)
      sum += phase.per_thread.Times(std::int64_t{phase.active_threads} * phase.blocks * phase.repeats);
    EXPECT_EQ(sum, c.total) << ProgramName(p);
    EXPECT_GT(c.total.Total(), 0);
  }
}

TEST(CountingModel, RatiosBesideThePublishedTable) {
  const auto counts = CountAllPrograms(kReportMachine, 64, 8);
  const auto ratios = CompareWithPublished(counts);
  ASSERT_EQ(ratios.size(), 3u);
  EXPECT_EQ(ratios[0].numerator, Program::kSimtFlash);
  EXPECT_EQ(ratios[0].denominator, Program::kAttention);
  EXPECT_NEAR(ratios[0].report_instructions, 634145.0 / 1513613.0, 1e-12);
  EXPECT_NEAR(ratios[2].report_cycles, 4794023.0 / 3693943.0, 1e-12);
  EXPECT_NEAR(ratios[1].report_memory_latency, 767.0 / 2907.0, 1e-12);
  EXPECT_NEAR(ratios[0].model_operations,
              static_cast<double>(counts[1].total.Total()) / static_cast<double>(counts[0].total.Total()), 1e-12);
  // Flash reads far less global memory than the baseline, which writes and re-reads S and P.
  EXPECT_LT(ratios[0].model_global_bytes, 0.1);
  // Without the TCU program the ratios that need it have no model side.
  const auto d16 = CompareWithPublished(CountAllPrograms(kReportMachine, 64, 16));
  EXPECT_EQ(d16[1].model_operations, 0.0);
  EXPECT_GT(d16[0].model_operations, 0.0);
}

}  // namespace
}  // namespace flashviz::vortex
