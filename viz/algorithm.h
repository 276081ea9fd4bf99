// The algorithm in lockstep with the stepper: the pseudocode of the current loop order (FlashAttention's
// Algorithm 1 for kv, as the paper and as the course assignment number it; FlashAttention-2's forward pass for q)
// with the lines each phase runs, and the CUDA kernel that runs the same tiles (flash1.cu for kv, flash2_row.cu
// for q; compiled into the binary) with the regions each phase runs, found by `// @phase NAME ...` markers in
// the .cu files. A marker starts a region that runs to the next marker (`// @phase end` closes one).
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "kernels/cpu/schedule.h"
#include "viz/model.h"

namespace flashviz {

enum class PseudocodeVersion { kPaper, kAssignment };  // kv only: the paper's 16 lines or HW4's 17

struct PseudocodeLine {
  std::string number;  // "10", or "" for a note line (the causal skip)
  std::string text;    // in the paper's notation, with ~ / ᵀ as the app writes them
  int indent = 0;      // loop depth
  std::vector<Phase> phases;  // the phases that run this line
  bool causal_only = false;   // shown only with the causal mask
  char loop_index = 0;        // 'i' or 'j' on a loop header: the view shows the index's current value
};

struct Pseudocode {
  std::string title;   // "Algorithm 1 (FlashAttention, Dao et al. 2022)"
  std::string source;  // where the text is from (docs/sources.md names it)
  std::vector<PseudocodeLine> lines;
};

const Pseudocode& PseudocodeFor(LoopOrder order, PseudocodeVersion version = PseudocodeVersion::kPaper);
// The problem's pass and order: FlashAttention-2's Algorithm 2 for the backward pass.
const Pseudocode& PseudocodeFor(const AttentionProblem& problem, PseudocodeVersion version = PseudocodeVersion::kPaper);

// The number of the first line that `phase` runs ("11"), or "" when none does.
std::string PseudocodeLineOf(const Pseudocode& code, Phase phase);

// One marked region of a kernel source: [first_line, last_line] (1-based, the marker line excluded).
struct SourceRegion {
  std::vector<Phase> phases;
  int first_line = 0, last_line = 0;
};

struct KernelSource {
  std::string file;   // "kernels/cuda/flash1.cu"
  std::string kernel; // the registry id: "flash1"
  std::vector<std::string> lines;
  std::vector<SourceRegion> regions;
  std::vector<int> marker_lines;  // 1-based lines holding `// @phase` markers (drawn dimmed)
};

// Parses a kernel source's markers; a marker naming no phase throws InputError naming the file and the line.
KernelSource ParseKernelSource(std::string_view file, std::string_view kernel, std::string_view text);
// The embedded kernel of the order: flash1 (kv) or flash2_row (q).
const KernelSource& KernelSourceFor(LoopOrder order);
// The problem's: flash2_bwd (kernels/cuda/backward) for the backward pass.
const KernelSource& KernelSourceFor(const AttentionProblem& problem);

// What the current step's line computes for query row `row` (global; the first row of the tile when it is not in
// the tile), with the model's numbers: "row 1: m~_ij = 1.43", "m_i = max(−∞, 2.69) = 2.69", bytes for the loads.
std::string AnnotateStep(const Model& model, int row);

// The next step after `from` (wrapping to the start) whose phase runs `line`; nothing when no step does (a line
// of the setup, or the causal note without the mask).
std::optional<std::int64_t> NextStepOfLine(const Schedule& schedule, const PseudocodeLine& line, std::int64_t from);

}  // namespace flashviz
