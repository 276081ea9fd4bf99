// `flashviz trace`: the stepper's state after every step as JSON Lines (the format is in README.md).
#pragma once

#include <cstdint>
#include <cstdio>
#include <string>
#include <vector>

#include "kernels/cpu/stepper.h"

namespace flashviz {

struct TraceOptions {
  std::uint64_t seed = 0;          // recorded in the config line
  std::string input;               // recorded in the config line when set
  int batch = 0;
};

// The first line: {"config": {...}} with the resolved problem.
std::string TraceConfigLine(const AttentionProblem& problem, const TraceOptions& options);
// One step's line (no trailing newline handling: ends with '\n').
std::string TraceStepLine(const StepView& view, const Ledger* standard_attention);

// Writes the whole trace to `out` and returns the final O (N × d, float64).
std::vector<double> WriteTrace(const Stepper& stepper, const TraceOptions& options, std::FILE* out);

// The totals alone, as printed by --summary.
std::string TraceSummary(const AttentionProblem& problem, const Ledger& flash, const Ledger& standard);

}  // namespace flashviz
