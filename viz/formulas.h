// Hover explanations: a value, where it came from (tile, phase, step) and its formula with the actual numbers
// substituted, for every cell a view shows (S, P~, m~, ℓ~, m, ℓ, O and the inputs). Everything is read from the
// model (the stepper's StepState and the inputs); `value` is the number the view displays, so the tests can
// hold it against an independent computation. Text uses MathText's "X~" for X̃.
#pragma once

#include <limits>
#include <string>
#include <vector>

#include "viz/model.h"

namespace flashviz {

struct Explanation {
  bool available = false;  // false: the value does not exist at this step (lines say why)
  double value = std::numeric_limits<double>::quiet_NaN();
  std::string title;
  std::vector<std::string> lines;
};

// The two ways every explainer below begins: a value that does not exist at this step (`title` and why), and a
// value under its title, the caller adding the lines that say where it came from.
Explanation MissingValue(std::string title, std::string why);
Explanation ExplainedValue(double value, std::string title);

// Q, K or V (`matrix` 'Q', 'K', 'V') at (row, e): its value and the tile it belongs to.
Explanation ExplainInput(const Model& model, char matrix, int row, int e);
// Cells of the current tile, by local row r < B_r and column c < B_c.
Explanation ExplainScore(const Model& model, int r, int c);        // S_ij[r, c]
Explanation ExplainProbability(const Model& model, int r, int c);  // P~_ij[r, c]
Explanation ExplainTileMax(const Model& model, int r);             // m~_ij[r] (kv) or rowmax(S_ij)[r] (q)
Explanation ExplainTileSum(const Model& model, int r);             // ℓ~_ij[r] (kv) or rowsum(P~_ij)[r] (q)
Explanation ExplainRunningMax(const Model& model, int r);          // m_i[r] after the step
Explanation ExplainRunningSum(const Model& model, int r);          // ℓ_i[r] after the step
Explanation ExplainRescale(const Model& model, int r);             // α[r] = e^(m_old − m_new)
Explanation ExplainTileOutput(const Model& model, int r, int e);   // O_i[r, e] on chip after the step
// O as it stands in HBM at (row, e), with the exact value for comparison.
Explanation ExplainHbmOutput(const Model& model, int row, int e);
// A tile of the S view: its status and, for the current one, what it holds.
Explanation ExplainScoreTile(const Model& model, int i, int j);

// The backward pass (backward_formulas.cpp), cells of the current tile pair by local row r and column c:
Explanation ExplainBackwardScore(const Model& model, int r, int c);        // S_ij[r, c], recomputed
Explanation ExplainBackwardProbability(const Model& model, int r, int c);  // P_ij[r, c] = exp(S − L_i)
Explanation ExplainGradP(const Model& model, int r, int c);                // dP_ij[r, c] = dO_i V_jᵀ
Explanation ExplainGradS(const Model& model, int r, int c);                // dS_ij[r, c] = P ∘ (dP − D_i)
Explanation ExplainDelta(const Model& model, int r);                       // D_i[r] = rowsum(dO ∘ O)
Explanation ExplainLse(const Model& model, int r);                         // L_i[r]
Explanation ExplainGradKv(const Model& model, char which, int c, int e);   // dK_j or dV_j [c, e] on chip
Explanation ExplainGradQ(const Model& model, int r, int e);                // dQ_i[r, e] as it stands in HBM
Explanation ExplainHbmGradient(const Model& model, int row, int e);        // dQ in HBM (the output view)

// Shows an explanation as the tooltip of whatever is hovered (call while it is).
void ShowExplanation(const Explanation& explanation);

}  // namespace flashviz
