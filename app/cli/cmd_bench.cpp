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
//
// flashviz bench --decode [--kernels all|ID,...] [--batch LIST] [--kv-len LIST] [--heads H] [--kv-heads G]
//                [--q-rows R] [--d D] [--page P] [--splits S] [--dtype fp16|bf16] --csv F
// A decoding step (kernels/cuda/decode): R query rows per head against a KV cache of N keys, for every B × N of the
// lists (defaults 1,8,64 × 4096,32768,131072; H = 32, G = 8, d = 128, fp16, page 64 for flash_decode_paged). Each
// point validated against the float64 decode reference, then timed; the HBM ceiling is measured in the same run
// by a 2 GiB device copy, and every row reports the KV cache's GB/s and its share of the copy's. A shape whose
// buffers do not fit in the GPU's memory gets a "not applicable: does not fit ..." row. The CSV has the bench
// columns followed by kv_heads, q_rows, page, splits, gbps, copy_gbps, share (kernels/cuda/decode/decode_registry.h).
//
// flashviz bench --ring [--devices LIST] [--n LIST] [--d D] [--batch B] [--heads H] [--dtype fp16|bf16] [--causal]
//                [--zigzag] [--transport nccl|virtual] [--budget-gib X] --csv F
// Ring attention (context parallelism, kernels/cuda/ring) across the GPUs of this machine: for every N × P of the
// lists (defaults 16384,32768,65536,131072 × 1,2,4 …; H = 32, B = 1, d = 128, fp16) the whole ring validated against
// the float64 reference on sampled rows, then timed (common start to the last device's end), then timed once with
// nothing overlapped (compute alone, exchanges alone). P = 1 is the same attention on one GPU: the peer. An (N, P)
// whose per-device bytes exceed --budget-gib is "does not fit" and not run, so the table shows the N only P > 1
// holds. Transport: nccl (one thread per GPU; NCCL loaded at run time) when ≥ 2 GPUs and NCCL loads, else virtual
// (P devices on one GPU, copies in place of NCCL), said on stderr. CSV columns: kernels/cuda/ring/ring_attention.h.
#include <CLI/CLI.hpp>
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <map>
#include <memory>
#include <optional>
#include <sstream>

#include "app/cli/commands.h"
#include "app/cli/problem_options.h"
#include "app/cli/progress.h"
#include "kernels/common/files.h"
#include "kernels/common/format.h"
#include "kernels/cpu/problem.h"
#include "kernels/cuda/backward/backward_registry.h"
#include "kernels/cuda/bench_results.h"
#include "kernels/cuda/decode/decode_registry.h"
#include "kernels/cuda/registry.h"
#include "kernels/cuda/ring/ring_attention.h"
#ifdef FLASHVIZ_HAVE_CUDA
#include "kernels/cuda/backward/backward_harness.h"
#include "kernels/cuda/decode/decode_harness.h"
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
  std::string batch;  // one B (forward, backward; empty: automatic) or a list (--decode)
  int heads = 16;
  std::string dtype = "fp32";
  // --decode: a decoding step against a KV cache. --heads, --d, --dtype and --batch take decode's defaults (32,
  // 128, fp16, 1,8,64) unless given.
  bool decode = false;
  std::string kv_len_list = "4096,32768,131072";
  int kv_heads = 8;
  int q_rows = 1;
  int page = 64;
  int splits = 0;
  // --ring: ring attention across GPUs. --n, --heads, --d, --dtype and --batch take the ring's defaults
  // (16384,32768,65536,131072, 32, 128, fp16, 1) unless given.
  bool ring = false;
  std::string devices;  // P list; default 1 and the powers of two up to the GPUs (nccl) or 1,2,4 (virtual)
  bool zigzag = false;
  std::string transport;  // empty: nccl when ≥ 2 GPUs and NCCL loads, else virtual
  double budget_gib = 0;  // 0: none
  CLI::Option* n_option = nullptr;
  CLI::Option* heads_option = nullptr;
  CLI::Option* dtype_option = nullptr;
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
  if (!o.batch.empty()) {
    char* rest = nullptr;
    const long batch = std::strtol(o.batch.c_str(), &rest, 10);
    if (*rest != '\0' || batch < 0 || batch > 1 << 20)
      throw UsageError("--batch: '" + o.batch + "' is not one batch size (a list is for --decode)");
    spec.batch = static_cast<int>(batch);
  }
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

std::vector<int> ParsePositiveList(const std::string& text, const char* option, int most) {
  std::vector<int> values;
  for (const std::string& item : SplitList(text)) {
    char* rest = nullptr;
    const long value = std::strtol(item.c_str(), &rest, 10);
    if (*rest != '\0' || value < 1 || value > most)
      throw UsageError(Sprintf("%s: '%s' is not a number from 1 to %d", option, item.c_str(), most));
    values.push_back(static_cast<int>(value));
  }
  if (values.empty()) throw UsageError(Sprintf("%s: give at least one value", option));
  return values;
}

#ifdef FLASHVIZ_HAVE_CUDA
// GB/s (share of the copy's) per kernel and shape, the last thing printed: what a log tail shows.
void PrintDecodeSummary(const std::vector<cuda::DecodeBenchRow>& rows) {
  std::vector<std::string> kernels;
  std::vector<std::pair<int, int>> shapes;  // (B, N)
  std::map<std::pair<std::string, std::pair<int, int>>, const cuda::DecodeBenchRow*> cell;
  for (const cuda::DecodeBenchRow& r : rows) {
    const std::pair<int, int> shape{r.row.batch, r.row.n};
    if (std::find(kernels.begin(), kernels.end(), r.row.kernel) == kernels.end()) kernels.push_back(r.row.kernel);
    if (std::find(shapes.begin(), shapes.end(), shape) == shapes.end()) shapes.push_back(shape);
    cell[{r.row.kernel, shape}] = &r;
  }
  std::printf("%-18s", "GB/s (of copy)");
  for (const auto& [b, n] : shapes) std::printf(" %15s", Sprintf("B=%d N=%d", b, n).c_str());
  std::printf("\n");
  for (const std::string& kernel : kernels) {
    std::printf("%-18s", kernel.c_str());
    for (const auto& shape : shapes) {
      const auto it = cell.find({kernel, shape});
      std::string text = "–";
      if (it != cell.end() && it->second->row.Ok())
        text = Sprintf("%.0f (%.0f%%)", it->second->gbps, 100.0 * it->second->share);
      else if (it != cell.end())
        text = it->second->row.status.substr(0, it->second->row.status.find(':'));
      std::printf(" %15s", text.c_str());
    }
    std::printf("\n");
  }
}
#endif

int RunDecodeBench(const BenchOptions& o) {
  if (o.csv.empty()) throw UsageError("--csv FILE is required (the results, one row per kernel and shape)");
  cuda::DecodeLaunchShape base;
  base.heads = o.heads_option && o.heads_option->count() > 0 ? o.heads : 32;
  base.d = o.d_option && o.d_option->count() > 0 ? o.d : 128;
  base.kv_heads = o.kv_heads;
  base.q_rows = o.q_rows;
  base.page_size = o.page;
  if (base.heads < 1 || base.kv_heads < 1 || base.heads % base.kv_heads != 0)
    throw UsageError(Sprintf("--kv-heads %d: must divide --heads %d", base.kv_heads, base.heads));
  if (base.q_rows < 1 || base.q_rows > 1024) throw UsageError(Sprintf("--q-rows %d: 1 to 1024", base.q_rows));
  if (o.page < 1 || o.page > 1 << 20) throw UsageError(Sprintf("--page %d: a page size of at least 1 token", o.page));
  if (o.splits < 0) throw UsageError(Sprintf("--splits %d: 0 (automatic) or a count", o.splits));
  const std::string dtype_name = o.dtype_option && o.dtype_option->count() > 0 ? o.dtype : "fp16";
  [[maybe_unused]] const cuda::DType dtype = *cuda::ParseDType(dtype_name);
  std::vector<std::string> kernels;
  if (o.kernels == "all")
    for (const cuda::VariantInfo& variant : cuda::DecodeCatalogue()) kernels.push_back(variant.id);
  else
    kernels = SplitList(o.kernels);
  [[maybe_unused]] const std::vector<cuda::DecodeSweepPoint> points =
      cuda::DecodeSweepPoints(kernels, ParsePositiveList(o.batch.empty() ? "1,8,64" : o.batch, "--batch", 65535),
                              ParsePositiveList(o.kv_len_list, "--kv-len", 1 << 30), base);
  if (o.repeats < 20) throw UsageError(Sprintf("--repeats %d: at least 20", o.repeats));
  CheckPngPossible(o);
#ifndef FLASHVIZ_HAVE_CUDA
  throw InputError("bench runs the CUDA kernels: this flashviz was built without CUDA");
#else
  if (auto reason = cuda::CudaUnavailableReason()) throw InputError("bench needs a CUDA GPU: " + *reason);
  CommandFiles files;
  OutputFile& csv = files.AddOutput(o.csv);
  OutputFile* png = o.png.empty() ? nullptr : &files.AddOutput(o.png);
  const std::string gpu = cuda::DeviceName();
  const std::string sweep =
      Sprintf("decode, %zu points: H = %d, G = %d, R = %d, d = %d, %s, page %d (paged), splits %s", points.size(),
              base.heads, base.kv_heads, base.q_rows, base.d, dtype_name.c_str(), base.page_size,
              o.splits > 0 ? std::to_string(o.splits).c_str() : "automatic");
  std::fprintf(stderr, "bench: %s; %s\n", cuda::DeviceDescription().c_str(), sweep.c_str());
  // The ceiling: a device copy of 2 GiB (read + written), the median of the repeats.
  const cuda::CopyBandwidth copy = cuda::MeasureCopyBandwidth(std::size_t{2} << 30, o.repeats);
  if (!copy.error.empty()) throw InputError("bench: the copy-bandwidth measurement failed: " + copy.error);
  std::fprintf(stderr, "copy: %.0f GB/s (2 GiB read + written, median %.3f ms of %d runs)\n", copy.gbps, copy.ms_median,
               o.repeats);
  std::vector<cuda::DecodeBenchRow> rows;
  bool all_good = true;
  for (std::size_t index = 0; index < points.size(); ++index) {
    const cuda::DecodeSweepPoint& point = points[index];
    const cuda::DecodeLaunchShape& p = point.problem;
    std::fprintf(stderr, "[%zu/%zu] %-18s %s B=%d H=%d G=%d R=%d N=%d d=%d%s: ", index + 1, points.size(),
                 point.variant->id, dtype_name.c_str(), p.batch, p.heads, p.kv_heads, p.q_rows, p.kv_len, p.d,
                 p.page_size > 0 ? Sprintf(" P=%d", p.page_size).c_str() : "");
    std::fflush(stderr);
    cuda::DecodeMeasureOptions options;
    options.repeats = o.repeats;
    options.warmup = o.warmup;
    options.seed = o.seed + index;  // fresh inputs for every point
    options.splits = o.splits;
    const cuda::DecodeMeasurement m = cuda::MeasureDecode(*point.variant, p, dtype, options);
    if (m.Ok())
      std::fprintf(stderr,
                   "%.4f ms median (min %.4f), %.0f GB/s = %.0f%% of copy, %d split%s, max |err| %.2g (≤ %.2g)\n",
                   m.ms_median, m.ms_min, m.gbps, 100.0 * m.gbps / copy.gbps, m.splits, m.splits == 1 ? "" : "s",
                   m.max_abs_error, m.tolerance);
    else
      std::fprintf(stderr, "%s: %s\n", std::string(cuda::MeasureStatusName(m.status)).c_str(), m.reason.c_str());
    all_good &= m.Ok() || m.status == cuda::MeasureStatus::kNotApplicable;
    cuda::AttentionShape shape;
    shape.batch = p.batch;
    shape.heads = p.heads;
    shape.n = p.kv_len;
    shape.d = p.d;
    cuda::DecodeBenchRow row;
    row.row = cuda::ToBenchRow({point.variant, shape}, dtype, m, gpu);
    row.row.hbm_bytes = m.kv_bytes;
    row.kv_heads = p.kv_heads;
    row.q_rows = p.q_rows;
    row.page = p.page_size;
    row.splits = m.Ok() ? m.splits : 0;
    row.gbps = m.Ok() ? m.gbps : NAN;
    row.copy_gbps = copy.gbps;
    row.share = m.Ok() ? m.gbps / copy.gbps : NAN;
    rows.push_back(row);
    if (cuda::CudaContextLost()) {
      std::fprintf(stderr, "bench: the CUDA context is lost; stopping after %zu of %zu points\n", index + 1,
                   points.size());
      break;
    }
  }
  csv.Write(cuda::DecodeCsvHeader());
  for (const cuda::DecodeBenchRow& row : rows) csv.Write(cuda::DecodeCsvLine(row));
  if (png) {
    std::vector<cuda::BenchRow> plotted;
    for (const cuda::DecodeBenchRow& row : rows) plotted.push_back(row.row);
    WritePlot(plotted, "flashviz bench: " + gpu + "; " + sweep, *png);
  }
  files.Commit();
  PrintDecodeSummary(rows);
  return all_good ? 0 : 1;
#endif
}

#ifdef FLASHVIZ_HAVE_CUDA
// The sweep as a table, the last thing printed: what a log tail shows.
void PrintRingSummary(const std::vector<cuda::RingBenchRow>& rows) {
  std::printf("%8s %3s %5s %10s %11s %8s %6s %6s %10s %10s %7s %9s\n", "N", "P", "fits", "ms", "TFLOP/s/GPU", "speedup",
              "ideal", "eff.", "compute ms", "exch. ms", "hidden", "max|err|");
  auto cell = [](double x, const char* format) { return std::isfinite(x) ? Sprintf(format, x) : std::string("–"); };
  for (const cuda::RingBenchRow& r : rows) {
    std::string tail;
    if (!r.Ok())
      tail = "  " + r.status.substr(0, r.status.find(':'));
    else if (r.efficiency_base_n > 0 && r.efficiency_base_n != r.shape.n)
      tail = Sprintf("  (efficiency against P = 1 at N = %d)", r.efficiency_base_n);
    std::printf("%8d %3d %5s %10s %11s %8s %6s %6s %10s %10s %7s %9s%s\n", r.shape.n, r.shape.devices,
                r.fits ? "yes" : "no", cell(r.ms_median, "%.3f").c_str(), cell(r.tflops_per_gpu, "%.1f").c_str(),
                cell(r.speedup, "%.2fx").c_str(), cell(r.ideal, "%.0fx").c_str(),
                cell(100 * r.efficiency, "%.0f%%").c_str(), cell(r.compute_ms, "%.3f").c_str(),
                cell(r.exchange_ms, "%.3f").c_str(), cell(100 * r.hidden, "%.0f%%").c_str(),
                cell(r.max_abs_error, "%.2g").c_str(), tail.c_str());
  }
}
#endif

int RunRingBench(const BenchOptions& o) {
  if (o.csv.empty()) throw UsageError("--csv FILE is required (the results, one row per N and P)");
  cuda::RingShape base;
  base.heads = o.heads_option && o.heads_option->count() > 0 ? o.heads : 32;
  base.d = o.d_option && o.d_option->count() > 0 ? o.d : 128;
  base.batch = o.batch.empty() ? 1 : ParsePositiveList(o.batch, "--batch", 65535).front();
  if (o.batch.find(',') != std::string::npos) throw UsageError("--batch: one batch size for --ring");
  const std::string dtype_name = o.dtype_option && o.dtype_option->count() > 0 ? o.dtype : "fp16";
  base.dtype = *cuda::ParseDType(dtype_name);
  base.causal = o.causal;
  base.zigzag = o.zigzag;
  const std::vector<int> ns =
      ParsePositiveList(o.n_option && o.n_option->count() > 0 ? o.n_list : "16384,32768,65536,131072", "--n", 1 << 24);
  std::optional<cuda::RingTransportKind> transport;
  if (!o.transport.empty() && !(transport = cuda::ParseRingTransport(o.transport)))
    throw UsageError("--transport " + o.transport + ": nccl or virtual");
  if (!(o.budget_gib >= 0) || !std::isfinite(o.budget_gib))
    throw UsageError(Sprintf("--budget-gib %g: a number of GiB (0: no budget)", o.budget_gib));
  std::vector<int> devices;
  if (!o.devices.empty()) {
    devices = ParsePositiveList(o.devices, "--devices", cuda::kMaxRingDevicesCuda);
    std::sort(devices.begin(), devices.end());
    devices.erase(std::unique(devices.begin(), devices.end()), devices.end());
  }
  {  // d, dtype, B·H: the same for every point, so a usage error before any GPU work
    cuda::RingShape check = base;
    check.n = 1 << 20;
    if (auto error = cuda::RingShapeError(check)) throw UsageError("--ring: " + *error);
  }
  if (o.repeats < 20) throw UsageError(Sprintf("--repeats %d: at least 20", o.repeats));
#ifndef FLASHVIZ_HAVE_CUDA
  throw InputError("bench runs the CUDA kernels: this flashviz was built without CUDA");
#else
  if (auto reason = cuda::CudaUnavailableReason()) throw InputError("bench --ring needs a CUDA GPU: " + *reason);
  const int gpus = cuda::RingGpuCount();
  std::string nccl_version;
  const std::optional<std::string> nccl_missing = cuda::NcclUnavailableReason(&nccl_version);
  if (!transport) {
    transport = gpus >= 2 && !nccl_missing ? cuda::RingTransportKind::kNccl : cuda::RingTransportKind::kVirtual;
    std::fprintf(stderr, "bench: --transport %s (%s)\n", std::string(cuda::RingTransportName(*transport)).c_str(),
                 *transport == cuda::RingTransportKind::kNccl
                     ? Sprintf("%d GPUs, NCCL %s", gpus, nccl_version.c_str()).c_str()
                 : gpus < 2 ? Sprintf("%d GPU: P virtual devices on it", gpus).c_str()
                            : ("NCCL is not usable: " + *nccl_missing).c_str());
  } else if (*transport == cuda::RingTransportKind::kNccl && nccl_missing) {
    throw InputError("--transport nccl: " + *nccl_missing);
  }
  const bool nccl = *transport == cuda::RingTransportKind::kNccl;
  if (devices.empty()) {
    devices = {1};
    for (int p = 2; p <= (nccl ? gpus : 4); p *= 2) devices.push_back(p);
  }
  CommandFiles files;
  OutputFile& csv = files.AddOutput(o.csv);
  const std::string gpu = cuda::DeviceName();
  const std::int64_t budget = static_cast<std::int64_t>(o.budget_gib * double(1LL << 30));
  std::fprintf(stderr, "bench: %s; ring attention, %zu points: B = %d, H = %d, d = %d, %s, %s%s, %s, budget %s\n",
               cuda::DeviceDescription().c_str(), ns.size() * devices.size(), base.batch, base.heads, base.d,
               dtype_name.c_str(), base.causal ? "causal" : "non-causal", base.zigzag ? " zigzag" : " contiguous",
               std::string(cuda::RingTransportName(*transport)).c_str(),
               budget > 0 ? Sprintf("%.3g GiB per GPU", o.budget_gib).c_str() : "none");
  std::vector<cuda::RingBenchRow> rows;
  bool all_good = true;
  const std::size_t total = ns.size() * devices.size();
  const auto started = std::chrono::steady_clock::now();
  std::size_t index = 0;
  bool stop = false;
  for (int n : ns) {
    if (stop) break;
    for (int p : devices) {
      ++index;
      cuda::RingBenchRow row;
      row.shape = base;
      row.shape.n = n;
      row.shape.devices = p;
      row.transport = cuda::RingTransportName(*transport);
      row.gpu = gpu;
      row.tolerance = cuda::RingTolerance(base.dtype);
      row.budget_bytes = budget;
      const double elapsed = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
      std::fprintf(
          stderr, "[%zu/%zu, %s%s] N=%d P=%d: ", index, total, HumanDuration(elapsed).c_str(),
          index > 1 ? Sprintf(", ~%s left", HumanDuration(elapsed / (index - 1) * (total - index + 1)).c_str()).c_str()
                    : "",
          n, p);
      std::fflush(stderr);
      if (auto error = cuda::RingShapeError(row.shape)) {
        row.status = "not applicable: " + *error;
      } else {
        row.device_bytes = cuda::RingMaxDeviceBytes(row.shape);
        row.fits = budget == 0 || row.device_bytes <= budget;
        if (!row.fits) {
          row.status = Sprintf("does not fit: %.2f GiB per device > budget %.3g GiB",
                               static_cast<double>(row.device_bytes) / double(1LL << 30), o.budget_gib);
        } else {
          cuda::RingMeasureOptions options;
          options.transport = *transport;
          options.repeats = o.repeats;
          options.warmup = o.warmup;
          options.seed = o.seed + index - 1;  // fresh inputs for every point
          const cuda::RingMeasurement m = cuda::MeasureRing(row.shape, options);
          row.max_abs_error = m.validated_rows > 0 ? m.max_abs_error : NAN;
          row.lse_max_error = m.validated_rows > 0 ? m.lse_max_error : NAN;
          if (m.Ok()) {
            row.ms_median = m.ms_median;
            row.ms_min = m.ms_min;
            row.tflops_per_gpu = m.tflops_per_gpu;
            row.compute_ms = m.compute_ms;
            row.exchange_ms = m.exchange_ms;
          } else {
            row.status = std::string(cuda::MeasureStatusName(m.status)) + ": " + m.reason;
            all_good &= m.status == cuda::MeasureStatus::kNotApplicable;
          }
        }
      }
      if (row.Ok())
        std::fprintf(stderr,
                     "%.3f ms median (min %.3f), %.1f TFLOP/s per GPU%s; compute alone %.3f ms, exchanges alone "
                     "%.3f ms; max |err| %.2g (≤ %.2g)\n",
                     row.ms_median, row.ms_min, row.tflops_per_gpu, base.causal ? " (causal: FLOPs halved)" : "",
                     row.compute_ms, row.exchange_ms, row.max_abs_error, row.tolerance);
      else
        std::fprintf(stderr, "%s\n", row.status.c_str());
      rows.push_back(row);
      if (cuda::CudaContextLost()) {
        std::fprintf(stderr, "bench: the CUDA context is lost; stopping after %zu of %zu points\n", index, total);
        stop = true;
        break;
      }
    }
  }
  cuda::ReleaseRingCommunicators();
  cuda::RingFillScaling(rows);
  csv.Write(cuda::RingCsvHeader());
  for (const cuda::RingBenchRow& row : rows) csv.Write(cuda::RingCsvLine(row));
  files.Commit();
  PrintRingSummary(rows);
  return all_good ? 0 : 1;
#endif
}

int RunBench(const BenchOptions& o) {
  if (!o.replot.empty()) return Replot(o);
  if (o.decode) return RunDecodeBench(o);
  if (o.ring) return RunRingBench(o);
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
  options->n_option =
      cmd->add_option("--n", options->n_list,
                      "sequence lengths N, separated by commas (default 512,1024,2048,4096,8192,16384; --ring: "
                      "16384,32768,65536,131072)");
  options->d_option =
      cmd->add_option("--d", options->d, "head dimension d (default 64; with --replot: draw only rows of this d)");
  cmd->add_option(
      "--batch", options->batch,
      "batch B (default: B·H = min(1024, 2^32/N²), as in docs/peers.md); --decode: a list (default 1,8,64)");
  options->heads_option = cmd->add_option("--heads", options->heads, "heads H (default 16; --decode: 32 query heads)");
  options->dtype_option =
      cmd->add_option("--dtype", options->dtype, "fp32 (the default), fp16 or bf16 (--decode: fp16)")
          ->check(CLI::IsMember({"fp32", "fp16", "bf16"}));
  cmd->add_flag("--decode", options->decode,
                "time decoding kernels instead (kernels/cuda/decode): R query rows per head against a KV cache");
  cmd->add_option("--kv-len", options->kv_len_list, "--decode: KV cache lengths N (default 4096,32768,131072)");
  cmd->add_option("--kv-heads", options->kv_heads, "--decode: KV heads G, dividing H (default 8)");
  cmd->add_option("--q-rows", options->q_rows, "--decode: query rows R per head (default 1)");
  cmd->add_option("--page", options->page, "--decode: page size P of flash_decode_paged's cache (default 64)");
  cmd->add_option("--splits", options->splits, "--decode: force flash_decode's split count (default 0: automatic)");
  cmd->add_flag("--ring", options->ring,
                "ring attention across this machine's GPUs instead (kernels/cuda/ring): scaling from 1 to P GPUs");
  cmd->add_option("--devices", options->devices,
                  "--ring: device counts P, separated by commas (default 1 and powers of two up to the GPUs; "
                  "virtual: 1,2,4)");
  cmd->add_flag("--zigzag", options->zigzag,
                "--ring: 2P chunks, device p holding p and 2P-1-p (balanced under --causal); default contiguous");
  cmd->add_option("--transport", options->transport,
                  "--ring: nccl (one thread per GPU) or virtual (P devices on one GPU, copies for NCCL); default "
                  "nccl when 2 GPUs and NCCL are there");
  cmd->add_option("--budget-gib", options->budget_gib,
                  "--ring: per-GPU memory budget in GiB; an (N, P) needing more per device is not run (default 0: "
                  "none)");
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
