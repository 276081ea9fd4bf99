// `flashviz trace`: the stepper's state after every step as JSON Lines (the format is in README.md).
#pragma once

#include <cstdint>
#include <cstdio>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "kernels/cpu/stepper.h"

namespace flashviz {

struct TraceOptions {
  std::uint64_t seed = 0;          // recorded in the config line
  std::string input;               // recorded in the config line when set
  int batch = 0;
};

// `[1.5,null,...]`: the shortest round-trip decimals, non-finite values (−∞, NaN) written as null.
std::string JsonNumberArray(const std::vector<double>& values);

// The first line: {"config": {...}} with the resolved problem.
std::string TraceConfigLine(const AttentionProblem& problem, const TraceOptions& options,
                            const std::string& extra_config = {});
// Extra fields for one step's line, each written as `,"key":value` (e.g. the GPU's values beside the model's).
using TraceExtraFields = std::function<std::string(const StepView& view)>;

// One step's line, ending with '\n'.
std::string TraceStepLine(const StepView& view, const Ledger* standard_attention, const std::string& extra = {});

// Receives each line of the trace (ending with '\n') with the step it describes (−1 for the config line).
using TraceLineSink = std::function<void(std::string_view line, std::int64_t step)>;

// Hands the whole trace to `out` line by line and returns the final O (N × d, float64). `extra_config` is
// appended to the config object (`,"key":value...`), `extra` is asked for every step.
std::vector<double> WriteTrace(const Stepper& stepper, const TraceOptions& options, const TraceLineSink& out,
                               const std::string& extra_config = {}, const TraceExtraFields& extra = {});

// The totals alone, as printed by --summary.
std::string TraceSummary(const AttentionProblem& problem, const Ledger& flash, const Ledger& standard);

}  // namespace flashviz
