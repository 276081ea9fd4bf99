// The decode harness: inputs on the device (the paged pool shuffled), the variant validated against the float64
// reference with O poisoned first, then timed with CUDA events; and the copy kernel that measures the HBM ceiling.
// decode_harness.h says what and why.
//
// [SECTION] inputs: the value of every logical element, the contiguous and the paged fill
// [SECTION] validation against ReferenceDecode
// [SECTION] MeasureDecode
// [SECTION] MeasureCopyBandwidth
#include "kernels/cuda/decode/decode_harness.h"

#include <algorithm>
#include <cmath>
#include <memory>
#include <numeric>
#include <random>
#include <utility>
#include <vector>

#include "kernels/common/format.h"
#include "kernels/cpu/decode_reference.h"
#include "kernels/cuda/decode/decode_variants.h"
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
// [SECTION] inputs

enum Tensor : int { kQ = 0, kK = 1, kV = 2 };

// Inputs in their logical layout (Q: [B][H][R][d], K and V: [B][G][N][d]), hashed from (seed, tensor, index)
// (harness_device.cuh).
using harness_device::HashedInput;
using harness_device::StoredHashedInput;

template <typename T>
__global__ void FillLogical(T* x, std::int64_t count, std::uint64_t seed, int tensor) {
  const std::int64_t stride = static_cast<std::int64_t>(gridDim.x) * blockDim.x;
  for (std::int64_t i = static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < count; i += stride)
    x[i] = device::FromFloat<T>(HashedInput(seed, tensor, static_cast<std::uint64_t>(i)));
}

// The pool [blocks][G][P][d]: block `block` holds logical page owner[block] = b·pages + page of sequence b; every
// element gets its logical element's value, keys past N (the last page's tail) zero.
struct PoolShape {
  int kv_heads, page_size, kv_len, pages, d;
};
template <typename T>
__global__ void FillPool(T* pool, const std::int32_t* owner, std::int64_t count, std::uint64_t seed, int tensor,
                         PoolShape s) {
  const std::int64_t stride = static_cast<std::int64_t>(gridDim.x) * blockDim.x;
  for (std::int64_t i = static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < count; i += stride) {
    const int e = static_cast<int>(i % s.d);
    std::int64_t rest = i / s.d;
    const int offset = static_cast<int>(rest % s.page_size);
    rest /= s.page_size;
    const int g = static_cast<int>(rest % s.kv_heads);
    const std::int64_t logical_page = owner[rest / s.kv_heads];
    const std::int64_t b = logical_page / s.pages;
    const int key = static_cast<int>(logical_page % s.pages) * s.page_size + offset;
    const float value =
        key < s.kv_len
            ? HashedInput(seed, tensor, static_cast<std::uint64_t>(((b * s.kv_heads + g) * s.kv_len + key) * s.d + e))
            : 0.0f;
    pool[i] = device::FromFloat<T>(value);
  }
}

template <typename T>
cudaError_t FillInputs(const DecodeLaunchShape& p, std::uint64_t seed, void* q, void* k, void* v,
                       const std::int32_t* owner, cudaStream_t stream) {
  FillLogical<T><<<1024, 256, 0, stream>>>(static_cast<T*>(q), p.QueryRows() * p.d, seed, kQ);
  if (p.page_size > 0) {
    const PoolShape shape{p.kv_heads, p.page_size, p.kv_len, p.PagesPerSequence(), p.d};
    FillPool<T><<<4096, 256, 0, stream>>>(static_cast<T*>(k), owner, p.PoolElements(), seed, kK, shape);
    FillPool<T><<<4096, 256, 0, stream>>>(static_cast<T*>(v), owner, p.PoolElements(), seed, kV, shape);
  } else {
    FillLogical<T><<<4096, 256, 0, stream>>>(static_cast<T*>(k), p.KvElements(), seed, kK);
    FillLogical<T><<<4096, 256, 0, stream>>>(static_cast<T*>(v), p.KvElements(), seed, kV);
  }
  return cudaGetLastError();
}

// ---------------------------------------------------------------------------------------------------------------
// [SECTION] validation

struct Comparison {
  double max_error = 0;
  int worst_sequence = 0, worst_kv_head = 0;
  std::int64_t rows = 0;
  cudaError_t error = cudaSuccess;
};

// Each checked (sequence b, KV head g) is a problem of its own for the reference: the H/G query heads that read
// KV head g (adjacent in Q and O) against that head's N keys.
Comparison CompareWithReference(const DecodeLaunchShape& p, DType dtype, std::uint64_t seed, const void* o, bool all) {
  std::vector<std::pair<int, int>> pairs;
  if (all) {
    for (int b = 0; b < p.batch; ++b)
      for (int g = 0; g < p.kv_heads; ++g) pairs.emplace_back(b, g);
  } else {
    pairs = {{0, 0}};
    if (p.batch > 1 || p.kv_heads > 1) pairs.emplace_back(p.batch - 1, p.kv_heads - 1);  // the ends of the buffers
  }
  DecodeShape sub = p.Sequence();
  sub.heads = p.Group();
  sub.kv_heads = 1;
  const std::int64_t q_elements = static_cast<std::int64_t>(p.GroupRows()) * p.d;
  const std::int64_t kv_elements = static_cast<std::int64_t>(p.kv_len) * p.d;
  std::vector<float> q(static_cast<std::size_t>(q_elements)), k(static_cast<std::size_t>(kv_elements)),
      v(static_cast<std::size_t>(kv_elements)), got;
  Comparison result;
  for (const auto& [b, g] : pairs) {
    const std::int64_t q_first =
        (static_cast<std::int64_t>(b) * p.heads + static_cast<std::int64_t>(g) * p.Group()) * p.q_rows * p.d;
    const std::int64_t kv_first = (static_cast<std::int64_t>(b) * p.kv_heads + g) * kv_elements;
    for (std::int64_t i = 0; i < q_elements; ++i)
      q[static_cast<std::size_t>(i)] = StoredHashedInput(dtype, seed, kQ, static_cast<std::uint64_t>(q_first + i));
    for (std::int64_t i = 0; i < kv_elements; ++i) {
      k[static_cast<std::size_t>(i)] = StoredHashedInput(dtype, seed, kK, static_cast<std::uint64_t>(kv_first + i));
      v[static_cast<std::size_t>(i)] = StoredHashedInput(dtype, seed, kV, static_cast<std::uint64_t>(kv_first + i));
    }
    const std::vector<double> expected = ReferenceDecode(sub, q.data(), k.data(), v.data());
    if ((result.error = CopyToHost(dtype, o, q_first, q_elements, got)) != cudaSuccess) return result;
    for (std::int64_t i = 0; i < q_elements; ++i) {
      const double have = got[static_cast<std::size_t>(i)];
      const double error = std::isfinite(have) ? std::abs(have - expected[static_cast<std::size_t>(i)]) : INFINITY;
      if (!(error <= result.max_error)) {
        result.max_error = error;
        result.worst_sequence = b;
        result.worst_kv_head = g;
      }
    }
    result.rows += p.GroupRows();
  }
  return result;
}

DecodeMeasurement CudaFailure(DecodeMeasurement m, const char* what, cudaError_t error) {
  cudaGetLastError();  // clear a non-sticky error so that the next measurement starts clean
  m.status = MeasureStatus::kError;
  m.reason = Sprintf("%s: %s: %s", what, cudaGetErrorName(error), cudaGetErrorString(error));
  return m;
}

DecodeMeasurement Fail(DecodeMeasurement m, MeasureStatus status, std::string reason) {
  m.status = status;
  m.reason = std::move(reason);
  return m;
}

}  // namespace

double DecodeTolerance(DType dtype) {
  switch (dtype) {
    case DType::kFp16:
      return 2.0 / 2048.0;
    case DType::kBf16:
      return 2.0 / 256.0;
    case DType::kFp32:
      return 1e-4;  // no decode variant runs fp32; the forward harness's figure
  }
  return 0;
}

// ---------------------------------------------------------------------------------------------------------------
// [SECTION] MeasureDecode

DecodeMeasurement MeasureDecode(const VariantInfo& info, const DecodeLaunchShape& problem_in, DType dtype,
                                const DecodeMeasureOptions& options) {
  DecodeMeasurement m;
  m.tolerance = DecodeTolerance(dtype);
  DecodeLaunchShape problem = problem_in;
  const bool paged = DecodeVariantIsPaged(info);
  if (!paged) problem.page_size = 0;
  m.kv_bytes = DecodeKvCacheBytes(problem, dtype);
  m.hbm_bytes = m.kv_bytes;
  const DecodeVariant* variant = FindDecodeVariant(info.id);
  if (!variant) return Fail(m, MeasureStatus::kError, Sprintf("%s is not in this build's decode registry", info.id));
  if (auto reason = DecodeNotApplicable(info, problem, dtype)) return Fail(m, MeasureStatus::kNotApplicable, *reason);
  if (std::string why = CudaDeviceUnavailableReason(); !why.empty()) return Fail(m, MeasureStatus::kError, why);
  cudaFuncAttributes attributes;
  if (const cudaError_t error = cudaFuncGetAttributes(&attributes, FillLogical<__half>); error != cudaSuccess)
    return Fail(m, MeasureStatus::kError, KernelImageUnavailableReason(error));
  if (options.repeats < 1 || options.warmup < 0 || options.splits < 0)
    return Fail(m, MeasureStatus::kError,
                Sprintf("repeats = %d, warm-up = %d, splits = %d", options.repeats, options.warmup, options.splits));
  const bool naive = std::string_view(info.id) == "decode_naive";
  m.splits = naive ? 1 : DecodeSplits(problem, options.splits, DecodeSmCount());

  // Memory: Q, O, K, V (or their pools), the block table and its inverse, the split workspace, the L2 flush.
  const std::size_t element = DTypeBytes(dtype);
  const std::size_t q_bytes = static_cast<std::size_t>(problem.QueryRows()) * problem.d * element;
  const std::size_t kv_bytes =
      static_cast<std::size_t>(paged ? problem.PoolElements() : problem.KvElements()) * element;
  const std::size_t table_entries = static_cast<std::size_t>(problem.batch) * problem.PagesPerSequence();
  const std::size_t table_bytes = table_entries * sizeof(std::int32_t);
  const std::size_t workspace_bytes = naive ? 0 : DecodeWorkspaceBytes(problem, m.splits);
  constexpr std::size_t kFlushBytes = 256u << 20;  // five times the 50 MB L2 of an H100/H200
  const std::size_t flush_bytes = options.flush_l2 && options.time ? kFlushBytes : 0;
  const double needed = 2.0 * static_cast<double>(q_bytes) + 2.0 * static_cast<double>(kv_bytes) +
                        2.0 * static_cast<double>(table_bytes) + static_cast<double>(workspace_bytes + flush_bytes);
  std::size_t free_bytes = 0, total_bytes = 0;
  if (const cudaError_t error = cudaMemGetInfo(&free_bytes, &total_bytes); error != cudaSuccess)
    return CudaFailure(m, "cudaMemGetInfo", error);
  if (needed + (256u << 20) > static_cast<double>(free_bytes))
    return Fail(m, MeasureStatus::kNotApplicable,
                Sprintf("does not fit: needs %s of device memory (KV cache %s), %s free", HumanBytes(needed).c_str(),
                        HumanBytes(2.0 * static_cast<double>(kv_bytes)).c_str(),
                        HumanBytes(static_cast<double>(free_bytes)).c_str()));

  DeviceBuffer q, o, k, v, table, owner, workspace, flush, counter;
  for (auto [buffer, bytes] : {std::pair{&q, q_bytes},
                               {&o, q_bytes},
                               {&k, kv_bytes},
                               {&v, kv_bytes},
                               {&table, table_bytes},
                               {&owner, table_bytes},
                               {&workspace, workspace_bytes},
                               {&flush, flush_bytes},
                               {&counter, sizeof(unsigned long long)}})
    if (const cudaError_t error = buffer->Allocate(bytes); error != cudaSuccess)
      return CudaFailure(m, "cudaMalloc", error);
  cudaStream_t stream = nullptr;
  if (const cudaError_t error = cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking); error != cudaSuccess)
    return CudaFailure(m, "cudaStreamCreate", error);
  const std::unique_ptr<CUstream_st, cudaError_t (*)(cudaStream_t)> stream_owner(stream, cudaStreamDestroy);
  // The split workspace's arrival counters start at 0 (DecodeArgs); every launch leaves them so.
  if (workspace_bytes > 0)
    if (const cudaError_t error = cudaMemsetAsync(workspace.get(), 0, workspace_bytes, stream); error != cudaSuccess)
      return CudaFailure(m, "clearing the workspace", error);

  // The paged pool's pages in a random order: block_table[b][page] = a permutation of the pool's blocks; owner is
  // its inverse, which the fill uses to give every block its logical page's values.
  if (paged) {
    std::vector<std::int32_t> block_of(table_entries), page_of(table_entries);
    std::iota(block_of.begin(), block_of.end(), 0);
    std::shuffle(block_of.begin(), block_of.end(), std::mt19937_64(options.seed));
    for (std::size_t page = 0; page < table_entries; ++page)
      page_of[static_cast<std::size_t>(block_of[page])] = static_cast<std::int32_t>(page);
    // On the measurement's stream and waited for: a plain cudaMemcpy from pageable memory may return before its
    // DMA lands, and the non-blocking stream would not wait for it (measured: a fill that read a half-copied table).
    for (auto [buffer, host] : {std::pair{&table, &block_of}, {&owner, &page_of}})
      if (const cudaError_t error =
              cudaMemcpyAsync(buffer->get(), host->data(), table_bytes, cudaMemcpyHostToDevice, stream);
          error != cudaSuccess)
        return CudaFailure(m, "copying the block table", error);
    if (const cudaError_t error = cudaStreamSynchronize(stream); error != cudaSuccess)
      return CudaFailure(m, "copying the block table", error);
  }
  const auto* owner_pointer = static_cast<const std::int32_t*>(owner.get());
  const cudaError_t filled =
      dtype == DType::kFp16
          ? FillInputs<__half>(problem, options.seed, q.get(), k.get(), v.get(), owner_pointer, stream)
          : FillInputs<__nv_bfloat16>(problem, options.seed, q.get(), k.get(), v.get(), owner_pointer, stream);
  if (filled != cudaSuccess) return CudaFailure(m, "filling the inputs", filled);

  DecodeArgs args;
  args.shape = problem;
  args.dtype = dtype;
  args.q = q.get();
  args.k = k.get();
  args.v = v.get();
  args.o = o.get();
  args.block_table = static_cast<const std::int32_t*>(table.get());
  args.workspace = workspace.get();
  args.workspace_bytes = workspace_bytes;
  args.splits = options.splits;
  args.stream = stream;
  const std::int64_t o_elements = problem.QueryRows() * problem.d;
  // NaN in every element of O first (0xFF bytes are NaN in fp16 and bf16): an element the variant does not write
  // cannot pass as one left over from an earlier run.
  const auto poison = [&] { return cudaMemsetAsync(o.get(), 0xFF, q_bytes, stream); };
  auto* counter_pointer = static_cast<unsigned long long*>(counter.get());

  // 1. Validate.
  if (const cudaError_t error = poison(); error != cudaSuccess) return CudaFailure(m, "poisoning O", error);
  if (const cudaError_t error = variant->launch(args); error != cudaSuccess) return CudaFailure(m, "launch", error);
  if (const cudaError_t error = cudaStreamSynchronize(stream); error != cudaSuccess)
    return CudaFailure(m, "kernel", error);
  unsigned long long non_finite = 0;
  if (const cudaError_t error = CountNonFiniteOn(dtype, o.get(), o_elements, counter_pointer, &non_finite, stream);
      error != cudaSuccess)
    return CudaFailure(m, "counting non-finite outputs", error);
  if (non_finite > 0)
    return Fail(m, MeasureStatus::kValidationFailed,
                Sprintf("%llu of %lld output elements not written or not finite", non_finite,
                        static_cast<long long>(o_elements)));
  if (options.compare) {
    const Comparison comparison = CompareWithReference(problem, dtype, options.seed, o.get(), options.validate_all);
    if (comparison.error != cudaSuccess) return CudaFailure(m, "copying O for validation", comparison.error);
    m.max_abs_error = comparison.max_error;
    m.validated_rows = comparison.rows;
    if (!(comparison.max_error <= m.tolerance))
      return Fail(
          m, MeasureStatus::kValidationFailed,
          Sprintf("max |error| %.3g > tolerance %.3g (sequence %d, KV head %d, %d splits)", comparison.max_error,
                  m.tolerance, comparison.worst_sequence, comparison.worst_kv_head, m.splits));
  }
  if (!options.time) {
    m.status = MeasureStatus::kOk;
    return m;
  }

  // 2. Time: warm-up, then each repeat poisoned, L2 flushed, bracketed by events. The flush is written, then read:
  // a decoding step of a small cache lasts a few µs, less than the write-back of a 50 MB L2 left dirty by a
  // write-only flush, which would be timed in its place (scripts/peers.py --decode flushes the same way).
  std::vector<double> times;
  const char* stage = "";
  if (const cudaError_t error = harness_device::TimeRepeats(
          options.warmup, options.repeats, [&] { return variant->launch(args); }, poison, flush.get(), flush_bytes,
          stream, times, &stage, harness_device::L2Flush::kWriteThenRead);
      error != cudaSuccess)
    return CudaFailure(m, stage, error);
  if (const cudaError_t error = CountNonFiniteOn(dtype, o.get(), o_elements, counter_pointer, &non_finite, stream);
      error != cudaSuccess)
    return CudaFailure(m, "counting non-finite outputs", error);
  if (non_finite > 0)
    return Fail(m, MeasureStatus::kValidationFailed,
                Sprintf("the timed runs left %llu output elements unwritten or not finite", non_finite));
  m.ms_median = Median(times);
  m.ms_min = *std::min_element(times.begin(), times.end());
  m.tflops = DecodeFlops(problem) / (m.ms_median * 1e-3) * 1e-12;
  m.gbps = m.kv_bytes / (m.ms_median * 1e-3) * 1e-9;
  m.status = MeasureStatus::kOk;
  return m;
}

// ---------------------------------------------------------------------------------------------------------------
// [SECTION] MeasureCopyBandwidth

namespace {
__global__ void CopyKernel(const int4* __restrict__ source, int4* __restrict__ target, std::int64_t count) {
  const std::int64_t stride = static_cast<std::int64_t>(gridDim.x) * blockDim.x;
  for (std::int64_t i = static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < count; i += stride)
    target[i] = source[i];
}
}  // namespace

CopyBandwidth MeasureCopyBandwidth(std::size_t bytes, int repeats) {
  CopyBandwidth result;
  result.bytes = bytes / 16 * 16;
  const auto fail = [&](const char* what, cudaError_t error) {
    cudaGetLastError();
    result.error = Sprintf("%s: %s", what, cudaGetErrorString(error));
    return result;
  };
  if (std::string why = CudaDeviceUnavailableReason(); !why.empty()) {
    result.error = why;
    return result;
  }
  DeviceBuffer source, target;
  if (const cudaError_t error = source.Allocate(result.bytes); error != cudaSuccess) return fail("cudaMalloc", error);
  if (const cudaError_t error = target.Allocate(result.bytes); error != cudaSuccess) return fail("cudaMalloc", error);
  if (const cudaError_t error = cudaMemset(source.get(), 1, result.bytes); error != cudaSuccess)
    return fail("cudaMemset", error);
  const std::int64_t count = static_cast<std::int64_t>(result.bytes / 16);
  // Two blocks of 1024 threads per SM: every SM holds its maximum of 2048 threads, each with a 16-byte load in
  // flight, and the grid-stride loop needs no tail wave.
  const unsigned blocks = static_cast<unsigned>(std::max(1, DecodeSmCount()) * 2);
  const auto copy = [&] {
    CopyKernel<<<blocks, 1024>>>(static_cast<const int4*>(source.get()), static_cast<int4*>(target.get()), count);
    return cudaGetLastError();
  };
  if (const cudaError_t error = copy(); error != cudaSuccess) return fail("copy kernel", error);
  cudaEvent_t start = nullptr, stop = nullptr;
  cudaEventCreate(&start);
  cudaEventCreate(&stop);
  std::vector<double> times;
  for (int r = 0; r < std::max(1, repeats); ++r) {
    cudaEventRecord(start);
    copy();
    cudaEventRecord(stop);
    cudaEventSynchronize(stop);
    float ms = 0;
    cudaEventElapsedTime(&ms, start, stop);
    times.push_back(ms);
  }
  cudaEventDestroy(start);
  cudaEventDestroy(stop);
  if (const cudaError_t error = cudaDeviceSynchronize(); error != cudaSuccess) return fail("copy kernel", error);
  result.ms_median = Median(times);
  result.gbps = 2.0 * static_cast<double>(result.bytes) / (result.ms_median * 1e-3) * 1e-9;
  return result;
}

}  // namespace flashviz::cuda
