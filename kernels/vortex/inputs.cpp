#include "kernels/vortex/inputs.h"

#include <cstddef>

namespace flashviz::vortex {

GlibcRand::GlibcRand(std::uint32_t seed) {
  // r_0 = seed, r_i = 16807·r_(i−1) mod (2^31 − 1) for i < 31 (Schrage's method keeps it in 32 bits),
  // r_i = r_(i−31) for 31 ≤ i < 34, then r_i = r_(i−31) + r_(i−3) mod 2^32; rand() returns r_(i+344) >> 1.
  std::array<std::int64_t, 34> r{};
  r[0] = seed == 0 ? 1 : seed;
  for (int i = 1; i < 31; ++i) {
    const std::int64_t hi = r[i - 1] / 127773, lo = r[i - 1] % 127773;
    std::int64_t word = 16807 * lo - 2836 * hi;
    if (word < 0) word += 2147483647;
    r[i] = word;
  }
  for (int i = 31; i < 34; ++i) r[i] = r[i - 31];
  for (int i = 3; i < 34; ++i) ring_[static_cast<std::size_t>(i % 31)] = static_cast<std::uint32_t>(r[i]);
  position_ = 34 % 31;
  for (int i = 34; i < 344; ++i) Next();  // glibc discards the first 310 outputs
}

std::int32_t GlibcRand::Next() {
  // ring_[position_] holds r_(i−31); r_(i−3) is three places back.
  const std::uint32_t older = ring_[static_cast<std::size_t>(position_)];
  const std::uint32_t recent = ring_[static_cast<std::size_t>((position_ + 31 - 3) % 31)];
  const std::uint32_t value = older + recent;  // mod 2^32
  ring_[static_cast<std::size_t>(position_)] = value;
  position_ = (position_ + 1) % 31;
  return static_cast<std::int32_t>(value >> 1);
}

AttentionInputs ReportInputs(int n, int d) {
  AttentionInputs in;
  in.n = n;
  in.d = d;
  const std::size_t size = static_cast<std::size_t>(n) * static_cast<std::size_t>(d);
  in.q.resize(size);
  in.k.resize(size);
  in.v.resize(size);
  GlibcRand rand(kReportSeed);
  const float rand_max = static_cast<float>(GlibcRand::kRandMax);  // the host divides by RAND_MAX as a float
  auto generate = [&] {
    const float unit = static_cast<float>(rand.Next()) / rand_max;
    const float scaled = 10.0f * unit;
    return scaled - 5.0f;
  };
  for (std::size_t i = 0; i < size; ++i) {
    in.q[i] = generate();
    in.k[i] = generate();
    in.v[i] = generate();
  }
  return in;
}

}  // namespace flashviz::vortex
