// The kernel of flash3_wgmma (fp16/bf16, flash3_wgmma.cu) and flash3_fp8 (e4m3, flash3_fp8.cu): FlashAttention's
// forward pass on Hopper's own instructions, after FlashAttention-3 (Shah, Bikshandi, Zhang, Thakkar, Ramani, Dao,
// 2024). flash3_wgmma.cu's header says what it changes versus flash2_mma and the shared-memory layout; this file
// is the kernel those two translation units instantiate (sm_90a only).
//
// [SECTION] index
//   2. Traits: tiles, stages, the shared-memory layout (per element type and d)
//   3. The kernel: producer warpgroup (TMA) and two consumer warpgroups (wgmma + online softmax)
// (Section 1, the PTX wrappers, is hopper.cuh; section 4, the host side, is in each .cu.)
//
// What the element type changes: 16 bits read 64 columns per 128-byte swizzle block and multiply in k-steps of 16;
// e4m3 reads 128 and multiplies in k-steps of 32, takes V_j transposed (8-bit B operands are K-major only), packs
// P̃ in a key order that Vᵀ's keys follow (PackP), scales P̃ by 2^8 and writes O in bf16 after the dequantization
// factors (Flash3Params::descale).
#pragma once

#include <cuda.h>
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_fp8.h>

#include <cuda_runtime.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <type_traits>

#include "kernels/cuda/mma/flash3_schedule.h"
#include "kernels/cuda/mma/hopper.cuh"

namespace flashviz::cuda::wgmma_detail {

using namespace hopper;  // the PTX wrappers and Wgmma<Element, N>

// ---------------------------------------------------------------------------------------------------------
// [SECTION] 2. Traits
// ---------------------------------------------------------------------------------------------------------

// The kernel's compile-time choice (AttentionArgs::options flips it; see flash3_wgmma.h).
enum Flash3Flag : unsigned {
  // Inside a consumer warpgroup, the softmax of tile j runs while the tensor cores add P̃_{j−1} V_{j−1}
  // (FlashAttention-3's intra-warpgroup overlap): S_j and P̃_{j−1}V_{j−1} are issued together, S_j is waited for
  // alone, and O is rescaled once the product landed. Off: S_j, softmax, P̃_j V_j one after the other.
  kFlagOverlapSoftmax = 1u << 0,
  // O_i leaves through a shared-memory staging tile in 16-byte coalesced stores (a warp writes 512 contiguous
  // bytes) instead of 4-byte stores straight from the accumulators (a warp instruction: 8 rows × 16 bytes).
  kFlagStagedStore = 1u << 1,
  // Causal on the persistent grid (the host sets it, no options bit): the work tiles longest first within L2
  // sections of heads (Flash3Params::section_heads) and the grid's passes snaking (DecodeWorkTile, BlockWork), so
  // the static schedule ends with short tiles everywhere instead of some blocks' long ones. Off: head-major, which
  // keeps a head's K/V in L2 for the blocks running at once.
  kFlagLongestFirst = 1u << 2,
  // Ping-pong (with kFlagOverlapSoftmax only): the two consumer warpgroups take turns for the softmax, handing the
  // turn over through named barriers, so that one's softmax has the special-function unit and the issue slots to
  // itself while the other waits for its products, rescales O and issues its next GEMMs. This is cuDNN's schedule
  // (its consumers take turns for the exponentials) inside FlashAttention-3's intra-warpgroup overlap. Until
  // 2026-11-28 the turns were FlashAttention-3's own, around the GEMMs' issue: at d = 64 its products are too short
  // to keep the two softmaxes apart, so both still ran at once (Nsight Compute: the same share of stalls on MUFU).
  // H200, 2026-11-28 (kernels/README.md), against the kernel without turns: causal d = 64 with two consumers +3-4% at
  // N = 1024 and +2% at 1536 (five rounds, every one above, the shapes timed alone); at d = 256, where ping-pong is
  // the default, the softmax's turns measured as the GEMMs' had (0.98-1.03× in 16 bits without the mask, 0.98-1.02× in
  // fp8).
  kFlagPingPong = 1u << 3,
  // Three consumer warpgroups (B_r = 192) instead of two (16-bit d = 64 only, whose S, P̃ and O fit 160 registers;
  // FlashAttention-3's choice there): each K_j/V_j tile serves 192 rows. The host takes it from N = 2048, and
  // without the mask from N = 1024 (flash3_wgmma.cu).
  kFlagThreeConsumers = 1u << 4,
  // With kFlagStagedStore: O's staging tile is Q_i's buffer (16-bit d = 256, whose shared memory has no room for a
  // tile of its own; both are B_r rows in 128-byte column blocks). Only on the grid of one block per work tile,
  // where no next tile's Q is loaded into it (the host's choice); a consumer writes only its own 64 rows, which only
  // its own S GEMMs read, and those have completed by its epilogue.
  kFlagStageOInQ = 1u << 5,
  // The mask as one compare and select an element (Traits::kBranchFreeMask) where the element type and d alone would
  // branch around each element (the host sets it, no options bit: causal d = 128, flash3_fp8 and flash3_wgmma, and
  // causal 16-bit d = 256 with kFlagNarrowKeys). H200, 2026-11-27 (kernels/README.md), against the branching form: fp8
  // d = 128 causal +8% at N = 1024, +6% at 4096, +1% at 16384; without the mask, where only N's last tile is masked,
  // 1-2% slower at N = 4096 and 16384, so only causal; 16-bit d = 128 causal +10-14% at N = 1024, +3% at 4096, +2% at
  // 16384.
  kFlagSelectMask = 1u << 6,
  // The persistent grid's last passes cut by K/V tiles (flash3_schedule.h; without the mask, where every work tile
  // has the same length; the host sets it, no options bit): a launch of its own after the whole passes, in which
  // each block takes an equal share of the last G + T mod G work tiles' K/V tiles instead of whole tiles, so that no
  // block idles through a last, part-filled pass; the two pieces of a cut work tile are merged through the workspace
  // (Flash3Params::partials, MergeCutTile) by the later to finish.
  kFlagSplitLastPasses = 1u << 7,
  // A work tile's K/V tiles walked from its last to its first, as FlashAttention-3 does (the host sets it, no options
  // bit; where B_r = B_c, so that one K/V tile of a work tile crosses the causal diagonal). The last tile, the only
  // one that crosses the diagonal or N, is then the first, whose softmax runs before the loop, and the loop's softmax
  // has no mask at all. H200, 2026-11-27, three rounds against the forward walk
  // (docs/results/2026-11-27-h200-diagonal-first/): fp8 d = 128 causal +1-2% and without the mask +3-4%; 16-bit
  // d = 128 causal +0-1% but 0.92-0.98× without the mask (not taken there); 16-bit d = 64 causal N = 1024 (two
  // consumers) 1.00× in fp16, bf16 within its spread. Not at d = 256 (B_c = 80: two or three tiles cross the
  // diagonal; causal B_c = 64: two), nor with three consumers (B_r = 192: two), nor at fp8 d = 256 (ptxas spills
  // 4-48 bytes causal).
  kFlagDiagonalFirst = 1u << 8,
  // Without the mask and N a multiple of B_c (the host's choice: 16-bit d = 64, flash3_wgmma.cu has the figures): no
  // K/V tile crosses N, so the softmax never masks.
  kFlagWholeKeyTiles = 1u << 9,
  // 16-bit d = 256 with K/V tiles of 64 keys instead of 80 (the host's choice: causal, with kFlagSelectMask). A Q
  // tile of 128 rows then ends where a K/V tile does, so that the tiles hold 6% fewer keys past the diagonal at
  // N = 1024, and S and P̃ take 12 registers fewer, which lets the select mask fit (with 80 keys it spilled). H200,
  // 2026-11-28 (kernels/README.md): +7-9% at causal N = 1024, +3-15% at 2048, within the spread beyond. At d = 64
  // causal (two consumers, the mask in the loop) 64-key tiles measured 0.82-0.85×.
  kFlagNarrowKeys = 1u << 10,
  // Q_i arrives in one part per consumer warpgroup (its 64 rows), each on a full barrier of its own, consumer 0's part
  // before K_0 and the others' after it, so that consumer 0's first S GEMM waits for 32 KB of Q_i instead of 64 (16-bit
  // d = 256 on the grid of one block per Q tile, whose blocks wait for their first Q_i with nothing to overlap; the
  // host's choice: causal, +1-2% at N = 1024 on the H200, 2026-11-28, kernels/README.md).
  kFlagQByConsumer = 1u << 11,
};

// fp8 (e4m3) inputs: one byte an element, k = 32 per wgmma, and V_j given transposed (wgmma reads 8-bit B
// operands K-major only; Flash3Fp8 in flash3_fp8.cu writes Vᵀ when it quantizes).
template <typename T>
inline constexpr bool kIsFp8 = std::is_same_v<T, __nv_fp8_e4m3>;

template <typename T, int kD, int kConsumerCount = 2, bool kSelectMask = false, bool kOverlapLoop = false,
          bool kNarrowKeys = false, bool kQByConsumer = false>
struct Flash3Traits {
  using Element = T;
  static constexpr int kHeadDim = kD;
  static constexpr bool kFp8 = kIsFp8<T>;
  using Out = std::conditional_t<kFp8, __nv_bfloat16, T>;  // O's element: fp8 writes bf16
  static constexpr int kElementBytes = sizeof(T);
  // Consumer warpgroups, 64 rows of Q_i each: two, or three at 16-bit d = 64 (kFlagThreeConsumers).
  static constexpr int kConsumers = kConsumerCount;
  static_assert(kConsumers == 2 || (kConsumers == 3 && !kFp8 && kD == 64), "S, P̃ and O must fit the registers");
  static constexpr int kBr = 64 * kConsumers;  // B_r
  // B_c: keys per K_j/V_j tile (the N of S = Q K_jᵀ). d = 256 in 16 bits takes 80 (FlashAttention-3's choice):
  // Q_i (64 KB) and two stages of 80-key K_j and V_j (4 × 40 KB) fill the 227 KB, and S (40 registers), P̃ (20)
  // and O (128) fit the consumers' 240 registers. Causal, 64 (kFlagNarrowKeys: two stages of K_j and V_j in
  // 4 × 32 KB, S 32 registers, P̃ 16).
  static constexpr int kBc = (!kFp8 && kD == 256) ? (kNarrowKeys ? 64 : 80) : 128;
  static_assert(!kNarrowKeys || (!kFp8 && kD == 256), "narrow key tiles: 16-bit d = 256 only");
  static constexpr int kKStep = 32 / kElementBytes;        // elements per wgmma k-step (32 bytes): 16 or 32
  static constexpr int kRowBytes = kD * kElementBytes;     // one row of Q_i or K_j
  static constexpr int kColumnBlocks = kRowBytes / 128;    // 128-byte swizzle blocks per row: 1, 2 or 4
  static constexpr int kBoxColumns = 128 / kElementBytes;  // elements per TMA box row (= swizzle block)
  // K/V ring depth: 16-bit d = 64 fits three (16 KB Q + 3 × 32 KB + 16 KB O; 2 × 24 + 96 + 48 (ℓ's ones) + 24 KB
  // with three consumers and two Q buffers), d = 128 and 256 two; fp8 d = 128 four (16 KB Q + 4 × 32 KB + 4 KB of
  // ones + 32 KB O), fp8 d = 256 two (32 KB Q + 2 × 64 KB + 64 KB O).
  static constexpr int kStages = kFp8 ? (kD == 128 ? 4 : 2) : kD == 64 ? 3 : 2;
  // O's own staging tile (16-byte stores) does not fit beside 16-bit d = 256's Q_i and K/V stages: there O stages
  // in Q_i's buffer on the grid of one block per Q tile (kFlagStageOInQ) and leaves from the accumulators on the
  // persistent one.
  static constexpr bool kCanStageO = kFp8 || kD != 256;
  static constexpr int kThreads = 128 * (1 + kConsumers);
  // Registers: the kernel starts at 65536 / kThreads (__launch_bounds__(kThreads, 1)); the producer gives back to
  // 24 and the consumers take what is left, a multiple of 8: 240 with two consumers (24·128 + 2·240·128 = 64512),
  // 160 with three (24·128 + 3·160·128 = 64512).
  static constexpr int kProducerRegisters = 24;
  static constexpr int kConsumerRegisters = kConsumers == 2 ? 240 : 160;
  static constexpr int kQBytes = kBr * kRowBytes;
  static constexpr int kTileBytes = kBc * kRowBytes;  // one K_j or V_j tile (fp8: V_jᵀ, d rows × B_c keys)
  // ℓ on the tensor cores: P̃V runs as m64n(d + 8) with 8 more columns of V that are all ones, so O's accumulators
  // d/2 … d/2 + 3 hold ℓ of the thread's two rows, summed over P̃ as rounded for the product and rescaled with O,
  // instead of the softmax adding the B_c values a thread holds a tile (a quarter of a row each, joined by two
  // shuffles at the end). The ones sit after each V stage, where the descriptor puts columns d … d + 7, written once
  // at the start, never by a copy: fp8's Vᵀ is K-major, so one 1 KB block (8 rows × 128 keys, the 1024-byte row-group
  // stride); 16-bit V is N-major, so a whole 64-column swizzle block (B_c rows × 128 bytes, the leading byte offset).
  // Where it pays (H200, 2026-11-27, kernels/README.md): fp8 d = 128 +2-3% at all six shapes; 16-bit d = 64 with three
  // consumers (B_r = 192) +2-4% but 2-3% slower without the mask at N = 16384; with two consumers causal d = 64
  // N = 1024 8-9% slower, d = 128 −2% to +1%. d = 256 cannot: n would pass wgmma's 256.
  static constexpr bool kRowSumOnTensorCores = (kFp8 && kD == 128) || kConsumers == 3;
  static constexpr int kOnesBytes = !kRowSumOnTensorCores ? 0 : kFp8 ? 8 * 128 : kBc * 128;
  static constexpr int kVStageBytes = kTileBytes + kOnesBytes;
  static constexpr int kOAcc = (kD + (kRowSumOnTensorCores ? 8 : 0)) / 2;  // O's accumulators a consumer thread holds
  static constexpr int kQBlockBytes = kBr * 128;      // one 128-byte column block of Q_i
  static constexpr int kKVBlockBytes = kBc * 128;     // one 128-byte column block of K_j (and 16-bit V_j)
  static constexpr int kOBlockBytes = kBr * 128;      // one 64-column block of the 16-bit O staging tile
  static constexpr int kOBytes = kCanStageO ? kBr * kD * 2 : 0;
  // Q_i double-buffered with three consumers (16-bit d = 64, B_r = 192): the producer loads the next work tile's Q_i,
  // and then its K_0, as soon as the ring lets it, instead of after the consumers ran their last S GEMM on the
  // current one. H200, 2026-11-26 (kernels/README.md): 3-7% faster at N = 4096 and 16384 with and without the mask.
  // With two consumers (d = 64 below N = 2048, d = 128, fp8 d = 128) it was 1-9% slower, at N = 16384 too, where
  // work tiles are long and the early load matters little: the gain is not (only) the early load; not understood.
  static constexpr int kQBuffers = kConsumers == 3 ? 2 : 1;
  // Q_i in registers (16-bit d = 128 without the mask, the overlapped loop): each consumer loads its 64 rows' A
  // fragments (ldmatrix, 32 registers) once a work tile and releases Q_i's buffer at once, so that the producer loads
  // the next work tile's Q_i a ring's depth ahead instead of after the work tile's last S GEMM; S = Q_i K_jᵀ reads
  // Q_i from registers (wgmma RS). H200, 2026-11-27 (kernels/README.md), against the kernels before, in this form:
  // +3-11% in bf16 and +2-12% in fp16 at N = 1024, 4096 and 16384 (+2-7% and −2% to +3% in two calls of earlier forms);
  // causal N = 1024 −3% in bf16 at d = 64 and 128, fp8 d = 128 3% slower without the mask: so only here (the causal
  // d = 128 kernels are those with the select mask). Not in the serial loop (serial-softmax): there ptxas (CUDA 13.0)
  // gave the registers holding Q_i, live across the loop, to the softmax.
  static constexpr bool kQInRegisters = !kFp8 && kD == 128 && !kSelectMask && kOverlapLoop;
  static constexpr int kQSteps = kQInRegisters ? kRowBytes / 32 : 1;  // Q_i's A fragments: one per k-step
  // Byte offsets from the 1024-aligned base: Q buffers | K stages | V stages | O staging | barriers. (The O staging
  // tile cannot reuse a Q_i buffer on the persistent grid: the producer may be loading a next work tile's Q into it.)
  static constexpr int kKOffset = kQBuffers * kQBytes;
  static constexpr int kVOffset = kKOffset + kStages * kTileBytes;
  static constexpr int kOOffset = kVOffset + kStages * kVStageBytes;
  static constexpr int kBarrierOffset = kOOffset + kOBytes;
  // Q_i's full barriers per buffer: one, or one per consumer (kFlagQByConsumer).
  static constexpr int kQParts = kQByConsumer ? kConsumers : 1;
  // Barriers: Q full (kQParts per Q buffer) and Q empty per Q buffer, then per stage K full, V full, K empty, V empty
  // (K_j is released after S_j, V_j after P̃_j V_j, which with the overlap comes one tile later).
  static constexpr int kBarriers = kQBuffers * (kQParts + 1) + 4 * kStages;
  static constexpr int kSharedBytes = kBarrierOffset + kBarriers * 8 + 1024;  // + 1024 to align the base
  // An arrival per consumer warp releases a buffer.
  static constexpr int kReleaseCount = 4 * kConsumers;
  // P̃ as the A operand of P̃V: B_c / k-step register fragments of 4 registers.
  static constexpr int kPSteps = kBc / kKStep;
  // fp8 scales P̃ by 2^8 (P̃ ≤ 256 < 448, e4m3's largest) so that probabilities down to 2^-14 stay normal
  // numbers instead of e4m3's subnormals below 2^-6; ℓ carries the same factor, so O = P̃V/ℓ is unchanged.
  static constexpr int kPExponent = kFp8 ? 8 : 0;
  // fp8 at d = 128 halves the GEMMs' time but not the softmax's: per tile the special-function unit needs as many
  // cycles for 2^x as the tensor cores for the GEMMs. Every kPolynomialEvery-th 2^x of P̃ goes to the FMA pipe
  // (Exp2Polynomial) instead; 0: all on the special-function unit. H200, 2026-11-26 (kernels/README.md): every 4th
  // is 6-15% faster there than none, every 3rd or 2nd slower than none; at fp8 d = 256 and 16-bit d = 64 every
  // share tried was slower than none. 2026-11-27, against every 4th, three rounds a call: every 6th 0-4% faster at
  // all six shapes in each of two calls (geometric mean +1.6%, +1.7%), every 12th 1-4% (one call), every 16th −2% to
  // +5%, every 8th and 5th up to 10% slower at five of six, every 3rd 8-14% slower. With ℓ on the tensor cores (the
  // same day, later): every 4th and 5th 1-3% slower, every 8th and 12th no better.
  static constexpr int kPolynomialEvery = kFp8 && kD == 128 ? 6 : 0;
  // The softmax's row maxima and sums as kSoftmaxChains independent chains joined at the end, instead of one chain
  // of dependent instructions per row. H200, 2026-11-26 (kernels/README.md): four are 3-13% faster at 16-bit
  // d = 256 without the mask and −6% to +9% causal (faster at most shapes); at d = 64 up to 8% slower, mixed at
  // d = 128 (−8% to +9%), 1-7% slower at fp8 d = 128: one chain there.
  static constexpr int kSoftmaxChains = !kFp8 && kD == 256 ? 4 : 1;
  // The mask (causal, and keys past N) as one compare and select an element (SoftmaxTile). Spelled as
  // `col >= n || (causal && col > row)` the compiler branches around each element: about 10 instructions and two
  // convergence barriers an element on every tile that crosses the diagonal. H200, 2026-11-26 (kernels/README.md),
  // with Q_i double-buffered: 16-bit d = 64 causal +4% at N = 4096 and within ±2% elsewhere; at d = 128 −4% causal at
  // N = 1024, +2% at 4096; at d = 256 (80-key tiles) and in fp8 the select form spills or slows the unmasked tiles too
  // (fp8 d = 128 −5% to −12% where no tile is masked; 1-2% on 2026-11-27, with ℓ on the tensor cores): the branching
  // form there, but for causal d = 128 and causal d = 256 on 64-key tiles (kFlagSelectMask and kFlagNarrowKeys, whose
  // comments have their figures).
  static constexpr bool kBranchFreeMask = (!kFp8 && kD == 64) || kSelectMask;
  // The overlapped loop's wait for P̃_{j−1} V_{j−1} kept after the softmax of tile j (WgmmaWaitAfter). Written as a
  // plain wait, ptxas placed it at the softmax's first instructions, so that the softmax ran after the product
  // instead of beside it (source-level Nsight Compute: the wait right after the first FMNMX, 7.8% of the warps'
  // stall samples at d = 128). H200, 2026-11-26 (kernels/README.md), against the build with only the last V issued
  // early, best of two rounds: two 16-bit consumers +4% and +12% causal at d = 64, N = 1024, +1% and +2% on average
  // at d = 128 and 256 (−6% to +9% by shape); three consumers (d = 64 from N = 2048) 5% slower on average, fp8
  // d = 128 7% and fp8 d = 256 4%: the plain wait there (why is not measured; with ℓ on the tensor cores, 2026-11-27,
  // fp8 d = 128 was again 2-8% slower with it).
  static constexpr bool kWaitAfterSoftmax = !kFp8 && kConsumers == 2;
  // The running maximum kept until some row of the warp grows past it by more than kRescaleThreshold (log2 units of
  // the scaled score; FlashAttention-4's conditional rescaling): P̃ ≤ 2^kRescaleThreshold then, and a tile that does
  // not grow the maximum that much leaves O_i and ℓ as they are, its d/2 multiplications a thread skipped. O = P̃V/ℓ
  // is the same for any reference ≤ the row's true maximum. H200, 2026-11-27 (kernels/README.md), best of two or
  // three rounds against the build without it: threshold 8 (P̃ ≤ 256, far inside fp16's range) makes fp16 d = 256
  // 2-11% faster at every shape but causal N = 4096 (0-5%; bf16 not timed against it), fp16 d = 64 up to 9% slower
  // (three consumers), d = 128 no better; fp8 with threshold 0.75 (P̃·2^8 ≤ 431 < 448) 5-7% slower at d = 128,
  // −17% to +3% at d = 256 (the vote and the branch cost about what the skipped multiplications save). 0: rescale
  // whenever the maximum moves.
  static constexpr float kRescaleThreshold = !kFp8 && kD == 256 ? 8.0f : 0.0f;
  static_assert(kSharedBytes <= 227 * 1024, "fits one block per multiprocessor");
  static_assert(!(kWaitAfterSoftmax && kRowSumOnTensorCores), "the late wait is placed after ℓ's sums");
  static_assert(kBc % kKStep == 0 && kBc % 8 == 0, "whole k-steps of P̃V");
  static_assert(!kFp8 || kBc == 128, "fp8 Vᵀ tiles are one 128-byte swizzle block of keys");
};

struct Flash3Params {
  void* o;
  // fp8: the per-tensor dequantization factors of Q, K and V in device memory (written by the quantizing kernel
  // just before); null for 16-bit inputs.
  const float* descale;
  int n;
  int q_tiles;       // T_r = ⌈N / B_r⌉
  int work_tiles;    // T_r · B·H (head, Q tile) pairs
  // Longest first (kFlagLongestFirst): heads per section, whose K and V fit in L2 together (the host's choice).
  int section_heads;
  float scale_log2;  // scale · log2(e)
  int causal;
  // kFlagSplitLastPasses: the schedule (MakeSplitSchedule), and per boundary the two pieces' partial results
  // (MergeCutTile's layout) and the consumers' arrival counters, 0 before the launch and left 0 after it.
  SplitSchedule split = {};
  float* partials = nullptr;
  unsigned* arrivals = nullptr;
  // Longest first (kFlagLongestFirst): B·H, and DecodeWorkTile's divisors, set by LaunchFlash3Kernel from the fields
  // above: section_heads · q_tiles, section_heads and the last section's heads.
  int heads = 0;
  FastDivisor by_section_tiles, by_section_heads, by_last_section_heads;
};

// Work tile w: Q tile `rank` of head h (causal: rank 0 is the last, longest, Q tile). Head-major, w = h·T_r + rank,
// as in flash2_mma: consecutive tiles share a head, so blocks running at one time read the same K/V from L2. Longest
// first (kFlagLongestFirst): the heads in sections of params.section_heads, and within a section rank-major,
// w = section start + rank·(section's heads) + (head − section's first head): a section's longest tiles before its
// shorter ones, while the blocks running at one time read the K/V of one section's heads, which fit in L2.
// (Rank-major over all heads would stream every head's K/V from memory once per rank when B·H is large.)
struct WorkTile {
  int head;
  int q_row0;
  int kv_tiles;
};
template <int kBr, int kBc, bool kLongestFirst>
__device__ __forceinline__ WorkTile DecodeWorkTile(int w, const Flash3Params& params) {
  WorkTile tile;
  int rank;
  if constexpr (kLongestFirst) {
    const int section_tiles = params.section_heads * params.q_tiles;
    const int section = params.by_section_tiles.Divide(w);
    const int first_head = section * params.section_heads;
    const bool last = params.heads - first_head < params.section_heads;  // a short last section
    const int section_heads = last ? params.heads - first_head : params.section_heads;
    const int within = w - section * section_tiles;
    rank = (last ? params.by_last_section_heads : params.by_section_heads).Divide(within);
    tile.head = first_head + within - rank * section_heads;
  } else {
    tile.head = w / params.q_tiles;
    rank = w - tile.head * params.q_tiles;
  }
  tile.q_row0 = (params.causal ? params.q_tiles - 1 - rank : rank) * kBr;
  const int last_key = params.causal ? min(params.n, tile.q_row0 + kBr) - 1 : params.n - 1;
  tile.kv_tiles = last_key / kBc + 1;
  return tile;
}

// The block's `local`-th work tile, or ≥ params.work_tiles when it has no more.
// The grid's G blocks take tiles pass by pass (pass p: p·G … p·G + G − 1); longest first, the passes snake (block
// b takes p·G + b on even passes, p·G + G − 1 − b on odd ones), so a block that drew one of the longer tiles of a
// pass draws one of the shorter of the next.
template <bool kLongestFirst>
__device__ __forceinline__ int BlockWork(int local, const Flash3Params& params) {
  if constexpr (!kLongestFirst) {
    return static_cast<int>(blockIdx.x) + local * static_cast<int>(gridDim.x);
  } else {
    const int blocks = static_cast<int>(gridDim.x), block = static_cast<int>(blockIdx.x);
    const long long base = static_cast<long long>(local) * blocks;
    if (base >= params.work_tiles) return params.work_tiles;
    const int w = static_cast<int>(base) + ((local & 1) ? blocks - 1 - block : block);
    return w < params.work_tiles ? w : params.work_tiles;
  }
}

// The block's `local`-th piece of work: a whole work tile (kv_begin 0, kv_end left 0: the tile's own count), or with
// kFlagSplitLastPasses (no mask: every work tile has ⌈N / B_c⌉ K/V tiles) its `local`-th piece of the last passes'
// work tiles (a launch of its own, after the one of the whole passes: flash3_fp8.cu).
template <int kBc, bool kLongestFirst, bool kSplit>
__device__ __forceinline__ WorkPiece BlockWorkPiece(int local, const Flash3Params& params) {
  if constexpr (kSplit) {
    static_assert(!kLongestFirst, "the split schedule is for work tiles of one length");
    return BlockPiece(params.split, params.work_tiles, (params.n - 1) / kBc + 1, static_cast<int>(gridDim.x),
                      static_cast<int>(blockIdx.x), params.split.whole_passes + local);
  } else {
    return WorkPiece{BlockWork<kLongestFirst>(local, params), 0, 0, -1, 0};
  }
}

// The shared-memory addresses of a block's buffers and barriers.
template <typename Traits>
struct SharedLayout {
  std::uint32_t base;
  __device__ std::uint32_t Q(int buffer) const { return base + buffer * Traits::kQBytes; }
  __device__ std::uint32_t K(int stage) const { return base + Traits::kKOffset + stage * Traits::kTileBytes; }
  __device__ std::uint32_t V(int stage) const { return base + Traits::kVOffset + stage * Traits::kVStageBytes; }
  __device__ std::uint32_t O() const { return base + Traits::kOOffset; }
  __device__ std::uint32_t QFull(int buffer, int part = 0) const {
    return base + Traits::kBarrierOffset + 8 * (buffer * Traits::kQParts + part);
  }
  __device__ std::uint32_t QEmpty(int buffer) const { return QFull(Traits::kQBuffers * Traits::kQParts + buffer); }
  __device__ std::uint32_t KFull(int stage) const {
    return QFull(Traits::kQBuffers * (Traits::kQParts + 1)) + 32 * stage;
  }
  __device__ std::uint32_t VFull(int stage) const { return KFull(stage) + 8; }
  __device__ std::uint32_t KEmpty(int stage) const { return KFull(stage) + 16; }
  __device__ std::uint32_t VEmpty(int stage) const { return KFull(stage) + 24; }
};

// Position `it` of the K/V ring (counted over the block's whole life): its stage and the parity of the phase
// that the stage's fill number it / kStages completes.
template <int kStages>
struct RingSlot {
  int stage;
  std::uint32_t parity;
  __device__ explicit RingSlot(int it) : stage(it % kStages), parity(static_cast<std::uint32_t>(it / kStages) & 1u) {}
};

// The K/V tile a piece of work (K/V tiles kv_first … kv_first + kv_count − 1) walks j-th: from the first, or with
// kFlagDiagonalFirst from the last. The producer loads and the consumers read by this one order.
template <bool kDiagonalFirst>
__device__ __forceinline__ int WalkedKvTile(int j, int kv_first, int kv_count) {
  return kv_first + (kDiagonalFirst ? kv_count - 1 - j : j);
}

// ---------------------------------------------------------------------------------------------------------
// [SECTION] 3. The kernel
// ---------------------------------------------------------------------------------------------------------

// The producer: one thread issues every copy. V_{it−1} is issued after K_it, so that a K stage, which frees
// early (after S_it), is refilled without waiting for the V stage, which frees late (after P̃V); a work tile's last
// V goes right after its last K (H200, 2026-11-26: +6% at d = 128, N = 1024, where the consumers waited for it
// behind the next work tile's Q, whose buffer frees only after this tile's last S GEMM). A work tile's Q
// waits until both consumers ran their last S GEMM on the work tile that last used its buffer (with two buffers,
// the one before the current), or with Q_i in registers (Traits::kQInRegisters) until they loaded its fragments.
template <typename Traits, bool kLongestFirst, bool kSplit, bool kDiagonalFirst>
__device__ __forceinline__ void Produce(const SharedLayout<Traits>& smem, const CUtensorMap& q_map,
                                        const CUtensorMap& k_map, const CUtensorMap& v_map,
                                        const Flash3Params& params) {
  constexpr int kStages = Traits::kStages;
  const auto load_tile = [&](const CUtensorMap& map, std::uint32_t destination, std::uint32_t full, int row, int head) {
#pragma unroll
    for (int block = 0; block < Traits::kColumnBlocks; ++block)
      TmaLoad3d(destination + block * Traits::kKVBlockBytes, map, block * Traits::kBoxColumns, row, head, full);
  };
  // V_j of this work tile at ring position it.
  const auto load_v = [&](int it, int j, int head) {
    const RingSlot<kStages> slot(it);
    const int row = j * Traits::kBc;
    if (it >= kStages) BarrierWait(smem.VEmpty(slot.stage), slot.parity ^ 1u);
    BarrierArriveExpectBytes(smem.VFull(slot.stage), Traits::kTileBytes);
    if constexpr (Traits::kFp8)
      TmaLoad3d(smem.V(slot.stage), v_map, row, 0, head, smem.VFull(slot.stage));  // Vᵀ: B_c keys × d rows
    else
      load_tile(v_map, smem.V(slot.stage), smem.VFull(slot.stage), row, head);
  };
  int it = 0, local = 0;
  for (WorkPiece piece = BlockWorkPiece<Traits::kBc, kLongestFirst, kSplit>(0, params); piece.work < params.work_tiles;
       piece = BlockWorkPiece<Traits::kBc, kLongestFirst, kSplit>(++local, params)) {
    const WorkTile tile = DecodeWorkTile<Traits::kBr, Traits::kBc, kLongestFirst>(piece.work, params);
    // K/V tiles kv_first … kv_first + kv_count − 1 of the work tile (all of them but in a cut one).
    const int kv_first = piece.kv_begin, kv_count = kSplit ? piece.kv_end - piece.kv_begin : tile.kv_tiles;
    const auto kv_tile = [&](int j) { return WalkedKvTile<kDiagonalFirst>(j, kv_first, kv_count); };
    // Q buffer local mod kQBuffers; its fill before this one completed phase ((local / kQBuffers) − 1) mod 2 of
    // its empty barrier.
    const int q_buffer = local % Traits::kQBuffers;
    if (local >= Traits::kQBuffers)
      BarrierWait(smem.QEmpty(q_buffer), static_cast<std::uint32_t>(local / Traits::kQBuffers - 1) & 1u);
    // Q_i, or with kFlagQByConsumer its part `part` (that consumer's 64 rows, in boxes of 64 rows).
    const auto load_q = [&](int part) {
      constexpr int kPartBytes = Traits::kQBytes / Traits::kQParts, kPartRows = Traits::kBr / Traits::kQParts;
      BarrierArriveExpectBytes(smem.QFull(q_buffer, part), kPartBytes);
#pragma unroll
      for (int block = 0; block < Traits::kColumnBlocks; ++block)
        TmaLoad3d(smem.Q(q_buffer) + block * Traits::kQBlockBytes + part * kPartRows * 128, q_map,
                  block * Traits::kBoxColumns, tile.q_row0 + part * kPartRows, tile.head, smem.QFull(q_buffer, part));
    };
    load_q(0);
    for (int j = 0; j < kv_count; ++j, ++it) {
      const RingSlot<kStages> slot(it);
      // The fill before this one (fill number it / kStages − 1) completed phase parity ^ 1 of the empty barrier.
      if (it >= kStages) BarrierWait(smem.KEmpty(slot.stage), slot.parity ^ 1u);
      BarrierArriveExpectBytes(smem.KFull(slot.stage), Traits::kTileBytes);
      load_tile(k_map, smem.K(slot.stage), smem.KFull(slot.stage), kv_tile(j) * Traits::kBc, tile.head);
      if (j == 0)
        for (int part = 1; part < Traits::kQParts; ++part) load_q(part);  // the other consumers' Q after K_0
      if (j > 0) load_v(it - 1, kv_tile(j - 1), tile.head);
    }
    // The work tile's last V now, not after the next work tile's Q and K_0: with one Q buffer in shared memory the
    // next Q waits for this tile's last S GEMM, and P̃V of the last tile would wait for it and for the copy's latency.
    load_v(it - 1, kv_tile(kv_count - 1), tile.head);
  }
}

// 2^x on the FMA pipe instead of the special-function unit (FlashAttention-4's remedy for an exponential-bound
// softmax): x = n + f with n = round(x) (the 1.5·2^23 trick) and f in [−1/2, 1/2]; 2^f by a degree-3 polynomial
// (relative error under 7.5e-5 = 2^-13.7, a Lawson minimax fit), 2^n added to the exponent bits. x below −126
// gives 2^-126 (0 once P̃ is rounded to e4m3, 10^-38 in ℓ).
__device__ __forceinline__ float Exp2Polynomial(float x) {
  x = fmaxf(x, -126.0f);
  const float shifted = x + 12582912.0f;  // 1.5·2^23: the float's low bits are round(x)
  const float f = x - (shifted - 12582912.0f);
  const float p = fmaf(fmaf(fmaf(0.0551716714f, f, 0.24261115f), f, 0.693260987f), f, 0.999928072f);
  return __int_as_float(__float_as_int(p) + ((__float_as_int(shifted) - 0x4B400000) << 23));
}

// A consumer warp's rows g and g+8 (of its 16) in one tile: masking, the online-softmax statistics, and P̃ in
// place of S (as floats), scaled by 2^Traits::kPExponent. Returns whether O_i must be multiplied by α (the two rows'
// factors, set only then), the same for the whole warp. kMayMask = false leaves the mask out: the caller promises
// that the tile crosses neither N nor the diagonal of any of the warp's rows.
template <typename Traits, bool kMayMask = true, int kSAcc>
__device__ __forceinline__ bool SoftmaxTile(float (&s)[kSAcc], float (&row_max)[2], float (&row_sum)[2],
                                            float (&alpha)[2], int kv_col0, int row_a, int warp_row0, int quad,
                                            float scale_log2, const Flash3Params& params) {
  constexpr int kBc = 2 * kSAcc, kSTiles = kBc / 8;
  const int n = params.n;
  // Mask only where needed: the tile that crosses N, and (causal) tiles that cross this warp's diagonal.
  const bool crosses_n = kv_col0 + kBc > n;
  const bool crosses_diagonal = params.causal && kv_col0 + kBc - 1 > warp_row0;
  if (kMayMask && (crosses_n || crosses_diagonal)) {
    if constexpr (Traits::kBranchFreeMask) {
      // Key kv_col0 + 2·quad + k (k = 8t + e, a constant of the unrolled loop) is masked for a row when k exceeds
      // the row's limit: its last key (causal) or N − 1, less kv_col0 + 2·quad. One compare and one select an element.
      const int first = kv_col0 + 2 * quad;
      const int n_limit = n - 1 - first;
      const int limit_a = params.causal ? min(row_a - first, n_limit) : n_limit;
      const int limit_b = params.causal ? min(row_a + 8 - first, n_limit) : n_limit;
#pragma unroll
      for (int t = 0; t < kSTiles; ++t)
#pragma unroll
        for (int e = 0; e < 2; ++e) {
          const int k = t * 8 + e;
          s[4 * t + e] = k > limit_a ? -INFINITY : s[4 * t + e];
          s[4 * t + 2 + e] = k > limit_b ? -INFINITY : s[4 * t + 2 + e];
        }
    } else {
      const int row_b = row_a + 8;
#pragma unroll
      for (int t = 0; t < kSTiles; ++t)
#pragma unroll
        for (int e = 0; e < 2; ++e) {
          const int col = kv_col0 + t * 8 + 2 * quad + e;
          const bool out = col >= n;
          if (out || (params.causal && col > row_a)) s[4 * t + e] = -INFINITY;
          if (out || (params.causal && col > row_b)) s[4 * t + 2 + e] = -INFINITY;
        }
    }
  }
  // m_new = max(m_old, rowmax S); α = 2^(scale·log2e·(m_old − m_new)); P̃ = 2^(scale·log2e·S − scale·log2e·m_new).
  // A quad of lanes holds a row's B_c keys.
  constexpr int kChains = Traits::kSoftmaxChains;  // per row, joined at the end
  float chain_max[2][kChains];
#pragma unroll
  for (int c = 0; c < kChains; ++c) chain_max[0][c] = chain_max[1][c] = -INFINITY;
  chain_max[0][0] = row_max[0];
  chain_max[1][0] = row_max[1];
#pragma unroll
  for (int t = 0; t < kSTiles; ++t) {
    chain_max[0][t % kChains] = fmaxf(chain_max[0][t % kChains], fmaxf(s[4 * t], s[4 * t + 1]));
    chain_max[1][t % kChains] = fmaxf(chain_max[1][t % kChains], fmaxf(s[4 * t + 2], s[4 * t + 3]));
  }
  float tile_max[2], max_scaled[2];
  // Row r's maximum moves to new_max: α = 2^(m_old − m_new) and P̃'s offset from m_new. A row with every key so
  // far masked keeps m = −∞; subtract 0 then, so that no −∞ − (−∞) = NaN appears.
  const auto move_max = [&](int r, float new_max) {
    max_scaled[r] = new_max == -INFINITY ? 0.0f : new_max * scale_log2;
    alpha[r] = new_max != row_max[r] ? FastExp2(row_max[r] * scale_log2 - max_scaled[r]) : 1.0f;
    if constexpr (Traits::kPExponent != 0) max_scaled[r] -= static_cast<float>(Traits::kPExponent);  // P̃ · 2^kPExponent
    row_max[r] = new_max;
    row_sum[r] *= alpha[r];
  };
  constexpr float kThreshold = Traits::kRescaleThreshold;
#pragma unroll
  for (int r = 0; r < 2; ++r) {
    tile_max[r] = chain_max[r][0];
#pragma unroll
    for (int c = 1; c < kChains; ++c) tile_max[r] = fmaxf(tile_max[r], chain_max[r][c]);
    tile_max[r] = fmaxf(tile_max[r], __shfl_xor_sync(0xffffffffu, tile_max[r], 1));
    tile_max[r] = fmaxf(tile_max[r], __shfl_xor_sync(0xffffffffu, tile_max[r], 2));
    if constexpr (kThreshold == 0.0f) move_max(r, tile_max[r]);
  }
  // With a threshold the warp moves its rows' maxima only when one of them grew past its own by more than that (a
  // first finite maximum always does: −∞ + threshold = −∞); else P̃ is taken from the kept maxima.
  bool rescale = true;
  if constexpr (kThreshold > 0.0f) {
    rescale = __any_sync(0xffffffffu, tile_max[0] * scale_log2 > fmaf(row_max[0], scale_log2, kThreshold) ||
                                          tile_max[1] * scale_log2 > fmaf(row_max[1], scale_log2, kThreshold));
#pragma unroll
    for (int r = 0; r < 2; ++r) {
      if (rescale) {
        move_max(r, tile_max[r]);
      } else {
        max_scaled[r] = row_max[r] == -INFINITY ? 0.0f : row_max[r] * scale_log2;
        if constexpr (Traits::kPExponent != 0) max_scaled[r] -= static_cast<float>(Traits::kPExponent);
      }
    }
  }
  float chain_sum[2][kChains] = {};
  chain_sum[0][0] = row_sum[0];
  chain_sum[1][0] = row_sum[1];
#pragma unroll
  for (int i = 0; i < kSAcc; ++i) {
    const int r = (i / 2) % 2;  // accumulators 4t, 4t+1 are row g; 4t+2, 4t+3 row g+8
    const float x = fmaf(s[i], scale_log2, -max_scaled[r]);
    // Every kPolynomialEvery-th 2^x on the FMA pipe, the rest on the special-function unit (Traits).
    if constexpr (constexpr int kEvery = Traits::kPolynomialEvery; kEvery > 0)
      s[i] = i % kEvery == kEvery - 1 ? Exp2Polynomial(x) : FastExp2(x);
    else
      s[i] = FastExp2(x);
    if constexpr (!Traits::kRowSumOnTensorCores) chain_sum[r][(i / 4) % kChains] += s[i];
  }
  if constexpr (!Traits::kRowSumOnTensorCores) {
#pragma unroll
    for (int r = 0; r < 2; ++r) {
      row_sum[r] = chain_sum[r][0];
#pragma unroll
      for (int c = 1; c < kChains; ++c) row_sum[r] += chain_sum[r][c];
    }
  }
  return rescale;
}

// Four floats as four e4m3 bytes of one register, x0 in the lowest (round to nearest, saturating at ±448).
__device__ __forceinline__ std::uint32_t PackFp8x4(float x0, float x1, float x2, float x3) {
  const std::uint32_t low = __nv_cvt_float2_to_fp8x2(make_float2(x0, x1), __NV_SATFINITE, __NV_E4M3);
  const std::uint32_t high = __nv_cvt_float2_to_fp8x2(make_float2(x2, x3), __NV_SATFINITE, __NV_E4M3);
  return low | (high << 16);
}

// P̃ (as floats in the S accumulators) → the A operand of P̃V's k-step u.
// 16 bits (keys 16u..16u+15, S tiles 2u and 2u+1): the accumulators of a lane are its A fragment, packed in pairs.
// fp8 (keys 32u..32u+31): the A fragment of lane (g, c) is 4 bytes at k = 4c..4c+3 and 4 at k = 16+4c..16+4c+3
// (rows g and g+8), while its accumulators hold keys 2c, 2c+1, 8+2c, 9+2c, 16+2c, 17+2c, 24+2c, 25+2c. Each lane
// packs its own accumulators in that order, so key 8h + 2c + e lands at k = 16(h/2) + 4c + 2(h mod 2) + e: the
// quantizer stores Vᵀ's keys in the same order within each 32 (Fp8KeyPosition, flash3_fp8.cu), and P̃V sums over
// matching k. No shuffles.
template <typename T, int kSAcc, int kPSteps>
__device__ __forceinline__ void PackP(const float (&s)[kSAcc], std::uint32_t (&p)[kPSteps][4]) {
  static_assert(kPSteps * (kIsFp8<T> ? 16 : 8) == kSAcc, "one fragment per k-step of P̃V");
  if constexpr (kIsFp8<T>) {
#pragma unroll
    for (int u = 0; u < kSAcc / 16; ++u) {
      const float* a = s + 16 * u;
      p[u][0] = PackFp8x4(a[0], a[1], a[4], a[5]);      // row g,     keys 2c, 2c+1, 8+2c, 9+2c
      p[u][1] = PackFp8x4(a[2], a[3], a[6], a[7]);      // row g + 8
      p[u][2] = PackFp8x4(a[8], a[9], a[12], a[13]);    // row g,     keys 16+2c, 17+2c, 24+2c, 25+2c
      p[u][3] = PackFp8x4(a[10], a[11], a[14], a[15]);  // row g + 8
    }
  } else {
#pragma unroll
    for (int u = 0; u < kSAcc / 8; ++u) {
      p[u][0] = PackPair<T>(s[8 * u], s[8 * u + 1]);      // row g,     keys 16u + 2c, +1
      p[u][1] = PackPair<T>(s[8 * u + 2], s[8 * u + 3]);  // row g + 8, the same keys
      p[u][2] = PackPair<T>(s[8 * u + 4], s[8 * u + 5]);  // row g,     keys 16u + 8 + 2c, +1
      p[u][3] = PackPair<T>(s[8 * u + 6], s[8 * u + 7]);  // row g + 8
    }
  }
}

template <int kCount>
__device__ __forceinline__ void Rescale(float (&o)[kCount], const float (&alpha)[2]) {
#pragma unroll
  for (int i = 0; i < kCount; ++i) o[i] *= alpha[(i / 2) % 2];
}

// ℓ on the tensor cores (Traits::kRowSumOnTensorCores): the landed product's ℓ columns (one K/V tile's, at the
// current maximum once O is rescaled) added into ℓ in fp32, and restarted at 0. Accumulated across tiles in the
// product instead, ℓ came out short (O's relative error 0.33 at N = 16384): the fp8 tensor cores keep about 14 bits
// while they add (flash3_fp8.cu), and ℓ, a sum of positive terms, grows far past each tile's addend.
template <typename Traits>
__device__ __forceinline__ void TakeRowSums(float (&o)[Traits::kOAcc], float (&row_sum)[2]) {
  if constexpr (Traits::kRowSumOnTensorCores) {
    constexpr int kFirst = Traits::kHeadDim / 2;  // d[4t..4t+3] of t = d/8: row g twice, then row g + 8 twice
    row_sum[0] += o[kFirst];
    row_sum[1] += o[kFirst + 2];
    // A zero moved in by an instruction of its own: assigned as the constant 0.0f, ptxas serialized the wgmma (C7511).
#pragma unroll
    for (int i = kFirst; i < Traits::kOAcc; ++i) asm volatile("mov.b32 %0, 0;\n" : "=f"(o[i]));
  }
}

// The values a consumer thread keeps of a piece of a cut work tile (kFlagSplitLastPasses): O's d/2 accumulators,
// then the maximum and ℓ of its two rows.
template <typename Traits>
inline constexpr int kPartialValues = Traits::kHeadDim / 2 + 4;

// Bytes of Flash3Params::partials for `blocks` blocks: per boundary 1 … blocks − 1 (index 0 unused), side and
// consumer, 128 threads' kPartialValues floats.
template <typename Traits>
constexpr long long PartialsBytes(int blocks) {
  return static_cast<long long>(blocks) * 2 * Traits::kConsumers * 128 * kPartialValues<Traits> * 4;
}

// The end of a piece of a cut work tile (kFlagSplitLastPasses), for one consumer warpgroup: its running maximum m,
// ℓ and unnormalized O go to the workspace, and the later of the two pieces to arrive merges the other's into its
// own: M = max(m_0, m_1), O = 2^(m_0 − M)·O_0 + 2^(m_1 − M)·O_1 (scaled exponents), ℓ likewise, side 0's terms
// first whichever side merges, so that the result does not depend on which finished last. Returns whether this
// piece merged (O, m, ℓ then hold the whole work tile's); the other stores no O. `boundary` and `side` as in
// WorkPiece (flash3_schedule.h).
// Memory ordering as flash_decode's merge (kernels/cuda/decode/flash_decode_kernel.cuh, section 3): every thread
// fences its stores at device scope, the warpgroup's barrier orders them before thread 0's atomicAdd on the
// (boundary, consumer) counter, and the piece whose add finds 1 fences again and reads the other's values from L2
// (__ldcg). It sets the counter back to 0 for the next launch.
template <typename Traits>
__device__ __forceinline__ bool MergeCutTile(float (&o)[Traits::kOAcc], float (&row_max)[2], float (&row_sum)[2],
                                             int boundary, int side, int consumer, const Flash3Params& params) {
  constexpr int kValues = kPartialValues<Traits>, kChunks = kValues / 4, kO = Traits::kHeadDim / 2;
  static_assert(kValues % 4 == 0, "whole float4 chunks");
  const int thread = threadIdx.x % 128;
  // Chunk c (4 values) of thread t at float4 c·128 + t of the slot: each store of the warpgroup is contiguous.
  const auto slot = [&](int which) {
    const long long index = (static_cast<long long>(boundary) * 2 + which) * Traits::kConsumers + consumer;
    return reinterpret_cast<float4*>(params.partials) + index * kChunks * 128 + thread;
  };
  float4* own = slot(side);
#pragma unroll
  for (int c = 0; c < kO / 4; ++c) own[c * 128] = make_float4(o[4 * c], o[4 * c + 1], o[4 * c + 2], o[4 * c + 3]);
  own[(kChunks - 1) * 128] = make_float4(row_max[0], row_max[1], row_sum[0], row_sum[1]);
  __threadfence();
  WarpgroupBarrier(1 + consumer);
  bool later = false;
  if (thread == 0) {
    unsigned* arrivals = params.arrivals + boundary * Traits::kConsumers + consumer;
    later = atomicAdd(arrivals, 1u) == 1u;
    if (later) *arrivals = 0u;
  }
  if (!WarpgroupBarrierOr(1 + consumer, later)) return false;
  __threadfence();
  const float4* other = slot(side ^ 1);
  const float4 statistics = __ldcg(other + (kChunks - 1) * 128);
  const float other_max[2] = {statistics.x, statistics.y}, other_sum[2] = {statistics.z, statistics.w};
  // f_s = 2^(m_s·scale − M·scale): 0 for a row with every key of its piece masked (m_s = −∞).
  // The consumer's scale (the kernel's, computed again here rather than kept in a register through the loop).
  const float scale_log2 =
      Traits::kFp8 ? params.scale_log2 * (params.descale[0] * params.descale[1]) : params.scale_log2;
  // x = f_1·x_1 + f_0·x_0 in one fmaf, side 0's and side 1's values in fixed places.
  const bool own_first = side == 0;
  const auto combine = [own_first](float f_own, float own_value, float f_other, float other_value) {
    return own_first ? fmaf(f_other, other_value, f_own * own_value) : fmaf(f_own, own_value, f_other * other_value);
  };
  float own_factor[2], other_factor[2];
#pragma unroll
  for (int r = 0; r < 2; ++r) {
    const float merged = fmaxf(row_max[r], other_max[r]);
    const float reference = merged == -INFINITY ? 0.0f : merged * scale_log2;
    // One fmaf each, spelled out: both pieces then round their factors alike whatever the compiler contracts.
    own_factor[r] = row_max[r] == -INFINITY ? 0.0f : FastExp2(fmaf(row_max[r], scale_log2, -reference));
    other_factor[r] = other_max[r] == -INFINITY ? 0.0f : FastExp2(fmaf(other_max[r], scale_log2, -reference));
    row_sum[r] = combine(own_factor[r], row_sum[r], other_factor[r], other_sum[r]);
    row_max[r] = merged;
  }
#pragma unroll
  for (int c = 0; c < kO / 4; ++c) {
    const float4 chunk = __ldcg(other + c * 128);
    const float values[4] = {chunk.x, chunk.y, chunk.z, chunk.w};
#pragma unroll
    for (int e = 0; e < 4; ++e) {
      const int i = 4 * c + e, r = (i / 2) % 2;  // accumulators 4t, 4t+1 are row g; 4t+2, 4t+3 row g+8
      o[i] = combine(own_factor[r], o[i], other_factor[r], values[e]);
    }
  }
  return true;
}

// S = Q_i K_jᵀ for this consumer's 64 rows: one m64n{B_c} wgmma per 32 bytes of a row (d/16 k-steps of k16 in
// 16 bits, d/32 of k32 in fp8); k-step ks reads 32 bytes at (ks mod 4)·32 of column block ks / 4 of both
// operands, Q_i's from shared memory (SS) or, with Traits::kQInRegisters, from its fragments (RS). Issued, not
// waited for. A k-step's descriptor is the tile's advanced by one addition (DescriptorAdvance)
// instead of built from its address (a mask, shifts and ors each). H200 (kernels/README.md): d = 64 +2-8%, d = 256
// +1-11% at most shapes, d = 128 within ±4% (2026-11-26); fp8 d = 128 +1-3% at all six shapes (2026-11-27, with ℓ
// on the tensor cores; without it slower at five of six shapes, 3-10%, when it was built per k-step there).
template <typename Traits>
__device__ __forceinline__ void IssueScores(float (&s)[Traits::kBc / 2], std::uint32_t q_consumer,
                                            const std::uint32_t (&q_fragments)[Traits::kQSteps][4],
                                            std::uint32_t k_stage) {
  using T = typename Traits::Element;
  const std::uint64_t a_tile = SwizzledDescriptor(q_consumer, 16, 1024);
  const std::uint64_t b_tile = SwizzledDescriptor(k_stage, 16, 1024);
#pragma unroll
  for (int ks = 0; ks < Traits::kRowBytes / 32; ++ks) {
    const std::uint32_t a_offset = (ks / 4) * Traits::kQBlockBytes + (ks % 4) * 32;
    const std::uint32_t b_offset = (ks / 4) * Traits::kKVBlockBytes + (ks % 4) * 32;
    if constexpr (Traits::kQInRegisters)
      Wgmma<T, Traits::kBc>::RSKMajor(s, q_fragments[ks], DescriptorAdvance(b_tile, b_offset), ks > 0);
    else
      Wgmma<T, Traits::kBc>::SS(s, DescriptorAdvance(a_tile, a_offset), DescriptorAdvance(b_tile, b_offset), ks > 0);
  }
}

// Q_i's A fragments of the consumer's 64 rows (Traits::kQInRegisters), one ldmatrix.x4 per k-step u (32 bytes of a
// row, in column block u/4): matrix i is rows 8(i mod 2) … of the warp's 16 and the block's 16-byte chunk
// 2(u mod 4) + i/2, so that register i holds the lane's bytes 4c … 4c + 3 of that chunk in row g (i even) or g + 8 (i
// odd): elements 2c, 2c + 1 of the k-step's first 8 (i < 2) or last 8 (i ≥ 2), the m16n8k16 A layout.
// `row_address`: Q_i's consumer rows plus the row lane L addresses (16w + 8((L/8) mod 2) + L mod 8, 128 bytes a row);
// `swizzle`: 16·((L/16) xor (L mod 8)), the 128-byte swizzle putting chunk 2v + L/16 at swizzle xor 32v.
template <typename Traits>
__device__ __forceinline__ void LoadQFragments(std::uint32_t (&q)[Traits::kQSteps][4], std::uint32_t row_address,
                                               std::uint32_t swizzle) {
#pragma unroll
  for (int u = 0; u < Traits::kQSteps; ++u)
    device::LoadMatrixX4(q[u], row_address + (u / 4) * Traits::kQBlockBytes + (swizzle ^ (32u * (u % 4))));
}
// O += P̃ V_j: B_c / k-step wgmma of m64n{d}, or m64n{d + 8} with ℓ's columns (Traits). 16 bits: V_j N-major
// (d contiguous; a k-step is 16 keys · 128 bytes further, the leading byte offset is one 64-column block). fp8: V_jᵀ
// K-major (keys contiguous, d rows; a k-step is 32 bytes further within the row, as for K_j in S). Issued, not
// waited for.
template <typename Traits>
__device__ __forceinline__ void IssueOutput(float (&o)[Traits::kOAcc],
                                            const std::uint32_t (&p)[Traits::kPSteps][4], std::uint32_t v_stage) {
  using T = typename Traits::Element;
  constexpr int kN = 2 * Traits::kOAcc;  // d, or d + 8 with ℓ's columns
  constexpr std::uint32_t kLeading = Traits::kFp8 ? 16 : Traits::kKVBlockBytes;
  const std::uint64_t b_tile = SwizzledDescriptor(v_stage, kLeading, 1024);
#pragma unroll
  for (int u = 0; u < Traits::kPSteps; ++u) {
    const std::uint32_t offset = Traits::kFp8 ? u * 32 : u * 16 * 128;
    Wgmma<T, kN>::RS(o, p[u], DescriptorAdvance(b_tile, offset), 1);
  }
}

// The serial-softmax ablation's consumer loop over one work tile's K/V tiles (flash3_wgmma's options bit
// serial-softmax), defined in ablation/flash3_serial_loop.cuh, which flash3_wgmma.cu includes (flash3_fp8 has no such
// bit: its kernels never instantiate it).
template <typename Traits>
__device__ __forceinline__ void ConsumeSerially(const SharedLayout<Traits>& smem, int it, int kv_count, int kv_col0,
                                                int q_buffer, std::uint32_t q_consumer,
                                                const std::uint32_t (&q_fragments)[Traits::kQSteps][4],
                                                float (&s)[Traits::kBc / 2], std::uint32_t (&p)[Traits::kPSteps][4],
                                                float (&o_acc)[Traits::kOAcc], float (&row_max)[2], float (&row_sum)[2],
                                                float (&alpha)[2], int row_a, int warp_row0, int quad, int lane,
                                                float scale_log2, const Flash3Params& params);

// Grid: block b takes work tiles b, b + gridDim.x, ... (one each with one block per tile). Warpgroup 0 is the
// producer, warpgroups 1 and 2 the consumers: consumer c owns rows 64c..64c+63 of Q_i, its warp w rows 16w.. of
// those, and a lane rows g and g+8 of its warp's 16. Both sides walk the same work tiles and K/V tiles; the K/V
// ring position `it` counts tiles over the block's whole life.
// The traits of the kernel with these flags (kFlagThreeConsumers picks the consumer count, kFlagSelectMask the mask,
// kFlagOverlapSoftmax whether Q_i may sit in registers).
template <typename T, int kD, unsigned kFlags>
using Flash3TraitsOf = Flash3Traits<T, kD, (kFlags & kFlagThreeConsumers) ? 3 : 2, (kFlags & kFlagSelectMask) != 0,
                                    (kFlags & kFlagOverlapSoftmax) != 0, (kFlags & kFlagNarrowKeys) != 0,
                                    (kFlags & kFlagQByConsumer) != 0>;

template <typename T, int kD, unsigned kFlags>
__global__ void __launch_bounds__(Flash3TraitsOf<T, kD, kFlags>::kThreads, 1)
    Flash3WgmmaKernel(const __grid_constant__ CUtensorMap q_map, const __grid_constant__ CUtensorMap k_map,
                      const __grid_constant__ CUtensorMap v_map, const Flash3Params params) {
  using Traits = Flash3TraitsOf<T, kD, kFlags>;
  using Out = typename Traits::Out;
  constexpr int kBr = Traits::kBr, kBc = Traits::kBc, kStages = Traits::kStages;
  constexpr bool kOverlap = (kFlags & kFlagOverlapSoftmax) != 0;
  constexpr bool kLongestFirst = (kFlags & kFlagLongestFirst) != 0;
  constexpr bool kStagedStore = (kFlags & kFlagStagedStore) != 0;
  constexpr bool kPingPong = (kFlags & kFlagPingPong) != 0;
  constexpr bool kStageOInQ = (kFlags & kFlagStageOInQ) != 0;
  constexpr bool kSplit = (kFlags & kFlagSplitLastPasses) != 0;
  constexpr bool kDiagonalFirst = (kFlags & kFlagDiagonalFirst) != 0;
  constexpr bool kWholeKeyTiles = (kFlags & kFlagWholeKeyTiles) != 0;
  static_assert(!kDiagonalFirst || (kOverlap && !kSplit && kBr == kBc),
                "diagonal first: the overlapped loop, whole work tiles, one K/V tile across the diagonal");
  static_assert(!kWholeKeyTiles || kOverlap, "whole key tiles: the overlapped loop's softmax");
  static_assert(!kStageOInQ || kStagedStore, "a staging place only for the staged store");
  static_assert(!kStagedStore || Traits::kCanStageO || kStageOInQ, "no room for the O staging tile");
  static_assert(!kStageOInQ || Traits::kOBlockBytes == Traits::kQBlockBytes, "Q_i's column blocks hold O's");
  static_assert(!kStageOInQ || !Traits::kQInRegisters, "Q_i's buffer, released early, would be loaded over O");
  static_assert(!kPingPong || kOverlap, "ping-pong hands over the overlapped loop's softmax");
  static_assert(!kPingPong || Traits::kConsumers == 2, "ping-pong takes turns between two consumers");
  extern __shared__ unsigned char shared_raw[];
  const SharedLayout<Traits> smem{(SharedAddress(shared_raw) + 1023u) & ~1023u};

  const int warpgroup = threadIdx.x / 128;
  if (threadIdx.x == 0) {
    for (int buffer = 0; buffer < Traits::kQBuffers; ++buffer) {
      for (int part = 0; part < Traits::kQParts; ++part) BarrierInit(smem.QFull(buffer, part), 1);
      BarrierInit(smem.QEmpty(buffer), Traits::kReleaseCount);
    }
    for (int stage = 0; stage < kStages; ++stage) {
      BarrierInit(smem.KFull(stage), 1);
      BarrierInit(smem.VFull(stage), 1);
      BarrierInit(smem.KEmpty(stage), Traits::kReleaseCount);
      BarrierInit(smem.VEmpty(stage), Traits::kReleaseCount);
    }
    // The initialized barriers must be visible to the copy engine (the async proxy) as well.
    asm volatile("fence.mbarrier_init.release.cluster;\nfence.proxy.async.shared::cta;\n" ::: "memory");
  }
  if constexpr (Traits::kRowSumOnTensorCores) {
    // The ones after each V stage (1.0: e4m3 0x38, fp16 0x3C00, bf16 0x3F80) in 16-byte stores, made visible to
    // wgmma (the async proxy).
    constexpr int kChunks = kStages * Traits::kOnesBytes / 16;
    constexpr std::uint32_t kOnes = Traits::kFp8 ? 0x38383838u : std::is_same_v<T, __half> ? 0x3C003C00u : 0x3F803F80u;
    // Two forms of one fill: fp8's as it was timed and tested. One loop for both changes fp8's and 16-bit's code,
    // and a loop for fp8 measured 1-3% slower at N ≥ 4096 (docs/results/2026-11-27-h200-fp8-row-sum/experiments/,
    // 10-cubins.txt).
    if constexpr (kChunks <= Traits::kThreads) {  // fp8: 1 KB a stage, one store a thread
      if (threadIdx.x < kChunks) {
        const int stage = threadIdx.x / (Traits::kOnesBytes / 16), chunk = threadIdx.x % (Traits::kOnesBytes / 16);
        const std::uint32_t address = smem.V(stage) + Traits::kTileBytes + 16 * chunk;
        asm volatile("st.shared.v4.b32 [%0], {%1, %1, %1, %1};\n" ::"r"(address), "r"(kOnes));
        asm volatile("fence.proxy.async.shared::cta;\n" ::: "memory");
      }
    } else {  // 16 bits: a whole 16 KB swizzle block a stage
      for (int index = threadIdx.x; index < kChunks; index += Traits::kThreads) {
        const int stage = index / (Traits::kOnesBytes / 16), chunk = index % (Traits::kOnesBytes / 16);
        const std::uint32_t address = smem.V(stage) + Traits::kTileBytes + 16 * chunk;
        asm volatile("st.shared.v4.b32 [%0], {%1, %1, %1, %1};\n" ::"r"(address), "r"(kOnes));
      }
      asm volatile("fence.proxy.async.shared::cta;\n" ::: "memory");
    }
  }
  __syncthreads();

  if (warpgroup == 0) {
    // ---- Producer warpgroup: one thread issues every TMA copy; the other 127 give their registers back, leave.
    SetMaxRegistersDecrease<Traits::kProducerRegisters>();
    if (threadIdx.x == 0) {
      TmaPrefetchDescriptor(q_map);
      TmaPrefetchDescriptor(k_map);
      TmaPrefetchDescriptor(v_map);
      Produce<Traits, kLongestFirst, kSplit, kDiagonalFirst>(smem, q_map, k_map, v_map, params);
    }
  } else {
    // ---- Consumer warpgroups: S = Q_i K_jᵀ (wgmma SS, or RS with Q_i in registers), online softmax in registers,
    // O_i += P̃ V_j (wgmma RS).
    SetMaxRegistersIncrease<Traits::kConsumerRegisters>();
    const int consumer = warpgroup - 1;
    const int warp = (threadIdx.x / 32) % 4, lane = threadIdx.x % 32;
    const int g = lane / 4, quad = lane % 4;
    const int n = params.n;
    // Q_i rows of this consumer in the first Q buffer: 64 rows × 128 bytes into each column block.
    const std::uint32_t q_consumer0 = smem.Q(0) + consumer * 64 * 128;
    // Q_i in registers (Traits::kQInRegisters): this lane's ldmatrix row and swizzle (LoadQFragments).
    const std::uint32_t q_lane_row = (warp * 16 + 8 * ((lane / 8) % 2) + lane % 8) * 128;
    const std::uint32_t q_lane_swizzle = 16u * static_cast<std::uint32_t>((lane / 16) ^ (lane % 8));
    std::uint32_t q_fragments[Traits::kQSteps][4];
    constexpr int kSAcc = kBc / 2;  // S accumulators a thread holds: 64 rows × B_c keys / 128 threads
    constexpr int kOAcc = Traits::kOAcc;  // O accumulators: 64 rows × d (+ 8 columns of ℓ) / 128 threads
    // fp8: S = descale_q·descale_k·(Q̂ K̂ᵀ) and O = descale_v·(P̃ V̂)/ℓ, the factors folded into the exponent's
    // scale and the final division.
    float scale_log2 = params.scale_log2, output_scale = 1.0f;
    if constexpr (Traits::kFp8) {
      scale_log2 *= params.descale[0] * params.descale[1];
      output_scale = params.descale[2];
    }
    const auto release = [&](std::uint32_t barrier) {
      if (lane == 0) BarrierArrive(barrier);  // one arrival per warp, after the warp's wgmma wait or ldmatrix
    };
    // Ping-pong: named barrier 3 + c (after the warpgroups' own 1 and 2; 256 threads: consumer c waits, the other
    // arrives) is consumer c's turn for the softmax. Both consumers walk the same tiles, so they take equally many:
    // consumer 1 opens consumer 0's first turn, each softmax ends by opening the other's turn, and consumer 0 takes
    // the last hand-over at the end.
    constexpr int kTurnThreads = 256;
    const auto begin_turn = [&] {
      if constexpr (kPingPong) NamedBarrierSync(3 + consumer, kTurnThreads);
    };
    const auto end_turn = [&] {
      if constexpr (kPingPong) NamedBarrierArrive(3 + (1 - consumer), kTurnThreads);
    };
    if (kPingPong && consumer == 1) NamedBarrierArrive(3, kTurnThreads);
    int it = 0, local = 0;
    for (WorkPiece piece = BlockWorkPiece<kBc, kLongestFirst, kSplit>(0, params); piece.work < params.work_tiles;
         piece = BlockWorkPiece<kBc, kLongestFirst, kSplit>(++local, params)) {
      const WorkTile tile = DecodeWorkTile<kBr, kBc, kLongestFirst>(piece.work, params);
      // K/V tiles kv_first … kv_first + kv_count − 1 of the work tile (all of them but in a cut one), at ring
      // positions it … it + kv_count − 1 in the order they are walked (kFlagDiagonalFirst: the last first). Below,
      // "tile j" is the j-th walked.
      const int kv_first = piece.kv_begin, kv_count = kSplit ? piece.kv_end - piece.kv_begin : tile.kv_tiles;
      const int kv_col0 = kv_first * kBc;  // the first key
      // The first key of the K/V tile walked j-th: its offset within the piece, plus the piece's first key.
      const auto kv_col = [&](int j) { return WalkedKvTile<kDiagonalFirst>(j, 0, kv_count) * kBc + kv_col0; };
      const int warp_row0 = tile.q_row0 + consumer * 64 + warp * 16;
      const int row_a = warp_row0 + g;
      float o_acc[kOAcc];
#pragma unroll
      for (int i = 0; i < kOAcc; ++i) o_acc[i] = 0.0f;
      float row_max[2] = {-INFINITY, -INFINITY}, row_sum[2] = {0.0f, 0.0f}, alpha[2];
      float s[kSAcc];
      std::uint32_t p[Traits::kPSteps][4];
      const int q_buffer = local % Traits::kQBuffers;
      BarrierWait(smem.QFull(q_buffer, Traits::kQParts > 1 ? consumer : 0),
                  static_cast<std::uint32_t>(local / Traits::kQBuffers) & 1u);
      const std::uint32_t q_consumer = q_consumer0 + q_buffer * Traits::kQBytes;
      // Q_i's buffer released once its fragments are in registers (read in the generic proxy; the next fill comes
      // from the copy engine, the async proxy, hence the proxy fence before the release), else after the last S GEMM.
      if constexpr (Traits::kQInRegisters) {
        LoadQFragments<Traits>(q_fragments, q_consumer + q_lane_row, q_lane_swizzle);
        PinRegisters(q_fragments);
        asm volatile("fence.proxy.async.shared::cta;\n" ::: "memory");
        __syncwarp();
        release(smem.QEmpty(q_buffer));
      }

      if constexpr (kOverlap) {
        // Tile 0: S_0 alone.
        {
          const RingSlot<kStages> slot(it);
          BarrierWait(smem.KFull(slot.stage), slot.parity);
          WgmmaFence();
          IssueScores<Traits>(s, q_consumer, q_fragments, smem.K(slot.stage));
          WgmmaCommit();
          WgmmaWait<0>();
          PinRegisters(s);
          release(smem.KEmpty(slot.stage));
          if (!Traits::kQInRegisters && kv_count == 1) release(smem.QEmpty(q_buffer));
          // O_i is 0: no rescale.
          begin_turn();
          SoftmaxTile<Traits, !kWholeKeyTiles>(s, row_max, row_sum, alpha, kv_col(0), row_a, warp_row0, quad,
                                               scale_log2, params);
          end_turn();
          PackP<T>(s, p);
        }
        // Tile j ≥ 1: issue S_j and P̃_{j−1} V_{j−1}; wait for S_j only, run its softmax while the tensor cores
        // finish the product, then wait for that, rescale O by α_j and repack P̃_j.
        for (int j = 1; j < kv_count; ++j) {
          const RingSlot<kStages> slot(it + j), previous(it + j - 1);
          BarrierWait(smem.KFull(slot.stage), slot.parity);
          WgmmaFence();
          IssueScores<Traits>(s, q_consumer, q_fragments, smem.K(slot.stage));
          WgmmaCommit();
          BarrierWait(smem.VFull(previous.stage), previous.parity);
          // o_acc and p were last written by ordinary instructions (Rescale, PackP) and the wait's loop stands
          // between the fence above and this product: it needs a fence of its own, which ptxas would otherwise
          // inject (C7519, "warpgroup.arrive is injected"). Waiting for V_{j−1} before the fence above instead, so
          // one fence serves both, costs 1-8% (docs/results/2026-11-25-h200-flash3-arrive).
          WgmmaFence();
          IssueOutput<Traits>(o_acc, p, smem.V(previous.stage));
          WgmmaCommit();
          WgmmaWait<1>();
          PinRegisters(s);
          release(smem.KEmpty(slot.stage));
          if (!Traits::kQInRegisters && j + 1 == kv_count) release(smem.QEmpty(q_buffer));
          begin_turn();
          const bool rescale = SoftmaxTile<Traits, !kDiagonalFirst && !kWholeKeyTiles>(
              s, row_max, row_sum, alpha, kv_col(j), row_a, warp_row0, quad, scale_log2, params);
          end_turn();
          if constexpr (Traits::kWaitAfterSoftmax)
            WgmmaWaitAfter<0>(__float_as_uint(row_sum[0]) | __float_as_uint(row_sum[1]));
          else
            WgmmaWait<0>();
          PinRegisters(o_acc);
          PinRegisters(p);
          release(smem.VEmpty(previous.stage));
          if (rescale) Rescale(o_acc, alpha);
          TakeRowSums<Traits>(o_acc, row_sum);
          PackP<T>(s, p);
        }
        // The last tile's P̃ V.
        const RingSlot<kStages> last(it + kv_count - 1);
        BarrierWait(smem.VFull(last.stage), last.parity);
        WgmmaFence();
        IssueOutput<Traits>(o_acc, p, smem.V(last.stage));
        WgmmaCommit();
        WgmmaWait<0>();
        PinRegisters(o_acc);
        PinRegisters(p);
        release(smem.VEmpty(last.stage));
        TakeRowSums<Traits>(o_acc, row_sum);
      } else {
        // The serial-softmax ablation (ablation/flash3_serial_loop.cuh): S_j, its softmax and P̃_j V_j in turn.
        ConsumeSerially<Traits>(smem, it, kv_count, kv_col0, q_buffer, q_consumer, q_fragments, s, p, o_acc, row_max,
                                row_sum, alpha, row_a, warp_row0, quad, lane, scale_log2, params);
      }
      it += kv_count;
      // A piece of a cut work tile: the later of its two pieces merges them and stores O_i, the other goes on.
      if constexpr (kSplit) {
        // Side 1 of a cut ends at the work tile's last K/V tile, side 0 begins at its first (flash3_schedule.h).
        const bool side_1 = kv_first > 0, side_0 = !side_1 && kv_count < tile.kv_tiles;
        if ((side_0 || side_1) && !MergeCutTile<Traits>(o_acc, row_max, row_sum, blockIdx.x + (side_0 ? 1 : 0),
                                                        side_1 ? 1 : 0, consumer, params))
          continue;
      }

      // O_i = diag(ℓ_i)⁻¹ O_i. Staged: the warpgroup writes its 64 rows, converted to 16 bits, into the O staging
      // tile (16-bit Q's swizzled layout: the 8 rows of one store land in 8 bank groups), then copies them out row
      // after row in 16-byte stores. Direct: 4-byte pairs straight from the accumulators. Rows ≥ N are never stored.
      float inverse_sum[2];
#pragma unroll
      for (int r = 0; r < 2; ++r) {
        float sum = row_sum[r];
        if constexpr (!Traits::kRowSumOnTensorCores) {  // else the whole row's ℓ already, in each lane of its quad
          sum += __shfl_xor_sync(0xffffffffu, sum, 1);
          sum += __shfl_xor_sync(0xffffffffu, sum, 2);
        }
        inverse_sum[r] = output_scale / sum;
      }
      Out* o_head = static_cast<Out*>(params.o) + static_cast<std::size_t>(tile.head) * n * kD;
      const int row_b = row_a + 8;
      const std::uint32_t o_stage = kStageOInQ ? smem.Q(q_buffer) : smem.O();
      if constexpr (kStagedStore) WarpgroupBarrier(1 + consumer);  // the last tile's copy-out has read the tile
#pragma unroll
      for (int t = 0; t < kD / 8; ++t) {
        const std::uint32_t top = PackPair<Out>(o_acc[4 * t] * inverse_sum[0], o_acc[4 * t + 1] * inverse_sum[0]);
        const std::uint32_t bottom =
            PackPair<Out>(o_acc[4 * t + 2] * inverse_sum[1], o_acc[4 * t + 3] * inverse_sum[1]);
        if constexpr (kStagedStore) {
          const int tile_row = consumer * 64 + warp * 16 + g;  // tile_row + 8 has the same swizzle
          const std::uint32_t address =
              o_stage + (t / 8) * Traits::kOBlockBytes + tile_row * 128 + (((t % 8) ^ (tile_row % 8)) * 16) + 4 * quad;
          asm volatile("st.shared.b32 [%0], %1;\n" ::"r"(address), "r"(top));
          asm volatile("st.shared.b32 [%0], %1;\n" ::"r"(address + 8 * 128), "r"(bottom));
        } else {
          const int col = t * 8 + 2 * quad;
          if (row_a < n) *reinterpret_cast<std::uint32_t*>(o_head + static_cast<std::size_t>(row_a) * kD + col) = top;
          if (row_b < n)
            *reinterpret_cast<std::uint32_t*>(o_head + static_cast<std::size_t>(row_b) * kD + col) = bottom;
        }
      }
      if constexpr (kStagedStore) {
        WarpgroupBarrier(1 + consumer);  // the warpgroup's 64 rows are in shared memory
        constexpr int kChunksPerRow = kD / 8;
        const int thread_in_group = threadIdx.x % 128;
#pragma unroll
        for (int step = 0; step < 64 * kChunksPerRow / 128; ++step) {
          const int index = step * 128 + thread_in_group;
          const int row = index / kChunksPerRow, chunk = index % kChunksPerRow;
          const int tile_row = consumer * 64 + row;
          if (tile.q_row0 + tile_row < n) {
            uint4 value;
            asm volatile("ld.shared.v4.b32 {%0, %1, %2, %3}, [%4];\n"
                         : "=r"(value.x), "=r"(value.y), "=r"(value.z), "=r"(value.w)
                         : "r"(o_stage + (chunk / 8) * Traits::kOBlockBytes + tile_row * 128 +
                               (((chunk % 8) ^ (tile_row % 8)) * 16)));
            *reinterpret_cast<uint4*>(o_head + static_cast<std::size_t>(tile.q_row0 + tile_row) * kD + chunk * 8) =
                value;
          }
        }
      }
    }
    if (kPingPong && consumer == 0) NamedBarrierSync(3, kTurnThreads);  // consumer 1's last hand-over
  }
}

// One launch of the kernel: `persistent` gives min(work tiles, multiprocessors) blocks, else one per work tile.
template <typename T, int kD, unsigned kFlags>
cudaError_t LaunchFlash3Kernel(cudaStream_t stream, const CUtensorMap& q_map, const CUtensorMap& k_map,
                               const CUtensorMap& v_map, const Flash3Params& params, bool persistent,
                               int multiprocessors) {
  using Traits = Flash3TraitsOf<T, kD, kFlags>;
  auto* kernel = &Flash3WgmmaKernel<T, kD, kFlags>;
  static const cudaError_t attribute_status =
      cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, Traits::kSharedBytes);
  if (attribute_status != cudaSuccess) return attribute_status;
  if (multiprocessors <= 0) return cudaErrorInvalidDevice;
  const int blocks = persistent ? std::min(params.work_tiles, multiprocessors) : params.work_tiles;
  Flash3Params launch_params = params;
  if constexpr ((kFlags & kFlagLongestFirst) != 0) {
    launch_params.heads = params.work_tiles / params.q_tiles;
    launch_params.by_section_tiles = MakeFastDivisor(params.section_heads * params.q_tiles);
    launch_params.by_section_heads = MakeFastDivisor(params.section_heads);
    const int last_section_heads = launch_params.heads % params.section_heads;
    launch_params.by_last_section_heads = MakeFastDivisor(last_section_heads > 0 ? last_section_heads : 1);
  }
  kernel<<<blocks, Traits::kThreads, Traits::kSharedBytes, stream>>>(q_map, k_map, v_map, launch_params);
  return cudaGetLastError();
}

}  // namespace flashviz::cuda::wgmma_detail
