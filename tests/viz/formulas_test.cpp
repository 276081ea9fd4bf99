// Hover values against an independent computation: every S, P~, m~, ℓ~, m, ℓ, α and O value that a tooltip
// shows, at every step of small problems in both orders (with and without the causal mask), recomputed here
// from Q, K, V with the plain definitions (online softmax over the keys seen so far), not from the stepper.
#include "viz/formulas.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include "viz/narration.h"

namespace flashviz {
namespace {

constexpr double kNegInf = -std::numeric_limits<double>::infinity();

struct Oracle {
  const AttentionProblem& p;
  const AttentionInputs& in;
  double S(int row, int col) const {
    if (p.Masked(row, col)) return kNegInf;
    double dot = 0;
    for (int e = 0; e < p.d; ++e) dot += static_cast<double>(in.q[row * p.d + e]) * in.k[col * p.d + e];
    return p.scale * dot;
  }
  // max and Σe^(s − max) over keys [0, key_end) for one row.
  void Stats(int row, int key_end, double* m, double* l) const {
    *m = kNegInf;
    for (int c = 0; c < key_end; ++c) *m = std::max(*m, S(row, c));
    *l = 0;
    if (*m == kNegInf) return;
    for (int c = 0; c < key_end; ++c) *l += S(row, c) == kNegInf ? 0.0 : std::exp(S(row, c) - *m);
  }
  // softmax over keys [0, key_end) times V, column e.
  double Partial(int row, int key_end, int e) const {
    double m, l;
    Stats(row, key_end, &m, &l);
    if (l == 0) return 0;
    double sum = 0;
    for (int c = 0; c < key_end; ++c)
      if (S(row, c) != kNegInf) sum += std::exp(S(row, c) - m) * in.v[c * p.d + e];
    return sum / l;
  }
};

void ExpectNear(const Explanation& x, double expected, const char* what, std::int64_t step) {
  ASSERT_TRUE(x.available) << what << " at step " << step;
  if (std::isinf(expected)) { ASSERT_EQ(x.value, expected) << what << " at step " << step; }
  else { ASSERT_NEAR(x.value, expected, 1e-9 * std::max(1.0, std::abs(expected))) << what << " at step " << step; }
  ASSERT_FALSE(x.title.empty());
  ASSERT_FALSE(x.lines.empty());
}

class Formulas : public ::testing::TestWithParam<std::tuple<LoopOrder, bool>> {};

TEST_P(Formulas, EveryHoverValueMatchesTheDefinitions) {
  const auto [order, causal] = GetParam();
  ProblemRequest r;
  r.n = 11;
  r.d = 3;
  r.br = 4;
  r.bc = 3;
  r.order = order;
  r.causal = causal;
  const AttentionProblem p = ResolveProblem(r);
  Model model;
  model.SetProblem(p, std::make_shared<AttentionInputs>(MakeRandomInputs(p.n, p.d, 11)), {});
  const Oracle oracle{model.problem(), model.inputs()};
  const bool kv = order == LoopOrder::kKvOuter;
  int checked = 0;
  for (std::int64_t k = 0; k < model.step_count(); ++k) {
    model.SetStep(k);
    model.WaitIdle();
    model.Update();
    const StepState& s = model.state();
    const Phase phase = s.info.phase;
    EXPECT_FALSE(Narrate(model).empty());
    if (s.rows == 0) continue;
    // Keys seen once this tile iteration's statistics are updated (or before it).
    const int seen_before = s.info.j >= 0 ? s.col_begin : (phase == Phase::kLoadQ ? 0 : p.n);
    const int seen_after = s.info.j >= 0 ? s.col_begin + s.cols : seen_before;
    const bool stats_updated = s.info.j >= 0 && (kv ? (phase == Phase::kUpdateStats || phase == Phase::kUpdateO ||
                                                       phase == Phase::kWriteBack)
                                                    : (phase == Phase::kRowMax || phase == Phase::kExp ||
                                                       phase == Phase::kRowSum || phase == Phase::kUpdateO));
    const bool sum_updated = kv ? stats_updated : (phase == Phase::kRowSum || phase == Phase::kUpdateO);
    for (int rr = 0; rr < s.rows; ++rr) {
      const int row = s.row_begin + rr;
      // S and P~ of the tile.
      for (int c = 0; c < s.cols; ++c) {
        const int col = s.col_begin + c;
        if (!s.tile.s.empty()) {
          ExpectNear(ExplainScore(model, rr, c), oracle.S(row, col), "S", k);
          ++checked;
        } else {
          ASSERT_FALSE(ExplainScore(model, rr, c).available);
        }
        if (!s.tile.p.empty()) {
          double shift;
          if (kv) {
            shift = kNegInf;
            for (int cc = 0; cc < s.cols; ++cc) shift = std::max(shift, oracle.S(row, s.col_begin + cc));
          } else {
            double l;
            oracle.Stats(row, seen_after, &shift, &l);
          }
          const double expected = oracle.S(row, col) == kNegInf ? 0.0 : std::exp(oracle.S(row, col) - shift);
          ExpectNear(ExplainProbability(model, rr, c), expected, "P~", k);
        }
      }
      // The tile's row max and sum.
      if (!s.tile.m_tile.empty()) {
        double tile_max = kNegInf;
        for (int c = 0; c < s.cols; ++c) tile_max = std::max(tile_max, oracle.S(row, s.col_begin + c));
        ExpectNear(ExplainTileMax(model, rr), tile_max, "m~", k);
      }
      if (!s.tile.l_tile.empty()) {
        double shift = kNegInf, sum = 0, l;
        if (kv) {
          for (int c = 0; c < s.cols; ++c) shift = std::max(shift, oracle.S(row, s.col_begin + c));
        } else {
          oracle.Stats(row, seen_after, &shift, &l);
        }
        for (int c = 0; c < s.cols; ++c)
          if (oracle.S(row, s.col_begin + c) != kNegInf) sum += std::exp(oracle.S(row, s.col_begin + c) - shift);
        ExpectNear(ExplainTileSum(model, rr), sum, "l~", k);
      }
      // The running statistics: over the keys seen so far.
      if (!s.tile.m.empty()) {
        double m, l;
        oracle.Stats(row, stats_updated ? seen_after : seen_before, &m, &l);
        ExpectNear(ExplainRunningMax(model, rr), m, "m", k);
        double ml, ll;
        oracle.Stats(row, sum_updated ? seen_after : seen_before, &ml, &ll);
        ExpectNear(ExplainRunningSum(model, rr), ll, "l", k);
        if (!s.tile.alpha.empty()) {
          double m_old, l_old, m_new, l_new;
          oracle.Stats(row, seen_before, &m_old, &l_old);
          oracle.Stats(row, seen_after, &m_new, &l_new);
          ExpectNear(ExplainRescale(model, rr), m_old == kNegInf ? 0.0 : std::exp(m_old - m_new), "alpha", k);
        }
      }
      // O_i on chip: kv keeps it normalized over the keys seen; q keeps Σ e^(s − m)·V until finalize.
      if (!s.tile.o.empty()) {
        const bool o_updated = phase == Phase::kUpdateO || phase == Phase::kWriteBack || phase == Phase::kFinalize ||
                               (!kv && s.info.j < 0 && phase != Phase::kLoadQ);
        const int keys = o_updated ? seen_after : seen_before;
        for (int e = 0; e < p.d; ++e) {
          double expected = oracle.Partial(row, keys, e);
          if (!kv && phase != Phase::kFinalize && phase != Phase::kWriteBack) {
            double m, l;
            oracle.Stats(row, keys, &m, &l);
            expected *= l;  // unnormalized
          }
          ExpectNear(ExplainTileOutput(model, rr, e), expected, "O_i", k);
        }
      }
    }
    // O in HBM, hovered anywhere: the written rows hold the stepper's image, the exact value is in the text.
    if (const HbmOutput* out = model.hbm_output()) {
      for (int row = 0; row < p.n; row += 3) {
        const Explanation x = ExplainHbmOutput(model, row, 1);
        if (x.available) { EXPECT_EQ(x.value, out->values[static_cast<std::size_t>(row) * p.d + 1]); }
      }
    }
  }
  EXPECT_GT(checked, 50);
}

INSTANTIATE_TEST_SUITE_P(Orders, Formulas,
                         ::testing::Combine(::testing::Values(LoopOrder::kKvOuter, LoopOrder::kQOuter),
                                            ::testing::Bool()));

TEST(Formulas, ScoreTilesSayWhatTheyAre) {
  ProblemRequest r;
  r.n = 8;
  r.d = 2;
  r.br = r.bc = 2;
  r.causal = true;
  Model model;
  const AttentionProblem p = ResolveProblem(r);
  model.SetProblem(p, std::make_shared<AttentionInputs>(MakeRandomInputs(8, 2, 1)), {});
  model.SetStep(model.step_count() / 2);
  for (int i = 0; i < p.tr(); ++i)
    for (int j = 0; j < p.tc(); ++j) {
      const Explanation x = ExplainScoreTile(model, i, j);
      ASSERT_FALSE(x.lines.empty());
      if (!p.TilePairActive(i, j)) { EXPECT_NE(x.lines[0].find("masked"), std::string::npos); }
    }
}

}  // namespace
}  // namespace flashviz
