// math: cuBLAS batched GEMMs around one softmax kernel: what PyTorch's math backend does. The yardstick.
//
// Not a step of the progression: the materializing algorithm of naive/tiled done with the vendor's GEMMs.
// S = scale·QKᵀ (cublasSgemmStridedBatched in fp32, no TF32; cublasGemmStridedBatchedEx with fp32 accumulation
// and S stored in the input dtype for fp16/bf16, as PyTorch does), P = softmax(S) (one block per row, online max
// and sum in one pass, then the write), O = PV (a second GEMM). The matrix products run near the library's
// speed; the B·H·N² elements of S and P still cross HBM four times.
// Mirrors: torch.nn.functional.scaled_dot_product_attention with the MATH backend (docs/peers.md's MATH column).
//
// Measured: kernels/README.md's progression table, from the CSVs of docs/results/ (its index says which run).
#include <cublas_v2.h>

#include <cmath>
#include <mutex>

#include "kernels/cuda/device_common.cuh"
#include "kernels/cuda/variants.h"

namespace flashviz::cuda {
namespace {

constexpr int kSoftmaxThreads = 256;
constexpr unsigned kFullMask = 0xffffffffu;

// One cuBLAS handle for the process (created on first use; a handle costs a few MB of device memory and ms to
// make), used under a mutex because a handle is not to be shared by threads at the same time.
std::mutex handle_mutex;
cublasHandle_t SharedHandle() {
  static cublasHandle_t handle = nullptr;
  if (!handle && cublasCreate(&handle) != CUBLAS_STATUS_SUCCESS) handle = nullptr;
  return handle;
}

// (m, ℓ) of two partial softmax sums of the same row merged: ℓ = ℓ₁e^(m₁ − m) + ℓ₂e^(m₂ − m), m = max(m₁, m₂).
__device__ __forceinline__ void Merge(float& m, float& l, float other_m, float other_l) {
  const float merged = fmaxf(m, other_m);
  if (merged == -INFINITY) return;  // both empty
  l = l * expf(m - merged) + other_l * expf(other_m - merged);
  m = merged;
}

// P = softmax(S) for one row (blockIdx.x over the B·H·N rows): one pass for m and ℓ (online), one for the write.
template <typename T>
__global__ void __launch_bounds__(kSoftmaxThreads) MathSoftmax(const T* __restrict__ s, T* __restrict__ p, int n,
                                                               bool causal) {
  __shared__ float warp_m[kSoftmaxThreads / 32], warp_l[kSoftmaxThreads / 32];
  const std::int64_t row = blockIdx.x;
  const int query = static_cast<int>(row % n);
  const int keys = causal ? query + 1 : n;  // causal: keys after the query get probability 0
  const T* s_row = s + row * n;
  T* p_row = p + row * n;
  float m = -INFINITY, l = 0.0f;
  for (int col = threadIdx.x; col < keys; col += kSoftmaxThreads) {
    const float x = device::ToFloat(s_row[col]);
    const float m_new = fmaxf(m, x);
    l = l * expf(m - m_new) + expf(x - m_new);
    m = m_new;
  }
  for (int offset = 16; offset > 0; offset /= 2)
    Merge(m, l, __shfl_xor_sync(kFullMask, m, offset), __shfl_xor_sync(kFullMask, l, offset));
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  if (lane == 0) {
    warp_m[warp] = m;
    warp_l[warp] = l;
  }
  __syncthreads();  // every warp's (m, ℓ) is in shared memory
  m = warp_m[0];
  l = warp_l[0];
  for (int w = 1; w < kSoftmaxThreads / 32; ++w) Merge(m, l, warp_m[w], warp_l[w]);
  const float inv_l = 1.0f / l;
  for (int col = threadIdx.x; col < n; col += kSoftmaxThreads)
    p_row[col] = device::FromFloat<T>(col < keys ? expf(device::ToFloat(s_row[col]) - m) * inv_l : 0.0f);
}

cudaDataType_t CublasType(DType dtype) {
  return dtype == DType::kFp16 ? CUDA_R_16F : dtype == DType::kBf16 ? CUDA_R_16BF : CUDA_R_32F;
}

template <typename T>
cudaError_t LaunchMathTyped(const AttentionArgs& args) {
  const AttentionShape& shape = args.shape;
  const int n = shape.n, d = shape.d;
  const int heads = static_cast<int>(shape.Heads());
  const long long n_d = static_cast<long long>(n) * d, n_n = static_cast<long long>(n) * n;
  T* s = static_cast<T*>(args.workspace);
  T* p = s + static_cast<long long>(heads) * n_n;
  const float zero = 0.0f, one = 1.0f, scale = shape.scale;
  const cudaDataType_t type = CublasType(args.dtype);

  std::lock_guard<std::mutex> lock(handle_mutex);
  cublasHandle_t handle = SharedHandle();
  if (!handle) return cudaErrorInitializationError;
  if (cublasSetStream(handle, args.stream) != CUBLAS_STATUS_SUCCESS ||
      cublasSetMathMode(handle, CUBLAS_DEFAULT_MATH) != CUBLAS_STATUS_SUCCESS)  // fp32 stays fp32: no TF32
    return cudaErrorUnknown;
  // Row-major S (N×N) = Q Kᵀ is column-major Sᵀ = K Qᵀ: with cuBLAS's column-major view of the row-major
  // buffers (K and Q read as d×N), that is op(A) = Aᵀ with A = K, B = Q.
  cublasStatus_t status =
      args.dtype == DType::kFp32
          ? cublasSgemmStridedBatched(handle, CUBLAS_OP_T, CUBLAS_OP_N, n, n, d, &scale,
                                      static_cast<const float*>(args.k), d, n_d, static_cast<const float*>(args.q), d,
                                      n_d, &zero, reinterpret_cast<float*>(s), n, n_n, heads)
          : cublasGemmStridedBatchedEx(handle, CUBLAS_OP_T, CUBLAS_OP_N, n, n, d, &scale, args.k, type, d, n_d, args.q,
                                       type, d, n_d, &zero, s, type, n, n_n, heads, CUBLAS_COMPUTE_32F,
                                       CUBLAS_GEMM_DEFAULT);
  if (status != CUBLAS_STATUS_SUCCESS) return cudaErrorUnknown;

  MathSoftmax<T><<<static_cast<unsigned>(static_cast<long long>(heads) * n), kSoftmaxThreads, 0, args.stream>>>(
      s, p, n, shape.causal);
  if (const cudaError_t error = cudaGetLastError(); error != cudaSuccess) return error;

  // Row-major O (N×d) = P V is column-major Oᵀ = Vᵀ Pᵀ: A = V (d×N as stored), B = P (N×N as stored).
  status = args.dtype == DType::kFp32
               ? cublasSgemmStridedBatched(handle, CUBLAS_OP_N, CUBLAS_OP_N, d, n, n, &one,
                                           static_cast<const float*>(args.v), d, n_d, reinterpret_cast<float*>(p), n,
                                           n_n, &zero, static_cast<float*>(args.o), d, n_d, heads)
               : cublasGemmStridedBatchedEx(handle, CUBLAS_OP_N, CUBLAS_OP_N, d, n, n, &one, args.v, type, d, n_d, p,
                                            type, n, n_n, &zero, args.o, type, d, n_d, heads, CUBLAS_COMPUTE_32F,
                                            CUBLAS_GEMM_DEFAULT);
  return status == CUBLAS_STATUS_SUCCESS ? cudaGetLastError() : cudaErrorUnknown;
}

}  // namespace

std::size_t MathWorkspaceBytes(const AttentionShape& shape, DType dtype) {
  return 2 * static_cast<std::size_t>(shape.Heads()) * shape.n * static_cast<std::size_t>(shape.n) * DTypeBytes(dtype);
}

cudaError_t LaunchMath(const AttentionArgs& args) {
  if (const cudaError_t invalid = CheckArgs("math", args); invalid != cudaSuccess) return invalid;
  switch (args.dtype) {
    case DType::kFp32: return LaunchMathTyped<float>(args);
    case DType::kFp16: return LaunchMathTyped<__half>(args);
    case DType::kBf16: return LaunchMathTyped<__nv_bfloat16>(args);
  }
  return cudaErrorInvalidValue;
}

}  // namespace flashviz::cuda
