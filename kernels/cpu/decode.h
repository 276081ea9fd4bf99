// Decoding with split-KV (flash-decoding), grouped-query heads and a paged KV cache, as the stepper walks it.
//
// A decoding step has R query rows per query head (one new token; a few for speculative decoding) against a cache
// of N keys. One block per query head would leave most of a GPU idle, so the keys are cut into S splits that run
// in parallel: each loads its K/V chunk once for the H/G query heads that share the KV head (grouped-query
// attention), computes the softmax of its chunk alone and writes a partial state (m_s, ℓ_s and the unnormalized
// O_s) to HBM; a merge then rescales the partials by α_s = e^(m_s − M), M = max_s m_s (the online softmax's
// rescaling, one level up) and writes O = Σ_s α_s O_s / Σ_s α_s ℓ_s. The keys sit in a paged pool: blocks of P
// tokens, found through a block table.
//
// The same contract as the tiled stepper (stepper.h): the ledger is incremented only where the schedule loads or
// stores, the state after any step is rebuilt with arithmetic only for the KV head it works on, nothing is kept
// per step. The layout is kernels/cpu/decode_reference.h's (Q: H × R × d, K and V: G × N × d, O: H × R × d).
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "kernels/cpu/decode_reference.h"
#include "kernels/cpu/ledger.h"

namespace flashviz {

inline constexpr int kMaxDecodeHeads = 1024;
inline constexpr int kMaxDecodeQueryRows = 64;
inline constexpr int kMaxDecodeKvLength = 1 << 22;
inline constexpr int kMaxDecodeSplits = 1 << 16;

// What was asked for, before the split count is resolved.
struct DecodeRequest {
  int kv_len = 256;  // N
  int d = 8;
  int q_rows = 1;                          // R
  int heads = 4;                           // H
  int kv_heads = 2;                        // G
  int page = 16;                           // P, tokens per block of the paged cache
  std::optional<int> splits;               // S; from the SRAM size when absent
  std::optional<std::int64_t> sram_bytes;  // M; 16 KiB (a Vortex core's local memory) when absent
  std::optional<double> scale;             // absent: 1/√d
};

// A resolved problem: every number the schedule needs.
struct DecodeProblem {
  DecodeShape shape;
  int splits = 1;
  int page = 16;
  std::int64_t sram_bytes = 0;
  bool splits_from_sram = false;  // S came from M (the largest chunk that fits), not from --splits
  // Logical page → physical block of the pool (a shuffled permutation of 0 … pages − 1, from the seed). The pool
  // is one block per page; each block holds the P keys (and values) of every KV head.
  std::vector<int> block_table;

  int kv_len() const { return shape.kv_len; }
  int d() const { return shape.d; }
  int group() const { return shape.group(); }  // query heads per KV head
  // The query rows that share KV head g (its H/G query heads × R rows): the rows a split works on together.
  int rows() const { return shape.group() * shape.q_rows; }
  int pages() const { return (shape.kv_len + page - 1) / page; }
  // Split s holds pages [SplitPageBegin(s), SplitPageBegin(s + 1)): the pages dealt out as evenly as they go.
  int SplitPageBegin(int s) const { return static_cast<int>(static_cast<std::int64_t>(s) * pages() / splits); }
  int SplitKeyBegin(int s) const { return SplitPageBegin(s) * page; }
  int SplitKeyEnd(int s) const;
  int SplitKeys(int s) const { return SplitKeyEnd(s) - SplitKeyBegin(s); }
  int MaxSplitKeys() const;
  int SplitOfPage(int logical_page) const;
  // The first query head of KV head g's group.
  int FirstHeadOf(int g) const { return g * shape.group(); }
};

// Why a request cannot be run, or nothing when it can.
std::optional<std::string> DecodeRequestError(const DecodeRequest& request);
// Resolves the split count (from M: the largest chunk of whole pages whose tiles fit, see DecodeSramFloats) and
// draws the block table from `seed`. Throws InputError with the reason when the request is impossible.
DecodeProblem ResolveDecodeProblem(const DecodeRequest& request, std::uint64_t seed);
// What one split holds on chip at most, in floats: K and V chunks (2·C·d), the group's query rows (rows·d), its
// scores (rows·C), O_s (rows·d) and m_s, ℓ_s (2·rows).
std::int64_t DecodeSramFloats(int rows, int chunk_keys, int d);

// Q, K, V uniform in [−3, 3] from `seed` (the streams MakeRandomInputs uses for the same seed).
struct DecodeInputs {
  std::vector<float> q, k, v;
};
DecodeInputs MakeRandomDecodeInputs(const DecodeProblem& problem, std::uint64_t seed);

enum class DecodePhase : std::uint8_t {
  kLoadKv,        // K, V of the split's chunk: HBM → SRAM through the block table (once for the whole group)
  kLoadQ,         // the group's query rows: HBM → SRAM
  kScores,        // S = scale · Q Kᵀ over the chunk
  kRowMax,        // m_s = rowmax(S)
  kExp,           // P̃ = exp(S − m_s), in place of S
  kRowSum,        // ℓ_s = rowsum(P̃)
  kUpdateO,       // O_s = P̃ V (unnormalized)
  kWritePartial,  // m_s, ℓ_s, O_s → HBM (S > 1)
  kMergeStats,    // every split's m_s, ℓ_s ← HBM; M = max_s m_s, α_s = e^(m_s − M), ℓ = Σ_s α_s ℓ_s
  kMergeO,        // O_s ← HBM; O += α_s O_s (one step per split)
  kWriteO,        // O / ℓ → HBM (with one split, straight after update_o: no partials, no merge)
  kDone,
};
inline constexpr int kDecodePhaseCount = 12;
std::string_view DecodePhaseName(DecodePhase phase);  // "load_kv", ..., "write_partial", "merge_stats", ...

struct DecodeStepInfo {
  std::int64_t step = 0;
  DecodePhase phase = DecodePhase::kLoadKv;
  int kv_head = -1;  // g, −1 on done
  int split = -1;    // s, −1 where the step is not about one split
  bool operator==(const DecodeStepInfo&) const = default;
};

// The tiles a decode step can hold on chip.
enum class DecodeSramTile : std::uint8_t {
  kK,             // the chunk's K, C × d
  kV,             // the chunk's V, C × d
  kQ,             // the group's query rows, rows × d
  kS,             // S, rows × C; P̃ overwrites it in place
  kStats,         // m_s, ℓ_s, rows each
  kO,             // O_s (split) or the merge's accumulator O, rows × d
  kPartialStats,  // merge: every split's m_s, ℓ_s and α_s, M and ℓ (3·rows·S + 2·rows)
  kPartialO,      // merge: the O_s being added, rows × d
};
inline constexpr int kDecodeSramTileCount = 8;
std::string_view DecodeSramTileName(DecodeSramTile tile);
constexpr std::uint32_t Bit(DecodeSramTile t) {
  return 1u << static_cast<unsigned>(t);
}

// One split's numbers for the rows of its KV head group (row r of the group is query head FirstHeadOf(g) + r / R,
// row r % R). Arrays are empty while not live.
struct DecodeSplitNumerics {
  std::vector<double> s;  // S (rows × keys)
  std::vector<double> p;  // P̃ (rows × keys)
  std::vector<double> m;  // m_s (rows)
  std::vector<double> l;  // ℓ_s (rows)
  std::vector<double> o;  // O_s (rows × d), unnormalized
};

struct DecodeMergeNumerics {
  std::vector<double> m_split, l_split;  // every split's m_s, ℓ_s (rows × S, split fastest)
  std::vector<double> m;                 // M = max_s m_s (rows)
  std::vector<double> alpha;             // α_s = e^(m_s − M) (rows × S)
  std::vector<double> l;                 // ℓ = Σ_s α_s ℓ_s (rows)
  std::vector<double> o;                 // Σ α_s O_s over the splits added so far (rows × d); O / ℓ at write_o
  int merged = 0;                        // splits added into o
};

struct DecodeState {
  DecodeStepInfo info;
  int rows = 0;                               // the KV head group's query rows (0 on done)
  int key_begin = 0, keys = 0;                // the split's keys (0 where no split)
  DecodeSplitNumerics split;                  // the current split, after the phase (when inputs were given)
  std::vector<DecodeSplitNumerics> partials;  // KV head g's partials written so far (m, l, o only)
  DecodeMergeNumerics merge;                  // merge phases
  std::vector<double> o_final;                // write_o: O of the group (rows × d), normalized
  std::uint32_t sram_tiles = 0;               // DecodeSramTile bits
  Ledger ledger;                              // cumulative after the step
  Ledger delta;                               // what this step moved
};

class DecodeStepper {
 public:
  // `inputs` may be null: the stepper then counts and does no arithmetic. It must outlive the stepper.
  DecodeStepper(const DecodeProblem& problem, const DecodeInputs* inputs);

  const DecodeProblem& problem() const { return problem_; }
  bool has_inputs() const { return inputs_ != nullptr; }
  const DecodeInputs* inputs() const { return inputs_; }
  std::int64_t step_count() const;
  DecodeStepInfo Info(std::int64_t step) const;
  // The first step of split s of KV head g, and of KV head g's merge (its merge_stats; its write_o with one split).
  std::int64_t FirstStepOfSplit(int g, int s) const;
  std::int64_t FirstStepOfMerge(int g) const;

  // The state after `step`: the ledger by a count-only replay, arithmetic for KV head g's splits up to the current
  // one (all of them in the merge).
  DecodeState StateAt(std::int64_t step) const;
  Ledger LedgerAt(std::int64_t step) const;
  Ledger FinalLedger() const { return LedgerAt(step_count() - 1); }

  // Walks every step, calling `visit` with the state after it (false stops). Returns O (H × R × d) when inputs were
  // given and the walk finished.
  std::vector<double> Walk(const std::function<bool(const DecodeState&)>& visit) const;

 private:
  // Applies step `info`'s traffic to `ledger` (the one place where decode bytes are counted).
  void Count(const DecodeStepInfo& info, Ledger& ledger) const;
  std::uint32_t ResidentTiles(const DecodeStepInfo& info) const;
  std::int64_t ResidentFloats(std::uint32_t tiles, const DecodeStepInfo& info) const;
  DecodeSplitNumerics ComputeSplit(int g, int s) const;
  void FillState(DecodeState& state, const std::vector<DecodeSplitNumerics>& splits) const;

  DecodeProblem problem_;
  const DecodeInputs* inputs_;
};

// decode_naive's traffic for the same problem (one block per query head, no split, no GQA sharing: each query head
// reads its KV head's whole cache and block table), counted by walking its blocks.
Ledger DecodeNaiveLedger(const DecodeProblem& problem);
// The KV cache's size in bytes (K and V of every KV head, fp32 as the model counts), and how many times a ledger
// read it: its K and V bytes over that size.
std::int64_t KvCacheBytes(const DecodeProblem& problem);
double KvCacheReads(const DecodeProblem& problem, const Ledger& ledger);

}  // namespace flashviz
