// flash2_mma: FlashAttention-2's forward pass on the tensor cores through mma.sync (m16n8k16), fp16 and bf16
// inputs, fp32 accumulation. kernels/cuda/mma/flash2_mma.cu says what it changes versus flash2_wmma and what
// it measured; this header is what the registry, `flashviz bench`, the tests and the timing driver call.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "kernels/cuda/attention_launch.h"

namespace flashviz::cuda {

// AttentionArgs::options bits: each flips ONE choice of the shipped kernel (0), so its gain can be measured on the
// same code: bits 0-2 switch an optimization off, 3-4 pick the other register/warp layout, 5-7 turn a trial on.
// Any bit runs the ablation kernels (kernels/cuda/mma/ablation/flash2_mma_ablation.cuh).
enum Flash2MmaOption : unsigned {
  // Shared-memory tiles stored row after row instead of with the XOR swizzle (16-byte chunk c of row r at
  // c ^ (r mod 8)): every ldmatrix phase then reads 8 rows of the same bank group, an 8-way bank conflict.
  kFlash2MmaNoSwizzle = 1u << 0,
  // One K/V buffer instead of two: the cp.async copy of K_{j+1}, V_{j+1} no longer overlaps the work on
  // K_j, V_j; the block loads, waits, computes, waits for every warp, loads again.
  kFlash2MmaNoPipeline = 1u << 1,
  // P̃_ij goes through shared memory (stored from the S accumulators, read back with ldmatrix) instead of
  // being reused in registers as the A operand of P̃_ij·V_j.
  kFlash2MmaPThroughSmem = 1u << 2,
  // Q_i's A fragments in the other place than the default for this d: held in registers for the whole loop
  // (fewer shared-memory reads, more registers) or re-read with ldmatrix for every K_j. Default: registers at
  // d = 64, shared memory at d = 128 (in registers it needs more than 255 and spills).
  kFlash2MmaOtherQPlacement = 1u << 3,
  // 16 rows a warp (8 warps, each K_j/V_j fragment feeds 2 mma) instead of the default 32 (4 warps, two m16
  // tiles, each fragment feeds 4 mma: half the ldmatrix traffic per FLOP, FlashAttention-2's warp shape).
  kFlash2MmaOtherWarpRows = 1u << 4,
  // A trial that did not pay, kept as a switch: skip O_i ← α·O_i when no row max of the warp moved (α = 1
  // exactly then, so no bit changes). Measured 0-5% slower than rescaling every tile.
  kFlash2MmaLazyRescale = 1u << 5,
  // A trial, a launch choice (no kernel of its own: it runs the ablation kernel of the other bits, with the default
  // flags when alone, which the tests compare with the shipped one bit for bit): the first wave's second block on each
  // multiprocessor sleeps half a K/V tile before it starts, so that the two blocks sharing a multiprocessor stop
  // running their S → softmax → P̃V phases in lockstep (with equal-length blocks, as without the causal mask, the
  // blocks that replace them inherit the offset). Measured: kernels/README.md.
  kFlash2MmaStagger = 1u << 6,
  // A trial: K_j/V_j tiles of B_c = 32 keys instead of 64, on the default kernel only (no other kernel bit with
  // it). S_ij then takes half the accumulator registers (32 instead of 64 at 32 rows a warp) at the price of
  // twice the rescales and barriers per key; FlashAttention-2 picks this shape at d = 128 on GPUs with less
  // shared memory. Measured 0.96-1.02× the default at d = 128 (no spills, yet slower), 0.84-0.87× at d = 64.
  kFlash2MmaNarrowKvTile = 1u << 7,
};
inline constexpr unsigned kFlash2MmaAllOptions = kFlash2MmaNoSwizzle | kFlash2MmaNoPipeline | kFlash2MmaPThroughSmem |
                                                 kFlash2MmaOtherQPlacement | kFlash2MmaOtherWarpRows |
                                                 kFlash2MmaLazyRescale | kFlash2MmaStagger | kFlash2MmaNarrowKvTile;
// The bits that select one of the 64 compiled kernels per dtype and d (kFlash2MmaStagger and
// kFlash2MmaNarrowKvTile do not: the narrow tile has one kernel, the default's flags).
inline constexpr unsigned kFlash2MmaKernelOptions =
    kFlash2MmaAllOptions & ~(kFlash2MmaStagger | kFlash2MmaNarrowKvTile);

// A short name for an options word ("default", "no-swizzle+p-smem", ...), for tables and test names.
std::string Flash2MmaOptionsName(unsigned options);

// The tile shape the default kernel (options = 0) uses for head dimension d.
struct Flash2MmaTiles {
  int block_rows;  // B_r
  int block_cols;  // B_c
  int warps;       // B_r / rows per warp
};
Flash2MmaTiles Flash2MmaTileShape(int d);

// The three functions of attention_launch.h. Launch returns cudaErrorInvalidValue for bad options bits,
// a shape NotApplicable rejects, or device pointers not 16-byte aligned (the cp.async copies are 16 bytes).
cudaError_t LaunchFlash2Mma(const AttentionArgs& args);
std::optional<std::string> Flash2MmaNotApplicable(const AttentionShape& shape, DType dtype);
std::size_t Flash2MmaWorkspaceBytes(const AttentionShape& shape, DType dtype);

}  // namespace flashviz::cuda

// kernels/cuda/registry.cu includes this header for every row of kernels/cuda/mma: the Hopper variants' three
// functions come with it.
#include "kernels/cuda/mma/flash3_fp8.h"    // IWYU pragma: export
#include "kernels/cuda/mma/flash3_wgmma.h"  // IWYU pragma: export
