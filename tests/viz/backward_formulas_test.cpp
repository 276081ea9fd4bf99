// The backward pass's hover values, narration and pseudocode lines against an independent computation: every
// S, P, dP, dS, L, D, dK_j, dV_j and dQ_i value a tooltip shows, at every step of small problems (with and without
// the causal mask, edge tiles), recomputed here from Q, K, V and dO with the plain definitions (whole-row
// softmax, sums over the Q tiles or K/V tiles visited so far), not from the stepper.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <limits>

#include "kernels/common/format.h"
#include "viz/algorithm.h"
#include "viz/formulas.h"
#include "viz/narration.h"

namespace flashviz {
namespace {

struct Oracle {
  const AttentionProblem& p;
  const AttentionInputs& in;
  double S(int row, int col) const {
    if (p.Masked(row, col)) return -std::numeric_limits<double>::infinity();
    double dot = 0;
    for (int e = 0; e < p.d; ++e) dot += static_cast<double>(in.q[row * p.d + e]) * in.k[col * p.d + e];
    return p.scale * dot;
  }
  double L(int row) const {
    double m = -std::numeric_limits<double>::infinity(), l = 0;
    for (int c = 0; c < p.n; ++c) m = std::max(m, S(row, c));
    for (int c = 0; c < p.n; ++c) l += std::isinf(S(row, c)) ? 0.0 : std::exp(S(row, c) - m);
    return m + std::log(l);
  }
  double P(int row, int col) const { return std::isinf(S(row, col)) ? 0.0 : std::exp(S(row, col) - L(row)); }
  double Dp(int row, int col) const {
    double dot = 0;
    for (int e = 0; e < p.d; ++e) dot += static_cast<double>(in.dout[row * p.d + e]) * in.v[col * p.d + e];
    return dot;
  }
  double O(int row, int e) const {
    double o = 0;
    for (int c = 0; c < p.n; ++c) o += P(row, c) * in.v[c * p.d + e];
    return o;
  }
  double D(int row) const {
    double sum = 0;
    for (int e = 0; e < p.d; ++e) sum += static_cast<double>(in.dout[row * p.d + e]) * O(row, e);
    return sum;
  }
  double Ds(int row, int col) const { return P(row, col) * (Dp(row, col) - D(row)); }
  // dK[col, e] and dV[col, e] over the rows [0, row_end); dQ[row, e] over the keys [0, key_end).
  double Dk(int col, int e, int row_end) const {
    double sum = 0;
    for (int r = 0; r < row_end; ++r) sum += p.scale * Ds(r, col) * in.q[r * p.d + e];
    return sum;
  }
  double Dv(int col, int e, int row_end) const {
    double sum = 0;
    for (int r = 0; r < row_end; ++r) sum += P(r, col) * in.dout[r * p.d + e];
    return sum;
  }
  double Dq(int row, int e, int key_end) const {
    double sum = 0;
    for (int c = 0; c < key_end; ++c) sum += p.scale * Ds(row, c) * in.k[c * p.d + e];
    return sum;
  }
};

void ExpectValue(const Explanation& x, double expected, const std::string& what) {
  ASSERT_TRUE(x.available) << what;
  ASSERT_NEAR(x.value, expected, 1e-9 * std::max(1.0, std::abs(expected))) << what;
  ASSERT_FALSE(x.title.empty()) << what;
  ASSERT_FALSE(x.lines.empty()) << what;
}

struct Case {
  int n, d, br, bc;
  bool causal;
};

class BackwardFormulas : public ::testing::TestWithParam<Case> {};

TEST_P(BackwardFormulas, EveryHoverValueMatchesTheDefinitions) {
  const Case c = GetParam();
  ProblemRequest request;
  request.n = c.n;
  request.d = c.d;
  request.br = c.br;
  request.bc = c.bc;
  request.causal = c.causal;
  request.pass = Pass::kBackward;
  const AttentionProblem p = ResolveProblem(request);
  Model model;
  model.SetProblem(p, std::make_shared<AttentionInputs>(MakeRandomInputs(p, 3)), {3, "", 0});
  const Oracle oracle{p, model.inputs()};
  const Pseudocode& code = PseudocodeFor(p);
  for (std::int64_t step = 0; step < model.step_count(); ++step) {
    model.SetStep(step);
    model.WaitIdle();
    model.Update();
    const StepState& s = model.state();
    const Phase phase = s.info.phase;
    // A phase's place in the tile iteration (not its enum order) says what it has done so far.
    const auto iteration = TileIterationPhases(p);
    const auto place = [&](Phase ph) { return std::find(iteration.begin(), iteration.end(), ph) - iteration.begin(); };
    const std::string at = "step " + std::to_string(step) + " (" + std::string(PhaseName(phase)) + ")";
    // Every step is narrated under its own name and has its line of Algorithm 2 (the setup lines excepted).
    const std::string narration = Narrate(model);
    ASSERT_EQ(narration.rfind(std::string(PhaseName(phase)) + ":", 0), 0u) << at << ": " << narration;
    ASSERT_FALSE(PseudocodeLineOf(code, phase).empty()) << at;
    const int i = s.info.i, j = s.info.j;
    if (phase == Phase::kDelta)
      for (int r = 0; r < s.rows; ++r) ExpectValue(ExplainDelta(model, r), oracle.D(s.row_begin + r), "D " + at);
    if (i < 0 || j < 0) continue;
    for (int r = 0; r < s.rows; ++r) {
      const int row = s.row_begin + r;
      ExpectValue(ExplainLse(model, r), oracle.L(row), "L " + at);
      ExpectValue(ExplainDelta(model, r), oracle.D(row), "D " + at);
      for (int col_local = 0; col_local < s.cols; ++col_local) {
        const int col = s.col_begin + col_local;
        const std::string cell = at + Sprintf(" [%d, %d]", row, col);
        if (phase == Phase::kScores && !p.Masked(row, col))
          ExpectValue(ExplainBackwardScore(model, r, col_local), oracle.S(row, col), "S " + cell);
        if (place(phase) >= place(Phase::kProbs))
          ExpectValue(ExplainBackwardProbability(model, r, col_local), oracle.P(row, col), "P " + cell);
        if (phase == Phase::kGradP) ExpectValue(ExplainGradP(model, r, col_local), oracle.Dp(row, col), "dP " + cell);
        if (place(phase) >= place(Phase::kGradS))
          ExpectValue(ExplainGradS(model, r, col_local), oracle.Ds(row, col), "dS " + cell);
      }
    }
    // dK_j and dV_j after this Q tile's contribution (from grad_v, grad_k on) or before it (earlier phases).
    const int rows_done = s.row_begin + s.rows;
    for (int col_local = 0; col_local < s.cols; ++col_local)
      for (int e = 0; e < p.d; ++e) {
        const int col = s.col_begin + col_local;
        const int v_rows = place(phase) >= place(Phase::kGradV) ? rows_done : s.row_begin;
        const int k_rows = place(phase) >= place(Phase::kGradK) ? rows_done : s.row_begin;
        ExpectValue(ExplainGradKv(model, 'V', col_local, e), oracle.Dv(col, e, v_rows), "dV " + at);
        ExpectValue(ExplainGradKv(model, 'K', col_local, e), oracle.Dk(col, e, k_rows), "dK " + at);
      }
    // dQ_i in HBM: the K/V tiles before j, and j itself from grad_q on.
    const int keys_done = place(phase) >= place(Phase::kGradQ) ? s.col_begin + s.cols : s.col_begin;
    for (int r = 0; r < s.rows; ++r)
      for (int e = 0; e < p.d; ++e)
        ExpectValue(ExplainGradQ(model, r, e), oracle.Dq(s.row_begin + r, e, keys_done), "dQ " + at);
  }
  // At the end dQ in HBM is the whole gradient.
  for (int row = 0; row < p.n; ++row)
    for (int e = 0; e < p.d; ++e)
      ExpectValue(ExplainHbmGradient(model, row, e), oracle.Dq(row, e, p.n), Sprintf("final dQ[%d, %d]", row, e));
}

INSTANTIATE_TEST_SUITE_P(Shapes, BackwardFormulas,
                         ::testing::Values(Case{8, 4, 2, 2, false}, Case{13, 3, 4, 3, true}, Case{10, 2, 3, 4, false},
                                           Case{9, 5, 9, 2, true}));

}  // namespace
}  // namespace flashviz
