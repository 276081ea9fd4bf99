// The decode model (kernels/cpu/decode.h): its final O against the float64 reference, its ledger against the closed
// forms, StateAt against the walk at every step, the split count from M, the block table.
#include "kernels/cpu/decode.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <set>

#include "kernels/common/input_error.h"
#include "kernels/cpu/decode_reference.h"

namespace flashviz {
namespace {

DecodeRequest Request(int heads, int kv_heads, int q_rows, int kv_len, int d, int page, std::optional<int> splits) {
  DecodeRequest r;
  r.heads = heads;
  r.kv_heads = kv_heads;
  r.q_rows = q_rows;
  r.kv_len = kv_len;
  r.d = d;
  r.page = page;
  r.splits = splits;
  return r;
}

struct Case {
  int heads, kv_heads, q_rows, kv_len, d, page;
  std::optional<int> splits;
};

const Case kCases[] = {
    {4, 2, 1, 64, 8, 8, 4},   {8, 2, 1, 100, 16, 16, 3},
    {8, 8, 2, 37, 4, 4, 5},   {6, 1, 3, 50, 8, 7, 7},
    {4, 4, 1, 1, 8, 16, 1},   {32, 8, 1, 300, 16, 64, std::nullopt},
    {2, 1, 4, 129, 8, 16, 9}, {4, 2, 2, 256, 8, 16, std::nullopt},
    {3, 3, 1, 17, 4, 1, 17},  {4, 2, 1, 48, 8, 16, 1},
};

TEST(Decode, FinalOutputMatchesTheReference) {
  for (const Case& c : kCases) {
    const DecodeProblem p =
        ResolveDecodeProblem(Request(c.heads, c.kv_heads, c.q_rows, c.kv_len, c.d, c.page, c.splits), 7);
    const DecodeInputs in = MakeRandomDecodeInputs(p, 7);
    const DecodeStepper stepper(p, &in);
    const std::vector<double> o = stepper.Walk([](const DecodeState&) { return true; });
    const std::vector<double> ref = ReferenceDecode(p.shape, in.q.data(), in.k.data(), in.v.data());
    ASSERT_EQ(o.size(), ref.size());
    double worst = 0;
    for (std::size_t i = 0; i < o.size(); ++i) worst = std::max(worst, std::abs(o[i] - ref[i]));
    EXPECT_LT(worst, 1e-12) << "H=" << c.heads << " G=" << c.kv_heads << " R=" << c.q_rows << " N=" << c.kv_len
                            << " S=" << p.splits;
  }
}

TEST(Decode, LedgerMatchesClosedForms) {
  for (const Case& c : kCases) {
    const DecodeProblem p =
        ResolveDecodeProblem(Request(c.heads, c.kv_heads, c.q_rows, c.kv_len, c.d, c.page, c.splits), 1);
    const DecodeStepper stepper(p, nullptr);
    const Ledger l = stepper.FinalLedger();
    const std::int64_t h = c.heads, g = c.kv_heads, r = c.q_rows, n = c.kv_len, d = c.d, s = p.splits;
    // The KV cache read once per KV head, not once per query head.
    EXPECT_EQ(l[HbmTensor::kK].read_bytes, 4 * g * n * d);
    EXPECT_EQ(l[HbmTensor::kV].read_bytes, 4 * g * n * d);
    EXPECT_DOUBLE_EQ(KvCacheReads(p, l), 1.0);
    EXPECT_EQ(l[HbmTensor::kBlockTable].read_bytes, 4 * g * p.pages());
    EXPECT_EQ(l[HbmTensor::kQ].read_bytes, 4 * s * h * r * d);  // each split loads its group's rows
    EXPECT_EQ(l[HbmTensor::kO].write_bytes, 4 * h * r * d);
    EXPECT_EQ(l[HbmTensor::kO].read_bytes, 0);
    const std::int64_t partial_o = s > 1 ? 4 * s * h * r * d : 0, partial_stats = s > 1 ? 4 * 2 * s * h * r : 0;
    EXPECT_EQ(l[HbmTensor::kOPartial].write_bytes, partial_o);
    EXPECT_EQ(l[HbmTensor::kOPartial].read_bytes, partial_o);
    EXPECT_EQ(l[HbmTensor::kStatsPartial].write_bytes, partial_stats);
    EXPECT_EQ(l[HbmTensor::kStatsPartial].read_bytes, partial_stats);
    const Ledger naive = DecodeNaiveLedger(p);
    EXPECT_EQ(naive[HbmTensor::kK].read_bytes, 4 * h * n * d);
    EXPECT_DOUBLE_EQ(KvCacheReads(p, naive), static_cast<double>(h) / static_cast<double>(g));
    EXPECT_EQ(naive[HbmTensor::kO].write_bytes, 4 * h * r * d);
    EXPECT_EQ(naive[HbmTensor::kOPartial].write_bytes, 0);
  }
}

TEST(Decode, StateAtEqualsTheWalkAtEveryStep) {
  for (const Case& c : {kCases[0], kCases[2], kCases[3], kCases[9]}) {
    const DecodeProblem p =
        ResolveDecodeProblem(Request(c.heads, c.kv_heads, c.q_rows, c.kv_len, c.d, c.page, c.splits), 3);
    const DecodeInputs in = MakeRandomDecodeInputs(p, 3);
    const DecodeStepper stepper(p, &in);
    std::int64_t visited = 0;
    stepper.Walk([&](const DecodeState& walked) {
      const DecodeState at = stepper.StateAt(walked.info.step);
      EXPECT_EQ(at.info, walked.info);
      EXPECT_EQ(at.info, stepper.Info(walked.info.step));
      EXPECT_EQ(at.ledger, walked.ledger);
      EXPECT_EQ(at.delta, walked.delta);
      EXPECT_EQ(at.sram_tiles, walked.sram_tiles);
      EXPECT_EQ(at.split.s, walked.split.s);
      EXPECT_EQ(at.split.p, walked.split.p);
      EXPECT_EQ(at.split.m, walked.split.m);
      EXPECT_EQ(at.split.l, walked.split.l);
      EXPECT_EQ(at.split.o, walked.split.o);
      EXPECT_EQ(at.partials.size(), walked.partials.size());
      EXPECT_EQ(at.merge.alpha, walked.merge.alpha);
      EXPECT_EQ(at.merge.o, walked.merge.o);
      EXPECT_EQ(at.merge.merged, walked.merge.merged);
      EXPECT_EQ(at.o_final, walked.o_final);
      ++visited;
      return true;
    });
    EXPECT_EQ(visited, stepper.step_count());
  }
}

TEST(Decode, ScheduleVisitsEverySplitThenEveryMerge) {
  const DecodeProblem p = ResolveDecodeProblem(Request(4, 2, 1, 64, 8, 8, 4), 0);
  const DecodeStepper stepper(p, nullptr);
  EXPECT_EQ(stepper.step_count(), 2 * 4 * 8 + 2 * (4 + 2) + 1);
  EXPECT_EQ(stepper.Info(0), (DecodeStepInfo{0, DecodePhase::kLoadKv, 0, 0}));
  EXPECT_EQ(stepper.Info(7), (DecodeStepInfo{7, DecodePhase::kWritePartial, 0, 0}));
  EXPECT_EQ(stepper.Info(8), (DecodeStepInfo{8, DecodePhase::kLoadKv, 0, 1}));
  EXPECT_EQ(stepper.Info(64), (DecodeStepInfo{64, DecodePhase::kMergeStats, 0, -1}));
  EXPECT_EQ(stepper.Info(65), (DecodeStepInfo{65, DecodePhase::kMergeO, 0, 0}));
  EXPECT_EQ(stepper.Info(69), (DecodeStepInfo{69, DecodePhase::kWriteO, 0, -1}));
  EXPECT_EQ(stepper.Info(70), (DecodeStepInfo{70, DecodePhase::kMergeStats, 1, -1}));
  EXPECT_EQ(stepper.Info(76).phase, DecodePhase::kDone);
  EXPECT_EQ(stepper.FirstStepOfSplit(1, 2), 48);
  EXPECT_EQ(stepper.FirstStepOfMerge(1), 70);
  // One split: no partials, no merge; the split writes O itself.
  const DecodeProblem one = ResolveDecodeProblem(Request(4, 2, 1, 64, 8, 8, 1), 0);
  const DecodeStepper single(one, nullptr);
  EXPECT_EQ(single.step_count(), 2 * 8 + 1);
  EXPECT_EQ(single.Info(7).phase, DecodePhase::kWriteO);
  EXPECT_EQ(single.FirstStepOfMerge(1), 15);
}

TEST(Decode, MergeRescalesEachPartialByItsAlpha) {
  const DecodeProblem p = ResolveDecodeProblem(Request(2, 1, 2, 40, 4, 4, 5), 11);
  const DecodeInputs in = MakeRandomDecodeInputs(p, 11);
  const DecodeStepper stepper(p, &in);
  const DecodeState state = stepper.StateAt(stepper.FirstStepOfMerge(0));
  ASSERT_EQ(state.info.phase, DecodePhase::kMergeStats);
  const int rows = p.rows(), count = p.splits;
  ASSERT_EQ(static_cast<int>(state.partials.size()), count);
  for (int r = 0; r < rows; ++r) {
    double big_m = -INFINITY;
    for (int s = 0; s < count; ++s) big_m = std::max(big_m, state.partials[static_cast<std::size_t>(s)].m[r]);
    EXPECT_EQ(state.merge.m[r], big_m);
    double l = 0;
    bool some_alpha_is_one = false;
    for (int s = 0; s < count; ++s) {
      const double alpha = state.merge.alpha[static_cast<std::size_t>(r) * count + s];
      EXPECT_DOUBLE_EQ(alpha, std::exp(state.partials[static_cast<std::size_t>(s)].m[r] - big_m));
      EXPECT_LE(alpha, 1.0);
      some_alpha_is_one |= alpha == 1.0;
      l += alpha * state.partials[static_cast<std::size_t>(s)].l[r];
    }
    EXPECT_TRUE(some_alpha_is_one);  // the split holding the row's maximum keeps its partial as it is
    EXPECT_DOUBLE_EQ(state.merge.l[r], l);
  }
  EXPECT_EQ(state.merge.merged, 0);
  EXPECT_EQ(stepper.StateAt(stepper.FirstStepOfMerge(0) + 2).merge.merged, 2);
}

TEST(Decode, SplitsFromSramTakeTheLargestChunkThatFits) {
  for (std::int64_t sram : {4096, 8192, 16384, 65536}) {
    DecodeRequest r = Request(8, 2, 1, 1000, 16, 16, std::nullopt);
    r.sram_bytes = sram;
    const DecodeProblem p = ResolveDecodeProblem(r, 0);
    EXPECT_TRUE(p.splits_from_sram);
    // Every split's tiles fit; one page more per split would not (unless one split already holds everything).
    EXPECT_LE(4 * DecodeSramFloats(p.rows(), p.MaxSplitKeys(), p.d()), sram);
    const DecodeStepper stepper(p, nullptr);
    EXPECT_LE(stepper.FinalLedger().sram_peak_bytes, sram);
    if (p.splits > 1) {
      const int pages_per_split = (p.pages() + p.splits - 2) / (p.splits - 1);  // what one split fewer would need
      EXPECT_GT(4 * DecodeSramFloats(p.rows(), pages_per_split * p.page, p.d()), sram) << sram;
    }
  }
  DecodeRequest tiny = Request(8, 2, 1, 1000, 64, 16, std::nullopt);
  tiny.sram_bytes = 1024;
  EXPECT_THROW(ResolveDecodeProblem(tiny, 0), InputError);
}

TEST(Decode, SplitsHoldWholePagesDealtOutEvenly) {
  const DecodeProblem p = ResolveDecodeProblem(Request(4, 2, 1, 100, 8, 16, 3), 0);  // 7 pages
  EXPECT_EQ(p.pages(), 7);
  int covered = 0;
  for (int s = 0; s < p.splits; ++s) {
    EXPECT_EQ(p.SplitKeyBegin(s), covered);
    EXPECT_EQ(p.SplitKeyBegin(s) % p.page, 0);
    EXPECT_GE(p.SplitPageBegin(s + 1) - p.SplitPageBegin(s), 2);
    covered = p.SplitKeyEnd(s);
    for (int page = p.SplitPageBegin(s); page < p.SplitPageBegin(s + 1); ++page) EXPECT_EQ(p.SplitOfPage(page), s);
  }
  EXPECT_EQ(covered, 100);
}

TEST(Decode, BlockTableIsAShuffledPermutationFromTheSeed) {
  const DecodeProblem a = ResolveDecodeProblem(Request(4, 2, 1, 1024, 8, 16, 4), 1);
  const DecodeProblem b = ResolveDecodeProblem(Request(4, 2, 1, 1024, 8, 16, 4), 1);
  const DecodeProblem c = ResolveDecodeProblem(Request(4, 2, 1, 1024, 8, 16, 4), 2);
  EXPECT_EQ(a.block_table, b.block_table);
  EXPECT_NE(a.block_table, c.block_table);
  std::vector<int> sorted = a.block_table;
  std::sort(sorted.begin(), sorted.end());
  for (int i = 0; i < a.pages(); ++i) EXPECT_EQ(sorted[static_cast<std::size_t>(i)], i);
  int in_place = 0;
  for (int i = 0; i < a.pages(); ++i) in_place += a.block_table[static_cast<std::size_t>(i)] == i;
  EXPECT_LT(in_place, a.pages() / 4);
}

TEST(Decode, ImpossibleRequestsSayWhy) {
  EXPECT_NE(DecodeRequestError(Request(6, 4, 1, 64, 8, 8, 2)).value_or("").find("does not divide"), std::string::npos);
  EXPECT_TRUE(DecodeRequestError(Request(4, 8, 1, 64, 8, 8, 2)).has_value());
  EXPECT_TRUE(DecodeRequestError(Request(4, 2, 0, 64, 8, 8, 2)).has_value());
  EXPECT_TRUE(DecodeRequestError(Request(4, 2, 1, 0, 8, 8, 2)).has_value());
  EXPECT_NE(DecodeRequestError(Request(4, 2, 1, 64, 8, 8, 9)).value_or("").find("whole pages"), std::string::npos);
  EXPECT_TRUE(DecodeRequestError(Request(4, 2, 1, 64, 8, 0, 2)).has_value());
  EXPECT_FALSE(DecodeRequestError(Request(4, 2, 1, 64, 8, 8, 8)).has_value());
}

TEST(Decode, SramHoldsTheSplitsTilesPhaseByPhase) {
  const DecodeProblem p = ResolveDecodeProblem(Request(4, 2, 2, 64, 8, 8, 4), 0);
  const DecodeStepper stepper(p, nullptr);
  const std::int64_t rows = p.rows(), d = p.d(), keys = p.SplitKeys(0);
  EXPECT_EQ(stepper.StateAt(0).ledger.sram_bytes, 4 * 2 * keys * d);
  EXPECT_EQ(stepper.StateAt(1).ledger.sram_bytes, 4 * (2 * keys * d + rows * d));
  EXPECT_EQ(stepper.StateAt(6).ledger.sram_bytes,
            4 * DecodeSramFloats(static_cast<int>(rows), static_cast<int>(keys), p.d()));
  EXPECT_EQ(stepper.StateAt(6).sram_tiles & Bit(DecodeSramTile::kO), Bit(DecodeSramTile::kO));
}

}  // namespace
}  // namespace flashviz
