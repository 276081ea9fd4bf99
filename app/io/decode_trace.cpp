#include "app/io/decode_trace.h"

#include <algorithm>

#include "kernels/common/format.h"

namespace flashviz {
namespace {

Json Index(int value) {
  return value >= 0 ? Json(value) : Json(nullptr);
}

// The bytes of the split-KV partials (m_s, ℓ_s and O_s), written and read back: what splitting costs.
std::int64_t PartialBytes(const Ledger& l) {
  const Traffic& o = l[HbmTensor::kOPartial];
  const Traffic& stats = l[HbmTensor::kStatsPartial];
  return o.read_bytes + o.write_bytes + stats.read_bytes + stats.write_bytes;
}

std::int64_t KvReadBytes(const Ledger& l) {
  return l[HbmTensor::kK].read_bytes + l[HbmTensor::kV].read_bytes;
}

}  // namespace

std::string DecodeTraceConfigLine(const DecodeProblem& p, std::uint64_t seed) {
  Json config = {
      {"mode", "decode"},         {"kv_len", p.kv_len()},       {"d", p.d()},
      {"q_rows", p.shape.q_rows}, {"heads", p.shape.heads},     {"kv_heads", p.shape.kv_heads},
      {"group", p.group()},       {"splits", p.splits},         {"splits_from", p.splits_from_sram ? "sram" : "option"},
      {"page", p.page},           {"pages", p.pages()},         {"block_table", p.block_table},
      {"scale", p.shape.scale},   {"sram_bytes", p.sram_bytes}, {"seed", seed}};
  return Json{{"config", config}}.dump() + "\n";
}

std::string DecodeTraceStepLine(const DecodeProblem& p, const DecodeState& state, const Ledger* naive) {
  const DecodeStepInfo& info = state.info;
  Json line = {{"step", info.step},
               {"phase", std::string(DecodePhaseName(info.phase))},
               {"kv_head", Index(info.kv_head)},
               {"split", Index(info.split)}};
  if (info.kv_head >= 0) {
    line["query_heads"] = {p.FirstHeadOf(info.kv_head), p.FirstHeadOf(info.kv_head) + p.group()};
  } else {
    line["query_heads"] = nullptr;
  }
  line["keys"] = state.keys > 0 ? Json{state.key_begin, state.key_begin + state.keys} : Json(nullptr);
  // The statistics the phase holds for the group's rows: the split's m_s and ℓ_s, or the merge's M and ℓ.
  const bool merging = !state.merge.m.empty();
  const std::vector<double>& m = merging ? state.merge.m : state.split.m;
  const std::vector<double>& l = merging ? state.merge.l : state.split.l;
  line["m"] = m.empty() ? Json(nullptr) : JsonNumbers(m);
  line["l"] = l.empty() ? Json(nullptr) : JsonNumbers(l);
  if (merging) {
    // merge_stats: every split's α_s per row; merge_o: the α_s of the split being added.
    const int count = p.splits;
    Json alpha = Json::array();
    for (int r = 0; r < state.rows; ++r) {
      if (info.phase == DecodePhase::kMergeO) {
        alpha.push_back(state.merge.alpha[static_cast<std::size_t>(r) * count + info.split]);
      } else {
        alpha.push_back(
            JsonNumbers(std::vector<double>(state.merge.alpha.begin() + static_cast<std::ptrdiff_t>(r) * count,
                                            state.merge.alpha.begin() + static_cast<std::ptrdiff_t>(r + 1) * count)));
      }
    }
    line["alpha"] = alpha;
  }
  const Ledger& ledger = state.ledger;
  line["hbm_read_bytes"] = ledger.HbmReadBytes();
  line["hbm_write_bytes"] = ledger.HbmWriteBytes();
  line["kv_read_bytes"] = KvReadBytes(ledger);
  line["partial_bytes"] = PartialBytes(ledger);
  line["sram_bytes"] = ledger.sram_bytes;
  if (naive) {
    line["kv_cache_reads"] = KvCacheReads(p, ledger);
    line["naive_hbm_read_bytes"] = naive->HbmReadBytes();
    line["naive_hbm_write_bytes"] = naive->HbmWriteBytes();
    line["naive_kv_cache_reads"] = KvCacheReads(p, *naive);
  }
  return line.dump() + "\n";
}

std::vector<double> WriteDecodeTrace(const DecodeStepper& stepper, std::uint64_t seed, const TraceLineSink& out) {
  const DecodeProblem& p = stepper.problem();
  out(DecodeTraceConfigLine(p, seed), -1);
  const Ledger naive = DecodeNaiveLedger(p);
  return stepper.Walk([&](const DecodeState& state) {
    out(DecodeTraceStepLine(p, state, state.info.phase == DecodePhase::kDone ? &naive : nullptr), state.info.step);
    return true;
  });
}

std::string DecodeTraceSummary(const DecodeProblem& p, const Ledger& flash) {
  const Ledger naive = DecodeNaiveLedger(p);
  std::string text = Sprintf(
      "decode: N = %d keys, d = %d, R = %d query row%s, H = %d query heads over G = %d KV heads (%d per group), "
      "S = %d split%s (%s), P = %d (%d pages), M = %s\n",
      p.kv_len(), p.d(), p.shape.q_rows, p.shape.q_rows == 1 ? "" : "s", p.shape.heads, p.shape.kv_heads, p.group(),
      p.splits, p.splits == 1 ? "" : "s", p.splits_from_sram ? "from M" : "from --splits", p.page, p.pages(),
      HumanBytes(static_cast<double>(p.sram_bytes)).c_str());
  text += "tensor   flash-decode read  flash-decode write   naive read    naive write\n";
  for (int t = 0; t < kHbmTensorCount; ++t) {
    const Traffic& f = flash.hbm[t];
    const Traffic& n = naive.hbm[t];
    if (f.read_bytes == 0 && f.write_bytes == 0 && n.read_bytes == 0 && n.write_bytes == 0) continue;
    text += Sprintf("%-8s %18lld %19lld %12lld %14lld\n", std::string(HbmTensorName(static_cast<HbmTensor>(t))).c_str(),
                    static_cast<long long>(f.read_bytes), static_cast<long long>(f.write_bytes),
                    static_cast<long long>(n.read_bytes), static_cast<long long>(n.write_bytes));
  }
  text += Sprintf("%-8s %18lld %19lld %12lld %14lld\n", "total", static_cast<long long>(flash.HbmReadBytes()),
                  static_cast<long long>(flash.HbmWriteBytes()), static_cast<long long>(naive.HbmReadBytes()),
                  static_cast<long long>(naive.HbmWriteBytes()));
  text += Sprintf("hbm_read_bytes %lld\nhbm_write_bytes %lld\nnaive_hbm_read_bytes %lld\nnaive_hbm_write_bytes %lld\n",
                  static_cast<long long>(flash.HbmReadBytes()), static_cast<long long>(flash.HbmWriteBytes()),
                  static_cast<long long>(naive.HbmReadBytes()), static_cast<long long>(naive.HbmWriteBytes()));
  text += Sprintf(
      "KV cache %s: flash-decode reads it %.4g time%s (once per KV head), decode_naive %.4g (once per "
      "query head)\n",
      HumanBytes(static_cast<double>(KvCacheBytes(p))).c_str(), KvCacheReads(p, flash),
      KvCacheReads(p, flash) == 1 ? "" : "s", KvCacheReads(p, naive));
  const std::int64_t partials = PartialBytes(flash);
  text += Sprintf(
      "split-KV partials (m_s, l_s, O_s written and read back): %lld bytes, %.2f%% of flash-decode's "
      "HBM bytes\n",
      static_cast<long long>(partials),
      100.0 * static_cast<double>(partials) / static_cast<double>(std::max<std::int64_t>(1, flash.HbmBytes())));
  text += Sprintf("SRAM peak %lld bytes of M = %lld (%s)\n", static_cast<long long>(flash.sram_peak_bytes),
                  static_cast<long long>(p.sram_bytes),
                  flash.sram_peak_bytes <= p.sram_bytes
                      ? "fits"
                      : "exceeds M: these splits are larger than M holds (without --splits, S comes from M)");
  return text;
}

}  // namespace flashviz
