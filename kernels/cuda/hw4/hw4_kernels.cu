// The hw4 kernels' table, dispatch and shape checks; the registry-signature launchers; the two small kernels
// of the pipeline and the benchmark (the non-finite input check and the reproducible random fill).
#include "kernels/cuda/hw4/hw4_kernels.h"

#include <array>

#include "kernels/cuda/hw4/hw4_internal.h"

namespace flashviz::cuda::hw4 {
namespace {

constexpr std::array<Hw4KernelInfo, 3> kKernels = {{
    {Hw4Kernel::kTf32x3, "tf32x3",
     "tensor cores, error-compensated TF32 (3 mma.sync m16n8k8 per product), fp32 accumulate; d <= 64"},
    {Hw4Kernel::kFp32Simt, "fp32-simt", "plain fp32 FFMA on the CUDA cores, 4x8 register blocks; d <= 64"},
    {Hw4Kernel::kFp32General, "fp32-general", "plain fp32, O_i in shared memory, any d up to 1024"},
}};

constexpr int kFastMaxHeadDim = 64;

int DeviceComputeCapability() {
  int device = 0, major = 0, minor = 0;
  if (cudaGetDevice(&device) != cudaSuccess ||
      cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, device) != cudaSuccess ||
      cudaDeviceGetAttribute(&minor, cudaDevAttrComputeCapabilityMinor, device) != cudaSuccess)
    return 0;
  return 10 * major + minor;
}

__global__ void FirstNonFiniteKernel(const float* __restrict__ x, long long count, unsigned long long base,
                                     unsigned long long* first) {
  const long long stride = static_cast<long long>(gridDim.x) * blockDim.x;
  for (long long i = blockIdx.x * static_cast<long long>(blockDim.x) + threadIdx.x; i < count; i += stride)
    if (!isfinite(x[i])) atomicMin(first, base + static_cast<unsigned long long>(i));
}

// SplitMix64's i-th output is a function of seed + (i + 1)·γ alone, so the sequential CPU stream can be
// produced in parallel. The float arithmetic is spelled out with _rn intrinsics so nvcc cannot contract it
// into an FMA the CPU does not do.
__global__ void FillUniformKernel(float* __restrict__ x, long long count, unsigned long long seed, float lo,
                                  float hi) {
  const long long stride = static_cast<long long>(gridDim.x) * blockDim.x;
  for (long long i = blockIdx.x * static_cast<long long>(blockDim.x) + threadIdx.x; i < count; i += stride) {
    unsigned long long z = seed + static_cast<unsigned long long>(i + 1) * 0x9E3779B97F4A7C15ull;
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    z ^= z >> 31;
    const float unit = __fmul_rn(static_cast<float>(z >> 40), 1.0f / 16777215.0f);
    x[i] = __fadd_rn(lo, __fmul_rn(__fsub_rn(hi, lo), unit));
  }
}

unsigned GridFor(long long count) {
  const long long blocks = (count + 255) / 256;
  return static_cast<unsigned>(blocks < 8192 ? (blocks > 0 ? blocks : 1) : 8192);
}

std::optional<std::string> CheckArgs(Hw4Kernel kernel, const AttentionShape& shape, DType dtype) {
  if (dtype != DType::kFp32) return std::string("fp32 only: the hw4 kernels compute the assignment's float32 format");
  if (shape.causal) return std::string("non-causal only: the assignment has no mask");
  if (shape.batch < 1 || shape.heads < 1 || shape.n < 1 || shape.d < 1)
    return "batch = " + std::to_string(shape.batch) + ", heads = " + std::to_string(shape.heads) +
           ", N = " + std::to_string(shape.n) + ", d = " + std::to_string(shape.d) + ": all must be positive";
  return Hw4KernelNotApplicable(kernel, shape.d);
}

cudaError_t LaunchWithArgs(Hw4Kernel kernel, const AttentionArgs& args) {
  if (CheckArgs(kernel, args.shape, args.dtype) || (args.options & ~kHw4AllOptions) != 0 || !args.q || !args.k ||
      !args.v || !args.o)
    return cudaErrorInvalidValue;
  const std::int64_t head_floats = static_cast<std::int64_t>(args.shape.n) * args.shape.d;
  Hw4Heads heads;
  heads.q = static_cast<const float*>(args.q);
  heads.k = static_cast<const float*>(args.k);
  heads.v = static_cast<const float*>(args.v);
  heads.o = static_cast<float*>(args.o);
  heads.qkv_stride = head_floats;
  heads.o_stride = head_floats;
  heads.heads = static_cast<std::int64_t>(args.shape.batch) * args.shape.heads;
  heads.n = args.shape.n;
  heads.d = args.shape.d;
  heads.scale = args.shape.scale;
  heads.options = args.options;
  return LaunchHw4Attention(kernel, heads, args.stream);
}

}  // namespace

std::span<const Hw4KernelInfo> Hw4Kernels() { return kKernels; }

const Hw4KernelInfo& Hw4KernelInfoOf(Hw4Kernel kernel) {
  for (const auto& info : kKernels)
    if (info.kernel == kernel) return info;
  return kKernels[0];
}

std::optional<Hw4Kernel> ParseHw4Kernel(std::string_view id) {
  for (const auto& info : kKernels)
    if (id == info.id) return info.kernel;
  return std::nullopt;
}

std::string Hw4KernelIdList() {
  std::string list;
  for (const auto& info : kKernels) list += (list.empty() ? "" : ", ") + std::string(info.id);
  return list;
}

// Chosen by measurement (NVIDIA H200, 2026-11-21, hw4_bench on the assignment's shapes): tf32x3 ran 54.7–65.8
// TFLOP/s, fp32-simt 33.0–36.7, on every shape measured. On GPUs whose TF32 tensor rate is no higher than their
// fp32 rate (GeForce Ampere) the order may flip: measure there before relying on this.
Hw4Kernel DefaultHw4Kernel(int d) { return d <= kFastMaxHeadDim ? Hw4Kernel::kTf32x3 : Hw4Kernel::kFp32General; }

std::optional<std::string> Hw4KernelNotApplicable(Hw4Kernel kernel, int d) {
  const std::string id = Hw4KernelInfoOf(kernel).id;
  if (d < 1) return "d = " + std::to_string(d) + ": the head dimension must be positive";
  switch (kernel) {
    case Hw4Kernel::kTf32x3:
      if (const int cc = DeviceComputeCapability(); cc != 0 && cc < 80)
        return id + " needs TF32 tensor cores (compute capability 8.0 or newer; this GPU has " +
               std::to_string(cc / 10) + "." + std::to_string(cc % 10) + ")";
      [[fallthrough]];
    case Hw4Kernel::kFp32Simt:
      if (d > kFastMaxHeadDim)
        return "d = " + std::to_string(d) + ": " + id +
               " takes d <= 64 (fast paths 32 and 64); fp32-general takes any d";
      return std::nullopt;
    case Hw4Kernel::kFp32General:
      return detail::Fp32GeneralNotApplicable(d);
  }
  return std::nullopt;
}

cudaError_t LaunchHw4Attention(Hw4Kernel kernel, const Hw4Heads& h, cudaStream_t stream) {
  if (h.heads < 1 || h.n < 1 || h.d < 1 || !h.q || !h.k || !h.v || !h.o || (h.options & ~kHw4AllOptions) != 0)
    return cudaErrorInvalidValue;
  if (kernel != Hw4Kernel::kFp32General && h.d > kFastMaxHeadDim) return cudaErrorInvalidValue;
  KernelParams p{};
  p.q = h.q;
  p.k = h.k;
  p.v = h.v;
  p.o = h.o;
  p.qkv_stride = h.qkv_stride;
  p.o_stride = h.o_stride;
  p.n = h.n;
  p.d = h.d;
  p.scale_log2 = h.scale * kLog2e;
  switch (kernel) {
    case Hw4Kernel::kTf32x3: return detail::LaunchTf32x3(p, h.heads, h.options, stream);
    case Hw4Kernel::kFp32Simt: return detail::LaunchFp32Simt(p, h.heads, h.options, stream);
    case Hw4Kernel::kFp32General: return detail::LaunchFp32General(p, h.heads, h.options, stream);
  }
  return cudaErrorInvalidValue;
}

double Hw4Flops(std::int64_t heads, int n, int d) {
  return 4.0 * static_cast<double>(heads) * static_cast<double>(n) * static_cast<double>(n) * d;
}

cudaError_t LaunchFirstNonFinite(const float* x, std::int64_t count, std::uint64_t base, unsigned long long* first,
                                 cudaStream_t stream) {
  if (count <= 0) return cudaSuccess;
  FirstNonFiniteKernel<<<GridFor(count), 256, 0, stream>>>(x, count, base, first);
  return cudaGetLastError();
}

cudaError_t LaunchFillUniform(float* x, std::int64_t count, std::uint64_t seed, float lo, float hi,
                              cudaStream_t stream) {
  if (count <= 0) return cudaSuccess;
  FillUniformKernel<<<GridFor(count), 256, 0, stream>>>(x, count, seed, lo, hi);
  return cudaGetLastError();
}

cudaError_t ProbeHw4KernelImage() {
  cudaFuncAttributes attributes{};
  return cudaFuncGetAttributes(&attributes, FillUniformKernel);
}

cudaError_t LaunchHw4Tf32x3(const AttentionArgs& args) { return LaunchWithArgs(Hw4Kernel::kTf32x3, args); }
cudaError_t LaunchHw4Fp32Simt(const AttentionArgs& args) { return LaunchWithArgs(Hw4Kernel::kFp32Simt, args); }
cudaError_t LaunchHw4Fp32General(const AttentionArgs& args) { return LaunchWithArgs(Hw4Kernel::kFp32General, args); }
std::optional<std::string> Hw4Tf32x3NotApplicable(const AttentionShape& shape, DType dtype) {
  return CheckArgs(Hw4Kernel::kTf32x3, shape, dtype);
}
std::optional<std::string> Hw4Fp32SimtNotApplicable(const AttentionShape& shape, DType dtype) {
  return CheckArgs(Hw4Kernel::kFp32Simt, shape, dtype);
}
std::optional<std::string> Hw4Fp32GeneralNotApplicable(const AttentionShape& shape, DType dtype) {
  return CheckArgs(Hw4Kernel::kFp32General, shape, dtype);
}
std::size_t Hw4WorkspaceBytes(const AttentionShape&, DType) { return 0; }

}  // namespace flashviz::cuda::hw4
