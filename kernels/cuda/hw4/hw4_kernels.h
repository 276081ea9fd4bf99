// The fp32 attention kernels of `flashviz hw4 --backend cuda`: O = softmax(scale·QKᵀ)·V for many
// independent heads, within the assignment's 5e-3 of the float64 answer on every valid input.
//
//   tf32x3        tensor cores, error-compensated TF32 (a = hi + lo, a·b ≈ hi·hi + hi·lo + lo·hi, fp32
//                 accumulate) through mma.sync m16n8k8; d ≤ 64 (fast paths d = 32, 64; other d zero-padded)
//   fp32-simt     plain fp32 FFMA on the CUDA cores, register-blocked; d ≤ 64 (same paths)
//   fp32-general  plain fp32, any d up to kMaxHeadDim (O_i accumulated in shared memory, d in chunks of 64)
//
// `auto` (DefaultHw4Kernel) picks by measurement on the GPU machine: tf32x3 for d ≤ 64 (1.8× fp32-simt on an
// H200), fp32-general above; README.md, "hw4 on the GPU", has the table. Single TF32 or fp16 arithmetic cannot
// hold 5e-3 (tests/kernels/cuda/hw4/rounding_model_test.cpp).
// Besides this interface each kernel also has the registry's AttentionArgs signature (attention_launch.h).
#pragma once

#include <cuda_runtime.h>

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>

#include "kernels/cuda/attention_launch.h"

namespace flashviz::cuda::hw4 {

enum class Hw4Kernel : std::uint8_t { kTf32x3, kFp32Simt, kFp32General };

struct Hw4KernelInfo {
  Hw4Kernel kernel;
  const char* id;       // what --kernel takes
  const char* summary;  // one line for --help and tables
};
std::span<const Hw4KernelInfo> Hw4Kernels();
const Hw4KernelInfo& Hw4KernelInfoOf(Hw4Kernel kernel);
std::optional<Hw4Kernel> ParseHw4Kernel(std::string_view id);
// "tf32x3, fp32-simt, fp32-general": for error messages and --help.
std::string Hw4KernelIdList();

// The kernel `auto` runs for head dimension d.
Hw4Kernel DefaultHw4Kernel(int d);
// Why `kernel` cannot run head dimension d on the current device, or nothing when it can.
std::optional<std::string> Hw4KernelNotApplicable(Hw4Kernel kernel, int d);

// Hw4Heads::options / AttentionArgs::options bits (0 = each kernel as chosen by measurement).
enum Hw4Options : unsigned {
  // tf32x3 with d = 32 or 64: set the register budget for one more block per multiprocessor (3 instead of 2 at
  // d = 64, 4 instead of 3 at d = 32), at the price of a few spilled registers.
  kHw4AltOccupancy = 1u << 0,
  // tf32x3 with d = 32 or 64: accumulate O_i across all K/V tiles inside the mma instructions (the first
  // version) instead of per tile, with the running sum kept by fp32 FFMA; the tensor cores' accumulation
  // rounds toward zero, so this is less exact at large N.
  kHw4OInTensorCores = 1u << 1,
};
inline constexpr unsigned kHw4AllOptions = kHw4AltOccupancy | kHw4OInTensorCores;

// `heads` independent attention problems. Head h reads Q at q + h·qkv_stride (N×d, row-major), K at
// k + h·qkv_stride, V at v + h·qkv_stride, and writes O at o + h·o_stride. In an HW4 file's layout
// (per batch Q, K, V) k = q + N·d, v = q + 2·N·d and qkv_stride = 3·N·d.
struct Hw4Heads {
  const float* q = nullptr;
  const float* k = nullptr;
  const float* v = nullptr;
  std::int64_t qkv_stride = 0;
  float* o = nullptr;
  std::int64_t o_stride = 0;
  std::int64_t heads = 0;
  int n = 0;
  int d = 0;
  float scale = 1.0f;
  unsigned options = 0;  // Hw4Options
};

// Enqueues the kernel on `stream`. cudaErrorInvalidValue for a shape the kernel does not run (see
// Hw4KernelNotApplicable); otherwise the launch's own error.
cudaError_t LaunchHw4Attention(Hw4Kernel kernel, const Hw4Heads& heads, cudaStream_t stream);

// Floating-point operations of `heads` heads, counted as the FlashAttention papers do: 4·N²·d per head.
double Hw4Flops(std::int64_t heads, int n, int d);

// Sets *first (device memory) to min(*first, base + i) for every element i of x[0, count) that is NaN or
// infinite: the input check of the GPU pipeline, done where the data already is.
cudaError_t LaunchFirstNonFinite(const float* x, std::int64_t count, std::uint64_t base,
                                 unsigned long long* first, cudaStream_t stream);

// Fills x[0, count) with exactly the values FillUniform(x, seed, lo, hi) gives on the CPU (the i-th output of
// SplitMix64(seed)), so GPU benchmarks and `flashviz gen --seed` see the same inputs.
cudaError_t LaunchFillUniform(float* x, std::int64_t count, std::uint64_t seed, float lo, float hi,
                              cudaStream_t stream);

// cudaSuccess when this build holds machine code (or PTX) the current GPU can run; otherwise the runtime's
// reason (cudaErrorNoKernelImageForDevice, cudaErrorInsufficientDriver, ...).
cudaError_t ProbeHw4KernelImage();

// The registry's signature (attention_launch.h): fp32, non-causal, batch × heads independent heads.
cudaError_t LaunchHw4Tf32x3(const AttentionArgs& args);
cudaError_t LaunchHw4Fp32Simt(const AttentionArgs& args);
cudaError_t LaunchHw4Fp32General(const AttentionArgs& args);
std::optional<std::string> Hw4Tf32x3NotApplicable(const AttentionShape& shape, DType dtype);
std::optional<std::string> Hw4Fp32SimtNotApplicable(const AttentionShape& shape, DType dtype);
std::optional<std::string> Hw4Fp32GeneralNotApplicable(const AttentionShape& shape, DType dtype);
std::size_t Hw4WorkspaceBytes(const AttentionShape& shape, DType dtype);  // 0: none of them needs scratch

}  // namespace flashviz::cuda::hw4
