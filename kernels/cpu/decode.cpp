#include "kernels/cpu/decode.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>

#include "kernels/common/format.h"
#include "kernels/common/input_error.h"
#include "kernels/common/random.h"

namespace flashviz {
namespace {

constexpr double kNegInf = -std::numeric_limits<double>::infinity();
constexpr std::int64_t kDefaultDecodeSramBytes = 16 * 1024;

// The phases of one split, in order; the last is write_partial, or write_o when there is one split (its O needs
// no merge).
constexpr DecodePhase kSplitPhases[] = {DecodePhase::kLoadKv,  DecodePhase::kLoadQ,       DecodePhase::kScores,
                                        DecodePhase::kRowMax,  DecodePhase::kExp,         DecodePhase::kRowSum,
                                        DecodePhase::kUpdateO, DecodePhase::kWritePartial};
constexpr int kStepsPerSplit = 8;

}  // namespace

std::string_view DecodePhaseName(DecodePhase phase) {
  static constexpr std::string_view kNames[kDecodePhaseCount] = {"load_kv",     "load_q",  "scores",   "rowmax",
                                                                 "exp",         "rowsum",  "update_o", "write_partial",
                                                                 "merge_stats", "merge_o", "write_o",  "done"};
  return kNames[static_cast<int>(phase)];
}

std::string_view DecodeSramTileName(DecodeSramTile tile) {
  static constexpr std::string_view kNames[kDecodeSramTileCount] = {"K chunk",  "V chunk", "Q rows",        "S/P~",
                                                                    "m_s, l_s", "O",       "partial stats", "O_s"};
  return kNames[static_cast<int>(tile)];
}

int DecodeProblem::SplitKeyEnd(int s) const {
  return std::min(shape.kv_len, SplitPageBegin(s + 1) * page);
}

int DecodeProblem::MaxSplitKeys() const {
  int most = 0;
  for (int s = 0; s < splits; ++s) most = std::max(most, SplitKeys(s));
  return most;
}

int DecodeProblem::SplitOfPage(int logical_page) const {
  // SplitPageBegin is monotonic: the last split whose first page is at or before this one.
  int lo = 0, hi = splits - 1;
  while (lo < hi) {
    const int mid = (lo + hi + 1) / 2;
    if (SplitPageBegin(mid) <= logical_page)
      lo = mid;
    else
      hi = mid - 1;
  }
  return lo;
}

std::int64_t DecodeSramFloats(int rows, int chunk_keys, int d) {
  return 2LL * chunk_keys * d + static_cast<std::int64_t>(rows) * (2LL * d + chunk_keys + 2);
}

std::optional<std::string> DecodeRequestError(const DecodeRequest& r) {
  if (r.kv_len < 1 || r.kv_len > kMaxDecodeKvLength)
    return Sprintf("--kv-len must be in 1 … %d (got %d)", kMaxDecodeKvLength, r.kv_len);
  if (r.d < 1 || r.d > 1024) return Sprintf("--d must be in 1 … 1024 (got %d)", r.d);
  if (r.q_rows < 1 || r.q_rows > kMaxDecodeQueryRows)
    return Sprintf("--q-rows must be in 1 … %d (got %d)", kMaxDecodeQueryRows, r.q_rows);
  if (r.heads < 1 || r.heads > kMaxDecodeHeads)
    return Sprintf("--heads must be in 1 … %d (got %d)", kMaxDecodeHeads, r.heads);
  if (r.kv_heads < 1 || r.kv_heads > r.heads)
    return Sprintf("--kv-heads must be in 1 … --heads = %d (got %d)", r.heads, r.kv_heads);
  if (r.heads % r.kv_heads != 0)
    return Sprintf(
        "--kv-heads %d does not divide --heads %d: grouped-query attention gives every KV head the same "
        "number of query heads",
        r.kv_heads, r.heads);
  if (r.page < 1 || r.page > kMaxDecodeKvLength) return Sprintf("--page must be at least 1 (got %d)", r.page);
  const int pages = (r.kv_len + r.page - 1) / r.page;
  if (r.splits && (*r.splits < 1 || *r.splits > std::min(pages, kMaxDecodeSplits)))
    return Sprintf("--splits must be in 1 … %d: a split holds whole pages, and N = %d is %d page%s of %d (got %d)",
                   std::min(pages, kMaxDecodeSplits), r.kv_len, pages, pages == 1 ? "" : "s", r.page, *r.splits);
  if (r.sram_bytes && *r.sram_bytes < 16) return Sprintf("--sram must be at least 16 bytes");
  if (r.scale && !std::isfinite(*r.scale)) return std::string("--scale must be a finite number");
  if (!r.splits) {
    const std::int64_t floats = r.sram_bytes.value_or(kDefaultDecodeSramBytes) / 4;
    const int rows = r.heads / r.kv_heads * r.q_rows;
    const int one_page = std::min(r.page, r.kv_len);
    if (DecodeSramFloats(rows, one_page, r.d) > floats)
      return Sprintf(
          "M = %lld bytes holds no chunk of one page: %d keys of d = %d for %d query rows take %lld bytes "
          "(give a larger --sram, a smaller --page or --splits)",
          static_cast<long long>(floats * 4), one_page, r.d, rows,
          static_cast<long long>(4 * DecodeSramFloats(rows, one_page, r.d)));
  }
  return std::nullopt;
}

DecodeProblem ResolveDecodeProblem(const DecodeRequest& r, std::uint64_t seed) {
  if (auto error = DecodeRequestError(r)) throw InputError(*error);
  DecodeProblem p;
  p.shape.heads = r.heads;
  p.shape.kv_heads = r.kv_heads;
  p.shape.q_rows = r.q_rows;
  p.shape.kv_len = r.kv_len;
  p.shape.d = r.d;
  p.shape.scale = r.scale.value_or(1.0 / std::sqrt(static_cast<double>(r.d)));
  p.page = r.page;
  p.sram_bytes = r.sram_bytes.value_or(kDefaultDecodeSramBytes);
  if (r.splits) {
    p.splits = *r.splits;
  } else {
    // The largest chunk of whole pages that fits in M, then as many splits as it takes to cover the pages.
    const std::int64_t floats = p.sram_bytes / 4;
    int pages_per_split = 1;
    while (pages_per_split < p.pages() &&
           DecodeSramFloats(p.rows(), std::min(r.kv_len, (pages_per_split + 1) * r.page), r.d) <= floats)
      ++pages_per_split;
    p.splits = (p.pages() + pages_per_split - 1) / pages_per_split;
    p.splits_from_sram = true;
  }
  // A Fisher-Yates shuffle from a stream of its own: the pool's blocks in a random order, as an allocator that has
  // served other sequences leaves them.
  p.block_table.resize(static_cast<std::size_t>(p.pages()));
  std::iota(p.block_table.begin(), p.block_table.end(), 0);
  SplitMix64 random(seed * 0x9E3779B97F4A7C15ULL + 0x5851F42D4C957F2DULL);
  for (int i = p.pages() - 1; i > 0; --i)
    std::swap(p.block_table[static_cast<std::size_t>(i)],
              p.block_table[static_cast<std::size_t>(random.Next() % static_cast<std::uint64_t>(i + 1))]);
  return p;
}

DecodeInputs MakeRandomDecodeInputs(const DecodeProblem& p, std::uint64_t seed) {
  DecodeInputs in;
  in.q.resize(static_cast<std::size_t>(p.shape.heads) * p.shape.q_rows * p.d());
  in.k.resize(static_cast<std::size_t>(p.shape.kv_heads) * p.kv_len() * p.d());
  in.v.resize(in.k.size());
  FillUniform(in.q, seed * 3 + 0, -3.0f, 3.0f);
  FillUniform(in.k, seed * 3 + 1, -3.0f, 3.0f);
  FillUniform(in.v, seed * 3 + 2, -3.0f, 3.0f);
  return in;
}

DecodeStepper::DecodeStepper(const DecodeProblem& problem, const DecodeInputs* inputs)
    : problem_(problem), inputs_(inputs) {
  if (!inputs) return;
  const std::size_t q = static_cast<std::size_t>(problem.shape.heads) * problem.shape.q_rows * problem.d();
  const std::size_t kv = static_cast<std::size_t>(problem.shape.kv_heads) * problem.kv_len() * problem.d();
  if (inputs->q.size() != q || inputs->k.size() != kv || inputs->v.size() != kv)
    throw std::invalid_argument("DecodeStepper: the inputs do not match the problem's shape");
}

// Steps: every split of every KV head (kStepsPerSplit each), then, with more than one split, each KV head's merge
// (merge_stats, S merge_o, write_o), then done. A GPU runs the splits of all heads at once and the merge as a
// second kernel; the stepper lays them out in that order.
std::int64_t DecodeStepper::step_count() const {
  const DecodeProblem& p = problem_;
  const std::int64_t split_steps = static_cast<std::int64_t>(p.shape.kv_heads) * p.splits * kStepsPerSplit;
  const std::int64_t merge_steps = p.splits > 1 ? static_cast<std::int64_t>(p.shape.kv_heads) * (p.splits + 2) : 0;
  return split_steps + merge_steps + 1;
}

DecodeStepInfo DecodeStepper::Info(std::int64_t step) const {
  const DecodeProblem& p = problem_;
  DecodeStepInfo info;
  info.step = step;
  const std::int64_t split_steps = static_cast<std::int64_t>(p.shape.kv_heads) * p.splits * kStepsPerSplit;
  if (step == step_count() - 1) {
    info.phase = DecodePhase::kDone;
    return info;
  }
  if (step < split_steps) {
    const std::int64_t per_head = static_cast<std::int64_t>(p.splits) * kStepsPerSplit;
    info.kv_head = static_cast<int>(step / per_head);
    info.split = static_cast<int>(step % per_head / kStepsPerSplit);
    info.phase = kSplitPhases[step % kStepsPerSplit];
    if (info.phase == DecodePhase::kWritePartial && p.splits == 1) info.phase = DecodePhase::kWriteO;
    return info;
  }
  const std::int64_t t = step - split_steps;
  info.kv_head = static_cast<int>(t / (p.splits + 2));
  const int k = static_cast<int>(t % (p.splits + 2));
  if (k == 0) {
    info.phase = DecodePhase::kMergeStats;
  } else if (k <= p.splits) {
    info.phase = DecodePhase::kMergeO;
    info.split = k - 1;
  } else {
    info.phase = DecodePhase::kWriteO;
  }
  return info;
}

std::int64_t DecodeStepper::FirstStepOfSplit(int g, int s) const {
  return (static_cast<std::int64_t>(g) * problem_.splits + s) * kStepsPerSplit;
}

std::int64_t DecodeStepper::FirstStepOfMerge(int g) const {
  const DecodeProblem& p = problem_;
  if (p.splits == 1) return FirstStepOfSplit(g, 0) + kStepsPerSplit - 1;
  return static_cast<std::int64_t>(p.shape.kv_heads) * p.splits * kStepsPerSplit +
         static_cast<std::int64_t>(g) * (p.splits + 2);
}

void DecodeStepper::Count(const DecodeStepInfo& info, Ledger& ledger) const {
  const DecodeProblem& p = problem_;
  const std::int64_t rows = p.rows(), d = p.d();
  const std::int64_t keys = info.split >= 0 ? p.SplitKeys(info.split) : 0;
  switch (info.phase) {
    case DecodePhase::kLoadKv:
      // One block-table entry per page of the chunk, then the keys and values of those pages (the last page of
      // the cache may be partly filled: only its N mod P keys are read).
      ledger.ReadHbm(HbmTensor::kBlockTable, p.SplitPageBegin(info.split + 1) - p.SplitPageBegin(info.split));
      ledger.ReadHbm(HbmTensor::kK, keys * d);
      ledger.ReadHbm(HbmTensor::kV, keys * d);
      break;
    case DecodePhase::kLoadQ:
      ledger.ReadHbm(HbmTensor::kQ, rows * d);
      break;
    case DecodePhase::kScores:
      ledger.ComputeReadsSram(rows * d + keys * d);
      ledger.ComputeWritesSram(rows * keys);
      break;
    case DecodePhase::kRowMax:
    case DecodePhase::kRowSum:
      ledger.ComputeReadsSram(rows * keys);
      ledger.ComputeWritesSram(rows);
      break;
    case DecodePhase::kExp:
      ledger.ComputeReadsSram(rows * keys + rows);
      ledger.ComputeWritesSram(rows * keys);
      break;
    case DecodePhase::kUpdateO:
      ledger.ComputeReadsSram(rows * keys + keys * d);
      ledger.ComputeWritesSram(rows * d);
      break;
    case DecodePhase::kWritePartial:
      ledger.WriteHbm(HbmTensor::kStatsPartial, 2 * rows);
      ledger.WriteHbm(HbmTensor::kOPartial, rows * d);
      break;
    case DecodePhase::kMergeStats:
      ledger.ReadHbm(HbmTensor::kStatsPartial, 2 * rows * p.splits);
      ledger.ComputeReadsSram(2 * rows * p.splits);
      ledger.ComputeWritesSram(rows * p.splits + 2 * rows);  // α_s, M, ℓ
      break;
    case DecodePhase::kMergeO:
      ledger.ReadHbm(HbmTensor::kOPartial, rows * d);
      ledger.ComputeReadsSram(2 * rows * d + rows);
      ledger.ComputeWritesSram(rows * d);
      break;
    case DecodePhase::kWriteO:
      ledger.ComputeReadsSram(rows * d + rows);
      ledger.WriteHbm(HbmTensor::kO, rows * d);
      break;
    case DecodePhase::kDone:
      break;
  }
  const std::uint32_t tiles = ResidentTiles(info);
  ledger.SetSramOccupancy(4 * ResidentFloats(tiles, info));
}

std::uint32_t DecodeStepper::ResidentTiles(const DecodeStepInfo& info) const {
  using T = DecodeSramTile;
  switch (info.phase) {
    case DecodePhase::kLoadKv:
      return Bit(T::kK) | Bit(T::kV);
    case DecodePhase::kLoadQ:
      return Bit(T::kK) | Bit(T::kV) | Bit(T::kQ);
    case DecodePhase::kScores:
    case DecodePhase::kRowMax:
    case DecodePhase::kExp:
      return Bit(T::kK) | Bit(T::kV) | Bit(T::kQ) | Bit(T::kS) | Bit(T::kStats);
    case DecodePhase::kRowSum:
    case DecodePhase::kUpdateO:
      // Q is not needed once the scores are formed; the kernels keep it, and so does the count.
      return Bit(T::kK) | Bit(T::kV) | Bit(T::kQ) | Bit(T::kS) | Bit(T::kStats) |
             (info.phase == DecodePhase::kUpdateO ? Bit(T::kO) : 0u);
    case DecodePhase::kWritePartial:
      return Bit(T::kStats) | Bit(T::kO);
    case DecodePhase::kMergeStats:
      return Bit(T::kPartialStats);
    case DecodePhase::kMergeO:
      return Bit(T::kPartialStats) | Bit(T::kO) | Bit(T::kPartialO);
    case DecodePhase::kWriteO:
      return info.split >= 0 ? Bit(T::kStats) | Bit(T::kO) : Bit(T::kPartialStats) | Bit(T::kO);
    case DecodePhase::kDone:
      return 0;
  }
  return 0;
}

std::int64_t DecodeStepper::ResidentFloats(std::uint32_t tiles, const DecodeStepInfo& info) const {
  const DecodeProblem& p = problem_;
  const std::int64_t rows = p.rows(), d = p.d();
  const std::int64_t keys = info.split >= 0 ? p.SplitKeys(info.split) : 0;
  std::int64_t floats = 0;
  for (int t = 0; t < kDecodeSramTileCount; ++t) {
    if (!(tiles & (1u << t))) continue;
    switch (static_cast<DecodeSramTile>(t)) {
      case DecodeSramTile::kK:
      case DecodeSramTile::kV:
        floats += keys * d;
        break;
      case DecodeSramTile::kQ:
      case DecodeSramTile::kO:
      case DecodeSramTile::kPartialO:
        floats += rows * d;
        break;
      case DecodeSramTile::kS:
        floats += rows * keys;
        break;
      case DecodeSramTile::kStats:
        floats += 2 * rows;
        break;
      case DecodeSramTile::kPartialStats:
        floats += 3 * rows * p.splits + 2 * rows;
        break;
    }
  }
  return floats;
}

Ledger DecodeStepper::LedgerAt(std::int64_t step) const {
  Ledger ledger;
  for (std::int64_t k = 0; k <= step; ++k) Count(Info(k), ledger);
  return ledger;
}

DecodeSplitNumerics DecodeStepper::ComputeSplit(int g, int s) const {
  const DecodeProblem& p = problem_;
  const int rows = p.rows(), d = p.d(), big_r = p.shape.q_rows;
  const int key_begin = p.SplitKeyBegin(s), keys = p.SplitKeys(s);
  DecodeSplitNumerics n;
  n.s.resize(static_cast<std::size_t>(rows) * keys);
  n.m.assign(static_cast<std::size_t>(rows), kNegInf);
  n.l.assign(static_cast<std::size_t>(rows), 0.0);
  n.o.assign(static_cast<std::size_t>(rows) * d, 0.0);
  const std::size_t head_offset = static_cast<std::size_t>(g) * p.kv_len() * d;
  for (int r = 0; r < rows; ++r) {
    const int h = p.FirstHeadOf(g) + r / big_r;
    const float* q = inputs_->q.data() + (static_cast<std::size_t>(h) * big_r + r % big_r) * d;
    for (int c = 0; c < keys; ++c) {
      // Key key_begin + c sits in physical block block_table[page] at offset key mod P; the pool stores it where
      // the logical layout does once the block is found, so the numbers read are K's row key_begin + c.
      const float* k = inputs_->k.data() + head_offset + static_cast<std::size_t>(key_begin + c) * d;
      double dot = 0;
      for (int e = 0; e < d; ++e) dot += static_cast<double>(q[e]) * k[e];
      const double score = p.shape.scale * dot;
      n.s[static_cast<std::size_t>(r) * keys + c] = score;
      n.m[r] = std::max(n.m[r], score);
    }
  }
  n.p.resize(n.s.size());
  for (int r = 0; r < rows; ++r) {
    for (int c = 0; c < keys; ++c) {
      const std::size_t at = static_cast<std::size_t>(r) * keys + c;
      n.p[at] = std::exp(n.s[at] - n.m[r]);
      n.l[r] += n.p[at];
    }
    for (int c = 0; c < keys; ++c) {
      const double pr = n.p[static_cast<std::size_t>(r) * keys + c];
      const float* v = inputs_->v.data() + head_offset + static_cast<std::size_t>(key_begin + c) * d;
      double* o = n.o.data() + static_cast<std::size_t>(r) * d;
      for (int e = 0; e < d; ++e) o[e] += pr * v[e];
    }
  }
  return n;
}

void DecodeStepper::FillState(DecodeState& state, const std::vector<DecodeSplitNumerics>& splits) const {
  const DecodeProblem& p = problem_;
  const DecodeStepInfo& info = state.info;
  const int rows = p.rows(), d = p.d(), count = p.splits;
  const bool in_split = info.split >= 0 && info.phase != DecodePhase::kMergeO;
  if (in_split) {
    // The split's numbers as far as the phase has come.
    const DecodeSplitNumerics& full = splits[static_cast<std::size_t>(info.split)];
    const DecodePhase ph = info.phase;
    const bool scored = ph >= DecodePhase::kScores, maxed = ph >= DecodePhase::kRowMax, exped = ph >= DecodePhase::kExp,
               summed = ph >= DecodePhase::kRowSum, updated = ph >= DecodePhase::kUpdateO;
    if (scored) state.split.s = full.s;
    if (maxed) state.split.m = full.m;
    if (exped) state.split.p = full.p;
    if (summed) state.split.l = full.l;
    if (updated) state.split.o = full.o;
    const int written = info.split + (ph == DecodePhase::kWritePartial ? 1 : 0);
    for (int s = 0; s < written; ++s) {
      DecodeSplitNumerics partial;
      partial.m = splits[static_cast<std::size_t>(s)].m;
      partial.l = splits[static_cast<std::size_t>(s)].l;
      partial.o = splits[static_cast<std::size_t>(s)].o;
      state.partials.push_back(std::move(partial));
    }
    if (ph == DecodePhase::kWriteO) {  // one split: O_s / ℓ_s is the answer
      state.o_final = full.o;
      for (int r = 0; r < rows; ++r)
        for (int e = 0; e < d; ++e) state.o_final[static_cast<std::size_t>(r) * d + e] /= full.l[r];
    }
    return;
  }
  // The merge: every partial of the KV head is in HBM.
  for (const DecodeSplitNumerics& split : splits) state.partials.push_back({{}, {}, split.m, split.l, split.o});
  DecodeMergeNumerics& merge = state.merge;
  merge.m_split.resize(static_cast<std::size_t>(rows) * count);
  merge.l_split.resize(merge.m_split.size());
  merge.alpha.resize(merge.m_split.size());
  merge.m.assign(static_cast<std::size_t>(rows), kNegInf);
  merge.l.assign(static_cast<std::size_t>(rows), 0.0);
  for (int r = 0; r < rows; ++r) {
    for (int s = 0; s < count; ++s) {
      merge.m_split[static_cast<std::size_t>(r) * count + s] = splits[static_cast<std::size_t>(s)].m[r];
      merge.l_split[static_cast<std::size_t>(r) * count + s] = splits[static_cast<std::size_t>(s)].l[r];
      merge.m[r] = std::max(merge.m[r], splits[static_cast<std::size_t>(s)].m[r]);
    }
    for (int s = 0; s < count; ++s) {
      const double alpha = std::exp(splits[static_cast<std::size_t>(s)].m[r] - merge.m[r]);
      merge.alpha[static_cast<std::size_t>(r) * count + s] = alpha;
      merge.l[r] += alpha * splits[static_cast<std::size_t>(s)].l[r];
    }
  }
  merge.merged = info.phase == DecodePhase::kMergeStats ? 0
                 : info.phase == DecodePhase::kMergeO   ? info.split + 1
                                                        : count;
  merge.o.assign(static_cast<std::size_t>(rows) * d, 0.0);
  for (int s = 0; s < merge.merged; ++s)
    for (int r = 0; r < rows; ++r)
      for (int e = 0; e < d; ++e)
        merge.o[static_cast<std::size_t>(r) * d + e] +=
            merge.alpha[static_cast<std::size_t>(r) * count + s] *
            splits[static_cast<std::size_t>(s)].o[static_cast<std::size_t>(r) * d + e];
  if (info.phase == DecodePhase::kWriteO) {
    state.o_final = merge.o;
    for (int r = 0; r < rows; ++r)
      for (int e = 0; e < d; ++e) state.o_final[static_cast<std::size_t>(r) * d + e] /= merge.l[r];
  }
}

DecodeState DecodeStepper::StateAt(std::int64_t step) const {
  const DecodeProblem& p = problem_;
  DecodeState state;
  state.info = Info(step);
  const Ledger before = step > 0 ? LedgerAt(step - 1) : Ledger{};
  state.ledger = before;
  Count(state.info, state.ledger);
  state.delta = LedgerDelta(before, state.ledger);
  state.sram_tiles = ResidentTiles(state.info);
  if (state.info.phase == DecodePhase::kDone) return state;
  state.rows = p.rows();
  const bool in_split = state.info.split >= 0 && state.info.phase != DecodePhase::kMergeO;
  if (in_split) {
    state.key_begin = p.SplitKeyBegin(state.info.split);
    state.keys = p.SplitKeys(state.info.split);
  }
  if (!inputs_) return state;
  // Arithmetic for KV head g only: the splits up to this one (their partials are in HBM), all of them in the merge.
  const int needed = in_split ? state.info.split + 1 : p.splits;
  std::vector<DecodeSplitNumerics> splits;
  for (int s = 0; s < needed; ++s) splits.push_back(ComputeSplit(state.info.kv_head, s));
  FillState(state, splits);
  return state;
}

std::vector<double> DecodeStepper::Walk(const std::function<bool(const DecodeState&)>& visit) const {
  const DecodeProblem& p = problem_;
  std::vector<double> out;
  if (inputs_) out.assign(static_cast<std::size_t>(p.shape.heads) * p.shape.q_rows * p.d(), 0.0);
  Ledger ledger;
  int computed_head = -1;
  std::vector<DecodeSplitNumerics> splits;
  for (std::int64_t step = 0; step < step_count(); ++step) {
    DecodeState state;
    state.info = Info(step);
    const Ledger before = ledger;
    Count(state.info, ledger);
    state.ledger = ledger;
    state.delta = LedgerDelta(before, ledger);
    state.sram_tiles = ResidentTiles(state.info);
    if (state.info.phase != DecodePhase::kDone) {
      state.rows = p.rows();
      if (state.info.split >= 0 && state.info.phase != DecodePhase::kMergeO) {
        state.key_begin = p.SplitKeyBegin(state.info.split);
        state.keys = p.SplitKeys(state.info.split);
      }
      if (inputs_) {
        // Each KV head's splits are computed once, when the walk first reaches the head (its splits, or its merge).
        if (computed_head != state.info.kv_head) {
          splits.clear();
          for (int s = 0; s < p.splits; ++s) splits.push_back(ComputeSplit(state.info.kv_head, s));
          computed_head = state.info.kv_head;
        }
        FillState(state, splits);
        if (state.info.phase == DecodePhase::kWriteO)
          std::copy(
              state.o_final.begin(), state.o_final.end(),
              out.begin() + static_cast<std::ptrdiff_t>(p.FirstHeadOf(state.info.kv_head)) * p.shape.q_rows * p.d());
      }
    }
    if (!visit(state)) return {};
  }
  return out;
}

Ledger DecodeNaiveLedger(const DecodeProblem& p) {
  Ledger ledger;
  const std::int64_t rows = p.shape.q_rows, d = p.d();
  for (int h = 0; h < p.shape.heads; ++h) {
    // One block per query head: its rows of Q, every page of its KV head's cache, its rows of O.
    ledger.ReadHbm(HbmTensor::kQ, rows * d);
    for (int page = 0; page < p.pages(); ++page) {
      const std::int64_t keys = std::min(p.page, p.kv_len() - page * p.page);
      ledger.ReadHbm(HbmTensor::kBlockTable, 1);
      ledger.ReadHbm(HbmTensor::kK, keys * d);
      ledger.ReadHbm(HbmTensor::kV, keys * d);
    }
    ledger.WriteHbm(HbmTensor::kO, rows * d);
  }
  return ledger;
}

std::int64_t KvCacheBytes(const DecodeProblem& p) {
  return 2LL * 4 * p.shape.kv_heads * static_cast<std::int64_t>(p.kv_len()) * p.d();
}

double KvCacheReads(const DecodeProblem& p, const Ledger& ledger) {
  return static_cast<double>(ledger[HbmTensor::kK].read_bytes + ledger[HbmTensor::kV].read_bytes) /
         static_cast<double>(KvCacheBytes(p));
}

}  // namespace flashviz
