#include "app/io/trace_writer.h"

#include <cmath>

#include "kernels/common/format.h"

namespace flashviz {
namespace {

// JSON has no infinity: the running max before any key is seen (−∞) is written as null (nlohmann writes every
// non-finite number as null; the conversion here says so where it happens).
Json Number(double value) { return std::isfinite(value) ? Json(value) : Json(nullptr); }

Json Index(int value) { return value >= 0 ? Json(value) : Json(nullptr); }

}  // namespace

Json JsonNumbers(const std::vector<double>& values) {
  Json array = Json::array();
  for (const double v : values) array.push_back(Number(v));
  return array;
}

std::string TraceConfigLine(const AttentionProblem& p, const TraceOptions& options, const Json& extra_config) {
  Json config = {{"n", p.n},
                 {"d", p.d},
                 {"br", p.br},
                 {"bc", p.bc},
                 {"tr", p.tr()},
                 {"tc", p.tc()},
                 // The backward pass's own loop runs over K/V tiles whatever order was asked for.
                 {"order", std::string(LoopOrderName(p.backward() ? LoopOrder::kKvOuter : p.order))},
                 {"pass", std::string(PassName(p.pass))},
                 {"scale", p.scale},
                 {"causal", p.causal},
                 {"sram_bytes", p.sram_bytes},
                 {"seed", options.seed}};
  if (!options.input.empty()) {
    config["input"] = options.input;
    config["batch"] = options.batch;
  }
  if (extra_config.is_object()) config.update(extra_config);
  // A file name need not be UTF-8: bytes that are not are written as U+FFFD rather than refused.
  return Json{{"config", config}}.dump(-1, ' ', false, Json::error_handler_t::replace) + "\n";
}

std::string TraceStepLine(const StepView& view, const Ledger* standard, const Json& extra, bool backward,
                          const Ledger* forward, const Ledger* standard_forward) {
  const StepInfo& info = view.info();
  Json line = {{"step", info.step}, {"phase", std::string(PhaseName(info.phase))}, {"i", Index(info.i)},
               {"j", Index(info.j)}};
  if (backward) {
    // The backward pass has no running statistics: D_i where the delta step computes it.
    if (info.phase == Phase::kDelta && !view.grad().delta.empty()) line["delta"] = JsonNumbers(view.grad().delta);
  } else {
    const TileNumerics& tile = view.tile();
    const bool has_tile = info.i >= 0 && !tile.m.empty();
    line["m"] = has_tile ? JsonNumbers(tile.m) : Json(nullptr);
    line["l"] = has_tile ? JsonNumbers(tile.l) : Json(nullptr);
    if (has_tile && !tile.m_tile.empty()) line["m_tile"] = JsonNumbers(tile.m_tile);
    if (has_tile && !tile.l_tile.empty()) line["l_tile"] = JsonNumbers(tile.l_tile);
    if (has_tile && !tile.lse.empty()) line["lse"] = JsonNumbers(tile.lse);
  }
  const Ledger& ledger = view.ledger();
  line["hbm_read_bytes"] = ledger.HbmReadBytes();
  line["hbm_write_bytes"] = ledger.HbmWriteBytes();
  line["sram_bytes"] = ledger.sram_bytes;
  if (standard) {
    line["standard_hbm_read_bytes"] = standard->HbmReadBytes();
    line["standard_hbm_write_bytes"] = standard->HbmWriteBytes();
  }
  if (forward) {  // the backward pass's done line: what the forward pass before it moved
    line["forward_hbm_read_bytes"] = forward->HbmReadBytes();
    line["forward_hbm_write_bytes"] = forward->HbmWriteBytes();
    line["standard_forward_hbm_read_bytes"] = standard_forward->HbmReadBytes();
    line["standard_forward_hbm_write_bytes"] = standard_forward->HbmWriteBytes();
  }
  if (extra.is_object()) line.update(extra);
  return line.dump() + "\n";
}

std::vector<double> WriteTrace(const Stepper& stepper, const TraceOptions& options, const TraceLineSink& out,
                               const Json& extra_config, const TraceExtraFields& extra) {
  const AttentionProblem& p = stepper.problem();
  out(TraceConfigLine(p, options, extra_config), -1);
  const bool backward = p.backward();
  const Ledger standard = backward ? StandardAttentionBackwardLedger(p.n, p.d) : StandardAttentionLedger(p.n, p.d);
  const Ledger forward = backward ? stepper.ForwardLedger() : Ledger{};
  const Ledger standard_forward = StandardAttentionLedger(p.n, p.d);
  return stepper.Replay([&](const StepView& view) {
    const bool done = view.info().phase == Phase::kDone;
    out(TraceStepLine(view, done ? &standard : nullptr, extra ? extra(view) : Json(nullptr), backward,
                      done && backward ? &forward : nullptr, &standard_forward),
        view.info().step);
    return true;
  });
}

std::string TraceSummary(const AttentionProblem& p, const Ledger& flash, const Ledger& standard,
                         const Ledger* forward) {
  const std::string order =
      p.backward() ? std::string("backward pass") : "order " + std::string(LoopOrderName(p.order));
  std::string text = Sprintf("N = %d, d = %d, B_r = %d, B_c = %d, T_r = %d, T_c = %d, %s%s, M = %s\n", p.n, p.d,
                             p.br, p.bc, p.tr(), p.tc(), order.c_str(), p.causal ? ", causal" : "",
                             HumanBytes(static_cast<double>(p.sram_bytes)).c_str());
  text += "tensor      flash read    flash write   standard read standard write\n";
  for (int t = 0; t < kHbmTensorCount; ++t) {
    const Traffic& f = flash.hbm[t];
    const Traffic& s = standard.hbm[t];
    if (f.read_bytes == 0 && f.write_bytes == 0 && s.read_bytes == 0 && s.write_bytes == 0) continue;
    text += Sprintf("%-8s %14lld %14lld %14lld %14lld\n", std::string(HbmTensorName(static_cast<HbmTensor>(t))).c_str(),
                    static_cast<long long>(f.read_bytes), static_cast<long long>(f.write_bytes),
                    static_cast<long long>(s.read_bytes), static_cast<long long>(s.write_bytes));
  }
  text += Sprintf("%-8s %14lld %14lld %14lld %14lld\n", "total", static_cast<long long>(flash.HbmReadBytes()),
                  static_cast<long long>(flash.HbmWriteBytes()), static_cast<long long>(standard.HbmReadBytes()),
                  static_cast<long long>(standard.HbmWriteBytes()));
  text += Sprintf(
      "hbm_read_bytes %lld\nhbm_write_bytes %lld\nstandard_hbm_read_bytes %lld\nstandard_hbm_write_bytes %lld\n",
      static_cast<long long>(flash.HbmReadBytes()), static_cast<long long>(flash.HbmWriteBytes()),
      static_cast<long long>(standard.HbmReadBytes()), static_cast<long long>(standard.HbmWriteBytes()));
  text += Sprintf(
      "flash / standard HBM bytes: %.4f\n",
      static_cast<double>(flash.HbmBytes()) / static_cast<double>(std::max<std::int64_t>(1, standard.HbmBytes())));
  text += Sprintf("SRAM peak %lld bytes of M = %lld (%s)\n", static_cast<long long>(flash.sram_peak_bytes),
                  static_cast<long long>(p.sram_bytes),
                  flash.sram_peak_bytes <= p.sram_bytes ? "fits"
                  : p.backward() ? "exceeds M: these tiles do not fit (the backward pass holds 4·B_c·d + 3·B_r·d + "
                                   "2·B_r·B_c + 2·B_r floats at most)"
                                 : "exceeds M: Algorithm 1's sizing leaves out S_ij and the statistics");
  text += Sprintf("SRAM reads by compute %lld bytes, writes %lld bytes\n",
                  static_cast<long long>(flash.sram_read_bytes), static_cast<long long>(flash.sram_write_bytes));
  if (forward) {
    // A training step pays both passes: the forward pass in the q order (which saves O and L) and this one.
    const Ledger standard_forward = StandardAttentionLedger(p.n, p.d);
    const Ledger flash_total = LedgerSum(*forward, flash), standard_total = LedgerSum(standard_forward, standard);
    text += Sprintf("forward (q order) hbm bytes %lld, standard %lld\n", static_cast<long long>(forward->HbmBytes()),
                    static_cast<long long>(standard_forward.HbmBytes()));
    text += Sprintf("forward + backward hbm bytes %lld, standard %lld (%.4f)\n",
                    static_cast<long long>(flash_total.HbmBytes()), static_cast<long long>(standard_total.HbmBytes()),
                    static_cast<double>(flash_total.HbmBytes()) /
                        static_cast<double>(std::max<std::int64_t>(1, standard_total.HbmBytes())));
  }
  return text;
}

}  // namespace flashviz
