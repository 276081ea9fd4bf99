// The pseudocode tables (the papers' and the assignment's text, line for line) and the kernel-source markers.
#include "viz/algorithm.h"

#include <algorithm>

#include "kernels/common/format.h"
#include "kernels/common/input_error.h"
#include "viz/embedded_files.h"
#include "viz/widgets.h"

namespace flashviz {
namespace {

using P = Phase;

// FlashAttention (arXiv:2205.14135), Algorithm 1, the K/V-outer forward pass.
Pseudocode PaperAlgorithm1() {
  return {"Algorithm 1: FlashAttention (Dao et al., 2022)",
          "arXiv:2205.14135, Algorithm 1 (docs/sources.md)",
          {{"1", "Set block sizes B_c = ⌈M/4d⌉, B_r = min(⌈M/4d⌉, d).", 0, {}},
           {"2", "Initialize O = (0)_N×d, ℓ = (0)_N, m = (−∞)_N in HBM.", 0, {P::kInit}},
           {"3", "Divide Q into T_r = ⌈N/B_r⌉ blocks Q_i of size B_r × d, and K, V into T_c = ⌈N/B_c⌉ blocks "
                 "K_j, V_j of size B_c × d.", 0, {}},
           {"4", "Divide O into T_r blocks O_i, ℓ into T_r blocks ℓ_i, m into T_r blocks m_i.", 0, {}},
           {"5", "for 1 ≤ j ≤ T_c do", 0, {}, false, 'j'},
           {"6", "Load K_j, V_j from HBM to on-chip SRAM.", 1, {P::kLoadKv}},
           {"7", "for 1 ≤ i ≤ T_r do", 1, {}, false, 'i'},
           {"", "(causal: skip i when every key of K_j comes after every query of Q_i)", 2, {}, true},
           {"8", "Load Q_i, O_i, ℓ_i, m_i from HBM to on-chip SRAM.", 2, {P::kLoadQ}},
           {"9", "On chip, compute S_ij = Q_i K_jᵀ ∈ ℝ^(B_r×B_c).", 2, {P::kScores}},
           {"10", "On chip, compute m~_ij = rowmax(S_ij), P~_ij = exp(S_ij − m~_ij) (pointwise), "
                  "ℓ~_ij = rowsum(P~_ij).", 2, {P::kRowMax, P::kExp, P::kRowSum}},
           {"11", "On chip, compute m_i^new = max(m_i, m~_ij), ℓ_i^new = e^(m_i − m_i^new) ℓ_i + "
                  "e^(m~_ij − m_i^new) ℓ~_ij.", 2, {P::kUpdateStats}},
           {"12", "Write O_i ← diag(ℓ_i^new)⁻¹(diag(ℓ_i) e^(m_i − m_i^new) O_i + e^(m~_ij − m_i^new) P~_ij V_j) "
                  "to HBM.", 2, {P::kUpdateO}},
           {"13", "Write ℓ_i ← ℓ_i^new, m_i ← m_i^new to HBM.", 2, {P::kWriteBack}},
           {"14", "end for", 1, {}},
           {"15", "end for", 0, {}},
           {"16", "Return O.", 0, {P::kDone}}}};
}

// The course assignment's Algorithm 1 (CS542200 HW4, docs/sources.md): the same loop, 17 lines (the division
// of Q and of K, V on two lines, the O update and its write-back apart).
Pseudocode AssignmentAlgorithm1() {
  return {"Algorithm 1: FlashAttention, as the course assignment (HW4) numbers it",
          "CS542200 HW4 (docs/sources.md)",
          {{"1", "Set block sizes B_c = ⌈M/4d⌉, B_r = min(⌈M/4d⌉, d).", 0, {}},
           {"2", "Initialize O = 0_N×d, ℓ = 0_N, m = −∞_N in HBM.", 0, {P::kInit}},
           {"3", "Divide Q into T_r = ⌈N/B_r⌉ blocks Q_1 … Q_T_r of size B_r × d.", 0, {}},
           {"4", "Divide K, V into T_c = ⌈N/B_c⌉ blocks K_1 … K_T_c and V_1 … V_T_c of size B_c × d.", 0, {}},
           {"5", "Divide O into T_r blocks O_i, ℓ into T_r blocks ℓ_i, m into T_r blocks m_i.", 0, {}},
           {"6", "for j = 1 to T_c do", 0, {}, false, 'j'},
           {"7", "Load K_j, V_j from HBM to on-chip SRAM.", 1, {P::kLoadKv}},
           {"8", "for i = 1 to T_r do", 1, {}, false, 'i'},
           {"", "(causal: skip i when every key of K_j comes after every query of Q_i)", 2, {}, true},
           {"9", "Load Q_i, O_i, ℓ_i, m_i from HBM to SRAM.", 2, {P::kLoadQ}},
           {"10", "On chip, compute S_ij = Q_i K_jᵀ ∈ ℝ^(B_r×B_c).", 2, {P::kScores}},
           {"11", "Compute m~_ij = rowmax(S_ij), P~_ij = exp(S_ij − m~_ij), ℓ~_ij = rowsum(P~_ij).", 2,
            {P::kRowMax, P::kExp, P::kRowSum}},
           {"12", "Compute m_i^new = max(m_i, m~_ij), ℓ_i^new = e^(m_i − m_i^new)·ℓ_i + e^(m~_ij − m_i^new)·ℓ~_ij.",
            2, {P::kUpdateStats}},
           {"13", "Update output: O_i ← diag(ℓ_i^new)⁻¹(diag(ℓ_i) e^(m_i − m_i^new) O_i + e^(m~_ij − m_i^new) "
                  "P~_ij V_j).", 2, {P::kUpdateO}},
           {"14", "Write O_i, ℓ_i ← ℓ_i^new, m_i ← m_i^new back to HBM.", 2, {P::kWriteBack}},
           {"15", "end for", 1, {}},
           {"16", "end for", 0, {}},
           {"17", "return O", 0, {P::kDone}}}};
}

// FlashAttention-2 (arXiv:2307.08691), Algorithm 1, the Q-outer forward pass.
Pseudocode FlashAttention2Forward() {
  return {"Algorithm 1: FlashAttention-2 forward pass (Dao, 2023)",
          "arXiv:2307.08691, Algorithm 1 (docs/sources.md)",
          {{"1", "Divide Q into T_r = ⌈N/B_r⌉ blocks Q_i of size B_r × d, and K, V into T_c = ⌈N/B_c⌉ blocks "
                 "K_j, V_j of size B_c × d.", 0, {}},
           {"2", "Divide O into T_r blocks O_i of size B_r × d, and the logsumexp L into T_r blocks L_i.", 0, {}},
           {"3", "for 1 ≤ i ≤ T_r do", 0, {}, false, 'i'},
           {"4", "Load Q_i from HBM to on-chip SRAM.", 1, {P::kLoadQ}},
           {"5", "On chip, initialize O_i = (0)_B_r×d, ℓ_i = (0)_B_r, m_i = (−∞)_B_r.", 1, {P::kLoadQ}},
           {"6", "for 1 ≤ j ≤ T_c do", 1, {}, false, 'j'},
           {"", "(causal: the loop ends at the diagonal tile; keys after the query are −∞ in S)", 2, {}, true},
           {"7", "Load K_j, V_j from HBM to on-chip SRAM.", 2, {P::kLoadKv}},
           {"8", "On chip, compute S_ij = Q_i K_jᵀ ∈ ℝ^(B_r×B_c).", 2, {P::kScores}},
           {"9", "On chip, compute m_i^(j) = max(m_i^(j−1), rowmax(S_ij)), P~_ij = exp(S_ij − m_i^(j)) (pointwise), "
                 "ℓ_i^(j) = e^(m_i^(j−1) − m_i^(j)) ℓ_i^(j−1) + rowsum(P~_ij).", 2, {P::kRowMax, P::kExp, P::kRowSum}},
           {"10", "On chip, compute O_i^(j) = diag(e^(m_i^(j−1) − m_i^(j))) O_i^(j−1) + P~_ij V_j.", 2, {P::kUpdateO}},
           {"11", "end for", 1, {}},
           {"12", "On chip, compute O_i = diag(ℓ_i^(T_c))⁻¹ O_i^(T_c).", 1, {P::kFinalize}},
           {"13", "On chip, compute L_i = m_i^(T_c) + log(ℓ_i^(T_c)).", 1, {P::kWriteBack}},
           {"14", "Write O_i to HBM as the i-th block of O.", 1, {P::kWriteBack}},
           {"15", "Write L_i to HBM as the i-th block of L.", 1, {P::kWriteBack}},
           {"16", "end for", 0, {}},
           {"17", "Return the output O and the logsumexp L.", 0, {P::kDone}}}};
}

// FlashAttention-2 (arXiv:2307.08691), Algorithm 2, the backward pass, as the model runs it: the paper's line 9
// also loads O_i and dQ_i, which the model leaves out (D_i replaces O_i; dQ_i is read where line 15 updates it),
// and the paper folds the scale into S where the model writes it out.
Pseudocode FlashAttention2Backward() {
  return {"Algorithm 2: FlashAttention-2 backward pass (Dao, 2023)",
          "arXiv:2307.08691, Algorithm 2 (docs/sources.md); line 9 as the model loads it, the scale written out",
          {{"", "Require: Q, K, V, O, dO ∈ ℝ^(N×d) and the logsumexp L ∈ ℝ^N in HBM (saved by the forward pass).", 0,
            {}},
           {"1", "Divide Q into T_r = ⌈N/B_r⌉ blocks Q_i of size B_r × d, and K, V into T_c = ⌈N/B_c⌉ blocks "
                 "K_j, V_j of size B_c × d.", 0, {}},
           {"2", "Divide O, dO into T_r blocks O_i, dO_i of size B_r × d, and L into T_r blocks L_i of size B_r.", 0,
            {}},
           {"3", "Initialize dQ = (0)_N×d in HBM and divide it into T_r blocks dQ_i. Divide dK, dV into T_c blocks "
                 "dK_j, dV_j.", 0, {P::kInit}},
           {"4", "Compute D = rowsum(dO ∘ O) ∈ ℝ^N (pointwise multiply), write D to HBM and divide it into T_r "
                 "blocks D_i.", 0, {P::kDelta}},
           {"5", "for 1 ≤ j ≤ T_c do", 0, {}, false, 'j'},
           {"6", "Load K_j, V_j from HBM to on-chip SRAM.", 1, {P::kLoadKv}},
           {"7", "Initialize dK_j = (0)_B_c×d, dV_j = (0)_B_c×d on SRAM.", 1, {P::kLoadKv}},
           {"8", "for 1 ≤ i ≤ T_r do", 1, {}, false, 'i'},
           {"", "(causal: skip i when every key of K_j comes after every query of Q_i)", 2, {}, true},
           {"9", "Load Q_i, dO_i, L_i, D_i from HBM to on-chip SRAM.", 2, {P::kLoadQ}},
           {"10", "On chip, compute S_ij = scale·Q_i K_jᵀ ∈ ℝ^(B_r×B_c).", 2, {P::kScores}},
           {"11", "On chip, compute P_ij = exp(S_ij − L_i) ∈ ℝ^(B_r×B_c).", 2, {P::kProbs}},
           {"12", "On chip, compute dV_j ← dV_j + P_ijᵀ dO_i ∈ ℝ^(B_c×d).", 2, {P::kGradV}},
           {"13", "On chip, compute dP_ij = dO_i V_jᵀ ∈ ℝ^(B_r×B_c).", 2, {P::kGradP}},
           {"14", "On chip, compute dS_ij = P_ij ∘ (dP_ij − D_i) ∈ ℝ^(B_r×B_c).", 2, {P::kGradS}},
           {"15", "Load dQ_i from HBM to SRAM, then on chip update dQ_i ← dQ_i + scale·dS_ij K_j ∈ ℝ^(B_r×d), and "
                  "write back to HBM.", 2, {P::kGradQ}},
           {"16", "On chip, compute dK_j ← dK_j + scale·dS_ijᵀ Q_i ∈ ℝ^(B_c×d).", 2, {P::kGradK}},
           {"17", "end for", 1, {}},
           {"18", "Write dK_j, dV_j to HBM.", 1, {P::kWriteGrads}},
           {"19", "end for", 0, {}},
           {"20", "Return dQ, dK, dV.", 0, {P::kDone}}}};
}

KernelSource LoadEmbedded(std::string_view name, std::string_view kernel, std::string_view folder = "") {
  for (const EmbeddedFile& file : EmbeddedKernelSources())
    if (file.name == name)
      return ParseKernelSource("kernels/cuda/" + std::string(folder) + std::string(name), kernel, file.text);
  throw InputError("kernels/cuda/" + std::string(name) + " was not embedded");
}

}  // namespace

const Pseudocode& PseudocodeFor(LoopOrder order, PseudocodeVersion version) {
  static const Pseudocode paper = PaperAlgorithm1(), assignment = AssignmentAlgorithm1(),
                          fa2 = FlashAttention2Forward();
  if (order == LoopOrder::kQOuter) return fa2;
  return version == PseudocodeVersion::kAssignment ? assignment : paper;
}

const Pseudocode& PseudocodeFor(const AttentionProblem& problem, PseudocodeVersion version) {
  static const Pseudocode backward = FlashAttention2Backward();
  if (problem.backward()) return backward;
  return PseudocodeFor(problem.order, version);
}

std::string PseudocodeLineOf(const Pseudocode& code, Phase phase) {
  for (const PseudocodeLine& line : code.lines)
    if (!line.number.empty() && std::find(line.phases.begin(), line.phases.end(), phase) != line.phases.end())
      return line.number;
  return "";
}

KernelSource ParseKernelSource(std::string_view file, std::string_view kernel, std::string_view text) {
  KernelSource source;
  source.file = std::string(file);
  source.kernel = std::string(kernel);
  for (std::size_t at = 0; at <= text.size();) {
    const std::size_t end = text.find('\n', at);
    if (end == std::string_view::npos) {
      if (at < text.size()) source.lines.emplace_back(text.substr(at));
      break;
    }
    source.lines.emplace_back(text.substr(at, end - at));
    at = end + 1;
  }
  constexpr std::string_view kMarker = "// @phase";
  SourceRegion* open = nullptr;
  for (int k = 0; k < static_cast<int>(source.lines.size()); ++k) {
    const std::string& line = source.lines[static_cast<std::size_t>(k)];
    const std::size_t marker = line.find(kMarker);
    if (marker == std::string::npos || line.find_first_not_of(' ') != marker) continue;
    if (open) open->last_line = k;  // the line before this marker (1-based k)
    open = nullptr;
    source.marker_lines.push_back(k + 1);
    std::vector<Phase> phases;
    bool end = false;
    std::size_t from = marker + kMarker.size();
    while (from < line.size()) {
      const std::size_t word = line.find_first_not_of(' ', from);
      if (word == std::string::npos) break;
      const std::size_t stop = std::min(line.find(' ', word), line.size());
      const std::string name = line.substr(word, stop - word);
      if (name == "end") {
        end = true;
      } else if (const auto phase = ParsePhase(name)) {
        phases.push_back(*phase);
      } else {
        throw InputError(Sprintf("%s:%d: \"%s\" is not a phase name", source.file.c_str(), k + 1, name.c_str()));
      }
      from = stop;
    }
    if (end) continue;
    if (phases.empty()) throw InputError(Sprintf("%s:%d: a marker with no phase", source.file.c_str(), k + 1));
    source.regions.push_back({phases, k + 2, k + 2});
    open = &source.regions.back();
  }
  if (open) open->last_line = static_cast<int>(source.lines.size());
  return source;
}

const KernelSource& KernelSourceFor(LoopOrder order) {
  static const KernelSource flash1 = LoadEmbedded("flash1.cu", "flash1");
  static const KernelSource flash2_row = LoadEmbedded("flash2_row.cu", "flash2_row");
  return order == LoopOrder::kKvOuter ? flash1 : flash2_row;
}

const KernelSource& KernelSourceFor(const AttentionProblem& problem) {
  static const KernelSource flash2_bwd = LoadEmbedded("flash2_bwd.cu", "flash2_bwd", "backward/");
  if (problem.backward()) return flash2_bwd;
  return KernelSourceFor(problem.order);
}

namespace {

std::string AnnotateBackwardStep(const Model& model, int row) {
  const StepState& s = model.state();
  const BackwardNumerics& g = s.grad;
  const int d = model.problem().d;
  const int r = row >= s.row_begin && row < s.row_begin + s.rows ? row - s.row_begin : 0;
  const auto k = static_cast<std::size_t>(r);
  const int global = s.row_begin + r;
  const auto list = [](const std::vector<double>& v, std::size_t begin, int count, int total) {
    std::string text = "[";
    for (int c = 0; c < std::min(count, total); ++c)
      text += (c ? ", " : "") + Num(v[begin + static_cast<std::size_t>(c)], 3);
    return text + (total > count ? ", …]" : "]");
  };
  const auto cols = static_cast<std::size_t>(s.cols);
  const std::string read = HumanBytes(static_cast<double>(s.delta.HbmReadBytes()));
  const std::string written = HumanBytes(static_cast<double>(s.delta.HbmWriteBytes()));
  switch (s.info.phase) {
    case Phase::kInit: return "dQ = 0 written to HBM: " + written;
    case Phase::kDelta:
      if (g.delta.empty()) break;
      return Sprintf("row %d: D_i = rowsum(dO_i ∘ O_i) = %s; HBM → SRAM %s, D_i → HBM %s", global,
                     Num(g.delta[k], 4).c_str(), read.c_str(), written.c_str());
    case Phase::kLoadKv:
    case Phase::kLoadQ: return "HBM → SRAM this step: " + read;
    case Phase::kScores:
      if (g.s.empty()) break;
      return Sprintf("row %d: S_ij = %s", global, list(g.s, k * cols, 6, s.cols).c_str());
    case Phase::kProbs:
      if (g.p.empty()) break;
      return Sprintf("row %d: P_ij = exp(S_ij − %s) = %s", global, Num(g.lse[k], 4).c_str(),
                     list(g.p, k * cols, 6, s.cols).c_str());
    case Phase::kGradV:
      if (g.dv.empty()) break;
      return Sprintf("key %d: dV_j = %s", s.col_begin, list(g.dv, 0, 4, d).c_str());
    case Phase::kGradP:
      if (g.dp.empty()) break;
      return Sprintf("row %d: dP_ij = %s", global, list(g.dp, k * cols, 6, s.cols).c_str());
    case Phase::kGradS:
      if (g.ds.empty()) break;
      return Sprintf("row %d: dS_ij = P_ij ∘ (dP_ij − %s) = %s", global, Num(g.delta[k], 4).c_str(),
                     list(g.ds, k * cols, 6, s.cols).c_str());
    case Phase::kGradK:
      if (g.dk.empty()) break;
      return Sprintf("key %d: dK_j = %s", s.col_begin, list(g.dk, 0, 4, d).c_str());
    case Phase::kGradQ:
      if (g.dq.empty()) break;
      return Sprintf("row %d: dQ_i = %s (read %s, written %s)", global,
                     list(g.dq, k * static_cast<std::size_t>(d), 4, d).c_str(), read.c_str(), written.c_str());
    case Phase::kWriteGrads: return "SRAM → HBM this step: " + written;
    case Phase::kDone:
      return "dQ, dK, dV complete: " + HumanBytes(static_cast<double>(model.final_ledger().HbmBytes())) +
             " through HBM";
    default: break;
  }
  return "";
}

}  // namespace

std::string AnnotateStep(const Model& model, int row) {
  if (!model.has_problem()) return "";
  if (model.problem().backward()) return AnnotateBackwardStep(model, row);
  const StepState& s = model.state();
  const TileNumerics& t = s.tile;
  const bool kv = model.problem().order == LoopOrder::kKvOuter;
  const int r = row >= s.row_begin && row < s.row_begin + s.rows ? row - s.row_begin : 0;
  const auto k = static_cast<std::size_t>(r);
  const int global = s.row_begin + r;
  const auto list = [&](const std::vector<double>& v, std::size_t begin, int count, int total) {
    std::string text = "[";
    for (int c = 0; c < std::min(count, total); ++c)
      text += (c ? ", " : "") + Num(v[begin + static_cast<std::size_t>(c)], 3);
    return text + (total > count ? ", …]" : "]");
  };
  const std::string read = HumanBytes(static_cast<double>(s.delta.HbmReadBytes()));
  const std::string written = HumanBytes(static_cast<double>(s.delta.HbmWriteBytes()));
  const bool has_row = s.rows > 0;
  switch (s.info.phase) {
    case Phase::kInit: return "O, ℓ, m written to HBM: " + written;
    case Phase::kLoadKv:
    case Phase::kLoadQ: return "HBM → SRAM this step: " + read;
    case Phase::kScores:
      if (!has_row || t.s.empty()) break;
      return Sprintf("row %d: S_ij = %s", global, list(t.s, k * static_cast<std::size_t>(s.cols), 6, s.cols).c_str());
    case Phase::kRowMax:
      if (!has_row || t.m_tile.empty()) break;
      if (kv) return Sprintf("row %d: m~_ij = %s", global, Num(t.m_tile[k], 4).c_str());
      return Sprintf("row %d: m_i = max(%s, %s) = %s", global, Num(t.m_prev[k], 4).c_str(),
                     Num(t.m_tile[k], 4).c_str(), Num(t.m[k], 4).c_str());
    case Phase::kExp:
      if (!has_row || t.p.empty()) break;
      return Sprintf("row %d: P~_ij = %s", global, list(t.p, k * static_cast<std::size_t>(s.cols), 6, s.cols).c_str());
    case Phase::kRowSum:
      if (!has_row || t.l_tile.empty()) break;
      if (kv) return Sprintf("row %d: ℓ~_ij = %s", global, Num(t.l_tile[k], 4).c_str());
      return Sprintf("row %d: ℓ_i = α·ℓ_i + rowsum = %s × %s + %s = %s", global, Num(t.alpha[k], 4).c_str(),
                     Num(t.l_prev[k], 4).c_str(), Num(t.l_tile[k], 4).c_str(), Num(t.l[k], 4).c_str());
    case Phase::kUpdateStats:
      if (!has_row || t.alpha.empty()) break;
      return Sprintf("row %d: m_new = max(%s, %s) = %s, α = %s, ℓ_new = %s", global, Num(t.m_prev[k], 4).c_str(),
                     Num(t.m_tile[k], 4).c_str(), Num(t.m[k], 4).c_str(), Num(t.alpha[k], 4).c_str(),
                     Num(t.l[k], 4).c_str());
    case Phase::kUpdateO:
      if (!has_row || t.o.empty()) break;
      return Sprintf("row %d: O_i = %s%s", global,
                     list(t.o, k * static_cast<std::size_t>(model.problem().d), 4, model.problem().d).c_str(),
                     kv ? "" : " (not yet divided by ℓ_i)");
    case Phase::kFinalize:
      if (!has_row || t.o.empty()) break;
      return Sprintf("row %d: O_i = O_i / ℓ_i = %s", global,
                     list(t.o, k * static_cast<std::size_t>(model.problem().d), 4, model.problem().d).c_str());
    case Phase::kWriteBack:
      if (!kv && has_row && !t.lse.empty())
        return Sprintf("row %d: L_i = m_i + log ℓ_i = %s; to HBM: %s", global, Num(t.lse[k], 5).c_str(),
                       written.c_str());
      return "SRAM → HBM this step: " + written;
    case Phase::kDone:
      return "O complete: " + HumanBytes(static_cast<double>(model.final_ledger().HbmBytes())) + " through HBM";
    default: break;  // the backward pass's phases: AnnotateBackwardStep
  }
  return "";
}

std::optional<std::int64_t> NextStepOfLine(const Schedule& schedule, const PseudocodeLine& line, std::int64_t from) {
  if (line.phases.empty() || schedule.step_count() == 0) return std::nullopt;
  const std::int64_t count = schedule.step_count();
  // A scan of the schedule, bounded: every phase of a tile iteration comes back within one iteration.
  const std::int64_t limit = std::min<std::int64_t>(count, 4'000'000);
  for (std::int64_t k = 1; k <= limit; ++k) {
    const std::int64_t step = (from + k) % count;
    const Phase phase = schedule.Info(step).phase;
    if (std::find(line.phases.begin(), line.phases.end(), phase) != line.phases.end()) return step;
  }
  return std::nullopt;
}

}  // namespace flashviz
