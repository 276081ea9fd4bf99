// flash3_fp8: FlashAttention's forward pass on e4m3 inputs, flash3_wgmma's kernel (flash3_kernel.cuh) with the
// 8-bit wgmma (m64nNk32, fp32 accumulators). FlashAttention-3 (Shah et al., 2024, section 3.3) does the same on
// Hopper; PyTorch's SDPA has no fp8 path.
//
// [SECTION] index
//   1. Quantization: absolute maxima, Q and K to e4m3, V to e4m3 transposed (keys in the kernel's P̃ order)
//   2. Host: workspace, tensor maps, the registry's three functions
//
// Per-tensor scales: x̂ = descale_x · e4m3(x·(1/descale_x)), descale_x = max|x| / 448, so each tensor's largest
// value maps to e4m3's largest. The kernel multiplies the raw e4m3 products and folds the factors back in:
// S = descale_q · descale_k · (Q₈ K₈ᵀ) inside the exponent's scale, O = descale_v · (P̃₈ V₈) / ℓ at the end.
// Inside the kernel P̃ (scaled by 2^8, flash3_kernel.cuh) is rounded to e4m3 for P̃V. ℓ sums the rounded P̃ at
// d = 128 (on the tensor cores, as 8 more columns of P̃V: Traits::kRowSumOnTensorCores) and the unrounded P̃ in fp32
// at d = 256.
//
// Error bound (tests/kernels/cuda/mma/flash3_fp8_test.cpp evaluates it per element in float64, and
// kernels/README.md reports the measured error next to it). For row i with exact scores s_j = scale·q̂·k̂_j on the
// dequantized inputs, p_j = e^(s_j − max s), ℓ = Σ p_j, O = Σ p_j v̂_j / ℓ:
//   - S: the products of two e4m3 are exact, but Hopper's fp8 tensor cores do not keep all of fp32 while they add
//     (about 14 bits, DeepSeek-V3 technical report, 2024): we take a relative error of 2^-14 per k32 step added
//     into an accumulator, ε_S = 2^-14·(d/32 + 1) of Σ_l |q̂_l k̂_l|, so |ŝ_j − s_j| ≤ E = scale·ε_S·max_j
//     Σ_l |q̂_l k̂_jl| (+ 2^-13 for the exponential itself: 2^-22 on the special-function unit, 7.5e-5 for the
//     polynomial that computes part of them, flash3_kernel.cuh). Every p_j/ℓ then moves by at most a factor
//     κ = e^(2E) (E in the numerator and in ℓ).
//   - P̃ to e4m3 (3 mantissa bits, round to nearest): relative error u = 2^-4 where P̃·2^8 is normal (p ≥ 2^-14),
//     else at most min(p, 2^-18) absolute (half of the subnormal spacing 2^-9, over 2^8).
//   - P̃V accumulates over all N keys, 4 k32 steps per 128-key tile: ε_O = 2^-14·(4⌈N/128⌉ + 1); O is rounded to
//     bf16 (relative 2^-8).
//   d = 256, ℓ an fp32 sum of the unrounded P̃ (up to N terms: N·2^-26, added to E):
//   |Ô_n − O_n| ≤ [(κ(1+ε_O) − 1)·Σ_j p_j |v̂_jn| + κ(1+ε_O)·Σ_j r_j |v̂_jn|] / ℓ + 2^-8·(|O_n| + that),
//   with r_j the P̃ rounding bound above.
//   d = 128, ℓ the sum of the rounded P̃ on the tensor cores, each tile's 4 k32 steps from zero and then added in
//   fp32 (ε_L = 5·2^-14 + 3⌈N/128⌉·2^-24): the kernel's weights are w_j = P̃_j + ρ_j with P̃_j = c·p_j·e^(δ_j)
//   (|δ_j| ≤ E, c common) and |ρ_j| ≤ √κ·c·r_j, and also ≤ P̃_j/16 where normal and ≤ min(P̃_j, 2^-18·c) where not,
//   so Σ w_j ≥ c·D with D = Σ_j max(0, (15/16)·p_j/√κ − 2^-18); their weighted mean of v̂ differs from O by
//   Σ_j (w_j − c·p_j)(v̂_j − O)/Σ w_j (as Σ p_j (v̂_j − O) = 0):
//     M = [(√κ − 1)·Σ_j p_j (|v̂_jn| + |O_n|) + √κ·Σ_j r_j (|v̂_jn| + |O_n|)] / D,
//   and the two accumulations add A = [ε_O·√κ·Σ_j (p_j + r_j)|v̂_jn| / D + ε_L·(|O_n| + M)] / (1 − ε_L):
//   |Ô_n − O_n| ≤ M + A + 2^-8·(|O_n| + M + A).
//   Against the unquantized inputs add the inputs' own rounding: the score
//   perturbation |scale·(q̂·k̂_j − q·k_j)| joins E, and Σ_j p_j |v̂_jn − v_jn| / ℓ joins the sum (each x̂ is within
//   2^-4·|x| of x, or 2^-10·descale_x below e4m3's normal range).
#include "kernels/cuda/mma/flash3_fp8.h"

#include <cuda.h>
#include <cuda_bf16.h>
#include <cuda_fp8.h>
#include <cuda_runtime.h>

#include <cmath>
#include <cstdint>
#include <type_traits>

#include "kernels/common/format.h"
#include "kernels/cuda/device_status.h"
#include "kernels/cuda/mma/flash3_kernel.cuh"
#include "kernels/cuda/mma/hopper_host.h"

#if defined(__CUDA_ARCH__) && !defined(__CUDA_ARCH_FEAT_SM90_ALL)
#error "flash3_fp8.cu must be compiled for sm_90a only (-gencode=arch=compute_90a,code=sm_90a): wgmma, setmaxnreg"
#endif

namespace flashviz::cuda {
namespace fp8_detail {

// ---------------------------------------------------------------------------------------------------------
// [SECTION] 1. Quantization
// ---------------------------------------------------------------------------------------------------------

constexpr float kE4m3Max = 448.0f;

// max |x| of Q, K and V (blockIdx.y picks the tensor), 8 elements (16 bytes) a load, as float bits: non-negative
// floats order as integers. `elements` is a multiple of 8 (d is).
__global__ void AbsMaxKernel(const __nv_bfloat16* q, const __nv_bfloat16* k, const __nv_bfloat16* v, long long elements,
                             std::uint32_t* amax) {
  const auto* x = reinterpret_cast<const uint4*>(blockIdx.y == 0 ? q : blockIdx.y == 1 ? k : v);
  float local = 0.0f;
  for (long long i = blockIdx.x * static_cast<long long>(blockDim.x) + threadIdx.x; i < elements / 8;
       i += static_cast<long long>(gridDim.x) * blockDim.x) {
    const uint4 raw = x[i];
    const auto* pairs = reinterpret_cast<const __nv_bfloat162*>(&raw);
#pragma unroll
    for (int p = 0; p < 4; ++p) {
      const float2 value = __bfloat1622float2(pairs[p]);
      local = fmaxf(local, fmaxf(fabsf(value.x), fabsf(value.y)));
    }
  }
  for (int offset = 16; offset > 0; offset /= 2) local = fmaxf(local, __shfl_xor_sync(0xffffffffu, local, offset));
  if (threadIdx.x % 32 == 0) atomicMax(amax + blockIdx.y, __float_as_uint(local));
}

__device__ __forceinline__ float Descale(std::uint32_t amax_bits) {
  const float amax = __uint_as_float(amax_bits);
  return amax > 0.0f ? amax / kE4m3Max : 1.0f;
}

// Q and K to e4m3 (blockIdx.y: 0 Q, 1 K), 8 elements a thread; block 0 also publishes the three descale factors.
__global__ void QuantizeQKKernel(const __nv_bfloat16* q, const __nv_bfloat16* k, long long elements,
                                 const std::uint32_t* amax, float* descale, std::uint8_t* q8, std::uint8_t* k8) {
  if (blockIdx.x == 0 && blockIdx.y == 0 && threadIdx.x < 3) descale[threadIdx.x] = Descale(amax[threadIdx.x]);
  const __nv_bfloat16* x = blockIdx.y == 0 ? q : k;
  std::uint8_t* out = blockIdx.y == 0 ? q8 : k8;
  const float scale = 1.0f / Descale(amax[blockIdx.y]);
  const long long groups = elements / 8;  // d is a multiple of 8
  for (long long g = blockIdx.x * static_cast<long long>(blockDim.x) + threadIdx.x; g < groups;
       g += static_cast<long long>(gridDim.x) * blockDim.x) {
    const uint4 raw = reinterpret_cast<const uint4*>(x)[g];
    const auto* pairs = reinterpret_cast<const __nv_bfloat162*>(&raw);
    std::uint32_t packed[2];
#pragma unroll
    for (int half = 0; half < 2; ++half) {
      const float2 a = __bfloat1622float2(pairs[2 * half]), b = __bfloat1622float2(pairs[2 * half + 1]);
      packed[half] = wgmma_detail::PackFp8x4(a.x * scale, a.y * scale, b.x * scale, b.y * scale);
    }
    reinterpret_cast<uint2*>(out)[g] = make_uint2(packed[0], packed[1]);
  }
}

// Vᵀ in e4m3: block (g, head) takes keys 32g..32g+31 of one head (zeros past N) and writes them as 32 bytes of
// each of the d rows of Vᵀ, key a at position Fp8KeyPosition(a) of its group.
template <int kD>
__global__ void QuantizeVTransposedKernel(const __nv_bfloat16* v, int n, int key_stride, const std::uint32_t* amax,
                                          std::uint8_t* vt8) {
  __shared__ std::uint8_t tile[32][kD + 4];
  const float scale = 1.0f / Descale(amax[2]);
  const long long head = blockIdx.y;
  const int key0 = blockIdx.x * 32;
  for (int index = threadIdx.x; index < 32 * kD; index += blockDim.x) {
    const int key = index / kD, column = index % kD;
    const float value = key0 + key < n ? __bfloat162float(v[(head * n + key0 + key) * kD + column]) * scale : 0.0f;
    tile[key][column] = static_cast<std::uint8_t>(__nv_cvt_float_to_fp8(value, __NV_SATFINITE, __NV_E4M3));
  }
  __syncthreads();
  // A thread writes 4 positions (4 bytes) of one row of Vᵀ: position p holds key 8h + 2c + e with
  // p = 16·(h/2) + 4c + 2·(h mod 2) + e (the inverse of Fp8KeyPosition within the group).
  for (int index = threadIdx.x; index < kD * 8; index += blockDim.x) {
    const int row = index / 8, position0 = (index % 8) * 4;
    std::uint32_t word = 0;
#pragma unroll
    for (int b = 0; b < 4; ++b) {
      const int p = position0 + b, half = p / 16, c = (p % 16) / 4, odd = (p % 4) / 2, e = p % 2;
      const int key = 8 * (2 * half + odd) + 2 * c + e;
      word |= static_cast<std::uint32_t>(tile[key][row]) << (8 * b);
    }
    *reinterpret_cast<std::uint32_t*>(vt8 + (head * kD + row) * key_stride + key0 + position0) = word;
  }
}

}  // namespace fp8_detail

// ---------------------------------------------------------------------------------------------------------
// [SECTION] 2. Host
// ---------------------------------------------------------------------------------------------------------

namespace {

// The kernel's traits at d (partials' size, consumers).
template <int kD>
using Fp8Traits = wgmma_detail::Flash3Traits<__nv_fp8_e4m3, kD>;

// The persistent grid's blocks and its split schedule for this shape: d = 128 without the mask, from 16 K/V tiles a
// work tile (N > 1920). H200, 2026-11-27 (kernels/README.md), against whole passes: +0-1% at N = 4096, +1% at 16384,
// 2% slower at N = 1024, whose work tiles of 8 K/V tiles gain less from the cut than the second launch and the
// merges cost. (At d = 256, whose O takes 128 of a consumer's registers, the merge made ptxas spill 104-176 bytes.)
struct Fp8Grid {
  int blocks = 0;
  wgmma_detail::SplitSchedule split;
};
Fp8Grid PersistentGrid(const AttentionShape& shape, int multiprocessors) {
  const long long q_tiles = (shape.n + 127) / 128, work_tiles = q_tiles * shape.Heads();
  Fp8Grid grid;
  if (multiprocessors <= 0 || work_tiles <= 0 || work_tiles > 0x7fffffffll) return grid;
  grid.blocks = static_cast<int>(std::min<long long>(work_tiles, multiprocessors));
  const int kv_tiles = (shape.n + Fp8Traits<128>::kBc - 1) / Fp8Traits<128>::kBc;
  if (!shape.causal && shape.d == 128)
    grid.split = wgmma_detail::MakeSplitSchedule(static_cast<int>(work_tiles), kv_tiles, grid.blocks, 16);
  return grid;
}

}  // namespace

Flash3Fp8Workspace Flash3Fp8WorkspaceLayout(const AttentionShape& shape) {
  const auto align = [](std::size_t bytes) { return (bytes + 255) / 256 * 256; };
  Flash3Fp8Workspace layout;
  layout.key_stride = (shape.n + 31) / 32 * 32;
  const std::size_t heads = static_cast<std::size_t>(shape.Heads());
  const std::size_t qk_bytes = align(heads * static_cast<std::size_t>(shape.n) * shape.d);
  const Fp8Grid grid = PersistentGrid(shape, CurrentDeviceMultiprocessors());
  layout.blocks = grid.split.split_tiles > 0 ? grid.blocks : 0;
  constexpr int kConsumers = Fp8Traits<128>::kConsumers;
  static_assert(Fp8Traits<256>::kConsumers == kConsumers);
  const auto partials_bytes = static_cast<std::size_t>(wgmma_detail::PartialsBytes<Fp8Traits<128>>(layout.blocks));
  layout.amax = 0;
  layout.descale = 16;
  layout.arrivals = 256;
  layout.q = layout.arrivals + align(static_cast<std::size_t>(layout.blocks) * kConsumers * sizeof(std::uint32_t));
  layout.k = layout.q + qk_bytes;
  layout.vt = layout.k + qk_bytes;
  layout.partials = layout.vt + align(heads * static_cast<std::size_t>(shape.d) * layout.key_stride);
  layout.bytes = layout.partials + align(partials_bytes);
  return layout;
}

std::string Flash3Fp8OptionsName(unsigned options) {
  if (options == 0) return "default";
  std::string name;
  if (options & kFlash3Fp8Prequantized) name = "prequantized";
  if (options & kFlash3Fp8OtherSchedule) name += name.empty() ? "other-schedule" : "+other-schedule";
  if (options & kFlash3Fp8OtherGrid) name += name.empty() ? "other-grid" : "+other-grid";
  if (options & ~kFlash3Fp8AllOptions)
    name += (name.empty() ? "" : "+") + Sprintf("unknown-0x%x", options & ~kFlash3Fp8AllOptions);
  return name;
}

std::optional<std::string> Flash3Fp8NotApplicable(const AttentionShape& shape, DType dtype) {
  if (dtype != DType::kBf16) return "flash3_fp8 takes bf16 inputs (quantized to e4m3 on the device) and writes bf16";
  if (shape.d != 128 && shape.d != 256) return Sprintf("d = %d: only d = 128 and 256", shape.d);
  if (shape.n < 1) return Sprintf("N = %d: N must be at least 1", shape.n);
  if (shape.batch < 1 || shape.heads < 1)
    return Sprintf("batch %d, heads %d: both must be at least 1", shape.batch, shape.heads);
  const long long batch_heads = static_cast<long long>(shape.batch) * shape.heads;
  if (batch_heads > 65535)
    return Sprintf("B·H = %lld: at most 65535 (one grid row per head to quantize V)", batch_heads);
  if (batch_heads * ((shape.n + 127) / 128) > 0x7fffffffll)
    return Sprintf("B·H = %lld with N = %d: more than 2^31 - 1 (head, Q tile) pairs", batch_heads, shape.n);
  if (batch_heads * (shape.n + 31) * shape.d > (1ll << 40))
    return "B·H·N·d over 2^40 elements (the tensor map's reach)";
  if (!(shape.scale > 0.0f) || !std::isfinite(shape.scale))
    return Sprintf("scale = %g: flash3_fp8 needs a positive finite scale", static_cast<double>(shape.scale));
  static const std::optional<std::string> device = hopper_host::DeviceNotHopper("flash3_fp8");
  return device;
}

std::size_t Flash3Fp8WorkspaceBytes(const AttentionShape& shape, DType /*dtype*/) {
  return Flash3Fp8WorkspaceLayout(shape).bytes;
}

namespace {

// The kernel for d and the mask with the grid's schedule (longest first on the persistent causal grid) and
// ping-pong or not. Causal at d = 128 masks with selects (kFlagSelectMask); d = 256 branches around each element.
// d = 128 walks each work tile's K/V tiles from the last (kFlagDiagonalFirst), with and without the mask, but in the
// cut last passes, whose pieces begin and end partway through a work tile.
template <int kD, bool kCausal>
cudaError_t LaunchForGrid(cudaStream_t stream, const CUtensorMap& q_map, const CUtensorMap& k_map,
                          const CUtensorMap& v_map, const wgmma_detail::Flash3Params& params, bool persistent,
                          bool longest_first, bool ping_pong, int multiprocessors) {
  using wgmma_detail::kFlagLongestFirst;
  using wgmma_detail::kFlagPingPong;
  using wgmma_detail::LaunchFlash3Kernel;
  using Fp8 = __nv_fp8_e4m3;
  constexpr unsigned kFlags = wgmma_detail::kFlagOverlapSoftmax | wgmma_detail::kFlagStagedStore |
                              (kCausal && kD == 128 ? unsigned{wgmma_detail::kFlagSelectMask} : 0u) |
                              (kD == 128 ? unsigned{wgmma_detail::kFlagDiagonalFirst} : 0u);
  const auto launch = [&](auto kernel, const wgmma_detail::Flash3Params& launch_params) {
    return kernel(stream, q_map, k_map, v_map, launch_params, persistent, multiprocessors);
  };
  if constexpr (kCausal) {
    if (longest_first)
      return ping_pong ? launch(LaunchFlash3Kernel<Fp8, kD, kFlags | kFlagLongestFirst | kFlagPingPong>, params)
                       : launch(LaunchFlash3Kernel<Fp8, kD, kFlags | kFlagLongestFirst>, params);
  }
  if constexpr (!kCausal && kD == 128) {
    // The persistent grid's last passes cut by K/V tiles (params.split, flash3_schedule.h): the whole passes as a
    // launch of the kernel without the cut, the last G + T mod G work tiles as a second launch that cuts them
    // (kFlagSplitLastPasses). One kernel doing both ran 3-8% slower (H200, 2026-11-27, kernels/README.md): ptxas
    // scheduled its loop differently, though the instructions were the same.
    if (persistent && !ping_pong && params.split.split_tiles > 0) {
      wgmma_detail::Flash3Params whole = params;
      whole.work_tiles = params.split.whole_passes * std::min(params.work_tiles, multiprocessors);
      if (whole.work_tiles > 0)
        if (const cudaError_t error = launch(LaunchFlash3Kernel<Fp8, kD, kFlags>, whole); error != cudaSuccess)
          return error;
      return launch(LaunchFlash3Kernel<Fp8, kD, (kFlags & ~unsigned{wgmma_detail::kFlagDiagonalFirst}) |
                                                    wgmma_detail::kFlagSplitLastPasses>,
                    params);
    }
  }
  return ping_pong ? launch(LaunchFlash3Kernel<Fp8, kD, kFlags | kFlagPingPong>, params)
                   : launch(LaunchFlash3Kernel<Fp8, kD, kFlags>, params);
}

}  // namespace

cudaError_t LaunchFlash3Fp8(const AttentionArgs& args) {
  if (args.options & ~kFlash3Fp8AllOptions) return cudaErrorInvalidValue;
  for (const void* pointer : {args.q, args.k, args.v, static_cast<const void*>(args.o)})
    if (pointer == nullptr || reinterpret_cast<std::uintptr_t>(pointer) % 16 != 0) return cudaErrorInvalidValue;
  // The quantized tensors start 256-byte aligned within it (TMA wants 16).
  if (args.workspace == nullptr || reinterpret_cast<std::uintptr_t>(args.workspace) % 256 != 0)
    return cudaErrorInvalidValue;
  if (auto reason = Flash3Fp8NotApplicable(args.shape, args.dtype))
    return reason->rfind("compute capability", 0) == 0 || reason->rfind("no CUDA", 0) == 0 ? cudaErrorInvalidDevice
                                                                                           : cudaErrorInvalidValue;
  const Flash3Fp8Workspace layout = Flash3Fp8WorkspaceLayout(args.shape);
  if (args.workspace_bytes < layout.bytes) return cudaErrorInvalidValue;
  const int batch_heads = args.shape.batch * args.shape.heads, n = args.shape.n, d = args.shape.d;
  auto* workspace = static_cast<unsigned char*>(args.workspace);
  auto* amax = reinterpret_cast<std::uint32_t*>(workspace + layout.amax);
  auto* descale = reinterpret_cast<float*>(workspace + layout.descale);
  auto* q8 = workspace + layout.q;
  auto* k8 = workspace + layout.k;
  auto* vt8 = workspace + layout.vt;
  const int multiprocessors = CurrentDeviceMultiprocessors();

  if (!(args.options & kFlash3Fp8Prequantized)) {
    const long long elements = static_cast<long long>(batch_heads) * n * d;
    const auto* q = static_cast<const __nv_bfloat16*>(args.q);
    const auto* k = static_cast<const __nv_bfloat16*>(args.k);
    const auto* v = static_cast<const __nv_bfloat16*>(args.v);
    // The maxima and the cut work tiles' arrival counters (layout.arrivals … layout.q).
    if (const cudaError_t error = cudaMemsetAsync(workspace, 0, layout.q, args.stream); error != cudaSuccess)
      return error;
    const int blocks = std::max(1, 4 * multiprocessors);
    fp8_detail::AbsMaxKernel<<<dim3(blocks, 3), 256, 0, args.stream>>>(q, k, v, elements, amax);
    fp8_detail::QuantizeQKKernel<<<dim3(blocks, 2), 256, 0, args.stream>>>(q, k, elements, amax, descale, q8, k8);
    const dim3 v_grid(layout.key_stride / 32, batch_heads);
    if (d == 128)
      fp8_detail::QuantizeVTransposedKernel<128><<<v_grid, 256, 0, args.stream>>>(v, n, layout.key_stride, amax, vt8);
    else
      fp8_detail::QuantizeVTransposedKernel<256><<<v_grid, 256, 0, args.stream>>>(v, n, layout.key_stride, amax, vt8);
    if (const cudaError_t error = cudaGetLastError(); error != cudaSuccess) return error;
  }

  using wgmma_detail::Flash3Params;
  CUtensorMap q_map, k_map, v_map;
  constexpr auto kType = CU_TENSOR_MAP_DATA_TYPE_UINT8;
  if (!hopper_host::EncodeTensorMap3d(&q_map, kType, 1, q8, d, n, batch_heads, 128) ||
      !hopper_host::EncodeTensorMap3d(&k_map, kType, 1, k8, d, n, batch_heads, 128) ||
      !hopper_host::EncodeTensorMap3d(&v_map, kType, 1, vt8, layout.key_stride, d, batch_heads, d))
    return cudaErrorInvalidValue;
  const int q_tiles = (n + 127) / 128;
  Flash3Params params{args.o,
                      descale,
                      n,
                      q_tiles,
                      q_tiles * batch_heads,
                      hopper_host::SectionHeads(batch_heads, (static_cast<long long>(n) + layout.key_stride) * d),
                      args.shape.scale * 1.4426950408889634f,
                      args.shape.causal ? 1 : 0};
  // The grid as flash3_wgmma's at d = 128 (flash3_wgmma.cu): persistent, except causal beyond N = 2048, where one
  // block per Q tile lets the hardware balance the uneven tiles; on the persistent causal grid, longest first.
  // H200, 2026-11-26, attention alone (kernels/README.md): causal persistent at d = 128 13% faster at N = 1024, 5%
  // and 12% slower at 4096 and 16384; at d = 256 5-9% faster at 1024, a tie at 4096, 2-3% slower at 16384.
  const bool persistent = (!args.shape.causal || n <= 2048) != ((args.options & kFlash3Fp8OtherGrid) != 0);
  // The cut of the last passes (the workspace layout above was sized by the same PersistentGrid).
  if (persistent) params.split = PersistentGrid(args.shape, multiprocessors).split;
  params.partials = reinterpret_cast<float*>(workspace + layout.partials);
  params.arrivals = reinterpret_cast<unsigned*>(workspace + layout.arrivals);
  // Ping-pong at d = 256: the same day, 2-8% faster at four of the six shapes (within 3% at the other two); at
  // d = 128, where the exponentials set the pace, within ±3%, and not taken. (Measured with the turns around the
  // GEMMs' issue; the softmax's turns that replaced them on 2026-11-28 measured 0.98-1.02× of those at d = 256.)
  const bool ping_pong = (d == 256) != ((args.options & kFlash3Fp8OtherSchedule) != 0);
  const bool longest_first = args.shape.causal && persistent;
  const auto launch = [&](auto for_grid) {
    return for_grid(args.stream, q_map, k_map, v_map, params, persistent, longest_first, ping_pong, multiprocessors);
  };
  if (d == 128) return args.shape.causal ? launch(LaunchForGrid<128, true>) : launch(LaunchForGrid<128, false>);
  return args.shape.causal ? launch(LaunchForGrid<256, true>) : launch(LaunchForGrid<256, false>);
}

}  // namespace flashviz::cuda
