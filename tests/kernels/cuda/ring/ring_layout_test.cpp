// Ring attention's plain C++ half (kernels/cuda/ring/ring_layout.cpp), no GPU needed: the chunk layout against the
// CPU model's (kernels/cpu/ring.h, its inline functions), every row owned once and mapped back, the per-device
// memory budget in closed form, the shape checks, the names, and the scaling columns and CSV of `bench --ring`.
#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

#include "kernels/cpu/ring.h"
#include "kernels/cuda/ring/ring_attention.h"

namespace flashviz::cuda {
namespace {

RingShape Shape(int n, int p, bool zigzag, int batch = 1, int heads = 1, int d = 128) {
  RingShape s;
  s.n = n;
  s.devices = p;
  s.zigzag = zigzag;
  s.batch = batch;
  s.heads = heads;
  s.d = d;
  return s;
}

TEST(RingLayout, ChunksAgreeWithTheCpuModel) {
  for (int p : {1, 2, 3, 4, 8})
    for (bool zigzag : {false, true})
      for (int n : {2 * p + 1, 1000, 4097}) {
        const RingShape s = Shape(n, p, zigzag);
        RingProblem model;
        model.n = n;
        model.devices = p;
        model.assignment = zigzag ? RingAssignment::kZigzag : RingAssignment::kContiguous;
        ASSERT_EQ(s.Chunks(), model.chunks());
        ASSERT_EQ(s.ChunksPerDevice(), model.ChunksPerDevice());
        for (int c = 0; c <= s.Chunks(); ++c) EXPECT_EQ(s.ChunkBegin(c), model.ChunkBegin(c)) << c;
        for (int q = 0; q < p; ++q) {
          for (int k = 0; k < s.ChunksPerDevice(); ++k) EXPECT_EQ(s.DeviceChunk(q, k), model.DeviceChunk(q, k));
          for (int step = 0; step < p; ++step) EXPECT_EQ(s.KvOwner(q, step), model.KvOwner(q, step));
        }
      }
}

TEST(RingLayout, EveryRowHasOneOwnerAndMapsBack) {
  for (int p : {1, 2, 3, 4, 8})
    for (bool zigzag : {false, true})
      for (int n : {2 * p + 1, 1000, 4097}) {
        const RingShape s = Shape(n, p, zigzag);
        std::vector<int> seen(static_cast<std::size_t>(n), 0);
        int total = 0;
        for (int q = 0; q < p; ++q) {
          total += s.DeviceRows(q);
          EXPECT_LE(s.DeviceRows(q), s.MaxDeviceRows());
          for (int r = 0; r < s.DeviceRows(q); ++r) {
            const int global = s.GlobalRow(q, r);
            ASSERT_GE(global, 0);
            ASSERT_LT(global, n);
            ++seen[static_cast<std::size_t>(global)];
            EXPECT_EQ(s.OwnerOfRow(global), q) << "row " << global;
            if (r > 0 && global != s.GlobalRow(q, r - 1) + 1) {
              EXPECT_TRUE(zigzag) << "contiguous is one run";
            }
          }
        }
        EXPECT_EQ(total, n);
        for (int count : seen) ASSERT_EQ(count, 1);
      }
}

TEST(RingLayout, UnevenChunksDifferByOneRow) {
  const RingShape s = Shape(1000, 3, false);
  EXPECT_EQ(s.DeviceRows(0), 333);
  EXPECT_EQ(s.DeviceRows(1), 333);
  EXPECT_EQ(s.DeviceRows(2), 334);
  const RingShape z = Shape(9, 4, true);  // 8 chunks of 1 or 2 rows
  int rows = 0;
  for (int c = 0; c < 8; ++c) {
    EXPECT_GE(z.ChunkRows(c), 1);
    EXPECT_LE(z.ChunkRows(c), 2);
    rows += z.ChunkRows(c);
  }
  EXPECT_EQ(rows, 9);
  EXPECT_EQ(z.DeviceChunk(0, 1), 7);
  EXPECT_EQ(z.DeviceChunk(3, 1), 4);
}

TEST(RingBudget, ClosedForms) {
  // P = 1, N = 131072, B·H = 32, d = 128, fp16: Q, K, V 3 GiB; no receive buffers; O state 2 GiB, m and ℓ 32 MiB;
  // O 1 GiB and L 16 MiB.
  RingShape s = Shape(131072, 1, false, 1, 32, 128);
  const std::int64_t rows = 32LL * 131072;  // B·H·N
  RingDeviceBytes b = RingBytesOfDevice(s, 0);
  EXPECT_EQ(b.q, rows * 128 * 2);
  EXPECT_EQ(b.own_kv, 2 * rows * 128 * 2);
  EXPECT_EQ(b.kv_buffers, 0);
  EXPECT_EQ(b.state, rows * 128 * 4 + 2 * rows * 4);
  EXPECT_EQ(b.output, rows * 128 * 2 + rows * 4);
  EXPECT_EQ(RingMaxDeviceBytes(s), b.Total());
  EXPECT_NEAR(static_cast<double>(b.Total()) / (1 << 30), 6.0 + 3.0 / 64, 1e-9);  // 6 GiB + 48 MiB
  // P = 2: one receive buffer; P ≥ 3: two, each K and V of the longest slice.
  s.devices = 2;
  EXPECT_EQ(RingBytesOfDevice(s, 0).kv_buffers, 2LL * 32 * 65536 * 128 * 2);
  s.devices = 4;
  s.zigzag = true;
  EXPECT_EQ(RingBytesOfDevice(s, 1).kv_buffers, 2 * 2LL * 32 * 32768 * 128 * 2);
  // Uneven: the buffers are sized by the longest device, Q by the device's own rows.
  RingShape u = Shape(1000, 3, false, 2, 3, 64);
  u.dtype = DType::kBf16;
  EXPECT_EQ(RingBytesOfDevice(u, 0).q, 6LL * 333 * 64 * 2);
  EXPECT_EQ(RingBytesOfDevice(u, 0).kv_buffers, 2 * 2 * 6LL * 334 * 64 * 2);
  EXPECT_EQ(RingMaxDeviceBytes(u), RingBytesOfDevice(u, 2).Total());
  // The budget of the device script: 5 GiB holds N = 131072 on 2 GPUs but not on 1 (H = 32, d = 128, fp16).
  const double budget = 5.0 * (1 << 30);
  EXPECT_GT(static_cast<double>(RingMaxDeviceBytes(Shape(131072, 1, true, 1, 32))), budget);
  EXPECT_LE(static_cast<double>(RingMaxDeviceBytes(Shape(131072, 2, true, 1, 32))), budget);
  EXPECT_LE(static_cast<double>(RingMaxDeviceBytes(Shape(65536, 1, true, 1, 32))), budget);
}

TEST(RingShapeCheck, RefusesWhatTheKernelCannotRun) {
  EXPECT_FALSE(RingShapeError(Shape(1000, 3, false)));
  EXPECT_FALSE(RingShapeError(Shape(9, 4, true)));  // N = 2P + 1
  RingShape s = Shape(1000, 3, false);
  s.d = 96;
  EXPECT_NE(RingShapeError(s).value_or("").find("d = 96"), std::string::npos);
  s = Shape(1000, 3, false);
  s.dtype = DType::kFp32;
  EXPECT_TRUE(RingShapeError(s));
  EXPECT_NE(RingShapeError(Shape(7, 4, true)).value_or("").find("8 chunks"), std::string::npos);
  EXPECT_TRUE(RingShapeError(Shape(1000, 65, false)));
  EXPECT_TRUE(RingShapeError(Shape(1000, 2, false, 256, 256)));  // B·H > 65535
}

TEST(RingNames, TransportsAndFlops) {
  EXPECT_EQ(ParseRingTransport("nccl"), RingTransportKind::kNccl);
  EXPECT_EQ(ParseRingTransport("virtual"), RingTransportKind::kVirtual);
  EXPECT_FALSE(ParseRingTransport("mpi"));
  EXPECT_EQ(RingTransportName(RingTransportKind::kNccl), "nccl");
  RingShape s = Shape(1024, 2, false, 2, 3, 64);
  EXPECT_DOUBLE_EQ(RingFlops(s), 4.0 * 6 * 1024 * 1024 * 64);
  s.causal = true;
  EXPECT_DOUBLE_EQ(RingFlops(s), 2.0 * 6 * 1024 * 1024 * 64);
  EXPECT_DOUBLE_EQ(RingTolerance(DType::kFp16), 2.0 / 2048);
  EXPECT_DOUBLE_EQ(RingTolerance(DType::kBf16), 2.0 / 256);
}

RingBenchRow Row(int n, int p, double ms, double compute = NAN, double exchange = NAN) {
  RingBenchRow r;
  r.shape = Shape(n, p, true, 1, 32);
  r.ms_median = ms;
  r.tflops_per_gpu = RingFlops(r.shape) / (ms * 1e-3) / p * 1e-12;
  r.compute_ms = compute;
  r.exchange_ms = exchange;
  return r;
}

TEST(RingScaling, SpeedupEfficiencyAndHiddenShare) {
  std::vector<RingBenchRow> rows = {Row(16384, 1, 10),         Row(16384, 2, 6, 5, 2),    Row(32768, 1, 40),
                                    Row(32768, 2, 25, 20, 10), Row(65536, 2, 90, 80, 15), Row(16384, 4, 9, 3, 1)};
  RingBenchRow too_big = Row(65536, 1, NAN);
  too_big.fits = false;
  too_big.status = "does not fit: 6.05 GiB > budget 5 GiB";
  rows.push_back(too_big);
  RingFillScaling(rows);
  EXPECT_DOUBLE_EQ(rows[5].hidden, 0.0);  // (3 + 1 − 9) / 1 < 0: clamped (the ring took longer than both)
  rows.erase(rows.begin() + 5);
  EXPECT_DOUBLE_EQ(rows[0].speedup, 1.0);
  EXPECT_DOUBLE_EQ(rows[1].speedup, 10.0 / 6);
  EXPECT_DOUBLE_EQ(rows[1].ideal, 2);
  EXPECT_NEAR(rows[1].efficiency, 10.0 / 6 / 2, 1e-12);  // = speedup / P at the same N
  EXPECT_EQ(rows[1].efficiency_base_n, 16384);
  EXPECT_DOUBLE_EQ(rows[1].hidden, 0.5);  // (5 + 2 − 6) / 2
  EXPECT_DOUBLE_EQ(rows[3].hidden, 0.5);  // (20 + 10 − 25) / 10
  // N = 65536 does not fit one GPU: no speedup, efficiency against P = 1 at the largest N it ran (32768).
  EXPECT_TRUE(std::isnan(rows[4].speedup));
  EXPECT_EQ(rows[4].efficiency_base_n, 32768);
  EXPECT_NEAR(rows[4].efficiency, rows[4].tflops_per_gpu / rows[2].tflops_per_gpu, 1e-12);
  EXPECT_NEAR(rows[4].hidden, 1.0 / 3, 1e-12);  // (80 + 15 − 90) / 15
  EXPECT_TRUE(std::isnan(rows[5].efficiency));
  const std::string line = RingCsvLine(rows[5]);
  EXPECT_NE(line.find("does not fit: 6.05 GiB > budget 5 GiB"), std::string::npos) << line;
  EXPECT_EQ(line.back(), '\n');
  int commas = 0, header_commas = 0;
  for (char c : line) commas += c == ',';
  for (char c : RingCsvHeader()) header_commas += c == ',';
  EXPECT_EQ(commas, header_commas);
}

}  // namespace
}  // namespace flashviz::cuda
