// The shape the kernel tests build their problems from: B·H heads of N × d with the default scale 1/√d.
#pragma once

#include <cmath>

#include "kernels/cuda/attention_types.h"

namespace flashviz::cuda {

inline AttentionShape MakeShape(int batch, int heads, int n, int d, bool causal = false) {
  return AttentionShape{batch, heads, n, d, 1.0f / std::sqrt(static_cast<float>(d)), causal};
}

}  // namespace flashviz::cuda
