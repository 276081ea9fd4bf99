// Decoding's words and numbers: the hover explanation of every value the decode view shows (the split's scores,
// probabilities, m_s, ℓ_s and O_s; the merge's M, α_s, ℓ and O) with the numbers substituted, and the narration
// line. Each is computed from the decode stepper's state (Model::decode_state) and the inputs; the tests recompute
// them from Q, K and V with the plain definitions.
#pragma once

#include <string>

#include "viz/formulas.h"
#include "viz/model.h"

namespace flashviz {

// "head 3, row 0" for row r of KV head g's group (query head FirstHeadOf(g) + r / R, row r mod R).
std::string DecodeRowName(const DecodeProblem& problem, int g, int r);
// The split's cells (r < rows, c < its keys) and rows.
Explanation ExplainDecodeScore(const Model& model, int r, int c);        // S[r, c] = scale · q · k
Explanation ExplainDecodeProbability(const Model& model, int r, int c);  // P~[r, c] = exp(S − m_s)
Explanation ExplainDecodeSplitMax(const Model& model, int r);            // m_s
Explanation ExplainDecodeSplitSum(const Model& model, int r);            // ℓ_s
Explanation ExplainDecodeSplitOutput(const Model& model, int r, int e);  // O_s[r, e] = Σ P~ V
// The merge's (merge_stats, merge_o, write_o of a merge).
Explanation ExplainDecodeMergeMax(const Model& model, int r);            // M = max_s m_s
Explanation ExplainDecodeAlpha(const Model& model, int r, int s);        // α_s = e^(m_s − M)
Explanation ExplainDecodeMergeSum(const Model& model, int r);            // ℓ = Σ_s α_s ℓ_s
Explanation ExplainDecodeMergeOutput(const Model& model, int r, int e);  // Σ α_s O_s so far; O = that / ℓ at write_o
// A split's partial as written to HBM (m_s, ℓ_s of row r).
Explanation ExplainDecodePartial(const Model& model, int s, int r);

// The narration line of the current decode step.
std::string NarrateDecode(const Model& model);

}  // namespace flashviz
