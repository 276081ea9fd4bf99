#include "kernels/common/random.h"

namespace flashviz {

void FillUniform(std::span<float> values, std::uint64_t seed, float lo, float hi) {
  SplitMix64 rng(seed);
  for (float& value : values) value = rng.UniformFloat(lo, hi);
}

}  // namespace flashviz
