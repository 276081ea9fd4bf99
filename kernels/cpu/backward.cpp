// [SECTION] the forward pass the backward pass consumes (O, L) and D
// [SECTION] BackwardExecutor: the one walk over the backward schedule
#include "kernels/cpu/backward.h"

#include "kernels/cpu/schedule_walk.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <limits>

#include "kernels/common/parallel.h"

namespace flashviz {
namespace {

constexpr double kNegInf = -std::numeric_limits<double>::infinity();

constexpr SramTiles kKvTiles = Bit(SramTile::kK) | Bit(SramTile::kV) | Bit(SramTile::kDK) | Bit(SramTile::kDV);
constexpr SramTiles kQTiles = Bit(SramTile::kQ) | Bit(SramTile::kDO) | Bit(SramTile::kLse) | Bit(SramTile::kDelta);

const TileNumerics& NoForwardNumerics() {
  static const TileNumerics empty;
  return empty;
}

// ---------------------------------------------------------------------------------------------------------
// [SECTION] BackwardExecutor
// ---------------------------------------------------------------------------------------------------------

class BackwardExecutor final : public ScheduleWalk {
 public:
  BackwardExecutor(const Schedule& schedule, const AttentionInputs* inputs, const ForwardSaved* saved,
                   BackwardFocus focus)
      : schedule_(schedule),
        p_(schedule.problem()),
        in_(inputs && saved ? inputs : nullptr),
        saved_(saved),
        focus_(in_ ? focus : BackwardFocus{}) {
    if (!in_) return;
    const std::size_t nd = static_cast<std::size_t>(p_.n) * p_.d;
    // dQ in HBM: every row when every pair is computed, else the rows of the one Q tile in focus.
    if (focus_.all) {
      dq_row_begin_ = 0;
      dq_rows_ = p_.n;
      dk_out_.assign(nd, 0.0);
      dv_out_.assign(nd, 0.0);
    } else if (focus_.i >= 0) {
      dq_row_begin_ = p_.RowBegin(focus_.i);
      dq_rows_ = p_.RowsInTile(focus_.i);
    }
    dq_hbm_.assign(static_cast<std::size_t>(dq_rows_) * p_.d, 0.0);
  }

  const TileNumerics& tile() const override { return NoForwardNumerics(); }
  const BackwardNumerics& grad() const override { return grad_; }

  template <class Visit>
  bool Run(Visit& visit) {
    const std::int64_t n = p_.n, d = p_.d;
    // dQ = 0 in HBM: the tile iterations add into it.
    ledger_.WriteHbm(HbmTensor::kDQ, n * d);
    if (!Emit(Phase::kInit, -1, -1, 0, visit)) return false;
    for (int i = 0; i < p_.tr(); ++i)
      if (!DeltaStep(i, visit)) return false;
    for (int j = 0; j < schedule_.outer_count(); ++j) {
      const Schedule::Outer& outer = schedule_.outer(j);
      if (outer.inner_begin == outer.inner_end) continue;
      SetTiles(-1, j);
      const std::int64_t c = cols_;
      ledger_.ReadHbm(HbmTensor::kK, c * d);
      ledger_.ReadHbm(HbmTensor::kV, c * d);
      const bool compute = ComputesKv(j);
      ClearPair();
      if (compute) {  // dK_j = dV_j = 0 on chip; a K/V tile outside the focus keeps none (its dK_j is not asked for)
        grad_.dk.assign(static_cast<std::size_t>(c) * d, 0.0);
        grad_.dv.assign(static_cast<std::size_t>(c) * d, 0.0);
      } else {
        grad_.dk.clear();
        grad_.dv.clear();
      }
      if (!Emit(Phase::kLoadKv, -1, j, kKvTiles, visit)) return false;
      for (int i = outer.inner_begin; i < outer.inner_end; ++i)
        if (!TileIteration(i, j, visit)) return false;
      SetTiles(-1, j);
      ledger_.WriteHbm(HbmTensor::kDK, c * d);
      ledger_.WriteHbm(HbmTensor::kDV, c * d);
      if (compute) {
        ClearPair();
        if (focus_.all) {
          const std::size_t at = static_cast<std::size_t>(p_.ColBegin(j)) * d;
          std::copy(grad_.dk.begin(), grad_.dk.end(), dk_out_.begin() + static_cast<std::ptrdiff_t>(at));
          std::copy(grad_.dv.begin(), grad_.dv.end(), dv_out_.begin() + static_cast<std::ptrdiff_t>(at));
        }
      }
      if (!Emit(Phase::kWriteGrads, -1, j, kKvTiles, visit)) return false;
    }
    SetTiles(-1, -1);
    ClearPair();
    grad_.dk.clear();
    grad_.dv.clear();
    return Emit(Phase::kDone, -1, -1, 0, visit);
  }

  std::vector<double> TakeGradients() {
    std::vector<double> all = std::move(dq_hbm_);
    all.insert(all.end(), dk_out_.begin(), dk_out_.end());
    all.insert(all.end(), dv_out_.begin(), dv_out_.end());
    return all;
  }
  // dQ in HBM as an N × d image (rows outside the computed ones are 0).
  std::vector<double> DqImage() const {
    std::vector<double> image(static_cast<std::size_t>(p_.n) * p_.d, 0.0);
    std::copy(dq_hbm_.begin(), dq_hbm_.end(),
              image.begin() + static_cast<std::ptrdiff_t>(static_cast<std::size_t>(dq_row_begin_) * p_.d));
    return image;
  }

 private:
  bool ComputesQ(int i) const { return in_ && (focus_.all || i == focus_.i); }
  bool ComputesKv(int j) const { return in_ && (focus_.all || j == focus_.j); }
  bool InDqImage(int i) const {
    return in_ && p_.RowBegin(i) >= dq_row_begin_ && p_.RowBegin(i) + p_.RowsInTile(i) <= dq_row_begin_ + dq_rows_;
  }
  const float* Row(const std::vector<float>& m, int row) const {
    return m.data() + static_cast<std::size_t>(row) * p_.d;
  }
  std::size_t RC() const { return static_cast<std::size_t>(rows_) * cols_; }

  void SetTiles(int i, int j) {
    row_begin_ = i >= 0 ? p_.RowBegin(i) : 0;
    rows_ = i >= 0 ? p_.RowsInTile(i) : 0;
    col_begin_ = j >= 0 ? p_.ColBegin(j) : 0;
    cols_ = j >= 0 ? p_.ColsInTile(j) : 0;
    SetTileGeometry(rows_, cols_, p_.d);
  }
  void ClearPair() {
    for (auto* v : {&grad_.o, &grad_.lse, &grad_.delta, &grad_.s, &grad_.p, &grad_.dp, &grad_.ds, &grad_.dq,
                    &grad_.dq_prev, &grad_.dk_prev, &grad_.dv_prev})
      v->clear();
  }
  // dQ_i's rows as they stand in HBM (the image), for the views.
  void ShowDq(int i) {
    if (!InDqImage(i)) return grad_.dq.clear();
    const auto begin =
        dq_hbm_.begin() + static_cast<std::ptrdiff_t>(static_cast<std::size_t>(p_.RowBegin(i) - dq_row_begin_) * p_.d);
    grad_.dq.assign(begin, begin + static_cast<std::ptrdiff_t>(static_cast<std::size_t>(rows_) * p_.d));
  }

  // Preprocessing: D_i = rowsum(dO_i ∘ O_i), one step per Q tile.
  template <class Visit>
  bool DeltaStep(int i, Visit& visit) {
    SetTiles(i, -1);
    const std::int64_t r = rows_, d = p_.d;
    ledger_.ReadHbm(HbmTensor::kO, r * d);
    ledger_.ReadHbm(HbmTensor::kDO, r * d);
    ledger_.ComputeReadsSram(2 * r * d);
    ledger_.ComputeWritesSram(r);
    ledger_.WriteHbm(HbmTensor::kD, r);
    ClearPair();
    if (ComputesQ(i)) {
      grad_.o.assign(saved_->o.begin() + row_begin_ * d, saved_->o.begin() + (row_begin_ + r) * d);
      grad_.delta.assign(static_cast<std::size_t>(r), 0.0);
      for (int row = 0; row < rows_; ++row) {
        const float* dout = Row(in_->dout, row_begin_ + row);
        double sum = 0.0;
        for (int e = 0; e < d; ++e)
          sum += static_cast<double>(dout[e]) * grad_.o[static_cast<std::size_t>(row * d + e)];
        grad_.delta[static_cast<std::size_t>(row)] = sum;
      }
    }
    return Emit(Phase::kDelta, i, -1, Bit(SramTile::kO) | Bit(SramTile::kDO) | Bit(SramTile::kDelta), visit);
  }

  template <class Visit>
  bool TileIteration(int i, int j, Visit& visit) {
    SetTiles(i, j);
    const std::int64_t r = rows_, c = cols_, d = p_.d;
    // Every pair of the focused K/V tile feeds dK_j, dV_j; every pair of the focused Q tile feeds dQ_i. A pair
    // outside both shows empty arrays (nothing of an earlier pair is left on view).
    const bool compute = ComputesKv(j) || ComputesQ(i);
    const bool kv_grads = ComputesKv(j);
    SramTiles resident = kKvTiles | kQTiles;
    ledger_.ReadHbm(HbmTensor::kQ, r * d);
    ledger_.ReadHbm(HbmTensor::kDO, r * d);
    ledger_.ReadHbm(HbmTensor::kLse, r);
    ledger_.ReadHbm(HbmTensor::kD, r);
    ClearPair();
    if (compute) {
      grad_.lse.assign(saved_->lse.begin() + row_begin_, saved_->lse.begin() + row_begin_ + r);
      grad_.delta.assign(saved_->delta.begin() + row_begin_, saved_->delta.begin() + row_begin_ + r);
      grad_.dk_prev = grad_.dk;
      grad_.dv_prev = grad_.dv;
      ShowDq(i);
    }
    if (!Emit(Phase::kLoadQ, i, j, resident, visit)) return false;

    // S_ij = scale · Q_i K_jᵀ, recomputed (the forward pass kept no S).
    ledger_.ComputeReadsSram(r * d + c * d);
    ledger_.ComputeWritesSram(r * c);
    if (compute) {
      grad_.s.assign(RC(), 0.0);
      for (int row = 0; row < rows_; ++row) {
        const float* q = Row(in_->q, row_begin_ + row);
        for (int col = 0; col < cols_; ++col) {
          double& s = grad_.s[static_cast<std::size_t>(row) * cols_ + col];
          if (p_.Masked(row_begin_ + row, col_begin_ + col)) {
            s = kNegInf;
            continue;
          }
          const float* k = Row(in_->k, col_begin_ + col);
          double dot = 0.0;
          for (int e = 0; e < d; ++e) dot += static_cast<double>(q[e]) * k[e];
          s = p_.scale * dot;
        }
      }
    }
    if (!Emit(Phase::kScores, i, j, resident |= Bit(SramTile::kP), visit)) return false;

    // P_ij = exp(S_ij − L_i): the saved log-sum-exp normalizes at once, no running max.
    ledger_.ComputeReadsSram(r * c + r);
    ledger_.ComputeWritesSram(r * c);
    if (compute) {
      grad_.p.assign(RC(), 0.0);
      for (int row = 0; row < rows_; ++row)
        for (int col = 0; col < cols_; ++col) {
          const std::size_t at = static_cast<std::size_t>(row) * cols_ + col;
          const double s = grad_.s[at], lse = grad_.lse[static_cast<std::size_t>(row)];
          grad_.p[at] = s == kNegInf || lse == kNegInf ? 0.0 : std::exp(s - lse);
        }
    }
    if (!Emit(Phase::kProbs, i, j, resident, visit)) return false;

    // dV_j += P_ijᵀ dO_i.
    ledger_.ComputeReadsSram(r * c + r * d + c * d);
    ledger_.ComputeWritesSram(c * d);
    if (kv_grads) {
      for (int row = 0; row < rows_; ++row) {
        const float* dout = Row(in_->dout, row_begin_ + row);
        for (int col = 0; col < cols_; ++col) {
          const double p = grad_.p[static_cast<std::size_t>(row) * cols_ + col];
          if (p == 0.0) continue;
          double* dv = grad_.dv.data() + static_cast<std::size_t>(col) * d;
          for (int e = 0; e < d; ++e) dv[e] += p * dout[e];
        }
      }
    }
    if (!Emit(Phase::kGradV, i, j, resident, visit)) return false;

    // dP_ij = dO_i V_jᵀ (every entry: the masked ones are multiplied by P_ij = 0 next).
    ledger_.ComputeReadsSram(r * d + c * d);
    ledger_.ComputeWritesSram(r * c);
    if (compute) {
      grad_.dp.assign(RC(), 0.0);
      for (int row = 0; row < rows_; ++row) {
        const float* dout = Row(in_->dout, row_begin_ + row);
        for (int col = 0; col < cols_; ++col) {
          const float* v = Row(in_->v, col_begin_ + col);
          double dot = 0.0;
          for (int e = 0; e < d; ++e) dot += static_cast<double>(dout[e]) * v[e];
          grad_.dp[static_cast<std::size_t>(row) * cols_ + col] = dot;
        }
      }
    }
    if (!Emit(Phase::kGradP, i, j, resident |= Bit(SramTile::kDP), visit)) return false;

    // dS_ij = P_ij ∘ (dP_ij − D_i), in place of dP_ij.
    ledger_.ComputeReadsSram(2 * r * c + r);
    ledger_.ComputeWritesSram(r * c);
    if (compute) {
      grad_.ds.assign(RC(), 0.0);
      for (int row = 0; row < rows_; ++row)
        for (int col = 0; col < cols_; ++col) {
          const std::size_t at = static_cast<std::size_t>(row) * cols_ + col;
          grad_.ds[at] = grad_.p[at] * (grad_.dp[at] - grad_.delta[static_cast<std::size_t>(row)]);
        }
    }
    if (!Emit(Phase::kGradS, i, j, resident, visit)) return false;

    // dQ_i += scale · dS_ij K_j: read from HBM, added to on chip, written back (the atomics of a GPU kernel,
    // where the blocks of other K/V tiles add into the same rows).
    ledger_.ReadHbm(HbmTensor::kDQ, r * d);
    ledger_.ComputeReadsSram(r * c + c * d + r * d);
    ledger_.ComputeWritesSram(r * d);
    ledger_.WriteHbm(HbmTensor::kDQ, r * d);
    if (compute && InDqImage(i)) {
      ShowDq(i);
      grad_.dq_prev = grad_.dq;
      double* dq = dq_hbm_.data() + static_cast<std::size_t>(row_begin_ - dq_row_begin_) * d;
      for (int row = 0; row < rows_; ++row)
        for (int col = 0; col < cols_; ++col) {
          const double w = p_.scale * grad_.ds[static_cast<std::size_t>(row) * cols_ + col];
          if (w == 0.0) continue;
          const float* k = Row(in_->k, col_begin_ + col);
          for (int e = 0; e < d; ++e) dq[static_cast<std::size_t>(row) * d + e] += w * k[e];
        }
      ShowDq(i);
    }
    if (!Emit(Phase::kGradQ, i, j, resident | Bit(SramTile::kDQ), visit)) return false;

    // dK_j += scale · dS_ijᵀ Q_i.
    ledger_.ComputeReadsSram(r * c + r * d + c * d);
    ledger_.ComputeWritesSram(c * d);
    if (kv_grads) {
      for (int row = 0; row < rows_; ++row) {
        const float* q = Row(in_->q, row_begin_ + row);
        for (int col = 0; col < cols_; ++col) {
          const double w = p_.scale * grad_.ds[static_cast<std::size_t>(row) * cols_ + col];
          if (w == 0.0) continue;
          double* dk = grad_.dk.data() + static_cast<std::size_t>(col) * d;
          for (int e = 0; e < d; ++e) dk[e] += w * q[e];
        }
      }
    }
    return Emit(Phase::kGradK, i, j, resident, visit);
  }

  const Schedule& schedule_;
  const AttentionProblem& p_;
  const AttentionInputs* in_;
  const ForwardSaved* saved_;
  const BackwardFocus focus_;
  int row_begin_ = 0, rows_ = 0, col_begin_ = 0, cols_ = 0;
  BackwardNumerics grad_;
  int dq_row_begin_ = 0, dq_rows_ = 0;
  std::vector<double> dq_hbm_, dk_out_, dv_out_;
};

}  // namespace

// ---------------------------------------------------------------------------------------------------------
// [SECTION] the forward pass the backward pass consumes
// ---------------------------------------------------------------------------------------------------------

ForwardSaved RunForwardForBackward(const AttentionProblem& problem, const AttentionInputs& inputs) {
  AttentionProblem forward = problem;
  forward.pass = Pass::kForward;
  forward.order = LoopOrder::kQOuter;  // FlashAttention-2's forward pass writes L_i beside O_i
  const Stepper stepper(forward, &inputs);
  ForwardSaved saved;
  saved.lse.assign(static_cast<std::size_t>(problem.n), kNegInf);
  saved.o.assign(static_cast<std::size_t>(problem.n) * problem.d, 0.0);
  // The Q tiles are independent in the q order: each worker replays the schedule computing its share of them and
  // copies their O_i and L_i at write_back (disjoint rows, so no two workers write the same element). A replay
  // holds an N × d image of its own: the workers are capped so that together they stay within 512 MiB.
  const std::int64_t image_bytes = std::int64_t{8} * problem.n * (problem.d + 2);
  const int shards = std::max(1, std::min<int>(ParallelWorkers(problem.tr(), 0),
                                               static_cast<int>((std::int64_t{512} << 20) / image_bytes)));
  ParallelFor(shards, 0, [&](std::int64_t index, int) {
    const ReplayShard shard{static_cast<int>(index), shards};
    stepper.Replay(
        [&](const StepView& view) {
          const StepInfo& info = view.info();
          // Only this shard's tiles: the others' write_back steps show no numbers of their own.
          if (info.phase != Phase::kWriteBack || info.i % shard.count != shard.index) return true;
          const std::size_t row0 = static_cast<std::size_t>(problem.RowBegin(info.i));
          std::copy(view.tile().lse.begin(), view.tile().lse.end(),
                    saved.lse.begin() + static_cast<std::ptrdiff_t>(row0));
          std::copy(view.tile().o.begin(), view.tile().o.end(),
                    saved.o.begin() + static_cast<std::ptrdiff_t>(row0 * problem.d));
          return true;
        },
        shard);
  });
  saved.delta.assign(static_cast<std::size_t>(problem.n), 0.0);
  for (int row = 0; row < problem.n; ++row) {
    double sum = 0.0;
    for (int e = 0; e < problem.d; ++e) {
      const std::size_t at = static_cast<std::size_t>(row) * problem.d + e;
      sum += static_cast<double>(inputs.dout[at]) * saved.o[at];
    }
    saved.delta[static_cast<std::size_t>(row)] = sum;
  }
  return saved;
}

bool WalkBackward(const Schedule& schedule, const AttentionInputs* inputs, const ForwardSaved* saved,
                  BackwardFocus focus, const std::function<bool(const StepView&)>& visit,
                  std::vector<double>* gradients, std::vector<double>* dq_in_hbm) {
  BackwardExecutor exec(schedule, inputs, saved, focus);
  const bool finished = exec.Run(visit);
  if (dq_in_hbm) *dq_in_hbm = exec.DqImage();
  if (finished && gradients && focus.all && inputs && saved) *gradients = exec.TakeGradients();
  return finished;
}

}  // namespace flashviz
