// The ledger is counted where the stepper loads and stores tiles; these tests hold it against the closed forms
// of the two loop orders and of standard attention (docs/design.md, principle 2).
#include "kernels/cpu/ledger.h"

#include <gtest/gtest.h>

#include <random>

#include "kernels/cpu/stepper.h"

namespace flashviz {
namespace {

AttentionProblem Make(int n, int d, int br, int bc, LoopOrder order, bool causal = false) {
  ProblemRequest r;
  r.n = n;
  r.d = d;
  r.br = br;
  r.bc = bc;
  r.order = order;
  r.causal = causal;
  return ResolveProblem(r);
}

std::int64_t Read(const Ledger& l, HbmTensor t) { return l[t].read_bytes; }
std::int64_t Written(const Ledger& l, HbmTensor t) { return l[t].write_bytes; }

TEST(StandardAttentionLedger, MatchesTheClosedForm) {
  for (auto [n, d] : {std::pair{1, 1}, {64, 8}, {1000, 64}, {4096, 128}}) {
    const Ledger l = StandardAttentionLedger(n, d);
    const std::int64_t N = n, D = d;
    EXPECT_EQ(l.HbmReadBytes(), 4 * (2 * N * D + N * N + N * N + N * D));
    EXPECT_EQ(l.HbmWriteBytes(), 4 * (N * N + N * N + N * D));
  }
}

TEST(FlashLedger, KvOuterMatchesAlgorithm1) {
  // Every inner iteration reads Q_i, O_i, ℓ_i, m_i and writes O_i, ℓ_i, m_i; each K_j, V_j is read once.
  std::mt19937 rng(3);
  for (int trial = 0; trial < 100; ++trial) {
    const int n = 1 + static_cast<int>(rng() % 200), d = 1 + static_cast<int>(rng() % 20);
    const int br = 1 + static_cast<int>(rng() % 17), bc = 1 + static_cast<int>(rng() % 17);
    const AttentionProblem p = Make(n, d, br, bc, LoopOrder::kKvOuter);
    const Ledger l = Stepper(p, nullptr).FinalLedger();
    const std::int64_t N = n, D = d, Tc = p.tc();
    EXPECT_EQ(Read(l, HbmTensor::kK), 4 * N * D);
    EXPECT_EQ(Read(l, HbmTensor::kV), 4 * N * D);
    EXPECT_EQ(Read(l, HbmTensor::kQ), 4 * Tc * N * D);
    EXPECT_EQ(Read(l, HbmTensor::kO), 4 * Tc * N * D);
    EXPECT_EQ(Read(l, HbmTensor::kL), 4 * Tc * N);
    EXPECT_EQ(Read(l, HbmTensor::kM), 4 * Tc * N);
    EXPECT_EQ(Written(l, HbmTensor::kO), 4 * (N * D + Tc * N * D));  // init + every inner iteration
    EXPECT_EQ(Written(l, HbmTensor::kL), 4 * (N + Tc * N));
    EXPECT_EQ(Written(l, HbmTensor::kM), 4 * (N + Tc * N));
    EXPECT_EQ(Read(l, HbmTensor::kS) + Written(l, HbmTensor::kS) + Read(l, HbmTensor::kP), 0);
  }
}

TEST(FlashLedger, QOuterMatchesFlashAttention2) {
  // Q_i read once, every K_j, V_j once per Q tile, O_i and L_i written once.
  std::mt19937 rng(4);
  for (int trial = 0; trial < 100; ++trial) {
    const int n = 1 + static_cast<int>(rng() % 200), d = 1 + static_cast<int>(rng() % 20);
    const int br = 1 + static_cast<int>(rng() % 17), bc = 1 + static_cast<int>(rng() % 17);
    const AttentionProblem p = Make(n, d, br, bc, LoopOrder::kQOuter);
    const Ledger l = Stepper(p, nullptr).FinalLedger();
    const std::int64_t N = n, D = d, Tr = p.tr();
    EXPECT_EQ(Read(l, HbmTensor::kQ), 4 * N * D);
    EXPECT_EQ(Read(l, HbmTensor::kK), 4 * Tr * N * D);
    EXPECT_EQ(Read(l, HbmTensor::kV), 4 * Tr * N * D);
    EXPECT_EQ(Read(l, HbmTensor::kO) + Read(l, HbmTensor::kL) + Read(l, HbmTensor::kM), 0);
    EXPECT_EQ(Written(l, HbmTensor::kO), 4 * N * D);
    EXPECT_EQ(Written(l, HbmTensor::kLse), 4 * N);
    EXPECT_EQ(l.HbmWriteBytes(), 4 * (N * D + N));
  }
}

TEST(FlashLedger, CausalCountsOnlyActivePairsAtTheirRealSize) {
  std::mt19937 rng(5);
  for (int trial = 0; trial < 60; ++trial) {
    const int n = 1 + static_cast<int>(rng() % 150), d = 1 + static_cast<int>(rng() % 9);
    const int br = 1 + static_cast<int>(rng() % 13), bc = 1 + static_cast<int>(rng() % 13);
    for (LoopOrder order : {LoopOrder::kKvOuter, LoopOrder::kQOuter}) {
      const AttentionProblem p = Make(n, d, br, bc, order, true);
      // Sum over active pairs of the tile sizes, written independently of the stepper.
      std::int64_t q_reads = 0, kv_reads = 0;
      for (int i = 0; i < p.tr(); ++i) {
        const std::int64_t rows = std::min(br, n - i * br);
        for (int j = 0; j < p.tc(); ++j) {
          const std::int64_t cols = std::min(bc, n - j * bc);
          const bool active = j * bc <= i * br + rows - 1;
          if (!active) continue;
          q_reads += rows * d;
          kv_reads += cols * d;
        }
      }
      const Ledger l = Stepper(p, nullptr).FinalLedger();
      if (order == LoopOrder::kKvOuter) {
        EXPECT_EQ(Read(l, HbmTensor::kQ), 4 * q_reads);
        EXPECT_EQ(Read(l, HbmTensor::kK), 4 * std::int64_t{n} * d);  // every K_j has an active Q tile
      } else {
        EXPECT_EQ(Read(l, HbmTensor::kQ), 4 * std::int64_t{n} * d);
        EXPECT_EQ(Read(l, HbmTensor::kK), 4 * kv_reads);
        EXPECT_EQ(Read(l, HbmTensor::kV), 4 * kv_reads);
      }
    }
  }
}

TEST(FlashLedger, SramOccupancyFollowsTheResidentTiles) {
  // N = 10, d = 3, B_r = 4, B_c = 6: the first tile iteration holds full tiles; SRAM empties at the end.
  const AttentionProblem p = Make(10, 3, 4, 6, LoopOrder::kKvOuter);
  const Stepper stepper(p, nullptr);
  EXPECT_EQ(stepper.LedgerAt(0).sram_bytes, 0);                   // init
  EXPECT_EQ(stepper.LedgerAt(1).sram_bytes, 4 * (2 * 6 * 3));      // K_1, V_1
  EXPECT_EQ(stepper.LedgerAt(2).sram_bytes, 4 * (2 * 6 * 3 + 2 * 4 * 3 + 2 * 4));  // + Q_i, O_i, ℓ_i, m_i
  EXPECT_EQ(stepper.LedgerAt(3).sram_bytes, 4 * (2 * 6 * 3 + 2 * 4 * 3 + 2 * 4 + 4 * 6));  // + S_ij
  const Ledger last = stepper.FinalLedger();
  EXPECT_EQ(last.sram_bytes, 0);
  // The peak: K, V, Q, O, ℓ, m, S, m̃, ℓ̃, m_new, ℓ_new for a full tile pair.
  EXPECT_EQ(last.sram_peak_bytes, 4 * (2 * 6 * 3 + 2 * 4 * 3 + 2 * 4 + 4 * 6 + 4 * 4));
}

TEST(LedgerDelta, IsWhatOneStepMoved) {
  const AttentionProblem p = Make(16, 4, 4, 8, LoopOrder::kQOuter);
  const Stepper stepper(p, nullptr);
  for (std::int64_t k = 1; k < stepper.step_count(); ++k) {
    const Ledger before = stepper.LedgerAt(k - 1), after = stepper.LedgerAt(k);
    const Ledger delta = LedgerDelta(before, after);
    EXPECT_EQ(delta.HbmReadBytes(), after.HbmReadBytes() - before.HbmReadBytes());
    EXPECT_GE(delta.HbmBytes(), 0);
  }
}

}  // namespace
}  // namespace flashviz
