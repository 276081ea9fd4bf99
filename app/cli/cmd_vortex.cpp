// flashviz vortex [--cores C --warps W --threads T --lmem BYTES] [--mode simt|tcu] [--n N --d D] [--json]
// The Vortex mapping of kernels/vortex as text or as one JSON object: tiles, row → (core, warp, thread), the
// register and local-memory budgets with the fit verdict, the counting model of the three programs beside the
// report's published table, and (where the program applies) the numerics of the SIMT and TCU programs on the
// report's inputs.
//
// [SECTION] options
// [SECTION] JSON
// [SECTION] text
// [SECTION] registration
#include <CLI/CLI.hpp>
#include <algorithm>
#include <cstdio>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>

#include "app/cli/commands.h"
#include "kernels/common/format.h"
#include "kernels/cpu/problem.h"
#include "kernels/vortex/config.h"
#include "kernels/vortex/report.h"

namespace flashviz {
namespace {

using vortex::Mapping;

// ---- [SECTION] options -----------------------------------------------------------------------------------------

struct VortexOptions {
  vortex::MachineConfig machine;
  std::string mode = "simt";
  int n = vortex::kReportN;
  int d = vortex::kReportD;
  bool json = false;
};

using vortex::Report;

Report BuildReport(const VortexOptions& o) {
  const std::optional<vortex::Mode> mode = vortex::ParseMode(o.mode);
  if (!mode) throw UsageError(Sprintf("--mode %s: expected simt or tcu", o.mode.c_str()));
  const vortex::Request request{o.machine, *mode, o.n, o.d};
  if (const auto error = vortex::RequestError(request)) throw UsageError(*error);
  return vortex::BuildReport(request, vortex::Numerics::kRun);
}

// ---- [SECTION] JSON --------------------------------------------------------------------------------------------

nlohmann::json CountsJson(const vortex::OpCounts& c) {
  nlohmann::json j = nlohmann::json::object();
  for (int op = 0; op < vortex::kOpClassCount; ++op)
    j[std::string(vortex::OpClassName(static_cast<vortex::OpClass>(op)))] = c.ops[static_cast<std::size_t>(op)];
  return j;
}

nlohmann::json ProgramJson(const vortex::ProgramCounts& p) {
  nlohmann::json j;
  j["program"] = vortex::ProgramName(p.program);
  j["title"] = vortex::ProgramTitle(p.program);
  j["applicable"] = p.applicable;
  if (!p.applicable) {
    j["reason"] = p.not_applicable_reason;
    return j;
  }
  if (p.br > 0) {
    j["br"] = p.br;
    j["bc"] = p.bc;
  }
  j["ops"] = CountsJson(p.total);
  j["total_ops"] = p.total.Total();
  j["global_read_bytes"] = p.total.GlobalReadBytes();
  j["global_write_bytes"] = p.total.GlobalWriteBytes();
  j["mma_sync"] = p.mma_sync;
  j["mma_micro_ops"] = p.mma_micro_ops;
  j["threads_launched"] = p.threads_launched;
  nlohmann::json phases = nlohmann::json::array();
  for (const auto& phase : p.phases) {
    nlohmann::json ph;
    ph["name"] = phase.name;
    ph["what"] = phase.what;
    ph["per_kv_tile"] = phase.repeat == vortex::Repeat::kPerKvTile;
    ph["active_threads"] = phase.active_threads;
    ph["blocks"] = phase.blocks;
    ph["repeats"] = phase.repeats;
    ph["per_thread"] = CountsJson(phase.per_thread);
    phases.push_back(ph);
  }
  j["phases"] = phases;
  return j;
}

nlohmann::json ReportJson(const Report& r) {
  const Mapping& m = r.mapping;
  const vortex::MachineConfig& machine = m.request.machine;
  nlohmann::json j;
  j["mode"] = vortex::ModeName(m.request.mode);
  j["n"] = m.request.n;
  j["d"] = m.request.d;
  j["machine"] = {{"cores", machine.cores},
                  {"warps_per_core", machine.warps_per_core},
                  {"threads_per_warp", machine.threads_per_warp},
                  {"local_memory_bytes", machine.local_memory_bytes},
                  {"fp_registers_per_thread", machine.fp_registers_per_thread}};
  j["br"] = m.br;
  j["bc"] = m.bc;
  j["tr"] = m.tr;
  j["tc"] = m.tc;
  j["threads_per_block"] = m.threads_per_block;
  j["warps_per_block"] = m.warps_per_block;
  j["blocks_per_core"] = m.blocks_per_core;
  j["active_cores"] = m.active_cores;
  j["waves"] = m.waves;
  j["fits"] = m.fits;
  j["reason"] = m.reason;
  nlohmann::json checks = nlohmann::json::array();
  for (const auto& c : m.checks) checks.push_back({{"name", c.name}, {"ok", c.ok}, {"detail", c.detail}});
  j["checks"] = checks;

  nlohmann::json ranges = nlohmann::json::array();
  for (const auto& range : m.registers.ranges)
    ranges.push_back({{"first", range.first},
                      {"count", range.count},
                      {"holds", vortex::RegisterContentName(range.content)},
                      {"label", range.label}});
  j["registers"] = {{"used", m.registers.used},
                    {"available", m.registers.available},
                    {"breakdown", m.registers.breakdown},
                    {"ranges", ranges}};
  nlohmann::json regions = nlohmann::json::array();
  for (const auto& region : m.local_memory.regions)
    regions.push_back({{"name", region.name},
                       {"offset", region.offset},
                       {"bytes", region.bytes},
                       {"rows", region.rows},
                       {"cols", region.cols},
                       {"element_bytes", region.element_bytes},
                       {"layout", region.layout}});
  j["local_memory"] = {{"bytes_per_block", m.local_memory.bytes_per_block},
                       {"blocks_per_core", m.local_memory.blocks_per_core},
                       {"bytes_per_core", m.local_memory.bytes_per_core},
                       {"capacity", m.local_memory.capacity},
                       {"regions", regions}};

  nlohmann::json blocks = nlohmann::json::array();
  for (const auto& b : m.blocks)
    blocks.push_back({{"block", b.block},
                      {"core", b.core},
                      {"wave", b.wave},
                      {"first_warp", b.first_warp},
                      {"warps", b.warps},
                      {"row_begin", b.row_begin},
                      {"rows", b.rows}});
  j["blocks"] = blocks;
  nlohmann::json rows = nlohmann::json::array();
  for (int row = 0; row < m.request.n; ++row) {
    const vortex::RowOwner o = m.OwnerOfRow(row);
    rows.push_back({{"row", o.row}, {"core", o.core}, {"warp", o.warp}, {"thread", o.thread}, {"block", o.block},
                    {"wave", o.wave}});
  }
  j["rows"] = rows;

  if (m.request.mode == vortex::Mode::kTcu) {
    nlohmann::json fragments = nlohmann::json::array();
    for (auto f : {vortex::Fragment::kA, vortex::Fragment::kB, vortex::Fragment::kC}) {
      const vortex::FragmentShape s = vortex::ShapeOf(f);
      nlohmann::json padding = nlohmann::json::array();
      for (int reg = 0; reg < vortex::kTcuFragmentRegisters; ++reg)
        if (vortex::RegisterIsPadding(f, reg)) padding.push_back(Sprintf("f%d", s.first_register + reg));
      fragments.push_back({{"fragment", vortex::FragmentName(f)},
                           {"rows", s.rows},
                           {"cols", s.cols},
                           {"element_bytes", s.element_bytes},
                           {"registers", Sprintf("f%d-f%d", s.first_register, s.first_register + 7)},
                           {"padding_registers", padding}});
    }
    int padding_ops = 0;
    for (const auto& op : vortex::MmaMicroOps()) padding_ops += op.only_padding ? 1 : 0;
    const vortex::TcuRoles roles;
    j["tcu"] = {
        {"fragments", fragments},
        {"mma_per_kv_tile", 2},
        {"micro_ops_per_mma", vortex::kMicroOpsPerMma},
        {"micro_ops_on_padding", padding_ops},
        {"roles",
         {{"rowmax", roles.rowmax}, {"exp", roles.exp}, {"rowsum", roles.rowsum}, {"accumulate", roles.accumulate}}},
        {"useful_fraction_vortex", vortex::UsefulFraction(vortex::kVortexTcuTile, m.request.d)},
        {"useful_fraction_nvidia_wmma", vortex::UsefulFraction(vortex::kNvidiaWmmaTile, m.request.d)}};
  }

  nlohmann::json programs = nlohmann::json::array();
  for (const auto& p : r.counts) programs.push_back(ProgramJson(p));
  nlohmann::json published = nlohmann::json::array();
  for (const auto& row : vortex::kPublishedTable)
    published.push_back({{"program", vortex::ProgramName(row.program)},
                         {"instructions", row.instructions},
                         {"cycles", row.cycles},
                         {"ipc", row.ipc},
                         {"memory_latency_cycles", row.memory_latency_cycles}});
  nlohmann::json ratios = nlohmann::json::array();
  for (const auto& q : r.ratios) {
    nlohmann::json x = {{"numerator", vortex::ProgramName(q.numerator)},
                        {"denominator", vortex::ProgramName(q.denominator)},
                        {"report_instructions", q.report_instructions},
                        {"report_cycles", q.report_cycles},
                        {"report_memory_latency", q.report_memory_latency}};
    if (q.model_operations > 0) {
      x["model_operations"] = q.model_operations;
      x["model_global_bytes"] = q.model_global_bytes;
    } else {
      x["model_operations"] = nullptr;
      x["model_global_bytes"] = nullptr;
    }
    ratios.push_back(x);
  }
  j["counts"] = {{"programs", programs},
                 {"published", {{"label", vortex::kPublishedTableLabel}, {"rows", published}}},
                 {"ratios", ratios}};

  if (r.numerics) {
    const auto& x = *r.numerics;
    nlohmann::json numerics = {{"inputs", r.numerics_note},
                               {"max_error_simt", x.max_error_simt},
                               {"simt_outside_program_check", x.simt_outside_check}};
    if (!x.o_tcu.empty()) {
      numerics["max_error_tcu"] = x.max_error_tcu;
      numerics["max_tcu_vs_simt"] = x.max_tcu_vs_simt;
      numerics["tcu_outside_program_check"] = x.tcu_outside_check;
    }
    j["numerics"] = numerics;
  } else {
    j["numerics"] = {{"note", r.numerics_note}};
  }
  return j;
}

// ---- [SECTION] text --------------------------------------------------------------------------------------------

std::string RegisterName(int first, int count) {
  return count == 1 ? Sprintf("f%d", first) : Sprintf("f%d-f%d", first, first + count - 1);
}

// `text` padded with spaces to `width` characters as they appear on screen (UTF-8 continuation bytes take none).
std::string PadRight(const std::string& text, int width) {
  int shown = 0;
  for (unsigned char c : text) shown += (c & 0xC0) != 0x80;
  return text + std::string(static_cast<std::size_t>(std::max(0, width - shown)), ' ');
}

std::string Ratio(double x) { return x > 0 ? Sprintf("%.3f", x) : std::string("-"); }

void PrintRows(const Mapping& m) {
  const int t = m.request.machine.threads_per_warp;
  constexpr int kShownBlocks = 16;
  std::printf("\nRows -> (core, warp, thread): block b = Q tile b runs on core b mod %d\n", m.request.machine.cores);
  for (const auto& b : m.blocks) {
    if (b.block == kShownBlocks) {
      std::printf("  ... %d more blocks, the same pattern\n", m.tr - kShownBlocks);
      break;
    }
    std::printf("  block %d -> core %d, wave %d:", b.block, b.core, b.wave);
    for (int w = 0; w < b.warps; ++w) {
      const int first = w * t, last = std::min(b.rows, (w + 1) * t) - 1;
      if (first > last) break;
      std::printf("%s warp %d threads 0-%d = rows %d-%d", w ? ";" : "", b.first_warp + w, last - first,
                  b.row_begin + first, b.row_begin + last);
    }
    std::printf("\n");
  }
}

void PrintText(const Report& r) {
  const Mapping& m = r.mapping;
  const vortex::MachineConfig& machine = m.request.machine;
  const bool tcu = m.request.mode == vortex::Mode::kTcu;
  std::printf("Vortex %s mapping: N = %d, d = %d on %d cores x %d warps x %d threads, %lld B local memory per core, "
              "%d FP registers per thread\n",
              tcu ? "TCU" : "SIMT", m.request.n, m.request.d, machine.cores, machine.warps_per_core,
              machine.threads_per_warp, static_cast<long long>(machine.local_memory_bytes),
              machine.fp_registers_per_thread);
  std::printf("Tiles: B_r = %d, B_c = %d; %d blocks (Q tiles) x %d K/V tiles each; %d threads = %d warp%s per block, "
              "%d block%s per core at a time, %d wave%s on %d core%s\n",
              m.br, m.bc, m.tr, m.tc, m.threads_per_block, m.warps_per_block, m.warps_per_block == 1 ? "" : "s",
              m.blocks_per_core, m.blocks_per_core == 1 ? "" : "s", m.waves, m.waves == 1 ? "" : "s", m.active_cores,
              m.active_cores == 1 ? "" : "s");
  std::printf("Verdict: %s\n", m.fits ? m.reason.c_str() : ("does not fit: " + m.reason).c_str());
  for (const auto& c : m.checks) std::printf("  [%s] %s: %s\n", c.ok ? "ok" : "FAIL", c.name.c_str(), c.detail.c_str());

  std::printf("\nFP registers per thread (%s):\n", m.registers.breakdown.c_str());
  int next = 0;
  for (const auto& range : m.registers.ranges) {
    if (range.first > next) std::printf("  %-8s free\n", RegisterName(next, range.first - next).c_str());
    std::printf("  %-8s %s%s\n", RegisterName(range.first, range.count).c_str(), range.label.c_str(),
                range.first + range.count > m.registers.available ? "  (past the register file: spills)" : "");
    next = range.first + range.count;
  }
  if (next < m.registers.available)
    std::printf("  %-8s free\n", RegisterName(next, m.registers.available - next).c_str());

  std::printf("\nLocal memory per block (%lld B; %d block%s per core at a time = %lld of %lld B):\n",
              static_cast<long long>(m.local_memory.bytes_per_block), m.local_memory.blocks_per_core,
              m.local_memory.blocks_per_core == 1 ? "" : "s", static_cast<long long>(m.local_memory.bytes_per_core),
              static_cast<long long>(m.local_memory.capacity));
  std::printf("  %6s %6s  %-18s %s\n", "offset", "bytes", "region", "layout");
  for (const auto& region : m.local_memory.regions)
    std::printf("  %6lld %6lld  %s %s\n", static_cast<long long>(region.offset),
                static_cast<long long>(region.bytes), PadRight(region.name, 18).c_str(), region.layout.c_str());

  if (tcu) {
    std::printf(
        "\nTensor unit: per K/V tile two mma_sync on 8x8 tiles with K = 16 (the 8-wide dimension zero-padded):\n");
    std::printf(
        "  #1 S_ij = Q_i K_j^T: A = Q_i (8x16 fp16, f0-f7), B = K_j^T (16x8 fp16, f10-f17), C = S_ij (8x8 fp32, "
        "f24-f31)\n");
    std::printf("  #2 P~_ij V_j:        A = P~_ij (f0-f7), B = V_j (f10-f17), C = P~_ij V_j (f24-f31)\n");
    std::printf("  padding: A's columns 8-15 live in %s of every lane; B's rows 8-15 in %s\n",
                vortex::PaddingRegisterNames(vortex::Fragment::kA).c_str(),
                vortex::PaddingRegisterNames(vortex::Fragment::kB).c_str());
    int padding_ops = 0;
    for (const auto& op : vortex::MmaMicroOps()) padding_ops += op.only_padding ? 1 : 0;
    std::printf("  one mma_sync = %d micro-ops of 4x2x2 (fp16 pairs); %d of them multiply padding only\n",
                vortex::kMicroOpsPerMma, padding_ops);
    const vortex::TcuRoles roles;
    std::printf("  rowmax: %s\n  exp: %s\n  rowsum: %s\n  accumulate: %s\n", roles.rowmax.data(), roles.exp.data(),
                roles.rowsum.data(), roles.accumulate.data());
    std::printf("  useful multiply-adds at d = %d: Vortex 8x8x16 %.0f%%, NVIDIA WMMA 16x16x16 %.0f%%\n", m.request.d,
                100 * vortex::UsefulFraction(vortex::kVortexTcuTile, m.request.d),
                100 * vortex::UsefulFraction(vortex::kNvidiaWmmaTile, m.request.d));
  }
  PrintRows(m);

  std::printf("\nCounting model (operations per thread summed over all threads, N = %d, d = %d):\n", m.request.n,
              m.request.d);
  std::printf("  %-14s", "class");
  for (const auto& p : r.counts) std::printf(" %22s", std::string(vortex::ProgramTitle(p.program)).c_str());
  std::printf("\n");
  const auto row = [&](const char* name, auto value) {
    std::printf("  %-14s", name);
    for (const auto& p : r.counts) {
      if (p.applicable) std::printf(" %22lld", static_cast<long long>(value(p)));
      else std::printf(" %22s", "n/a");
    }
    std::printf("\n");
  };
  for (int op = 0; op < vortex::kOpClassCount; ++op) {
    const auto cls = static_cast<vortex::OpClass>(op);
    row(std::string(vortex::OpClassName(cls)).c_str(), [&](const vortex::ProgramCounts& p) { return p.total[cls]; });
  }
  row("total", [](const vortex::ProgramCounts& p) { return p.total.Total(); });
  row("global read B", [](const vortex::ProgramCounts& p) { return p.total.GlobalReadBytes(); });
  row("global write B", [](const vortex::ProgramCounts& p) { return p.total.GlobalWriteBytes(); });
  row("mma_sync", [](const vortex::ProgramCounts& p) { return p.mma_sync; });
  for (const auto& p : r.counts)
    if (!p.applicable)
      std::printf("  %s: not applicable: %s\n", std::string(vortex::ProgramTitle(p.program)).c_str(),
                  p.not_applicable_reason.c_str());

  std::printf("\nPublished: %s\n", vortex::kPublishedTableLabel.data());
  std::printf("  %-22s %13s %10s %6s %16s\n", "program", "instructions", "cycles", "IPC", "memory latency");
  for (const auto& p : vortex::kPublishedTable)
    std::printf("  %-22s %13lld %10lld %6.3f %16lld\n", std::string(vortex::ProgramTitle(p.program)).c_str(),
                static_cast<long long>(p.instructions), static_cast<long long>(p.cycles), p.ipc,
                static_cast<long long>(p.memory_latency_cycles));
  std::printf("Ratios (report's measurements | this model's counts%s):\n",
              m.request.n == vortex::kReportN && m.request.d == vortex::kReportD && machine == vortex::kReportMachine
                  ? ", same configuration"
                  : "; the model is at this configuration, the report at its own");
  std::printf("  %-44s %13s %8s %10s | %10s %13s\n", "", "instructions", "cycles", "mem. lat.", "operations",
              "global bytes");
  for (const auto& q : r.ratios) {
    const std::string name = Sprintf("%s / %s", std::string(vortex::ProgramTitle(q.numerator)).c_str(),
                                     std::string(vortex::ProgramTitle(q.denominator)).c_str());
    std::printf("  %-44s %13.3f %8.3f %10.3f | %10s %13s\n", name.c_str(), q.report_instructions, q.report_cycles,
                q.report_memory_latency, Ratio(q.model_operations).c_str(), Ratio(q.model_global_bytes).c_str());
  }

  std::printf("\nNumerics (%s):\n", r.numerics_note.c_str());
  if (r.numerics) {
    const auto& x = *r.numerics;
    std::printf(
        "  SIMT (fp32): max |O - O_ref| = %.3g, %lld outside the program's check |ref - out| <= 1e-3 + 1e-3|out|\n",
        x.max_error_simt, static_cast<long long>(x.simt_outside_check));
    if (!x.o_tcu.empty())
      std::printf("  TCU (fp16 in, fp32 accumulate): max |O - O_ref| = %.3g, %lld outside that check; max |O_tcu - "
                  "O_simt| = %.3g\n",
                  x.max_error_tcu, static_cast<long long>(x.tcu_outside_check), x.max_tcu_vs_simt);
    else
      std::printf("  TCU: not applicable (needs d = 8)\n");
  }
}

int RunVortex(const VortexOptions& o) {
  const Report report = BuildReport(o);
  if (o.json) {
    std::printf("%s\n", ReportJson(report).dump(2).c_str());
  } else {
    PrintText(report);
  }
  return 0;
}

}  // namespace

// ---- [SECTION] registration ------------------------------------------------------------------------------------

void AddVortexCommand(CLI::App& app, CommandList& commands) {
  auto options = std::make_shared<VortexOptions>();
  CLI::App* cmd = app.add_subcommand(
      "vortex", "Map the tiled algorithm onto a Vortex GPGPU: row -> (core, warp, thread), register and local-memory "
                "budgets, the tensor unit, the counting model beside the report's table");
  cmd->add_option("--cores", options->machine.cores, "cores C (default 4)");
  cmd->add_option("--warps", options->machine.warps_per_core, "warps per core W (default 2)");
  cmd->add_option("--threads", options->machine.threads_per_warp, "threads per warp T (default 8)");
  cmd->add_option("--lmem", options->machine.local_memory_bytes, "local memory per core in bytes (default 16384)");
  cmd->add_option("--mode", options->mode, "simt (one thread per query row; the default) or tcu (8x8 tensor unit)")
      ->check(CLI::IsMember({"simt", "tcu"}));
  cmd->add_option("--n", options->n, "sequence length N, a power of two (default 64)");
  cmd->add_option("--d", options->d, "head dimension d, a power of two (default 8)");
  cmd->add_flag("--json", options->json, "print one JSON object instead of text");
  commands.push_back({cmd, [options] { return RunVortex(*options); }});
}

}  // namespace flashviz
