// The decode catalogue without a GPU: every row complete and unique, the shape helpers, the split rule (never an
// empty split, at most one per tile, a forced count honoured), the workspace the kernels index into, the reasons a
// problem is refused, the bench CSV (read back by ParseBenchCsv, so --replot draws it) and the sweep's order.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <set>
#include <string>

#include "kernels/common/input_error.h"
#include "kernels/cuda/decode/decode_registry.h"

namespace flashviz::cuda {
namespace {

DecodeLaunchShape Problem(int batch, int heads, int kv_heads, int q_rows, int kv_len, int d = 128, int page = 0) {
  DecodeLaunchShape p;
  p.batch = batch;
  p.heads = heads;
  p.kv_heads = kv_heads;
  p.q_rows = q_rows;
  p.kv_len = kv_len;
  p.d = d;
  p.page_size = page;
  return p;
}

TEST(DecodeCatalogue, RowsAreCompleteAndUnique) {
  std::set<std::string> ids;
  ASSERT_EQ(DecodeCatalogue().size(), 3u);
  for (const VariantInfo& v : DecodeCatalogue()) {
    EXPECT_TRUE(ids.insert(v.id).second) << v.id;
    for (const char* text : {v.name, v.changes, v.teaches, v.mirrors, v.tiles, v.launch, v.workspace})
      EXPECT_GT(std::string(text).size(), 3u) << v.id;
    EXPECT_EQ(v.dtypes, kHalfTypes) << v.id;
    EXPECT_EQ(FindDecodeInfo(v.id), &v);
    EXPECT_EQ(FindVariantInfo(v.id), nullptr) << v.id << ": decode ids stay apart from the forward registry's";
  }
  EXPECT_EQ(std::string(DecodeCatalogue()[0].id), "decode_naive");
  EXPECT_EQ(std::string(DecodeCatalogue()[1].id), "flash_decode");
  EXPECT_EQ(std::string(DecodeCatalogue()[2].id), "flash_decode_paged");
  EXPECT_TRUE(DecodeVariantIsPaged(DecodeCatalogue()[2]));
  EXPECT_FALSE(DecodeVariantIsPaged(DecodeCatalogue()[1]));
  EXPECT_EQ(FindDecodeInfo("flash2_mma"), nullptr);
}

TEST(DecodeLaunchShapeHelpers, CountsAndSequence) {
  const DecodeLaunchShape p = Problem(3, 32, 8, 2, 1000, 64, 64);
  EXPECT_EQ(p.Group(), 4);
  EXPECT_EQ(p.GroupRows(), 8);
  EXPECT_EQ(p.PagesPerSequence(), 16);
  EXPECT_EQ(p.QueryRows(), 3 * 32 * 2);
  EXPECT_EQ(p.KvElements(), 3LL * 8 * 1000 * 64);
  EXPECT_EQ(p.PoolElements(), 3LL * 16 * 8 * 64 * 64);
  EXPECT_FLOAT_EQ(p.Scale(), 0.125f);
  EXPECT_DOUBLE_EQ(DecodeKvCacheBytes(p, DType::kFp16), 2.0 * 3 * 8 * 1000 * 64 * 2);
  EXPECT_DOUBLE_EQ(DecodeFlops(p), 4.0 * 3 * 32 * 2 * 1000 * 64);
  const DecodeShape s = p.Sequence();
  EXPECT_EQ(s.heads, 32);
  EXPECT_EQ(s.kv_heads, 8);
  EXPECT_EQ(s.q_rows, 2);
  EXPECT_EQ(s.kv_len, 1000);
  EXPECT_DOUBLE_EQ(s.scale, 0.125);
  EXPECT_EQ(DecodeRowGroups(Problem(1, 32, 1, 1, 10)), 2);  // 32 rows: two blocks of 16
  EXPECT_EQ(DecodeRowGroups(Problem(1, 32, 8, 4, 10)), 1);  // 16 rows
  EXPECT_EQ(DecodeRowGroups(Problem(1, 6, 2, 3, 10)), 1);   // 9 rows, padded
}

TEST(DecodeSplitRule, NeverEmptyAtMostOnePerTile) {
  for (int n : {1, 17, 64, 65, 100, 640, 1000, 4096, 32768, 131072})
    for (int forced : {0, 1, 2, 3, 7, 64, 1000})
      for (int batch : {1, 8, 64}) {
        const DecodeLaunchShape p = Problem(batch, 32, 8, 1, n);
        const int splits = DecodeSplits(p, forced, 132);
        const int tiles = (n + kDecodeTileKeys - 1) / kDecodeTileKeys;
        const int keys = DecodeKeysPerSplit(p, splits);
        EXPECT_GE(splits, 1);
        EXPECT_LE(splits, tiles) << n << " " << forced;
        EXPECT_EQ(keys % kDecodeTileKeys, 0);
        EXPECT_GE(static_cast<long long>(splits) * keys, n) << "every key in a split";
        EXPECT_LT(static_cast<long long>(splits - 1) * keys, n) << "the last split not empty";
        if (forced > 0 && forced <= tiles && tiles % forced == 0) {
          EXPECT_EQ(splits, forced);
        }
      }
}

TEST(DecodeSplitRule, AboutOneBlockPerSm) {
  // B·G = 512 blocks already cover 132 SMs: no split. B = 8: 64 blocks, 2 splits. B = 1: 8 blocks, 16 splits.
  EXPECT_EQ(DecodeSplits(Problem(64, 32, 8, 1, 32768), 0, 132), 1);
  EXPECT_EQ(DecodeSplits(Problem(8, 32, 8, 1, 32768), 0, 132), 2);
  EXPECT_EQ(DecodeSplits(Problem(1, 32, 8, 1, 131072), 0, 132), 16);
  // A short cache is not cut below four tiles (256 keys) per split.
  EXPECT_EQ(DecodeSplits(Problem(1, 32, 8, 1, 1024), 0, 132), 4);
  EXPECT_EQ(DecodeSplits(Problem(1, 32, 8, 1, 200), 0, 132), 1);
  // The paged cache: the same rule when P is a multiple of the 64-key tile; about two blocks per SM, still one wave,
  // when it is not (B = 8: 4 splits, 256 blocks ≤ 264).
  EXPECT_EQ(DecodeSplits(Problem(8, 32, 8, 1, 32768, 128, 64), 0, 132), 2);
  EXPECT_EQ(DecodeSplits(Problem(1, 32, 8, 1, 131072, 128, 256), 0, 132), 16);
  EXPECT_EQ(DecodeSplits(Problem(8, 32, 8, 1, 32768, 128, 16), 0, 132), 4);
  EXPECT_EQ(DecodeSplits(Problem(1, 32, 8, 1, 131072, 128, 16), 0, 132), 33);
}

TEST(DecodeWorkspace, HoldsThePartials) {
  const DecodeLaunchShape p = Problem(2, 8, 2, 3, 1000, 64);
  EXPECT_EQ(DecodeWorkspaceBytes(p, 1), 0u);
  // The partials, then one arrival counter per (sequence, KV head, row group): 2 · 2 · 1.
  EXPECT_EQ(DecodeWorkspaceBytes(p, 5), 2u * 8 * 3 * 5 * (64 + 2) * sizeof(float) + 2u * 2 * 1 * sizeof(std::uint32_t));
}

TEST(DecodeCatalogue, RefusesWhatTheKernelsCannotRun) {
  const VariantInfo& flash = *FindDecodeInfo("flash_decode");
  const VariantInfo& paged = *FindDecodeInfo("flash_decode_paged");
  EXPECT_FALSE(DecodeNotApplicable(flash, Problem(1, 32, 8, 1, 100), DType::kFp16));
  EXPECT_FALSE(DecodeNotApplicable(paged, Problem(1, 32, 8, 1, 100, 128, 16), DType::kBf16));
  const auto reason = [](const VariantInfo& v, const DecodeLaunchShape& p, DType dtype) {
    const auto r = DecodeNotApplicable(v, p, dtype);
    return r ? *r : std::string("(applicable)");
  };
  EXPECT_NE(reason(flash, Problem(1, 32, 6, 1, 100), DType::kFp16).find("does not divide"), std::string::npos);
  EXPECT_NE(reason(flash, Problem(1, 32, 8, 1, 100, 96), DType::kFp16).find("96"), std::string::npos);
  EXPECT_NE(reason(flash, Problem(1, 32, 8, 1, 100), DType::kFp32).find("fp32"), std::string::npos);
  EXPECT_NE(reason(paged, Problem(1, 32, 8, 1, 100), DType::kFp16).find("page size"), std::string::npos);
  EXPECT_NE(reason(flash, Problem(1, 32, 8, 1, 0), DType::kFp16).find("at least 1"), std::string::npos);
}

TEST(DecodeCsv, ExtendsTheBenchColumnsAndReadsBack) {
  DecodeBenchRow r;
  r.row.kernel = "flash_decode";
  r.row.dtype = "fp16";
  r.row.batch = 8;
  r.row.heads = 32;
  r.row.n = 32768;
  r.row.d = 128;
  r.row.ms_median = 0.5;
  r.row.ms_min = 0.45;
  r.row.tflops = 1.0;
  r.row.max_abs_error = 1e-4;
  r.row.hbm_bytes = 1e9;
  r.row.gpu = "NVIDIA H100";
  r.row.status = "ok";
  r.kv_heads = 8;
  r.q_rows = 1;
  r.page = 0;
  r.splits = 4;
  r.gbps = 2000;
  r.copy_gbps = 3000;
  r.share = 2.0 / 3;
  const std::string header = DecodeCsvHeader();
  EXPECT_EQ(header.rfind(BenchCsvHeader().substr(0, BenchCsvHeader().size() - 1), 0), 0u);
  EXPECT_NE(header.find(",kv_heads,q_rows,page,splits,gbps,copy_gbps,share\n"), std::string::npos);
  const std::string line = DecodeCsvLine(r);
  EXPECT_NE(line.find(",8,1,0,4,2000,3000,0.6667\n"), std::string::npos) << line;
  const std::vector<BenchRow> rows = ParseBenchCsv(header + line, "decode.csv");
  ASSERT_EQ(rows.size(), 1u);
  EXPECT_EQ(rows[0].kernel, "flash_decode");
  EXPECT_EQ(rows[0].n, 32768);
  EXPECT_DOUBLE_EQ(rows[0].ms_median, 0.5);
  EXPECT_TRUE(rows[0].Ok());
  r.gbps = NAN;  // not measured: an empty field
  EXPECT_NE(DecodeCsvLine(r).find(",4,,3000,"), std::string::npos);
}

TEST(DecodeSweep, BatchOuterThenLengthThenKernels) {
  DecodeLaunchShape base = Problem(1, 32, 8, 1, 1, 128, 64);
  const auto points = DecodeSweepPoints({"flash_decode", "flash_decode_paged"}, {1, 8}, {4096, 32768}, base);
  ASSERT_EQ(points.size(), 8u);
  EXPECT_EQ(points[0].problem.batch, 1);
  EXPECT_EQ(points[0].problem.kv_len, 4096);
  EXPECT_EQ(points[0].problem.page_size, 0) << "contiguous variants carry no page size";
  EXPECT_EQ(points[1].problem.page_size, 64);
  EXPECT_EQ(points[2].problem.kv_len, 32768);
  EXPECT_EQ(points[4].problem.batch, 8);
  EXPECT_THROW(DecodeSweepPoints({"nope"}, {1}, {1}, base), InputError);
  EXPECT_THROW(DecodeSweepPoints({}, {1}, {1}, base), InputError);
}

}  // namespace
}  // namespace flashviz::cuda
