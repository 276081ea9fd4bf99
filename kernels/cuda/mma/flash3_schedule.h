// The persistent grid's last passes split by K/V tiles (flash3_kernel.cuh, kFlagSplitLastPasses): which part of
// which work tile a block takes. Plain C++ that nvcc also compiles for the device, so that the host sizes the
// workspace and the tests check the cover with the very function the kernel runs.
//
// G blocks and T work tiles of U K/V tiles each (without the mask every work tile has the same U). Whole work
// tiles, pass by pass, leave the last pass with T mod G tiles on as many blocks while the rest wait: at T = 2048,
// G = 132 the kernel lasts 16 tile-times for an average of 15.5. Here the first ⌊T / G⌋ − 1 passes take whole
// tiles (pass p: tile p·G + b on block b, so that the blocks running at once share the K/V of a few heads in L2),
// and the G + T mod G tiles left are cut into G equal ranges of (tile, K/V tile) units, one a block. A range is at
// least U units, so a work tile is cut at most once, between blocks b − 1 and b ("boundary" b): the two pieces each
// keep their own running maximum, ℓ and unnormalized O, and the later to finish merges them (flash3_kernel.cuh).
// The host runs the whole passes and the cut ones as two launches (flash3_fp8.cu says why).
// Also here: FastDivisor, the longest-first work-tile decode's division by launch constants (flash3_kernel.cuh).
#pragma once

#include <bit>
#include <cstdint>

#if defined(__CUDACC__)
#define FLASH3_SCHEDULE_FUNCTION __host__ __device__ __forceinline__
#else
#define FLASH3_SCHEDULE_FUNCTION inline
#endif

namespace flashviz::cuda::wgmma_detail {

struct SplitSchedule {
  int whole_passes = 0;  // passes of whole work tiles
  int split_tiles = 0;   // work tiles after those, cut into one range of units a block (0: none)
  // Their split_tiles·U units as share·G + extra: block b's range starts at share·b + ⌊extra·b / G⌋, which needs
  // no 64-bit division on the device (a call there, whose saved registers the kernel's loop cannot spare).
  int share = 0;
  int extra = 0;
};

// The schedule for T work tiles of U K/V tiles on G blocks: no split where the passes come out even (T mod G = 0,
// or T ≤ G: one block a tile), a work tile has fewer than min_kv_tiles K/V tiles (at least 2), or the units would
// pass 2^31 − 1.
FLASH3_SCHEDULE_FUNCTION SplitSchedule MakeSplitSchedule(int work_tiles, int kv_tiles, int blocks, int min_kv_tiles) {
  SplitSchedule schedule;
  schedule.whole_passes = blocks > 0 ? (work_tiles + blocks - 1) / blocks : 0;
  if (blocks <= 0 || work_tiles <= blocks || work_tiles % blocks == 0 || kv_tiles < 2 || kv_tiles < min_kv_tiles)
    return schedule;
  const int whole_passes = work_tiles / blocks - 1, split_tiles = work_tiles - whole_passes * blocks;
  const long long units = static_cast<long long>(split_tiles) * kv_tiles;
  if (units > 0x7fffffffll || static_cast<long long>(blocks) * blocks > 0x7fffffffll) return schedule;
  schedule.whole_passes = whole_passes;
  schedule.split_tiles = split_tiles;
  schedule.share = static_cast<int>(units / blocks);
  schedule.extra = static_cast<int>(units % blocks);
  return schedule;
}

// A block's `local`-th piece: K/V tiles [kv_begin, kv_end) of work tile `work` (work ≥ T: the block has no more).
// A piece of a cut work tile names its boundary (the block that holds the tile's second piece) and its side (0: the
// first K/V tiles, 1: the rest); boundary −1: the whole work tile.
struct WorkPiece {
  int work;
  int kv_begin;
  int kv_end;
  int boundary;
  int side;
};

FLASH3_SCHEDULE_FUNCTION WorkPiece BlockPiece(const SplitSchedule& schedule, int work_tiles, int kv_tiles, int blocks,
                                              int block, int local) {
  WorkPiece piece{work_tiles, 0, kv_tiles, -1, 0};
  if (local < schedule.whole_passes) {
    const int work = local * blocks + block;  // < T + G: T ≤ 2^26 (B·H·N·d ≤ 2^40, d ≥ 128), G ≤ the SM count
    if (work < work_tiles) piece.work = work;
    return piece;
  }
  if (schedule.split_tiles == 0) return piece;
  // This block's units [first, end) of the split_tiles · U.
  const int first = schedule.share * block + schedule.extra * block / blocks;
  const int end = schedule.share * (block + 1) + schedule.extra * (block + 1) / blocks;
  const int tile = first / kv_tiles + (local - schedule.whole_passes);
  const int tile_first = tile * kv_tiles;
  if (tile_first >= end) return piece;
  piece.work = schedule.whole_passes * blocks + tile;
  piece.kv_begin = first > tile_first ? first - tile_first : 0;
  piece.kv_end = end < tile_first + kv_tiles ? end - tile_first : kv_tiles;
  if (piece.kv_begin > 0) {
    piece.boundary = block;
    piece.side = 1;
  } else if (piece.kv_end < kv_tiles) {
    piece.boundary = block + 1;
    piece.side = 0;
  }
  return piece;
}

// n / divisor for 0 ≤ n < 2^31 by one wide multiplication and a shift (Granlund and Montgomery, "Division by
// invariant integers using multiplication", 1994): multiplier = ⌈2^shift / divisor⌉ with shift = 31 + ⌈log2 divisor⌉,
// below 2^32 for every divisor ≥ 1. With e = multiplier·divisor − 2^shift < divisor ≤ 2^(shift − 31), n·multiplier /
// 2^shift = n / divisor + n·e / (divisor·2^shift), and n·e < 2^shift keeps that excess under 1/divisor: the floor is
// n / divisor's. The longest-first work-tile decode (flash3_kernel.cuh's DecodeWorkTile) divides by launch constants
// three times a work tile in every warp, where an integer division is some twenty dependent instructions. H200,
// 2026-11-27 (kernels/README.md), against the divisions, four rounds: geometric mean 1.008 over 17 causal persistent
// shapes, fp8 causal +1-4%, 16-bit 0.99-1.02×. In the head-major decode too, fp8 d = 128 without the mask measured 3%
// slower (its loop scheduled anew around it), so that one keeps its one division.
struct FastDivisor {
  std::uint32_t multiplier = 0;
  std::uint32_t shift = 0;
  FLASH3_SCHEDULE_FUNCTION int Divide(int n) const {
    return static_cast<int>((static_cast<std::uint64_t>(static_cast<std::uint32_t>(n)) * multiplier) >> shift);
  }
};
inline FastDivisor MakeFastDivisor(int divisor) {
  FastDivisor fast;
  fast.shift = 31 + std::bit_width(static_cast<std::uint32_t>(divisor) - 1u);  // 31 + ⌈log2 divisor⌉
  fast.multiplier =
      static_cast<std::uint32_t>(((1ull << fast.shift) + static_cast<std::uint64_t>(divisor) - 1) / divisor);
  return fast;
}

}  // namespace flashviz::cuda::wgmma_detail

#undef FLASH3_SCHEDULE_FUNCTION
