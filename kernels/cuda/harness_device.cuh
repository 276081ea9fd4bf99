// What the harnesses (harness.cu, backward/backward_harness.cu, decode/decode_harness.cu, ring/ring_attention.cu)
// share on the device and around it: inputs hashed from their index, a device buffer that frees itself, the count of
// non-finite outputs (an element a variant did not write is NaN), device tensors read back as floats, the timed
// repeats, and the small helpers of a Measurement.
#pragma once

#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>
#include <functional>
#include <string>
#include <utility>
#include <vector>

#include "kernels/cuda/attention_types.h"
#include "kernels/cuda/device_common.cuh"
#include "kernels/cuda/harness.h"

namespace flashviz::cuda::harness_device {

// Element `index` of a tensor in its logical layout, uniform in [−1, 1) from a hash of (seed, tensor, index): a
// 24-bit integer times 2⁻²³, exact in float on the host and the device alike, so the host rebuilds any part of the
// inputs for the reference without copying them back (decoding, the ring).
__host__ __device__ inline float HashedInput(std::uint64_t seed, int tensor, std::uint64_t index) {
  std::uint64_t z = seed * 0x9E3779B97F4A7C15ull + static_cast<std::uint64_t>(tensor) * 0xD1B54A32D192ED03ull + index;
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;  // SplitMix64's finalizer
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  z ^= z >> 31;
  return static_cast<float>(static_cast<int>(z >> 40) - 8388608) * (1.0f / 8388608.0f);
}

// The value a kernel sees: HashedInput rounded to the dtype (the host's and the device's round-to-nearest agree).
inline float StoredHashedInput(DType dtype, std::uint64_t seed, int tensor, std::uint64_t index) {
  const float x = HashedInput(seed, tensor, index);
  return dtype == DType::kFp16   ? __half2float(__float2half_rn(x))
         : dtype == DType::kBf16 ? __bfloat162float(__float2bfloat16_rn(x))
                                 : x;
}

template <typename T>
__global__ void CountNonFinite(const T* x, std::int64_t count, unsigned long long* result) {
  unsigned local = 0;
  const std::int64_t stride = static_cast<std::int64_t>(gridDim.x) * blockDim.x;
  for (std::int64_t i = static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < count; i += stride)
    local += isfinite(device::ToFloat(x[i])) ? 0u : 1u;
  local = __reduce_add_sync(0xffffffffu, local);
  if (threadIdx.x % 32 == 0 && local > 0) atomicAdd(result, static_cast<unsigned long long>(local));
}

class DeviceBuffer {
 public:
  DeviceBuffer() = default;
  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;
  ~DeviceBuffer() {
    if (pointer_) cudaFree(pointer_);
  }
  cudaError_t Allocate(std::size_t bytes) { return bytes == 0 ? cudaSuccess : cudaMalloc(&pointer_, bytes); }
  void* get() const { return pointer_; }

 private:
  void* pointer_ = nullptr;
};

inline cudaError_t CountNonFiniteOn(DType dtype, const void* x, std::int64_t count, unsigned long long* counter,
                                    unsigned long long* result, cudaStream_t stream) {
  if (cudaError_t error = cudaMemsetAsync(counter, 0, sizeof(*counter), stream); error != cudaSuccess) return error;
  switch (dtype) {
    case DType::kFp32:
      CountNonFinite<<<1024, 256, 0, stream>>>(static_cast<const float*>(x), count, counter);
      break;
    case DType::kFp16:
      CountNonFinite<<<1024, 256, 0, stream>>>(static_cast<const __half*>(x), count, counter);
      break;
    case DType::kBf16:
      CountNonFinite<<<1024, 256, 0, stream>>>(static_cast<const __nv_bfloat16*>(x), count, counter);
      break;
  }
  if (cudaError_t error = cudaGetLastError(); error != cudaSuccess) return error;
  if (cudaError_t error = cudaMemcpyAsync(result, counter, sizeof(*result), cudaMemcpyDeviceToHost, stream);
      error != cudaSuccess)
    return error;
  return cudaStreamSynchronize(stream);
}

// Elements [offset, offset + count) of a device tensor of `dtype`, as floats (exact: fp16 and bf16 widen exactly).
inline cudaError_t CopyToHost(DType dtype, const void* x, std::int64_t offset, std::int64_t count,
                              std::vector<float>& out) {
  out.resize(static_cast<std::size_t>(count));
  const std::size_t element = DTypeBytes(dtype);
  const auto* source = static_cast<const unsigned char*>(x) + offset * static_cast<std::int64_t>(element);
  if (dtype == DType::kFp32) return cudaMemcpy(out.data(), source, count * element, cudaMemcpyDeviceToHost);
  std::vector<std::uint16_t> bits(static_cast<std::size_t>(count));
  if (cudaError_t error = cudaMemcpy(bits.data(), source, count * element, cudaMemcpyDeviceToHost);
      error != cudaSuccess)
    return error;
  for (std::size_t i = 0; i < bits.size(); ++i) {
    if (dtype == DType::kFp16) {
      __half_raw raw;
      raw.x = bits[i];
      out[i] = __half2float(__half(raw));
    } else {
      __nv_bfloat16_raw raw;
      raw.x = bits[i];
      out[i] = __bfloat162float(__nv_bfloat16(raw));
    }
  }
  return cudaSuccess;
}

inline double Median(std::vector<double> values) {
  std::sort(values.begin(), values.end());
  const std::size_t mid = values.size() / 2;
  return values.size() % 2 ? values[mid] : 0.5 * (values[mid - 1] + values[mid]);
}

inline Measurement Failed(Measurement m, MeasureStatus status, std::string reason) {
  m.status = status;
  m.reason = std::move(reason);
  return m;
}

// Reads every 16 bytes of x through the L2 (the sum lands in x[0] only in the impossible case that keeps the loads).
// A template, like CountNonFinite, so that every harness that includes this header can instantiate it.
template <typename Word>
__global__ void ReadThrough(Word* x, std::size_t count) {
  unsigned sum = 0;
  for (std::size_t i = static_cast<std::size_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < count;
       i += static_cast<std::size_t>(gridDim.x) * blockDim.x) {
    const uint4 v = __ldcg(x + i);
    sum ^= v.x ^ v.y ^ v.z ^ v.w;
  }
  if (sum == 0x9E3779B9u && threadIdx.x == 0) x[0].x = sum;
}

// How the L2 is emptied before each timed run: a write of the flush buffer (its lines left dirty: the timed kernel's
// first reads wait behind their write-back, tens of µs for a 50 MB L2), or a write then a read of it (the L2 left
// holding clean lines, so a kernel that runs for a few µs is timed, not the write-back).
enum class L2Flush { kWrite, kWriteThenRead };

// The timed runs: `warmup` untimed launches, then `repeats` launches each after `prepare` (the output poisoned) and,
// when `flush_bytes` > 0, a flush of the L2 through `flush`, each bracketed by events on `stream`. `times` gets each
// run's milliseconds; on an error, `stage` says which part failed.
inline cudaError_t TimeRepeats(int warmup, int repeats, const std::function<cudaError_t()>& launch,
                               const std::function<cudaError_t()>& prepare, void* flush, std::size_t flush_bytes,
                               cudaStream_t stream, std::vector<double>& times, const char** stage,
                               L2Flush flush_kind = L2Flush::kWrite) {
  *stage = "warm-up launch";
  for (int w = 0; w < warmup; ++w)
    if (const cudaError_t error = launch(); error != cudaSuccess) return error;
  std::vector<std::pair<cudaEvent_t, cudaEvent_t>> events(static_cast<std::size_t>(repeats));
  const auto destroy_events = [&] {
    for (auto& [start, stop] : events) {
      if (start) cudaEventDestroy(start);
      if (stop) cudaEventDestroy(stop);
    }
  };
  *stage = "timed launch";
  for (std::size_t r = 0; r < events.size(); ++r) {
    cudaError_t error = cudaEventCreate(&events[r].first);
    if (error == cudaSuccess) error = cudaEventCreate(&events[r].second);
    if (error == cudaSuccess) error = prepare();
    if (error == cudaSuccess && flush_bytes > 0)
      error = cudaMemsetAsync(flush, static_cast<int>(r & 0x7F), flush_bytes, stream);
    if (error == cudaSuccess && flush_bytes > 0 && flush_kind == L2Flush::kWriteThenRead) {
      ReadThrough<uint4><<<1024, 256, 0, stream>>>(static_cast<uint4*>(flush), flush_bytes / sizeof(uint4));
      error = cudaGetLastError();
    }
    if (error == cudaSuccess) error = cudaEventRecord(events[r].first, stream);
    if (error == cudaSuccess) error = launch();
    if (error == cudaSuccess) error = cudaEventRecord(events[r].second, stream);
    if (error != cudaSuccess) {
      destroy_events();
      return error;
    }
  }
  *stage = "timed kernels";
  times.clear();
  cudaError_t timing = cudaStreamSynchronize(stream);
  for (const auto& [start, stop] : events) {
    float ms = 0;
    if (timing == cudaSuccess) timing = cudaEventElapsedTime(&ms, start, stop);
    times.push_back(ms);
  }
  destroy_events();
  return timing;
}

}  // namespace flashviz::cuda::harness_device
