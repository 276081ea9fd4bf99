// The backward harness: inputs and the forward pass on the device, the variant validated against the float64
// reference with its outputs poisoned first, then timed with CUDA events. backward_harness.h says what and why.
//
// [SECTION] device kernels: inputs, the forward pass that makes O and L, the non-finite count
// [SECTION] host helpers: buffers, copies, the reference cache
// [SECTION] MeasureBackward
#include "kernels/cuda/backward/backward_harness.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <vector>

#include "kernels/common/format.h"
#include "kernels/cpu/backward_reference.h"
#include "kernels/cuda/backward/backward_variants.h"
#include "kernels/cuda/device_common.cuh"
#include "kernels/cuda/device_status.h"
#include "kernels/cuda/harness_device.cuh"

namespace flashviz::cuda {
namespace {

using harness_device::CopyToHost;
using harness_device::CountNonFiniteOn;
using harness_device::DeviceBuffer;
using harness_device::Failed;
using harness_device::Median;

// ---------------------------------------------------------------------------------------------------------------
// [SECTION] device kernels

// Tensor `tensor` (0 = Q, 1 = K, 2 = V, 3 = dO), uniform in [−1, 1], from a hash of (seed, tensor, index): the
// same seed gives the same inputs on any GPU in microseconds.
template <typename T>
__global__ void FillUniform(T* x, std::int64_t count, std::uint64_t seed, int tensor) {
  const std::int64_t stride = static_cast<std::int64_t>(gridDim.x) * blockDim.x;
  for (std::int64_t i = static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < count; i += stride) {
    std::uint64_t z = seed * 0x9E3779B97F4A7C15ull + static_cast<std::uint64_t>(tensor) * 0xD1B54A32D192ED03ull +
                      static_cast<std::uint64_t>(i);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;  // SplitMix64's finalizer
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    z ^= z >> 31;
    x[i] = device::FromFloat<T>(-1.0f + 2.0f * static_cast<float>(z >> 40) * (1.0f / 16777215.0f));
  }
}

// The forward pass the backward consumes: O (fp32) and L = m + log ℓ per row, one warp per query row, the
// online softmax over the keys one at a time (lane l holds dims l, l+32, ...). Simple and exact to fp32; not
// timed. The 8 warps of a block take 8 consecutive rows of one head, so each K/V row they read is an L1 hit
// for 7 of them.
constexpr int kForwardMaxD = 128;
template <typename T>
__global__ void ForwardRows(const T* __restrict__ q, const T* __restrict__ k, const T* __restrict__ v,
                            float* __restrict__ o, float* __restrict__ lse, std::int64_t rows, int n, int d,
                            float scale, bool causal) {
  constexpr int kSlots = kForwardMaxD / 32;
  const std::int64_t row = static_cast<std::int64_t>(blockIdx.x) * (blockDim.x / 32) + threadIdx.x / 32;
  const int lane = threadIdx.x % 32;
  if (row >= rows) return;
  const std::int64_t head_row0 = row / n * n;
  const int query = static_cast<int>(row - head_row0);
  float q_lane[kSlots], acc[kSlots];
#pragma unroll
  for (int u = 0; u < kSlots; ++u) {
    const int e = lane + 32 * u;
    q_lane[u] = e < d ? device::ToFloat(q[row * d + e]) : 0.0f;
    acc[u] = 0.0f;
  }
  float m = -INFINITY, l = 0.0f;
  const int keys = causal ? query + 1 : n;
  for (int key = 0; key < keys; ++key) {
    const T* k_row = k + (head_row0 + key) * d;
    const T* v_row = v + (head_row0 + key) * d;
    float s = 0.0f;
#pragma unroll
    for (int u = 0; u < kSlots; ++u)
      if (lane + 32 * u < d) s += q_lane[u] * device::ToFloat(k_row[lane + 32 * u]);
#pragma unroll
    for (int offset = 16; offset > 0; offset /= 2) s += __shfl_xor_sync(0xffffffffu, s, offset);
    s *= scale;
    const float m_new = fmaxf(m, s);
    const float alpha = expf(m - m_new), p = expf(s - m_new);
    l = l * alpha + p;
#pragma unroll
    for (int u = 0; u < kSlots; ++u)
      if (lane + 32 * u < d) acc[u] = acc[u] * alpha + p * device::ToFloat(v_row[lane + 32 * u]);
    m = m_new;
  }
#pragma unroll
  for (int u = 0; u < kSlots; ++u)
    if (lane + 32 * u < d) o[row * d + lane + 32 * u] = acc[u] / l;
  if (lane == 0) lse[row] = m + logf(l);
}

template <typename T>
__global__ void FromFloatKernel(const float* __restrict__ in, T* __restrict__ out, std::int64_t count) {
  const std::int64_t stride = static_cast<std::int64_t>(gridDim.x) * blockDim.x;
  for (std::int64_t i = static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < count; i += stride)
    out[i] = device::FromFloat<T>(in[i]);
}

// ---------------------------------------------------------------------------------------------------------------
// [SECTION] host helpers

// The dtype's kernels, picked once per call.
template <typename T>
cudaError_t PrepareInputs(const AttentionShape& shape, std::uint64_t seed, void* const (&inputs)[4], void* o,
                          float* o_fp32, float* lse, cudaStream_t stream) {
  const std::int64_t rows = shape.Heads() * shape.n, elements = rows * shape.d;
  for (int tensor = 0; tensor < 4; ++tensor)
    FillUniform<T><<<1024, 256, 0, stream>>>(static_cast<T*>(inputs[tensor]), elements, seed, tensor);
  constexpr int kWarps = 8;
  ForwardRows<T><<<static_cast<unsigned>((rows + kWarps - 1) / kWarps), kWarps * 32, 0, stream>>>(
      static_cast<const T*>(inputs[0]), static_cast<const T*>(inputs[1]), static_cast<const T*>(inputs[2]), o_fp32, lse,
      rows, shape.n, shape.d, shape.scale, shape.causal);
  // The backward pass reads O in the input dtype, as a framework's saved output would be.
  if (static_cast<void*>(o_fp32) != o)
    FromFloatKernel<T><<<1024, 256, 0, stream>>>(o_fp32, static_cast<T*>(o), elements);
  return cudaGetLastError();
}

// The float64 reference of one head, kept for the next variant measured on the same inputs: a sweep measures
// every variant of one N on one seed, and at N = 16384 the reference takes seconds per head. Only the entries of
// the latest inputs are kept.
class ReferenceCache {
 public:
  std::shared_ptr<const ReferenceGradients> Find(const std::string& inputs, std::int64_t head) {
    std::lock_guard<std::mutex> lock(mutex_);
    if (inputs != inputs_) return nullptr;
    const auto it = heads_.find(head);
    return it == heads_.end() ? nullptr : it->second;
  }
  void Store(const std::string& inputs, std::int64_t head, std::shared_ptr<const ReferenceGradients> gradients) {
    std::lock_guard<std::mutex> lock(mutex_);
    if (inputs != inputs_) {
      heads_.clear();
      inputs_ = inputs;
    }
    heads_[head] = std::move(gradients);
  }

 private:
  std::mutex mutex_;
  std::string inputs_;
  std::map<std::int64_t, std::shared_ptr<const ReferenceGradients>> heads_;
};
ReferenceCache reference_cache;

std::vector<std::int64_t> HeadsToCheck(const AttentionShape& shape, bool all_heads) {
  const std::int64_t heads = shape.Heads();
  std::set<std::int64_t> chosen;
  if (all_heads) {
    for (std::int64_t h = 0; h < heads; ++h) chosen.insert(h);
  } else if (shape.n <= 4096) {
    chosen = {0, heads / 2, heads - 1};
  } else {
    chosen = {heads - 1};  // the last head: its rows end the buffers, where an overrun would show
  }
  return {chosen.begin(), chosen.end()};
}

struct Comparison {
  double worst_relative = 0;  // max over dQ, dK, dV of max |error| / max |reference|
  const char* tensor = "";
  std::int64_t head = 0;
  std::int64_t heads = 0;
  cudaError_t error = cudaSuccess;
};

Comparison CompareWithReference(const AttentionShape& shape, DType dtype, void* const (&inputs)[4],
                                void* const (&gradients)[3], std::uint64_t seed, bool all_heads) {
  Comparison result;
  const std::int64_t head_elements = static_cast<std::int64_t>(shape.n) * shape.d;
  const std::string inputs_key = Sprintf("%d %d %d %d %d %a %s %llu", shape.batch, shape.heads, shape.n, shape.d,
                                         shape.causal ? 1 : 0, static_cast<double>(shape.scale),
                                         std::string(DTypeName(dtype)).c_str(), static_cast<unsigned long long>(seed));
  std::vector<float> host[4], got[3];
  for (const std::int64_t head : HeadsToCheck(shape, all_heads)) {
    const std::int64_t offset = head * head_elements;
    std::shared_ptr<const ReferenceGradients> reference = reference_cache.Find(inputs_key, head);
    if (!reference) {
      for (int tensor = 0; tensor < 4; ++tensor)
        if ((result.error = CopyToHost(dtype, inputs[tensor], offset, head_elements, host[tensor])) != cudaSuccess)
          return result;
      reference = std::make_shared<const ReferenceGradients>(ReferenceBackward(
          host[0].data(), host[1].data(), host[2].data(), host[3].data(), shape.n, shape.d, shape.scale, shape.causal));
      reference_cache.Store(inputs_key, head, reference);
    }
    const std::vector<double>* expected[3] = {&reference->dq, &reference->dk, &reference->dv};
    static constexpr const char* kNames[3] = {"dQ", "dK", "dV"};
    for (int tensor = 0; tensor < 3; ++tensor) {
      if ((result.error = CopyToHost(dtype, gradients[tensor], offset, head_elements, got[tensor])) != cudaSuccess)
        return result;
      double max_error = 0, max_reference = 0;
      for (std::int64_t i = 0; i < head_elements; ++i) {
        const double want = (*expected[tensor])[static_cast<std::size_t>(i)];
        const double have = got[tensor][static_cast<std::size_t>(i)];
        max_error = std::max(max_error, std::isfinite(have) ? std::abs(have - want) : INFINITY);
        max_reference = std::max(max_reference, std::abs(want));
      }
      // A tensor that is exactly zero (it cannot be for these inputs) would make any error infinitely relative.
      const double relative = max_reference > 0 ? max_error / max_reference : max_error;
      if (!(relative <= result.worst_relative)) {
        result.worst_relative = relative;
        result.tensor = kNames[tensor];
        result.head = head;
      }
    }
    ++result.heads;
  }
  return result;
}

Measurement CudaFailure(Measurement m, const char* what, cudaError_t error) {
  cudaGetLastError();  // clear a non-sticky error so that the next measurement starts clean
  return Failed(std::move(m), MeasureStatus::kError,
                Sprintf("%s: %s: %s", what, cudaGetErrorName(error), cudaGetErrorString(error)));
}

}  // namespace

double BackwardTolerance(DType dtype) {
  switch (dtype) {
    case DType::kFp32:
      return 1e-4;
    case DType::kFp16:
      return 16.0 / 2048.0;
    case DType::kBf16:
      return 16.0 / 256.0;
  }
  return 0;
}

// ---------------------------------------------------------------------------------------------------------------
// [SECTION] MeasureBackward

Measurement MeasureBackward(const VariantInfo& info, const AttentionShape& shape, DType dtype,
                            const MeasureOptions& options) {
  Measurement m;
  m.tolerance = BackwardTolerance(dtype);
  m.hbm_bytes = info.hbm_bytes ? info.hbm_bytes(shape, dtype) : 0;
  const BackwardVariant* variant = FindBackwardVariant(info.id);
  if (!variant)
    return Failed(m, MeasureStatus::kError, Sprintf("%s is not in this build's backward registry", info.id));
  if (auto reason = BackwardNotApplicable(*variant, shape, dtype))
    return Failed(m, MeasureStatus::kNotApplicable, *reason);
  if (shape.d > kForwardMaxD)
    return Failed(
        m, MeasureStatus::kNotApplicable,
        Sprintf("d = %d: the harness's forward pass (which makes O and L) runs d ≤ %d", shape.d, kForwardMaxD));
  if (std::string why = CudaDeviceUnavailableReason(); !why.empty()) return Failed(m, MeasureStatus::kError, why);
  cudaFuncAttributes attributes;
  if (const cudaError_t error = cudaFuncGetAttributes(&attributes, ForwardRows<float>); error != cudaSuccess)
    return Failed(m, MeasureStatus::kError, KernelImageUnavailableReason(error));
  if (options.repeats < 1 || options.warmup < 0)
    return Failed(m, MeasureStatus::kError, Sprintf("repeats = %d, warm-up = %d", options.repeats, options.warmup));

  // Memory: Q, K, V, O, dO, dQ, dK, dV, L, O in fp32 (half types), the workspace and the L2 flush buffer.
  const std::int64_t rows = shape.Heads() * shape.n, elements = rows * shape.d;
  const std::size_t tensor_bytes = static_cast<std::size_t>(elements) * DTypeBytes(dtype);
  const std::size_t o_fp32_bytes = dtype == DType::kFp32 ? 0 : static_cast<std::size_t>(elements) * sizeof(float);
  const std::size_t lse_bytes = static_cast<std::size_t>(rows) * sizeof(float);
  const std::size_t workspace_bytes = variant->workspace_bytes ? variant->workspace_bytes(shape, dtype) : 0;
  constexpr std::size_t kFlushBytes = 256u << 20;  // five times the 50 MB L2 of an H100/H200
  const std::size_t flush_bytes = options.flush_l2 && options.time ? kFlushBytes : 0;
  const double needed = 8.0 * static_cast<double>(tensor_bytes) + static_cast<double>(o_fp32_bytes + lse_bytes) +
                        static_cast<double>(workspace_bytes) + static_cast<double>(flush_bytes);
  std::size_t free_bytes = 0, total_bytes = 0;
  if (const cudaError_t error = cudaMemGetInfo(&free_bytes, &total_bytes); error != cudaSuccess)
    return CudaFailure(m, "cudaMemGetInfo", error);
  if (needed + (256u << 20) > static_cast<double>(free_bytes))
    return Failed(m, MeasureStatus::kNotApplicable,
                  Sprintf("needs %s of device memory (inputs, gradients, %s workspace); %s free",
                          HumanBytes(needed).c_str(), HumanBytes(static_cast<double>(workspace_bytes)).c_str(),
                          HumanBytes(static_cast<double>(free_bytes)).c_str()));

  DeviceBuffer q, k, v, dout, o, dq, dk, dv, o_fp32, lse, workspace, flush, counter;
  for (auto [buffer, bytes] : {std::pair{&q, tensor_bytes},
                               {&k, tensor_bytes},
                               {&v, tensor_bytes},
                               {&dout, tensor_bytes},
                               {&o, tensor_bytes},
                               {&dq, tensor_bytes},
                               {&dk, tensor_bytes},
                               {&dv, tensor_bytes},
                               {&o_fp32, o_fp32_bytes},
                               {&lse, lse_bytes},
                               {&workspace, workspace_bytes},
                               {&flush, flush_bytes},
                               {&counter, sizeof(unsigned long long)}})
    if (const cudaError_t error = buffer->Allocate(bytes); error != cudaSuccess)
      return CudaFailure(m, "cudaMalloc", error);
  cudaStream_t stream = nullptr;
  if (const cudaError_t error = cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking); error != cudaSuccess)
    return CudaFailure(m, "cudaStreamCreate", error);
  const std::unique_ptr<CUstream_st, cudaError_t (*)(cudaStream_t)> stream_owner(stream, cudaStreamDestroy);

  void* const inputs[4] = {q.get(), k.get(), v.get(), dout.get()};
  void* const gradients[3] = {dq.get(), dk.get(), dv.get()};
  auto* o_float = static_cast<float*>(dtype == DType::kFp32 ? o.get() : o_fp32.get());
  auto* lse_float = static_cast<float*>(lse.get());
  cudaError_t prepared = cudaSuccess;
  switch (dtype) {
    case DType::kFp32:
      prepared = PrepareInputs<float>(shape, options.seed, inputs, o.get(), o_float, lse_float, stream);
      break;
    case DType::kFp16:
      prepared = PrepareInputs<__half>(shape, options.seed, inputs, o.get(), o_float, lse_float, stream);
      break;
    case DType::kBf16:
      prepared = PrepareInputs<__nv_bfloat16>(shape, options.seed, inputs, o.get(), o_float, lse_float, stream);
      break;
  }
  if (prepared != cudaSuccess) return CudaFailure(m, "inputs and the forward pass", prepared);

  BackwardArgs args;
  args.shape = shape;
  args.dtype = dtype;
  args.q = q.get();
  args.k = k.get();
  args.v = v.get();
  args.o = o.get();
  args.dout = dout.get();
  args.lse = lse_float;
  args.dq = dq.get();
  args.dk = dk.get();
  args.dv = dv.get();
  args.workspace = workspace.get();
  args.workspace_bytes = workspace_bytes;
  args.options = options.variant_options;
  args.stream = stream;
  // NaN in every gradient element first (0xFF bytes are NaN in fp32, fp16 and bf16): an element the variant does
  // not write cannot pass as one left over from an earlier run.
  const auto poison = [&]() -> cudaError_t {
    for (void* gradient : gradients)
      if (const cudaError_t error = cudaMemsetAsync(gradient, 0xFF, tensor_bytes, stream); error != cudaSuccess)
        return error;
    return cudaSuccess;
  };
  auto* counter_pointer = static_cast<unsigned long long*>(counter.get());
  const auto count_unwritten = [&](unsigned long long& total) -> cudaError_t {
    total = 0;
    for (void* gradient : gradients) {
      unsigned long long count = 0;
      if (const cudaError_t error = CountNonFiniteOn(dtype, gradient, elements, counter_pointer, &count, stream);
          error != cudaSuccess)
        return error;
      total += count;
    }
    return cudaSuccess;
  };

  // 1. Validate.
  if (const cudaError_t error = poison(); error != cudaSuccess) return CudaFailure(m, "poisoning the gradients", error);
  if (const cudaError_t error = variant->launch(args); error != cudaSuccess) return CudaFailure(m, "launch", error);
  if (const cudaError_t error = cudaStreamSynchronize(stream); error != cudaSuccess)
    return CudaFailure(m, "kernel", error);
  unsigned long long non_finite = 0;
  if (const cudaError_t error = count_unwritten(non_finite); error != cudaSuccess)
    return CudaFailure(m, "counting non-finite gradients", error);
  if (non_finite > 0)
    return Failed(m, MeasureStatus::kValidationFailed,
                  Sprintf("%llu of %lld gradient elements not written or not finite", non_finite,
                          static_cast<long long>(3 * elements)));
  const Comparison comparison =
      CompareWithReference(shape, dtype, inputs, gradients, options.seed, options.validate_all_rows);
  if (comparison.error != cudaSuccess) return CudaFailure(m, "copying for validation", comparison.error);
  m.max_abs_error = comparison.worst_relative;
  m.validated_rows = comparison.heads * shape.n;
  if (!(comparison.worst_relative <= m.tolerance))
    return Failed(m, MeasureStatus::kValidationFailed,
                  Sprintf("%s: max |error| / max |reference| %.3g > tolerance %.3g (head %lld)", comparison.tensor,
                          comparison.worst_relative, m.tolerance, static_cast<long long>(comparison.head)));
  if (!options.time) {
    m.status = MeasureStatus::kOk;
    return m;
  }

  // 2. Time: warm-up, then each repeat poisoned, L2 flushed, bracketed by events.
  std::vector<double> times;
  const char* stage = "";
  if (const cudaError_t error = harness_device::TimeRepeats(
          options.warmup, options.repeats, [&] { return variant->launch(args); }, poison, flush.get(), flush_bytes,
          stream, times, &stage);
      error != cudaSuccess)
    return CudaFailure(m, stage, error);
  // The last timed run's gradients must be as complete as the validated ones.
  if (const cudaError_t error = count_unwritten(non_finite); error != cudaSuccess)
    return CudaFailure(m, "counting non-finite gradients", error);
  if (non_finite > 0)
    return Failed(m, MeasureStatus::kValidationFailed,
                  Sprintf("the timed runs left %llu gradient elements unwritten or not finite", non_finite));
  m.ms_median = Median(times);
  m.ms_min = *std::min_element(times.begin(), times.end());
  m.tflops = BackwardFlops(shape) / (m.ms_median * 1e-3) * 1e-12;
  m.status = MeasureStatus::kOk;
  return m;
}

}  // namespace flashviz::cuda
