// flashviz bench [--pass forward|backward] [--kernels all|ID,...] [--n LIST] [--d D] [--batch B --heads H]
//                [--dtype fp16|bf16|fp32] [--causal] --csv F [--png F [--peers CSV]] [--repeats R] [--warmup W]
//                [--seed S]
// flashviz bench --replot CSV[,CSV...] --png F
// A sweep of the registry's CUDA variants over sequence lengths: each point validated against the float64
// reference, then timed (kernels/cuda/harness.h); progress on stderr, a summary table on stdout, every point a
// CSV row (kernels/cuda/bench_results.h); the PNG is the GUI benchmark panel's plot (viz/bench_plot.h), with
// PyTorch's curves from a scripts/peers.py CSV. Without a usable GPU it says why and exits 1; --replot draws
// the PNG from CSVs alone (no GPU needed). --pass backward sweeps the backward variants instead
// (kernels/cuda/backward: dQ, dK, dV from Q, K, V, O, dO and L, checked against the float64 backward reference;
// TFLOP/s count 10·B·H·N²·d, halved for causal), with the same CSV columns; max_abs_error then holds the
// relative error max |error| / max |reference| of the worst gradient (kernels/cuda/backward/backward_harness.h).
#include <CLI/CLI.hpp>
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>
#include <memory>
#include <sstream>

#include "app/cli/commands.h"
#include "app/cli/problem_options.h"
#include "kernels/common/files.h"
#include "kernels/common/format.h"
#include "kernels/cpu/problem.h"
#include "kernels/cuda/backward/backward_registry.h"
#include "kernels/cuda/bench_results.h"
#include "kernels/cuda/registry.h"
#ifdef FLASHVIZ_HAVE_CUDA
#include "kernels/cuda/backward/backward_harness.h"
#include "kernels/cuda/harness.h"
#endif
#ifdef FLASHVIZ_HAVE_VIZ
#include "viz/bench_plot.h"
#endif

namespace flashviz {
namespace {

struct BenchOptions {
  std::string pass = "forward";  // or "backward": the registry of kernels/cuda/backward
  std::string kernels = "all";
  std::string n_list = "512,1024,2048,4096,8192,16384";
  int d = 64;
  int batch = 0;
  int heads = 16;
  std::string dtype = "fp32";
  bool causal = false;
  std::string csv, png, peers, replot;
  CLI::Option* d_option = nullptr;  // --replot keeps only rows of this d when --d is given
  int repeats = 20;
  int warmup = 2;
  std::uint64_t seed = 1;
  unsigned options = 0;
};

std::vector<std::string> SplitList(const std::string& text) {
  std::vector<std::string> items;
  std::stringstream stream(text);
  for (std::string item; std::getline(stream, item, ',');)
    if (!item.empty()) items.push_back(item);
  return items;
}

cuda::SweepSpec ToSpec(const BenchOptions& o) {
  cuda::SweepSpec spec;
  if (o.kernels == "all") {
    const bool backward = o.pass == "backward";
    for (const cuda::VariantInfo& variant : backward ? cuda::BackwardCatalogue() : cuda::Catalogue())
      spec.kernels.push_back(variant.id);
  } else {
    spec.kernels = SplitList(o.kernels);
  }
  for (const std::string& item : SplitList(o.n_list)) {
    char* rest = nullptr;
    const long n = std::strtol(item.c_str(), &rest, 10);
    if (*rest != '\0' || n < 1 || n > kMaxSequenceLength)
      throw UsageError(Sprintf("--n: '%s' is not a sequence length (1 … %d)", item.c_str(), kMaxSequenceLength));
    spec.n_values.push_back(static_cast<int>(n));
  }
  const auto dtype = cuda::ParseDType(o.dtype);
  if (!dtype) throw UsageError("--dtype " + o.dtype + ": fp32, fp16 or bf16");
  spec.dtype = *dtype;
  spec.d = o.d;
  spec.batch = o.batch;
  spec.heads = o.heads;
  spec.causal = o.causal;
  spec.repeats = o.repeats;
  spec.warmup = o.warmup;
  spec.seed = o.seed;
  spec.variant_options = o.options;
  return spec;
}

std::vector<cuda::BenchRow> LoadCsvs(const std::string& list) {
  std::vector<cuda::BenchRow> rows;
  for (const std::string& path : SplitList(list)) {
    std::vector<cuda::BenchRow> more = cuda::ReadBenchCsv(path);
    rows.insert(rows.end(), more.begin(), more.end());
  }
  return rows;
}

// --png needs the plot code of viz/ (built with the GUI); say so before any kernel runs.
void CheckPngPossible([[maybe_unused]] const BenchOptions& o) {
#ifndef FLASHVIZ_HAVE_VIZ
  if (!o.png.empty()) throw InputError("--png: this flashviz was built without viz/ (the GUI's plot code draws it)");
#endif
}

void WritePlot([[maybe_unused]] const std::vector<cuda::BenchRow>& rows, [[maybe_unused]] const std::string& title,
               [[maybe_unused]] OutputFile& png) {
#ifdef FLASHVIZ_HAVE_VIZ
  BenchPlotOptions options;
  options.title = title;
  png.Write(EncodePng(RenderBenchImage(rows, options)));
#endif
}

int Replot(const BenchOptions& o) {
  if (o.png.empty()) throw UsageError("--replot draws a PNG: give --png FILE");
  CheckPngPossible(o);
  CommandFiles files;
  for (const std::string& list : {o.replot, o.peers})
    for (const std::string& path : SplitList(list)) files.AddInput(path);
  OutputFile& png = files.AddOutput(o.png);  // not over one of the CSVs: checked before anything is read
  std::vector<cuda::BenchRow> rows = LoadCsvs(o.replot);
  if (!o.peers.empty()) {
    std::vector<cuda::BenchRow> peers = LoadCsvs(o.peers);
    rows.insert(rows.end(), peers.begin(), peers.end());
  }
  if (o.d_option && o.d_option->count() > 0) {
    std::erase_if(rows, [&](const cuda::BenchRow& row) { return row.d != o.d; });
    if (std::none_of(rows.begin(), rows.end(), [](const cuda::BenchRow& row) { return row.Ok(); }))
      throw InputError(Sprintf("--replot %s: no measured row has d = %d", o.replot.c_str(), o.d));
  }
  if (std::none_of(rows.begin(), rows.end(), [](const cuda::BenchRow& row) { return row.Ok(); }))
    throw InputError("--replot " + o.replot + ": no measured row to plot");
  std::string gpus;
  for (const cuda::BenchRow& row : rows)
    if (!row.gpu.empty() && gpus.find(row.gpu) == std::string::npos) {
      if (!gpus.empty()) gpus += ", ";
      gpus += row.gpu;
    }
  std::string title = "Runtime against N";
  if (o.d_option && o.d_option->count() > 0) title += Sprintf(", d = %d", o.d);
  if (!gpus.empty()) title += " (" + gpus + ")";
  WritePlot(rows, title, png);
  files.Commit();
  std::fprintf(stderr, "bench: wrote %s\n", o.png.c_str());
  return 0;
}

#ifdef FLASHVIZ_HAVE_CUDA
// ms (TFLOP/s) per kernel and N, the last thing printed: what a log tail shows.
void PrintSummary(const std::vector<cuda::BenchRow>& rows) {
  std::vector<std::string> kernels;
  std::vector<int> ns;
  std::map<std::pair<std::string, int>, const cuda::BenchRow*> cell;
  for (const cuda::BenchRow& row : rows) {
    if (std::find(kernels.begin(), kernels.end(), row.kernel) == kernels.end()) kernels.push_back(row.kernel);
    if (std::find(ns.begin(), ns.end(), row.n) == ns.end()) ns.push_back(row.n);
    cell[{row.kernel, row.n}] = &row;
  }
  std::printf("%-12s", "ms (TFLOP/s)");
  for (int n : ns) std::printf(" %18s", Sprintf("N = %d", n).c_str());
  std::printf("\n");
  for (const std::string& kernel : kernels) {
    std::printf("%-12s", kernel.c_str());
    for (int n : ns) {
      const auto it = cell.find({kernel, n});
      std::string text = "–";
      if (it != cell.end() && it->second->Ok())
        text = Sprintf("%.3f (%.1f)", it->second->ms_median, it->second->tflops);
      else if (it != cell.end())
        text = it->second->status.substr(0, it->second->status.find(':'));
      std::printf(" %18s", text.c_str());
    }
    std::printf("\n");
  }
}
#endif

int RunBench(const BenchOptions& o) {
  if (!o.replot.empty()) return Replot(o);
  if (o.csv.empty()) throw UsageError("--csv FILE is required (the results, one row per kernel and N)");
  const cuda::SweepSpec spec = ToSpec(o);
  const bool backward = o.pass == "backward";
  // Every input checked before the GPU (and in builds without CUDA, which stop below).
  [[maybe_unused]] const std::vector<cuda::SweepPoint> points =
      backward ? cuda::BackwardSweepPoints(spec) : cuda::SweepPoints(spec);
  CheckPngPossible(o);
  const std::vector<cuda::BenchRow> peers = o.peers.empty() ? std::vector<cuda::BenchRow>() : LoadCsvs(o.peers);
#ifndef FLASHVIZ_HAVE_CUDA
  throw InputError("bench runs the CUDA kernels: this flashviz was built without CUDA");
#else
  if (auto reason = cuda::CudaUnavailableReason()) throw InputError("bench needs a CUDA GPU: " + *reason);
  // Unwritable or aliased paths are reported before the first kernel runs; both outputs land together.
  CommandFiles files;
  for (const std::string& path : SplitList(o.peers)) files.AddInput(path);
  OutputFile& csv = files.AddOutput(o.csv);
  OutputFile* png = o.png.empty() ? nullptr : &files.AddOutput(o.png);
  const std::string gpu = cuda::DeviceName();
  const std::string sweep = (backward ? "backward pass, " : "") + cuda::DescribeSweep(spec, points.size());
  std::fprintf(stderr, "bench: %s; %s\n", cuda::DeviceDescription().c_str(), sweep.c_str());
  std::vector<cuda::BenchRow> rows;
  bool all_good = true;
  for (std::size_t index = 0; index < points.size(); ++index) {
    const cuda::SweepPoint& point = points[index];
    std::fprintf(stderr, "[%zu/%zu] %-12s %s B=%d H=%d N=%d d=%d%s: ", index + 1, points.size(), point.variant->id,
                 std::string(cuda::DTypeName(spec.dtype)).c_str(), point.shape.batch, point.shape.heads, point.shape.n,
                 point.shape.d, point.shape.causal ? " causal" : "");
    std::fflush(stderr);
    cuda::MeasureOptions options;
    options.repeats = spec.repeats;
    options.warmup = spec.warmup;
    options.seed = spec.seed + index;  // fresh inputs for every point
    options.variant_options = spec.variant_options;
    if (backward) {
      // Fresh inputs for every N, shared by the variants of that N: the harness then computes the float64
      // reference gradients (seconds per head at N = 16384) once per N instead of once per variant.
      const auto n_index = std::find(spec.n_values.begin(), spec.n_values.end(), point.shape.n) - spec.n_values.begin();
      options.seed = spec.seed + static_cast<std::uint64_t>(n_index);
    }
    const cuda::Measurement m = backward ? cuda::MeasureBackward(*point.variant, point.shape, spec.dtype, options)
                                         : cuda::MeasureVariant(*point.variant, point.shape, spec.dtype, options);
    if (m.Ok())
      std::fprintf(stderr, "%.4f ms median (min %.4f, %d runs), %.2f TFLOP/s%s, max %s %.2g (≤ %.2g)\n", m.ms_median,
                   m.ms_min, spec.repeats, m.tflops, point.shape.causal ? " (causal: FLOPs halved)" : "",
                   backward ? "|err|/|ref|" : "|err|", m.max_abs_error, m.tolerance);
    else
      std::fprintf(stderr, "%s: %s\n", std::string(cuda::MeasureStatusName(m.status)).c_str(), m.reason.c_str());
    all_good &= m.Ok() || m.status == cuda::MeasureStatus::kNotApplicable;
    rows.push_back(cuda::ToBenchRow(point, spec.dtype, m, gpu));
    if (cuda::CudaContextLost()) {
      std::fprintf(stderr, "bench: the CUDA context is lost; stopping after %zu of %zu points\n", index + 1,
                   points.size());
      break;
    }
  }
  csv.Write(cuda::BenchCsvHeader());
  for (const cuda::BenchRow& row : rows) csv.Write(cuda::BenchCsvLine(row));
  if (!o.png.empty()) {
    std::vector<cuda::BenchRow> plotted = rows;
    plotted.insert(plotted.end(), peers.begin(), peers.end());
    WritePlot(plotted, "flashviz bench: " + gpu + "; " + sweep, *png);
  }
  files.Commit();
  if (!o.png.empty()) std::fprintf(stderr, "bench: wrote %s\n", o.png.c_str());
  PrintSummary(rows);
  return all_good ? 0 : 1;
#endif
}

}  // namespace

void AddBenchCommand(CLI::App& app, CommandList& commands) {
  auto options = std::make_shared<BenchOptions>();
  CLI::App* cmd = app.add_subcommand(
      "bench", "Validate and time the CUDA kernels over sequence lengths; write a CSV (and a log-log PNG)");
  cmd->add_option("--pass", options->pass,
                  "forward (the default) or backward: which registry to sweep (dQ, dK, dV from dO for backward)")
      ->check(CLI::IsMember({"forward", "backward"}));
  cmd->add_option("--kernels", options->kernels,
                  "all (the default), or registry ids separated by commas (see `flashviz kernels`)");
  cmd->add_option("--n", options->n_list,
                  "sequence lengths N, separated by commas (default 512,1024,2048,4096,8192,16384)");
  options->d_option =
      cmd->add_option("--d", options->d, "head dimension d (default 64; with --replot: draw only rows of this d)");
  cmd->add_option("--batch", options->batch, "batch B (default: B·H = min(1024, 2^32/N²), as in docs/peers.md)");
  cmd->add_option("--heads", options->heads, "heads H (default 16)");
  cmd->add_option("--dtype", options->dtype, "fp32 (the default), fp16 or bf16")
      ->check(CLI::IsMember({"fp32", "fp16", "bf16"}));
  cmd->add_flag("--causal", options->causal, "mask keys after the query (TFLOP/s then count half the FLOPs)");
  cmd->add_option("--csv", options->csv, "the results, one row per kernel and N (required unless --replot)");
  cmd->add_option("--png", options->png, "runtime against N, log-log, one line per kernel (the GUI panel's plot)");
  cmd->add_option("--peers", options->peers, "CSV(s) of scripts/peers.py to draw beside ours on the PNG (dashed)");
  cmd->add_option("--replot", options->replot, "CSV(s) to draw on the PNG instead of running anything (no GPU needed)");
  cmd->add_option("--repeats", options->repeats, "timed runs per point, the median reported (default and least 20)");
  cmd->add_option("--warmup", options->warmup, "untimed runs before them (default 2)");
  AddSeedOption(*cmd, options->seed, "inputs' seed (each point gets seed + its index; default 1)");
  cmd->add_option("--options", options->options, "variant options bits (AttentionArgs::options), for tuning")
      ->group("");  // hidden from --help: the registered variants are what is reported
  commands.push_back({cmd, [options] { return RunBench(*options); }});
}

}  // namespace flashviz
