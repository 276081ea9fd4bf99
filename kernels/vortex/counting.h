// The counting model of the report's three programs on Vortex: baseline attention (three kernels, S and P in
// global memory), SIMT FlashAttention and TCU FlashAttention. Each program is a list of phases; a phase's
// per-thread operations are counted by walking that thread's loop nest once (a Counter is incremented where the
// thread would execute an operation), then multiplied by the threads that run it and by how often it runs
// (blocks × K/V tiles). Global traffic is counted from the same global loads and stores (4-byte fp32 values).
// Operations are counted per thread, as Vortex's "instructions" counter counts a warp instruction once per
// active thread; an mma_sync is one warp instruction, so it counts once per thread of the warp here too.
//
// [SECTION] operation classes and counts
// [SECTION] programs and phases
// [SECTION] the report's published table
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "kernels/cpu/schedule.h"
#include "kernels/vortex/mapping.h"

namespace flashviz::vortex {

// ---- [SECTION] operation classes and counts -------------------------------------------------------------------

enum class OpClass : std::uint8_t {
  kFma,          // fused multiply-add (dot products, O updates)
  kFpOther,      // other FP arithmetic: max, add, sub, mul, div
  kExp,          // expf
  kConvert,      // fp32 ↔ fp16 conversions (TCU)
  kLocalLoad,    // local memory ("SRAM") loads
  kLocalStore,   // local memory stores (zero padding included)
  kGlobalLoad,   // global memory (DRAM) loads
  kGlobalStore,  // global memory stores
  kBarrier,      // __syncthreads
  kMma,          // mma_sync (a warp instruction; counted once per thread of the warp)
};
inline constexpr int kOpClassCount = 10;
std::string_view OpClassName(OpClass op);  // "fma", "fp_other", "exp", ...

struct OpCounts {
  std::array<std::int64_t, kOpClassCount> ops{};

  std::int64_t& operator[](OpClass op) { return ops[static_cast<int>(op)]; }
  std::int64_t operator[](OpClass op) const { return ops[static_cast<int>(op)]; }
  std::int64_t Total() const;
  std::int64_t GlobalReadBytes() const { return 4 * (*this)[OpClass::kGlobalLoad]; }
  std::int64_t GlobalWriteBytes() const { return 4 * (*this)[OpClass::kGlobalStore]; }
  OpCounts& operator+=(const OpCounts& other);
  OpCounts Times(std::int64_t factor) const;
  bool operator==(const OpCounts&) const = default;
};

// ---- [SECTION] programs and phases -------------------------------------------------------------------------------

enum class Program : std::uint8_t { kAttention, kSimtFlash, kTcuFlash };
inline constexpr int kProgramCount = 3;
std::string_view ProgramName(Program program);   // "attention", "flash_simt", "flash_tcu"
std::string_view ProgramTitle(Program program);  // "Attention", "FlashAttention (SIMT)", "FlashAttention (TCU)"

// How often a phase runs per block.
enum class Repeat : std::uint8_t { kOncePerBlock, kPerKvTile };

struct ProgramPhase {
  std::string name;        // "load_kv", "scores", ...; baseline: "kernel_qk", "kernel_softmax", "kernel_pv"
  Phase stepper_phase;     // the q-order phase of kernels/cpu/schedule.h it corresponds to (kDone for kernels)
  std::string what;        // one line: what the active threads do
  Repeat repeat = Repeat::kOncePerBlock;
  int active_threads = 0;  // per block (baseline: per grid, see `blocks`)
  std::int64_t blocks = 0; // how many blocks run it (the grid size)
  int repeats = 1;         // T_c for kPerKvTile
  OpCounts per_thread;     // one active thread, one execution
  OpCounts Total() const { return per_thread.Times(std::int64_t{active_threads} * blocks * repeats); }
};

struct ProgramCounts {
  Program program = Program::kAttention;
  bool applicable = true;
  std::string not_applicable_reason;  // e.g. "the TCU program needs d = 8"
  int br = 0, bc = 0;                 // the tiles the flash programs use (0 for the baseline)
  std::vector<ProgramPhase> phases;
  OpCounts total;
  std::int64_t mma_sync = 0;          // warp instructions
  std::int64_t mma_micro_ops = 0;     // 32 per mma_sync
  std::int64_t threads_launched = 0;  // over all kernels
};

// One program's counts for problem (N, d). The flash programs take their tiles from the mapping rules for
// `machine` (SIMT: B_r = min(W·T, N), B_c = max(B_r, 8); TCU: 8×8). Counting does not need the configuration to
// fit: a non-fitting SIMT shape is counted as if its rows stayed in registers.
ProgramCounts CountProgram(Program program, const MachineConfig& machine, int n, int d);
std::array<ProgramCounts, kProgramCount> CountAllPrograms(const MachineConfig& machine, int n, int d);

// ---- [SECTION] the report's published table ------------------------------------------------------------------

// The report's measurements (simx, 4 cores, 2 warps/core, 8 threads/warp, N = 64, d = 8, MEM_CLOCK_RATIO 4).
struct PublishedRow {
  Program program;
  std::int64_t instructions;
  std::int64_t cycles;
  double ipc;
  std::int64_t memory_latency_cycles;  // average cycles a DRAM read is pending
};
inline constexpr std::array<PublishedRow, kProgramCount> kPublishedTable = {{
    {Program::kAttention, 1513613, 2984804, 0.507, 2907},
    {Program::kSimtFlash, 634145, 3693943, 0.172, 988},
    {Program::kTcuFlash, 2120872, 4794023, 0.442, 767},
}};
inline constexpr std::string_view kPublishedTableLabel =
    "the report's measurements (Vortex simx, 4 cores × 2 warps × 8 threads, N = 64, d = 8, MEM_CLOCK_RATIO 4)";

// A ratio between two programs, measured by the report and counted by the model.
struct ProgramRatio {
  Program numerator, denominator;
  double report_instructions = 0;  // report: instructions(numerator) / instructions(denominator)
  double report_cycles = 0;
  double report_memory_latency = 0;
  double model_operations = 0;     // model: counted operations
  double model_global_bytes = 0;   // model: global read + write bytes
};
// SIMT/attention, TCU/attention, TCU/SIMT (the model side is empty (0) where a program is not applicable).
std::vector<ProgramRatio> CompareWithPublished(const std::array<ProgramCounts, kProgramCount>& counts);

}  // namespace flashviz::vortex
