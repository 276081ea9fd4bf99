// The order in which the tiled forward pass visits its tiles, phase by phase, for both loop orders, and the
// order of FlashAttention-2's backward pass.
// The executor (stepper.cpp) iterates this table and the step index is computed from it, so "which phase is
// step k" and "what step k does" cannot disagree. No N² state: one row per outer iteration.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string_view>
#include <vector>

#include "kernels/cpu/problem.h"

namespace flashviz {

enum class Phase : std::uint8_t {
  kInit,         // kv: O = 0, ℓ = 0, m = −∞ written to HBM
  kLoadKv,       // K_j, V_j: HBM → SRAM
  kLoadQ,        // kv: Q_i, O_i, ℓ_i, m_i: HBM → SRAM;  q: Q_i only (m = −∞, ℓ = 0, O_i = 0 on chip)
  kScores,       // S_ij = scale · Q_i K_jᵀ (+ causal mask)
  kRowMax,       // kv: m̃_ij = rowmax(S_ij);  q: m_i becomes m_new = max(m_old, rowmax(S_ij))
  kExp,          // kv: P̃_ij = exp(S_ij − m̃_ij);  q: P̃_ij = exp(S_ij − m_new)
  kRowSum,       // kv: ℓ̃_ij = rowsum(P̃_ij);  q: ℓ_i becomes e^(m_old − m_new)·ℓ_i + rowsum(P̃_ij)
  kUpdateStats,  // kv: m_new = max(m_i, m̃_ij), ℓ_new = e^(m_i − m_new)ℓ_i + e^(m̃_ij − m_new)ℓ̃_ij
  kUpdateO,      // kv: O_i ← diag(ℓ_new)⁻¹(diag(ℓ_i)e^(m_i − m_new)O_i + e^(m̃_ij − m_new)P̃_ij V_j)
                 // q:  O_i ← diag(e^(m_old − m_new)) O_i + P̃_ij V_j
  kWriteBack,    // kv: O_i, ℓ_i, m_i → HBM;  q: O_i and L_i = m_i + log ℓ_i → HBM
  kFinalize,     // q: O_i ← diag(ℓ_i)⁻¹ O_i
  kDone,
  // The backward pass (FlashAttention-2's; its kInit writes dQ = 0, its kLoadKv sets dK_j = dV_j = 0 on chip and
  // its kLoadQ loads Q_i, dO_i, L_i and D_i; kScores recomputes S_ij):
  kDelta,        // preprocessing, per Q tile i: O_i, dO_i → SRAM, D_i = rowsum(dO_i ∘ O_i) → HBM
  kProbs,        // P_ij = exp(S_ij − L_i), in place of S_ij (L_i saved by the forward pass: no running max)
  kGradV,        // dV_j += P_ijᵀ dO_i
  kGradP,        // dP_ij = dO_i V_jᵀ
  kGradS,        // dS_ij = P_ij ∘ (dP_ij − D_i), in place of dP_ij
  kGradK,        // dK_j += scale · dS_ijᵀ Q_i (the last phase of a tile iteration)
  kGradQ,        // dQ_i += scale · dS_ij K_j: read from HBM, added to, written back (atomics on a GPU)
  kWriteGrads,   // dK_j, dV_j → HBM
};
inline constexpr int kPhaseCount = 20;
std::string_view PhaseName(Phase phase);  // the trace's names: "init", "load_kv", ...
std::optional<Phase> ParsePhase(std::string_view name);

// The phases of one tile iteration (one active (i, j) pair), in order: forward in the given order.
std::span<const Phase> TileIterationPhases(LoopOrder order);
// The phases of one tile iteration of the problem's pass and order.
std::span<const Phase> TileIterationPhases(const AttentionProblem& problem);

struct StepInfo {
  std::int64_t step = 0;
  Phase phase = Phase::kInit;
  int i = -1;  // Q tile index (0-based), −1 where no Q tile is involved
  int j = -1;  // K/V tile index (0-based), −1 where no K/V tile is involved
  bool operator==(const StepInfo&) const = default;
};

class Schedule {
 public:
  explicit Schedule(const AttentionProblem& problem);

  // One outer iteration: j in the kv order and the backward pass, i in the q order, with the active inner indices
  // [inner_begin, inner_end) (all of them unless causal skips some).
  struct Outer {
    std::int64_t first_step;
    int inner_begin;
    int inner_end;
  };

  const AttentionProblem& problem() const { return problem_; }
  std::int64_t step_count() const { return step_count_; }
  int outer_count() const { return static_cast<int>(outer_.size()); }
  const Outer& outer(int t) const { return outer_[static_cast<std::size_t>(t)]; }
  std::int64_t tile_iteration_count() const { return tile_iterations_; }

  StepInfo Info(std::int64_t step) const;  // O(log T); step must be in [0, step_count)
  // The first step of tile pair (i, j), or nothing when causal masking skips the pair.
  std::optional<std::int64_t> FirstStepOfPair(int i, int j) const;
  // The step of this schedule that stands where `like` (a step of another schedule of the same tile grid, e.g. the
  // other loop order or with the mask toggled) stands: the same phase of the same tile pair where this schedule
  // has one, else the first step of that pair, else of the nearest active pair of its outer iteration.
  std::int64_t StepLike(const StepInfo& like) const;
  // The first step of the t-th tile iteration in schedule order (for timeline marks).
  std::int64_t TileIterationStart(std::int64_t t) const;
  // Steps before the first outer iteration: init (kv, backward) and the backward pass's T_r delta steps.
  std::int64_t prologue_steps() const { return prologue_; }

 private:
  AttentionProblem problem_;
  std::vector<Outer> outer_;
  std::vector<std::int64_t> iterations_before_;  // tile iterations in outer iterations [0, t)
  std::int64_t step_count_ = 0;
  std::int64_t tile_iterations_ = 0;
  std::int64_t prologue_ = 0;
};

}  // namespace flashviz
