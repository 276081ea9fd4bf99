#include "kernels/cpu/schedule.h"

#include <algorithm>
#include <array>
#include <cassert>

namespace flashviz {
namespace {

constexpr std::array<std::string_view, kPhaseCount> kPhaseNames = {
    "init", "load_kv",      "load_q",   "scores",     "rowmax",   "exp",
    "rowsum", "update_stats", "update_o", "write_back", "finalize", "done",
    "delta", "probs", "grad_v", "grad_p", "grad_s", "grad_k", "grad_q", "write_dk_dv"};

constexpr std::array kKvIteration = {Phase::kLoadQ,  Phase::kScores,      Phase::kRowMax,  Phase::kExp,
                                     Phase::kRowSum, Phase::kUpdateStats, Phase::kUpdateO, Phase::kWriteBack};
constexpr std::array kQIteration = {Phase::kLoadKv, Phase::kScores, Phase::kRowMax,
                                    Phase::kExp,    Phase::kRowSum, Phase::kUpdateO};

// FlashAttention-2's Algorithm 2 in its line order: dQ_i (line 15) before dK_j (line 16).
constexpr std::array kBackwardIteration = {Phase::kLoadQ, Phase::kScores, Phase::kProbs, Phase::kGradV,
                                           Phase::kGradP, Phase::kGradS,  Phase::kGradQ, Phase::kGradK};

// Steps an outer iteration takes besides its tile iterations: load_kv (kv), load_q + finalize + write_back (q),
// load_kv + write_dk_dv (backward).
constexpr int kKvOuterOverhead = 1;
constexpr int kQOuterOverhead = 3;
constexpr int kBackwardOuterOverhead = 2;

// The first index in [0, count) for which `active` holds, given that it holds on a suffix (or a prefix when
// `prefix` is set, returning one past the last). Binary search over the one causal predicate of the problem.
template <class Active>
int PartitionPoint(int count, bool prefix, Active active) {
  int lo = 0, hi = count;
  while (lo < hi) {
    const int mid = lo + (hi - lo) / 2;
    const bool before_boundary = prefix ? active(mid) : !active(mid);
    if (before_boundary) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

}  // namespace

std::string_view PhaseName(Phase phase) { return kPhaseNames[static_cast<int>(phase)]; }

std::optional<Phase> ParsePhase(std::string_view name) {
  for (int p = 0; p < kPhaseCount; ++p)
    if (kPhaseNames[p] == name) return static_cast<Phase>(p);
  return std::nullopt;
}

std::span<const Phase> TileIterationPhases(LoopOrder order) {
  if (order == LoopOrder::kKvOuter) return kKvIteration;
  return kQIteration;
}

std::span<const Phase> TileIterationPhases(const AttentionProblem& problem) {
  if (problem.backward()) return kBackwardIteration;
  return TileIterationPhases(problem.order);
}

Schedule::Schedule(const AttentionProblem& problem) : problem_(problem) {
  const bool kv = problem.KvOuterLoop();
  const int outer_count = kv ? problem.tc() : problem.tr();
  const int inner_count = kv ? problem.tr() : problem.tc();
  const int per_iteration = static_cast<int>(TileIterationPhases(problem).size());
  const int overhead = problem.backward() ? kBackwardOuterOverhead : kv ? kKvOuterOverhead : kQOuterOverhead;
  outer_.reserve(static_cast<std::size_t>(outer_count));
  iterations_before_.reserve(static_cast<std::size_t>(outer_count) + 1);
  // The kv order starts with init; the backward pass with init (dQ = 0) and one delta step per Q tile.
  prologue_ = problem.backward() ? 1 + problem.tr() : kv ? 1 : 0;
  std::int64_t step = prologue_;
  for (int t = 0; t < outer_count; ++t) {
    Outer o{step, 0, inner_count};
    if (problem.causal) {
      // kv: for K/V tile j the active Q tiles form a suffix; q: for Q tile i the active K/V tiles a prefix.
      if (kv) o.inner_begin = PartitionPoint(inner_count, false, [&](int i) { return problem.TilePairActive(i, t); });
      else o.inner_end = PartitionPoint(inner_count, true, [&](int j) { return problem.TilePairActive(t, j); });
    }
    const int active = o.inner_end - o.inner_begin;
    iterations_before_.push_back(tile_iterations_);
    tile_iterations_ += active;
    // An outer iteration with no active pair loads nothing (causal can only do this in theory).
    if (active > 0) step += overhead + std::int64_t{per_iteration} * active;
    outer_.push_back(o);
  }
  iterations_before_.push_back(tile_iterations_);
  step_count_ = step + 1;  // done
}

StepInfo Schedule::Info(std::int64_t step) const {
  assert(step >= 0 && step < step_count_);
  const bool kv = problem_.KvOuterLoop();
  if (step == step_count_ - 1) return {step, Phase::kDone, -1, -1};
  if (step < prologue_) {
    if (step == 0) return {step, Phase::kInit, -1, -1};
    return {step, Phase::kDelta, static_cast<int>(step - 1), -1};
  }
  // The last outer iteration whose first step is ≤ step (empty ones share their successor's first step).
  const auto it = std::upper_bound(outer_.begin(), outer_.end(), step,
                                   [](std::int64_t s, const Outer& o) { return s < o.first_step; });
  const int t = static_cast<int>(it - outer_.begin()) - 1;
  const Outer& o = outer_[static_cast<std::size_t>(t)];
  const std::int64_t offset = step - o.first_step;
  const auto phases = TileIterationPhases(problem_);
  const auto per_iteration = static_cast<std::int64_t>(phases.size());
  if (kv) {
    if (offset == 0) return {step, Phase::kLoadKv, -1, t};
    const std::int64_t k = offset - 1;
    if (problem_.backward() && k == std::int64_t{o.inner_end - o.inner_begin} * per_iteration)
      return {step, Phase::kWriteGrads, -1, t};
    return {step, phases[static_cast<std::size_t>(k % per_iteration)],
            o.inner_begin + static_cast<int>(k / per_iteration), t};
  }
  if (offset == 0) return {step, Phase::kLoadQ, t, -1};
  const std::int64_t k = offset - 1;
  const std::int64_t active = o.inner_end - o.inner_begin;
  if (k < active * per_iteration)
    return {step, phases[static_cast<std::size_t>(k % per_iteration)], t,
            o.inner_begin + static_cast<int>(k / per_iteration)};
  return {step, k == active * per_iteration ? Phase::kFinalize : Phase::kWriteBack, t, -1};
}

std::optional<std::int64_t> Schedule::FirstStepOfPair(int i, int j) const {
  const bool kv = problem_.KvOuterLoop();
  const int t = kv ? j : i, inner = kv ? i : j;
  if (t < 0 || t >= outer_count() || inner < 0) return std::nullopt;
  const Outer& o = outer_[static_cast<std::size_t>(t)];
  if (inner < o.inner_begin || inner >= o.inner_end) return std::nullopt;
  const auto per_iteration = static_cast<std::int64_t>(TileIterationPhases(problem_).size());
  return o.first_step + 1 + per_iteration * (inner - o.inner_begin);
}

std::int64_t Schedule::StepLike(const StepInfo& like) const {
  if (step_count_ == 0 || like.phase == Phase::kInit) return 0;
  if (like.phase == Phase::kDone) return step_count_ - 1;
  if (like.phase == Phase::kDelta && problem_.backward() && like.i >= 0 && like.i < problem_.tr()) return 1 + like.i;
  const bool kv = problem_.KvOuterLoop();
  // The outer iteration the position belongs to in this order (a phase outside a pair knows one index only).
  const int outer = std::clamp(kv ? std::max(like.j, 0) : std::max(like.i, 0), 0, std::max(outer_count() - 1, 0));
  if (outer_.empty()) return 0;
  const std::int64_t begin = outer_[static_cast<std::size_t>(outer)].first_step;
  const std::int64_t end = outer + 1 < outer_count() ? outer_[static_cast<std::size_t>(outer) + 1].first_step
                                                     : step_count_;
  // An outer iteration has at most a few phases per inner tile: scanning it is cheap next to loading a problem.
  std::optional<std::int64_t> same_pair;
  for (std::int64_t step = begin; step < end; ++step) {
    const StepInfo info = Info(step);
    if (info.phase == like.phase && info.i == like.i && info.j == like.j) return step;
    if (!same_pair && info.i == like.i && info.j == like.j) same_pair = step;
  }
  if (same_pair) return *same_pair;
  // The pair is masked here (causal): the nearest active inner tile of the same outer iteration.
  const Outer& o = outer_[static_cast<std::size_t>(outer)];
  const int inner = kv ? like.i : like.j;
  if (o.inner_end > o.inner_begin) {
    const int nearest = std::clamp(inner, o.inner_begin, o.inner_end - 1);
    if (const auto first = FirstStepOfPair(kv ? nearest : outer, kv ? outer : nearest)) return *first;
  }
  return begin;
}

std::int64_t Schedule::TileIterationStart(std::int64_t t) const {
  assert(t >= 0 && t < tile_iterations_);
  const auto it = std::upper_bound(iterations_before_.begin(), iterations_before_.end() - 1, t);
  const int outer = static_cast<int>(it - iterations_before_.begin()) - 1;
  const Outer& o = outer_[static_cast<std::size_t>(outer)];
  const auto per_iteration = static_cast<std::int64_t>(TileIterationPhases(problem_).size());
  return o.first_step + 1 + per_iteration * (t - iterations_before_[static_cast<std::size_t>(outer)]);
}

}  // namespace flashviz
