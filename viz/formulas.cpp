// [SECTION] helpers: where a value came from
// [SECTION] inputs and the S/P~ tile
// [SECTION] statistics: m~, ℓ~, m, ℓ, α
// [SECTION] output: O_i on chip and O in HBM
#include "viz/formulas.h"

#include <cmath>

#include "kernels/common/format.h"
#include "kernels/cpu/reference.h"
#include "viz/widgets.h"

namespace flashviz {

Explanation MissingValue(std::string title, std::string why) {
  Explanation e;
  e.title = std::move(title);
  e.lines.push_back(std::move(why));
  return e;
}

Explanation ExplainedValue(double value, std::string title) {
  Explanation x;
  x.available = true;
  x.value = value;
  x.title = std::move(title);
  return x;
}
namespace {

// ---------------------------------------------------------------------------------------------------------
// [SECTION] helpers
// ---------------------------------------------------------------------------------------------------------

bool Kv(const Model& m) { return m.problem().order == LoopOrder::kKvOuter; }
Phase PhaseOf(const Model& m) { return m.state().info.phase; }
std::string PhaseText(const Model& m) { return std::string(PhaseName(PhaseOf(m))); }

// "tile iteration (i = 1, j = 2), step 123 (scores)"
std::string Where(const Model& m) {
  const StepInfo& info = m.state().info;
  std::string where;
  if (info.i >= 0 && info.j >= 0) where = Sprintf("tile pair (i = %d, j = %d)", info.i, info.j);
  else if (info.i >= 0) where = Sprintf("Q tile i = %d", info.i);
  else if (info.j >= 0) where = Sprintf("K/V tile j = %d", info.j);
  return where + Sprintf("%sstep %lld (%s)", where.empty() ? "" : ", ", static_cast<long long>(info.step),
                         PhaseText(m).c_str());
}

bool LocalCell(const Model& m, int r, int c) {
  const StepState& s = m.state();
  return r >= 0 && r < s.rows && c >= 0 && c < s.cols;
}
bool LocalRow(const Model& m, int r) { return r >= 0 && r < m.state().rows; }

double Dot(const Model& m, int row, int col) {
  const AttentionInputs& in = m.inputs();
  const int d = m.problem().d;
  double dot = 0.0;
  for (int e = 0; e < d; ++e)
    dot +=
        static_cast<double>(in.q[static_cast<std::size_t>(row) * d + e]) * in.k[static_cast<std::size_t>(col) * d + e];
  return dot;
}

// (P~_ij V_j)[r, e] from the tile's P~ and the inputs: the term the O update adds.
double PvTerm(const Model& m, int r, int e) {
  const StepState& s = m.state();
  const int d = m.problem().d;
  double sum = 0.0;
  for (int c = 0; c < s.cols; ++c)
    sum += s.tile.p[static_cast<std::size_t>(r) * s.cols + c] *
           m.inputs().v[static_cast<std::size_t>(s.col_begin + c) * d + e];
  return sum;
}

// Whether the running statistics were already updated in this tile iteration at the current phase.
bool StatsUpdated(const Model& m) {
  const Phase p = PhaseOf(m);
  if (Kv(m)) return p == Phase::kUpdateStats || p == Phase::kUpdateO || p == Phase::kWriteBack;
  return p == Phase::kRowMax || p == Phase::kExp || p == Phase::kRowSum || p == Phase::kUpdateO;
}
// ℓ_i in the q order changes one phase later than m_i (at rowsum).
bool SumUpdated(const Model& m) {
  const Phase p = PhaseOf(m);
  if (Kv(m)) return StatsUpdated(m);
  return p == Phase::kRowSum || p == Phase::kUpdateO;
}

}  // namespace

// ---------------------------------------------------------------------------------------------------------
// [SECTION] inputs and the S/P~ tile
// ---------------------------------------------------------------------------------------------------------

Explanation ExplainInput(const Model& m, char matrix, int row, int e) {
  const AttentionProblem& p = m.problem();
  Explanation x;
  if (row < 0 || row >= p.n || e < 0 || e >= p.d) return MissingValue(std::string(1, matrix), "outside the matrix");
  const std::vector<float>& data = matrix == 'Q' ? m.inputs().q : matrix == 'K' ? m.inputs().k : m.inputs().v;
  x.available = true;
  x.value = data[static_cast<std::size_t>(row) * p.d + e];
  x.title = Sprintf("%c[%d, %d] = %s", matrix, row, e, Num(x.value, 5).c_str());
  if (matrix == 'Q') {
    const int i = row / p.br;
    x.lines.push_back(Sprintf("row %d is in Q tile i = %d (rows %d–%d of B_r = %d)", row, i, p.RowBegin(i),
                              p.RowBegin(i) + p.RowsInTile(i) - 1, p.br));
    x.lines.push_back(Kv(m) ? "Q_i is loaded from HBM at load_q of every tile pair (i, j)"
                            : "Q_i is loaded from HBM once, at load_q of row tile i");
  } else {
    const int j = row / p.bc;
    x.lines.push_back(Sprintf("key %d is in %c tile j = %d (rows %d–%d of B_c = %d)", row, matrix, j, p.ColBegin(j),
                              p.ColBegin(j) + p.ColsInTile(j) - 1, p.bc));
    x.lines.push_back(Kv(m) ? "K_j and V_j are loaded once, at load_kv of outer iteration j"
                            : "K_j and V_j are loaded at load_kv of every tile pair (i, j)");
  }
  if (matrix == 'K') x.lines.push_back(Sprintf("drawn transposed: Kᵀ[%d, %d]", e, row));
  if (matrix == 'V') x.lines.push_back(Sprintf("drawn transposed: Vᵀ[%d, %d]", e, row));
  return x;
}

Explanation ExplainScore(const Model& m, int r, int c) {
  const StepState& s = m.state();
  if (!LocalCell(m, r, c) || s.tile.s.empty())
    return MissingValue("S_ij", "S_ij does not exist at this step: it is computed at scores and lives only in SRAM");
  const AttentionProblem& p = m.problem();
  const int row = s.row_begin + r, col = s.col_begin + c;
  Explanation x;
  x.available = true;
  x.value = s.tile.s[static_cast<std::size_t>(r) * s.cols + c];
  x.title = Sprintf("S_ij[%d, %d] = S[%d, %d] = %s", r, c, row, col, Num(x.value, 5).c_str());
  if (p.Masked(row, col)) {
    x.lines.push_back(
        Sprintf("causal mask: key %d comes after query %d, so S = −∞ and its weight e^(−∞) = 0", col, row));
  } else {
    const double dot = Dot(m, row, col);
    x.lines.push_back(Sprintf("S[%d, %d] = scale · Σₑ Q[%d, e] · K[%d, e]   (d = %d terms)", row, col, row, col, p.d));
    // The d products, four to a line; past kShownTerms the rest are summed in one term, so a d = 128 tooltip
    // stays on screen.
    constexpr int kShownTerms = 16, kPerLine = 4;
    const int shown = p.d <= kShownTerms ? p.d : kShownTerms - 1;
    std::string line = "= " + Num(p.scale) + " × (";
    for (int e = 0; e < shown; ++e) {
      const std::size_t qe = static_cast<std::size_t>(row) * p.d + e, ke = static_cast<std::size_t>(col) * p.d + e;
      line += Sprintf("%s%s×%s", e % kPerLine ? " + " : "", Num(m.inputs().q[qe], 3).c_str(),
                      Num(m.inputs().k[ke], 3).c_str());
      if (e % kPerLine == kPerLine - 1 && e + 1 < p.d) {
        x.lines.push_back(line);
        line = "   + ";
      }
    }
    if (shown < p.d) {
      double rest = 0;
      for (int e = shown; e < p.d; ++e)
        rest += static_cast<double>(m.inputs().q[static_cast<std::size_t>(row) * p.d + e]) *
                m.inputs().k[static_cast<std::size_t>(col) * p.d + e];
      line += Sprintf("Σₑ₌%d…%d Q[%d, e]·K[%d, e] = %s", shown, p.d - 1, row, col, Num(rest, 4).c_str());
    }
    x.lines.push_back(line + ")");
    x.lines.push_back(Sprintf("= %s × %s = %s", Num(p.scale).c_str(), Num(dot, 5).c_str(), Num(x.value, 5).c_str()));
  }
  x.lines.push_back(Sprintf("computed in SRAM at scores of tile pair (i = %d, j = %d); never written to HBM",
                            s.info.i, s.info.j));
  return x;
}

Explanation ExplainProbability(const Model& m, int r, int c) {
  const StepState& s = m.state();
  if (!LocalCell(m, r, c) || s.tile.p.empty())
    return MissingValue("P~_ij", "P~_ij does not exist at this step: exp computes it, in place of S_ij");
  const std::size_t at = static_cast<std::size_t>(r) * s.cols + c;
  const double score = s.tile.s.empty() ? std::nan("") : s.tile.s[at];
  // kv subtracts the tile's own max m~_ij; q subtracts the running max m_i (= m_new after rowmax).
  const double shift = Kv(m) ? s.tile.m_tile[static_cast<std::size_t>(r)] : s.tile.m[static_cast<std::size_t>(r)];
  Explanation x;
  x.available = true;
  x.value = s.tile.p[at];
  // Global indices, as the S tooltip has them: the same cell is called the same in both.
  const int row = s.row_begin + r, col = s.col_begin + c;
  x.title = Sprintf("P~_ij[%d, %d] = P~[%d, %d] = %s", r, c, row, col, Num(x.value, 5).c_str());
  const char* shift_name = Kv(m) ? "m~_ij" : "m_i";
  x.lines.push_back(Sprintf("P~[%d, %d] = exp(S[%d, %d] − %s of row %d)", row, col, row, col, shift_name, row));
  if (std::isinf(score) && score < 0)
    x.lines.push_back("= exp(−∞) = 0   (a masked key)");
  else
    x.lines.push_back(Sprintf("= exp(%s − %s) = exp(%s) = %s", Num(score, 5).c_str(), Num(shift, 5).c_str(),
                              Num(score - shift, 4).c_str(), Num(x.value, 5).c_str()));
  x.lines.push_back(Kv(m) ? "unnormalized: each row's largest entry is exactly 1"
                          : "unnormalized, against the running max m_i: entries ≤ 1");
  return x;
}

Explanation ExplainScoreTile(const Model& m, int i, int j) {
  const AttentionProblem& p = m.problem();
  Explanation x;
  x.title = Sprintf("S tile (i = %d, j = %d): rows %d–%d, keys %d–%d", i, j, p.RowBegin(i),
                    p.RowBegin(i) + p.RowsInTile(i) - 1, p.ColBegin(j), p.ColBegin(j) + p.ColsInTile(j) - 1);
  const std::optional<std::int64_t> first = m.schedule().FirstStepOfPair(i, j);
  const std::int64_t last = first ? *first + m.phases_per_iteration() - 1 : 0;
  switch (m.PairStatus(i, j)) {
    case TileStatus::kMasked:
      x.lines.push_back("masked: every key of K_j comes after every query of Q_i (causal), so this pair does no work:");
      x.lines.push_back("no loads, no steps, no bytes");
      break;
    case TileStatus::kCurrent:
      x.available = true;
      x.lines.push_back(Sprintf("the current tile pair, steps %lld–%lld", static_cast<long long>(*first),
                                static_cast<long long>(last)));
      x.lines.push_back(m.state().tile.s.empty() ? "S_ij is not computed yet at this phase"
                        : m.state().tile.p.empty() ? "SRAM holds S_ij = scale · Q_i K_jᵀ"
                                                   : "SRAM holds P~_ij: exp overwrote S_ij in place");
      break;
    case TileStatus::kDone:
      x.lines.push_back(Sprintf("computed at steps %lld–%lld and then discarded:", static_cast<long long>(*first),
                                static_cast<long long>(last)));
      x.lines.push_back("S is never stored whole; only its running statistics m_i, ℓ_i and O_i remain");
      break;
    case TileStatus::kPending:
      x.lines.push_back(Sprintf("to be computed at steps %lld–%lld", static_cast<long long>(*first),
                                static_cast<long long>(last)));
      break;
  }
  return x;
}

// ---------------------------------------------------------------------------------------------------------
// [SECTION] statistics
// ---------------------------------------------------------------------------------------------------------

Explanation ExplainTileMax(const Model& m, int r) {
  const StepState& s = m.state();
  const char* name = Kv(m) ? "m~_ij" : "rowmax(S_ij)";
  if (!LocalRow(m, r) || s.tile.m_tile.empty() || s.tile.s.empty())
    return MissingValue(name, "not computed at this step (rowmax computes it from S_ij)");
  Explanation x;
  x.available = true;
  x.value = s.tile.m_tile[static_cast<std::size_t>(r)];
  int argmax = 0;
  for (int c = 1; c < s.cols; ++c)
    if (s.tile.s[static_cast<std::size_t>(r) * s.cols + c] > s.tile.s[static_cast<std::size_t>(r) * s.cols + argmax])
      argmax = c;
  x.title = Sprintf("%s[%d] = %s", name, r, Num(x.value, 5).c_str());
  x.lines.push_back(Sprintf("= max over c of S_ij[%d, c] = S[%d, %d] (key %d)", r, s.row_begin + r,
                            s.col_begin + argmax, s.col_begin + argmax));
  if (std::isinf(x.value)) x.lines.push_back("−∞: every key of this tile is masked for this row");
  return x;
}

Explanation ExplainTileSum(const Model& m, int r) {
  const StepState& s = m.state();
  const char* name = Kv(m) ? "ℓ~_ij" : "rowsum(P~_ij)";
  if (!LocalRow(m, r) || s.tile.l_tile.empty() || s.tile.p.empty())
    return MissingValue(name, "not computed at this step (rowsum computes it from P~_ij)");
  Explanation x;
  x.available = true;
  x.value = s.tile.l_tile[static_cast<std::size_t>(r)];
  x.title = Sprintf("%s[%d] = %s", name, r, Num(x.value, 5).c_str());
  if (s.cols <= 6) {
    std::string terms;
    for (int c = 0; c < s.cols; ++c)
      terms += (c ? " + " : "") + Num(s.tile.p[static_cast<std::size_t>(r) * s.cols + c], 3);
    x.lines.push_back("= Σ_c P~_ij[r, c] = " + terms + " = " + Num(x.value, 5));
  } else {
    x.lines.push_back(Sprintf("= Σ_c P~_ij[%d, c] over the B_c = %d keys of this tile", r, s.cols));
  }
  return x;
}

Explanation ExplainRunningMax(const Model& m, int r) {
  const StepState& s = m.state();
  if (!LocalRow(m, r) || s.tile.m.empty()) return MissingValue("m_i", "no Q tile on chip at this step");
  const auto k = static_cast<std::size_t>(r);
  Explanation x;
  x.available = true;
  x.value = s.tile.m[k];
  x.title = Sprintf("m_i[%d] = %s   (row %d)", r, Num(x.value, 5).c_str(), s.row_begin + r);
  const double old = s.tile.m_prev.empty() ? x.value : s.tile.m_prev[k];
  if (StatsUpdated(m) && !s.tile.m_tile.empty()) {
    const double tile_max = s.tile.m_tile[k];
    x.lines.push_back(Kv(m) ? "m_new = max(m_i, m~_ij)" : "m_i ← max(m_old, rowmax(S_ij))");
    x.lines.push_back(
        Sprintf("= max(%s, %s) = %s", Num(old, 5).c_str(), Num(tile_max, 5).c_str(), Num(x.value, 5).c_str()));
    switch (RowMaxChange(s.tile, r)) {
      case MaxChange::kFirst:
        x.lines.push_back("the row's first scores (m_old = −∞): α = 0, nothing earlier to rescale");
        break;
      case MaxChange::kGrew:
        x.lines.push_back("a new row maximum: the old ℓ_i and O_i are rescaled by α = e^(m_old − m_new) < 1");
        break;
      case MaxChange::kSame: x.lines.push_back("the maximum did not change: α = 1"); break;
      case MaxChange::kNoKeys: x.lines.push_back("every key so far is masked: still −∞, no maximum yet"); break;
      case MaxChange::kUnknown: break;
    }
  } else if (std::isinf(x.value)) {
    x.lines.push_back("−∞: no key seen yet for this row (the start value)");
  } else {
    x.lines.push_back("the maximum over the keys seen so far (before K/V tile j of this iteration)");
  }
  x.lines.push_back(Where(m));
  return x;
}

Explanation ExplainRunningSum(const Model& m, int r) {
  const StepState& s = m.state();
  if (!LocalRow(m, r) || s.tile.l.empty()) return MissingValue("ℓ_i", "no Q tile on chip at this step");
  const auto k = static_cast<std::size_t>(r);
  Explanation x;
  x.available = true;
  x.value = s.tile.l[k];
  x.title = Sprintf("ℓ_i[%d] = %s   (row %d)", r, Num(x.value, 5).c_str(), s.row_begin + r);
  const double old = s.tile.l_prev.empty() ? x.value : s.tile.l_prev[k];
  if (SumUpdated(m) && !s.tile.alpha.empty() && !s.tile.l_tile.empty()) {
    const double alpha = s.tile.alpha[k], tile_sum = s.tile.l_tile[k];
    if (Kv(m)) {
      const double beta = s.tile.beta[k];
      x.lines.push_back("ℓ_new = e^(m_i − m_new)·ℓ_i + e^(m~_ij − m_new)·ℓ~_ij");
      x.lines.push_back(Sprintf("= %s × %s + %s × %s = %s", Num(alpha, 4).c_str(), Num(old, 5).c_str(),
                                Num(beta, 4).c_str(), Num(tile_sum, 5).c_str(), Num(x.value, 5).c_str()));
    } else {
      x.lines.push_back("ℓ_i ← e^(m_old − m_new)·ℓ_i + rowsum(P~_ij)");
      x.lines.push_back(Sprintf("= %s × %s + %s = %s", Num(alpha, 4).c_str(), Num(old, 5).c_str(),
                                Num(tile_sum, 5).c_str(), Num(x.value, 5).c_str()));
    }
  } else {
    x.lines.push_back("the softmax denominator over the keys seen so far, relative to m_i");
  }
  x.lines.push_back(Where(m));
  return x;
}

Explanation ExplainRescale(const Model& m, int r) {
  const StepState& s = m.state();
  if (!LocalRow(m, r) || s.tile.alpha.empty()) return MissingValue("α", "α exists once the new row maximum is known");
  const auto k = static_cast<std::size_t>(r);
  Explanation x;
  x.available = true;
  x.value = s.tile.alpha[k];
  const double m_old = s.tile.m_prev[k], m_new = s.tile.m[k];
  x.title = Sprintf("α[%d] = e^(m_old − m_new) = %s", r, Num(x.value, 5).c_str());
  if (std::isinf(m_old))
    x.lines.push_back("m_old = −∞ (first tile of this row): α = 0, nothing old to keep");
  else
    x.lines.push_back(Sprintf("= e^(%s − %s) = e^(%s)", Num(m_old, 5).c_str(), Num(m_new, 5).c_str(),
                              Num(m_old - m_new, 4).c_str()));
  if (x.value < 1.0 && x.value > 0.0)
    x.lines.push_back("< 1: a new maximum appeared, so the old ℓ_i and O_i shrink by α");
  return x;
}

// ---------------------------------------------------------------------------------------------------------
// [SECTION] output
// ---------------------------------------------------------------------------------------------------------

Explanation ExplainTileOutput(const Model& m, int r, int e) {
  const StepState& s = m.state();
  const int d = m.problem().d;
  if (!LocalRow(m, r) || e < 0 || e >= d || s.tile.o.empty()) return MissingValue("O_i", "no O_i on chip at this step");
  const std::size_t at = static_cast<std::size_t>(r) * d + e;
  Explanation x;
  x.available = true;
  x.value = s.tile.o[at];
  x.title = Sprintf("O_i[%d, %d] = %s   (O[%d, %d])", r, e, Num(x.value, 5).c_str(), s.row_begin + r, e);
  const StepState* prev = m.previous();
  const bool prev_same_tile = prev && prev->info.i == s.info.i && !prev->tile.o.empty();
  const Phase phase = PhaseOf(m);
  if (phase == Phase::kUpdateO && prev_same_tile && !s.tile.p.empty()) {
    const auto k = static_cast<std::size_t>(r);
    const double o_old = prev->tile.o[at], pv = PvTerm(m, r, e), alpha = s.tile.alpha[k];
    if (Kv(m)) {
      const double l_old = s.tile.l_prev[k], beta = s.tile.beta[k], l_new = s.tile.l[k];
      x.lines.push_back("O_new = (ℓ_i·e^(m_i − m_new)·O_i + e^(m~_ij − m_new)·(P~_ij V_j)) / ℓ_new");
      x.lines.push_back(Sprintf("= (%s × %s × %s + %s × %s) / %s = %s", Num(l_old, 4).c_str(), Num(alpha, 4).c_str(),
                                Num(o_old, 4).c_str(), Num(beta, 4).c_str(), Num(pv, 5).c_str(), Num(l_new, 5).c_str(),
                                Num(x.value, 5).c_str()));
      x.lines.push_back("O_i stays normalized: the softmax-weighted average of V over the keys seen so far");
    } else {
      x.lines.push_back("O_i ← e^(m_old − m_new)·O_i + P~_ij V_j");
      x.lines.push_back(Sprintf("= %s × %s + %s = %s", Num(alpha, 4).c_str(), Num(o_old, 5).c_str(),
                                Num(pv, 5).c_str(), Num(x.value, 5).c_str()));
      x.lines.push_back("unnormalized until finalize divides by ℓ_i");
    }
  } else if (phase == Phase::kFinalize && prev_same_tile) {
    const double l = s.tile.l[static_cast<std::size_t>(r)];
    x.lines.push_back("O_i ← O_i / ℓ_i");
    x.lines.push_back(Sprintf("= %s / %s = %s", Num(prev->tile.o[at], 5).c_str(), Num(l, 5).c_str(),
                              Num(x.value, 5).c_str()));
  } else if (Kv(m) && phase == Phase::kLoadQ) {
    x.lines.push_back("as loaded from HBM (the value after the previous K/V tiles)");
  } else {
    x.lines.push_back(Kv(m) ? "normalized over the K/V tiles seen so far"
                            : "unnormalized (divided by ℓ_i at finalize)");
  }
  x.lines.push_back(Where(m));
  return x;
}

Explanation ExplainHbmOutput(const Model& m, int row, int e) {
  const AttentionProblem& p = m.problem();
  const HbmOutput* out = m.hbm_output();
  if (row < 0 || row >= p.n || e < 0 || e >= p.d) return MissingValue("O", "outside the matrix");
  if (!out) return MissingValue("O", "O in HBM is being computed");
  const int i = row / p.br;
  Explanation x;
  x.title = Sprintf("O[%d, %d] in HBM", row, e);
  if (!m.OutputTileWritten(i)) {
    x.lines.push_back(Sprintf("not written yet: O_%d reaches HBM at write_back of Q tile i = %d", i, i));
    return x;
  }
  x.available = true;
  x.value = out->values[static_cast<std::size_t>(row) * p.d + e];
  x.title += " = " + Num(x.value, 5);
  double ref = 0.0;
  if (const Reference* full = m.reference()) {
    ref = full->o[static_cast<std::size_t>(row) * p.d + e];
  } else {  // still being computed: this one row costs N·d
    std::vector<double> exact(static_cast<std::size_t>(p.d));
    ReferenceAttentionRows(m.inputs().q.data(), m.inputs().k.data(), m.inputs().v.data(), p.n, p.d, p.scale, p.causal,
                           row, row + 1, exact.data());
    ref = exact[static_cast<std::size_t>(e)];
  }
  x.lines.push_back(Sprintf("exact (all keys, float64): %s   |difference| = %s", Num(ref, 5).c_str(),
                            Num(std::abs(ref - x.value), 3).c_str()));
  x.lines.push_back(Sprintf("row %d is in O tile i = %d; as it stands after step %lld%s", row, i,
                            static_cast<long long>(out->step), m.hbm_output_current() ? "" : " (updating)"));
  if (Kv(m)) x.lines.push_back("kv order: O_i is rewritten after every K/V tile, normalized over the keys seen so far");
  return x;
}

void ShowExplanation(const Explanation& x) {
  ImGui::BeginTooltip();
  SectionTitle(x.title.c_str());
  for (const std::string& line : x.lines) MathText(line.c_str());
  ImGui::EndTooltip();
}

}  // namespace flashviz
