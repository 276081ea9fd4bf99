// A portable, seeded random source: the same seed gives the same inputs on every machine and compiler
// (std::uniform_real_distribution does not promise that), so traces and test cases are reproducible.
#pragma once

#include <cstdint>
#include <span>

namespace flashviz {

class SplitMix64 {
 public:
  explicit SplitMix64(std::uint64_t seed) : state_(seed) {}
  std::uint64_t Next() {
    std::uint64_t z = (state_ += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
  }
  // Uniform in [lo, hi], from the top 24 bits so every value is exactly representable as a float.
  float UniformFloat(float lo, float hi) {
    const float unit = static_cast<float>(Next() >> 40) * (1.0f / 16777215.0f);
    return lo + (hi - lo) * unit;
  }

 private:
  std::uint64_t state_;
};

// Fills `values` uniformly in [lo, hi]; the stream for a given seed never changes.
void FillUniform(std::span<float> values, std::uint64_t seed, float lo, float hi);

}  // namespace flashviz
