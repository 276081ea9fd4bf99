// The harness: fresh inputs on the device, the variant validated against the float64 CPU reference with its
// output poisoned first, then timed with CUDA events. harness.h says what and why.
//
// [SECTION] device status
// [SECTION] device kernels: inputs, the non-finite count
// [SECTION] host helpers: buffers, events, conversion
// [SECTION] validation against the reference
// [SECTION] MeasureVariant
#include "kernels/cuda/harness.h"

#include <cuda_fp8.h>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <mutex>
#include <set>
#include <vector>

#include "kernels/common/format.h"
#include "kernels/common/parallel.h"
#include "kernels/common/random.h"
#include "kernels/cuda/device_status.h"
#include "kernels/cuda/harness_device.cuh"
#include "kernels/cpu/reference.h"
#include "kernels/cuda/device_common.cuh"
#include "kernels/cuda/variants.h"

#ifndef FLASHVIZ_CUDA_ARCHITECTURES
#define FLASHVIZ_CUDA_ARCHITECTURES "?"
#endif

namespace flashviz::cuda {
namespace {

using harness_device::CopyToHost;
using harness_device::CountNonFiniteOn;
using harness_device::DeviceBuffer;
using harness_device::Failed;
using harness_device::Median;

std::atomic<bool> context_lost{false};

// ---------------------------------------------------------------------------------------------------------------
// [SECTION] device status

__global__ void ProbeKernel(int* value) {
  if (value) *value = 1;
}

std::string ErrorText(cudaError_t error) {
  return std::string(cudaGetErrorName(error)) + ": " + cudaGetErrorString(error);
}

// A kernel fault poisons the context: every later call returns it. Remember that, so sweeps stop.
cudaError_t Note(cudaError_t error) {
  if (error == cudaErrorIllegalAddress || error == cudaErrorLaunchFailure || error == cudaErrorMisalignedAddress ||
      error == cudaErrorIllegalInstruction || error == cudaErrorHardwareStackError || error == cudaErrorAssert ||
      error == cudaErrorInvalidPc || error == cudaErrorLaunchTimeout)
    context_lost = true;
  return error;
}

// ---------------------------------------------------------------------------------------------------------------
// [SECTION] device kernels: inputs, the non-finite count

__device__ __forceinline__ std::uint64_t Mix(std::uint64_t z) {  // SplitMix64's finalizer
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

// One tensor (0 = Q, 1 = K, 2 = V) of B·H heads of N×d values, from a hash of (seed, tensor, index): the same
// seed gives the same inputs on any GPU, and generating 3·B·H·N·d values takes microseconds, not host seconds.
template <typename T>
__global__ void FillInputs(T* x, std::int64_t count, std::uint64_t seed, int tensor, InputPattern pattern, int n,
                           int d) {
  const std::int64_t stride = static_cast<std::int64_t>(gridDim.x) * blockDim.x;
  for (std::int64_t i = static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < count; i += stride) {
    const std::uint64_t z =
        Mix(seed * 0x9E3779B97F4A7C15ull + static_cast<std::uint64_t>(tensor) * 0xD1B54A32D192ED03ull +
            static_cast<std::uint64_t>(i));
    const float u = static_cast<float>(z >> 40) * (1.0f / 16777215.0f);  // uniform in [0, 1]
    float value = -1.0f + 2.0f * u;
    if (pattern == InputPattern::kWide) {
      value = -3.0f + 6.0f * u;
    } else if (pattern == InputPattern::kRisingKeys) {
      // Q positive, K growing with its row: every score rises with the key index.
      const int row = static_cast<int>((i / d) % n);
      if (tensor == 0) value = 0.5f + 0.5f * u;
      if (tensor == 1) value = 2.0f * static_cast<float>(row) / static_cast<float>(n) + 0.2f * (u - 0.5f);
    }
    x[i] = device::FromFloat<T>(value);
  }
}

// ---------------------------------------------------------------------------------------------------------------
// [SECTION] host helpers: buffers, events, conversion

class Stream {
 public:
  Stream() { error_ = cudaStreamCreateWithFlags(&stream_, cudaStreamNonBlocking); }
  ~Stream() {
    if (error_ == cudaSuccess) cudaStreamDestroy(stream_);
  }
  Stream(const Stream&) = delete;
  Stream& operator=(const Stream&) = delete;
  cudaError_t error() const { return error_; }
  cudaStream_t get() const { return stream_; }

 private:
  cudaStream_t stream_ = nullptr;
  cudaError_t error_;
};

class EventPair {
 public:
  EventPair() {
    error_ = cudaEventCreate(&start_);
    if (error_ == cudaSuccess) error_ = cudaEventCreate(&stop_);
  }
  ~EventPair() {
    if (start_) cudaEventDestroy(start_);
    if (stop_) cudaEventDestroy(stop_);
  }
  EventPair(const EventPair&) = delete;
  EventPair& operator=(const EventPair&) = delete;
  cudaError_t error() const { return error_; }
  cudaEvent_t start() const { return start_; }
  cudaEvent_t stop() const { return stop_; }

 private:
  cudaEvent_t start_ = nullptr, stop_ = nullptr;
  cudaError_t error_;
};

template <typename T>
void LaunchFill(void* x, std::int64_t count, std::uint64_t seed, int tensor, InputPattern pattern, int n, int d,
                cudaStream_t stream) {
  FillInputs<T><<<1024, 256, 0, stream>>>(static_cast<T*>(x), count, seed, tensor, pattern, n, d);
}

cudaError_t FillTensor(DType dtype, void* x, std::int64_t count, std::uint64_t seed, int tensor,
                       InputPattern pattern, int n, int d, cudaStream_t stream) {
  switch (dtype) {
    case DType::kFp32: LaunchFill<float>(x, count, seed, tensor, pattern, n, d, stream); break;
    case DType::kFp16: LaunchFill<__half>(x, count, seed, tensor, pattern, n, d, stream); break;
    case DType::kBf16: LaunchFill<__nv_bfloat16>(x, count, seed, tensor, pattern, n, d, stream); break;
  }
  return cudaGetLastError();
}

// ---------------------------------------------------------------------------------------------------------------
// [SECTION] validation against the reference

// The query rows to check in one head: all of them for tests; for benchmarks the edges (first, last, tile
// boundaries of every variant) and a few random rows.
std::vector<int> RowsToCheck(int n, bool all_rows, std::uint64_t seed) {
  std::set<int> rows;
  if (all_rows) {
    for (int r = 0; r < n; ++r) rows.insert(r);
  } else {
    for (int r : {0, 1, 15, 16, 31, 32, 63, 64, 65, 127, 128, 129, n / 2, n - 2, n - 1})
      if (r >= 0 && r < n) rows.insert(r);
    SplitMix64 random(seed ^ 0x5EEDull);
    for (int extra = 0; extra < 8; ++extra)
      rows.insert(static_cast<int>(random.Next() % static_cast<std::uint64_t>(n)));
  }
  return {rows.begin(), rows.end()};
}

std::vector<std::int64_t> HeadsToCheck(std::int64_t heads, bool all_heads) {
  std::set<std::int64_t> chosen;
  if (all_heads) {
    for (std::int64_t h = 0; h < heads; ++h) chosen.insert(h);
  } else {
    chosen = {0, heads / 2, heads - 1};
  }
  return {chosen.begin(), chosen.end()};
}

struct Comparison {
  double max_abs_error = 0;
  std::int64_t head = 0;
  int row = 0, column = 0;
  std::int64_t rows = 0;
  cudaError_t error = cudaSuccess;
};

// x̂ = descale·e4m3(x / descale) in the kernel's own fp32 steps (flash3_fp8.cu's quantizer), so that the reference
// starts from the very values the kernel multiplies.
void RoundToE4m3(std::vector<float>& x, float descale) {
  const float scale = 1.0f / descale;
  for (float& value : x) {
    const __nv_fp8_storage_t byte = __nv_cvt_float_to_fp8(value * scale, __NV_SATFINITE, __NV_E4M3);
    value = descale * __half2float(__half(__nv_cvt_fp8_to_halfraw(byte, __NV_E4M3)));
  }
}

// max|x| / 448 in fp32, 1 for an all-zero tensor: the per-tensor descale factor of InputRounding::kE4m3PerTensor.
cudaError_t E4m3Descale(DType dtype, const void* x, std::int64_t count, float* descale) {
  float amax = 0.0f;
  std::vector<float> chunk;
  constexpr std::int64_t kChunk = 1 << 24;
  for (std::int64_t offset = 0; offset < count; offset += kChunk) {
    if (const cudaError_t error = CopyToHost(dtype, x, offset, std::min(kChunk, count - offset), chunk);
        error != cudaSuccess)
      return error;
    for (float value : chunk) amax = std::max(amax, std::fabs(value));
  }
  *descale = amax > 0.0f ? amax / 448.0f : 1.0f;
  return cudaSuccess;
}

// `descale` (Q, K, V), when given: the inputs are rounded per tensor to e4m3 first (InputRounding::kE4m3PerTensor).
Comparison CompareWithReference(const AttentionShape& shape, DType dtype, const void* q, const void* k, const void* v,
                                const void* o, const MeasureOptions& options, const float* descale = nullptr) {
  Comparison result;
  const int n = shape.n, d = shape.d;
  const std::int64_t head_elements = static_cast<std::int64_t>(n) * d;
  std::vector<float> hq, hk, hv, ho;
  for (const std::int64_t head : HeadsToCheck(shape.Heads(), options.validate_all_rows)) {
    const std::int64_t offset = head * head_elements;
    for (auto [source, target] : {std::pair{q, &hq}, {k, &hk}, {v, &hv}, {o, &ho}})
      if ((result.error = CopyToHost(dtype, source, offset, head_elements, *target)) != cudaSuccess) return result;
    if (descale) {
      RoundToE4m3(hq, descale[0]);
      RoundToE4m3(hk, descale[1]);
      RoundToE4m3(hv, descale[2]);
    }
    const std::vector<int> rows = RowsToCheck(n, options.validate_all_rows, options.seed + head);
    std::vector<Comparison> per_row(rows.size());
    ParallelFor(static_cast<std::int64_t>(rows.size()), 0, [&](std::int64_t index, int) {
      const int row = rows[static_cast<std::size_t>(index)];
      std::vector<double> expected(static_cast<std::size_t>(d));
      ReferenceAttentionRows(hq.data(), hk.data(), hv.data(), n, d, shape.scale, shape.causal, row, row + 1,
                             expected.data());
      Comparison& worst = per_row[static_cast<std::size_t>(index)];
      worst.row = row;
      for (int c = 0; c < d; ++c) {
        const double got = ho[static_cast<std::size_t>(row) * d + c];
        const double error = std::isfinite(got) ? std::abs(got - expected[static_cast<std::size_t>(c)]) : INFINITY;
        if (error > worst.max_abs_error) {
          worst.max_abs_error = error;
          worst.column = c;
        }
      }
    });
    for (const Comparison& row_result : per_row)
      if (row_result.max_abs_error > result.max_abs_error) {
        result.max_abs_error = row_result.max_abs_error;
        result.head = head;
        result.row = row_result.row;
        result.column = row_result.column;
      }
    result.rows += static_cast<std::int64_t>(rows.size());
  }
  return result;
}

Measurement CudaFailure(Measurement m, const char* what, cudaError_t error) {
  Note(error);
  cudaGetLastError();  // clear a non-sticky error so the next measurement starts clean
  return Failed(std::move(m), MeasureStatus::kError,
                Sprintf("%s: %s%s", what, ErrorText(error).c_str(),
                        context_lost ? " (the CUDA context is lost: restart to run more kernels)" : ""));
}

}  // namespace

// ---------------------------------------------------------------------------------------------------------------
// [SECTION] device status (public)

std::optional<std::string> CudaUnavailableReason() {
  if (std::string why = CudaDeviceUnavailableReason(); !why.empty()) return why;
  cudaFuncAttributes attributes;
  if (const cudaError_t error = cudaFuncGetAttributes(&attributes, ProbeKernel); error != cudaSuccess)
    return KernelImageUnavailableReason(error);
  if (context_lost) return std::string("the CUDA context was lost to an earlier kernel fault");
  return std::nullopt;
}

std::string DeviceName() {
  int device = 0;
  cudaDeviceProp properties{};
  if (cudaGetDevice(&device) != cudaSuccess || cudaGetDeviceProperties(&properties, device) != cudaSuccess) {
    cudaGetLastError();
    return "";
  }
  return properties.name;
}

std::string DeviceDescription() {
  int device = 0;
  cudaDeviceProp properties{};
  if (cudaGetDevice(&device) != cudaSuccess || cudaGetDeviceProperties(&properties, device) != cudaSuccess) {
    cudaGetLastError();
    return "";
  }
  return Sprintf("%s (sm_%d%d, %d SMs, %s)", properties.name, properties.major, properties.minor,
                 properties.multiProcessorCount, HumanBytes(static_cast<double>(properties.totalGlobalMem)).c_str());
}

bool CudaContextLost() { return context_lost; }

double Tolerance(DType dtype) {
  switch (dtype) {
    case DType::kFp32: return 1e-4;
    case DType::kFp16: return 4e-3;
    case DType::kBf16: return 1.6e-2;
  }
  return 0;
}

std::string_view MeasureStatusName(MeasureStatus status) {
  switch (status) {
    case MeasureStatus::kOk: return "ok";
    case MeasureStatus::kNotApplicable: return "not applicable";
    case MeasureStatus::kValidationFailed: return "validation failed";
    case MeasureStatus::kError: return "error";
  }
  return "?";
}

// ---------------------------------------------------------------------------------------------------------------
// [SECTION] MeasureVariant

BenchRow ToBenchRow(const SweepPoint& point, DType dtype, const Measurement& m, const std::string& gpu) {
  BenchRow row;
  row.kernel = point.variant->id;
  row.dtype = std::string(DTypeName(dtype));
  row.batch = point.shape.batch;
  row.heads = point.shape.heads;
  row.n = point.shape.n;
  row.d = point.shape.d;
  row.causal = point.shape.causal;
  row.gpu = gpu;
  const bool measured = m.Ok();
  row.ms_median = measured ? m.ms_median : NAN;
  row.ms_min = measured ? m.ms_min : NAN;
  row.tflops = measured ? m.tflops : NAN;
  row.max_abs_error = m.validated_rows > 0 ? m.max_abs_error : NAN;
  row.hbm_bytes = m.hbm_bytes > 0 ? m.hbm_bytes : NAN;
  row.status = measured ? "ok" : std::string(MeasureStatusName(m.status)) + ": " + m.reason;
  return row;
}

Measurement MeasureVariant(const VariantInfo& info, const AttentionShape& shape, DType dtype,
                           const MeasureOptions& options) {
  Measurement m;
  m.tolerance = info.tolerance ? info.tolerance(shape, dtype) : Tolerance(dtype);
  m.hbm_bytes = info.hbm_bytes ? info.hbm_bytes(shape, dtype) : 0;
  const Variant* variant = FindVariant(info.id);
  if (!variant) return Failed(m, MeasureStatus::kError, Sprintf("%s is not in this build's registry", info.id));
  if (auto reason = NotApplicable(*variant, shape, dtype)) return Failed(m, MeasureStatus::kNotApplicable, *reason);
  if (auto reason = CudaUnavailableReason()) return Failed(m, MeasureStatus::kError, *reason);
  if (options.repeats < 1 || options.warmup < 0)
    return Failed(m, MeasureStatus::kError, Sprintf("repeats = %d, warm-up = %d", options.repeats, options.warmup));

  // Memory: Q, K, V, O, the workspace and the L2 flush buffer; refuse (as not applicable) what cannot fit.
  const std::int64_t elements = shape.Heads() * shape.n * static_cast<std::int64_t>(shape.d);
  const std::size_t tensor_bytes = static_cast<std::size_t>(elements) * DTypeBytes(dtype);
  const std::size_t workspace_bytes = variant->workspace_bytes ? variant->workspace_bytes(shape, dtype) : 0;
  constexpr std::size_t kFlushBytes = 256u << 20;  // five times the 50 MB L2 of an H100/H200
  const std::size_t flush_bytes = options.flush_l2 && options.time ? kFlushBytes : 0;
  const double needed = 4.0 * static_cast<double>(tensor_bytes) + static_cast<double>(workspace_bytes) +
                        static_cast<double>(flush_bytes);
  std::size_t free_bytes = 0, total_bytes = 0;
  if (const cudaError_t error = cudaMemGetInfo(&free_bytes, &total_bytes); error != cudaSuccess)
    return CudaFailure(m, "cudaMemGetInfo", error);
  if (needed + (256u << 20) > static_cast<double>(free_bytes))
    return Failed(m, MeasureStatus::kNotApplicable,
                  Sprintf("needs %s of device memory (inputs, output, %s workspace); %s free",
                          HumanBytes(needed).c_str(), HumanBytes(static_cast<double>(workspace_bytes)).c_str(),
                          HumanBytes(static_cast<double>(free_bytes)).c_str()));

  DeviceBuffer q, k, v, o, workspace, flush, counter;
  for (auto [buffer, bytes] : {std::pair{&q, tensor_bytes}, {&k, tensor_bytes}, {&v, tensor_bytes},
                               {&o, tensor_bytes}, {&workspace, workspace_bytes}, {&flush, flush_bytes},
                               {&counter, sizeof(unsigned long long)}})
    if (const cudaError_t error = buffer->Allocate(bytes); error != cudaSuccess)
      return CudaFailure(m, "cudaMalloc", error);
  Stream stream;
  if (stream.error() != cudaSuccess) return CudaFailure(m, "cudaStreamCreate", stream.error());

  const std::uint64_t seed = options.seed;
  int tensor_index = 0;
  for (const DeviceBuffer* buffer : {&q, &k, &v})
    if (const cudaError_t error = FillTensor(dtype, buffer->get(), elements, seed, tensor_index++, options.pattern,
                                             shape.n, shape.d, stream.get());
        error != cudaSuccess)
      return CudaFailure(m, "filling the inputs", error);

  AttentionArgs args;
  args.shape = shape;
  args.dtype = dtype;
  args.q = q.get();
  args.k = k.get();
  args.v = v.get();
  args.o = o.get();
  args.workspace = workspace.get();
  args.workspace_bytes = workspace_bytes;
  args.options = options.variant_options;
  args.stream = stream.get();
  const auto run = [&]() -> cudaError_t {
    // NaN in every element first (0xFF bytes are NaN in fp32, fp16 and bf16): an element the variant does not
    // write cannot pass as a correct one left over from an earlier run.
    if (const cudaError_t error = cudaMemsetAsync(o.get(), 0xFF, tensor_bytes, stream.get()); error != cudaSuccess)
      return error;
    return variant->launch(args);
  };

  // 0. Options that reuse the workspace (flash3_fp8's prequantized inputs) find it filled by a launch without them.
  if (const unsigned reused = args.options & info.options_reusing_workspace; reused != 0) {
    AttentionArgs first = args;
    first.options &= ~reused;
    if (const cudaError_t error = variant->launch(first); error != cudaSuccess)
      return CudaFailure(m, "the launch that fills the workspace", error);
  }
  // 1. Validate.
  if (const cudaError_t error = run(); error != cudaSuccess) return CudaFailure(m, "launch", error);
  if (const cudaError_t error = cudaStreamSynchronize(stream.get()); error != cudaSuccess)
    return CudaFailure(m, "kernel", error);
  unsigned long long non_finite = 0;
  auto* counter_pointer = static_cast<unsigned long long*>(counter.get());
  if (const cudaError_t error = CountNonFiniteOn(dtype, o.get(), elements, counter_pointer, &non_finite, stream.get());
      error != cudaSuccess)
    return CudaFailure(m, "counting non-finite outputs", error);
  if (non_finite > 0)
    return Failed(
        m, MeasureStatus::kValidationFailed,
        Sprintf("%llu of %lld outputs not written or not finite", non_finite, static_cast<long long>(elements)));
  float descale[3];
  const bool rounded_inputs = info.input_rounding == InputRounding::kE4m3PerTensor;
  if (rounded_inputs) {
    int tensor = 0;
    for (const DeviceBuffer* buffer : {&q, &k, &v})
      if (const cudaError_t error = E4m3Descale(dtype, buffer->get(), elements, &descale[tensor++]);
          error != cudaSuccess)
        return CudaFailure(m, "reading the inputs' largest magnitude", error);
  }
  const Comparison comparison = CompareWithReference(shape, dtype, q.get(), k.get(), v.get(), o.get(), options,
                                                     rounded_inputs ? descale : nullptr);
  if (comparison.error != cudaSuccess) return CudaFailure(m, "copying for validation", comparison.error);
  m.max_abs_error = comparison.max_abs_error;
  m.validated_rows = comparison.rows;
  if (!(comparison.max_abs_error <= m.tolerance))
    return Failed(m, MeasureStatus::kValidationFailed,
                  Sprintf("max |error| %.3g > tolerance %.3g (head %lld, row %d, column %d)", comparison.max_abs_error,
                          m.tolerance, static_cast<long long>(comparison.head), comparison.row, comparison.column));
  if (!options.time) {
    m.status = MeasureStatus::kOk;
    return m;
  }

  // 2. Time: warm-up, then each repeat poisoned, L2 flushed, bracketed by events.
  for (int w = 0; w < options.warmup; ++w)
    if (const cudaError_t error = run(); error != cudaSuccess) return CudaFailure(m, "warm-up launch", error);
  std::vector<EventPair> events(static_cast<std::size_t>(options.repeats));
  for (std::size_t r = 0; r < events.size(); ++r) {
    if (events[r].error() != cudaSuccess) return CudaFailure(m, "cudaEventCreate", events[r].error());
    if (const cudaError_t error = cudaMemsetAsync(o.get(), 0xFF, tensor_bytes, stream.get()); error != cudaSuccess)
      return CudaFailure(m, "poisoning the output", error);
    if (flush_bytes > 0)
      if (const cudaError_t error = cudaMemsetAsync(flush.get(), static_cast<int>(r & 0x7F), flush_bytes, stream.get());
          error != cudaSuccess)
        return CudaFailure(m, "flushing L2", error);
    cudaEventRecord(events[r].start(), stream.get());
    if (const cudaError_t error = variant->launch(args); error != cudaSuccess) return CudaFailure(m, "launch", error);
    cudaEventRecord(events[r].stop(), stream.get());
  }
  if (const cudaError_t error = cudaStreamSynchronize(stream.get()); error != cudaSuccess)
    return CudaFailure(m, "timed kernels", error);
  std::vector<double> times;
  for (const EventPair& pair : events) {
    float ms = 0;
    if (const cudaError_t error = cudaEventElapsedTime(&ms, pair.start(), pair.stop()); error != cudaSuccess)
      return CudaFailure(m, "cudaEventElapsedTime", error);
    times.push_back(ms);
  }
  // The last timed run's output must be as complete as the validated one.
  if (const cudaError_t error = CountNonFiniteOn(dtype, o.get(), elements, counter_pointer, &non_finite, stream.get());
      error != cudaSuccess)
    return CudaFailure(m, "counting non-finite outputs", error);
  if (non_finite > 0)
    return Failed(m, MeasureStatus::kValidationFailed,
                  Sprintf("the timed runs left %llu outputs unwritten or not finite", non_finite));
  m.ms_median = Median(times);
  m.ms_min = *std::min_element(times.begin(), times.end());
  m.tflops = AttentionFlops(shape) / (m.ms_median * 1e-3) * 1e-12;
  m.status = MeasureStatus::kOk;
  return m;
}

}  // namespace flashviz::cuda
