// flashviz hw4 INPUT OUTPUT [--backend auto|cpu|cuda] [--kernel ID] [--threads T] [--verbose]
// The course assignment's program: read the HW4 file, write O = softmax(QKᵀ/√d)V for every batch.
//
// [SECTION] index
//   1. options and backend choice   auto = CUDA when it can run here (CudaUnavailableReason says why not)
//   2. overflow                     batches whose float32 scores overflowed, computed again in float64
//   3. the CPU backend              read whole, FastAttentionBatched, write once
//   4. the CUDA backend             the file streamed in chunks of batches through kernels/cuda/hw4's pipeline:
//                                   parallel pread into pinned buffers, output appended to the output file
#include <CLI/CLI.hpp>
#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <memory>
#include <thread>
#include <vector>

#include "app/cli/commands.h"
#include "app/cli/progress.h"
#include "app/io/hw4_file.h"
#include "kernels/common/files.h"
#include "kernels/common/format.h"
#include "kernels/common/parallel.h"
#include "kernels/cpu/fast_attention.h"
#include "kernels/cpu/reference.h"
#ifdef FLASHVIZ_HAVE_CUDA
#include "kernels/cuda/hw4/hw4_pipeline.h"
#endif

namespace flashviz {
namespace {

// [SECTION] 1. options and backend choice

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
#ifdef FLASHVIZ_HAVE_CUDA
  return cuda::hw4::Hw4CudaUnavailableReason();
#else
  return "this flashviz was built without CUDA";
#endif
}

// [SECTION] 2. overflow

// The exponent bits all ones is inf or NaN: one pass the compiler vectorizes.
bool AllFinite(const float* values, std::size_t count) {
  std::uint32_t any = 0;
  for (std::size_t k = 0; k < count; ++k) {
    std::uint32_t bits;
    std::memcpy(&bits, values + k, sizeof bits);
    any |= static_cast<std::uint32_t>((bits & 0x7f800000u) == 0x7f800000u);
  }
  return any == 0;
}

// Every output row is a weighted average of V's rows, so finite inputs always have a finite result: a non-finite
// value in a batch's output means its float32 scores overflowed (|Q|·|K| near 1e38). Such a batch is computed
// again in float64, where no float32 input can overflow, and rounded to float32.
class OverflowRepair {
 public:
  OverflowRepair(int n, int d)
      : n_(n), d_(d), head_floats_(static_cast<std::size_t>(n) * static_cast<std::size_t>(d)) {}

  // `out` holds the results of batches [first, first + count); `qkv_of(batch)` gives a batch's Q, K, V.
  void Repair(float* out, std::int64_t first, std::int64_t count,
              const std::function<const float*(std::int64_t)>& qkv_of) {
    for (std::int64_t b = 0; b < count; ++b) {
      float* o = out + static_cast<std::size_t>(b) * head_floats_;
      if (AllFinite(o, head_floats_)) continue;
      const float* q = qkv_of(first + b);
      const double scale = 1.0 / std::sqrt(static_cast<double>(d_));
      const std::vector<double> exact =
          ReferenceAttention(q, q + head_floats_, q + 2 * head_floats_, n_, d_, scale, false);
      std::copy(exact.begin(), exact.end(), o);
      if (repaired_++ == 0) first_repaired_ = first + b;
    }
  }
  // One line for stderr, or empty when nothing overflowed.
  std::string Notice(std::int64_t batches) const {
    if (repaired_ == 0) return {};
    return Sprintf("hw4: %lld of %lld batches overflowed float32 (the first: batch %lld); computed in float64 instead",
                   static_cast<long long>(repaired_), static_cast<long long>(batches),
                   static_cast<long long>(first_repaired_));
  }

 private:
  int n_, d_;
  std::size_t head_floats_;
  std::int64_t repaired_ = 0, first_repaired_ = 0;
};

// [SECTION] 3. the CPU backend

int RunHw4Cpu(const Hw4Options& o, const Clock::time_point start) {
  CommandFiles files;
  files.AddInput(o.input);
  OutputFile& out = files.AddOutput(o.output);
  const auto read_start = Clock::now();
  const Hw4Input in = ReadHw4File(o.input);
  const double read_s = Seconds(read_start);

  std::vector<float> result(in.qkv.size() / 3);
  const auto compute_start = Clock::now();
  const float scale = static_cast<float>(1.0 / std::sqrt(static_cast<double>(in.d)));
  {
    ProgressLine progress_line("hw4", "", 1000);  // silent unless the work takes over a second
    FastAttentionBatched(in.qkv.data(), in.b, in.n, in.d, scale, false, result.data(), o.threads,
                         [&](double fraction) { progress_line.UpdateFraction(fraction); });
    progress_line.Finish();
  }
  OverflowRepair overflow(in.n, in.d);
  overflow.Repair(result.data(), 0, in.b, [&](std::int64_t b) { return in.q(static_cast<int>(b)); });
  const double compute_s = Seconds(compute_start);

  const auto write_start = Clock::now();
  out.Write(result.data(), result.size() * sizeof(float));
  files.Commit();
  if (const std::string notice = overflow.Notice(in.b); !notice.empty()) std::fprintf(stderr, "%s\n", notice.c_str());
  const double write_s = Seconds(write_start);
  if (o.verbose) {
    const double flops = 4.0 * in.b * static_cast<double>(in.n) * in.n * in.d;
    std::fprintf(stderr,
                 "hw4: B = %d, N = %d, d = %d, backend cpu (%s, %d threads)\n"
                 "hw4: read %.3f s, compute %.3f s (%.1f GFLOP/s), write %.3f s, total %.3f s\n",
                 in.b, in.n, in.d, std::string(FastAttentionIsa()).c_str(),
                 o.threads > 0 ? o.threads : HardwareThreads(), read_s, compute_s, flops / compute_s * 1e-9, write_s,
                 Seconds(start));
  }
  return 0;
}

// [SECTION] 4. the CUDA backend

#ifdef FLASHVIZ_HAVE_CUDA

// The input file, read with pread from several threads at once: from the page cache one thread copies a few
// GB/s, and from a cold disk several requests in flight read faster than one.
class ParallelReader {
 public:
  explicit ParallelReader(const std::string& path) : file_(path) {
    ::posix_fadvise(file_.fd(), 0, 0, POSIX_FADV_SEQUENTIAL);
    // Ask the kernel to start reading the whole file now, while the CUDA context is being created.
    readahead_ = std::thread([fd = file_.fd()] { ::posix_fadvise(fd, 0, 0, POSIX_FADV_WILLNEED); });
  }
  ParallelReader(const ParallelReader&) = delete;
  ParallelReader& operator=(const ParallelReader&) = delete;
  ~ParallelReader() {
    if (readahead_.joinable()) readahead_.join();
  }

  void Read(void* dst, std::size_t bytes, std::int64_t offset) const {
    constexpr std::size_t kPiece = 8u << 20;
    const int pieces = static_cast<int>(std::clamp<std::size_t>(bytes / kPiece, 1, 4));
    const std::size_t per_piece = (bytes / static_cast<std::size_t>(pieces) + 4095) & ~std::size_t{4095};
    ParallelFor(pieces, pieces, [&](std::int64_t piece, int) {
      const std::size_t begin = std::min(bytes, static_cast<std::size_t>(piece) * per_piece);
      const std::size_t end = std::min(bytes, begin + per_piece);
      file_.ReadAt(static_cast<char*>(dst) + begin, end - begin, offset + static_cast<std::int64_t>(begin));
    });
  }

 private:
  InputFile file_;
  std::thread readahead_;
};

cuda::hw4::Hw4Kernel ChooseKernel(const std::string& id, int d) {
  if (id.empty() || id == "auto") return cuda::hw4::DefaultHw4Kernel(d);
  const auto kernel = cuda::hw4::ParseHw4Kernel(id);
  if (!kernel) throw UsageError(Sprintf("--kernel %s: not an hw4 kernel; one of auto, %s", id.c_str(),
                                        cuda::hw4::Hw4KernelIdList().c_str()));
  return *kernel;
}

// `probe_s`: the time CudaUnavailableReason took, which created the CUDA context.
int RunHw4Cuda(const Hw4Options& o, const Hw4Input& header, const Clock::time_point start, double probe_s) {
  namespace hw4 = cuda::hw4;
  hw4::Hw4PipelineOptions options;
  options.kernel = ChooseKernel(o.kernel, header.d);
  if (const auto why = hw4::Hw4KernelNotApplicable(options.kernel, header.d))
    throw InputError(Sprintf("--kernel %s: %s", hw4::Hw4KernelInfoOf(options.kernel).id, why->c_str()));

  CommandFiles files;
  files.AddInput(o.input);
  OutputFile& out = files.AddOutput(o.output);
  const ParallelReader file(o.input);
  constexpr std::int64_t kHeaderBytes = 12;
  const std::size_t head_floats = static_cast<std::size_t>(header.n) * static_cast<std::size_t>(header.d);
  const std::size_t batch_bytes = 3 * head_floats * sizeof(float);
  const auto read = [&](std::int64_t first_batch, std::int64_t batches, float* dst) {
    file.Read(dst, static_cast<std::size_t>(batches) * batch_bytes,
              kHeaderBytes + first_batch * static_cast<std::int64_t>(batch_bytes));
  };
  OverflowRepair overflow(header.n, header.d);
  std::int64_t batches_written = 0;
  std::vector<float> repaired, batch_qkv;  // allocated only when a batch overflows
  const auto write = [&](const float* src, std::size_t floats) {  // on the pipeline's writer thread
    const auto batches = static_cast<std::int64_t>(floats / head_floats);
    const float* data = src;
    if (!AllFinite(src, floats)) {  // copied only then: the common case writes the pinned buffer as it is
      repaired.assign(src, src + floats);
      overflow.Repair(repaired.data(), batches_written, batches, [&](std::int64_t b) {
        batch_qkv.resize(3 * head_floats);
        read(b, 1, batch_qkv.data());
        return static_cast<const float*>(batch_qkv.data());
      });
      data = repaired.data();
    }
    out.Write(data, floats * sizeof(float));
    batches_written += batches;
  };
  const float scale = static_cast<float>(1.0 / std::sqrt(static_cast<double>(header.d)));

  hw4::Hw4PipelineReport report;
  try {
    report = hw4::RunHw4Pipeline(header.b, header.n, header.d, scale, read, write, options);
  } catch (const InputError&) {
    throw;
  } catch (const std::runtime_error& e) {
    throw InputError(e.what());  // a CUDA error: one line, and `out` discards the partial output
  }
  if (report.first_non_finite) {
    float value = 0;
    file.Read(&value, sizeof value, kHeaderBytes + static_cast<std::int64_t>(*report.first_non_finite * sizeof(float)));
    throw InputError(NonFiniteValueMessage(o.input, header.n, header.d, *report.first_non_finite, value));
  }
  const auto commit_start = Clock::now();
  files.Commit();
  const double commit_s = Seconds(commit_start);
  if (const std::string notice = overflow.Notice(header.b); !notice.empty())
    std::fprintf(stderr, "%s\n", notice.c_str());
  if (o.verbose) {
    const double total_s = Seconds(start);
    std::fprintf(
        stderr,
        "hw4: B = %d, N = %d, d = %d, backend cuda, kernel %s on %s\n"
        "hw4: %d chunks of %lld batches on %d streams\n"
        "hw4: CUDA context %.3f s, buffers %.3f s; busy: read %.3f s, H2D %.3f s, kernel %.3f s (%.1f TFLOP/s), "
        "D2H %.3f s, write %.3f s, overlapped in %.3f s; commit %.3f s\n"
        "hw4: total %.3f s (%.1f TFLOP/s end to end)\n",
        header.b, header.n, header.d, hw4::Hw4KernelInfoOf(options.kernel).id, report.device.c_str(), report.chunks,
        static_cast<long long>(report.batches_per_chunk), report.streams, probe_s + report.init_s, report.alloc_s,
        report.read_s, report.h2d_s, report.kernel_s, report.flops / std::max(report.kernel_s, 1e-9) * 1e-12,
        report.d2h_s, report.write_s, report.pipeline_s, commit_s, total_s, report.flops / total_s * 1e-12);
  }
  return 0;
}

#endif  // FLASHVIZ_HAVE_CUDA

int RunHw4(const Hw4Options& o) {
  const auto start = Clock::now();
  const Hw4Input header = ReadHw4Header(o.input);  // every size check before any output is opened
  std::string backend = o.backend;
  [[maybe_unused]] double probe_s = 0;  // read by the CUDA backend only
  if (backend == "cuda" || backend == "auto") {
    const auto probe_start = Clock::now();
    const std::string why = CudaUnavailableReason();
    probe_s = Seconds(probe_start);
    if (!why.empty()) {
      if (backend == "cuda") throw InputError("--backend cuda: " + why);
      std::fprintf(stderr, "hw4: %s; using the CPU backend\n", why.c_str());
      backend = "cpu";
    } else {
      backend = "cuda";
    }
  }
  if (backend == "cpu" && !o.kernel.empty())
    throw UsageError("--kernel chooses a CUDA kernel; the CPU backend has one");
#ifdef FLASHVIZ_HAVE_CUDA
  if (backend == "cuda") return RunHw4Cuda(o, header, start, probe_s);
#endif
  return RunHw4Cpu(o, start);
}

}  // namespace

void AddHw4Command(CLI::App& app, CommandList& commands) {
  auto options = std::make_shared<Hw4Options>();
  CLI::App* cmd = app.add_subcommand("hw4", "Run the assignment: INPUT (B, N, d, Q, K, V) -> OUTPUT (B·N·d float32)");
  cmd->add_option("INPUT", options->input, "HW4 input file")->required();
  cmd->add_option("OUTPUT", options->output, "output file (written whole or not at all)")->required();
  cmd->add_option("--backend", options->backend, "auto (the default: CUDA when a GPU is there), cpu or cuda")
      ->check(CLI::IsMember({"auto", "cpu", "cuda"}));
  cmd->add_option("--kernel", options->kernel,
                  "the CUDA kernel: auto (chosen by measurement for d), tf32x3, fp32-simt or fp32-general");
  cmd->add_option("--threads", options->threads, "CPU threads (default: all)");
  cmd->add_flag("--verbose", options->verbose,
                "print the time split and the throughput (progress on stderr, with the time left: one line "
                "rewritten on a terminal; elsewhere one per tenth of the work, and at least one every 30 s)");
  commands.push_back({cmd, [options] { return RunHw4(*options); }});
}

}  // namespace flashviz
