// flash3_wgmma: FlashAttention's forward pass the Hopper way (FlashAttention-3's structure): wgmma from shared
// memory, TMA copies completing on mbarriers, a producer warpgroup and two consumer warpgroups. fp16/bf16 in,
// fp32 accumulation; sm_90a only. kernels/cuda/mma/flash3_wgmma.cu says what it changes versus flash2_mma and
// what it measured; this header is what the registry, `flashviz bench`, the tests and the timing driver call.
#pragma once

#include <cstddef>
#include <optional>
#include <string>

#include "kernels/cuda/attention_launch.h"

namespace flashviz::cuda {

// AttentionArgs::options bits. As for flash2_mma, each flips one choice of the shipped kernel (0), so its gain
// is measured on the same code: 54 kernels in all (per dtype 12 at d = 64 with its two consumer counts, 7 at
// d = 128, 8 at d = 256).
enum Flash3WgmmaOption : unsigned {
  // The other grid than the default: persistent (one block per multiprocessor, each taking every gridDim.x-th
  // (head, Q tile) pair, the producer loading the next pair's Q and K/V while the consumers finish the last one)
  // at d = 64, d = 128 without the mask, and causal d = 128 up to N = 2048; one block per Q tile for causal d = 128
  // beyond N = 2048 and all of d = 256. A launch choice
  // (no kernel of its own).
  kFlash3WgmmaOtherGrid = 1u << 0,
  // Inside each consumer warpgroup, S_j, its softmax and P̃_j V_j one after the other, instead of the default
  // intra-warpgroup overlap (S_j issued together with P̃_{j−1} V_{j−1}, the softmax of tile j running while the
  // tensor cores finish that product with two 16-bit consumers; FlashAttention-3's Algorithm 2). A kernel of its own.
  kFlash3WgmmaSerialSoftmax = 1u << 1,
  // O_i stored straight from the accumulators (4-byte pairs) instead of through a shared-memory staging tile and
  // 16-byte coalesced stores (d = 256: staged in Q_i's buffer on the grid of one block per Q tile, direct on the
  // persistent one). A kernel of its own.
  kFlash3WgmmaDirectStore = 1u << 2,
  // The other consumer schedule: ping-pong (the two consumer warpgroups take turns for the softmax through named
  // barriers, one's softmax beside the other's products) at d = 128, causal d = 256 and d = 64 without the mask, where
  // the default has none; none at d = 256 without the mask and causal d = 64 with two consumers, where the default has
  // it. With the default overlap and two consumers only: ignored with serial-softmax, and with three consumers (d = 64
  // from N = 2048, and without the mask from N = 1024).
  kFlash3WgmmaOtherSchedule = 1u << 3,
  // At d = 64, the other B_r than the default: 128 rows (two consumer warpgroups) from N = 2048, where 192 (three)
  // is the default, and 192 below. No effect at d = 128 and 256 (always two).
  kFlash3WgmmaOtherRows = 1u << 4,
};
inline constexpr unsigned kFlash3WgmmaAllOptions = kFlash3WgmmaOtherGrid | kFlash3WgmmaSerialSoftmax |
                                                   kFlash3WgmmaDirectStore | kFlash3WgmmaOtherSchedule |
                                                   kFlash3WgmmaOtherRows;

std::string Flash3WgmmaOptionsName(unsigned options);

// The three functions of attention_launch.h. Launch returns cudaErrorInvalidValue for bad options bits, a shape
// NotApplicable rejects, or device pointers not 16-byte aligned (TMA needs it); cudaErrorInvalidDevice where
// the GPU is not a Hopper (compute capability 9.0).
cudaError_t LaunchFlash3Wgmma(const AttentionArgs& args);
std::optional<std::string> Flash3WgmmaNotApplicable(const AttentionShape& shape, DType dtype);
std::size_t Flash3WgmmaWorkspaceBytes(const AttentionShape& shape, DType dtype);

}  // namespace flashviz::cuda
