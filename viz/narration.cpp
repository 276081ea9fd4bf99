#include "viz/narration.h"

#include <cctype>
#include <cmath>
#include <vector>

#include "kernels/common/format.h"

namespace flashviz {
namespace {

std::string Rows(const AttentionProblem& p, int i) {
  return Sprintf("rows %d–%d", p.RowBegin(i), p.RowBegin(i) + p.RowsInTile(i) - 1);
}
std::string Keys(const AttentionProblem& p, int j) {
  return Sprintf("keys %d–%d", p.ColBegin(j), p.ColBegin(j) + p.ColsInTile(j) - 1);
}

// The backward pass (FlashAttention-2's), one sentence or two per phase, with the step's own numbers.
std::string NarrateBackward(const Model& model) {
  const AttentionProblem& p = model.problem();
  const StepState& s = model.state();
  const int i = s.info.i, j = s.info.j;
  const std::string read = HumanBytes(static_cast<double>(s.delta.HbmReadBytes()));
  const std::string written = HumanBytes(static_cast<double>(s.delta.HbmWriteBytes()));
  switch (s.info.phase) {
    case Phase::kInit:
      return Sprintf("init: dQ = 0 is written to HBM (%s): every K/V tile will add its share into it. O and the "
                     "log-sum-exp L are already there, saved by the forward pass; S and P were not kept.",
                     written.c_str());
    case Phase::kDelta:
      return Sprintf("delta: O_i and dO_i (i = %d of T_r = %d, %s) come from HBM (%s) and D_i = rowsum(dO_i ∘ O_i) "
                     "goes back (%s). This preprocessing pass lets dS_ij be computed later without O_i.",
                     i, p.tr(), Rows(p, i).c_str(), read.c_str(), written.c_str());
    case Phase::kLoadKv:
      return Sprintf("load_kv: K_j and V_j (j = %d of T_c = %d, %s) come from HBM into SRAM (%s); dK_j = dV_j = 0 "
                     "start on chip and stay there while %s visits them.",
                     j, p.tc(), Keys(p, j).c_str(), read.c_str(),
                     p.causal ? "each Q tile with a query at or after their first key" : "every Q tile");
    case Phase::kLoadQ:
      return Sprintf("load_q: Q_i, dO_i, L_i and D_i (i = %d of T_r = %d, %s) come from HBM (%s). Everything the "
                     "gradients of this tile pair need is now on chip.",
                     i, p.tr(), Rows(p, i).c_str(), read.c_str());
    case Phase::kScores:
      return Sprintf("scores: S_ij = scale·Q_i K_jᵀ is computed again (scale %s), %d × %d on chip: the recomputation "
                     "costs FLOPs but saves the N × N matrix P that standard attention stores and reads back.",
                     Sprintf("%.4g", p.scale).c_str(), s.rows, s.cols);
    case Phase::kProbs:
      return "probs: P_ij = exp(S_ij − L_i) in place of S_ij. L_i is the whole row's log-sum-exp, so these are the "
             "final softmax probabilities at once: no running maximum, no rescaling.";
    case Phase::kGradV:
      return "grad_v: dV_j += P_ijᵀ dO_i. Each key of the tile collects the output gradients of the queries that "
             "attended to it, weighted by how much they did; dV_j stays in SRAM.";
    case Phase::kGradP:
      return "grad_p: dP_ij = dO_i V_jᵀ, the gradient of every probability of the tile, in a second B_r × B_c "
             "buffer on chip.";
    case Phase::kGradS:
      return "grad_s: dS_ij = P_ij ∘ (dP_ij − D_i), the softmax's gradient, in place of dP_ij. "
             "D_i = rowsum(dO_i ∘ O_i) stands in for rowsum(P_i ∘ dP_i) over the whole row, which no single tile "
             "could compute.";
    case Phase::kGradK:
      return Sprintf("grad_k: dK_j += scale·dS_ijᵀ Q_i (scale %s), on chip with dV_j.",
                     Sprintf("%.4g", p.scale).c_str());
    case Phase::kGradQ:
      return Sprintf("grad_q: dQ_i is read from HBM, scale·dS_ij K_j is added and it is written back (%s read, %s "
                     "written). On a GPU the blocks of other K/V tiles add into the same rows at the same time: "
                     "atomicAdd.",
                     read.c_str(), written.c_str());
    case Phase::kWriteGrads:
      return Sprintf("write_dk_dv: dK_j and dV_j are complete after every Q tile and go to HBM once (%s).",
                     written.c_str());
    case Phase::kDone: {
      const double flash = static_cast<double>(model.final_ledger().HbmBytes());
      const double standard = static_cast<double>(model.standard_ledger().HbmBytes());
      return Sprintf("done: dQ, dK and dV are complete. The backward pass moved %s through HBM; standard attention's "
                     "backward, which reads the stored P and writes dP and dS, would move %s (%.2f× as much).",
                     HumanBytes(flash).c_str(), HumanBytes(standard).c_str(), flash > 0 ? standard / flash : 0.0);
    }
    default: break;
  }
  return "";
}

}  // namespace

std::string RescaleSummary(const StepState& state) {
  const MaxChangeCounts c = CountMaxChanges(state.tile);
  if (!c.known()) return "";
  const int rows = c.first + c.grew + c.same + c.no_keys;
  const auto of = [rows](int n) {
    if (n != rows) return Sprintf("%d of %d rows", n, rows);
    return rows == 1 ? std::string("the row") : rows == 2 ? std::string("both rows") : Sprintf("all %d rows", rows);
  };
  std::vector<std::string> parts;
  if (c.first > 0)
    parts.push_back(
        Sprintf("first scores in %s: m_old = −∞, so α = 0 (nothing earlier to rescale)", of(c.first).c_str()));
  if (c.grew > 0)
    parts.push_back(Sprintf("a new maximum in %s: their ℓ_i and O_i shrink by α = e^(m_old − m_new) ≥ %s",
                            of(c.grew).c_str(), Sprintf("%.3g", c.min_grew_alpha).c_str()));
  if (c.same > 0) parts.push_back(Sprintf("no new maximum in %s: α = 1", of(c.same).c_str()));
  if (c.no_keys > 0) parts.push_back(Sprintf("every key masked so far in %s: no maximum yet", of(c.no_keys).c_str()));
  std::string sentence;
  for (std::size_t k = 0; k < parts.size(); ++k) sentence += (k == 0 ? "" : "; ") + parts[k];
  sentence[0] = static_cast<char>(std::toupper(static_cast<unsigned char>(sentence[0])));
  return sentence + ".";
}

std::string Narrate(const Model& model) {
  if (!model.has_problem()) return "No problem loaded.";
  if (model.problem().backward()) return NarrateBackward(model);
  const AttentionProblem& p = model.problem();
  const StepState& s = model.state();
  const int i = s.info.i, j = s.info.j;
  const bool kv = p.order == LoopOrder::kKvOuter;
  const std::string read = HumanBytes(static_cast<double>(s.delta.HbmReadBytes()));
  const std::string written = HumanBytes(static_cast<double>(s.delta.HbmWriteBytes()));
  switch (s.info.phase) {
    case Phase::kInit:
      return Sprintf("init: O = 0, ℓ = 0 and m = −∞ are written to HBM (%s). Nothing is on chip yet; "
                     "Algorithm 1 streams K/V tiles in the outer loop.",
                     written.c_str());
    case Phase::kLoadKv:
      if (kv)
        return Sprintf("load_kv: K_j and V_j (j = %d of T_c = %d, %s) come from HBM into SRAM: %s. They stay on "
                       "chip while %s visits them.",
                       j, p.tc(), Keys(p, j).c_str(), read.c_str(),
                       p.causal ? "each Q tile with a query at or after their first key" : "every Q tile");
      return Sprintf(
          "load_kv: K_j and V_j (j = %d of T_c = %d, %s) come from HBM for Q tile i = %d: %s. In the Q-outer "
          "order K and V are streamed once per Q tile.",
          j, p.tc(), Keys(p, j).c_str(), i, read.c_str());
    case Phase::kLoadQ:
      if (kv)
        return Sprintf("load_q: Q_i, O_i, ℓ_i and m_i (i = %d of T_r = %d, %s) come from HBM: %s. With K/V outside, "
                       "the running state of every Q tile goes through HBM on every K/V tile%s.",
                       i, p.tr(), Rows(p, i).c_str(), read.c_str(),
                       p.causal ? " it meets (the causal mask skips the pairs above the diagonal)" : "");
      return Sprintf("load_q: Q_i (i = %d of T_r = %d, %s) comes from HBM (%s); m_i = −∞, ℓ_i = 0 and O_i = 0 start "
                     "on chip and stay there until write_back.",
                     i, p.tr(), Rows(p, i).c_str(), read.c_str());
    case Phase::kScores:
      return Sprintf(
          "scores: S_ij = scale·Q_i K_jᵀ (scale %s), a tile of %d × %d computed on chip. It is never written to "
          "HBM: the next tile pair overwrites it.",
          Sprintf("%.4g", p.scale).c_str(), s.rows, s.cols);
    case Phase::kRowMax:
      if (kv) return "rowmax: m~_ij = rowmax(S_ij), the largest score of each row within this tile.";
      return "rowmax: m_i ← max(m_i, rowmax S_ij). " + RescaleSummary(s);
    case Phase::kExp:
      return kv ? "exp: P~_ij = exp(S_ij − m~_ij) overwrites S_ij in place; every entry is in (0, 1], each row's "
                  "largest is 1."
                : "exp: P~_ij = exp(S_ij − m_i) with the running maximum, in place of S_ij; entries are in [0, 1].";
    case Phase::kRowSum:
      if (kv) return "rowsum: ℓ~_ij = rowsum(P~_ij), this tile's share of the softmax denominator.";
      return "rowsum: ℓ_i ← α·ℓ_i + rowsum(P~_ij): the old sum is rescaled to the new maximum, then this tile adds "
             "its share.";
    case Phase::kUpdateStats:
      return "update_stats: m_new = max(m_i, m~_ij), ℓ_new = e^(m_i − m_new)ℓ_i + e^(m~_ij − m_new)ℓ~_ij. " +
             RescaleSummary(s);
    case Phase::kUpdateO:
      if (kv)
        return "update_o: O_i ← diag(ℓ_new)⁻¹(diag(ℓ_i)e^(m_i − m_new)O_i + e^(m~_ij − m_new)P~_ij V_j): O_i stays the "
               "softmax-weighted average of V over the keys seen so far.";
      return "update_o: O_i ← diag(α)O_i + P~_ij V_j, unnormalized: the division by ℓ_i waits until finalize.";
    case Phase::kWriteBack:
      if (kv)
        return Sprintf("write_back: O_i, ℓ_i ← ℓ_new and m_i ← m_new go back to HBM (%s); SRAM keeps only K_j, V_j.",
                       written.c_str());
      return Sprintf(
          "write_back: O_i and L_i = m_i + log ℓ_i (for the backward pass) go to HBM (%s); row tile i = %d is "
          "finished.",
          written.c_str(), i);
    case Phase::kFinalize:
      return "finalize: O_i ← diag(ℓ_i)⁻¹ O_i, the only division, once per row after the last K/V tile.";
    case Phase::kDone: {
      const double flash = static_cast<double>(model.final_ledger().HbmBytes());
      const double standard = static_cast<double>(model.standard_ledger().HbmBytes());
      return Sprintf("done: O is complete. FlashAttention moved %s through HBM; standard attention would move %s "
                     "(%.2f× as much).",
                     HumanBytes(flash).c_str(), HumanBytes(standard).c_str(), flash > 0 ? standard / flash : 0.0);
    }
    default: break;  // the backward pass's phases: NarrateBackward
  }
  return "";
}

}  // namespace flashviz
