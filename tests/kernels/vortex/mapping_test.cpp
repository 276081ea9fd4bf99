#include "kernels/vortex/mapping.h"

#include <gtest/gtest.h>

#include <map>
#include <string>
#include <vector>

#include "kernels/cpu/problem.h"

namespace flashviz::vortex {
namespace {

Request Simt(int n, int d, MachineConfig machine = {}) { return Request{machine, Mode::kSimt, n, d}; }
Request Tcu(int n, int d, MachineConfig machine = {}) { return Request{machine, Mode::kTcu, n, d}; }

const FitCheck& CheckNamed(const Mapping& m, const std::string& name) {
  for (const FitCheck& c : m.checks)
    if (c.name == name) return c;
  ADD_FAILURE() << "no check named " << name;
  static FitCheck none;
  return none;
}

TEST(VortexMapping, ReportConfigurationGivesRow16bPlus8wPlusT) {
  const Mapping m = MapToVortex(Simt(64, 8));
  EXPECT_EQ(m.br, 16);  // min(W·T, N) = min(2·8, 64)
  EXPECT_EQ(m.bc, 16);  // max(B_r, 8)
  EXPECT_EQ(m.tr, 4);
  EXPECT_EQ(m.tc, 4);
  EXPECT_EQ(m.warps_per_block, 2);
  EXPECT_EQ(m.blocks_per_core, 1);
  EXPECT_EQ(m.waves, 1);
  for (int b = 0; b < 4; ++b)
    for (int w = 0; w < 2; ++w)
      for (int t = 0; t < 8; ++t) {
        const int row = 16 * b + 8 * w + t;
        const RowOwner owner = m.OwnerOfRow(row);
        EXPECT_EQ(owner.core, b) << row;
        EXPECT_EQ(owner.warp, w) << row;
        EXPECT_EQ(owner.thread, t) << row;
        EXPECT_EQ(m.RowOfThread(b, w, t, 0), row);
      }
  EXPECT_TRUE(m.fits) << m.reason;
  EXPECT_EQ(m.registers.used, 8 + 16 + 2 + 4);
  EXPECT_EQ(m.registers.available, 32);
  EXPECT_EQ(m.local_memory.bytes_per_block, (16 + 2 * 16) * 8 * 4);
  EXPECT_EQ(m.local_memory.bytes_per_core, 1536);
}

TEST(VortexMapping, TcuReportConfigurationIsOneWarpPerBlockTwoBlocksPerCore) {
  const Mapping m = MapToVortex(Tcu(64, 8));
  EXPECT_EQ(m.br, 8);
  EXPECT_EQ(m.bc, 8);
  EXPECT_EQ(m.tr, 8);
  EXPECT_EQ(m.warps_per_block, 1);
  EXPECT_EQ(m.blocks_per_core, 2);
  EXPECT_EQ(m.waves, 1);
  for (int row = 0; row < 64; ++row) {
    const RowOwner owner = m.OwnerOfRow(row);
    const int block = row / 8;
    EXPECT_EQ(owner.block, block);
    EXPECT_EQ(owner.core, block % 4);  // round-robin over the cores
    EXPECT_EQ(owner.warp, block / 4);  // the second block of a core takes its second warp
    EXPECT_EQ(owner.thread, row % 8);
  }
  EXPECT_TRUE(m.fits) << m.reason;
  EXPECT_EQ(m.registers.used, 30);
  EXPECT_EQ(m.local_memory.blocks_per_core, 2);
  EXPECT_EQ(m.local_memory.bytes_per_core, 2 * m.local_memory.bytes_per_block);
}

// Every query row has exactly one owner thread, and OwnerOfRow and RowOfThread agree, over many configurations.
TEST(VortexMapping, EveryRowIsOwnedByExactlyOneThread) {
  int configurations = 0;
  for (Mode mode : {Mode::kSimt, Mode::kTcu})
    for (int cores : {1, 3, 4, 8})
      for (int warps : {1, 2, 4})
        for (int threads : {1, 2, 4, 8, 16})
          for (int n : {1, 2, 8, 16, 64, 256}) {
            MachineConfig machine;
            machine.cores = cores;
            machine.warps_per_core = warps;
            machine.threads_per_warp = threads;
            const Request request{machine, mode, n, 8};
            if (RequestError(request)) continue;
            const Mapping m = MapToVortex(request);
            ++configurations;
            std::vector<int> owners(static_cast<std::size_t>(n), 0);
            for (int core = 0; core < cores; ++core)
              for (int wave = 0; wave < m.waves; ++wave)
                for (int warp = 0; warp < warps; ++warp)
                  for (int thread = 0; thread < threads; ++thread) {
                    const int row = m.RowOfThread(core, warp, thread, wave);
                    if (row < 0) continue;
                    ASSERT_LT(row, n);
                    ++owners[static_cast<std::size_t>(row)];
                    const RowOwner o = m.OwnerOfRow(row);
                    EXPECT_EQ(o.core, core);
                    EXPECT_EQ(o.warp, warp);
                    EXPECT_EQ(o.thread, thread);
                    EXPECT_EQ(o.wave, wave);
                  }
            for (int row = 0; row < n; ++row)
              EXPECT_EQ(owners[static_cast<std::size_t>(row)], 1) << ModeName(mode) << " C=" << cores << " W=" << warps
                                                                  << " T=" << threads << " N=" << n << " row " << row;
          }
  EXPECT_GT(configurations, 150);
}

TEST(VortexMapping, BlocksWrapRoundRobinOverTheCores) {
  const Mapping m = MapToVortex(Simt(256, 8));  // 16 blocks of 16 rows on 4 cores
  ASSERT_EQ(m.tr, 16);
  EXPECT_EQ(m.waves, 4);
  EXPECT_EQ(m.blocks[5].core, 1);
  EXPECT_EQ(m.blocks[5].wave, 1);
  EXPECT_EQ(m.blocks[15].core, 3);
  EXPECT_EQ(m.blocks[15].wave, 3);
  EXPECT_EQ(m.OwnerOfRow(5 * 16 + 9).warp, 1);
  // One core and a short sequence: one block of N threads, some warps idle.
  MachineConfig one;
  one.cores = 1;
  one.warps_per_core = 4;
  const Mapping small = MapToVortex(Simt(16, 8, one));
  EXPECT_EQ(small.br, 16);
  EXPECT_EQ(small.tr, 1);
  EXPECT_EQ(small.warps_per_block, 2);
  EXPECT_EQ(small.RowOfThread(0, 2, 0, 0), -1);  // the block fills warps 0–1 only
}

TEST(VortexMapping, LocalMemoryRegionsAreContiguousWithByteOffsets) {
  const Mapping simt = MapToVortex(Simt(64, 8));
  ASSERT_EQ(simt.local_memory.regions.size(), 3u);
  EXPECT_EQ(simt.local_memory.regions[0].name, "Q_i");
  EXPECT_EQ(simt.local_memory.regions[0].offset, 0);
  EXPECT_EQ(simt.local_memory.regions[1].offset, 16 * 8 * 4);          // after B_r × d floats
  EXPECT_EQ(simt.local_memory.regions[2].offset, (16 + 16) * 8 * 4);   // after B_r·d + B_c·d floats
  EXPECT_EQ(simt.local_memory.regions[2].name, "V_j^T");
  EXPECT_EQ(simt.local_memory.regions[2].rows, 8);  // transposed: d × B_c
  for (const Mapping& m : {simt, MapToVortex(Tcu(64, 8))}) {
    std::int64_t end = 0;
    for (const LocalRegion& r : m.local_memory.regions) {
      EXPECT_EQ(r.offset, end) << r.name;
      EXPECT_EQ(r.bytes, std::int64_t{r.rows} * r.cols * r.element_bytes) << r.name;
      end = r.offset + r.bytes;
    }
    EXPECT_EQ(end, m.local_memory.bytes_per_block);
  }
  // TCU: three padded fp16 operands (8×16 or 16×8 = 256 B), S at stride 16 (512 B), statistics and O in fp32.
  EXPECT_EQ(MapToVortex(Tcu(64, 8)).local_memory.bytes_per_block, 3 * 256 + 512 + 4 * 32 + 256);
}

TEST(VortexMapping, RegisterRangesFollowTheProgram) {
  const Mapping simt = MapToVortex(Simt(64, 8));
  ASSERT_EQ(simt.registers.ranges.size(), 4u);
  EXPECT_EQ(simt.registers.ranges[0].first, 0);   // O row f0–f7
  EXPECT_EQ(simt.registers.ranges[0].count, 8);
  EXPECT_EQ(simt.registers.ranges[1].first, 8);   // S/P row f8–f23
  EXPECT_EQ(simt.registers.ranges[1].count, 16);
  const Mapping tcu = MapToVortex(Tcu(64, 8));
  std::map<RegisterContent, int> first;
  for (const RegisterRange& r : tcu.registers.ranges)
    if (r.content != RegisterContent::kTemporary) {
      first[r.content] = r.first;
      EXPECT_EQ(r.count, 8);
    }
  EXPECT_EQ(first[RegisterContent::kFragmentA], 0);
  EXPECT_EQ(first[RegisterContent::kFragmentB], 10);
  EXPECT_EQ(first[RegisterContent::kAccumulator], 24);
}

TEST(VortexVerdict, HeadDimension32SpillsOutOfTheRegisters) {
  const Mapping m = MapToVortex(Simt(64, 32));
  EXPECT_FALSE(m.fits);
  EXPECT_EQ(m.reason.rfind("d·B_c = 512 > 128: O and S rows spill out of 32 registers", 0), 0u) << m.reason;
  EXPECT_FALSE(CheckNamed(m, "instantiation").ok);
  EXPECT_FALSE(CheckNamed(m, "registers").ok);  // 32 + 16 + 6 = 54 > 32
  EXPECT_NE(CheckNamed(m, "registers").detail.find("= 54 > 32"), std::string::npos);
  EXPECT_FALSE(CheckNamed(m, "head dimension").ok);
  EXPECT_TRUE(CheckNamed(m, "local memory").ok);  // (16 + 32)·32·4 = 6144 B
}

TEST(VortexVerdict, EachBudgetFailsOnItsOwn) {
  // d = 16 on the report machine: d·B_c = 256 > 128, yet 16 + 16 + 6 = 38 registers also fail.
  EXPECT_FALSE(MapToVortex(Simt(64, 16)).fits);
  // d = 16 with 8-thread blocks: B_c = 8, d·B_c = 128 and 16 + 8 + 6 = 30 registers fit.
  MachineConfig eight;
  eight.warps_per_core = 1;
  const Mapping d16 = MapToVortex(Simt(64, 16, eight));
  EXPECT_TRUE(d16.fits) << d16.reason;
  // 4 warps × 8 threads, d = 4: d·B_c = 4·32 = 128 passes the program's rule, but 4 + 32 + 6 = 42 registers do not.
  MachineConfig wide;
  wide.warps_per_core = 4;
  const Mapping spill = MapToVortex(Simt(64, 4, wide));
  EXPECT_TRUE(CheckNamed(spill, "instantiation").ok);
  EXPECT_FALSE(CheckNamed(spill, "registers").ok);
  EXPECT_FALSE(spill.fits);
  EXPECT_NE(spill.reason.find("= 42 > 32 FP registers"), std::string::npos) << spill.reason;
  // Local memory: the report's shape needs 1536 B per core.
  MachineConfig small = {};
  small.local_memory_bytes = 1535;
  const Mapping tight = MapToVortex(Simt(64, 8, small));
  EXPECT_FALSE(tight.fits);
  EXPECT_NE(tight.reason.find("1536 B > 1535 B of local memory"), std::string::npos) << tight.reason;
  small.local_memory_bytes = 1536;
  EXPECT_TRUE(MapToVortex(Simt(64, 8, small)).fits);
  // N = 4: B_r = 4 but B_c = max(4, 8) = 8 rows of K/V do not exist.
  const Mapping tiny = MapToVortex(Simt(4, 8));
  EXPECT_FALSE(CheckNamed(tiny, "K/V tile").ok);
  // More FP registers than Vortex has make the spill go away, but not the program's instantiation rule.
  MachineConfig big_registers;
  big_registers.fp_registers_per_thread = 64;
  const Mapping rule = MapToVortex(Simt(64, 32, big_registers));
  EXPECT_TRUE(CheckNamed(rule, "registers").ok);
  EXPECT_FALSE(CheckNamed(rule, "instantiation").ok);
}

TEST(VortexVerdict, TcuNeedsItsFixedShape) {
  const Mapping d16 = MapToVortex(Tcu(64, 16));
  EXPECT_FALSE(d16.fits);
  EXPECT_NE(d16.reason.find("specialized for d = 8"), std::string::npos) << d16.reason;
  MachineConfig four;
  four.threads_per_warp = 4;
  const Mapping t4 = MapToVortex(Tcu(64, 8, four));
  EXPECT_FALSE(t4.fits);
  EXPECT_NE(t4.reason.find("T = 4"), std::string::npos);
  EXPECT_FALSE(MapToVortex(Tcu(4, 8)).fits);
  MachineConfig registers16;
  registers16.fp_registers_per_thread = 16;
  EXPECT_FALSE(CheckNamed(MapToVortex(Tcu(64, 8, registers16)), "registers").ok);
  MachineConfig small;
  small.local_memory_bytes = 2 * 1664 - 1;  // two resident blocks need 2·1664 B
  EXPECT_FALSE(CheckNamed(MapToVortex(Tcu(64, 8, small)), "local memory").ok);
}

TEST(VortexRequest, MalformedRequestsAreErrorsWithOneLine) {
  const auto error_of = [](Request r) { return RequestError(r).value_or(""); };
  EXPECT_NE(error_of(Simt(48, 8)).find("N = 48 is not a power of two"), std::string::npos);
  EXPECT_NE(error_of(Simt(64, 12)).find("d = 12"), std::string::npos);
  EXPECT_NE(error_of(Simt(0, 8)).find("out of range"), std::string::npos);
  MachineConfig m;
  m.cores = 0;
  EXPECT_NE(error_of(Simt(64, 8, m)).find("cores = 0"), std::string::npos);
  m = {};
  m.warps_per_core = 3;  // B_r = 24 does not divide 64
  EXPECT_NE(error_of(Simt(64, 8, m)).find("does not divide N = 64"), std::string::npos);
  EXPECT_EQ(error_of(Simt(16, 8, m)), "");  // N ≤ W·T: one block of N threads
  m = {};
  m.local_memory_bytes = -5;
  EXPECT_NE(error_of(Simt(64, 8, m)).find("local memory"), std::string::npos);
  m = {};
  m.warps_per_core = 1;
  m.threads_per_warp = 4;
  EXPECT_NE(error_of(Tcu(64, 8, m)).find("a TCU block is 8 threads"), std::string::npos);
  for (const Request& r : {Simt(48, 8), Simt(64, 8, m), Tcu(64, 8, m)}) {
    const std::string e = error_of(r);
    EXPECT_EQ(e.find('\n'), std::string::npos);
  }
  EXPECT_THROW(MapToVortex(Simt(48, 8)), InputError);
}

}  // namespace
}  // namespace flashviz::vortex
