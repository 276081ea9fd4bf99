// flashviz hw4 INPUT OUTPUT [--backend auto|cpu|cuda] [--kernel ID] [--verbose]
// The course assignment's program: read the HW4 file, write O = softmax(QKᵀ/√d)V for every batch.
#include <CLI/CLI.hpp>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <memory>

#include "app/cli/commands.h"
#include "app/io/atomic_file.h"
#include "app/io/hw4_file.h"
#include "kernels/common/format.h"
#include "kernels/common/parallel.h"
#include "kernels/cpu/fast_attention.h"

namespace flashviz {
namespace {

struct Hw4Options {
  std::string input, output;
  std::string backend = "auto";
  std::string kernel;
  bool verbose = false;
  int threads = 0;
};

using Clock = std::chrono::steady_clock;
double Seconds(Clock::time_point since) { return std::chrono::duration<double>(Clock::now() - since).count(); }

// Why the CUDA backend cannot run here, or an empty string when it can.
std::string CudaUnavailableReason() {
  return "this flashviz was built without CUDA";
}

int RunHw4(const Hw4Options& o) {
  const auto start = Clock::now();
  ReadHw4Header(o.input);  // every size check before any output is opened
  std::string backend = o.backend;
  if (backend == "cuda" || backend == "auto") {
    const std::string why = CudaUnavailableReason();
    if (!why.empty()) {
      if (backend == "cuda") throw InputError("--backend cuda: " + why);
      std::fprintf(stderr, "hw4: %s; using the CPU backend\n", why.c_str());
      backend = "cpu";
    }
  }
  if (backend == "cpu" && !o.kernel.empty()) throw InputError("--kernel chooses a CUDA kernel; the CPU backend has one");

  AtomicFileWriter out(o.output);
  const auto read_start = Clock::now();
  const Hw4Input in = ReadHw4File(o.input);
  const double read_s = Seconds(read_start);

  std::vector<float> result(in.qkv.size() / 3);
  const auto compute_start = Clock::now();
  const float scale = static_cast<float>(1.0 / std::sqrt(static_cast<double>(in.d)));
  const bool show_progress = o.verbose || 4.0 * in.b * in.n * static_cast<double>(in.n) * in.d > 2e11;
  ProgressCallback progress;
  if (show_progress)
    progress = [](double fraction) { std::fprintf(stderr, "\rhw4: %3.0f%%", 100.0 * fraction); };
  FastAttentionBatched(in.qkv.data(), in.b, in.n, in.d, scale, false, result.data(), o.threads, progress);
  if (show_progress) std::fprintf(stderr, "\n");
  const double compute_s = Seconds(compute_start);

  const auto write_start = Clock::now();
  out.Write(result.data(), result.size() * sizeof(float));
  out.Commit();
  const double write_s = Seconds(write_start);
  if (o.verbose) {
    const double flops = 4.0 * in.b * static_cast<double>(in.n) * in.n * in.d;
    std::fprintf(stderr,
                 "hw4: B = %d, N = %d, d = %d, backend cpu (%s, %d threads)\n"
                 "hw4: read %.3f s, compute %.3f s (%.1f GFLOP/s), write %.3f s, total %.3f s\n",
                 in.b, in.n, in.d, std::string(FastAttentionIsa()).c_str(), o.threads > 0 ? o.threads : HardwareThreads(),
                 read_s, compute_s, flops / compute_s * 1e-9, write_s, Seconds(start));
  }
  return 0;
}

}  // namespace

void AddHw4Command(CLI::App& app, CommandList& commands) {
  auto options = std::make_shared<Hw4Options>();
  CLI::App* cmd = app.add_subcommand("hw4", "Run the assignment: INPUT (B, N, d, Q, K, V) -> OUTPUT (B·N·d float32)");
  cmd->add_option("INPUT", options->input, "HW4 input file")->required();
  cmd->add_option("OUTPUT", options->output, "output file (written whole or not at all)")->required();
  cmd->add_option("--backend", options->backend, "auto (CUDA when a GPU is there), cpu or cuda")
      ->check(CLI::IsMember({"auto", "cpu", "cuda"}));
  cmd->add_option("--kernel", options->kernel, "the CUDA kernel to use (see `flashviz kernels`)");
  cmd->add_option("--threads", options->threads, "CPU threads (default: all)");
  cmd->add_flag("--verbose", options->verbose, "print the time split and the throughput");
  commands.push_back({cmd, [options] { return RunHw4(*options); }});
}

}  // namespace flashviz
