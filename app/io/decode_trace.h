// `flashviz trace --decode`: the decode stepper's state after every step as JSON Lines (the format is in README.md,
// "Decoding"), and its --summary.
#pragma once

#include <vector>

#include "app/io/trace_writer.h"
#include "kernels/cpu/decode.h"

namespace flashviz {

// {"config": {...}}: the resolved shape, the split count and where it came from, the pages and the block table.
std::string DecodeTraceConfigLine(const DecodeProblem& problem, std::uint64_t seed);
// One step's line; the done line also carries decode_naive's totals (`naive`).
std::string DecodeTraceStepLine(const DecodeProblem& problem, const DecodeState& state, const Ledger* naive);
// Hands the whole trace to `out` line by line; returns O (H × R × d) when the stepper has inputs.
std::vector<double> WriteDecodeTrace(const DecodeStepper& stepper, std::uint64_t seed, const TraceLineSink& out);
// The totals per tensor, flash-decoding against decode_naive, the KV cache reads and the partials' share.
std::string DecodeTraceSummary(const DecodeProblem& problem, const Ledger& flash);

}  // namespace flashviz
