// Hover explanations of the backward pass (formulas.h declares them): every quantity the backward step view shows,
// its formula with the step's numbers substituted, read from the stepper's BackwardNumerics and the inputs.
#include <algorithm>
#include <cmath>

#include "kernels/common/format.h"
#include "viz/formulas.h"
#include "viz/widgets.h"

namespace flashviz {
namespace {

const float* Row(const std::vector<float>& matrix, int row, int d) {
  return matrix.data() + static_cast<std::size_t>(row) * d;
}

// "a×b + c×d + … (d terms)": the first products of a dot product and the sum of the rest, so a d = 128 tooltip
// stays on screen.
std::string Products(const float* a, const double* a64, const float* b, int d) {
  constexpr int kShown = 4;
  std::string text;
  double rest = 0;
  for (int e = 0; e < d; ++e) {
    const double x = a ? static_cast<double>(a[e]) : a64[e];
    if (e < kShown)
      text += Sprintf("%s%s×%s", e ? " + " : "", Num(x, 3).c_str(), Num(b[e], 3).c_str());
    else
      rest += x * b[e];
  }
  if (d > kShown) text += Sprintf(" + %s (%d more terms)", Num(rest, 4).c_str(), d - kShown);
  return text;
}

std::string Pair(const StepState& s) {
  return Sprintf("tile pair (i = %d, j = %d), step %lld (%s)", s.info.i, s.info.j, static_cast<long long>(s.info.step),
                 std::string(PhaseName(s.info.phase)).c_str());
}

bool Cell(const StepState& s, const std::vector<double>& v, int r, int c) {
  return r >= 0 && r < s.rows && c >= 0 && c < s.cols && v.size() == static_cast<std::size_t>(s.rows) * s.cols;
}

}  // namespace

Explanation ExplainBackwardScore(const Model& m, int r, int c) {
  const StepState& s = m.state();
  const BackwardNumerics& g = s.grad;
  if (!Cell(s, g.s, r, c)) return MissingValue("S_ij", "S_ij is recomputed at scores and lives only in SRAM");
  const AttentionProblem& p = m.problem();
  const int row = s.row_begin + r, col = s.col_begin + c;
  Explanation x;
  x.available = true;
  x.value = g.s[static_cast<std::size_t>(r) * s.cols + c];
  x.title = Sprintf("S_ij[%d, %d] = S[%d, %d] = %s", r, c, row, col, Num(x.value, 5).c_str());
  if (p.Masked(row, col)) {
    x.lines.push_back(Sprintf("causal mask: key %d comes after query %d, so S = −∞ and P = 0", col, row));
  } else {
    x.lines.push_back(Sprintf("S[%d, %d] = scale · Σₑ Q[%d, e]·K[%d, e]", row, col, row, col));
    x.lines.push_back("= " + Num(p.scale) + " × (" +
                      Products(Row(m.inputs().q, row, p.d), nullptr, Row(m.inputs().k, col, p.d), p.d) + ")");
  }
  x.lines.push_back("recomputed from Q_i and K_j: the forward pass kept no S; " + Pair(s));
  return x;
}

Explanation ExplainBackwardProbability(const Model& m, int r, int c) {
  const StepState& s = m.state();
  const BackwardNumerics& g = s.grad;
  if (!Cell(s, g.p, r, c)) return MissingValue("P_ij", "P_ij exists from probs until the tile pair ends");
  const std::size_t at = static_cast<std::size_t>(r) * s.cols + c;
  Explanation x;
  x.available = true;
  x.value = g.p[at];
  x.title = Sprintf("P_ij[%d, %d] = %s", r, c, Num(x.value, 5).c_str());
  if (!std::isfinite(g.s[at])) {
    x.lines.push_back("masked: S = −∞, so P = 0");
  } else {
    x.lines.push_back(Sprintf("P = exp(S_ij − L_i) = exp(%s − %s) = %s", Num(g.s[at], 5).c_str(),
                              Num(g.lse[static_cast<std::size_t>(r)], 5).c_str(), Num(x.value, 5).c_str()));
    x.lines.push_back("L_i = m_i + log ℓ_i, saved by the forward pass: P is the final softmax probability at once");
  }
  x.lines.push_back(Pair(s));
  return x;
}

Explanation ExplainGradP(const Model& m, int r, int c) {
  const StepState& s = m.state();
  const BackwardNumerics& g = s.grad;
  if (!Cell(s, g.dp, r, c)) return MissingValue("dP_ij", "dP_ij is computed at grad_p");
  const AttentionProblem& p = m.problem();
  const int row = s.row_begin + r, col = s.col_begin + c;
  Explanation x;
  x.available = true;
  x.value = g.dp[static_cast<std::size_t>(r) * s.cols + c];
  x.title = Sprintf("dP_ij[%d, %d] = %s", r, c, Num(x.value, 5).c_str());
  x.lines.push_back(Sprintf("dP[%d, %d] = Σₑ dO[%d, e]·V[%d, e]", row, col, row, col));
  x.lines.push_back("= " + Products(Row(m.inputs().dout, row, p.d), nullptr, Row(m.inputs().v, col, p.d), p.d) + " = " +
                    Num(x.value, 5));
  x.lines.push_back(Pair(s));
  return x;
}

Explanation ExplainGradS(const Model& m, int r, int c) {
  const StepState& s = m.state();
  const BackwardNumerics& g = s.grad;
  if (!Cell(s, g.ds, r, c)) return MissingValue("dS_ij", "dS_ij is computed at grad_s, in place of dP_ij");
  const std::size_t at = static_cast<std::size_t>(r) * s.cols + c;
  Explanation x;
  x.available = true;
  x.value = g.ds[at];
  x.title = Sprintf("dS_ij[%d, %d] = %s", r, c, Num(x.value, 5).c_str());
  x.lines.push_back(Sprintf("dS = P ∘ (dP − D_i) = %s × (%s − %s) = %s", Num(g.p[at], 4).c_str(),
                            Num(g.dp[at], 4).c_str(), Num(g.delta[static_cast<std::size_t>(r)], 4).c_str(),
                            Num(x.value, 5).c_str()));
  x.lines.push_back("the softmax's gradient: D_i = rowsum(dO_i ∘ O_i) equals rowsum(P_i ∘ dP_i) over the whole row");
  x.lines.push_back(Pair(s));
  return x;
}

Explanation ExplainDelta(const Model& m, int r) {
  const StepState& s = m.state();
  const BackwardNumerics& g = s.grad;
  if (r < 0 || r >= s.rows || g.delta.size() != static_cast<std::size_t>(s.rows))
    return MissingValue("D_i", "D_i is on chip from the delta step of its tile and from load_q");
  const AttentionProblem& p = m.problem();
  const int row = s.row_begin + r;
  Explanation x;
  x.available = true;
  x.value = g.delta[static_cast<std::size_t>(r)];
  x.title = Sprintf("D[%d] = %s", row, Num(x.value, 5).c_str());
  x.lines.push_back(Sprintf("D[%d] = Σₑ dO[%d, e]·O[%d, e]", row, row, row));
  const ForwardSaved* saved = m.stepper().saved();
  if (saved)
    x.lines.push_back(
        "= " +
        Products(nullptr, saved->o.data() + static_cast<std::size_t>(row) * p.d, Row(m.inputs().dout, row, p.d), p.d) +
        "   (O × dO)");
  x.lines.push_back(s.info.phase == Phase::kDelta ? "computed by the preprocessing pass and written to HBM"
                                                  : "read from HBM at load_q (the preprocessing pass computed it)");
  return x;
}

Explanation ExplainLse(const Model& m, int r) {
  const StepState& s = m.state();
  const BackwardNumerics& g = s.grad;
  if (r < 0 || r >= s.rows || g.lse.size() != static_cast<std::size_t>(s.rows))
    return MissingValue("L_i", "L_i is on chip from load_q");
  const int row = s.row_begin + r;
  Explanation x;
  x.available = true;
  x.value = g.lse[static_cast<std::size_t>(r)];
  x.title = Sprintf("L[%d] = %s", row, Num(x.value, 5).c_str());
  x.lines.push_back("L = m + log ℓ of the row over every key: the forward pass (q order) wrote it at write_back");
  x.lines.push_back("one number per row replaces the N × N matrix P that standard attention keeps for this pass");
  return x;
}

Explanation ExplainGradKv(const Model& m, char which, int c, int e) {
  const StepState& s = m.state();
  const BackwardNumerics& g = s.grad;
  const std::vector<double>& now = which == 'K' ? g.dk : g.dv;
  const std::vector<double>& before = which == 'K' ? g.dk_prev : g.dv_prev;
  const AttentionProblem& p = m.problem();
  const char* name = which == 'K' ? "dK_j" : "dV_j";
  if (c < 0 || c >= s.cols || e < 0 || e >= p.d || now.size() != static_cast<std::size_t>(s.cols) * p.d)
    return MissingValue(name, Sprintf("%s is on chip from load_kv to write_dk_dv of its K/V tile", name));
  const std::size_t at = static_cast<std::size_t>(c) * p.d + e;
  const int col = s.col_begin + c;
  Explanation x;
  x.available = true;
  x.value = now[at];
  x.title = Sprintf("%s[%d, %d] = d%c[%d, %d] so far = %s", name, c, e, which, col, e, Num(x.value, 5).c_str());
  if (which == 'K')
    x.lines.push_back(
        Sprintf("dK[%d, %d] = scale · Σ_rows dS[row, %d]·Q[row, %d] over the Q tiles so far", col, e, col, e));
  else
    x.lines.push_back(Sprintf("dV[%d, %d] = Σ_rows P[row, %d]·dO[row, %d] over the Q tiles so far", col, e, col, e));
  if (before.size() == now.size() && s.info.i >= 0)
    x.lines.push_back(Sprintf("= %s (before Q tile i = %d) + %s (this tile)", Num(before[at], 5).c_str(), s.info.i,
                              Num(now[at] - before[at], 5).c_str()));
  if (s.info.phase == Phase::kWriteGrads && m.reference() && !m.reference()->dk.empty()) {
    const double exact =
        (which == 'K' ? m.reference()->dk : m.reference()->dv)[static_cast<std::size_t>(col) * p.d + e];
    x.lines.push_back(Sprintf("complete; exact (float64 reference): %s", Num(exact, 5).c_str()));
  }
  return x;
}

Explanation ExplainGradQ(const Model& m, int r, int e) {
  const StepState& s = m.state();
  const BackwardNumerics& g = s.grad;
  const AttentionProblem& p = m.problem();
  if (r < 0 || r >= s.rows || e < 0 || e >= p.d || g.dq.size() != static_cast<std::size_t>(s.rows) * p.d)
    return MissingValue("dQ_i", "dQ_i of the current Q tile, as it stands in HBM");
  const std::size_t at = static_cast<std::size_t>(r) * p.d + e;
  const int row = s.row_begin + r;
  Explanation x;
  x.available = true;
  x.value = g.dq[at];
  x.title = Sprintf("dQ_i[%d, %d] = dQ[%d, %d] = %s", r, e, row, e, Num(x.value, 5).c_str());
  if (s.info.phase == Phase::kGradQ && g.dq_prev.size() == g.dq.size()) {
    x.lines.push_back(Sprintf("read %s from HBM, + scale·Σ_c dS_ij[%d, c]·K_j[c, %d] = %s, written back: %s",
                              Num(g.dq_prev[at], 5).c_str(), r, e, Num(g.dq[at] - g.dq_prev[at], 5).c_str(),
                              Num(x.value, 5).c_str()));
    x.lines.push_back("on a GPU other K/V tiles' blocks add into the same row at the same time: atomicAdd");
  } else {
    const bool added = s.info.phase == Phase::kGradK;  // this pair's grad_q has run
    x.lines.push_back(Sprintf("in HBM: the sum of scale·dS K over the K/V tiles j' %s %d so far", added ? "≤" : "<",
                              s.info.j));
  }
  return x;
}

Explanation ExplainHbmGradient(const Model& m, int row, int e) {
  const AttentionProblem& p = m.problem();
  const HbmOutput* out = m.hbm_output();
  if (row < 0 || row >= p.n || e < 0 || e >= p.d) return MissingValue("dQ", "outside the matrix");
  if (!out) return MissingValue("dQ", "dQ in HBM is being computed");
  Explanation x;
  x.available = true;
  x.value = out->values[static_cast<std::size_t>(row) * p.d + e];
  x.title = Sprintf("dQ[%d, %d] in HBM = %s", row, e, Num(x.value, 5).c_str());
  const int i = row / p.br;
  // A pair has added into dQ_i once its grad_q step has run.
  const auto iteration = TileIterationPhases(p);
  const auto grad_q = std::find(iteration.begin(), iteration.end(), Phase::kGradQ) - iteration.begin();
  int added = 0;
  for (int j = 0; j < p.tc(); ++j) {
    const auto first = m.schedule().FirstStepOfPair(i, j);
    if (first && *first + grad_q <= out->step) ++added;
  }
  x.lines.push_back(Sprintf("%d of the %d K/V tiles that meet Q tile %d (rows %d–%d) have added their scale·dS K so far",
                            added, p.ActiveKvTiles(i), i, p.RowBegin(i), p.RowBegin(i) + p.RowsInTile(i) - 1));
  if (const Reference* ref = m.reference())
    x.lines.push_back(Sprintf("exact final dQ (float64 reference): %s",
                              Num(ref->o[static_cast<std::size_t>(row) * p.d + e], 5).c_str()));
  return x;
}

}  // namespace flashviz
