#include <cmath>
#include <cstdint>

#include "app/interop/colormap_texel.h"
#include "app/interop/cuda_gl_texture.h"

namespace flashviz::interop {

std::vector<std::uint32_t> ColormapOnHost(const float* values, int rows, int cols, int width, int height,
                                          ColormapRange range, const ColorLut& lut) {
  std::vector<std::uint32_t> texels(static_cast<std::size_t>(width) * height);
  for (int y = 0; y < height; ++y)
    for (int x = 0; x < width; ++x)
      texels[static_cast<std::size_t>(y) * width + x] =
          TexelColor(values, rows, cols, width, height, x, y, range.lo, range.hi, range.masked, lut.data());
  return texels;
}

}  // namespace flashviz::interop
