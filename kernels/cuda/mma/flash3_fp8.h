// flash3_fp8: flash3_wgmma's kernel on e4m3 (fp8) inputs with per-tensor scales, O in bf16 (sm_90a only).
// The registry gives it bf16 Q, K, V like every variant: a launch first quantizes them into its workspace
// (one absolute-maximum pass, then Q and K to e4m3 and V to e4m3 transposed, each tensor with the scale that
// maps its largest |x| to 448, e4m3's largest number), then runs the attention kernel on the quantized copies.
// kernels/cuda/mma/flash3_fp8.cu says how, and derives the error bound the tests hold it to.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>

#include "kernels/cuda/attention_launch.h"

namespace flashviz::cuda {

// AttentionArgs::options bits.
enum Flash3Fp8Option : unsigned {
  // Skip the quantization: the workspace already holds the quantized inputs of this shape, written by an earlier
  // launch with the same Q, K and V. Times the attention kernel alone (what FlashAttention-3 reports for fp8,
  // whose inputs arrive quantized); the default launch is quantization plus attention.
  kFlash3Fp8Prequantized = 1u << 0,
  // The other consumer schedule: ping-pong (flash3_wgmma.h, kFlash3WgmmaOtherSchedule) where the default has none
  // (d = 128), none where the default has it (d = 256).
  kFlash3Fp8OtherSchedule = 1u << 1,
  // The other grid (flash3_wgmma.h, kFlash3WgmmaOtherGrid): one block per Q tile where the default is persistent,
  // and the reverse.
  kFlash3Fp8OtherGrid = 1u << 2,
};
inline constexpr unsigned kFlash3Fp8AllOptions =
    kFlash3Fp8Prequantized | kFlash3Fp8OtherSchedule | kFlash3Fp8OtherGrid;

std::string Flash3Fp8OptionsName(unsigned options);

// The workspace: the quantization's absolute maxima and dequantization factors, the arrival counters of the cut
// work tiles, the quantized tensors, then the cut work tiles' partial results. Without the mask the persistent
// grid's last passes are cut by K/V tiles (flash3_schedule.h); the quantizing launch zeroes the counters and every
// launch leaves them 0, so a prequantized launch finds them so.
struct Flash3Fp8Workspace {
  std::size_t amax = 0;      // 3 × uint32: max |x| of Q, K, V as float bits
  std::size_t descale = 0;   // 3 × float: max |x| / 448 of Q, K, V (1 for an all-zero tensor)
  std::size_t arrivals = 0;  // uint32 per (boundary, consumer): the cut work tiles' arrival counters
  std::size_t partials = 0;  // float: per (boundary, side, consumer) m, ℓ and unnormalized O of 128 threads
  int blocks = 0;            // the persistent grid's blocks the two above are sized for (0: no cut work tile)
  std::size_t q = 0;         // e4m3 (B·H, N, d), Q / descale_q
  std::size_t k = 0;         // e4m3 (B·H, N, d)
  std::size_t vt = 0;        // e4m3 (B·H, d, key_stride): Vᵀ, keys in Fp8KeyPosition order, zeros past N
  int key_stride = 0;        // N rounded up to a multiple of 32
  std::size_t bytes = 0;     // the whole workspace
};
Flash3Fp8Workspace Flash3Fp8WorkspaceLayout(const AttentionShape& shape);

// Where key `key` sits in a row of the quantized Vᵀ: keys keep their group of 32, and within it key 8h + 2c + e
// (h, c < 4, e < 2) is stored at 16·(h / 2) + 4c + 2·(h mod 2) + e, the order in which the kernel packs P̃ as
// wgmma's 8-bit A operand (flash3_kernel.cuh, PackP).
constexpr int Fp8KeyPosition(int key) {
  const int within = key % 32, h = within / 8, c = (within % 8) / 2, e = within % 2;
  return key - within + 16 * (h / 2) + 4 * c + 2 * (h % 2) + e;
}

// The three functions of attention_launch.h. Launch returns cudaErrorInvalidValue for bad options bits, a shape
// NotApplicable rejects, a workspace smaller than WorkspaceBytes, or device pointers not 16-byte aligned;
// cudaErrorInvalidDevice where the GPU is not a Hopper (compute capability 9.0).
cudaError_t LaunchFlash3Fp8(const AttentionArgs& args);
std::optional<std::string> Flash3Fp8NotApplicable(const AttentionShape& shape, DType dtype);
std::size_t Flash3Fp8WorkspaceBytes(const AttentionShape& shape, DType dtype);

}  // namespace flashviz::cuda
