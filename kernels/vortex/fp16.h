// IEEE binary16 rounding, written out so the TCU model does not depend on compiler support for _Float16:
// round to nearest, ties to even, at 11 significant bits, with fp16's range (largest finite 65504, smallest
// subnormal 2^-24; anything that rounds past 65504 becomes ±inf).
#pragma once

namespace flashviz::vortex {

inline constexpr float kFp16Max = 65504.0f;
inline constexpr float kFp16MinNormal = 6.103515625e-05f;        // 2^-14
inline constexpr float kFp16MinSubnormal = 5.9604644775390625e-08f;  // 2^-24

// The fp16 value nearest to `x`, returned as a float (every fp16 value is exactly a float). NaN stays NaN.
float RoundToFp16(float x);

}  // namespace flashviz::vortex
