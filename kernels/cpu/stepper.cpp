// [SECTION] helpers: safe exponentials, SRAM tile sizes
// [SECTION] Executor: the one walk over the schedule; loads and stores increment the ledger, arithmetic
//           runs only for the Q tiles asked for
// [SECTION] Stepper: StateAt, LedgerAt, HbmOutputAt, Replay (the backward pass's walk: backward.cpp)
#include "kernels/cpu/stepper.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <limits>
#include <stdexcept>

#include "kernels/common/random.h"
#include "kernels/cpu/backward.h"
#include "kernels/cpu/schedule_walk.h"

namespace flashviz {
namespace {

// ---------------------------------------------------------------------------------------------------------
// [SECTION] helpers
// ---------------------------------------------------------------------------------------------------------

constexpr double kNegInf = -std::numeric_limits<double>::infinity();

// e^(from − to) for a rescale factor; a statistic still at −∞ contributes nothing (and −∞ − −∞ is no NaN).
double Rescale(double from, double to) { return from == kNegInf ? 0.0 : std::exp(from - to); }
// e^(s − m) for one score; a masked score (−∞) contributes nothing, even when its whole row is masked.
double SafeExp(double s, double m) { return s == kNegInf ? 0.0 : std::exp(s - m); }

constexpr std::array<std::string_view, kSramTileCount> kSramTileNames = {
    "Q_i",  "K_j",  "V_j",  "O_i",  "l_i", "m_i", "S_ij/P~_ij", "m~_ij",     "l~_ij",      "m_new",
    "l_new", "alpha", "dO_i", "dK_j", "dV_j", "dQ_i", "L_i",       "D_i",   "S_ij/P_ij", "dP_ij/dS_ij"};

constexpr SramTiles kKv = Bit(SramTile::kK) | Bit(SramTile::kV);
constexpr SramTiles kQState = Bit(SramTile::kQ) | Bit(SramTile::kO) | Bit(SramTile::kL) | Bit(SramTile::kM);
constexpr SramTiles kScratch = Bit(SramTile::kS) | Bit(SramTile::kMTile) | Bit(SramTile::kLTile) |
                               Bit(SramTile::kMNew) | Bit(SramTile::kLNew) | Bit(SramTile::kAlpha);

// Which Q tiles get arithmetic in a replay.
constexpr int kComputeNone = -2;
constexpr int kComputeAll = -1;

// ---------------------------------------------------------------------------------------------------------
// [SECTION] Executor
// ---------------------------------------------------------------------------------------------------------

class Executor final : public ScheduleWalk {
 public:
  // `shard` (with kComputeAll): arithmetic only for the Q tiles i with i % shard.count == shard.index.
  Executor(const Schedule& schedule, const AttentionInputs* inputs, int compute, ReplayShard shard = {})
      : schedule_(schedule), p_(schedule.problem()), in_(inputs), compute_(inputs ? compute : kComputeNone),
        shard_(shard) {
    if (compute_ == kComputeNone) return;
    // The HBM images of O, ℓ, m (kv) or O, L (q): all rows, or only the rows of the one tile computed.
    image_row_begin_ = compute_ == kComputeAll ? 0 : p_.RowBegin(compute_);
    const int image_rows = compute_ == kComputeAll ? p_.n : p_.RowsInTile(compute_);
    o_hbm_.assign(static_cast<std::size_t>(image_rows) * p_.d, 0.0);
    l_hbm_.assign(static_cast<std::size_t>(image_rows), 0.0);
    m_hbm_.assign(static_cast<std::size_t>(image_rows), kNegInf);
  }

  const TileNumerics& tile() const override { return tile_; }
  const BackwardNumerics& grad() const override {
    static const BackwardNumerics empty;
    return empty;
  }
  int rows() const { return rows_; }
  int cols() const { return cols_; }
  // O in HBM as far as this replay computed it (image rows only).
  std::vector<double> TakeOutput() { return std::move(o_hbm_); }

  // Walks the schedule; `visit(*this)` after every step, false stops the walk. Returns true when finished.
  template <class Visit>
  bool Run(Visit& visit) {
    return p_.order == LoopOrder::kKvOuter ? RunKvOuter(visit) : RunQOuter(visit);
  }

 private:
  bool Computes(int i) const {
    if (compute_ == kComputeAll) return i % shard_.count == shard_.index;
    return compute_ >= 0 && compute_ == i;
  }
  std::size_t ImageRow(int row) const { return static_cast<std::size_t>(row - image_row_begin_); }
  const float* QRow(int row) const { return in_->q.data() + static_cast<std::size_t>(row) * p_.d; }
  const float* KRow(int col) const { return in_->k.data() + static_cast<std::size_t>(col) * p_.d; }
  const float* VRow(int col) const { return in_->v.data() + static_cast<std::size_t>(col) * p_.d; }
  std::size_t RC() const { return static_cast<std::size_t>(rows_) * cols_; }
  std::size_t RD() const { return static_cast<std::size_t>(rows_) * p_.d; }

  // The size of every SRAM tile for the current tile geometry, refreshed whenever rows_ or cols_ change.
  void RefreshTileSizes() { SetTileGeometry(rows_, cols_, p_.d); }

  void SetQTile(int i) {
    row_begin_ = p_.RowBegin(i);
    rows_ = p_.RowsInTile(i);
    RefreshTileSizes();
  }
  void SetKvTile(int j) {
    col_begin_ = p_.ColBegin(j);
    cols_ = p_.ColsInTile(j);
    RefreshTileSizes();
  }
  void ClearTiles() {
    rows_ = cols_ = 0;
    RefreshTileSizes();
  }
  void ClearScratch() {
    for (auto* v : {&tile_.s, &tile_.p, &tile_.m_tile, &tile_.l_tile, &tile_.alpha, &tile_.beta}) v->clear();
  }

  // --- arithmetic shared by both orders (only ever called for computed tiles) ---

  void ComputeScores() {  // S_ij = scale · Q_i K_jᵀ, −∞ where causal masking hides the key
    tile_.s.assign(RC(), 0.0);
    for (int r = 0; r < rows_; ++r) {
      const float* q = QRow(row_begin_ + r);
      for (int c = 0; c < cols_; ++c) {
        double& s = tile_.s[static_cast<std::size_t>(r) * cols_ + c];
        if (p_.Masked(row_begin_ + r, col_begin_ + c)) {
          s = kNegInf;
          continue;
        }
        const float* k = KRow(col_begin_ + c);
        double dot = 0.0;
        for (int e = 0; e < p_.d; ++e) dot += static_cast<double>(q[e]) * k[e];
        s = p_.scale * dot;
      }
    }
  }
  void ComputeRowMax() {  // rowmax(S_ij) into m_tile
    tile_.m_tile.assign(static_cast<std::size_t>(rows_), kNegInf);
    for (int r = 0; r < rows_; ++r)
      for (int c = 0; c < cols_; ++c)
        tile_.m_tile[r] = std::max(tile_.m_tile[r], tile_.s[static_cast<std::size_t>(r) * cols_ + c]);
  }
  void ComputeExp(const std::vector<double>& row_max) {  // P̃_ij = exp(S_ij − row_max)
    tile_.p.assign(RC(), 0.0);
    for (int r = 0; r < rows_; ++r)
      for (int c = 0; c < cols_; ++c) {
        const std::size_t at = static_cast<std::size_t>(r) * cols_ + c;
        tile_.p[at] = SafeExp(tile_.s[at], row_max[r]);
      }
  }
  void ComputeRowSum() {  // rowsum(P̃_ij) into l_tile
    tile_.l_tile.assign(static_cast<std::size_t>(rows_), 0.0);
    for (int r = 0; r < rows_; ++r)
      for (int c = 0; c < cols_; ++c) tile_.l_tile[r] += tile_.p[static_cast<std::size_t>(r) * cols_ + c];
  }
  // P̃_ij V_j for row r, added into `out` with weight `weight`.
  void AddPV(int r, double weight, double* out) const {
    for (int c = 0; c < cols_; ++c) {
      const double w = weight * tile_.p[static_cast<std::size_t>(r) * cols_ + c];
      if (w == 0.0) continue;
      const float* v = VRow(col_begin_ + c);
      for (int e = 0; e < p_.d; ++e) out[e] += w * v[e];
    }
  }

  // --- Algorithm 1: K/V outer loop ---

  template <class Visit>
  bool RunKvOuter(Visit& visit) {
    const std::int64_t n = p_.n, d = p_.d;
    // Line 2: O = 0, ℓ = 0, m = −∞ in HBM (the images start that way).
    ledger_.WriteHbm(HbmTensor::kO, n * d);
    ledger_.WriteHbm(HbmTensor::kL, n);
    ledger_.WriteHbm(HbmTensor::kM, n);
    if (!Emit(Phase::kInit, -1, -1, 0, visit)) return false;
    for (int j = 0; j < schedule_.outer_count(); ++j) {
      const Schedule::Outer& outer = schedule_.outer(j);
      if (outer.inner_begin == outer.inner_end) continue;
      ClearTiles();
      SetKvTile(j);
      // Line 6: load K_j, V_j.
      ledger_.ReadHbm(HbmTensor::kK, cols_ * d);
      ledger_.ReadHbm(HbmTensor::kV, cols_ * d);
      if (!Emit(Phase::kLoadKv, -1, j, kKv, visit)) return false;
      for (int i = outer.inner_begin; i < outer.inner_end; ++i)
        if (!KvTileIteration(i, j, visit)) return false;
    }
    ClearTiles();
    return Emit(Phase::kDone, -1, -1, 0, visit);
  }

  template <class Visit>
  bool KvTileIteration(int i, int j, Visit& visit) {
    SetQTile(i);
    const std::int64_t r = rows_, c = cols_, d = p_.d;
    const bool compute = Computes(i);
    SramTiles resident = kKv | kQState;
    // Line 8: load Q_i, O_i, ℓ_i, m_i.
    ledger_.ReadHbm(HbmTensor::kQ, r * d);
    ledger_.ReadHbm(HbmTensor::kO, r * d);
    ledger_.ReadHbm(HbmTensor::kL, r);
    ledger_.ReadHbm(HbmTensor::kM, r);
    if (compute) {
      ClearScratch();
      const std::size_t row0 = ImageRow(row_begin_);
      tile_.m.assign(m_hbm_.begin() + row0, m_hbm_.begin() + row0 + r);
      tile_.l.assign(l_hbm_.begin() + row0, l_hbm_.begin() + row0 + r);
      tile_.o.assign(o_hbm_.begin() + row0 * d, o_hbm_.begin() + (row0 + r) * d);
      tile_.m_prev = tile_.m;
      tile_.l_prev = tile_.l;
      tile_.lse.clear();
    }
    if (!Emit(Phase::kLoadQ, i, j, resident, visit)) return false;

    // Line 9: S_ij = Q_i K_jᵀ.
    ledger_.ComputeReadsSram(r * d + c * d);
    ledger_.ComputeWritesSram(r * c);
    if (compute) ComputeScores();
    if (!Emit(Phase::kScores, i, j, resident |= Bit(SramTile::kS), visit)) return false;

    // Line 10: m̃_ij = rowmax(S_ij).
    ledger_.ComputeReadsSram(r * c);
    ledger_.ComputeWritesSram(r);
    if (compute) ComputeRowMax();
    if (!Emit(Phase::kRowMax, i, j, resident |= Bit(SramTile::kMTile), visit)) return false;

    // P̃_ij = exp(S_ij − m̃_ij), in place of S_ij.
    ledger_.ComputeReadsSram(r * c + r);
    ledger_.ComputeWritesSram(r * c);
    if (compute) ComputeExp(tile_.m_tile);
    if (!Emit(Phase::kExp, i, j, resident, visit)) return false;

    // ℓ̃_ij = rowsum(P̃_ij).
    ledger_.ComputeReadsSram(r * c);
    ledger_.ComputeWritesSram(r);
    if (compute) ComputeRowSum();
    if (!Emit(Phase::kRowSum, i, j, resident |= Bit(SramTile::kLTile), visit)) return false;

    // Line 11: m_new = max(m_i, m̃_ij), ℓ_new = e^(m_i − m_new)ℓ_i + e^(m̃_ij − m_new)ℓ̃_ij.
    ledger_.ComputeReadsSram(4 * r);
    ledger_.ComputeWritesSram(2 * r);
    if (compute) {
      tile_.alpha.resize(static_cast<std::size_t>(r));
      tile_.beta.resize(static_cast<std::size_t>(r));
      for (std::size_t row = 0; row < static_cast<std::size_t>(r); ++row) {
        const double m_new = std::max(tile_.m_prev[row], tile_.m_tile[row]);
        tile_.alpha[row] = Rescale(tile_.m_prev[row], m_new);
        tile_.beta[row] = Rescale(tile_.m_tile[row], m_new);
        tile_.m[row] = m_new;
        tile_.l[row] = tile_.alpha[row] * tile_.l_prev[row] + tile_.beta[row] * tile_.l_tile[row];
      }
    }
    resident |= Bit(SramTile::kMNew) | Bit(SramTile::kLNew);
    if (!Emit(Phase::kUpdateStats, i, j, resident, visit)) return false;

    // Line 12: O_i ← diag(ℓ_new)⁻¹ (diag(ℓ_i) e^(m_i − m_new) O_i + e^(m̃_ij − m_new) P̃_ij V_j).
    ledger_.ComputeReadsSram(r * d + r * c + c * d + 5 * r);
    ledger_.ComputeWritesSram(r * d);
    if (compute) {
      for (int row = 0; row < rows_; ++row) {
        double* o = tile_.o.data() + static_cast<std::size_t>(row) * d;
        const double l_new = tile_.l[row];
        if (l_new == 0.0) {  // every key so far is masked for this row: nothing to average yet
          std::fill(o, o + d, 0.0);
          continue;
        }
        const double keep = tile_.l_prev[row] * tile_.alpha[row];
        for (int e = 0; e < d; ++e) o[e] *= keep;
        AddPV(row, tile_.beta[row], o);
        for (int e = 0; e < d; ++e) o[e] /= l_new;
      }
    }
    if (!Emit(Phase::kUpdateO, i, j, resident, visit)) return false;

    // Line 13: write O_i, ℓ_i ← ℓ_new, m_i ← m_new to HBM; the Q-side tiles leave SRAM.
    ledger_.WriteHbm(HbmTensor::kO, r * d);
    ledger_.WriteHbm(HbmTensor::kL, r);
    ledger_.WriteHbm(HbmTensor::kM, r);
    if (compute) {
      const std::size_t row0 = ImageRow(row_begin_);
      std::copy(tile_.m.begin(), tile_.m.end(), m_hbm_.begin() + row0);
      std::copy(tile_.l.begin(), tile_.l.end(), l_hbm_.begin() + row0);
      std::copy(tile_.o.begin(), tile_.o.end(), o_hbm_.begin() + row0 * d);
      ClearScratch();
    }
    return Emit(Phase::kWriteBack, i, j, kKv, visit);
  }

  // --- FlashAttention-2: Q outer loop ---

  template <class Visit>
  bool RunQOuter(Visit& visit) {
    for (int i = 0; i < schedule_.outer_count(); ++i) {
      const Schedule::Outer& outer = schedule_.outer(i);
      if (outer.inner_begin == outer.inner_end) continue;
      ClearTiles();
      SetQTile(i);
      const std::int64_t r = rows_, d = p_.d;
      const bool compute = Computes(i);
      // Load Q_i; m_i = −∞, ℓ_i = 0 and O_i = 0 are set on chip, never read from HBM.
      ledger_.ReadHbm(HbmTensor::kQ, r * d);
      if (compute) {
        ClearScratch();
        tile_.m.assign(static_cast<std::size_t>(r), kNegInf);
        tile_.l.assign(static_cast<std::size_t>(r), 0.0);
        tile_.o.assign(RD(), 0.0);
        tile_.m_prev = tile_.m;
        tile_.l_prev = tile_.l;
        tile_.lse.clear();
      }
      if (!Emit(Phase::kLoadQ, i, -1, kQState, visit)) return false;
      for (int j = outer.inner_begin; j < outer.inner_end; ++j)
        if (!QTileIteration(i, j, visit)) return false;

      // O_i ← diag(ℓ_i)⁻¹ O_i; K_j and V_j are no longer needed.
      ledger_.ComputeReadsSram(r * d + r);
      ledger_.ComputeWritesSram(r * d);
      if (compute) {
        ClearScratch();
        for (int row = 0; row < rows_; ++row) {
          const double l = tile_.l[row];
          double* o = tile_.o.data() + static_cast<std::size_t>(row) * d;
          for (int e = 0; e < d; ++e) o[e] = l > 0.0 ? o[e] / l : 0.0;
        }
      }
      if (!Emit(Phase::kFinalize, i, -1, kQState, visit)) return false;

      // Write O_i and the log-sum-exp L_i = m_i + log ℓ_i (what the backward pass needs) to HBM.
      ledger_.WriteHbm(HbmTensor::kO, r * d);
      ledger_.WriteHbm(HbmTensor::kLse, r);
      if (compute) {
        tile_.lse.resize(static_cast<std::size_t>(r));
        for (std::size_t row = 0; row < static_cast<std::size_t>(r); ++row)
          tile_.lse[row] = tile_.l[row] > 0.0 ? tile_.m[row] + std::log(tile_.l[row]) : kNegInf;
        const std::size_t row0 = ImageRow(row_begin_);
        std::copy(tile_.o.begin(), tile_.o.end(), o_hbm_.begin() + row0 * d);
        std::copy(tile_.l.begin(), tile_.l.end(), l_hbm_.begin() + row0);
        std::copy(tile_.m.begin(), tile_.m.end(), m_hbm_.begin() + row0);
      }
      if (!Emit(Phase::kWriteBack, i, -1, 0, visit)) return false;
    }
    ClearTiles();
    return Emit(Phase::kDone, -1, -1, 0, visit);
  }

  template <class Visit>
  bool QTileIteration(int i, int j, Visit& visit) {
    SetKvTile(j);
    const std::int64_t r = rows_, c = cols_, d = p_.d;
    const bool compute = Computes(i);
    SramTiles resident = kQState | kKv;  // the previous iteration's scratch is released here
    ledger_.ReadHbm(HbmTensor::kK, c * d);
    ledger_.ReadHbm(HbmTensor::kV, c * d);
    if (compute) {
      ClearScratch();
      tile_.m_prev = tile_.m;
      tile_.l_prev = tile_.l;
    }
    if (!Emit(Phase::kLoadKv, i, j, resident, visit)) return false;

    ledger_.ComputeReadsSram(r * d + c * d);
    ledger_.ComputeWritesSram(r * c);
    if (compute) ComputeScores();
    if (!Emit(Phase::kScores, i, j, resident |= Bit(SramTile::kS), visit)) return false;

    // m_i becomes m_new = max(m_old, rowmax(S_ij)); α = e^(m_old − m_new) is kept for ℓ_i and O_i.
    ledger_.ComputeReadsSram(r * c + r);
    ledger_.ComputeWritesSram(3 * r);
    if (compute) {
      ComputeRowMax();
      tile_.alpha.resize(static_cast<std::size_t>(r));
      for (std::size_t row = 0; row < static_cast<std::size_t>(r); ++row) {
        tile_.m[row] = std::max(tile_.m_prev[row], tile_.m_tile[row]);
        tile_.alpha[row] = Rescale(tile_.m_prev[row], tile_.m[row]);
      }
    }
    resident |= Bit(SramTile::kMTile) | Bit(SramTile::kAlpha);
    if (!Emit(Phase::kRowMax, i, j, resident, visit)) return false;

    // P̃_ij = exp(S_ij − m_new), in place of S_ij.
    ledger_.ComputeReadsSram(r * c + r);
    ledger_.ComputeWritesSram(r * c);
    if (compute) ComputeExp(tile_.m);
    if (!Emit(Phase::kExp, i, j, resident, visit)) return false;

    // ℓ_i becomes e^(m_old − m_new)·ℓ_i + rowsum(P̃_ij).
    ledger_.ComputeReadsSram(r * c + 2 * r);
    ledger_.ComputeWritesSram(2 * r);
    if (compute) {
      ComputeRowSum();
      for (std::size_t row = 0; row < static_cast<std::size_t>(r); ++row)
        tile_.l[row] = tile_.alpha[row] * tile_.l_prev[row] + tile_.l_tile[row];
    }
    if (!Emit(Phase::kRowSum, i, j, resident |= Bit(SramTile::kLTile), visit)) return false;

    // O_i ← diag(α) O_i + P̃_ij V_j (unnormalized until finalize).
    ledger_.ComputeReadsSram(r * d + r * c + c * d + r);
    ledger_.ComputeWritesSram(r * d);
    if (compute) {
      for (int row = 0; row < rows_; ++row) {
        double* o = tile_.o.data() + static_cast<std::size_t>(row) * d;
        for (int e = 0; e < d; ++e) o[e] *= tile_.alpha[row];
        AddPV(row, 1.0, o);
      }
    }
    return Emit(Phase::kUpdateO, i, j, resident, visit);
  }

  const Schedule& schedule_;
  const AttentionProblem& p_;
  const AttentionInputs* in_;
  const int compute_;
  const ReplayShard shard_;
  int row_begin_ = 0, rows_ = 0, col_begin_ = 0, cols_ = 0;
  TileNumerics tile_;
  int image_row_begin_ = 0;
  std::vector<double> o_hbm_, l_hbm_, m_hbm_;
};

}  // namespace

// ---------------------------------------------------------------------------------------------------------
// [SECTION] Stepper
// ---------------------------------------------------------------------------------------------------------

std::string_view SramTileName(SramTile tile) { return kSramTileNames[static_cast<int>(tile)]; }

std::int64_t SramTileFloats(SramTile tile, int rows, int cols, int d) {
  switch (tile) {
    case SramTile::kQ:
    case SramTile::kO:
    case SramTile::kDO:
    case SramTile::kDQ: return std::int64_t{rows} * d;
    case SramTile::kK:
    case SramTile::kV:
    case SramTile::kDK:
    case SramTile::kDV: return std::int64_t{cols} * d;
    case SramTile::kS:
    case SramTile::kP:
    case SramTile::kDP: return std::int64_t{rows} * cols;
    default: return rows;  // the per-row statistics
  }
}

AttentionInputs MakeRandomInputs(int n, int d, std::uint64_t seed) {
  AttentionInputs in;
  in.n = n;
  in.d = d;
  const std::size_t count = static_cast<std::size_t>(n) * d;
  in.q.resize(count);
  in.k.resize(count);
  in.v.resize(count);
  // Three independent streams, so Q does not change when only d of K is looked at, and so on.
  FillUniform(in.q, seed * 3 + 0, -3.0f, 3.0f);
  FillUniform(in.k, seed * 3 + 1, -3.0f, 3.0f);
  FillUniform(in.v, seed * 3 + 2, -3.0f, 3.0f);
  return in;
}

std::vector<float> MakeRandomUpstreamGradient(std::int64_t rows, int d, std::uint64_t seed) {
  std::vector<float> dout(static_cast<std::size_t>(rows) * static_cast<std::size_t>(d));
  // A stream no seed's Q, K or V uses (those are seed·3 + 0, 1, 2).
  FillUniform(dout, ~(seed * 0x9E3779B97F4A7C15ULL), -1.0f, 1.0f);
  return dout;
}

AttentionInputs MakeRandomInputs(const AttentionProblem& problem, std::uint64_t seed) {
  AttentionInputs in = MakeRandomInputs(problem.n, problem.d, seed);
  if (problem.backward()) in.dout = MakeRandomUpstreamGradient(problem.n, problem.d, seed);
  return in;
}

Stepper::Stepper(const AttentionProblem& problem, const AttentionInputs* inputs)
    : schedule_(problem), inputs_(inputs) {
  if (!inputs) return;
  const std::size_t count = static_cast<std::size_t>(problem.n) * problem.d;
  if (inputs->n != problem.n || inputs->d != problem.d || inputs->q.size() != count || inputs->k.size() != count ||
      inputs->v.size() != count)
    throw std::invalid_argument("Stepper: the inputs do not match the problem's N and d");
  if (problem.backward()) {
    if (inputs->dout.size() != count)
      throw std::invalid_argument("Stepper: the backward pass needs dO of N × d values");
    saved_ = std::make_shared<const ForwardSaved>(RunForwardForBackward(problem, *inputs));
  }
}

Ledger Stepper::ForwardLedger() const {
  AttentionProblem forward = problem();
  if (forward.backward()) {
    forward.pass = Pass::kForward;
    forward.order = LoopOrder::kQOuter;
  }
  return Stepper(forward, nullptr).FinalLedger();
}

StepState Stepper::StateAt(std::int64_t step) const {
  if (problem().backward()) return BackwardStateAt(step);
  StepState state;
  state.info = schedule_.Info(step);
  const int focus = state.info.i;
  Executor exec(schedule_, inputs_, focus >= 0 ? focus : kComputeNone);
  Ledger before;
  auto visit = [&](const StepView& view) {
    const StepInfo& info = view.info();
    // The history of tile i: its running m_i, ℓ_i after each finished tile iteration.
    const bool ends_iteration = info.phase == TileIterationPhases(problem().order).back();
    if (focus >= 0 && info.i == focus && ends_iteration && info.step <= step && has_inputs()) {
      state.history_j.push_back(info.j);
      state.m_history.push_back(view.tile().m);
      state.l_history.push_back(view.tile().l);
    }
    if (info.step == step - 1) before = view.ledger();
    return info.step < step;
  };
  exec.Run(visit);
  state.ledger = exec.ledger();
  state.delta = LedgerDelta(step > 0 ? before : Ledger{}, state.ledger);
  state.sram_tiles = exec.sram_tiles();
  if (state.info.i >= 0) {
    state.row_begin = problem().RowBegin(state.info.i);
    state.rows = problem().RowsInTile(state.info.i);
  }
  if (state.info.j >= 0) {
    state.col_begin = problem().ColBegin(state.info.j);
    state.cols = problem().ColsInTile(state.info.j);
  }
  if (focus >= 0 && has_inputs()) state.tile = exec.tile();
  return state;
}

StepState Stepper::BackwardStateAt(std::int64_t step) const {
  StepState state;
  state.info = schedule_.Info(step);
  const int i = state.info.i, j = state.info.j;
  Ledger before;
  WalkBackward(schedule_, inputs_, saved_.get(), BackwardFocus{false, i, j}, [&](const StepView& view) {
    const std::int64_t at = view.info().step;
    if (at == step - 1) before = view.ledger();
    if (at == step) {
      state.ledger = view.ledger();
      state.sram_tiles = view.sram_tiles();
      state.grad = view.grad();
    }
    return at < step;
  });
  state.delta = LedgerDelta(step > 0 ? before : Ledger{}, state.ledger);
  if (i >= 0) {
    state.row_begin = problem().RowBegin(i);
    state.rows = problem().RowsInTile(i);
  }
  if (j >= 0) {
    state.col_begin = problem().ColBegin(j);
    state.cols = problem().ColsInTile(j);
  }
  return state;
}

Ledger Stepper::LedgerAt(std::int64_t step) const {
  if (problem().backward()) {
    Ledger ledger;
    WalkBackward(schedule_, nullptr, nullptr, {}, [&](const StepView& view) {
      ledger = view.ledger();
      return view.info().step < step;
    });
    return ledger;
  }
  Executor exec(schedule_, nullptr, kComputeNone);
  auto visit = [step](const StepView& view) { return view.info().step < step; };
  exec.Run(visit);
  return exec.ledger();
}

std::vector<double> Stepper::HbmOutputAt(std::int64_t step) const {
  if (!inputs_) return {};
  if (problem().backward()) {
    std::vector<double> dq;
    WalkBackward(schedule_, inputs_, saved_.get(), BackwardFocus{true}, [step](const StepView& view) {
      return view.info().step < step;
    }, nullptr, &dq);
    return dq;
  }
  Executor exec(schedule_, inputs_, kComputeAll);
  auto visit = [step](const StepView& view) { return view.info().step < step; };
  exec.Run(visit);
  return exec.TakeOutput();
}

std::vector<double> Stepper::Replay(const std::function<bool(const StepView&)>& visit, ReplayShard shard) const {
  if (problem().backward()) {
    std::vector<double> gradients;
    const bool finished = WalkBackward(schedule_, inputs_, saved_.get(), BackwardFocus{inputs_ != nullptr}, visit,
                                       &gradients);
    return finished ? gradients : std::vector<double>{};
  }
  Executor exec(schedule_, inputs_, inputs_ ? kComputeAll : kComputeNone, shard);
  const bool finished = exec.Run(visit);
  if (!finished || !inputs_) return {};
  return exec.TakeOutput();
}

MaxChange RowMaxChange(const TileNumerics& tile, int row) {
  const auto r = static_cast<std::size_t>(row);
  if (row < 0 || r >= tile.alpha.size() || r >= tile.m_prev.size() || r >= tile.m.size()) return MaxChange::kUnknown;
  const double m_old = tile.m_prev[r], m_new = tile.m[r];
  if (m_new == kNegInf) return MaxChange::kNoKeys;
  if (m_old == kNegInf) return MaxChange::kFirst;
  return m_new > m_old ? MaxChange::kGrew : MaxChange::kSame;
}

MaxChangeCounts CountMaxChanges(const TileNumerics& tile) {
  MaxChangeCounts counts;
  for (int row = 0; row < static_cast<int>(tile.alpha.size()); ++row) {
    switch (RowMaxChange(tile, row)) {
      case MaxChange::kFirst: ++counts.first; break;
      case MaxChange::kGrew:
        ++counts.grew;
        counts.min_grew_alpha = std::min(counts.min_grew_alpha, tile.alpha[static_cast<std::size_t>(row)]);
        break;
      case MaxChange::kSame: ++counts.same; break;
      case MaxChange::kNoKeys: ++counts.no_keys; break;
      case MaxChange::kUnknown: break;
    }
  }
  return counts;
}

}  // namespace flashviz
