// The narration line: one or two sentences saying what the current phase does, with this step's tile indices,
// sizes and bytes, in the paper's notation. Built from the model only.
#pragma once

#include <string>

#include "viz/model.h"

namespace flashviz {

std::string Narrate(const Model& model);

// What the current tile iteration does to the rows' maxima and so to α, in one sentence ("" until the new
// maxima are known): the statistics header and the narration both say it in these words, from CountMaxChanges.
std::string RescaleSummary(const StepState& state);

}  // namespace flashviz
