// Hover values against an independent computation: every S, P~, m~, ℓ~, m, ℓ, α and O value that a tooltip
// shows, at every step of small problems in both orders (with and without the causal mask), recomputed here
// from Q, K, V with the plain definitions (online softmax over the keys seen so far), not from the stepper.
#include "viz/formulas.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include "viz/narration.h"
#include "viz/ui_state.h"

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

// A model of random inputs (seed) for an N × d problem with B_r × B_c tiles.
void LoadProblem(Model& model, int n, int d, int br, int bc, LoopOrder order, bool causal, std::uint64_t seed) {
  ProblemRequest r;
  r.n = n;
  r.d = d;
  r.br = br;
  r.bc = bc;
  r.order = order;
  r.causal = causal;
  const AttentionProblem p = ResolveProblem(r);
  model.SetProblem(p, std::make_shared<AttentionInputs>(MakeRandomInputs(p.n, p.d, seed)), {});
}

// Moves the model to `step` with its background work done, as a frame would see it.
void GoTo(Model& model, std::int64_t step) {
  model.SetStep(step);
  model.WaitIdle();
  model.Update();
}

class Formulas : public ::testing::TestWithParam<std::tuple<LoopOrder, bool>> {};

TEST_P(Formulas, EveryHoverValueMatchesTheDefinitions) {
  const auto [order, causal] = GetParam();
  Model model;
  LoadProblem(model, 11, 3, 4, 3, order, causal, 11);
  const AttentionProblem& p = model.problem();
  const Oracle oracle{model.problem(), model.inputs()};
  const bool kv = order == LoopOrder::kKvOuter;
  int checked = 0;
  for (std::int64_t k = 0; k < model.step_count(); ++k) {
    GoTo(model, k);
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
          const Explanation probability = ExplainProbability(model, rr, c);
          ExpectNear(probability, expected, "P~", k);
          // The same cell is named as the S tooltip names it: by its global row and key.
          const std::string cell = "[" + std::to_string(row) + ", " + std::to_string(col) + "]";
          EXPECT_NE(probability.title.find("P~" + cell), std::string::npos) << probability.title;
          EXPECT_NE(probability.lines[0].find("S" + cell), std::string::npos) << probability.lines[0];
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

// α's wording, at every step of every tile iteration in both orders, with and without the mask: the statistics
// header and the narration (RescaleSummary) and the tooltips (ExplainRescale, ExplainRunningMax) say for each row
// what the oracle says: first scores (m_old = −∞, α = 0), a new maximum (α < 1), unchanged (α = 1) or masked.
TEST_P(Formulas, RescaleWordingAgreesWithTheTooltipsAndTheOracle) {
  const auto [order, causal] = GetParam();
  Model model;
  LoadProblem(model, 12, 3, 3, 2, order, causal, 5);
  const Oracle oracle{model.problem(), model.inputs()};
  int first_tiles = 0, grew = 0, same = 0;
  for (std::int64_t k = 0; k < model.step_count(); ++k) {
    GoTo(model, k);
    const StepState& s = model.state();
    const MaxChangeCounts counts = CountMaxChanges(s.tile);
    const std::string summary = RescaleSummary(s);
    if (!counts.known()) {
      EXPECT_TRUE(summary.empty()) << "step " << k;
      continue;
    }
    const std::string narration = Narrate(model);
    if (s.info.phase == Phase::kUpdateStats || s.info.phase == Phase::kRowMax) {
      EXPECT_NE(narration.find(summary), std::string::npos) << "step " << k << ": " << narration;
    }
    for (int row = 0; row < s.rows; ++row) {
      const int global = s.row_begin + row;
      double m_old, l_old, m_new, l_new;
      oracle.Stats(global, s.col_begin, &m_old, &l_old);
      oracle.Stats(global, s.col_begin + s.cols, &m_new, &l_new);
      const Explanation alpha = ExplainRescale(model, row), running_max = ExplainRunningMax(model, row);
      std::string tooltips = alpha.title;
      for (const auto& line : alpha.lines) tooltips += "\n" + line;
      for (const auto& line : running_max.lines) tooltips += "\n" + line;
      switch (RowMaxChange(s.tile, row)) {
        case MaxChange::kFirst:
          ++first_tiles;
          EXPECT_EQ(m_old, kNegInf) << "step " << k << " row " << global;
          EXPECT_GT(m_new, kNegInf);
          EXPECT_NE(summary.find("α = 0"), std::string::npos) << "step " << k << ": " << summary;
          EXPECT_NE(tooltips.find("α = 0"), std::string::npos) << tooltips;
          EXPECT_EQ(tooltips.find("α = 1"), std::string::npos) << tooltips;
          break;
        case MaxChange::kGrew:
          ++grew;
          EXPECT_GT(m_new, m_old);
          EXPECT_GT(m_old, kNegInf);
          EXPECT_NE(summary.find("shrink by α"), std::string::npos) << summary;
          EXPECT_NE(tooltips.find("< 1"), std::string::npos) << tooltips;
          break;
        case MaxChange::kSame:
          ++same;
          EXPECT_EQ(m_new, m_old);
          EXPECT_NE(summary.find("α = 1"), std::string::npos) << summary;
          EXPECT_EQ(tooltips.find("α = 0"), std::string::npos) << tooltips;
          break;
        case MaxChange::kNoKeys:
          EXPECT_EQ(m_new, kNegInf);
          EXPECT_NE(summary.find("no maximum yet"), std::string::npos) << summary;
          break;
        case MaxChange::kUnknown: ADD_FAILURE() << "a row without a classification at step " << k; break;
      }
    }
  }
  EXPECT_GT(first_tiles, 0);
  EXPECT_GT(grew, 0);
  EXPECT_GT(same, 0);
}

// The first lesson at the step that used to contradict itself (update_stats of the first K/V tile, kv order):
// every row sees its first scores, so the header says α = 0 and never "no new maximum".
TEST(Formulas, FirstLessonFirstTileSaysAlphaIsZero) {
  for (const LoopOrder order : {LoopOrder::kKvOuter, LoopOrder::kQOuter}) {
    ProblemForm form = Presets()[0].form;
    form.order = order;
    Model model;
    const AttentionProblem p = ResolveProblem(form.ToRequest());
    model.SetProblem(p, std::make_shared<AttentionInputs>(MakeRandomInputs(p.n, p.d, form.seed)), {});
    const Phase update = order == LoopOrder::kKvOuter ? Phase::kUpdateStats : Phase::kRowMax;
    for (std::int64_t k = 0; k < model.step_count(); ++k) {
      if (model.schedule().Info(k).phase != update || model.schedule().Info(k).j != 0) continue;
      GoTo(model, k);
      const std::string summary = RescaleSummary(model.state());
      EXPECT_EQ(summary, "First scores in both rows: m_old = −∞, so α = 0 (nothing earlier to rescale).")
          << LoopOrderName(order) << " step " << k;
      EXPECT_EQ(Narrate(model).find("no new maximum"), std::string::npos);
    }
  }
}

// The S tooltip spells out the dot product's d terms (all of them up to d = 16; past that the first 15 and the
// sum of the rest), and they add up to the value it shows.
TEST(Formulas, ScoreTooltipShowsTheTermsOfTheDotProduct) {
  for (const int d : {3, 8, 16, 64}) {
    Model model;
    LoadProblem(model, 8, d, 4, 4, LoopOrder::kKvOuter, false, 2);
    std::int64_t step = 0;
    while (model.schedule().Info(step).phase != Phase::kScores) ++step;
    GoTo(model, step);
    const Explanation x = ExplainScore(model, 1, 2);
    ASSERT_TRUE(x.available);
    std::string text;
    for (const auto& line : x.lines) text += line + "\n";
    int products = 0;  // "×": one in each term written out, one before them and one in the last line
    for (std::size_t at = text.find("×"); at != std::string::npos; at = text.find("×", at + 1)) ++products;
    EXPECT_EQ(products, 2 + (d <= 16 ? d : 15)) << text;
    if (d > 16) { EXPECT_NE(text.find("Σₑ₌15…63"), std::string::npos) << text; }
    for (const auto& line : x.lines) EXPECT_LT(line.size(), 120u) << line;
  }
}

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
