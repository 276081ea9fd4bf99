#include "kernels/vortex/fp16.h"

#include <algorithm>
#include <cmath>

namespace flashviz::vortex {

float RoundToFp16(float x) {
  if (std::isnan(x) || std::isinf(x) || x == 0.0f) return x;
  const double value = x;
  // The spacing of fp16 values around |x|: 2^(e − 10) for a normal number in [2^e, 2^(e+1)), and 2^-24 below
  // the smallest normal (the subnormals share the exponent of 2^-14).
  int exponent = 0;
  std::frexp(value, &exponent);  // |x| = f·2^exponent, f in [0.5, 1): the leading bit is 2^(exponent − 1)
  const int leading = std::max(exponent - 1, -14);
  const double quantum = std::ldexp(1.0, leading - 10);
  // x / quantum is exact (a power-of-two scaling of a float); nearbyint rounds half to even in the default mode.
  const double steps = std::nearbyint(value / quantum);
  const double rounded = steps * quantum;  // exact: |steps| ≤ 2^11
  if (std::fabs(rounded) > kFp16Max) return std::copysign(INFINITY, x);
  return static_cast<float>(rounded);
}

}  // namespace flashviz::vortex
