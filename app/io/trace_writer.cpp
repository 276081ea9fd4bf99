#include "app/io/trace_writer.h"

#include <cmath>

#include "kernels/common/format.h"

namespace flashviz {
namespace {

// JSON has no infinity: the running max before any key is seen (−∞) is written as null.
void AppendNumberArray(std::string& line, const std::vector<double>& values) {
  line += '[';
  for (std::size_t k = 0; k < values.size(); ++k) {
    if (k) line += ',';
    line += std::isfinite(values[k]) ? ShortestDecimal(values[k]) : "null";
  }
  line += ']';
}

void AppendIndex(std::string& line, const char* key, int value) {
  line += Sprintf(",\"%s\":", key);
  line += value >= 0 ? std::to_string(value) : "null";
}

}  // namespace

std::string JsonNumberArray(const std::vector<double>& values) {
  std::string text;
  AppendNumberArray(text, values);
  return text;
}

std::string TraceConfigLine(const AttentionProblem& p, const TraceOptions& options, const std::string& extra_config) {
  std::string line = Sprintf(
      "{\"config\":{\"n\":%d,\"d\":%d,\"br\":%d,\"bc\":%d,\"tr\":%d,\"tc\":%d,\"order\":\"%s\",\"scale\":%s,"
      "\"causal\":%s,\"sram_bytes\":%lld,\"seed\":%llu",
      p.n, p.d, p.br, p.bc, p.tr(), p.tc(), std::string(LoopOrderName(p.order)).c_str(),
      ShortestDecimal(p.scale).c_str(), p.causal ? "true" : "false", static_cast<long long>(p.sram_bytes),
      static_cast<unsigned long long>(options.seed));
  if (!options.input.empty()) {
    std::string escaped;
    for (char c : options.input) {
      if (c == '"' || c == '\\') escaped += '\\';
      if (static_cast<unsigned char>(c) < 0x20) continue;
      escaped += c;
    }
    line += Sprintf(",\"input\":\"%s\",\"batch\":%d", escaped.c_str(), options.batch);
  }
  line += extra_config;
  line += "}}\n";
  return line;
}

std::string TraceStepLine(const StepView& view, const Ledger* standard, const std::string& extra) {
  const StepInfo& info = view.info();
  std::string line = Sprintf("{\"step\":%lld,\"phase\":\"%s\"", static_cast<long long>(info.step),
                             std::string(PhaseName(info.phase)).c_str());
  AppendIndex(line, "i", info.i);
  AppendIndex(line, "j", info.j);
  const TileNumerics& tile = view.tile();
  const bool has_tile = info.i >= 0 && !tile.m.empty();
  line += ",\"m\":";
  if (has_tile) AppendNumberArray(line, tile.m);
  else line += "null";
  line += ",\"l\":";
  if (has_tile) AppendNumberArray(line, tile.l);
  else line += "null";
  if (has_tile && !tile.m_tile.empty()) {
    line += ",\"m_tile\":";
    AppendNumberArray(line, tile.m_tile);
  }
  if (has_tile && !tile.l_tile.empty()) {
    line += ",\"l_tile\":";
    AppendNumberArray(line, tile.l_tile);
  }
  if (has_tile && !tile.lse.empty()) {
    line += ",\"lse\":";
    AppendNumberArray(line, tile.lse);
  }
  const Ledger& ledger = view.ledger();
  line += Sprintf(",\"hbm_read_bytes\":%lld,\"hbm_write_bytes\":%lld,\"sram_bytes\":%lld",
                  static_cast<long long>(ledger.HbmReadBytes()), static_cast<long long>(ledger.HbmWriteBytes()),
                  static_cast<long long>(ledger.sram_bytes));
  if (standard)
    line += Sprintf(",\"standard_hbm_read_bytes\":%lld,\"standard_hbm_write_bytes\":%lld",
                    static_cast<long long>(standard->HbmReadBytes()), static_cast<long long>(standard->HbmWriteBytes()));
  line += extra;
  line += "}\n";
  return line;
}

std::vector<double> WriteTrace(const Stepper& stepper, const TraceOptions& options, const TraceLineSink& out,
                               const std::string& extra_config, const TraceExtraFields& extra) {
  const AttentionProblem& p = stepper.problem();
  out(TraceConfigLine(p, options, extra_config), -1);
  const Ledger standard = StandardAttentionLedger(p.n, p.d);
  return stepper.Replay([&](const StepView& view) {
    const bool done = view.info().phase == Phase::kDone;
    out(TraceStepLine(view, done ? &standard : nullptr, extra ? extra(view) : std::string()), view.info().step);
    return true;
  });
}

std::string TraceSummary(const AttentionProblem& p, const Ledger& flash, const Ledger& standard) {
  std::string text = Sprintf("N = %d, d = %d, B_r = %d, B_c = %d, T_r = %d, T_c = %d, order %s%s, M = %s\n", p.n,
                             p.d, p.br, p.bc, p.tr(), p.tc(), std::string(LoopOrderName(p.order)).c_str(),
                             p.causal ? ", causal" : "", HumanBytes(static_cast<double>(p.sram_bytes)).c_str());
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
  text += Sprintf("hbm_read_bytes %lld\nhbm_write_bytes %lld\nstandard_hbm_read_bytes %lld\nstandard_hbm_write_bytes %lld\n",
                  static_cast<long long>(flash.HbmReadBytes()), static_cast<long long>(flash.HbmWriteBytes()),
                  static_cast<long long>(standard.HbmReadBytes()), static_cast<long long>(standard.HbmWriteBytes()));
  text += Sprintf("flash / standard HBM bytes: %.4f\n", static_cast<double>(flash.HbmBytes()) /
                                                         static_cast<double>(std::max<std::int64_t>(1, standard.HbmBytes())));
  text += Sprintf("SRAM peak %lld bytes of M = %lld (%s)\n", static_cast<long long>(flash.sram_peak_bytes),
                  static_cast<long long>(p.sram_bytes),
                  flash.sram_peak_bytes <= p.sram_bytes ? "fits" : "exceeds M: Algorithm 1's sizing leaves out S_ij and the statistics");
  text += Sprintf("SRAM reads by compute %lld bytes, writes %lld bytes\n", static_cast<long long>(flash.sram_read_bytes),
                  static_cast<long long>(flash.sram_write_bytes));
  return text;
}

}  // namespace flashviz
