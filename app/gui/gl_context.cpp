// [SECTION] GLFW windows
// [SECTION] EGL offscreen contexts (device platform, surfaceless, default display)
// [SECTION] framebuffer and textures
#include "app/gui/gl_context.h"

#include <epoxy/egl.h>
#include <epoxy/gl.h>
// GLFW after epoxy: epoxy provides the GL declarations, GLFW must not include its own.
#define GLFW_INCLUDE_NONE
#include <GLFW/glfw3.h>

#include <cstdint>
#include <cstdio>
#include <vector>

#include "kernels/common/format.h"

namespace flashviz {
namespace {

std::string GlDescription(const char* prefix) {
  const auto* renderer = reinterpret_cast<const char*>(glGetString(GL_RENDERER));
  const auto* version = reinterpret_cast<const char*>(glGetString(GL_VERSION));
  return Sprintf("%s: %s, OpenGL %s", prefix, renderer ? renderer : "?", version ? version : "?");
}

// ---------------------------------------------------------------------------------------------------------
// [SECTION] GLFW windows
// ---------------------------------------------------------------------------------------------------------

std::string g_glfw_error;
void OnGlfwError(int, const char* description) { g_glfw_error = description ? description : "unknown"; }

class GlfwContext final : public GlContext {
 public:
  explicit GlfwContext(GLFWwindow* window, bool visible) : window_(window), visible_(visible) {}
  // GLFW stays initialized (no glfwTerminate), for the reason EGL displays stay initialized below: closing the
  // X connection unloads the GL driver, whose process-lifetime allocations LeakSanitizer then cannot name.
  // The window goes; a later glfwInit is a no-op.
  ~GlfwContext() override { glfwDestroyWindow(window_); }
  GLFWwindow* window() const override { return window_; }
  std::string description() const override {
    return GlDescription(visible_ ? "GLFW window" : "hidden GLFW window");
  }

 private:
  GLFWwindow* window_;
  bool visible_;
};

// ---------------------------------------------------------------------------------------------------------
// [SECTION] EGL offscreen contexts
// ---------------------------------------------------------------------------------------------------------

class EglContext final : public GlContext {
 public:
  EglContext(EGLDisplay display, EGLContext context, EGLSurface surface, std::string platform)
      : display_(display), context_(context), surface_(surface), platform_(std::move(platform)) {}
  // The display stays initialized (no eglTerminate): EGL displays are per process, a later context reuses it,
  // and terminating it unloads the driver, whose process-lifetime allocations LeakSanitizer then cannot name.
  ~EglContext() override {
    eglMakeCurrent(display_, EGL_NO_SURFACE, EGL_NO_SURFACE, EGL_NO_CONTEXT);
    if (surface_ != EGL_NO_SURFACE) eglDestroySurface(display_, surface_);
    eglDestroyContext(display_, context_);
    eglReleaseThread();
  }
  GLFWwindow* window() const override { return nullptr; }
  std::string description() const override { return GlDescription(("EGL " + platform_).c_str()); }

 private:
  EGLDisplay display_;
  EGLContext context_;
  EGLSurface surface_;
  std::string platform_;
};

bool HasClientExtension(const char* name) {
  const char* extensions = eglQueryString(EGL_NO_DISPLAY, EGL_EXTENSIONS);
  if (!extensions) return false;
  const std::string list = std::string(" ") + extensions + " ";
  return list.find(std::string(" ") + name + " ") != std::string::npos;
}

// Makes a 3.3 core context current on an initialized display; false with a reason.
std::unique_ptr<GlContext> ContextOn(EGLDisplay display, const std::string& platform, std::string* why) {
  if (!eglBindAPI(EGL_OPENGL_API)) {
    *why = platform + ": no desktop OpenGL API";
    return nullptr;
  }
  const bool surfaceless = epoxy_has_egl_extension(display, "EGL_KHR_surfaceless_context");
  const EGLint pbuffer_config[] = {EGL_SURFACE_TYPE,
                                   EGL_PBUFFER_BIT,
                                   EGL_RENDERABLE_TYPE,
                                   EGL_OPENGL_BIT,
                                   EGL_RED_SIZE,
                                   8,
                                   EGL_GREEN_SIZE,
                                   8,
                                   EGL_BLUE_SIZE,
                                   8,
                                   EGL_ALPHA_SIZE,
                                   8,
                                   EGL_NONE};
  const EGLint any_config[] = {EGL_SURFACE_TYPE, 0, EGL_RENDERABLE_TYPE, EGL_OPENGL_BIT, EGL_NONE};
  EGLConfig config = nullptr;
  EGLint count = 0;
  bool pbuffer = eglChooseConfig(display, pbuffer_config, &config, 1, &count) && count > 0;
  if (!pbuffer && !(surfaceless && eglChooseConfig(display, any_config, &config, 1, &count) && count > 0)) {
    *why = platform + ": no OpenGL config";
    return nullptr;
  }
  const EGLint context_attributes[] = {EGL_CONTEXT_MAJOR_VERSION, 3, EGL_CONTEXT_MINOR_VERSION, 3,
                                       EGL_CONTEXT_OPENGL_PROFILE_MASK, EGL_CONTEXT_OPENGL_CORE_PROFILE_BIT, EGL_NONE};
  EGLContext context = eglCreateContext(display, config, EGL_NO_CONTEXT, context_attributes);
  if (context == EGL_NO_CONTEXT) {
    *why = Sprintf("%s: cannot create an OpenGL 3.3 core context (EGL error 0x%x)", platform.c_str(), eglGetError());
    return nullptr;
  }
  EGLSurface surface = EGL_NO_SURFACE;
  if (pbuffer) {
    const EGLint surface_attributes[] = {EGL_WIDTH, 16, EGL_HEIGHT, 16, EGL_NONE};
    surface = eglCreatePbufferSurface(display, config, surface_attributes);
  }
  if (surface == EGL_NO_SURFACE && !surfaceless) {
    eglDestroyContext(display, context);
    *why = platform + ": no pbuffer surface and no surfaceless contexts";
    return nullptr;
  }
  if (!eglMakeCurrent(display, surface, surface, context)) {
    if (surface != EGL_NO_SURFACE) eglDestroySurface(display, surface);
    eglDestroyContext(display, context);
    *why = Sprintf("%s: cannot make the context current (EGL error 0x%x)", platform.c_str(), eglGetError());
    return nullptr;
  }
  return std::make_unique<EglContext>(display, context, surface, platform);
}

std::unique_ptr<GlContext> TryDisplay(EGLDisplay display, const std::string& platform, std::string* why) {
  if (display == EGL_NO_DISPLAY) {
    *why = platform + ": no display";
    return nullptr;
  }
  EGLint major = 0, minor = 0;
  if (!eglInitialize(display, &major, &minor)) {
    *why = Sprintf("%s: eglInitialize failed (0x%x)", platform.c_str(), eglGetError());
    return nullptr;
  }
  auto context = ContextOn(display, platform, why);
  if (!context) eglTerminate(display);
  return context;
}

std::unique_ptr<GlContext> CreateEglContext(std::string* error) {
  std::vector<std::string> attempts;
  std::string why;
  // epoxy loads libEGL lazily; without it every call below would abort, so ask it first.
  if (!epoxy_has_egl()) {
    *error = "EGL: libEGL.so.1 not found";
    return nullptr;
  }
  if (HasClientExtension("EGL_EXT_device_enumeration") && HasClientExtension("EGL_EXT_platform_device")) {
    EGLDeviceEXT devices[16];
    EGLint count = 0;
    if (eglQueryDevicesEXT(16, devices, &count))
      for (EGLint k = 0; k < count; ++k) {
        const EGLDisplay display = eglGetPlatformDisplayEXT(EGL_PLATFORM_DEVICE_EXT, devices[k], nullptr);
        if (auto context = TryDisplay(display, Sprintf("device platform (device %d of %d)", k, count), &why))
          return context;
        attempts.push_back(why);
      }
  }
  if (HasClientExtension("EGL_MESA_platform_surfaceless")) {
    const EGLDisplay display = eglGetPlatformDisplayEXT(EGL_PLATFORM_SURFACELESS_MESA, EGL_DEFAULT_DISPLAY, nullptr);
    if (auto context = TryDisplay(display, "surfaceless platform", &why)) return context;
    attempts.push_back(why);
  }
  if (auto context = TryDisplay(eglGetDisplay(EGL_DEFAULT_DISPLAY), "default display", &why)) return context;
  attempts.push_back(why);
  *error = "EGL: ";
  for (std::size_t k = 0; k < attempts.size(); ++k) *error += (k ? "; " : "") + attempts[k];
  return nullptr;
}

}  // namespace

bool ParseGlBackend(const std::string& text, GlBackend* backend) {
  if (text == "auto") *backend = GlBackend::kAuto;
  else if (text == "egl") *backend = GlBackend::kEgl;
  else if (text == "glfw") *backend = GlBackend::kGlfw;
  else return false;
  return true;
}

std::unique_ptr<GlContext> CreateWindowContext(int width, int height, const char* title, bool visible,
                                               std::string* error) {
  glfwSetErrorCallback(OnGlfwError);
  g_glfw_error.clear();
  if (!glfwInit()) {
    *error = "GLFW: " + (g_glfw_error.empty() ? std::string("cannot initialize") : g_glfw_error);
    return nullptr;
  }
  glfwWindowHint(GLFW_CONTEXT_VERSION_MAJOR, 3);
  glfwWindowHint(GLFW_CONTEXT_VERSION_MINOR, 3);
  glfwWindowHint(GLFW_OPENGL_PROFILE, GLFW_OPENGL_CORE_PROFILE);
  glfwWindowHint(GLFW_OPENGL_FORWARD_COMPAT, GLFW_TRUE);
  glfwWindowHint(GLFW_VISIBLE, visible ? GLFW_TRUE : GLFW_FALSE);
  GLFWwindow* window = glfwCreateWindow(width, height, title, nullptr, nullptr);
  if (!window) {
    *error = "GLFW: " + (g_glfw_error.empty() ? std::string("cannot create a window") : g_glfw_error);
    return nullptr;
  }
  glfwMakeContextCurrent(window);
  return std::make_unique<GlfwContext>(window, visible);
}

std::unique_ptr<GlContext> CreateOffscreenContext(GlBackend preference, std::string* error) {
  std::string egl_error, glfw_error;
  if (preference != GlBackend::kGlfw) {
    if (auto context = CreateEglContext(&egl_error)) return context;
    if (preference == GlBackend::kEgl) {
      *error = egl_error;
      return nullptr;
    }
  }
  if (auto context = CreateWindowContext(64, 64, "flashviz (offscreen)", false, &glfw_error)) return context;
  *error = (egl_error.empty() ? "" : egl_error + "; ") + glfw_error;
  return nullptr;
}

// ---------------------------------------------------------------------------------------------------------
// [SECTION] framebuffer and textures
// ---------------------------------------------------------------------------------------------------------

Framebuffer::Framebuffer(int width, int height) : width_(width), height_(height) {
  glGenFramebuffers(1, &fbo_);
  glGenRenderbuffers(1, &color_);
  glBindRenderbuffer(GL_RENDERBUFFER, color_);
  glRenderbufferStorage(GL_RENDERBUFFER, GL_RGBA8, width, height);
  glBindFramebuffer(GL_FRAMEBUFFER, fbo_);
  glFramebufferRenderbuffer(GL_FRAMEBUFFER, GL_COLOR_ATTACHMENT0, GL_RENDERBUFFER, color_);
  complete_ = glCheckFramebufferStatus(GL_FRAMEBUFFER) == GL_FRAMEBUFFER_COMPLETE;
}

Framebuffer::~Framebuffer() {
  glBindFramebuffer(GL_FRAMEBUFFER, 0);
  glDeleteFramebuffers(1, &fbo_);
  glDeleteRenderbuffers(1, &color_);
}

void Framebuffer::Bind() const { glBindFramebuffer(GL_FRAMEBUFFER, fbo_); }

namespace {

// The bound read framebuffer's pixels, top row first (GL's first row is the bottom one), opaque.
RgbaImage ReadBound(int width, int height) {
  RgbaImage image;
  image.Resize(width, height);
  std::vector<ImU32> rows(image.pixels.size());
  glPixelStorei(GL_PACK_ALIGNMENT, 4);
  glReadPixels(0, 0, width, height, GL_RGBA, GL_UNSIGNED_BYTE, rows.data());
  for (int y = 0; y < height; ++y)
    std::copy_n(rows.begin() + static_cast<std::ptrdiff_t>(y) * width, width,
                image.pixels.begin() + static_cast<std::ptrdiff_t>(height - 1 - y) * width);
  return image;
}

}  // namespace

RgbaImage Framebuffer::Read() const {
  glBindFramebuffer(GL_READ_FRAMEBUFFER, fbo_);
  return ReadBound(width_, height_);
}

RgbaImage ReadWindowPixels(int width, int height) {
  glBindFramebuffer(GL_READ_FRAMEBUFFER, 0);
  glReadBuffer(GL_BACK);
  RgbaImage image = ReadBound(width, height);
  for (ImU32& pixel : image.pixels) pixel |= IM_COL32_A_MASK;  // a window's alpha is not the picture's
  return image;
}

GlTextureBackend::~GlTextureBackend() { ReleaseCache(); }

ImTextureID GlTextureBackend::Create(const RgbaImage& image) {
  GLuint id = 0;
  glGenTextures(1, &id);
  glBindTexture(GL_TEXTURE_2D, id);
  glTexParameteri(GL_TEXTURE_2D, GL_TEXTURE_MIN_FILTER, GL_NEAREST);
  glTexParameteri(GL_TEXTURE_2D, GL_TEXTURE_MAG_FILTER, GL_NEAREST);
  glTexParameteri(GL_TEXTURE_2D, GL_TEXTURE_WRAP_S, GL_CLAMP_TO_EDGE);
  glTexParameteri(GL_TEXTURE_2D, GL_TEXTURE_WRAP_T, GL_CLAMP_TO_EDGE);
  glPixelStorei(GL_UNPACK_ROW_LENGTH, 0);
  glTexImage2D(GL_TEXTURE_2D, 0, GL_RGBA8, image.width, image.height, 0, GL_RGBA, GL_UNSIGNED_BYTE,
               image.pixels.data());
  return reinterpret_cast<ImTextureID>(static_cast<std::uintptr_t>(id));
}

void GlTextureBackend::Update(ImTextureID id, const RgbaImage& image) {
  glBindTexture(GL_TEXTURE_2D, static_cast<GLuint>(reinterpret_cast<std::uintptr_t>(id)));
  glPixelStorei(GL_UNPACK_ROW_LENGTH, 0);
  glTexImage2D(GL_TEXTURE_2D, 0, GL_RGBA8, image.width, image.height, 0, GL_RGBA, GL_UNSIGNED_BYTE,
               image.pixels.data());
}

void GlTextureBackend::Destroy(ImTextureID id) {
  const auto name = static_cast<GLuint>(reinterpret_cast<std::uintptr_t>(id));
  glDeleteTextures(1, &name);
}

}  // namespace flashviz
