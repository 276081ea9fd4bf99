// Kernel output drawn straight from device memory into an OpenGL texture (CUDA-GL interop), or through a host
// copy when the GL context is not on the CUDA device (Mesa llvmpipe, GL on another GPU): then
// cudaGraphicsGLRegisterImage fails and the texture says why it is on the slow path. Both paths colour with
// the same 256-entry lookup table, so they give the same pixels.
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <vector>

namespace flashviz::interop {

// RGBA8 colours (R in the low byte, as GL_RGBA / GL_UNSIGNED_BYTE reads them) for values from lo to hi.
using ColorLut = std::array<std::uint32_t, 256>;

// How `rows × cols` values map onto a `width × height` texture: each texel shows the value of largest
// magnitude among the cells it covers (so a single large score never vanishes when downsampling).
struct ColormapRange {
  float lo = -1.0f, hi = 1.0f;  // lo ↦ lut[0], hi ↦ lut[255]; NaN ↦ transparent black
  std::uint32_t masked = 0xFF808080u;  // −∞ (a causally masked score)
};

// The colour of one texel, computed on the host exactly as the kernel does (the checks compare against it).
std::vector<std::uint32_t> ColormapOnHost(const float* values, int rows, int cols, int width, int height,
                                          ColormapRange range, const ColorLut& lut);

class CudaGlTexture {
 public:
  enum class Path { kInterop, kHostCopy };

  // Creates a width × height RGBA8 texture in the current GL context and registers it with CUDA, unless
  // `force_host_copy` (for tests and for the UI's "compare paths" switch). Throws InputError on GL or CUDA
  // failures other than a refused registration.
  CudaGlTexture(int width, int height, bool force_host_copy = false);
  ~CudaGlTexture();
  CudaGlTexture(const CudaGlTexture&) = delete;
  CudaGlTexture& operator=(const CudaGlTexture&) = delete;

  unsigned gl_texture() const { return texture_; }
  int width() const { return width_; }
  int height() const { return height_; }
  Path path() const { return path_; }
  // Why the host-copy path is used ("" on the interop path), e.g. the CUDA error text of the registration.
  const std::string& host_copy_reason() const { return host_copy_reason_; }

  // Colours `rows × cols` device floats (row-major) into the texture. Synchronous; returns the milliseconds the
  // GPU side took (colormap kernel, and the copy to the host on that path).
  float Draw(const float* device_values, int rows, int cols, ColormapRange range, const ColorLut& lut);

  // The texture's texels as GL holds them (glGetTexImage), for checks.
  std::vector<std::uint32_t> ReadBack() const;

 private:
  int width_, height_;
  unsigned texture_ = 0;
  Path path_ = Path::kHostCopy;
  std::string host_copy_reason_;
  void* resource_ = nullptr;        // cudaGraphicsResource_t on the interop path
  std::uint32_t* staging_ = nullptr;  // device texels on the host-copy path
  void* lut_device_ = nullptr;
};

}  // namespace flashviz::interop
