// `flashviz trace`: the stepper's state after every step as JSON Lines (the format is in README.md).
#pragma once

#include <cstdint>
#include <functional>
#include <nlohmann/json.hpp>
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

// The trace is built with nlohmann-json like every JSON the product reads or writes: numbers are the shortest
// decimals that read back as the same double, and non-finite values (−∞ before any key is seen, NaN) are null.
using Json = nlohmann::ordered_json;  // keys in the order written: step, phase, i, j, ...

// A JSON array of numbers, non-finite values as null.
Json JsonNumbers(const std::vector<double>& values);

// The first line: {"config": {...}} with the resolved problem and the fields of `extra_config` (an object).
std::string TraceConfigLine(const AttentionProblem& problem, const TraceOptions& options,
                            const Json& extra_config = Json::object());
// Extra fields for one step's line (an object, or null for none): e.g. the GPU's values beside the model's.
using TraceExtraFields = std::function<Json(const StepView& view)>;

// One step's line, ending with '\n'. The backward pass's lines carry D_i on delta steps instead of m, ℓ; its done
// line also the forward pass's totals (flash in the q order, and standard attention's).
std::string TraceStepLine(const StepView& view, const Ledger* standard_attention, const Json& extra = nullptr,
                          bool backward = false, const Ledger* forward = nullptr,
                          const Ledger* standard_forward = nullptr);

// Receives each line of the trace (ending with '\n') with the step it describes (−1 for the config line).
using TraceLineSink = std::function<void(std::string_view line, std::int64_t step)>;

// Hands the whole trace to `out` line by line and returns the final O (N × d, float64), or for the backward pass
// dQ, dK, dV (3 · N × d). `extra_config` joins
// the config object, `extra` is asked for every step.
std::vector<double> WriteTrace(const Stepper& stepper, const TraceOptions& options, const TraceLineSink& out,
                               const Json& extra_config = Json::object(), const TraceExtraFields& extra = {});

// The totals alone, as printed by --summary. `standard` is standard attention's pass of the same kind; with
// `forward` (the backward pass) the forward pass's totals and the forward + backward sums follow.
std::string TraceSummary(const AttentionProblem& problem, const Ledger& flash, const Ledger& standard,
                         const Ledger* forward = nullptr);

}  // namespace flashviz
