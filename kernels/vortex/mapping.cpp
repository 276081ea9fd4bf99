#include "kernels/vortex/mapping.h"

#include <algorithm>
#include <cassert>

#include "kernels/common/format.h"
#include "kernels/cpu/problem.h"

namespace flashviz::vortex {
namespace {

long long LL(std::int64_t x) { return static_cast<long long>(x); }

void AddRange(RegisterBudget& budget, int first, int count, RegisterContent content, std::string label) {
  budget.ranges.push_back({first, count, content, std::move(label)});
}

void AddRegion(LocalMemoryLayout& layout, std::string name, std::string description, int rows, int cols,
               int element_bytes) {
  LocalRegion region;
  region.name = std::move(name);
  region.layout = std::move(description);
  region.offset = layout.bytes_per_block;
  region.rows = rows;
  region.cols = cols;
  region.element_bytes = element_bytes;
  region.bytes = std::int64_t{rows} * cols * element_bytes;
  layout.bytes_per_block += region.bytes;
  layout.regions.push_back(std::move(region));
}

// ---- SIMT ----------------------------------------------------------------------------------------------------

void SimtBudgets(Mapping& m) {
  const int d = m.request.d;
  RegisterBudget& r = m.registers;
  r.available = m.request.machine.fp_registers_per_thread;
  AddRange(r, 0, d, RegisterContent::kORow, Sprintf("O_row[0..%d]", d - 1));
  AddRange(r, d, m.bc, RegisterContent::kSPRow, Sprintf("S/P~ row[0..%d]", m.bc - 1));
  AddRange(r, d + m.bc, 2, RegisterContent::kStats, "m, l");
  AddRange(r, d + m.bc + 2, kSimtTemporaries, RegisterContent::kTemporary, "rowmax/acc, operand/rowsum, α, β");
  r.used = d + m.bc + 2 + kSimtTemporaries;
  r.breakdown = Sprintf("O row d = %d + S/P row B_c = %d + m, l 2 + temporaries %d = %d", d, m.bc, kSimtTemporaries,
                        r.used);

  LocalMemoryLayout& l = m.local_memory;
  AddRegion(l, "Q_i", Sprintf("%d×%d fp32, row-major (B_r × d)", m.br, d), m.br, d, 4);
  AddRegion(l, "K_j", Sprintf("%d×%d fp32, row-major (B_c × d)", m.bc, d), m.bc, d, 4);
  AddRegion(l, "V_j^T", Sprintf("%d×%d fp32, V_j stored transposed (d × B_c)", d, m.bc), d, m.bc, 4);
}

void SimtChecks(Mapping& m) {
  const int d = m.request.d;
  const int available = m.registers.available;
  const std::int64_t d_bc = std::int64_t{d} * m.bc;
  FitCheck instantiation{"instantiation", d_bc <= kSimtMaxDTimesBc, ""};
  instantiation.detail =
      instantiation.ok
          ? Sprintf("d·B_c = %lld ≤ %d: the program has a kernel for this shape", LL(d_bc), kSimtMaxDTimesBc)
          : Sprintf("d·B_c = %lld > %d: O and S rows spill out of 32 registers (the program is instantiated only "
                    "for d·B_c ≤ %d)",
                    LL(d_bc), kSimtMaxDTimesBc, kSimtMaxDTimesBc);
  m.checks.push_back(instantiation);

  FitCheck registers{"registers", m.registers.used <= available, ""};
  registers.detail =
      registers.ok ? Sprintf("%s ≤ %d FP registers per thread", m.registers.breakdown.c_str(), available)
                   : Sprintf("%s > %d FP registers per thread: the rows spill to the stack instead of staying in "
                             "registers",
                             m.registers.breakdown.c_str(), available);
  m.checks.push_back(registers);

  FitCheck head{"head dimension", d <= kSimtMaxD, ""};
  head.detail = head.ok ? Sprintf("d = %d ≤ %d (the program's limit)", d, kSimtMaxD)
                        : Sprintf("d = %d > %d: the program takes head dimensions up to %d", d, kSimtMaxD, kSimtMaxD);
  m.checks.push_back(head);

  FitCheck tile{"K/V tile", m.bc <= m.request.n, ""};
  tile.detail = tile.ok ? Sprintf("B_c = %d ≤ N = %d", m.bc, m.request.n)
                        : Sprintf("B_c = %d > N = %d: every K_j, V_j load reads rows past N", m.bc, m.request.n);
  m.checks.push_back(tile);

  const LocalMemoryLayout& l = m.local_memory;
  FitCheck memory{"local memory", l.bytes_per_core <= l.capacity, ""};
  const std::string formula =
      Sprintf("(B_r + 2·B_c)·d·4 = (%d + 2·%d)·%d·4 = %lld B per block × %d block%s per core = %lld B", m.br, m.bc, d,
              LL(l.bytes_per_block), l.blocks_per_core, l.blocks_per_core == 1 ? "" : "s", LL(l.bytes_per_core));
  memory.detail = memory.ok ? Sprintf("%s ≤ %lld B of local memory", formula.c_str(), LL(l.capacity))
                            : Sprintf("%s > %lld B of local memory: the host refuses to launch the grid",
                                      formula.c_str(), LL(l.capacity));
  m.checks.push_back(memory);
}

// ---- TCU -----------------------------------------------------------------------------------------------------

void TcuBudgets(Mapping& m) {
  RegisterBudget& r = m.registers;
  r.available = m.request.machine.fp_registers_per_thread;
  AddRange(r, kTcuFirstRegisterA, kTcuFragmentRegisters, RegisterContent::kFragmentA, "fragment A: Q_i, then P~_ij");
  AddRange(r, 8, 2, RegisterContent::kTemporary, "row scalars");
  AddRange(r, kTcuFirstRegisterB, kTcuFragmentRegisters, RegisterContent::kFragmentB, "fragment B: K_j^T, then V_j");
  AddRange(r, 18, kTcuScalars - 2, RegisterContent::kTemporary, "row scalars");
  AddRange(r, kTcuFirstRegisterC, kTcuFragmentRegisters, RegisterContent::kAccumulator,
           "accumulator: S_ij, then P~_ij·V_j");
  r.used = 3 * kTcuFragmentRegisters + kTcuScalars;
  r.breakdown = Sprintf("fragments A, B, C 3·%d = %d (f0–f7, f10–f17, f24–f31) + row scalars %d = %d",
                        kTcuFragmentRegisters, 3 * kTcuFragmentRegisters, kTcuScalars, r.used);

  // Our layout of the fixed program (the published one lets blocks overlap). P~_ij reuses
  // K_j^T's bytes: K_j^T is dead once S_ij is in the accumulator.
  LocalMemoryLayout& l = m.local_memory;
  AddRegion(l, "Q_i", "8×16 fp16, row-major A operand; columns 8–15 are zero padding", kTcuTile, kTcuK, 2);
  AddRegion(l, "K_j^T / P~_ij",
            "16×8 fp16 column-major B operand (k 8–15 zero); then P~_ij as 8×16 fp16 A operand (columns 8–15 zero)",
            kTcuK, kTcuTile, 2);
  AddRegion(l, "V_j", "16×8 fp16 column-major B operand (stored as V_j^T); k 8–15 are zero padding", kTcuK,
            kTcuTile, 2);
  AddRegion(l, "S_ij / P~_ij·V_j", "8×16 fp32 (stride 16: columns 8–15 unused), the stored accumulator", kTcuTile,
            kTcuK, 4);
  AddRegion(l, "m_i", "8 fp32, the running row max", 1, kTcuTile, 4);
  AddRegion(l, "l_i", "8 fp32, the running row sum", 1, kTcuTile, 4);
  AddRegion(l, "O_i", "8×8 fp32, the unnormalized output rows", kTcuTile, kTcuTile, 4);
  AddRegion(l, "rowmax", "8 fp32, rowmax(S_ij) from threads 0–7", 1, kTcuTile, 4);
  AddRegion(l, "rowsum", "8 fp32, rowsum(P~_ij) from threads 0–7", 1, kTcuTile, 4);
}

void TcuChecks(Mapping& m) {
  const Request& q = m.request;
  FitCheck head{"head dimension", q.d == kTcuTile, ""};
  head.detail = head.ok ? Sprintf("d = %d: the 8-wide head dimension is padded to K = %d", q.d, kTcuK)
                        : Sprintf("the TCU program is specialized for d = 8 (B_r = B_c = 8, K padded to 16); d = %d",
                                  q.d);
  m.checks.push_back(head);

  const int t = q.machine.threads_per_warp;
  FitCheck warp{"threads per warp", t == kTcuThreads, ""};
  warp.detail = warp.ok ? "T = 8: one warp holds one 8×8 tile's fragments"
                        : Sprintf("wmma_context<8, fp16, fp32> is built for 8 threads per warp; T = %d", t);
  m.checks.push_back(warp);

  FitCheck tiles{"tiles", q.n >= kTcuTile, ""};
  tiles.detail = tiles.ok ? Sprintf("N = %d: %d Q tiles and %d K/V tiles of 8 rows", q.n, q.n / 8, q.n / 8)
                          : Sprintf("N = %d < 8: there is no full 8×8 tile", q.n);
  m.checks.push_back(tiles);

  const int available = m.registers.available;
  const int highest = kTcuFirstRegisterC + kTcuFragmentRegisters;  // f31 + 1
  FitCheck registers{"registers", available >= highest && m.registers.used <= available, ""};
  registers.detail = registers.ok ? Sprintf("%s ≤ %d FP registers per thread", m.registers.breakdown.c_str(), available)
                                  : Sprintf("%s: mma_sync names f0–f31 but a thread has %d FP registers",
                                            m.registers.breakdown.c_str(), available);
  m.checks.push_back(registers);

  const LocalMemoryLayout& l = m.local_memory;
  FitCheck memory{"local memory", l.bytes_per_core <= l.capacity, ""};
  const std::string formula =
      Sprintf("%lld B per block (Q_i, K_j^T/P~, V_j fp16 + S, m, l, O, rowmax, rowsum fp32) × %d block%s per core "
              "= %lld B",
              LL(l.bytes_per_block), l.blocks_per_core, l.blocks_per_core == 1 ? "" : "s", LL(l.bytes_per_core));
  memory.detail = memory.ok ? Sprintf("%s ≤ %lld B of local memory", formula.c_str(), LL(l.capacity))
                            : Sprintf("%s > %lld B of local memory: the blocks of one core would overlap",
                                      formula.c_str(), LL(l.capacity));
  m.checks.push_back(memory);
}

}  // namespace

std::string_view RegisterContentName(RegisterContent content) {
  switch (content) {
    case RegisterContent::kORow: return "O row";
    case RegisterContent::kSPRow: return "S/P~ row";
    case RegisterContent::kStats: return "m, l";
    case RegisterContent::kTemporary: return "temporaries";
    case RegisterContent::kFragmentA: return "fragment A";
    case RegisterContent::kFragmentB: return "fragment B";
    case RegisterContent::kAccumulator: return "accumulator";
  }
  return "?";
}

Mapping MapToVortex(const Request& request) {
  if (auto error = RequestError(request)) throw InputError(*error);
  Mapping m;
  m.request = request;
  const MachineConfig& machine = request.machine;
  const int n = request.n;
  if (request.mode == Mode::kSimt) {
    m.br = std::min(machine.threads_per_core(), n);
    m.bc = std::max(m.br, kSimtMinBc);
  } else {
    m.br = m.bc = kTcuTile;
  }
  m.tr = std::max(1, n / m.br);
  m.tc = std::max(1, n / m.bc);
  m.threads_per_block = request.mode == Mode::kSimt ? m.br : kTcuThreads;
  m.warps_per_block = (m.threads_per_block + machine.threads_per_warp - 1) / machine.threads_per_warp;
  m.blocks_per_core = machine.warps_per_core / m.warps_per_block;  // ≥ 1: RequestError rules out the rest
  assert(m.blocks_per_core >= 1);

  // Block b → core b mod C (round-robin, as the report's program is spread); the k-th block of a core takes warp slot k
  // mod blocks_per_core and runs in wave k / blocks_per_core.
  m.blocks.reserve(static_cast<std::size_t>(m.tr));
  for (int b = 0; b < m.tr; ++b) {
    BlockPlacement p;
    p.block = b;
    p.core = b % machine.cores;
    const int slot = b / machine.cores;
    p.wave = slot / m.blocks_per_core;
    p.first_warp = (slot % m.blocks_per_core) * m.warps_per_block;
    p.warps = m.warps_per_block;
    p.row_begin = b * m.br;
    p.rows = std::min(m.br, n - p.row_begin);
    m.waves = std::max(m.waves, p.wave + 1);
    m.blocks.push_back(p);
  }
  m.active_cores = std::min(machine.cores, m.tr);

  m.local_memory.capacity = machine.local_memory_bytes;
  m.local_memory.blocks_per_core = std::min(m.blocks_per_core, (m.tr + machine.cores - 1) / machine.cores);
  if (request.mode == Mode::kSimt) {
    SimtBudgets(m);
  } else {
    TcuBudgets(m);
  }
  m.local_memory.bytes_per_core = m.local_memory.bytes_per_block * m.local_memory.blocks_per_core;
  if (request.mode == Mode::kSimt) {
    SimtChecks(m);
  } else {
    TcuChecks(m);
  }

  std::string failed;
  for (const FitCheck& c : m.checks) {
    if (c.ok) continue;
    m.fits = false;
    if (!failed.empty()) failed += "; ";
    failed += c.detail;
  }
  m.reason = m.fits ? Sprintf("fits: %d of %d FP registers per thread, %lld of %lld B local memory per core",
                              m.registers.used, m.registers.available, LL(m.local_memory.bytes_per_core),
                              LL(m.local_memory.capacity))
                    : failed;
  return m;
}

RowOwner Mapping::OwnerOfRow(int row) const {
  assert(row >= 0 && row < request.n);
  const BlockPlacement& p = blocks[static_cast<std::size_t>(row / br)];
  const int local = row - p.row_begin;
  const int t = request.machine.threads_per_warp;
  return RowOwner{row, p.block, p.core, p.first_warp + local / t, local % t, p.wave};
}

int Mapping::RowOfThread(int core, int warp, int thread, int wave) const {
  const MachineConfig& machine = request.machine;
  if (core < 0 || core >= machine.cores || warp < 0 || warp >= machine.warps_per_core || thread < 0 ||
      thread >= machine.threads_per_warp || wave < 0)
    return -1;
  const int slot_in_wave = warp / warps_per_block;
  if (slot_in_wave >= blocks_per_core) return -1;
  const std::int64_t slot = std::int64_t{wave} * blocks_per_core + slot_in_wave;
  const std::int64_t block = slot * machine.cores + core;
  if (block >= tr) return -1;
  const BlockPlacement& p = blocks[static_cast<std::size_t>(block)];
  const int local = (warp - p.first_warp) * machine.threads_per_warp + thread;
  if (local >= p.rows) return -1;
  return p.row_begin + local;
}

}  // namespace flashviz::vortex
