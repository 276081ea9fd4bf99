// Checking helpers for kernels/cuda/mma (see mma_check.h).
#include "kernels/cuda/mma/mma_check.h"

#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <algorithm>
#include <cmath>
#include <cstring>

#include "kernels/common/format.h"
#include "kernels/cpu/reference.h"

namespace flashviz::cuda::mma_check {
namespace {

__device__ std::uint64_t Mix64(std::uint64_t z) {
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

// One pair of N(0, 1) values per (seed, pair index), so the stream does not depend on the launch shape.
__global__ void FillNormalKernel(void* buffer, std::size_t count, DType dtype, std::uint64_t seed) {
  const std::size_t pairs = (count + 1) / 2;
  for (std::size_t pair = blockIdx.x * static_cast<std::size_t>(blockDim.x) + threadIdx.x; pair < pairs;
       pair += static_cast<std::size_t>(gridDim.x) * blockDim.x) {
    const std::uint64_t bits = Mix64(seed * 0x9E3779B97F4A7C15ull + pair + 1);
    const float u1 = (static_cast<float>(bits >> 40) + 1.0f) * (1.0f / 16777217.0f);  // (0, 1]
    const float u2 = static_cast<float>((bits >> 16) & 0xFFFFFF) * (1.0f / 16777216.0f);
    const float radius = sqrtf(-2.0f * logf(u1));
    float values[2];
    sincospif(2.0f * u2, &values[1], &values[0]);
    values[0] *= radius;
    values[1] *= radius;
    for (int e = 0; e < 2; ++e) {
      const std::size_t index = 2 * pair + e;
      if (index >= count) break;
      if (dtype == DType::kFp16) static_cast<__half*>(buffer)[index] = __float2half_rn(values[e]);
      else if (dtype == DType::kBf16) static_cast<__nv_bfloat16*>(buffer)[index] = __float2bfloat16_rn(values[e]);
      else static_cast<float*>(buffer)[index] = values[e];
    }
  }
}

__global__ void CountNonFiniteKernel(const void* buffer, std::size_t count, DType dtype,
                                     unsigned long long* non_finite) {
  unsigned long long local = 0;
  for (std::size_t i = blockIdx.x * static_cast<std::size_t>(blockDim.x) + threadIdx.x; i < count;
       i += static_cast<std::size_t>(gridDim.x) * blockDim.x) {
    float value;
    if (dtype == DType::kFp16) value = __half2float(static_cast<const __half*>(buffer)[i]);
    else if (dtype == DType::kBf16) value = __bfloat162float(static_cast<const __nv_bfloat16*>(buffer)[i]);
    else value = static_cast<const float*>(buffer)[i];
    if (!isfinite(value)) ++local;
  }
  if (local) atomicAdd(non_finite, local);
}

__device__ __forceinline__ unsigned long long GlobalTimerNs() {
  unsigned long long ns;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(ns));
  return ns;
}

// One thread a block spins for window_ns of global time and adds the SM cycles that passed (clock64 counts the
// cycles of the multiprocessor the block runs on) and the nanoseconds to the two totals.
__global__ void SmClockKernel(unsigned long long window_ns, unsigned long long* totals) {
  if (threadIdx.x != 0) return;
  const unsigned long long start_ns = GlobalTimerNs();
  const long long start_cycles = clock64();
  unsigned long long now_ns = start_ns;
  while (now_ns - start_ns < window_ns) now_ns = GlobalTimerNs();
  const long long cycles = clock64() - start_cycles;
  atomicAdd(&totals[0], static_cast<unsigned long long>(cycles));
  atomicAdd(&totals[1], now_ns - start_ns);
}

}  // namespace

std::size_t ElementBytes(DType dtype) { return dtype == DType::kFp32 ? 4 : 2; }
const char* DTypeName(DType dtype) {
  return dtype == DType::kFp16 ? "fp16" : dtype == DType::kBf16 ? "bf16" : "fp32";
}

cudaError_t FillNormal(void* buffer, std::size_t count, DType dtype, std::uint64_t seed, cudaStream_t stream) {
  FillNormalKernel<<<1024, 256, 0, stream>>>(buffer, count, dtype, seed);
  return cudaGetLastError();
}

cudaError_t MeasureSmClockMhz(cudaStream_t stream, double* mhz, int window_us) {
  int device = 0, multiprocessors = 0;
  cudaError_t status = cudaGetDevice(&device);
  if (status == cudaSuccess)
    status = cudaDeviceGetAttribute(&multiprocessors, cudaDevAttrMultiProcessorCount, device);
  unsigned long long* totals = nullptr;
  if (status == cudaSuccess) status = cudaMallocAsync(&totals, 2 * sizeof(*totals), stream);
  if (status != cudaSuccess) return status;
  status = cudaMemsetAsync(totals, 0, 2 * sizeof(*totals), stream);
  if (status == cudaSuccess) {
    SmClockKernel<<<multiprocessors, 32, 0, stream>>>(1000ull * static_cast<unsigned long long>(window_us), totals);
    status = cudaGetLastError();
  }
  unsigned long long host[2] = {0, 0};
  if (status == cudaSuccess) status = cudaMemcpyAsync(host, totals, sizeof(host), cudaMemcpyDeviceToHost, stream);
  const cudaError_t freed = cudaFreeAsync(totals, stream);
  if (status == cudaSuccess) status = freed;
  if (status == cudaSuccess) status = cudaStreamSynchronize(stream);
  if (status == cudaSuccess) *mhz = host[1] ? 1000.0 * static_cast<double>(host[0]) / static_cast<double>(host[1]) : 0;
  return status;
}

cudaError_t Poison(void* buffer, std::size_t count, DType dtype, cudaStream_t stream) {
  return cudaMemsetAsync(buffer, 0xFF, count * ElementBytes(dtype), stream);
}

cudaError_t CountNonFinite(const void* buffer, std::size_t count, DType dtype, cudaStream_t stream,
                           std::uint64_t* non_finite) {
  unsigned long long* device_count = nullptr;
  cudaError_t status = cudaMallocAsync(&device_count, sizeof(*device_count), stream);
  if (status != cudaSuccess) return status;
  cudaMemsetAsync(device_count, 0, sizeof(*device_count), stream);
  CountNonFiniteKernel<<<1024, 256, 0, stream>>>(buffer, count, dtype, device_count);
  unsigned long long host_count = 0;
  status = cudaGetLastError();
  if (status == cudaSuccess)
    status = cudaMemcpyAsync(&host_count, device_count, sizeof(host_count), cudaMemcpyDeviceToHost, stream);
  const cudaError_t free_status = cudaFreeAsync(device_count, stream);
  if (status == cudaSuccess) status = free_status;
  if (status == cudaSuccess) status = cudaStreamSynchronize(stream);
  *non_finite = host_count;
  return status;
}

float HalfBitsToFloat(std::uint16_t bits) {
  __half_raw raw;
  raw.x = bits;
  return __half2float(__half(raw));
}

float Bf16BitsToFloat(std::uint16_t bits) {
  const std::uint32_t widened = static_cast<std::uint32_t>(bits) << 16;
  float value;
  std::memcpy(&value, &widened, sizeof(value));
  return value;
}

double Tolerance(DType dtype) { return dtype == DType::kFp16 ? 2e-3 : dtype == DType::kBf16 ? 1e-2 : 1e-4; }

namespace {

// The device output of rows [row_begin, row_end) of one head and the float64 reference for them, row-major.
struct OutputAndReference {
  std::vector<float> output;
  std::vector<double> reference;
  std::string error;
};

OutputAndReference LoadOutputAndReference(const AttentionArgs& args, int head, int row_begin, int row_end) {
  OutputAndReference result;
  const int n = args.shape.n, d = args.shape.d;
  const std::size_t element = ElementBytes(args.dtype);
  const std::size_t head_elements = static_cast<std::size_t>(n) * d;
  const std::size_t head_offset = static_cast<std::size_t>(head) * head_elements * element;
  const std::size_t rows = static_cast<std::size_t>(row_end - row_begin);
  std::vector<unsigned char> q(head_elements * element), k(q.size()), v(q.size()), o(rows * d * element);
  const auto base = [&](const void* pointer) { return static_cast<const unsigned char*>(pointer) + head_offset; };
  cudaError_t status = cudaStreamSynchronize(args.stream);
  if (status == cudaSuccess) status = cudaMemcpy(q.data(), base(args.q), q.size(), cudaMemcpyDeviceToHost);
  if (status == cudaSuccess) status = cudaMemcpy(k.data(), base(args.k), k.size(), cudaMemcpyDeviceToHost);
  if (status == cudaSuccess) status = cudaMemcpy(v.data(), base(args.v), v.size(), cudaMemcpyDeviceToHost);
  if (status == cudaSuccess)
    status = cudaMemcpy(o.data(), base(args.o) + static_cast<std::size_t>(row_begin) * d * element, o.size(),
                        cudaMemcpyDeviceToHost);
  if (status != cudaSuccess) {
    result.error = Sprintf("copy to host failed: %s", cudaGetErrorString(status));
    return result;
  }
  const auto to_float = [&](const std::vector<unsigned char>& bytes) {
    std::vector<float> values(bytes.size() / element);
    for (std::size_t i = 0; i < values.size(); ++i) {
      if (args.dtype == DType::kFp32) {
        std::memcpy(&values[i], bytes.data() + 4 * i, 4);
      } else {
        std::uint16_t bits;
        std::memcpy(&bits, bytes.data() + 2 * i, 2);
        values[i] = args.dtype == DType::kFp16 ? HalfBitsToFloat(bits) : Bf16BitsToFloat(bits);
      }
    }
    return values;
  };
  const std::vector<float> qf = to_float(q), kf = to_float(k), vf = to_float(v);
  result.output = to_float(o);
  result.reference.resize(rows * d);
  ReferenceAttentionRows(qf.data(), kf.data(), vf.data(), n, d, args.shape.scale, args.shape.causal, row_begin,
                         row_end, result.reference.data());
  return result;
}

}  // namespace

RowComparison CompareRows(const AttentionArgs& args, int head, int row_begin, int row_end) {
  RowComparison result;
  const OutputAndReference loaded = LoadOutputAndReference(args, head, row_begin, row_end);
  if (!loaded.error.empty()) {
    result.error = loaded.error;
    return result;
  }
  const std::vector<float>& of = loaded.output;
  const std::vector<double>& reference = loaded.reference;
  double error_squared = 0, reference_squared = 0;
  for (std::size_t i = 0; i < reference.size(); ++i) {
    if (!std::isfinite(of[i])) {
      ++result.non_finite;
      continue;
    }
    const double difference = of[i] - reference[i];
    error_squared += difference * difference;
    reference_squared += reference[i] * reference[i];
    result.max_abs_error = std::max(result.max_abs_error, std::fabs(difference));
  }
  result.compared = reference.size();
  result.relative_error =
      reference_squared > 0 ? std::sqrt(error_squared / reference_squared) : std::sqrt(error_squared);
  return result;
}

std::vector<BlockError> BlockErrors(const AttentionArgs& args, int head, int row_begin, int row_end) {
  std::vector<BlockError> blocks;
  const OutputAndReference loaded = LoadOutputAndReference(args, head, row_begin, row_end);
  if (!loaded.error.empty()) return blocks;
  const int d = args.shape.d;
  for (int r0 = row_begin; r0 < row_end; r0 += 64)
    for (int c0 = 0; c0 < d; c0 += 64) {
      BlockError block{r0, std::min(row_end, r0 + 64), c0, std::min(d, c0 + 64), 0};
      double error_squared = 0, reference_squared = 0;
      for (int r = block.row_begin; r < block.row_end; ++r)
        for (int c = block.col_begin; c < block.col_end; ++c) {
          const std::size_t i = static_cast<std::size_t>(r - row_begin) * d + c;
          const double difference = std::isfinite(loaded.output[i]) ? loaded.output[i] - loaded.reference[i] : 1e30;
          error_squared += difference * difference;
          reference_squared += loaded.reference[i] * loaded.reference[i];
        }
      block.relative_error =
          reference_squared > 0 ? std::sqrt(error_squared / reference_squared) : std::sqrt(error_squared);
      blocks.push_back(block);
    }
  return blocks;
}

}  // namespace flashviz::cuda::mma_check
