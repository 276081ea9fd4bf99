// What the Vortex machine is doing at one step of the stepper's schedule, for a panel to animate: which block,
// core, warps and threads are active, what each FP register of an active thread holds, and what the block's local
// memory holds, for the report's programs in the Q-outer order (kernels/cpu/schedule.h, LoopOrder::kQOuter),
// which is the order the Vortex programs run: each block loads Q_i once and loops over the K/V tiles.
// Plain structs only: no drawing here.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "kernels/cpu/problem.h"
#include "kernels/cpu/schedule.h"
#include "kernels/vortex/counting.h"
#include "kernels/vortex/mapping.h"

namespace flashviz::vortex {

// The problem whose schedule the Vortex programs follow: N, d, the mapping's B_r × B_c, Q-outer order, no scale
// (the programs compute Q·K^T without 1/√d), the core's local memory as M.
AttentionProblem ScheduleProblem(const Mapping& mapping);

struct RegisterCell {
  int index = 0;            // f<index>
  RegisterContent content = RegisterContent::kTemporary;
  std::string label;        // what it holds in this phase: "O[3]", "S[5]", "P~[5]", "alpha", "A: Q[0][0..1]" ...
  bool live = false;        // holds a value the thread still needs
  bool written = false;     // written in this phase
  bool padding = false;     // TCU: holds only the zero padding of K
  bool spilled = false;     // SIMT: past the thread's FP registers (the compiler would spill it)
};

struct LocalRegionState {
  int region = 0;           // index into mapping.local_memory.regions
  std::string holds;        // what is in it now ("K_j^T" or "P~_ij" in the TCU's shared region)
  bool live = false;
  bool written = false;     // written in this phase
  bool read = false;        // read in this phase
};

struct ActiveThread {
  int warp = 0;
  int thread = 0;
  int row = -1;             // the query row it owns
  std::string role;         // TCU: "row r", "column t"; SIMT: "row"
};

struct PhaseView {
  StepInfo step;
  bool runs = false;               // false for a step with no Q tile (done) or a phase the program does not have
  std::string phase;               // the program phase's name
  std::string what;                // one line: what the block does in this phase
  int block = -1, core = -1, wave = -1;
  int kv_tile = -1;                // j
  int first_row = 0, rows = 0;     // the Q rows of the block
  std::vector<int> concurrent_blocks;    // other blocks of the same wave (other cores / warps), same phase
  std::vector<ActiveThread> active;      // on `core`
  std::vector<RegisterCell> registers;   // of one active thread (all active threads have the same layout)
  std::vector<LocalRegionState> local_memory;
  OpCounts block_ops;              // what the block executes in this step (all its active threads)
  // TCU only: which matrix operation this phase issues (0: none, 1: S = Q_i·K_j^T, 2: P~_ij·V_j) and what the
  // fragments hold.
  int mma = 0;
  std::string fragment_a, fragment_b, fragment_c;
};

// The view at `step` (from Schedule(ScheduleProblem(mapping))).
PhaseView ViewAt(const Mapping& mapping, const StepInfo& step);

// Keeps a Vortex view in step with another schedule's cursor (the main view's problem may have other tiles and
// the K/V-outer order): the step of `vortex` (a Q-outer schedule) that works on the Vortex tiles holding the
// first query row of `step.i` and the first key of `step.j`, in the corresponding phase. Algorithm 1's own
// phases map to their Q-outer counterparts (init → load_q of tile 0, update_stats → rowsum); a K/V load outside
// any Q tile maps to the load of that K/V tile for Q tile 0. Nothing when those rows lie past the Vortex N.
std::optional<std::int64_t> VortexStepFor(const Schedule& vortex, const AttentionProblem& main, const StepInfo& step);

}  // namespace flashviz::vortex
