#include "kernels/vortex/phase_view.h"

#include <algorithm>

#include "kernels/common/format.h"
#include "kernels/vortex/tcu.h"

namespace flashviz::vortex {
namespace {

// Where a phase sits in one block's run: the phases before the K/V loop, inside it, after it.
int PhaseRank(Phase p) {
  switch (p) {
    case Phase::kLoadQ: return 0;
    case Phase::kLoadKv: return 1;
    case Phase::kScores: return 2;
    case Phase::kRowMax: return 3;
    case Phase::kExp: return 4;
    case Phase::kRowSum: return 5;
    case Phase::kUpdateO: return 6;
    case Phase::kFinalize: return 7;
    case Phase::kWriteBack: return 8;
    default: return -1;
  }
}

// Live in phases [from, to] (ranks), written in `writes`, read in `reads`.
struct Lifetime {
  int from, to;
};
bool Within(int rank, Lifetime life) { return rank >= life.from && rank <= life.to; }

// ---- SIMT ------------------------------------------------------------------------------------------------------

void SimtRegisters(const Mapping& m, int rank, PhaseView& v) {
  const int d = m.request.d, bc = m.bc;
  const int available = m.registers.available;
  const int total = std::max(available, m.registers.used);
  v.registers.resize(static_cast<std::size_t>(total));
  for (int f = 0; f < total; ++f) {
    RegisterCell& cell = v.registers[static_cast<std::size_t>(f)];
    cell.index = f;
    cell.spilled = f >= available;
  }
  const auto cell = [&](int f) -> RegisterCell& { return v.registers[static_cast<std::size_t>(f)]; };
  for (int c = 0; c < d; ++c) {
    RegisterCell& r = cell(c);
    r.content = RegisterContent::kORow;
    r.label = Sprintf("O[%d]", c);
    r.live = Within(rank, {0, 8});
    r.written = rank == 0 || rank == 6 || rank == 7;  // zeroed, updated, normalized
  }
  const bool holds_p = rank >= 4 && rank <= 6;
  for (int k = 0; k < bc; ++k) {
    RegisterCell& r = cell(d + k);
    r.content = RegisterContent::kSPRow;
    r.label = Sprintf(holds_p ? "P~[%d]" : "S[%d]", k);
    r.live = Within(rank, {2, 6});
    r.written = rank == 2 || rank == 4;
  }
  RegisterCell& m_cell = cell(d + bc);
  m_cell.content = RegisterContent::kStats;
  m_cell.label = "m";
  m_cell.live = Within(rank, {0, 6});
  m_cell.written = rank == 0 || rank == 5;
  RegisterCell& l_cell = cell(d + bc + 1);
  l_cell.content = RegisterContent::kStats;
  l_cell.label = "l";
  l_cell.live = Within(rank, {0, 7});
  l_cell.written = rank == 0 || rank == 5;
  // The four temporaries, reused across the phases.
  const int t0 = d + bc + 2;
  for (int x = 0; x < kSimtTemporaries; ++x) cell(t0 + x).content = RegisterContent::kTemporary;
  auto set = [&](int x, const char* label, bool written) {
    RegisterCell& r = cell(t0 + x);
    r.label = label;
    r.live = true;
    r.written = written;
  };
  switch (rank) {
    case 0: case 1: set(1, "operand (copy)", true); break;
    case 2: set(1, "operand Q/K", true); break;
    case 3: set(0, "rowmax", true); break;
    case 4: set(0, "rowmax", false); break;
    case 5: set(0, "rowmax", false); set(1, "rowsum", true); set(2, "alpha", true); set(3, "beta", true); break;
    case 6: set(0, "acc (P~·V)", true); set(1, "operand V", true); set(2, "alpha", false); set(3, "beta", false); break;
    case 7: set(0, "1/l", true); break;
    default: break;
  }
}

void SimtLocalMemory(int rank, PhaseView& v) {
  // Regions: 0 Q_i, 1 K_j, 2 V_j^T.
  v.local_memory = {{0, "Q_i", Within(rank, {0, 6}), rank == 0, rank == 2},
                    {1, "K_j", Within(rank, {1, 6}), rank == 1, rank == 2},
                    {2, "V_j^T", Within(rank, {1, 6}), rank == 1, rank == 6}};
}

// ---- TCU -------------------------------------------------------------------------------------------------------

void TcuRegisters(const Mapping& m, int rank, PhaseView& v) {
  const int available = m.registers.available;
  const int total = std::max(available, kTcuFirstRegisterC + kTcuFragmentRegisters);
  v.registers.resize(static_cast<std::size_t>(total));
  for (int f = 0; f < total; ++f) {
    RegisterCell& cell = v.registers[static_cast<std::size_t>(f)];
    cell.index = f;
    cell.spilled = f >= available;
    cell.content = RegisterContent::kTemporary;
  }
  const bool second = rank == 6;
  const bool mma_phase = rank == 2 || rank == 6;
  const auto fragment = [&](Fragment frag, RegisterContent content, const char* first, const char* second_name) {
    const FragmentShape shape = ShapeOf(frag);
    for (int reg = 0; reg < kTcuFragmentRegisters; ++reg) {
      RegisterCell& cell = v.registers[static_cast<std::size_t>(shape.first_register + reg)];
      cell.content = content;
      cell.live = mma_phase;
      cell.written = mma_phase;
      cell.padding = mma_phase && frag != Fragment::kC && RegisterIsPadding(frag, reg);
      // Lane 0's elements: the panel shows the other lanes with SlotOf/ElementsOf.
      const auto elements = ElementsOf(frag, 0, reg);
      const char* name = second ? second_name : first;
      if (elements.size() == 2)
        cell.label = Sprintf("%s[%d][%d..%d]", name, elements[0].row, elements[0].col, elements[1].col);
      else
        cell.label = Sprintf("%s[%d][%d]", name, elements[0].row, elements[0].col);
      if (frag == Fragment::kB && elements.size() == 2)
        cell.label = Sprintf("%s[%d..%d][%d]", name, elements[0].row, elements[1].row, elements[0].col);
    }
  };
  fragment(Fragment::kA, RegisterContent::kFragmentA, "Q", "P~");
  fragment(Fragment::kB, RegisterContent::kFragmentB, "K^T", "V");
  fragment(Fragment::kC, RegisterContent::kAccumulator, "S", "PV");
  // Row scalars in the registers the fragments leave free: f8, f9, f18–f21.
  static constexpr int kScalar[kTcuScalars] = {8, 9, 18, 19, 20, 21};
  auto set = [&](int x, const char* label, bool written) {
    RegisterCell& cell = v.registers[static_cast<std::size_t>(kScalar[x])];
    cell.label = label;
    cell.live = true;
    cell.written = written;
  };
  switch (rank) {
    case 3: set(0, "rowmax_r", true); break;
    case 4: set(0, "rowmax_r", true); set(1, "exp value", true); break;
    case 5:
      set(0, "rowsum_r", true); set(1, "m_new", true); set(2, "l_new", true); set(3, "alpha", true);
      set(4, "beta", true);
      break;
    case 6: set(4, "beta", false); break;
    case 7: set(0, "1/l_r", true); break;
    default: break;
  }
}

void TcuLocalMemory(int rank, PhaseView& v) {
  // Regions: 0 Q_i, 1 K_j^T / P~_ij, 2 V_j, 3 S_ij / P~V, 4 m_i, 5 l_i, 6 O_i, 7 rowmax, 8 rowsum.
  const bool p_in_shared = rank >= 4 && rank <= 6;
  const bool pv_in_s = rank == 6;
  v.local_memory = {
      {0, "Q_i (fp16, padded)", Within(rank, {0, 8}), rank == 0, rank == 2},
      {1, p_in_shared ? "P~_ij (fp16, padded)" : "K_j^T (fp16, padded)", Within(rank, {1, 6}),
       rank == 1 || rank == 4 || rank == 5, rank == 2 || rank == 6},
      {2, "V_j (fp16, padded)", Within(rank, {1, 6}), rank == 1, rank == 6},
      {3, pv_in_s ? "P~_ij·V_j" : (rank >= 4 ? "exp values (fp32)" : "S_ij"), Within(rank, {2, 6}),
       rank == 2 || rank == 4 || rank == 6, rank >= 3 && rank <= 6},
      {4, "m_i", Within(rank, {0, 8}), rank == 0 || rank == 5, rank == 5},
      {5, "l_i", Within(rank, {0, 8}), rank == 0 || rank == 5, rank == 5 || rank == 7},
      {6, "O_i", Within(rank, {0, 8}), rank == 0 || rank == 5 || rank == 6 || rank == 7, rank >= 5},
      {7, "rowmax", Within(rank, {3, 5}), rank == 3, rank == 4 || rank == 5},
      {8, "rowsum", Within(rank, {5, 5}), rank == 5, false},
  };
}

std::string TcuRole(int rank, int lane) {
  switch (rank) {
    case 3: case 5: case 7: case 8: return Sprintf("row %d", lane);
    case 4: return Sprintf("column %d", lane);
    case 6: return Sprintf("lane %d of the mma, then row %d", lane, lane);
    case 2: return Sprintf("lane %d of the mma", lane);
    default: return Sprintf("copies its share (lane %d)", lane);
  }
}

}  // namespace

AttentionProblem ScheduleProblem(const Mapping& mapping) {
  AttentionProblem p;
  p.n = mapping.request.n;
  p.d = mapping.request.d;
  p.br = mapping.br;
  p.bc = std::min(mapping.bc, mapping.request.n);
  p.order = LoopOrder::kQOuter;
  p.scale = 1.0;
  p.causal = false;
  p.sram_bytes = mapping.request.machine.local_memory_bytes;
  return p;
}

PhaseView ViewAt(const Mapping& m, const StepInfo& step) {
  PhaseView v;
  v.step = step;
  const int rank = PhaseRank(step.phase);
  if (rank < 0 || step.i < 0 || step.i >= m.tr) {
    v.what = step.phase == Phase::kDone ? "done: every block has written its O rows"
                                        : "not a phase of the Vortex programs (they run the Q-outer order)";
    return v;
  }
  const bool tcu = m.request.mode == Mode::kTcu;
  const ProgramCounts program =
      CountProgram(tcu ? Program::kTcuFlash : Program::kSimtFlash, m.request.machine, m.request.n, m.request.d);
  v.runs = true;
  v.phase = std::string(PhaseName(step.phase));
  for (const ProgramPhase& phase : program.phases)
    if (phase.stepper_phase == step.phase) {
      v.what = phase.what;
      v.block_ops = phase.per_thread.Times(phase.active_threads);
    }
  const BlockPlacement& block = m.blocks[static_cast<std::size_t>(step.i)];
  v.block = block.block;
  v.core = block.core;
  v.wave = block.wave;
  v.kv_tile = step.j;
  v.first_row = block.row_begin;
  v.rows = block.rows;
  for (const BlockPlacement& other : m.blocks)
    if (other.wave == block.wave && other.block != block.block) v.concurrent_blocks.push_back(other.block);
  const int t = m.request.machine.threads_per_warp;
  for (int local = 0; local < block.rows; ++local) {
    ActiveThread a;
    a.warp = block.first_warp + local / t;
    a.thread = local % t;
    a.row = block.row_begin + local;
    a.role = tcu ? TcuRole(rank, local) : Sprintf("row %d", a.row);
    v.active.push_back(std::move(a));
  }
  if (tcu) {
    TcuRegisters(m, rank, v);
    TcuLocalMemory(rank, v);
    v.mma = rank == 2 ? 1 : (rank == 6 ? 2 : 0);
    if (v.mma == 1) {
      v.fragment_a = "Q_i: 8×16 fp16, columns 8–15 zero";
      v.fragment_b = "K_j^T: 16×8 fp16, rows 8–15 zero";
      v.fragment_c = "S_ij = Q_i·K_j^T: 8×8 fp32";
    } else if (v.mma == 2) {
      v.fragment_a = "P~_ij: 8×16 fp16, columns 8–15 zero";
      v.fragment_b = "V_j: 16×8 fp16, rows 8–15 zero";
      v.fragment_c = "P~_ij·V_j: 8×8 fp32";
    }
  } else {
    SimtRegisters(m, rank, v);
    SimtLocalMemory(rank, v);
  }
  return v;
}

std::optional<std::int64_t> VortexStepFor(const Schedule& vortex, const AttentionProblem& main, const StepInfo& step) {
  const AttentionProblem& v = vortex.problem();
  if (v.order != LoopOrder::kQOuter) return std::nullopt;
  if (step.phase == Phase::kDone) return vortex.step_count() - 1;
  Phase phase = step.phase;
  int i = step.i, j = step.j;
  if (phase == Phase::kInit) {
    phase = Phase::kLoadQ;
    i = 0;
  } else if (phase == Phase::kUpdateStats) {
    phase = Phase::kRowSum;
  }
  if (i < 0) i = 0;  // a K/V load with no Q tile yet: the Vortex blocks load K_j for their own Q tile
  const int row = main.RowBegin(i);
  if (row >= v.n) return std::nullopt;
  const int vi = row / v.br;
  const Schedule::Outer& outer = vortex.outer(vi);
  const auto phases = TileIterationPhases(LoopOrder::kQOuter);
  const auto per_iteration = static_cast<std::int64_t>(phases.size());
  const std::int64_t active = outer.inner_end - outer.inner_begin;
  switch (phase) {
    case Phase::kLoadQ: return outer.first_step;
    case Phase::kFinalize: return outer.first_step + 1 + per_iteration * active;
    case Phase::kWriteBack: return outer.first_step + 2 + per_iteration * active;
    default: break;
  }
  if (j < 0) return outer.first_step;
  const int col = main.ColBegin(j);
  if (col >= v.n) return std::nullopt;
  const std::optional<std::int64_t> first = vortex.FirstStepOfPair(vi, col / v.bc);
  if (!first) return std::nullopt;
  const auto at = std::find(phases.begin(), phases.end(), phase);
  if (at == phases.end()) return std::nullopt;
  return *first + (at - phases.begin());
}

}  // namespace flashviz::vortex
