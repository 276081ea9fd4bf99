// OpenGL 3.3 core contexts for the GUI: a GLFW window for the interactive program, and for headless frames
// (--screenshot, tests, benchmarks without a display) an EGL context with no window system at all — the
// device platform (an NVIDIA GPU, or Mesa's software device), Mesa's surfaceless platform, or the default
// display — falling back to a hidden GLFW window. Frames rendered headless go into a Framebuffer.
#pragma once

#include <memory>
#include <string>

#include "viz/texture.h"

struct GLFWwindow;

namespace flashviz {

enum class GlBackend { kAuto, kEgl, kGlfw };
bool ParseGlBackend(const std::string& text, GlBackend* backend);  // "auto", "egl", "glfw"

class GlContext {
 public:
  virtual ~GlContext() = default;
  // The GLFW window, or null for an EGL context.
  virtual GLFWwindow* window() const = 0;
  // "EGL device platform: llvmpipe (LLVM 15.0.6, 256 bits), 4.5 (Core Profile) Mesa 22.3.6"
  virtual std::string description() const = 0;
};

// A GLFW window with a 3.3 core context, current on this thread. Null with a one-line reason in `error`.
std::unique_ptr<GlContext> CreateWindowContext(int width, int height, const char* title, bool visible,
                                               std::string* error);
// An offscreen context for `preference` (kAuto: EGL, then a hidden GLFW window). Null with the reasons of
// every attempt in `error`.
std::unique_ptr<GlContext> CreateOffscreenContext(GlBackend preference, std::string* error);

// A width × height RGBA8 framebuffer object to render into; Read() returns its pixels top row first.
class Framebuffer {
 public:
  Framebuffer(int width, int height);
  ~Framebuffer();
  Framebuffer(const Framebuffer&) = delete;
  Framebuffer& operator=(const Framebuffer&) = delete;
  bool complete() const { return complete_; }
  void Bind() const;
  RgbaImage Read() const;

 private:
  int width_, height_;
  unsigned int fbo_ = 0, color_ = 0;
  bool complete_ = false;
};

// The window's back buffer after drawing (before the swap), top row first: the Export dialog's PNG.
RgbaImage ReadWindowPixels(int width, int height);

// Textures for the heatmaps in GL (nearest filtering).
class GlTextureBackend final : public TextureBackend {
 public:
  ~GlTextureBackend() override;
  ImTextureID Create(const RgbaImage& image) override;
  void Update(ImTextureID id, const RgbaImage& image) override;
  void Destroy(ImTextureID id) override;
};

}  // namespace flashviz
