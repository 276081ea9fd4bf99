// One texel of the colormap, shared by the CUDA kernel and the host check so both compute it with the same
// operations in the same order (the build keeps the compilers from contracting them into FMAs).
#pragma once

#include <cstdint>

#ifdef __CUDACC__
#define FLASHVIZ_HOST_DEVICE __host__ __device__
#else
#define FLASHVIZ_HOST_DEVICE
#endif

namespace flashviz::interop {

// The value of largest magnitude among the cells texel (x, y) covers (a texel covers at least one cell). A
// masked score (−∞) shows only where every covered cell is masked; an unwritten value (NaN) always shows.
FLASHVIZ_HOST_DEVICE inline float PooledValue(const float* values, int rows, int cols, int width, int height, int x,
                                              int y) {
  const long long r0 = static_cast<long long>(y) * rows / height;
  long long r1 = static_cast<long long>(y + 1) * rows / height;
  const long long c0 = static_cast<long long>(x) * cols / width;
  long long c1 = static_cast<long long>(x + 1) * cols / width;
  if (r1 <= r0) r1 = r0 + 1;
  if (c1 <= c0) c1 = c0 + 1;
  float chosen = 0.0f, chosen_magnitude = -1.0f;
  for (long long r = r0; r < r1; ++r)
    for (long long c = c0; c < c1; ++c) {
      const float v = values[r * cols + c];
      if (v != v) return v;
      if (v < -3.0e38f) continue;
      const float magnitude = v < 0 ? -v : v;
      if (magnitude > chosen_magnitude) {
        chosen = v;
        chosen_magnitude = magnitude;
      }
    }
  return chosen_magnitude < 0.0f ? values[r0 * cols + c0] : chosen;
}

FLASHVIZ_HOST_DEVICE inline std::uint32_t TexelColor(const float* values, int rows, int cols, int width, int height,
                                                     int x, int y, float lo, float hi, std::uint32_t masked,
                                                     const std::uint32_t* lut) {
  const float v = PooledValue(values, rows, cols, width, height, x, y);
  if (v != v) return 0;  // NaN: transparent black
  if (v < -3.0e38f) return masked;  // −∞: a masked score
  const float t = (v - lo) / (hi - lo);
  const float scaled = t * 255.0f + 0.5f;
  const int index = scaled <= 0.0f ? 0 : (scaled >= 255.0f ? 255 : static_cast<int>(scaled));
  return lut[index];
}

}  // namespace flashviz::interop
