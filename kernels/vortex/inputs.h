// The report's inputs: its host program calls srand(50) and fills Q, K, V (row-major N×d, interleaved element by
// element) with 10·(float(rand())/RAND_MAX) − 5, uniform in [−5, 5]. glibc's rand() is reproduced here (the
// additive feedback generator of degree 31 behind srand/rand) so the model's numbers are the report's numbers
// on any platform.
#pragma once

#include <array>
#include <cstdint>

#include "kernels/cpu/stepper.h"

namespace flashviz::vortex {

class GlibcRand {
 public:
  static constexpr std::int32_t kRandMax = 2147483647;
  explicit GlibcRand(std::uint32_t seed);
  std::int32_t Next();  // the next value of rand(), in [0, RAND_MAX]

 private:
  std::array<std::uint32_t, 31> ring_{};  // the last 31 values of the feedback sequence
  int position_ = 0;                      // the index i of the next value, mod 31
};

inline constexpr std::uint32_t kReportSeed = 50;

// Q, K, V as the report's host program generates them.
AttentionInputs ReportInputs(int n, int d);

}  // namespace flashviz::vortex
