// `flashviz trace --ring P`: the ring stepper's state after every step as JSON Lines (the format is in README.md,
// "Ring attention"), and its --summary.
#pragma once

#include <vector>

#include "app/io/trace_writer.h"
#include "kernels/cpu/ring.h"

namespace flashviz {

// {"config": {...}}: the resolved problem, the chunks and which device holds which, the cost model's rates.
std::string RingTraceConfigLine(const RingProblem& problem, std::uint64_t seed);
// One step's line: the running m and ℓ of every row (the sequence's order), the block's m̃ on attend, α and β on
// merge, the totals, and per device its held K/V, its HBM and interconnect bytes and this ring step's work.
std::string RingTraceStepLine(const RingProblem& problem, const RingState& state);
// Hands the whole trace to `out` line by line; returns O (N × d) when the stepper has inputs, and the state after the
// last step in `final_state` when given.
std::vector<double> WriteRingTrace(const RingStepper& stepper, std::uint64_t seed, const TraceLineSink& out,
                                   RingState* final_state = nullptr);
// Per device: HBM read/written, interconnect sent/received, work; the totals against one device doing it all; the
// cost model's timeline.
std::string RingTraceSummary(const RingStepper& stepper, const RingState& final_state);

}  // namespace flashviz
