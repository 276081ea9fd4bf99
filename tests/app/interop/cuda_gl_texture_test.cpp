// CUDA-GL interop: a texture written by the colormap kernel, through interop when the GL context is
// on the CUDA device and through the host otherwise, holds exactly the texels the host computes.
// Needs a CUDA device and a GL context, the app's offscreen one (EGL with no window system, else a hidden GLFW
// window): on the GPU machine EGL on the NVIDIA GPU (interop; scripts/gpu_check.sh), GLX on the NVIDIA GPU or on
// Mesa through Xvfb with --gl glfw's path (scripts/live_gpu_device_run.sh). Skipped where either is missing.
#include <epoxy/gl.h>
#include <cuda_runtime.h>
#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>
#include <memory>
#include <random>

#include "app/gui/gl_context.h"
#include "app/interop/cuda_gl_texture.h"

namespace flashviz::interop {
namespace {

ColorLut TestLut() {
  ColorLut lut{};
  for (int k = 0; k < 256; ++k)  // a ramp with every channel distinct, so an off-by-one index shows
    lut[k] = 0xFF000000u | static_cast<std::uint32_t>(k) | static_cast<std::uint32_t>(255 - k) << 8 |
             static_cast<std::uint32_t>((k * 7) & 255) << 16;
  return lut;
}

class CudaGlTextureTest : public ::testing::Test {
 protected:
  void SetUp() override {
    int devices = 0;
    if (cudaGetDeviceCount(&devices) != cudaSuccess || devices == 0) GTEST_SKIP() << "no CUDA device";
    // FLASHVIZ_TEST_GL=glfw|egl picks the context as --gl does (the device script's GLX runs take glfw).
    GlBackend backend = GlBackend::kAuto;
    if (const char* gl = std::getenv("FLASHVIZ_TEST_GL")) {
      ASSERT_TRUE(ParseGlBackend(gl, &backend)) << gl;
    }
    std::string error;
    context_ = CreateOffscreenContext(backend, &error);
    if (!context_) GTEST_SKIP() << "no OpenGL 3.3 context: " << error;
    renderer_ = context_->description();
  }

  // Draws `rows × cols` random values (a few NaN) into a width × height texture and compares every texel.
  void ExpectSameTexels(bool force_host_copy, int rows, int cols, int width, int height) {
    std::mt19937 rng(static_cast<unsigned>(rows * 31 + cols));
    std::uniform_real_distribution<float> u(-3.0f, 3.0f);
    std::vector<float> values(static_cast<std::size_t>(rows) * cols);
    for (float& v : values) v = u(rng);
    values[values.size() / 2] = NAN;
    values[values.size() / 3] = -INFINITY;  // a masked score: the masked colour
    float* device = nullptr;
    ASSERT_EQ(cudaMalloc(&device, values.size() * sizeof(float)), cudaSuccess);
    ASSERT_EQ(cudaMemcpy(device, values.data(), values.size() * sizeof(float), cudaMemcpyHostToDevice), cudaSuccess);
    const ColorLut lut = TestLut();
    const ColormapRange range{-2.5f, 2.5f};
    CudaGlTexture texture(width, height, force_host_copy);
    texture.Draw(device, rows, cols, range, lut);
    const auto expected = ColormapOnHost(values.data(), rows, cols, width, height, range, lut);
    const auto actual = texture.ReadBack();
    cudaFree(device);
    std::size_t differing = 0;
    for (std::size_t k = 0; k < expected.size(); ++k) differing += expected[k] != actual[k];
    EXPECT_EQ(differing, 0u) << "path " << (texture.path() == CudaGlTexture::Path::kInterop ? "interop" : "host copy")
                             << " on " << renderer_ << ", " << rows << "×" << cols << " → " << width << "×" << height;
    last_path_ = texture.path();
    last_reason_ = texture.host_copy_reason();
  }

  std::unique_ptr<GlContext> context_;
  std::string renderer_;
  CudaGlTexture::Path last_path_ = CudaGlTexture::Path::kHostCopy;
  std::string last_reason_;
};

TEST_F(CudaGlTextureTest, InteropOrFallbackGivesTheHostTexels) {
  ExpectSameTexels(false, 64, 64, 64, 64);      // one cell per texel
  ExpectSameTexels(false, 1000, 700, 250, 175);  // downsampled by max |value|
  ExpectSameTexels(false, 5, 3, 40, 30);         // upsampled
  std::printf("renderer %s: %s%s\n", renderer_.c_str(),
              last_path_ == CudaGlTexture::Path::kInterop ? "interop" : "host copy: ", last_reason_.c_str());
  // Where GL runs on an NVIDIA GPU, interop must be the path taken, not a silent fallback.
  if (renderer_.find("NVIDIA") != std::string::npos) {
    EXPECT_EQ(last_path_, CudaGlTexture::Path::kInterop);
  } else {
    EXPECT_EQ(last_path_, CudaGlTexture::Path::kHostCopy);
    EXPECT_FALSE(last_reason_.empty());
  }
}

TEST_F(CudaGlTextureTest, ForcedHostCopyGivesTheSameTexels) {
  ExpectSameTexels(true, 128, 96, 128, 96);
  EXPECT_EQ(last_path_, CudaGlTexture::Path::kHostCopy);
}

TEST(ColormapOnHost, PoolsByLargestMagnitudeAndMapsTheRange) {
  ColorLut lut{};
  for (int k = 0; k < 256; ++k) lut[k] = static_cast<std::uint32_t>(k);
  const float values[4] = {0.1f, -0.9f, 0.5f, 0.2f};  // 2 × 2 into one texel: −0.9 wins
  const auto one = ColormapOnHost(values, 2, 2, 1, 1, {-1.0f, 1.0f}, lut);
  EXPECT_EQ(one[0], static_cast<std::uint32_t>(std::lround((-0.9f + 1.0f) / 2.0f * 255.0f)));
  const auto all = ColormapOnHost(values, 2, 2, 2, 2, {-1.0f, 1.0f}, lut);
  EXPECT_EQ(all[2], 191u);  // 0.5 ↦ 0.75·255 + 0.5 = 191.75 → 191
  const float nan[1] = {NAN};
  EXPECT_EQ(ColormapOnHost(nan, 1, 1, 1, 1, {-1.0f, 1.0f}, lut)[0], 0u);
}

}  // namespace
}  // namespace flashviz::interop
