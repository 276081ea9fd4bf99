// The persistent grid's split schedule (kernels/cuda/mma/flash3_schedule.h), on the host: every (work tile, K/V
// tile) is taken exactly once, a cut work tile has two pieces on neighbouring blocks that name the same boundary,
// and the busiest block's share is the even share, rounded up, where whole last passes would leave blocks idle; and the
// work-tile decode's FastDivisor against the / operator. Plain arithmetic: its own test program, built and run with a
// GPU or without (no label gpu).
#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <vector>

#include "kernels/cuda/mma/flash3_schedule.h"

namespace flashviz::cuda::wgmma_detail {
namespace {

struct Walk {
  std::vector<int> taken;        // per (work tile, K/V tile): how many pieces took it
  std::vector<int> block_units;  // per block: K/V tiles taken
  std::vector<WorkPiece> cut;    // every piece of a cut work tile, in block order
  std::vector<int> cut_block;    // the block of each of those
};

Walk WalkSchedule(int work_tiles, int kv_tiles, int blocks, int min_kv_tiles = 2) {
  const SplitSchedule schedule = MakeSplitSchedule(work_tiles, kv_tiles, blocks, min_kv_tiles);
  Walk walk;
  walk.taken.assign(static_cast<std::size_t>(work_tiles) * kv_tiles, 0);
  walk.block_units.assign(blocks, 0);
  for (int block = 0; block < blocks; ++block) {
    for (int local = 0;; ++local) {
      const WorkPiece piece = BlockPiece(schedule, work_tiles, kv_tiles, blocks, block, local);
      if (piece.work >= work_tiles) break;
      EXPECT_GE(piece.work, 0);
      EXPECT_LE(0, piece.kv_begin);
      EXPECT_LT(piece.kv_begin, piece.kv_end);
      EXPECT_LE(piece.kv_end, kv_tiles);
      for (int j = piece.kv_begin; j < piece.kv_end; ++j)
        ++walk.taken[static_cast<std::size_t>(piece.work) * kv_tiles + j];
      walk.block_units[block] += piece.kv_end - piece.kv_begin;
      const bool whole = piece.kv_begin == 0 && piece.kv_end == kv_tiles;
      EXPECT_EQ(piece.boundary < 0, whole) << "block " << block << " piece " << local;
      if (!whole) {
        walk.cut.push_back(piece);
        walk.cut_block.push_back(block);
      }
    }
  }
  return walk;
}

TEST(Flash3Schedule, EveryKvTileOnceAndCutTilesInTwoPieces) {
  const int cases[][3] = {{2048, 128, 132}, {8192, 32, 132}, {8192, 8, 132}, {1400, 7, 132}, {160, 8, 132},
                          {133, 2, 132},    {264, 5, 132},   {131, 9, 132},  {500, 1, 132},  {10, 3, 4},
                          {11, 3, 4},       {7, 2, 3},       {1, 1, 1},      {5, 4, 1}};
  for (const auto& c : cases) {
    const int work_tiles = c[0], kv_tiles = c[1], blocks = std::min(c[2], work_tiles);
    const std::string what =
        "T=" + std::to_string(work_tiles) + " U=" + std::to_string(kv_tiles) + " G=" + std::to_string(blocks);
    const Walk walk = WalkSchedule(work_tiles, kv_tiles, blocks);
    for (std::size_t unit = 0; unit < walk.taken.size(); ++unit)
      ASSERT_EQ(walk.taken[unit], 1) << what << ": work tile " << unit / kv_tiles << ", K/V tile " << unit % kv_tiles;
    // Cut work tiles: side 0 (K/V tiles from 0) on block boundary − 1, side 1 (to the last) on block boundary, each
    // boundary once.
    std::vector<int> sides(static_cast<std::size_t>(blocks) * 2, 0);
    for (std::size_t i = 0; i < walk.cut.size(); ++i) {
      const WorkPiece& piece = walk.cut[i];
      ASSERT_GE(piece.boundary, 1) << what;
      ASSERT_LT(piece.boundary, blocks) << what;
      EXPECT_EQ(walk.cut_block[i], piece.boundary - 1 + piece.side) << what;
      EXPECT_EQ(piece.side == 0 ? piece.kv_begin : piece.kv_end, piece.side == 0 ? 0 : kv_tiles) << what;
      ++sides[static_cast<std::size_t>(piece.boundary) * 2 + piece.side];
    }
    for (int boundary = 0; boundary < blocks; ++boundary)
      EXPECT_EQ(sides[boundary * 2], sides[boundary * 2 + 1]) << what << ": boundary " << boundary;
    for (int count : sides) EXPECT_LE(count, 1) << what;
    // The busiest block: the even share rounded up when the passes are cut; whole passes otherwise.
    const long long units = static_cast<long long>(work_tiles) * kv_tiles;
    const int busiest = *std::max_element(walk.block_units.begin(), walk.block_units.end());
    const bool cut = work_tiles > blocks && work_tiles % blocks != 0 && kv_tiles >= 2;
    if (cut) {
      const SplitSchedule schedule = MakeSplitSchedule(work_tiles, kv_tiles, blocks, 2);
      const long long tail = static_cast<long long>(schedule.split_tiles) * kv_tiles;
      EXPECT_EQ(busiest, schedule.whole_passes * kv_tiles + (tail + blocks - 1) / blocks) << what;
      EXPECT_LE(busiest, (units + blocks - 1) / blocks + 1) << what;
    } else {
      EXPECT_EQ(busiest, (work_tiles + blocks - 1) / blocks * kv_tiles) << what;
      EXPECT_TRUE(walk.cut.empty()) << what;
    }
  }
}

// The shapes the fp8 kernel is timed at (H200: 132 blocks): the last pass's idle share goes.
TEST(Flash3Schedule, TimedShapesLoseNoPass) {
  const auto busiest = [](int work_tiles, int kv_tiles) {
    const std::vector<int> units = WalkSchedule(work_tiles, kv_tiles, 132).block_units;
    return *std::ranges::max_element(units);
  };
  // N = 16384, B·H = 16: 2048 work tiles of 128 K/V tiles; whole passes would take 16 × 128 = 2048.
  EXPECT_EQ(busiest(2048, 128), 1986);
  // N = 4096, B·H = 256: 8192 work tiles of 32; whole passes 63 × 32 = 2016.
  EXPECT_EQ(busiest(8192, 32), 1986);
  // Below the host's 16 K/V tiles a work tile, whole passes: N = 1024, 8192 work tiles of 8, 63 passes.
  const std::vector<int> short_tiles = WalkSchedule(8192, 8, 132, 16).block_units;
  EXPECT_EQ(*std::ranges::max_element(short_tiles), 63 * 8);
}

// FastDivisor gives n / d for every 0 ≤ n < 2^31: each divisor up to 4096 and those next to every power of two up to
// 2^31 − 1, on the dividends at each end of the range and on both sides of quotient boundaries across it.
TEST(FastDivisor, DividesLikeTheOperator) {
  constexpr int kLargest = 0x7fffffff;
  std::vector<int> divisors;
  for (int d = 1; d <= 4096; ++d) divisors.push_back(d);
  for (int k = 12; k <= 31; ++k) {
    const long long power = 1ll << k;
    for (long long d : {power - 1, power, power + 1})
      if (d <= kLargest) divisors.push_back(static_cast<int>(d));
  }
  for (int d : divisors) {
    const FastDivisor fast = MakeFastDivisor(d);
    std::vector<long long> dividends = {0, 1, d - 1ll, d, d + 1ll, kLargest - 1ll, kLargest};
    const long long top = static_cast<long long>(kLargest) / d * d;
    dividends.insert(dividends.end(), {top - 1, top});
    for (long long step = 1; step <= 64; ++step) {  // quotient boundaries spread over the range
      const long long boundary = static_cast<long long>(kLargest) / 64 * step / d * d;
      dividends.insert(dividends.end(), {boundary - 1, boundary});
    }
    for (long long n : dividends) {
      if (n < 0 || n > kLargest) continue;
      ASSERT_EQ(fast.Divide(static_cast<int>(n)), static_cast<int>(n / d)) << n << " / " << d;
    }
  }
}

}  // namespace
}  // namespace flashviz::cuda::wgmma_detail
