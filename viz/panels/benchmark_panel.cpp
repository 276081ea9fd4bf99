// The benchmark panel: pick kernels, dtype, d, B·H and the N range; the sweep runs on a background thread
// (kernels/cuda/harness.h: each point validated against the float64 reference, then timed) while the UI stays
// responsive, with a progress bar; a live log-log plot of runtime against N (hover for values; the same plot
// code as `flashviz bench --png`), a speedup-versus-naive table, PyTorch's curves loaded from a CSV
// (scripts/peers.py), export to CSV and PNG. Without a GPU (or without CUDA in the build) it says why and still
// loads and plots CSVs.
//
// [SECTION] the sweep on a background thread
// [SECTION] the controls
// [SECTION] the speedup table
// [SECTION] the panel
#include <imgui.h>
#include <imgui_stdlib.h>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstdio>
#include <map>
#include <mutex>
#include <optional>
#include <span>
#include <thread>
#include <vector>

#include "kernels/common/files.h"
#include "kernels/common/format.h"
#include "kernels/cpu/problem.h"
#include "kernels/cuda/backward/backward_registry.h"
#include "kernels/cuda/bench_results.h"
#include "kernels/cuda/registry.h"
#include "viz/bench_plot.h"
#include "viz/embedded_files.h"
#include "viz/file_picker.h"
#include "viz/panels/benchmark_panel.h"
#include "viz/panels/panels.h"
#include "viz/theme.h"
#include "viz/widgets.h"
#ifdef FLASHVIZ_HAVE_CUDA
#include "kernels/cuda/backward/backward_harness.h"
#include "kernels/cuda/harness.h"
#endif

namespace flashviz {
namespace {

constexpr const char* kDTypeNames[] = {"fp32", "fp16", "bf16"};
constexpr const char* kProgression[] = {"naive",      "tiled",     "flash1",         "flash2_row", "flash2_warp",
                                        "flash2_wmma", "math",      "naive_bwd",      "flash2_bwd", "flash2_bwd_mma"};

// The pass's registry: the forward progression or the backward one.
std::span<const cuda::VariantInfo> CatalogueOf(bool backward) {
  return backward ? cuda::BackwardCatalogue() : cuda::Catalogue();
}

// ---------------------------------------------------------------------------------------------------------
// [SECTION] the sweep on a background thread
// ---------------------------------------------------------------------------------------------------------

// Why sweeps cannot run in this process, or nothing: asked once (it initializes the CUDA runtime, so that the
// runtime is set up before the runner below and torn down after it).
const std::optional<std::string>& RunUnavailableReason() {
  static const std::optional<std::string> reason = []() -> std::optional<std::string> {
#ifdef FLASHVIZ_HAVE_CUDA
    return cuda::CudaUnavailableReason();
#else
    return std::string("built without CUDA: sweeps are off; load CSVs to plot them");
#endif
  }();
  return reason;
}

// The rows on screen (ours: measured here or loaded; peers: loaded) and the sweep that adds to them.
class BenchmarkRunner {
 public:
  ~BenchmarkRunner() {
    cancel_ = true;
    if (thread_.joinable()) thread_.join();  // waits for the point in progress (seconds at most)
  }

  bool running() const { return running_; }
  void Cancel() { cancel_ = true; }

  // Starts `points` (of the backward registry when `backward`) on the background thread; the rows measured before
  // are replaced.
  void Start(std::vector<cuda::SweepPoint> points, cuda::SweepSpec spec, bool backward) {
    if (running_) return;
    if (thread_.joinable()) thread_.join();
    {
      std::lock_guard<std::mutex> lock(mutex_);
      ours_.clear();
      done_ = 0;
      total_ = points.size();
      current_.clear();
    }
    cancel_ = false;
    running_ = true;
    thread_ = std::thread([this, points = std::move(points), spec, backward] { Run(points, spec, backward); });
  }

  struct Snapshot {
    std::vector<cuda::BenchRow> ours, peers;
    std::size_t done = 0, total = 0;
    std::string current;
  };
  Snapshot Read() const {
    std::lock_guard<std::mutex> lock(mutex_);
    return {ours_, peers_, done_, total_, current_};
  }
  void SetOurs(std::vector<cuda::BenchRow> rows) {
    std::lock_guard<std::mutex> lock(mutex_);
    ours_ = std::move(rows);
  }
  void SetPeers(std::vector<cuda::BenchRow> rows) {
    std::lock_guard<std::mutex> lock(mutex_);
    peers_ = std::move(rows);
  }

 private:
  void Run([[maybe_unused]] const std::vector<cuda::SweepPoint>& points, [[maybe_unused]] const cuda::SweepSpec& spec,
           [[maybe_unused]] bool backward) {
#ifdef FLASHVIZ_HAVE_CUDA
    const std::string gpu = cuda::DeviceName();
    for (std::size_t index = 0; index < points.size() && !cancel_; ++index) {
      const cuda::SweepPoint& point = points[index];
      {
        std::lock_guard<std::mutex> lock(mutex_);
        current_ = Sprintf("%s N = %d", point.variant->id, point.shape.n);
      }
      cuda::MeasureOptions options;
      options.repeats = spec.repeats;
      options.warmup = spec.warmup;
      // The backward harness keeps one N's float64 reference for the variants after it: one seed per N.
      options.seed = backward ? spec.seed + static_cast<std::uint64_t>(point.shape.n) : spec.seed + index;
      const cuda::Measurement m = backward ? cuda::MeasureBackward(*point.variant, point.shape, spec.dtype, options)
                                           : cuda::MeasureVariant(*point.variant, point.shape, spec.dtype, options);
      cuda::BenchRow row = cuda::ToBenchRow(point, spec.dtype, m, gpu);
      std::lock_guard<std::mutex> lock(mutex_);
      ours_.push_back(std::move(row));
      done_ = index + 1;
      if (cuda::CudaContextLost()) break;
    }
#endif
    std::lock_guard<std::mutex> lock(mutex_);
    current_.clear();
    running_ = false;
  }

  mutable std::mutex mutex_;
  std::vector<cuda::BenchRow> ours_, peers_;
  std::size_t done_ = 0, total_ = 0;
  std::string current_;
  std::atomic<bool> running_{false}, cancel_{false};
  std::thread thread_;
};

BenchmarkRunner& Runner() {
  RunUnavailableReason();  // the CUDA runtime first (see there)
  static BenchmarkRunner runner;
  return runner;
}

bool KernelSelected(const BenchmarkPanelState& s, const char* id) {
  const auto it = s.kernels.find(id);
  if (it != s.kernels.end()) return it->second;
  return std::find_if(std::begin(kProgression), std::end(kProgression),
                      [&](const char* p) { return std::string_view(p) == id; }) != std::end(kProgression);
}

cuda::SweepSpec SpecFrom(const BenchmarkPanelState& s) {
  cuda::SweepSpec spec;
  for (const cuda::VariantInfo& v : CatalogueOf(s.backward))
    if (KernelSelected(s, v.id)) spec.kernels.push_back(v.id);
  for (int e = s.n_min_log2; e <= s.n_max_log2; ++e) spec.n_values.push_back(1 << e);
  spec.d = s.d;
  spec.dtype = static_cast<cuda::DType>(std::clamp(s.dtype, 0, 2));
  spec.causal = s.causal;
  spec.batch = s.auto_heads ? 0 : s.batch;
  spec.heads = s.auto_heads ? 16 : s.heads;
  spec.repeats = s.repeats;
  return spec;
}

// PyTorch's rows to draw beside ours: those of a (dtype, d, causal) that ours have, so that like is compared with
// like (a peers CSV holds every dtype and d; all of them on one plot buried the legend); all when ours are empty.
std::vector<cuda::BenchRow> PeersLike(const std::vector<cuda::BenchRow>& ours, const std::vector<cuda::BenchRow>& peers) {
  if (ours.empty()) return peers;
  std::vector<cuda::BenchRow> like;
  for (const cuda::BenchRow& peer : peers)
    for (const cuda::BenchRow& row : ours)
      if (row.dtype == peer.dtype && row.d == peer.d && row.causal == peer.causal) {
        like.push_back(peer);
        break;
      }
  return like;
}

// The measurements that ship inside flashviz, named as docs/results names them: ours (and a second file of ours
// beside it), PyTorch's, and the d and mask shown (one of each, so the plot stays readable).
struct ShippedSample {
  const char* run;
  const char* gpu;
  const char* ours;
  const char* ours_extra;  // "" when none
  const char* peers;
  int d;
  bool causal;
};
constexpr ShippedSample kForwardSample{"docs/results/2026-11-21-h200", "H200", "fp32_d64.csv", "fp32_d64_naive.csv",
                                       "peers.csv", 64, false};
constexpr ShippedSample kBackwardSample{"docs/results/2026-11-25-h100-backward-mma", "H100", "bwd_fp16.csv", "",
                                        "bwd_peers_fp16.csv", 64, false};
const ShippedSample& SampleOf(bool backward) { return backward ? kBackwardSample : kForwardSample; }

// `path`, or (empty) the shipped sample's file `file` (and `extra`), rows of the sample's d and mask only.
std::vector<cuda::BenchRow> LoadCsv(const std::string& path, std::string& message, const ShippedSample& sample,
                                    const char* file_name, const char* extra = "") {
  try {
    if (path.empty()) {
      std::vector<cuda::BenchRow> rows;
      for (const EmbeddedFile& file : EmbeddedSampleResults())
        if (file.name == file_name || (*extra && file.name == extra)) {
          for (cuda::BenchRow& row :
               cuda::ParseBenchCsv(file.text, std::string(sample.run) + "/" + std::string(file.name)))
            if (row.d == sample.d && row.causal == sample.causal) rows.push_back(std::move(row));
        }
      message = rows.empty() ? std::string("no shipped sample ") + file_name
                             : Sprintf("loaded %zu rows from %s/%s (%s, shipped with flashviz)", rows.size(),
                                       sample.run, file_name, sample.gpu);
      return rows;
    }
    std::vector<cuda::BenchRow> rows = cuda::ReadBenchCsv(path);
    message = Sprintf("loaded %zu rows from %s", rows.size(), path.c_str());
    return rows;
  } catch (const std::exception& e) {
    message = e.what();
    return {};
  }
}

// ---------------------------------------------------------------------------------------------------------
// [SECTION] the controls
// ---------------------------------------------------------------------------------------------------------

void DrawControls(BenchmarkPanelState& s, bool can_run, bool running) {
  const float fs = ImGui::GetFontSize();
  ImGui::BeginDisabled(running);
  int pass = s.backward ? 1 : 0;
  ImGui::RadioButton("forward", &pass, 0);
  ImGui::SameLine();
  ImGui::RadioButton("backward", &pass, 1);
  s.backward = pass == 1;
  ImGui::EndDisabled();
  ImGui::SameLine();
  HelpMarker("Which progression to time: the forward kernels (kernels/cuda/registry_rows.inc) or the backward ones "
             "(kernels/cuda/backward/backward_rows.inc: dQ, dK, dV from dO, with O and L from a forward pass that is "
             "not timed). Backward TFLOP/s count 2.5× the forward FLOPs, 10·B·H·N²·d (halved causal), as the "
             "FlashAttention papers do.");
  ImGui::SameLine();
  ImGui::TextUnformatted("Kernels");
  ImGui::SameLine();
  HelpMarker("The registry, in the order of the progression. A kernel that cannot run the chosen dtype or d gives a "
             "\"not applicable\" row with the reason, never a silent gap.");
  const ImGuiStyle& style = ImGui::GetStyle();
  for (const cuda::VariantInfo& v : CatalogueOf(s.backward)) {
    bool on = KernelSelected(s, v.id);
    ImGui::SameLine();
    // Onto the next line when the box and its name do not fit (in presentation mode they ran off the panel).
    WrapIfNoRoom(ImGui::GetFrameHeight() + style.ItemInnerSpacing.x + ImGui::CalcTextSize(v.id).x);
    if (ImGui::Checkbox(v.id, &on)) s.kernels[v.id] = on;
    if (ImGui::IsItemHovered())
      ImGui::SetTooltip("%s\n%s\ndtypes: %s; d: %s", v.name, v.teaches, cuda::DTypesText(v.dtypes).c_str(),
                        cuda::HeadDimsText(v).c_str());
  }
  ImGui::SetNextItemWidth(5 * fs);
  ImGui::Combo("dtype", &s.dtype, kDTypeNames, 3);
  ImGui::SameLine();
  ImGui::SetNextItemWidth(6 * fs);
  if (ImGui::InputInt("d", &s.d)) s.d = std::clamp(s.d, 1, kMaxHeadDim);
  ImGui::SameLine();
  ImGui::SetNextItemWidth(10 * fs);
  ImGui::SliderInt("##nmin", &s.n_min_log2, 4, 15, "N from %d", ImGuiSliderFlags_AlwaysClamp);
  if (ImGui::IsItemHovered()) ImGui::SetTooltip("N = %d", 1 << s.n_min_log2);
  ImGui::SameLine();
  ImGui::SetNextItemWidth(10 * fs);
  ImGui::SliderInt("##nmax", &s.n_max_log2, 4, 15, "to %d", ImGuiSliderFlags_AlwaysClamp);
  if (ImGui::IsItemHovered()) ImGui::SetTooltip("N = %d", 1 << s.n_max_log2);
  s.n_max_log2 = std::max(s.n_max_log2, s.n_min_log2);
  ImGui::SameLine();
  ImGui::Text("N = %d … %d", 1 << s.n_min_log2, 1 << s.n_max_log2);
  ImGui::Checkbox("B·H auto", &s.auto_heads);
  ImGui::SameLine();
  HelpMarker(
      "Auto: B·H = min(1024, 2³²/N²) with H = 16 (docs/peers.md's shapes), enough heads to fill the GPU at every N.");
  if (!s.auto_heads) {
    ImGui::SameLine();
    ImGui::SetNextItemWidth(6 * fs);
    if (ImGui::InputInt("B", &s.batch)) s.batch = std::clamp(s.batch, 1, 65535);
    ImGui::SameLine();
    ImGui::SetNextItemWidth(6 * fs);
    if (ImGui::InputInt("H", &s.heads)) s.heads = std::clamp(s.heads, 1, 65535);
  }
  ImGui::SameLine();
  ImGui::Checkbox("causal", &s.causal);
  ImGui::SameLine();
  ImGui::SetNextItemWidth(6 * fs);
  if (ImGui::InputInt("repeats", &s.repeats)) s.repeats = std::clamp(s.repeats, 20, 1000);
  ImGui::SameLine();
  HelpMarker(
      "Each point: fresh random inputs, the output poisoned with NaN, checked against the float64 reference, "
      "then 2 warm-ups and this many runs timed with CUDA events (L2 flushed before each); the median is plotted.");
  ImGui::SameLine();
  ImGui::BeginDisabled(!can_run || running);
  if (ImGui::Button("Run sweep")) s.run_requested = true;
  ImGui::EndDisabled();
  if (running) {
    ImGui::SameLine();
    if (ImGui::Button("Cancel")) Runner().Cancel();
  }
}

void DrawFiles(BenchmarkPanelState& s, const std::vector<cuda::BenchRow>& ours,
               const std::vector<cuda::BenchRow>& peers, const BenchPlotOptions& plot_options) {
  const float fs = ImGui::GetFontSize();
  const float field = std::max(12 * fs, ImGui::GetContentRegionAvail().x * 0.25f);
  const ShippedSample& sample = SampleOf(s.backward);
  const auto load_ours = [&] {
    std::vector<cuda::BenchRow> rows = LoadCsv(s.results_path, s.message, sample, sample.ours, sample.ours_extra);
    std::vector<cuda::BenchRow> mine;
    for (cuda::BenchRow& row : rows)
      if (row.kernel.rfind("torch_", 0) != 0) mine.push_back(std::move(row));
    if (!mine.empty() || s.message.rfind("loaded", 0) == 0) Runner().SetOurs(std::move(mine));
  };
  const auto load_peers = [&] {
    std::vector<cuda::BenchRow> rows = LoadCsv(s.peers_path, s.message, sample, sample.peers);
    if (s.message.rfind("loaded", 0) == 0) Runner().SetPeers(std::move(rows));
  };
  // Without a sweep of its own the plot starts with the measurements that ship with flashviz, the pass's own.
  const bool switched = s.samples_loaded && s.samples_backward != s.backward;
  if (!s.samples_loaded || switched) {
    s.samples_loaded = true;
    s.samples_backward = s.backward;
    if (switched || (ours.empty() && peers.empty() && s.results_path.empty() && s.peers_path.empty())) {
      s.results_path.clear();
      s.peers_path.clear();
      Runner().SetOurs({});
      load_ours();
      load_peers();
      s.message = s.backward ? "the shipped measurements: docs/results/2026-11-25-h100-backward-mma (H100), "
                               "flash2_bwd_mma fp16 d = 64 and PyTorch's backward on each backend; load CSVs of "
                               "your own, or run a sweep"
                             : "the shipped measurements: docs/results/2026-11-21-h200 (H200), fp32 d = 64 and "
                               "PyTorch's backends; load CSVs of your own, or run a sweep";
    }
  }
  const std::string hint = std::string(sample.run) + "/… (shipped)";
  ImGui::SetNextItemWidth(field);
  ImGui::InputTextWithHint("##results", hint.c_str(), &s.results_path);
  if (ImGui::IsItemHovered())
    MathTooltip(s.backward ? "A CSV of flashviz bench --pass backward; empty: the fp16, d = 64 sweep of "
                             "docs/results/2026-11-25-h100-backward-mma (an H100), which ships inside flashviz"
                           : "A CSV of flashviz bench; empty: the fp32, d = 64 sweep of docs/results/2026-11-21-h200 "
                             "(an H200), which ships inside flashviz");
  ImGui::SameLine();
  if (FilePickerButton("results-picker", &s.results_path, ".csv", "Choose a CSV of flashviz bench")) load_ours();
  ImGui::SameLine();
  if (ImGui::Button("Load results CSV")) load_ours();
  ImGui::SameLine();
  // The PyTorch field, its picker and its button go to the next line together when they do not fit.
  const ImGuiStyle& style = ImGui::GetStyle();
  WrapIfNoRoom(field + ImGui::GetFrameHeight() + ImGui::CalcTextSize("Load PyTorch CSV").x + 2 * style.FramePadding.x +
               3 * style.ItemSpacing.x);
  ImGui::SetNextItemWidth(field);
  ImGui::InputTextWithHint("##peers", hint.c_str(), &s.peers_path);
  if (ImGui::IsItemHovered())
    MathTooltip(s.backward ? "A CSV of scripts/peers.py --pass backward (PyTorch's backward on each backend); "
                             "empty: the one of docs/results/2026-11-25-h100-backward-mma, which ships inside flashviz"
                           : "A CSV of scripts/peers.py (PyTorch's backends); empty: the one of "
                             "docs/results/2026-11-21-h200, which ships inside flashviz");
  ImGui::SameLine();
  if (FilePickerButton("peers-picker", &s.peers_path, ".csv", "Choose a CSV of scripts/peers.py")) load_peers();
  ImGui::SameLine();
  if (ImGui::Button("Load PyTorch CSV")) load_peers();
  const float check_w = ImGui::GetFrameHeight() + ImGui::GetStyle().ItemInnerSpacing.x;
  ImGui::SameLine();
  WrapIfNoRoom(check_w + ImGui::CalcTextSize("show PyTorch").x);
  ImGui::Checkbox("show PyTorch", &s.show_peers);
  ImGui::SameLine();
  WrapIfNoRoom(check_w + ImGui::CalcTextSize("TFLOP/s").x);
  ImGui::Checkbox("TFLOP/s", &s.y_tflops);

  ImGui::SetNextItemWidth(field);
  ImGui::InputText("##csv-out", &s.export_csv_path);
  ImGui::SameLine();
  if (ImGui::Button("Export CSV")) {
    std::string csv = cuda::BenchCsvHeader();
    for (const cuda::BenchRow& row : ours) csv += cuda::BenchCsvLine(row);
    try {
      WriteWholeFile(s.export_csv_path, csv);  // whole or not at all (kernels/common/files.h)
      s.message = Sprintf("wrote %zu rows to %s", ours.size(), s.export_csv_path.c_str());
    } catch (const InputError& e) {
      s.message = e.what();
    }
  }
  ImGui::SameLine();
  ImGui::SetNextItemWidth(field);
  ImGui::InputText("##png-out", &s.export_png_path);
  ImGui::SameLine();
  if (ImGui::Button("Export PNG")) {
    std::vector<cuda::BenchRow> all = ours;
    if (s.show_peers) {
      const std::vector<cuda::BenchRow> like = PeersLike(ours, peers);
      all.insert(all.end(), like.begin(), like.end());
    }
    std::string error;
    s.message = RenderBenchPng(all, plot_options, s.export_png_path, &error) ? "wrote " + s.export_png_path : error;
  }
}

// ---------------------------------------------------------------------------------------------------------
// [SECTION] the speedup table
// ---------------------------------------------------------------------------------------------------------

// naive's (naive_bwd's) median over each kernel's, per N (same d): how far each step has come. naive runs fp32,
// so half-type rows are compared with naive's fp32 at the same shape.
void DrawSpeedupTable(const std::vector<cuda::BenchRow>& rows, bool backward) {
  const std::string baseline = backward ? "naive_bwd" : "naive";
  std::map<std::pair<int, int>, double> naive_ms;  // (d, N)
  std::vector<int> ns;
  std::vector<std::string> kernels;
  for (const cuda::BenchRow& r : rows) {
    if (!r.Ok()) continue;
    if (r.kernel == baseline && r.dtype == "fp32") naive_ms[{r.d, r.n}] = r.ms_median;
    if (std::find(ns.begin(), ns.end(), r.n) == ns.end()) ns.push_back(r.n);
    const std::string label = r.kernel + " " + r.dtype;
    if (std::find(kernels.begin(), kernels.end(), label) == kernels.end()) kernels.push_back(label);
  }
  std::sort(ns.begin(), ns.end());
  SectionTitle(("Speedup versus " + baseline).c_str(),
               (baseline + "'s median time over each kernel's at the same N and d (it runs fp32).").c_str());
  if (naive_ms.empty() || ns.empty()) {
    ImGui::TextDisabled("include %s in a sweep (or a loaded CSV) to see speedups", baseline.c_str());
    return;
  }
  if (!ImGui::BeginTable("##speedup", static_cast<int>(ns.size()) + 1,
                         ImGuiTableFlags_Borders | ImGuiTableFlags_SizingFixedFit | ImGuiTableFlags_ScrollX))
    return;
  ImGui::TableSetupColumn("kernel");
  for (int n : ns) ImGui::TableSetupColumn(Sprintf("N = %d", n).c_str());
  ImGui::TableHeadersRow();
  for (const std::string& label : kernels) {
    ImGui::TableNextRow();
    ImGui::TableNextColumn();
    ImGui::TextUnformatted(label.c_str());
    for (int n : ns) {
      ImGui::TableNextColumn();
      const cuda::BenchRow* row = nullptr;
      for (const cuda::BenchRow& r : rows)
        if (r.Ok() && r.n == n && r.kernel + " " + r.dtype == label) row = &r;
      const auto naive = row ? naive_ms.find({row->d, n}) : naive_ms.end();
      if (row && naive != naive_ms.end())
        ImGui::Text("%.1f×", naive->second / row->ms_median);
      else
        ImGui::TextDisabled("–");
    }
  }
  ImGui::EndTable();
}

}  // namespace

// ---------------------------------------------------------------------------------------------------------
// [SECTION] the panel
// ---------------------------------------------------------------------------------------------------------

BenchmarkProgress CurrentBenchmarkProgress() {
  const BenchmarkRunner& runner = Runner();
  const BenchmarkRunner::Snapshot snap = runner.Read();
  BenchmarkProgress progress;
  progress.running = runner.running();
  progress.done = snap.done;
  progress.total = snap.total;
  for (const cuda::BenchRow& row : snap.ours) ++(row.Ok() ? progress.measured : progress.not_run);
  return progress;
}

void DrawBenchmarkPanel(const Model& model, UiState& ui) {
  BenchmarkPanelState& s = BenchmarkState(ui);
  if (!s.pass_set) {  // opened while stepping through the backward pass: its kernels
    s.pass_set = true;
    s.backward = model.has_problem() && model.problem().backward();
  }
  const Palette& pal = GetPalette();
  const std::optional<std::string>& unavailable = RunUnavailableReason();
  BenchmarkRunner& runner = Runner();
  if (s.run_requested) {  // the Run button, or a test
    s.run_requested = false;
    if (unavailable) {
      s.message = *unavailable;
    } else if (!runner.running()) {
      try {
        const cuda::SweepSpec spec = SpecFrom(s);
        runner.Start(s.backward ? cuda::BackwardSweepPoints(spec) : cuda::SweepPoints(spec), spec, s.backward);
        s.message = cuda::DescribeSweep(spec, spec.kernels.size() * spec.n_values.size());
      } catch (const std::exception& e) {
        s.message = e.what();
      }
    }
  }
  const bool running = runner.running();
  const BenchmarkRunner::Snapshot snap = runner.Read();

#ifdef FLASHVIZ_HAVE_CUDA
  if (!unavailable)
    ImGui::TextColored(ImGui::ColorConvertU32ToFloat4(pal.good), "%s", cuda::DeviceDescription().c_str());
#endif
  if (unavailable) ImGui::TextColored(ImGui::ColorConvertU32ToFloat4(pal.warn), "%s", unavailable->c_str());
  DrawControls(s, !unavailable, running);
  if (running || snap.total > 0) {
    const float fraction = snap.total ? static_cast<float>(snap.done) / static_cast<float>(snap.total) : 0.0f;
    const std::string label = running ? Sprintf("%zu / %zu: %s", snap.done, snap.total, snap.current.c_str())
                                      : Sprintf("%zu / %zu points", snap.done, snap.total);
    ImGui::ProgressBar(fraction, ImVec2(-1, 0), label.c_str());
  }
  BenchPlotOptions plot_options;
  plot_options.tflops = s.y_tflops;
  plot_options.title = std::string(s.backward ? "Backward pass: " : "") +
                       (s.y_tflops ? "TFLOP/s against N" : "Runtime against N (log-log)");
  DrawFiles(s, snap.ours, snap.peers, plot_options);
  if (!s.message.empty()) {
    ImGui::PushTextWrapPos(0);
    ImGui::TextColored(ImGui::ColorConvertU32ToFloat4(pal.dim), "%s", s.message.c_str());
    ImGui::PopTextWrapPos();
  }
  for (const cuda::BenchRow& row : snap.ours)  // what did not run, and why: said, not hidden
    if (!row.Ok())
      ImGui::TextColored(ImGui::ColorConvertU32ToFloat4(pal.warn), "%s N = %d: %s", row.kernel.c_str(), row.n,
                         row.status.c_str());

  std::vector<cuda::BenchRow> plotted = snap.ours;
  if (s.show_peers) {
    const std::vector<cuda::BenchRow> like = PeersLike(snap.ours, snap.peers);
    plotted.insert(plotted.end(), like.begin(), like.end());
  }
  const float table_h = 7.5f * ImGui::GetTextLineHeightWithSpacing();
  const ImVec2 avail = ImGui::GetContentRegionAvail();
  Plot("##benchmark", ImVec2(avail.x, std::max(10 * ImGui::GetFontSize(), avail.y - table_h)),
       BenchPlotSpec(plotted, plot_options));
  DrawSpeedupTable(snap.ours, s.backward);
}

}  // namespace flashviz
