// The narration line: one or two sentences saying what the current phase does, with this step's tile indices,
// sizes and bytes, in the paper's notation. Built from the model only.
#pragma once

#include <string>

#include "viz/model.h"

namespace flashviz {

std::string Narrate(const Model& model);

}  // namespace flashviz
