#include "kernels/vortex/counting.h"

#include <algorithm>

#include "kernels/common/format.h"
#include "kernels/vortex/tcu.h"

namespace flashviz::vortex {
namespace {

// Counts one thread's operations as it walks its loop nest.
class Counter {
 public:
  Counter& Op(OpClass op, std::int64_t times = 1) {
    counts_[op] += times;
    return *this;
  }
  const OpCounts& counts() const { return counts_; }

 private:
  OpCounts counts_;
};

ProgramPhase MakePhase(std::string name, Phase stepper_phase, std::string what, Repeat repeat, int active_threads,
                       std::int64_t blocks, int repeats, const Counter& thread) {
  ProgramPhase p;
  p.name = std::move(name);
  p.stepper_phase = stepper_phase;
  p.what = std::move(what);
  p.repeat = repeat;
  p.active_threads = active_threads;
  p.blocks = blocks;
  p.repeats = repeat == Repeat::kPerKvTile ? repeats : 1;
  p.per_thread = thread.counts();
  return p;
}

// ---- baseline attention: S = QK^T, softmax, O = PV, three kernels through global memory ----------------------

void AttentionPhases(ProgramCounts& c, int n, int d) {
  Counter qk;  // one thread per S element
  for (int e = 0; e < d; ++e) qk.Op(OpClass::kGlobalLoad, 2).Op(OpClass::kFma);
  qk.Op(OpClass::kGlobalStore);
  c.phases.push_back(MakePhase("kernel_qk", Phase::kScores,
                               "S[row][col] = Σ_e Q[row][e]·K[col][e], one element per thread", Repeat::kOncePerBlock,
                               1, std::int64_t{n} * n, 1, qk));

  Counter softmax;  // one thread per row: max pass, exp pass, normalize pass
  softmax.Op(OpClass::kGlobalLoad);
  for (int col = 1; col < n; ++col) softmax.Op(OpClass::kGlobalLoad).Op(OpClass::kFpOther);
  for (int col = 0; col < n; ++col)
    softmax.Op(OpClass::kGlobalLoad)
        .Op(OpClass::kFpOther)
        .Op(OpClass::kExp)
        .Op(OpClass::kGlobalStore)
        .Op(OpClass::kFpOther);
  for (int col = 0; col < n; ++col) softmax.Op(OpClass::kGlobalLoad).Op(OpClass::kFpOther).Op(OpClass::kGlobalStore);
  c.phases.push_back(MakePhase("kernel_softmax", Phase::kExp,
                               "P[row] = softmax(S[row]): max, exp and sum, normalize, one row per thread",
                               Repeat::kOncePerBlock, 1, n, 1, softmax));

  Counter pv;  // one thread per O element
  for (int e = 0; e < n; ++e) pv.Op(OpClass::kGlobalLoad, 2).Op(OpClass::kFma);
  pv.Op(OpClass::kGlobalStore);
  c.phases.push_back(MakePhase("kernel_pv", Phase::kUpdateO,
                               "O[row][col] = Σ_k P[row][k]·V[k][col], one element per thread", Repeat::kOncePerBlock,
                               1, std::int64_t{n} * d, 1, pv));
  c.threads_launched = std::int64_t{n} * n + n + std::int64_t{n} * d;
}

// ---- SIMT flash: one thread per query row --------------------------------------------------------------------

void SimtPhases(ProgramCounts& c, int n, int d) {
  const int br = c.br, bc = c.bc;
  const std::int64_t blocks = n / br;
  const int tiles = n / bc;
  Counter load_q;
  for (int e = 0; e < d; ++e) load_q.Op(OpClass::kGlobalLoad).Op(OpClass::kLocalStore);
  c.phases.push_back(MakePhase("load_q", Phase::kLoadQ,
                               "each thread copies its Q row to local memory; O_row = 0, m = −∞, ℓ = 0 in registers",
                               Repeat::kOncePerBlock, br, blocks, tiles, load_q));

  Counter load_kv;  // B_c/B_r rows of K_j and of V_j per thread, then a barrier
  for (int row = 0; row < bc / br; ++row)
    for (int e = 0; e < d; ++e) load_kv.Op(OpClass::kGlobalLoad, 2).Op(OpClass::kLocalStore, 2);
  load_kv.Op(OpClass::kBarrier);
  c.phases.push_back(MakePhase("load_kv", Phase::kLoadKv,
                               Sprintf("all threads load K_j and V_j^T cooperatively (%d row%s each), barrier", bc / br,
                                       bc / br == 1 ? "" : "s"),
                               Repeat::kPerKvTile, br, blocks, tiles, load_kv));

  Counter scores;  // the Q row is re-read from local memory for every key
  for (int k = 0; k < bc; ++k)
    for (int e = 0; e < d; ++e) scores.Op(OpClass::kLocalLoad, 2).Op(OpClass::kFma);
  c.phases.push_back(MakePhase("scores", Phase::kScores,
                               "each thread: S row[k] = Σ_e Q[row][e]·K_j[k][e] into its S/P registers",
                               Repeat::kPerKvTile, br, blocks, tiles, scores));

  Counter rowmax;
  for (int k = 1; k < bc; ++k) rowmax.Op(OpClass::kFpOther);
  c.phases.push_back(MakePhase("rowmax", Phase::kRowMax, "each thread: rowmax of its S row", Repeat::kPerKvTile, br,
                               blocks, tiles, rowmax));

  Counter exp;
  for (int k = 0; k < bc; ++k) exp.Op(OpClass::kFpOther).Op(OpClass::kExp);
  c.phases.push_back(MakePhase("exp", Phase::kExp, "each thread: P~ row = exp(S row − rowmax), in place",
                               Repeat::kPerKvTile, br, blocks, tiles, exp));

  Counter rowsum;  // rowsum, then m_new = max(m, rowmax), alpha, beta, l_new = alpha·l + beta·rowsum
  for (int k = 0; k < bc; ++k) rowsum.Op(OpClass::kFpOther);
  rowsum.Op(OpClass::kFpOther).Op(OpClass::kFpOther, 2).Op(OpClass::kExp, 2).Op(OpClass::kFpOther).Op(OpClass::kFma);
  c.phases.push_back(MakePhase("rowsum", Phase::kRowSum,
                               "each thread: rowsum; m_new = max(m, rowmax); α = e^(m − m_new), β = e^(rowmax − "
                               "m_new); ℓ = α·ℓ + β·rowsum",
                               Repeat::kPerKvTile, br, blocks, tiles, rowsum));

  Counter update_o;  // O[c] = alpha·O[c] + beta·(P~ row · V_j^T[c]), then the end-of-tile barrier
  for (int col = 0; col < d; ++col) {
    for (int k = 0; k < bc; ++k) update_o.Op(OpClass::kLocalLoad).Op(OpClass::kFma);
    update_o.Op(OpClass::kFpOther).Op(OpClass::kFma);
  }
  update_o.Op(OpClass::kBarrier);
  c.phases.push_back(MakePhase("update_o", Phase::kUpdateO,
                               "each thread: O_row = α·O_row + β·(P~ row · V_j), barrier", Repeat::kPerKvTile,
                               br, blocks, tiles, update_o));

  Counter finalize;
  finalize.Op(OpClass::kFpOther);  // 1/l
  for (int col = 0; col < d; ++col) finalize.Op(OpClass::kFpOther);
  c.phases.push_back(MakePhase("finalize", Phase::kFinalize, "each thread: O_row · (1/l)", Repeat::kOncePerBlock, br,
                               blocks, tiles, finalize));

  Counter write_back;
  for (int col = 0; col < d; ++col) write_back.Op(OpClass::kGlobalStore);
  c.phases.push_back(MakePhase("write_back", Phase::kWriteBack, "each thread stores its O row to global memory",
                               Repeat::kOncePerBlock, br, blocks, tiles, write_back));
  c.threads_launched = n;
}

// ---- TCU flash: one warp of 8 threads per 8×8 tile -----------------------------------------------------------

void TcuPhases(ProgramCounts& c, int n) {
  constexpr int t = kTcuThreads;
  const std::int64_t blocks = n / kTcuTile;
  const int tiles = n / kTcuTile;
  const int padding_per_thread = kTcuTile * (kTcuK - kTcuTile) / t;  // 8 zeros per thread per padded operand

  Counter load_q;  // 8 elements of Q_i per thread (fp32 → fp16), its share of the padding, m, l and its O row
  for (int e = 0; e < kTcuTile * kTcuTile / t; ++e)
    load_q.Op(OpClass::kGlobalLoad).Op(OpClass::kConvert).Op(OpClass::kLocalStore);
  load_q.Op(OpClass::kLocalStore, padding_per_thread);
  load_q.Op(OpClass::kLocalStore, 2);
  for (int col = 0; col < kTcuTile; ++col) load_q.Op(OpClass::kLocalStore);
  load_q.Op(OpClass::kBarrier);
  c.phases.push_back(MakePhase("load_q", Phase::kLoadQ,
                               "all 8 threads: Q_i → fp16 local memory, columns 8–15 zeroed; thread r: m_r = −∞, ℓ_r "
                               "= 0, O row r = 0; barrier",
                               Repeat::kOncePerBlock, t, blocks, tiles, load_q));

  Counter load_kv;
  for (int operand = 0; operand < 2; ++operand) {  // K_j^T, then V_j
    for (int e = 0; e < kTcuTile * kTcuTile / t; ++e)
      load_kv.Op(OpClass::kGlobalLoad).Op(OpClass::kConvert).Op(OpClass::kLocalStore);
    load_kv.Op(OpClass::kLocalStore, padding_per_thread);
  }
  load_kv.Op(OpClass::kBarrier);
  c.phases.push_back(
      MakePhase("load_kv", Phase::kLoadKv,
                "all 8 threads: K_j and V_j → fp16 local memory, transposed, K padded to 16 with zeros; barrier",
                Repeat::kPerKvTile, t, blocks, tiles, load_kv));

  Counter scores;  // load A and B fragments (one 32-bit word per register), mma_sync, store the accumulator
  scores.Op(OpClass::kLocalLoad, 2 * kTcuFragmentRegisters)
      .Op(OpClass::kMma)
      .Op(OpClass::kLocalStore, kTcuFragmentRegisters);
  scores.Op(OpClass::kBarrier);
  c.phases.push_back(MakePhase("scores", Phase::kScores,
                               "warp: A ← Q_i (f0–f7), B ← K_j^T (f10–f17), mma_sync #1: S_ij in f24–f31, stored to "
                               "local memory (stride 16); barrier",
                               Repeat::kPerKvTile, t, blocks, tiles, scores));

  Counter rowmax;  // thread r scans row r
  for (int col = 0; col < kTcuTile; ++col) rowmax.Op(OpClass::kLocalLoad).Op(OpClass::kFpOther);
  rowmax.Op(OpClass::kLocalStore).Op(OpClass::kBarrier);
  c.phases.push_back(MakePhase("rowmax", Phase::kRowMax, "thread r: rowmax of row r of S_ij → local memory; barrier",
                               Repeat::kPerKvTile, t, blocks, tiles, rowmax));

  Counter exp;  // thread t: column t of every row
  for (int row = 0; row < kTcuTile; ++row)
    exp.Op(OpClass::kLocalLoad, 2)
        .Op(OpClass::kFpOther)
        .Op(OpClass::kExp)
        .Op(OpClass::kConvert)
        .Op(OpClass::kLocalStore, 2);
  exp.Op(OpClass::kBarrier);
  c.phases.push_back(MakePhase("exp", Phase::kExp,
                               "thread t: P~[r][t] = exp(S[r][t] − rowmax_r) for every row r, stored as fp16 (A "
                               "operand) and fp32 (for the sum); barrier",
                               Repeat::kPerKvTile, t, blocks, tiles, exp));

  Counter rowsum;  // thread r: sum of row r, statistics, rescale of O row r, its share of P~'s padding
  for (int col = 0; col < kTcuTile; ++col) rowsum.Op(OpClass::kLocalLoad).Op(OpClass::kFpOther);
  rowsum.Op(OpClass::kLocalLoad, 3);                                  // rowmax_r, m_r, l_r
  rowsum.Op(OpClass::kFpOther).Op(OpClass::kFpOther, 2).Op(OpClass::kExp, 2);  // m_new, alpha, beta
  rowsum.Op(OpClass::kFpOther).Op(OpClass::kFma);                     // l_new = alpha·l + beta·rowsum
  rowsum.Op(OpClass::kLocalStore, 2);                                 // m_r, l_r
  for (int col = 0; col < kTcuTile; ++col)
    rowsum.Op(OpClass::kLocalLoad).Op(OpClass::kFpOther).Op(OpClass::kLocalStore);
  rowsum.Op(OpClass::kLocalStore, padding_per_thread);
  rowsum.Op(OpClass::kBarrier);
  c.phases.push_back(MakePhase(
      "rowsum", Phase::kRowSum,
      "thread r: rowsum of row r; m_new, ℓ_new, α, β; O row r ·= α; P~ columns 8–15 zeroed; barrier",
      Repeat::kPerKvTile, t, blocks, tiles, rowsum));

  Counter update_o;  // A ← P~, B ← V_j, mma_sync, store; barrier; thread r accumulates row r; barrier
  update_o.Op(OpClass::kLocalLoad, 2 * kTcuFragmentRegisters)
      .Op(OpClass::kMma)
      .Op(OpClass::kLocalStore, kTcuFragmentRegisters);
  update_o.Op(OpClass::kBarrier);
  for (int col = 0; col < kTcuTile; ++col)
    update_o.Op(OpClass::kLocalLoad, 2).Op(OpClass::kFma).Op(OpClass::kLocalStore);
  update_o.Op(OpClass::kBarrier);
  c.phases.push_back(MakePhase("update_o", Phase::kUpdateO,
                               "warp: A ← P~_ij (f0–f7), B ← V_j (f10–f17), mma_sync #2 → f24–f31, stored; barrier; "
                               "thread r: O row r += beta·(P~V)[r]; barrier",
                               Repeat::kPerKvTile, t, blocks, tiles, update_o));

  Counter finalize;
  finalize.Op(OpClass::kLocalLoad).Op(OpClass::kFpOther);  // l_r, 1/l_r
  for (int col = 0; col < kTcuTile; ++col) finalize.Op(OpClass::kLocalLoad).Op(OpClass::kFpOther);
  c.phases.push_back(MakePhase("finalize", Phase::kFinalize, "thread r: O row r · (1/l_r)", Repeat::kOncePerBlock, t,
                               blocks, tiles, finalize));

  Counter write_back;
  for (int col = 0; col < kTcuTile; ++col) write_back.Op(OpClass::kGlobalStore);
  c.phases.push_back(MakePhase("write_back", Phase::kWriteBack, "thread r stores O row r to global memory",
                               Repeat::kOncePerBlock, t, blocks, tiles, write_back));
  c.threads_launched = n;
}

}  // namespace

std::string_view OpClassName(OpClass op) {
  static constexpr std::array<std::string_view, kOpClassCount> kNames = {
      "fma",         "fp_other",    "exp",          "convert", "local_load",
      "local_store", "global_load", "global_store", "barrier", "mma"};
  return kNames[static_cast<int>(op)];
}

std::int64_t OpCounts::Total() const {
  std::int64_t total = 0;
  for (std::int64_t x : ops) total += x;
  return total;
}

OpCounts& OpCounts::operator+=(const OpCounts& other) {
  for (int i = 0; i < kOpClassCount; ++i) ops[i] += other.ops[i];
  return *this;
}

OpCounts OpCounts::Times(std::int64_t factor) const {
  OpCounts scaled;
  for (int i = 0; i < kOpClassCount; ++i) scaled.ops[i] = ops[i] * factor;
  return scaled;
}

std::string_view ProgramName(Program program) {
  switch (program) {
    case Program::kAttention: return "attention";
    case Program::kSimtFlash: return "flash_simt";
    case Program::kTcuFlash: return "flash_tcu";
  }
  return "?";
}

std::string_view ProgramTitle(Program program) {
  switch (program) {
    case Program::kAttention: return "Attention";
    case Program::kSimtFlash: return "FlashAttention (SIMT)";
    case Program::kTcuFlash: return "FlashAttention (TCU)";
  }
  return "?";
}

ProgramCounts CountProgram(Program program, const MachineConfig& machine, int n, int d) {
  ProgramCounts c;
  c.program = program;
  if (program == Program::kAttention) {
    if (n < 1 || d < 1) {
      c.applicable = false;
      c.not_applicable_reason = "N and d must be positive";
      return c;
    }
    AttentionPhases(c, n, d);
  } else {
    Request request{machine, program == Program::kSimtFlash ? Mode::kSimt : Mode::kTcu, n, d};
    if (auto error = RequestError(request)) {
      c.applicable = false;
      c.not_applicable_reason = *error;
      return c;
    }
    if (program == Program::kSimtFlash) {
      c.br = std::min(machine.threads_per_core(), n);
      c.bc = std::max(c.br, kSimtMinBc);
      if (c.bc > n) {
        c.applicable = false;
        c.not_applicable_reason = Sprintf("B_c = %d > N = %d: every K_j, V_j load reads rows past N", c.bc, n);
        return c;
      }
      SimtPhases(c, n, d);
    } else {
      c.br = c.bc = kTcuTile;
      if (d != kTcuTile || n < kTcuTile) {
        c.applicable = false;
        c.not_applicable_reason = d != kTcuTile ? Sprintf("the TCU program needs d = 8 (d = %d)", d)
                                                : Sprintf("the TCU program needs N ≥ 8 (N = %d)", n);
        return c;
      }
      TcuPhases(c, n);
    }
  }
  for (const ProgramPhase& phase : c.phases) c.total += phase.Total();
  // Every thread of a warp counts one mma_sync; the warp issues it once.
  c.mma_sync = c.total[OpClass::kMma] / kTcuThreads;
  c.mma_micro_ops = c.mma_sync * kMicroOpsPerMma;
  return c;
}

std::array<ProgramCounts, kProgramCount> CountAllPrograms(const MachineConfig& machine, int n, int d) {
  return {CountProgram(Program::kAttention, machine, n, d), CountProgram(Program::kSimtFlash, machine, n, d),
          CountProgram(Program::kTcuFlash, machine, n, d)};
}

std::vector<ProgramRatio> CompareWithPublished(const std::array<ProgramCounts, kProgramCount>& counts) {
  const auto published = [](Program p) -> const PublishedRow& { return kPublishedTable[static_cast<int>(p)]; };
  const auto counted = [&](Program p) -> const ProgramCounts& { return counts[static_cast<int>(p)]; };
  std::vector<ProgramRatio> ratios;
  for (auto [a, b] :
       {std::pair{Program::kSimtFlash, Program::kAttention}, std::pair{Program::kTcuFlash, Program::kAttention},
        std::pair{Program::kTcuFlash, Program::kSimtFlash}}) {
    ProgramRatio r{a, b};
    r.report_instructions =
        static_cast<double>(published(a).instructions) / static_cast<double>(published(b).instructions);
    r.report_cycles = static_cast<double>(published(a).cycles) / static_cast<double>(published(b).cycles);
    r.report_memory_latency = static_cast<double>(published(a).memory_latency_cycles) /
                              static_cast<double>(published(b).memory_latency_cycles);
    if (counted(a).applicable && counted(b).applicable) {
      r.model_operations =
          static_cast<double>(counted(a).total.Total()) / static_cast<double>(counted(b).total.Total());
      const auto bytes = [](const OpCounts& o) {
        return static_cast<double>(o.GlobalReadBytes() + o.GlobalWriteBytes());
      };
      r.model_global_bytes = bytes(counted(a).total) / bytes(counted(b).total);
    }
    ratios.push_back(r);
  }
  return ratios;
}

}  // namespace flashviz::vortex
