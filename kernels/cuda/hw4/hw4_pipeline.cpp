// [SECTION] index
//   1. errors and availability      Hw4CudaUnavailableReason, one-line CUDA errors
//   2. buffers                      pinned host and device slots, streams, events (RAII)
//   3. the writer thread            waits for each chunk's copy out, hands it to the caller in order
//   4. the pipeline                 chunk plan, read → H2D → check + kernel → D2H per slot, stage timings
#include "kernels/cuda/hw4/hw4_pipeline.h"

#include <cuda_runtime.h>

#include <algorithm>
#include <array>
#include <chrono>
#include <condition_variable>
#include <exception>
#include <limits>
#include <mutex>
#include <stdexcept>
#include <thread>
#include <utility>
#include <vector>

#include "kernels/common/format.h"
#include "kernels/cuda/device_status.h"

namespace flashviz::cuda::hw4 {
namespace {

// [SECTION] 1. errors and availability

using Clock = std::chrono::steady_clock;
double Seconds(Clock::time_point since) { return std::chrono::duration<double>(Clock::now() - since).count(); }

[[noreturn]] void ThrowCuda(const std::string& what, cudaError_t error) {
  throw std::runtime_error(Sprintf("CUDA error %s: %s", what.c_str(), cudaGetErrorString(error)));
}
void Check(cudaError_t error, const char* what) {
  if (error != cudaSuccess) ThrowCuda(what, error);
}

}  // namespace

std::string Hw4CudaUnavailableReason() {
  if (std::string why = CudaDeviceUnavailableReason(); !why.empty()) return why;
  if (const cudaError_t probe = ProbeHw4KernelImage(); probe != cudaSuccess) return KernelImageUnavailableReason(probe);
  return "";
}

namespace {

// [SECTION] 2. buffers

struct Slot {
  float* in_host = nullptr;   // pinned: the file's bytes of one chunk
  float* out_host = nullptr;  // pinned: O of one chunk
  float* in_dev = nullptr;
  float* out_dev = nullptr;
  cudaStream_t stream = nullptr;
  cudaEvent_t start = nullptr, h2d_done = nullptr, kernel_done = nullptr, d2h_done = nullptr;
};

struct Buffers {
  std::vector<Slot> slots;
  unsigned long long* first_non_finite = nullptr;  // device
  cudaEvent_t base = nullptr;

  Buffers() = default;
  Buffers(const Buffers&) = delete;
  Buffers& operator=(const Buffers&) = delete;
  ~Buffers() {
    // Errors here are ignored: after a failed launch the context may refuse everything; the process exits.
    for (Slot& s : slots) {
      if (s.stream) cudaStreamSynchronize(s.stream);
      for (cudaEvent_t e : {s.start, s.h2d_done, s.kernel_done, s.d2h_done})
        if (e) cudaEventDestroy(e);
      if (s.stream) cudaStreamDestroy(s.stream);
      cudaFreeHost(s.in_host);
      cudaFreeHost(s.out_host);
      cudaFree(s.in_dev);
      cudaFree(s.out_dev);
    }
    if (base) cudaEventDestroy(base);
    cudaFree(first_non_finite);
    cudaGetLastError();
  }
};

std::string DeviceText(int device) {
  cudaDeviceProp prop{};
  Check(cudaGetDeviceProperties(&prop, device), "reading the device's properties");
  return Sprintf("%s, sm_%d%d, %d SMs", prop.name, prop.major, prop.minor, prop.multiProcessorCount);
}

void Allocate(Buffers& buffers, int slots, std::size_t in_bytes, std::size_t out_bytes, const std::string& device) {
  const auto out_of_memory = [&](const char* where, std::size_t bytes, cudaError_t error) {
    std::size_t free_bytes = 0, total_bytes = 0;
    cudaGetLastError();
    cudaMemGetInfo(&free_bytes, &total_bytes);
    throw std::runtime_error(Sprintf("CUDA error allocating %s of %s (%d chunk buffers) on %s (%s free): %s", where,
                                     HumanBytes(static_cast<double>(bytes)).c_str(), slots, device.c_str(),
                                     HumanBytes(static_cast<double>(free_bytes)).c_str(), cudaGetErrorString(error)));
  };
  buffers.slots.resize(static_cast<std::size_t>(slots));
  for (Slot& s : buffers.slots) {
    if (const cudaError_t e = cudaMalloc(&s.in_dev, in_bytes); e != cudaSuccess)
      out_of_memory("device memory", in_bytes, e);
    if (const cudaError_t e = cudaMalloc(&s.out_dev, out_bytes); e != cudaSuccess)
      out_of_memory("device memory", out_bytes, e);
    if (const cudaError_t e = cudaHostAlloc(&s.in_host, in_bytes, cudaHostAllocDefault); e != cudaSuccess)
      out_of_memory("pinned host memory", in_bytes, e);
    if (const cudaError_t e = cudaHostAlloc(&s.out_host, out_bytes, cudaHostAllocDefault); e != cudaSuccess)
      out_of_memory("pinned host memory", out_bytes, e);
    Check(cudaStreamCreateWithFlags(&s.stream, cudaStreamNonBlocking), "creating a stream");
    for (cudaEvent_t* e : {&s.start, &s.h2d_done, &s.kernel_done, &s.d2h_done})
      Check(cudaEventCreate(e), "creating an event");
  }
  Check(cudaMalloc(&buffers.first_non_finite, sizeof(unsigned long long)), "allocating the input check's flag");
  Check(cudaMemset(buffers.first_non_finite, 0xff, sizeof(unsigned long long)), "clearing the input check's flag");
  Check(cudaEventCreate(&buffers.base), "creating an event");
}

// Length of the union of intervals (seconds): the GPU time a stage kept busy across streams.
double UnionLength(std::vector<std::pair<double, double>> intervals) {
  std::sort(intervals.begin(), intervals.end());
  double total = 0, begin = 0, end = -1;
  for (const auto& [b, e] : intervals) {
    if (b > end) {
      if (end > begin) total += end - begin;
      begin = b;
      end = e;
    } else {
      end = std::max(end, e);
    }
  }
  if (end > begin) total += end - begin;
  return total;
}

// [SECTION] 3. the writer thread

// Chunks are handed over in order: `enqueued` counts chunks whose copy out is on a stream, `written` those the
// caller has received. The reader side waits for written ≥ c − slots + 1 before reusing chunk c's slot.
class ChunkWriter {
 public:
  ChunkWriter(Buffers& buffers, int chunks, std::int64_t batches_per_chunk, std::int64_t batches,
              std::size_t head_floats, const Hw4WriteChunk& write)
      : buffers_(buffers), chunks_(chunks), batches_per_chunk_(batches_per_chunk), batches_(batches),
        head_floats_(head_floats), write_(write), times_(static_cast<std::size_t>(chunks)) {
    thread_ = std::thread([this] { Run(); });
  }
  ChunkWriter(const ChunkWriter&) = delete;
  ChunkWriter& operator=(const ChunkWriter&) = delete;
  ~ChunkWriter() { Stop(); }

  void Enqueued(int chunk) {
    std::lock_guard lock(mutex_);
    enqueued_ = chunk + 1;
    changed_.notify_all();
  }
  // Blocks until `count` chunks are written or the writer failed (then rethrows its error).
  void WaitWritten(int count) {
    std::unique_lock lock(mutex_);
    changed_.wait(lock, [&] { return written_ >= count || error_; });
    if (error_) std::rethrow_exception(error_);
  }
  void Stop() {
    {
      std::lock_guard lock(mutex_);
      stop_ = true;
      changed_.notify_all();
    }
    if (thread_.joinable()) thread_.join();
  }
  double write_seconds() const { return write_s_; }
  // Per chunk: event times (ms after `base`) of start, H2D done, kernel done, D2H done.
  const std::vector<std::array<float, 4>>& times() const { return times_; }

 private:
  void Run() {
    try {
      for (int c = 0; c < chunks_; ++c) {
        {
          std::unique_lock lock(mutex_);
          changed_.wait(lock, [&] { return enqueued_ > c || stop_; });
          if (enqueued_ <= c) return;  // stopped before this chunk was enqueued
        }
        const Slot& s = buffers_.slots[static_cast<std::size_t>(c) % buffers_.slots.size()];
        Check(cudaEventSynchronize(s.d2h_done), "computing a chunk");
        const cudaEvent_t events[4] = {s.start, s.h2d_done, s.kernel_done, s.d2h_done};
        for (int e = 0; e < 4; ++e)
          Check(cudaEventElapsedTime(&times_[static_cast<std::size_t>(c)][static_cast<std::size_t>(e)], buffers_.base,
                                     events[e]),
                "timing a chunk");
        const std::int64_t first = static_cast<std::int64_t>(c) * batches_per_chunk_;
        const std::int64_t count = std::min(batches_per_chunk_, batches_ - first);
        const auto start = Clock::now();
        write_(s.out_host, static_cast<std::size_t>(count) * head_floats_);
        write_s_ += Seconds(start);
        std::lock_guard lock(mutex_);
        written_ = c + 1;
        changed_.notify_all();
      }
    } catch (...) {
      std::lock_guard lock(mutex_);
      error_ = std::current_exception();
      changed_.notify_all();
    }
  }

  Buffers& buffers_;
  const int chunks_;
  const std::int64_t batches_per_chunk_, batches_;
  const std::size_t head_floats_;
  const Hw4WriteChunk& write_;
  std::vector<std::array<float, 4>> times_;
  double write_s_ = 0;
  std::mutex mutex_;
  std::condition_variable changed_;
  int enqueued_ = 0, written_ = 0;
  bool stop_ = false;
  std::exception_ptr error_;
  std::thread thread_;
};

}  // namespace

// [SECTION] 4. the pipeline

Hw4PipelineReport RunHw4Pipeline(int b, int n, int d, float scale, const Hw4ReadChunk& read,
                                 const Hw4WriteChunk& write, const Hw4PipelineOptions& options) {
  Hw4PipelineReport report;
  report.flops = Hw4Flops(b, n, d);
  auto start = Clock::now();
  const std::string why = Hw4CudaUnavailableReason();  // also creates the context (the kernel-image probe)
  if (!why.empty()) throw std::runtime_error("--backend cuda: " + why);
  int device = 0;
  Check(cudaGetDevice(&device), "selecting the device");
  Check(cudaFree(nullptr), "creating the CUDA context");
  report.device = DeviceText(device);
  if (const auto reason = Hw4KernelNotApplicable(options.kernel, d))
    throw std::runtime_error("--kernel " + std::string(Hw4KernelInfoOf(options.kernel).id) + ": " + *reason);
  report.init_s = Seconds(start);

  // Chunk plan: whole batches, about an eighth of the input each (16–64 MiB), so the first read and the last
  // write — the parts nothing overlaps — stay short, while each kernel still fills the GPU.
  start = Clock::now();
  const std::size_t head_floats = static_cast<std::size_t>(n) * d;
  const std::size_t batch_in_bytes = 3 * head_floats * sizeof(float);
  const double total_in = static_cast<double>(batch_in_bytes) * b;
  std::int64_t target = options.chunk_bytes;
  if (target <= 0)
    target = static_cast<std::int64_t>(std::clamp(total_in / 8, 16.0 * (1 << 20), 64.0 * (1 << 20)));
  std::int64_t per_chunk = std::clamp<std::int64_t>(target / static_cast<std::int64_t>(batch_in_bytes), 1, b);
  const int streams = std::max(2, options.streams);
  // Keep the device buffers within 80% of free memory: fewer batches per chunk when they would not fit.
  std::size_t free_bytes = 0, total_bytes = 0;
  Check(cudaMemGetInfo(&free_bytes, &total_bytes), "reading free device memory");
  while (per_chunk > 1 && static_cast<double>(per_chunk) * batch_in_bytes * 4 / 3 * streams > 0.8 * free_bytes)
    per_chunk /= 2;
  const int chunks = static_cast<int>((b + per_chunk - 1) / per_chunk);
  const int slots = std::min(streams, chunks);
  report.chunks = chunks;
  report.batches_per_chunk = per_chunk;
  report.streams = slots;

  Buffers buffers;
  const std::size_t in_bytes = static_cast<std::size_t>(per_chunk) * batch_in_bytes;
  const std::size_t out_bytes = static_cast<std::size_t>(per_chunk) * head_floats * sizeof(float);
  Allocate(buffers, slots, in_bytes, out_bytes, report.device);
  Check(cudaEventRecord(buffers.base, buffers.slots[0].stream), "recording an event");
  report.alloc_s = Seconds(start);

  const auto pipeline_start = Clock::now();
  ChunkWriter writer(buffers, chunks, per_chunk, b, head_floats, write);
  for (int c = 0; c < chunks; ++c) {
    Slot& s = buffers.slots[static_cast<std::size_t>(c % slots)];
    writer.WaitWritten(c - slots + 1);  // chunk c − slots has left this slot (its copy in is long done too)
    const std::int64_t first = static_cast<std::int64_t>(c) * per_chunk;
    const std::int64_t count = std::min(per_chunk, static_cast<std::int64_t>(b) - first);
    const auto read_start = Clock::now();
    read(first, count, s.in_host);
    report.read_s += Seconds(read_start);

    const std::size_t floats = static_cast<std::size_t>(count) * 3 * head_floats;
    Check(cudaEventRecord(s.start, s.stream), "recording an event");
    Check(cudaMemcpyAsync(s.in_dev, s.in_host, floats * sizeof(float), cudaMemcpyHostToDevice, s.stream),
          "copying a chunk to the device");
    Check(cudaEventRecord(s.h2d_done, s.stream), "recording an event");
    Check(LaunchFirstNonFinite(s.in_dev, static_cast<std::int64_t>(floats),
                               static_cast<std::uint64_t>(first) * 3 * head_floats, buffers.first_non_finite,
                               s.stream),
          "launching the input check");
    Hw4Heads heads;
    heads.q = s.in_dev;
    heads.k = s.in_dev + head_floats;
    heads.v = s.in_dev + 2 * head_floats;
    heads.qkv_stride = static_cast<std::int64_t>(3 * head_floats);
    heads.o = s.out_dev;
    heads.o_stride = static_cast<std::int64_t>(head_floats);
    heads.heads = count;
    heads.n = n;
    heads.d = d;
    heads.scale = scale;
    Check(LaunchHw4Attention(options.kernel, heads, s.stream), "launching the attention kernel");
    Check(cudaEventRecord(s.kernel_done, s.stream), "recording an event");
    Check(cudaMemcpyAsync(s.out_host, s.out_dev, static_cast<std::size_t>(count) * head_floats * sizeof(float),
                          cudaMemcpyDeviceToHost, s.stream),
          "copying a chunk back");
    Check(cudaEventRecord(s.d2h_done, s.stream), "recording an event");
    writer.Enqueued(c);
  }
  writer.WaitWritten(chunks);
  writer.Stop();
  report.pipeline_s = Seconds(pipeline_start);
  report.write_s = writer.write_seconds();

  unsigned long long first_bad = 0;
  Check(cudaMemcpy(&first_bad, buffers.first_non_finite, sizeof first_bad, cudaMemcpyDeviceToHost),
        "reading the input check");
  if (first_bad != std::numeric_limits<unsigned long long>::max()) report.first_non_finite = first_bad;

  std::vector<std::pair<double, double>> h2d, kernel, d2h;
  for (const auto& t : writer.times()) {
    h2d.emplace_back(t[0] * 1e-3, t[1] * 1e-3);
    kernel.emplace_back(t[1] * 1e-3, t[2] * 1e-3);
    d2h.emplace_back(t[2] * 1e-3, t[3] * 1e-3);
  }
  report.h2d_s = UnionLength(h2d);
  report.kernel_s = UnionLength(kernel);
  report.d2h_s = UnionLength(d2h);
  return report;
}

}  // namespace flashviz::cuda::hw4
