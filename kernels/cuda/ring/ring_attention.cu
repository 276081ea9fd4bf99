// The ring on real GPUs: P devices (GPUs with NCCL, or virtual devices on one GPU), their buffers and streams, the
// ring's schedule of kernels and exchanges, validation against the float64 reference, and the timing.
// ring_attention.h says what and why; ring_attend_kernel.cuh holds the kernel.
//
// [SECTION] inputs: the value of every logical element, the fill of a device's slices
// [SECTION] the devices: buffers, streams, events
// [SECTION] the ring: one step's kernel, one step's exchange, whole rings (overlapped, timed) and the serial parts
// [SECTION] validation: O and L gathered into sequence order against ReferenceAttentionRows
// [SECTION] MeasureRing
//
// The schedule, per device p and ring step s (held = the K/V p holds at step s: its own at s = 0, then the receive
// buffers in turn; next = the buffer the exchange of step s fills):
//   compute stream: [wait received(s − 1)]  ring_attend(Q_p, held)  → event computed(s)
//   comm stream:    [wait computed(s − 1): next is the buffer step s − 1 read]  send held → p + 1, receive
//                   next ← p − 1  → event received(s)                                   (s < P − 1 only)
// so the exchange of step s runs while the kernel of step s reads the same held buffer (both only read it). The
// virtual transport is one cudaMemcpyAsync per device, held(p − 1) → next(p), on p's comm stream; it also waits for
// received(s − 1) of p − 1 (what it copies has arrived) and of p + 1 (p + 1 has finished copying from the buffer that
// p now overwrites), which NCCL's matched send and receive guarantee by themselves.
#include <atomic>
#include <barrier>
#include <cmath>
#include <functional>
#include <random>
#include <set>
#include <thread>
#include <vector>

#include "kernels/common/format.h"
#include "kernels/common/parallel.h"
#include "kernels/cpu/reference.h"
#include "kernels/cuda/device_common.cuh"
#include "kernels/cuda/harness_device.cuh"
#include "kernels/cuda/ring/ring_attend.h"
#include "kernels/cuda/ring/ring_attention.h"
#include "kernels/cuda/ring/ring_nccl.h"

namespace flashviz::cuda {
namespace {

using ring_detail::RingSegments;

#define RING_CHECK(call)                                            \
  do {                                                              \
    if (const cudaError_t status_ = (call); status_ != cudaSuccess) \
      return Sprintf("%s: %s", #call, cudaGetErrorString(status_)); \
  } while (0)

// ---------------------------------------------------------------------------------------------------------------
// [SECTION] inputs

enum Tensor : int { kQ = 0, kK = 1, kV = 2 };

// Element `index` of a tensor in its logical layout [B][H][N][d] (the sequence's order, whichever device holds the
// row), hashed from (seed, tensor, index) as the decode harness's are (harness_device.cuh).
using harness_device::HashedInput;
using harness_device::StoredHashedInput;

// A device's slice [B·H][rows][d]: local row r is global row seg.begin[0] + r, or seg.begin[1] + r − seg.rows[0].
template <typename T>
__global__ void FillSlice(T* x, std::int64_t heads, int rows, int d, RingSegments seg, int n, std::uint64_t seed,
                          int tensor) {
  const std::int64_t count = heads * rows * d;
  const std::int64_t stride = static_cast<std::int64_t>(gridDim.x) * blockDim.x;
  for (std::int64_t i = static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < count; i += stride) {
    const int e = static_cast<int>(i % d);
    const int r = static_cast<int>(i / d % rows);
    const std::int64_t head = i / (static_cast<std::int64_t>(d) * rows);
    const int global = r < seg.rows[0] ? seg.begin[0] + r : seg.begin[1] + (r - seg.rows[0]);
    x[i] = device::FromFloat<T>(HashedInput(seed, tensor, static_cast<std::uint64_t>((head * n + global) * d + e)));
  }
}

RingSegments SegmentsOf(const RingShape& s, int p) {
  RingSegments seg;
  seg.count = s.ChunksPerDevice();
  for (int k = 0; k < seg.count; ++k) {
    seg.begin[k] = s.ChunkBegin(s.DeviceChunk(p, k));
    seg.rows[k] = s.ChunkRows(s.DeviceChunk(p, k));
  }
  return seg;
}

// ---------------------------------------------------------------------------------------------------------------
// [SECTION] the devices

inline constexpr std::size_t kFlushBytes = std::size_t{256} << 20;

struct RingDevice {
  int gpu = 0;
  int rows = 0;  // its query rows (and its own K/V's)
  RingSegments seg;
  void* q = nullptr;
  void* own_kv = nullptr;                   // K then V, [B·H][rows][d] each
  void* kv_buffer[2] = {nullptr, nullptr};  // receive buffers: K then V of the owner's rows
  float* o_state = nullptr;
  float* m_state = nullptr;
  float* l_state = nullptr;
  void* o_out = nullptr;
  float* lse = nullptr;
  void* flush = nullptr;
  unsigned long long* counter = nullptr;
  cudaStream_t compute = nullptr, comm = nullptr;
  std::vector<cudaEvent_t> computed, received;  // per ring step
  cudaEvent_t start = nullptr, end = nullptr;   // timing
  void* nccl = nullptr;
  std::vector<void*> allocations;

  std::string Allocate(void** pointer, std::size_t bytes) {
    if (bytes == 0) return {};
    RING_CHECK(cudaMalloc(pointer, bytes));
    allocations.push_back(*pointer);
    return {};
  }
  void Release() {
    cudaSetDevice(gpu);
    for (cudaEvent_t event : computed) cudaEventDestroy(event);
    for (cudaEvent_t event : received) cudaEventDestroy(event);
    if (start) cudaEventDestroy(start);
    if (end) cudaEventDestroy(end);
    if (compute) cudaStreamDestroy(compute);
    if (comm) cudaStreamDestroy(comm);
    for (void* pointer : allocations) cudaFree(pointer);
    allocations.clear();
  }
};

// ---------------------------------------------------------------------------------------------------------------
// [SECTION] the ring

class Ring {
 public:
  Ring(const RingShape& shape, const RingMeasureOptions& options)
      : s_(shape),
        o_(options),
        nccl_(options.transport == RingTransportKind::kNccl && shape.devices > 1),
        dev_(static_cast<std::size_t>(shape.devices)) {}
  ~Ring() {
    for (RingDevice& d : dev_) d.Release();
  }
  Ring(const Ring&) = delete;
  Ring& operator=(const Ring&) = delete;

  std::string Build(bool flush);
  std::string Fill(std::uint64_t seed);
  std::string Poison();
  // `runs` whole rings, every step of every device; `ms` (when given) gets each one's time: from a common start
  // (virtual: one event that every stream waits for; NCCL: each GPU's start event recorded right after a host
  // barrier, every GPU idle) to the last device's end.
  std::string Run(int runs, bool flush, std::vector<double>* ms);
  // The ring with nothing overlapped: per step every kernel (all devices), then every exchange; each phase timed
  // as its slowest device (virtual: the phase as the one GPU ran it), summed over the steps.
  std::string RunParts(double& compute_ms, double& exchange_ms);

  const RingShape& shape() const { return s_; }
  const RingDevice& device(int p) const { return dev_[static_cast<std::size_t>(p)]; }

 private:
  int P() const { return s_.devices; }
  std::size_t Element() const { return DTypeBytes(s_.dtype); }
  std::size_t KvHalfBytes(int owner) const {  // K (or V) of `owner`'s rows
    return static_cast<std::size_t>(s_.Heads()) * dev_[static_cast<std::size_t>(owner)].rows * s_.d * Element();
  }
  void* Held(int p, int step) {
    RingDevice& d = dev_[static_cast<std::size_t>(p)];
    return step == 0 ? d.own_kv : d.kv_buffer[(step - 1) % 2];
  }
  void* Next(int p, int step) { return dev_[static_cast<std::size_t>(p)].kv_buffer[step % 2]; }
  std::string Compute(int p, int step);
  std::string Exchange(int p, int step);
  // fn(p) for every device: on its own thread and GPU (NCCL), or in turn on this thread (virtual). The first error.
  std::string Each(const std::function<std::string(int)>& fn);

  RingShape s_;
  RingMeasureOptions o_;
  bool nccl_;  // one thread per GPU; false: every device on the current GPU, driven by this thread
  std::vector<RingDevice> dev_;
};

std::string Ring::Each(const std::function<std::string(int)>& fn) {
  if (!nccl_) {
    for (int p = 0; p < P(); ++p) {
      RING_CHECK(cudaSetDevice(dev_[static_cast<std::size_t>(p)].gpu));
      if (std::string error = fn(p); !error.empty()) return error;
    }
    return {};
  }
  std::vector<std::string> errors(static_cast<std::size_t>(P()));
  std::vector<std::thread> threads;
  for (int p = 0; p < P(); ++p)
    threads.emplace_back([&, p] {
      const cudaError_t set = cudaSetDevice(dev_[static_cast<std::size_t>(p)].gpu);
      errors[static_cast<std::size_t>(p)] =
          set != cudaSuccess ? Sprintf("cudaSetDevice(%d): %s", p, cudaGetErrorString(set)) : fn(p);
    });
  for (std::thread& thread : threads) thread.join();
  for (int p = 0; p < P(); ++p)
    if (!errors[static_cast<std::size_t>(p)].empty())
      return Sprintf("device %d: %s", p, errors[static_cast<std::size_t>(p)].c_str());
  return {};
}

std::string Ring::Build(bool flush) {
  int current = 0;
  RING_CHECK(cudaGetDevice(&current));
  for (int p = 0; p < P(); ++p) {
    RingDevice& d = dev_[static_cast<std::size_t>(p)];
    d.gpu = nccl_ ? p : current;
    d.rows = s_.DeviceRows(p);
    d.seg = SegmentsOf(s_, p);
  }
  if (nccl_) {
    std::vector<void*> comms;
    if (auto error = ring_internal::NcclRing(P(), comms)) return *error;
    for (int p = 0; p < P(); ++p) dev_[static_cast<std::size_t>(p)].nccl = comms[static_cast<std::size_t>(p)];
  }
  return Each([&](int p) -> std::string {
    RingDevice& d = dev_[static_cast<std::size_t>(p)];
    const RingDeviceBytes bytes = RingBytesOfDevice(s_, p);
    const std::size_t rows = static_cast<std::size_t>(s_.Heads()) * d.rows;
    if (auto e = d.Allocate(&d.q, static_cast<std::size_t>(bytes.q)); !e.empty()) return e;
    if (auto e = d.Allocate(&d.own_kv, static_cast<std::size_t>(bytes.own_kv)); !e.empty()) return e;
    const std::size_t buffer = 2 * static_cast<std::size_t>(s_.Heads()) * s_.MaxDeviceRows() * s_.d * Element();
    for (int b = 0; b < std::min(2, P() - 1); ++b)
      if (auto e = d.Allocate(&d.kv_buffer[b], buffer); !e.empty()) return e;
    void* pointer = nullptr;
    if (auto e = d.Allocate(&pointer, rows * s_.d * sizeof(float)); !e.empty()) return e;
    d.o_state = static_cast<float*>(pointer);
    if (auto e = d.Allocate(&pointer, rows * sizeof(float)); !e.empty()) return e;
    d.m_state = static_cast<float*>(pointer);
    if (auto e = d.Allocate(&pointer, rows * sizeof(float)); !e.empty()) return e;
    d.l_state = static_cast<float*>(pointer);
    if (auto e = d.Allocate(&d.o_out, rows * s_.d * Element()); !e.empty()) return e;
    if (auto e = d.Allocate(&pointer, rows * sizeof(float)); !e.empty()) return e;
    d.lse = static_cast<float*>(pointer);
    if (auto e = d.Allocate(&pointer, sizeof(unsigned long long)); !e.empty()) return e;
    d.counter = static_cast<unsigned long long*>(pointer);
    // One flush buffer per GPU: the virtual devices share theirs (device 0's).
    if (flush && (nccl_ || p == 0))
      if (auto e = d.Allocate(&d.flush, kFlushBytes); !e.empty()) return e;
    RING_CHECK(cudaStreamCreateWithFlags(&d.compute, cudaStreamNonBlocking));
    RING_CHECK(cudaStreamCreateWithFlags(&d.comm, cudaStreamNonBlocking));
    d.computed.assign(static_cast<std::size_t>(P()), nullptr);
    d.received.assign(static_cast<std::size_t>(P()), nullptr);
    for (int step = 0; step < P(); ++step) {
      RING_CHECK(cudaEventCreateWithFlags(&d.computed[static_cast<std::size_t>(step)], cudaEventDisableTiming));
      RING_CHECK(cudaEventCreateWithFlags(&d.received[static_cast<std::size_t>(step)], cudaEventDisableTiming));
    }
    RING_CHECK(cudaEventCreate(&d.start));
    RING_CHECK(cudaEventCreate(&d.end));
    return {};
  });
}

std::string Ring::Fill(std::uint64_t seed) {
  return Each([&](int p) -> std::string {
    RingDevice& d = dev_[static_cast<std::size_t>(p)];
    const std::int64_t heads = s_.Heads();
    const std::size_t half = KvHalfBytes(p);
    auto* k = static_cast<unsigned char*>(d.own_kv);
    if (s_.dtype == DType::kFp16) {
      FillSlice<<<1024, 256, 0, d.compute>>>(static_cast<__half*>(d.q), heads, d.rows, s_.d, d.seg, s_.n, seed, kQ);
      FillSlice<<<1024, 256, 0, d.compute>>>(reinterpret_cast<__half*>(k), heads, d.rows, s_.d, d.seg, s_.n, seed, kK);
      FillSlice<<<1024, 256, 0, d.compute>>>(reinterpret_cast<__half*>(k + half), heads, d.rows, s_.d, d.seg, s_.n,
                                             seed, kV);
    } else {
      using B16 = __nv_bfloat16;
      FillSlice<<<1024, 256, 0, d.compute>>>(static_cast<B16*>(d.q), heads, d.rows, s_.d, d.seg, s_.n, seed, kQ);
      FillSlice<<<1024, 256, 0, d.compute>>>(reinterpret_cast<B16*>(k), heads, d.rows, s_.d, d.seg, s_.n, seed, kK);
      FillSlice<<<1024, 256, 0, d.compute>>>(reinterpret_cast<B16*>(k + half), heads, d.rows, s_.d, d.seg, s_.n, seed,
                                             kV);
    }
    RING_CHECK(cudaGetLastError());
    RING_CHECK(cudaStreamSynchronize(d.compute));
    return {};
  });
}

// NaN everywhere the ring writes (0xFFFF is a NaN in fp16 and bf16, 0xFFFFFFFF in fp32): an element the last step
// does not write stays NaN, and a step that read state it should not (step 0, or rows it never wrote) spreads NaN.
std::string Ring::Poison() {
  return Each([&](int p) -> std::string {
    RingDevice& d = dev_[static_cast<std::size_t>(p)];
    const std::size_t rows = static_cast<std::size_t>(s_.Heads()) * d.rows;
    RING_CHECK(cudaMemsetAsync(d.o_out, 0xFF, rows * s_.d * Element(), d.compute));
    RING_CHECK(cudaMemsetAsync(d.lse, 0xFF, rows * sizeof(float), d.compute));
    RING_CHECK(cudaMemsetAsync(d.o_state, 0xFF, rows * s_.d * sizeof(float), d.compute));
    RING_CHECK(cudaMemsetAsync(d.m_state, 0xFF, rows * sizeof(float), d.compute));
    RING_CHECK(cudaMemsetAsync(d.l_state, 0xFF, rows * sizeof(float), d.compute));
    RING_CHECK(cudaStreamSynchronize(d.compute));
    return {};
  });
}

std::string Ring::Compute(int p, int step) {
  RingDevice& d = dev_[static_cast<std::size_t>(p)];
  // The held K/V of step s > 0 is what the exchange of step s − 1 received.
  if (step > 0) RING_CHECK(cudaStreamWaitEvent(d.compute, d.received[static_cast<std::size_t>(step - 1)], 0));
  const int owner = s_.KvOwner(p, step);
  auto* held = static_cast<unsigned char*>(Held(p, step));
  RingAttendArgs args;
  args.dtype = s_.dtype;
  args.d = s_.d;
  args.heads = static_cast<int>(s_.Heads());
  args.q = d.q;
  args.k = held;
  args.v = held + KvHalfBytes(owner);
  args.o_state = d.o_state;
  args.m_state = d.m_state;
  args.l_state = d.l_state;
  args.o_out = d.o_out;
  args.lse_out = d.lse;
  args.q_seg = d.seg;
  args.kv_seg = dev_[static_cast<std::size_t>(owner)].seg;
  args.scale = s_.Scale();
  args.causal = s_.causal;
  args.first = step == 0;
  args.last = step == P() - 1;
  RING_CHECK(LaunchRingAttend(args, d.compute));
  RING_CHECK(cudaEventRecord(d.computed[static_cast<std::size_t>(step)], d.compute));
  return {};
}

std::string Ring::Exchange(int p, int step) {
  RingDevice& d = dev_[static_cast<std::size_t>(p)];
  // Next(p, s) is the buffer the kernel of step s − 1 read (from step 2 on): wait until it has finished.
  if (step > 0) RING_CHECK(cudaStreamWaitEvent(d.comm, d.computed[static_cast<std::size_t>(step - 1)], 0));
  if (nccl_) {
    const std::size_t send = 2 * KvHalfBytes(s_.KvOwner(p, step));
    const std::size_t receive = 2 * KvHalfBytes(s_.KvOwner(p, step + 1));
    if (auto error = ring_internal::NcclExchange(d.nccl, p, P(), Held(p, step), send, Next(p, step), receive, d.comm))
      return *error;
  } else {
    const int before = (p + P() - 1) % P(), after = (p + 1) % P();
    if (step > 0) {
      // What p copies (p − 1's held buffer) was received by p − 1 at step s − 1; and p + 1's copy of step s − 1 read
      // the buffer that p now overwrites.
      RING_CHECK(cudaStreamWaitEvent(d.comm, dev_[static_cast<std::size_t>(before)].received[step - 1], 0));
      RING_CHECK(cudaStreamWaitEvent(d.comm, dev_[static_cast<std::size_t>(after)].received[step - 1], 0));
    }
    RING_CHECK(cudaMemcpyAsync(Next(p, step), Held(before, step), 2 * KvHalfBytes(s_.KvOwner(before, step)),
                               cudaMemcpyDeviceToDevice, d.comm));
  }
  RING_CHECK(cudaEventRecord(d.received[static_cast<std::size_t>(step)], d.comm));
  return {};
}

std::string Ring::Run(int runs, bool flush, std::vector<double>* ms) {
  if (ms) ms->assign(static_cast<std::size_t>(runs), 0.0);
  if (!nccl_) {
    RingDevice& main = dev_[0];
    RING_CHECK(cudaSetDevice(main.gpu));
    for (int run = 0; run < runs; ++run) {
      if (flush && main.flush) RING_CHECK(cudaMemsetAsync(main.flush, run & 0xFF, kFlushBytes, main.compute));
      RING_CHECK(cudaDeviceSynchronize());  // every stream idle: the start below is common to all
      RING_CHECK(cudaEventRecord(main.start, main.compute));
      for (RingDevice& d : dev_) {
        if (&d != &main) RING_CHECK(cudaStreamWaitEvent(d.compute, main.start, 0));
        RING_CHECK(cudaStreamWaitEvent(d.comm, main.start, 0));
      }
      // Step by step over all devices: the events an exchange waits for (of p − 1, p + 1) are recorded by then.
      for (int step = 0; step < P(); ++step) {
        for (int p = 0; p < P(); ++p)
          if (std::string e = Compute(p, step); !e.empty()) return e;
        if (step + 1 < P())
          for (int p = 0; p < P(); ++p)
            if (std::string e = Exchange(p, step); !e.empty()) return e;
      }
      // The last kernel of each device waited for its last receive, so these cover every copy too.
      for (int p = 1; p < P(); ++p) RING_CHECK(cudaStreamWaitEvent(main.compute, dev_[p].computed[P() - 1], 0));
      RING_CHECK(cudaEventRecord(main.end, main.compute));
      RING_CHECK(cudaEventSynchronize(main.end));
      float elapsed = 0;
      RING_CHECK(cudaEventElapsedTime(&elapsed, main.start, main.end));
      if (ms) (*ms)[static_cast<std::size_t>(run)] = elapsed;
    }
    return {};
  }
  // NCCL: one thread per GPU. Every thread passes the barrier once per run, so a failure seen before it stops all
  // of them at the same run. (A failure after it may leave a peer waiting for a send that never comes.)
  // Whether to stop is decided once per run, by the barrier's completion: read after it, every thread sees the same
  // answer (a thread reading `failed` itself could see a peer's failure of this run and leave the others waiting).
  std::atomic<bool> failed{false};
  bool stop = false;
  std::barrier sync(P(), [&]() noexcept { stop = failed.load(); });
  std::vector<std::vector<double>> times(static_cast<std::size_t>(runs), std::vector<double>(dev_.size(), 0.0));
  std::string error = Each([&](int p) -> std::string {
    RingDevice& d = dev_[static_cast<std::size_t>(p)];
    auto run_once = [&](int run) -> std::string {
      RING_CHECK(cudaEventRecord(d.start, d.compute));
      RING_CHECK(cudaStreamWaitEvent(d.comm, d.start, 0));
      for (int step = 0; step < P(); ++step) {
        if (std::string e = Compute(p, step); !e.empty()) return e;
        if (step + 1 < P())
          if (std::string e = Exchange(p, step); !e.empty()) return e;
      }
      RING_CHECK(cudaEventRecord(d.end, d.compute));
      RING_CHECK(cudaEventSynchronize(d.end));
      float elapsed = 0;
      RING_CHECK(cudaEventElapsedTime(&elapsed, d.start, d.end));
      times[static_cast<std::size_t>(run)][static_cast<std::size_t>(p)] = elapsed;
      return {};
    };
    std::string mine;
    for (int run = 0; run < runs; ++run) {
      if (mine.empty() && flush && d.flush) {
        if (cudaError_t e = cudaMemsetAsync(d.flush, run & 0xFF, kFlushBytes, d.compute); e != cudaSuccess)
          mine = Sprintf("cudaMemsetAsync (L2 flush): %s", cudaGetErrorString(e));
      }
      if (mine.empty())
        if (cudaError_t e = cudaDeviceSynchronize(); e != cudaSuccess)
          mine = Sprintf("cudaDeviceSynchronize: %s", cudaGetErrorString(e));
      if (!mine.empty()) failed = true;
      sync.arrive_and_wait();
      if (stop) break;
      if (mine = run_once(run); !mine.empty()) failed = true;
    }
    return mine;
  });
  if (!error.empty()) return error;
  if (ms)
    for (int run = 0; run < runs; ++run) {
      const std::vector<double>& t = times[static_cast<std::size_t>(run)];
      (*ms)[static_cast<std::size_t>(run)] = *std::max_element(t.begin(), t.end());
    }
  return {};
}

std::string Ring::RunParts(double& compute_ms, double& exchange_ms) {
  compute_ms = exchange_ms = 0;
  if (!nccl_) {
    RingDevice& main = dev_[0];
    RING_CHECK(cudaSetDevice(main.gpu));
    // One phase (every device's kernel, or every device's exchange), timed from an event all streams wait for to
    // one that waits for all of them.
    auto phase = [&](bool kernels, int step, double& total) -> std::string {
      RING_CHECK(cudaDeviceSynchronize());
      RING_CHECK(cudaEventRecord(main.start, main.compute));
      for (RingDevice& d : dev_) RING_CHECK(cudaStreamWaitEvent(kernels ? d.compute : d.comm, main.start, 0));
      for (int p = 0; p < P(); ++p)
        if (std::string e = kernels ? Compute(p, step) : Exchange(p, step); !e.empty()) return e;
      for (RingDevice& d : dev_)
        RING_CHECK(cudaStreamWaitEvent(main.compute, kernels ? d.computed[step] : d.received[step], 0));
      RING_CHECK(cudaEventRecord(main.end, main.compute));
      RING_CHECK(cudaEventSynchronize(main.end));
      float elapsed = 0;
      RING_CHECK(cudaEventElapsedTime(&elapsed, main.start, main.end));
      total += elapsed;
      return {};
    };
    for (int step = 0; step < P(); ++step) {
      if (std::string e = phase(true, step, compute_ms); !e.empty()) return e;
      if (step + 1 < P())
        if (std::string e = phase(false, step, exchange_ms); !e.empty()) return e;
    }
    RING_CHECK(cudaDeviceSynchronize());
    return {};
  }
  // NCCL: each phase starts after a barrier with every GPU idle, and is its slowest device's time.
  std::atomic<bool> failed{false};
  bool stop = false;  // decided by the barrier's completion, as in Run
  std::barrier sync(P(), [&]() noexcept { stop = failed.load(); });
  const std::size_t steps = static_cast<std::size_t>(P());
  std::vector<std::vector<double>> kernel_ms(steps, std::vector<double>(dev_.size(), 0.0)), exchange(kernel_ms);
  std::string error = Each([&](int p) -> std::string {
    RingDevice& d = dev_[static_cast<std::size_t>(p)];
    auto timed = [&](bool kernels, int step, double& out) -> std::string {
      cudaStream_t stream = kernels ? d.compute : d.comm;
      RING_CHECK(cudaEventRecord(d.start, stream));
      if (std::string e = kernels ? Compute(p, step) : Exchange(p, step); !e.empty()) return e;
      RING_CHECK(cudaEventRecord(d.end, stream));
      RING_CHECK(cudaEventSynchronize(d.end));
      float elapsed = 0;
      RING_CHECK(cudaEventElapsedTime(&elapsed, d.start, d.end));
      out = elapsed;
      return {};
    };
    std::string mine;
    for (int step = 0; step < P(); ++step) {
      for (bool kernels : {true, false}) {
        if (!kernels && step + 1 == P()) break;
        if (mine.empty())
          if (cudaError_t e = cudaDeviceSynchronize(); e != cudaSuccess)
            mine = Sprintf("cudaDeviceSynchronize: %s", cudaGetErrorString(e));
        if (!mine.empty()) failed = true;
        sync.arrive_and_wait();
        if (stop) return mine;
        double& out = (kernels ? kernel_ms : exchange)[static_cast<std::size_t>(step)][static_cast<std::size_t>(p)];
        if (mine = timed(kernels, step, out); !mine.empty()) failed = true;
      }
    }
    return mine;
  });
  if (!error.empty()) return error;
  for (std::size_t step = 0; step < steps; ++step) {
    compute_ms += *std::max_element(kernel_ms[step].begin(), kernel_ms[step].end());
    exchange_ms += *std::max_element(exchange[step].begin(), exchange[step].end());
  }
  return {};
}

// ---------------------------------------------------------------------------------------------------------------
// [SECTION] validation

struct Validation {
  double max_error = 0, lse_max_error = 0;
  bool lse_ok = true;
  std::int64_t rows = 0;
  int worst_head = 0, worst_row = 0;
  std::string error;  // a CUDA failure, or elements left unwritten
};

// Rows compared: every row (tests), or the first and last row of every chunk (where the layout's arithmetic can go
// wrong) and 16 random rows, of the first and the last (batch, head).
Validation Validate(const Ring& ring, const RingMeasureOptions& options) {
  const RingShape& s = ring.shape();
  Validation v;
  const DType dtype = s.dtype;
  // Every element of O and L written (they were NaN before the run).
  for (int p = 0; p < s.devices; ++p) {
    const RingDevice& d = ring.device(p);
    if (cudaSetDevice(d.gpu) != cudaSuccess) return v.error = "cudaSetDevice failed", v;
    const std::int64_t rows = s.Heads() * d.rows;
    unsigned long long bad_o = 0, bad_l = 0;
    cudaError_t e = harness_device::CountNonFiniteOn(dtype, d.o_out, rows * s.d, d.counter, &bad_o, d.compute);
    if (e == cudaSuccess) e = harness_device::CountNonFiniteOn(DType::kFp32, d.lse, rows, d.counter, &bad_l, d.compute);
    if (e != cudaSuccess) return v.error = Sprintf("counting non-finite outputs: %s", cudaGetErrorString(e)), v;
    if (bad_o > 0 || bad_l > 0)
      return v.error = Sprintf("device %d: %llu elements of O and %llu of L not finite (unwritten, or NaN/inf)", p,
                               bad_o, bad_l),
             v;
  }
  std::vector<std::int64_t> heads;
  if (options.validate_all) {
    for (std::int64_t h = 0; h < s.Heads(); ++h) heads.push_back(h);
  } else {
    heads = {0};
    if (s.Heads() > 1) heads.push_back(s.Heads() - 1);
  }
  std::vector<int> rows;
  if (options.validate_all) {
    for (int r = 0; r < s.n; ++r) rows.push_back(r);
  } else {
    std::set<int> chosen;
    for (int c = 0; c < s.Chunks(); ++c) {
      chosen.insert(s.ChunkBegin(c));
      chosen.insert(s.ChunkBegin(c + 1) - 1);
    }
    std::mt19937_64 random(options.seed);
    for (int i = 0; i < 16; ++i) chosen.insert(static_cast<int>(random() % static_cast<std::uint64_t>(s.n)));
    rows.assign(chosen.begin(), chosen.end());
  }
  const std::size_t head_elements = static_cast<std::size_t>(s.n) * s.d;
  std::vector<float> q(head_elements), k(head_elements), vv(head_elements), got(head_elements), got_l(s.n), slice;
  std::vector<double> expected(rows.size() * s.d);
  std::vector<RowSoftmaxStats> stats(rows.size());
  for (std::int64_t head : heads) {
    ParallelFor(s.n, 0, [&](std::int64_t row, int) {
      for (int e = 0; e < s.d; ++e) {
        const std::size_t at = static_cast<std::size_t>(row) * s.d + e;
        const auto index = static_cast<std::uint64_t>(head * s.n * s.d) + at;
        q[at] = StoredHashedInput(dtype, options.seed, kQ, index);
        k[at] = StoredHashedInput(dtype, options.seed, kK, index);
        vv[at] = StoredHashedInput(dtype, options.seed, kV, index);
      }
    });
    // Gather this head's O and L from every device into the sequence's order.
    for (int p = 0; p < s.devices; ++p) {
      const RingDevice& d = ring.device(p);
      const std::int64_t first = head * d.rows;
      if (cudaError_t e = harness_device::CopyToHost(dtype, d.o_out, first * s.d, std::int64_t{d.rows} * s.d, slice);
          e != cudaSuccess)
        return v.error = Sprintf("copying O back: %s", cudaGetErrorString(e)), v;
      std::vector<float> lse(static_cast<std::size_t>(d.rows));
      if (cudaError_t e = cudaMemcpy(lse.data(), d.lse + first, lse.size() * sizeof(float), cudaMemcpyDeviceToHost);
          e != cudaSuccess)
        return v.error = Sprintf("copying L back: %s", cudaGetErrorString(e)), v;
      for (int r = 0; r < d.rows; ++r) {
        const int global = s.GlobalRow(p, r);
        std::copy_n(slice.begin() + static_cast<std::ptrdiff_t>(r) * s.d, s.d,
                    got.begin() + static_cast<std::ptrdiff_t>(global) * s.d);
        got_l[static_cast<std::size_t>(global)] = lse[static_cast<std::size_t>(r)];
      }
    }
    ParallelFor(static_cast<std::int64_t>(rows.size()), 0, [&](std::int64_t i, int) {
      const int row = rows[static_cast<std::size_t>(i)];
      ReferenceAttentionRows(q.data(), k.data(), vv.data(), s.n, s.d, s.Scale(), s.causal, row, row + 1,
                             expected.data() + i * s.d, &stats[static_cast<std::size_t>(i)]);
    });
    for (std::size_t i = 0; i < rows.size(); ++i) {
      const int row = rows[i];
      for (int e = 0; e < s.d; ++e) {
        const double have = got[static_cast<std::size_t>(row) * s.d + e];
        const double error = std::isfinite(have) ? std::abs(have - expected[i * s.d + e]) : INFINITY;
        if (!(error <= v.max_error)) {
          v.max_error = error;
          v.worst_head = static_cast<int>(head);
          v.worst_row = row;
        }
      }
      const double reference_l = stats[i].m + std::log(stats[i].l);
      const double have_l = got_l[static_cast<std::size_t>(row)];
      const double error_l = std::isfinite(have_l) ? std::abs(have_l - reference_l) : INFINITY;
      v.lse_max_error = std::max(v.lse_max_error, error_l);
      if (!(error_l <= RingLseTolerance(reference_l))) v.lse_ok = false;
    }
    v.rows += static_cast<std::int64_t>(rows.size());
  }
  return v;
}

RingMeasurement Fail(RingMeasurement m, MeasureStatus status, std::string reason) {
  m.status = status;
  m.reason = std::move(reason);
  return m;
}

std::string Gib(double bytes) {
  return Sprintf("%.2f GiB", bytes / double(1 << 30));
}

}  // namespace

// ---------------------------------------------------------------------------------------------------------------
// [SECTION] MeasureRing

int RingGpuCount() {
  int count = 0;
  if (cudaGetDeviceCount(&count) != cudaSuccess) {
    cudaGetLastError();
    return 0;
  }
  return count;
}

std::optional<std::string> NcclUnavailableReason(std::string* version) {
  return ring_internal::LoadNccl(version);
}

void ReleaseRingCommunicators() {
  ring_internal::ReleaseNccl();
}

RingMeasurement MeasureRing(const RingShape& shape, const RingMeasureOptions& options) {
  // The ring sets the current device as it goes (validation ends on the last GPU): give the caller its own back.
  int caller_device = 0;
  const bool restore = cudaGetDevice(&caller_device) == cudaSuccess;
  struct RestoreDevice {
    bool active;
    int device;
    ~RestoreDevice() {
      if (active) cudaSetDevice(device);
    }
  } restore_device{restore, caller_device};
  RingMeasurement m;
  m.tolerance = RingTolerance(shape.dtype);
  if (auto error = RingShapeError(shape)) return Fail(m, MeasureStatus::kNotApplicable, *error);
  const int gpus = RingGpuCount();
  if (gpus == 0) return Fail(m, MeasureStatus::kError, "no CUDA device");
  const bool nccl = options.transport == RingTransportKind::kNccl && shape.devices > 1;
  if (nccl) {
    if (auto error = NcclUnavailableReason()) return Fail(m, MeasureStatus::kNotApplicable, *error);
    if (shape.devices > gpus)
      return Fail(m, MeasureStatus::kNotApplicable,
                  Sprintf("P = %d needs %d GPUs for the nccl transport; this machine has %d", shape.devices,
                          shape.devices, gpus));
  }
  // Memory: each GPU its device's bytes (NCCL), or one GPU all P virtual devices' (virtual); plus the L2 flush.
  const bool flush = options.time && options.flush_l2;
  {
    int current = 0;
    if (cudaGetDevice(&current) != cudaSuccess) return Fail(m, MeasureStatus::kError, "cudaGetDevice failed");
    double needed = flush ? static_cast<double>(kFlushBytes) : 0.0;
    for (int p = 0; p < shape.devices; ++p) {
      const double bytes = static_cast<double>(RingBytesOfDevice(shape, p).Total());
      if (nccl) {
        std::size_t free = 0, total = 0;
        cudaSetDevice(p);
        const cudaError_t e = cudaMemGetInfo(&free, &total);
        if (e != cudaSuccess)
          return Fail(m, MeasureStatus::kError, Sprintf("cudaMemGetInfo: %s", cudaGetErrorString(e)));
        if (bytes + needed > 0.95 * static_cast<double>(free))
          return Fail(m, MeasureStatus::kNotApplicable,
                      Sprintf("does not fit: GPU %d needs %s, %s free", p, Gib(bytes + needed).c_str(),
                              Gib(static_cast<double>(free)).c_str()));
      } else {
        needed += bytes;
      }
    }
    cudaSetDevice(current);
    if (!nccl) {
      std::size_t free = 0, total = 0;
      if (cudaMemGetInfo(&free, &total) != cudaSuccess) return Fail(m, MeasureStatus::kError, "cudaMemGetInfo failed");
      if (needed > 0.95 * static_cast<double>(free))
        return Fail(m, MeasureStatus::kNotApplicable,
                    Sprintf("does not fit: the %d virtual devices need %s on one GPU, %s free", shape.devices,
                            Gib(needed).c_str(), Gib(static_cast<double>(free)).c_str()));
    }
  }
  Ring ring(shape, options);
  if (std::string e = ring.Build(flush); !e.empty()) return Fail(m, MeasureStatus::kError, "setting up: " + e);
  if (std::string e = ring.Fill(options.seed); !e.empty()) return Fail(m, MeasureStatus::kError, "inputs: " + e);
  if (std::string e = ring.Poison(); !e.empty()) return Fail(m, MeasureStatus::kError, "poisoning O: " + e);
  if (std::string e = ring.Run(1, false, nullptr); !e.empty()) return Fail(m, MeasureStatus::kError, "the ring: " + e);
  const Validation v = Validate(ring, options);
  m.max_abs_error = v.max_error;
  m.lse_max_error = v.lse_max_error;
  m.validated_rows = v.rows;
  if (!v.error.empty()) return Fail(m, MeasureStatus::kValidationFailed, v.error);
  if (!(v.max_error <= m.tolerance))
    return Fail(m, MeasureStatus::kValidationFailed,
                Sprintf("max |O error| %.3g > tolerance %.3g (head %d, row %d)", v.max_error, m.tolerance, v.worst_head,
                        v.worst_row));
  if (!v.lse_ok)
    return Fail(m, MeasureStatus::kValidationFailed,
                Sprintf("max |L error| %.3g beyond 1e-3 + 1e-5·|L|", v.lse_max_error));
  if (!options.time) {
    m.status = MeasureStatus::kOk;
    return m;
  }
  std::vector<double> ms;
  if (std::string e = ring.Run(options.warmup, flush, nullptr); !e.empty())
    return Fail(m, MeasureStatus::kError, "warm-up: " + e);
  if (std::string e = ring.Run(std::max(1, options.repeats), flush, &ms); !e.empty())
    return Fail(m, MeasureStatus::kError, "timing: " + e);
  m.ms_median = harness_device::Median(ms);
  m.ms_min = *std::min_element(ms.begin(), ms.end());
  m.tflops_per_gpu = RingFlops(shape) / (m.ms_median * 1e-3) / shape.devices * 1e-12;
  if (options.time_parts) {
    if (std::string e = ring.RunParts(m.compute_ms, m.exchange_ms); !e.empty())
      return Fail(m, MeasureStatus::kError, "timing the parts: " + e);
  }
  m.status = MeasureStatus::kOk;
  return m;
}

}  // namespace flashviz::cuda
