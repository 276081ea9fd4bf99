// The stepper: the tiled FlashAttention forward pass and FlashAttention-2's backward pass, phase by phase, as the
// single source of truth for every view of them (docs/design.md, principle 1). It keeps no per-step or N² state:
// the state after any step is rebuilt by replaying the schedule with arithmetic only for the tiles that step works
// on (the forward pass's Q tile; the backward pass's Q and K/V tiles), and the ledger is counted by the same replay
// (count-only for every other tile).
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <span>
#include <vector>

#include "kernels/cpu/ledger.h"
#include "kernels/cpu/problem.h"
#include "kernels/cpu/schedule.h"

namespace flashviz {

// One head's inputs: row-major N×d float32 each (the HW4 layout). `dout` is the upstream gradient dO of the
// backward pass (N×d; empty for the forward pass).
struct AttentionInputs {
  int n = 0;
  int d = 0;
  std::vector<float> q, k, v;
  std::vector<float> dout;
};
// Values uniform in [−3, 3] (the assignment's range) from a portable generator.
AttentionInputs MakeRandomInputs(int n, int d, std::uint64_t seed);
// A dO for those inputs, uniform in [−1, 1], from a stream of its own (Q, K and V do not change with it).
// `rows` may be B·N (one upstream gradient per batch of an HW4 file, from one stream).
std::vector<float> MakeRandomUpstreamGradient(std::int64_t rows, int d, std::uint64_t seed);
// Everything the problem's pass needs, random from `seed`: Q, K, V, and dO for the backward pass.
AttentionInputs MakeRandomInputs(const AttentionProblem& problem, std::uint64_t seed);

// The tiles that can be resident in SRAM (on chip) during a tile iteration.
enum class SramTile : std::uint8_t {
  kQ,      // Q_i, B_r × d
  kK,      // K_j, B_c × d
  kV,      // V_j, B_c × d
  kO,      // O_i, B_r × d
  kL,      // ℓ_i, B_r
  kM,      // m_i, B_r
  kS,      // S_ij, B_r × B_c; P̃_ij overwrites it in place
  kMTile,  // m̃_ij (kv) or rowmax(S_ij) (q), B_r
  kLTile,  // ℓ̃_ij (kv) or rowsum(P̃_ij) (q), B_r
  kMNew,   // m_new (kv), B_r
  kLNew,   // ℓ_new (kv), B_r
  kAlpha,  // e^(m_old − m_new) (q), B_r
  // The backward pass's (Q_i, K_j, V_j and, for the delta step, O_i as above):
  kDO,     // dO_i, B_r × d
  kDK,     // dK_j, B_c × d, accumulated over the Q tiles
  kDV,     // dV_j, B_c × d, accumulated over the Q tiles
  kDQ,     // dQ_i, B_r × d, read from HBM, added to and written back in grad_q
  kLse,    // L_i = m_i + log ℓ_i saved by the forward pass, B_r
  kDelta,  // D_i = rowsum(dO_i ∘ O_i), B_r
  kP,      // S_ij, B_r × B_c; P_ij overwrites it in place
  kDP,     // dP_ij, B_r × B_c; dS_ij overwrites it in place
};
inline constexpr int kSramTileCount = 20;
using SramTiles = std::uint32_t;  // bit t set: SramTile t is resident
constexpr SramTiles Bit(SramTile t) { return static_cast<SramTiles>(1u << static_cast<unsigned>(t)); }
std::string_view SramTileName(SramTile tile);  // "Q_i", "K_j", ..., "S_ij/P~_ij", ..., "dP_ij/dS_ij"
// Floats a resident tile occupies for a tile iteration with `rows` × `cols` (edge tiles at their real size).
std::int64_t SramTileFloats(SramTile tile, int rows, int cols, int d);

// What the model holds on chip for one Q tile, in float64. Arrays are empty while not live.
struct TileNumerics {
  std::vector<double> s;       // S_ij (rows × cols), −∞ where masked
  std::vector<double> p;       // P̃_ij (rows × cols)
  std::vector<double> m_tile;  // m̃_ij (kv), rowmax(S_ij) (q)
  std::vector<double> l_tile;  // ℓ̃_ij (kv), rowsum(P̃_ij) (q)
  std::vector<double> m;       // running m_i after the phase
  std::vector<double> l;       // running ℓ_i after the phase
  std::vector<double> m_prev;  // m_i when this tile iteration began (the ghost in the view)
  std::vector<double> l_prev;  // ℓ_i when this tile iteration began
  std::vector<double> alpha;   // e^(m_prev − m_new): the rescale of the old state (0 when m_prev = −∞)
  std::vector<double> beta;    // kv: e^(m̃_ij − m_new), the weight of this tile's contribution
  std::vector<double> o;       // O_i (rows × d): normalized in kv, unnormalized in q until finalize
  std::vector<double> lse;     // q: L_i = m_i + log ℓ_i, from write_back on
};

// How one row's running maximum moved in the current tile iteration, once the new maximum is known (kv:
// update_stats, q: rowmax). Every view that words α (the statistics header, the narration, the tooltips) reads
// this, so none can call a row's first scores "no new maximum".
enum class MaxChange {
  kUnknown,  // the new maximum is not computed yet in this tile iteration (or no Q tile on chip)
  kFirst,    // m_old = −∞ and this tile brings the row's first unmasked scores: α = 0, nothing to rescale
  kGrew,     // m_new > m_old > −∞: the old ℓ_i and O_i shrink by α = e^(m_old − m_new) ∈ (0, 1)
  kSame,     // m_new = m_old > −∞: α = 1
  kNoKeys,   // still −∞: every key of the row so far is masked (causal), so it has no maximum yet
};
MaxChange RowMaxChange(const TileNumerics& tile, int row);
struct MaxChangeCounts {
  int first = 0, grew = 0, same = 0, no_keys = 0;
  double min_grew_alpha = 1;  // the smallest α among the rows that grew
  bool known() const { return first + grew + same + no_keys > 0; }
};
MaxChangeCounts CountMaxChanges(const TileNumerics& tile);

// What the backward pass holds for the current step, in float64. Arrays are empty while not live.
struct BackwardNumerics {
  std::vector<double> o;      // O_i (rows × d), from the forward pass (delta step)
  std::vector<double> lse;    // L_i (rows), saved by the forward pass
  std::vector<double> delta;  // D_i = rowsum(dO_i ∘ O_i) (rows)
  std::vector<double> s;      // S_ij (rows × cols), −∞ where masked
  std::vector<double> p;      // P_ij = exp(S_ij − L_i) (rows × cols)
  std::vector<double> dp;     // dP_ij = dO_i V_jᵀ (rows × cols)
  std::vector<double> ds;     // dS_ij = P_ij ∘ (dP_ij − D_i) (rows × cols)
  std::vector<double> dk;     // dK_j on chip (cols × d): the Q tiles so far
  std::vector<double> dv;     // dV_j on chip (cols × d)
  std::vector<double> dk_prev, dv_prev;  // dK_j, dV_j when this tile iteration began (the view's "before")
  std::vector<double> dq;     // dQ_i in HBM after the step (rows × d)
  std::vector<double> dq_prev;  // dQ_i as grad_q read it (rows × d)
};

// Everything a view needs about the state after one step.
struct StepState {
  StepInfo info;
  int row_begin = 0, rows = 0;  // tile i (rows = 0 where no Q tile is involved)
  int col_begin = 0, cols = 0;  // tile j (cols = 0 where no K/V tile is involved)
  TileNumerics tile;            // forward: for tile i, when inputs were given
  BackwardNumerics grad;        // backward: for tiles i and j, when inputs were given
  SramTiles sram_tiles = 0;
  Ledger ledger;  // cumulative after the step
  Ledger delta;   // what this step moved
  // The running m_i and ℓ_i of tile i after each finished tile iteration so far (rows values per entry),
  // with the K/V tile index of each entry.
  std::vector<int> history_j;
  std::vector<std::vector<double>> m_history, l_history;
};

// Read access to the replay at one step, for callers that walk every step (the trace writer).
class StepView {
 public:
  virtual ~StepView() = default;
  virtual const StepInfo& info() const = 0;
  virtual const Ledger& ledger() const = 0;
  virtual SramTiles sram_tiles() const = 0;
  // The on-chip numbers of the current Q tile (empty arrays in count-only replays and the backward pass).
  virtual const TileNumerics& tile() const = 0;
  // The backward pass's numbers of the current step (empty arrays in count-only replays and the forward pass).
  virtual const BackwardNumerics& grad() const = 0;
};

// What the backward pass takes from the forward pass, per row: O (N × d), L = m + log ℓ and D = rowsum(dO ∘ O)
// (N each). O(N·d), never N².
struct ForwardSaved {
  std::vector<double> o, lse, delta;
};

// A share of a forward replay's arithmetic: the Q tiles i with i % count == index (the q order computes each Q
// tile on its own, so shards can run on separate threads; the bookkeeping of every step is cheap).
struct ReplayShard {
  int index = 0;
  int count = 1;
};

class Stepper {
 public:
  // `inputs` may be null: the stepper then counts (ledger, schedule) and does no arithmetic.
  // It must outlive the stepper and match the problem's N and d (and have dO for the backward pass). The
  // backward pass runs the forward pass in the Q-outer order once, here, for the O, L and D it consumes.
  Stepper(const AttentionProblem& problem, const AttentionInputs* inputs);

  const AttentionProblem& problem() const { return schedule_.problem(); }
  const Schedule& schedule() const { return schedule_; }
  std::int64_t step_count() const { return schedule_.step_count(); }
  StepInfo Info(std::int64_t step) const { return schedule_.Info(step); }
  bool has_inputs() const { return inputs_ != nullptr; }
  const AttentionInputs* inputs() const { return inputs_; }

  // The full state after `step`, with arithmetic for tile i only: O(step) bookkeeping + O(j·B_r·B_c·d).
  StepState StateAt(std::int64_t step) const;
  // The ledger after `step` (count-only replay).
  Ledger LedgerAt(std::int64_t step) const;
  Ledger FinalLedger() const { return LedgerAt(step_count() - 1); }

  // O as it stands in HBM after `step` (N × d): kv keeps every O_i normalized over the K/V tiles seen so
  // far; q has the finished O_i written and zeros elsewhere. The backward pass: dQ as it stands in HBM (every
  // K/V tile so far has added into it). Arithmetic for every tile: O(N²d).
  std::vector<double> HbmOutputAt(std::int64_t step) const;

  // Walks every step with arithmetic for every tile (when inputs were given), calling `visit` after each;
  // `visit` returns false to stop. Returns, when inputs were given and the walk finished, the final O (N × d) of
  // the forward pass, or dQ, dK and dV one after another (3 · N × d) of the backward pass. The forward pass may be
  // split: `shard` computes only its Q tiles (their rows of O; the others' are left 0, and at their steps tile()
  // still holds the last computed tile's numbers).
  std::vector<double> Replay(const std::function<bool(const StepView&)>& visit, ReplayShard shard = {}) const;

  // The backward pass: what the forward pass saved (null for the forward pass or without inputs).
  const ForwardSaved* saved() const { return saved_.get(); }
  // The forward pass's ledger of the same problem (Q-outer order): what a training step pays before this one.
  Ledger ForwardLedger() const;

 private:
  StepState BackwardStateAt(std::int64_t step) const;

  Schedule schedule_;
  const AttentionInputs* inputs_;
  std::shared_ptr<const ForwardSaved> saved_;
};

}  // namespace flashviz
