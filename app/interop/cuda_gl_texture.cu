// [SECTION] kernels: the colormap into a surface (interop) or a staging buffer (host copy)
// [SECTION] CudaGlTexture: GL texture, CUDA registration, Draw, ReadBack
#include "app/interop/cuda_gl_texture.h"

// epoxy/gl.h must come before anything that includes GL/gl.h (cuda_gl_interop.h does).
#include <epoxy/gl.h>
// (separated so include sorting keeps the order)
#include <cuda_gl_interop.h>
#include <cuda_runtime.h>

#include "app/interop/colormap_texel.h"
#include "kernels/common/format.h"
#include "kernels/cpu/problem.h"

namespace flashviz::interop {
namespace {

// ---------------------------------------------------------------------------------------------------------
// [SECTION] kernels
// ---------------------------------------------------------------------------------------------------------

__global__ void ColormapIntoSurface(cudaSurfaceObject_t surface, const float* values, int rows, int cols, int width,
                                    int height, float lo, float hi, std::uint32_t masked, const std::uint32_t* lut) {
  const int x = blockIdx.x * blockDim.x + threadIdx.x, y = blockIdx.y * blockDim.y + threadIdx.y;
  if (x >= width || y >= height) return;
  surf2Dwrite(TexelColor(values, rows, cols, width, height, x, y, lo, hi, masked, lut), surface, x * 4, y);
}

__global__ void ColormapIntoBuffer(std::uint32_t* texels, const float* values, int rows, int cols, int width,
                                   int height, float lo, float hi, std::uint32_t masked, const std::uint32_t* lut) {
  const int x = blockIdx.x * blockDim.x + threadIdx.x, y = blockIdx.y * blockDim.y + threadIdx.y;
  if (x >= width || y >= height) return;
  texels[static_cast<size_t>(y) * width + x] =
      TexelColor(values, rows, cols, width, height, x, y, lo, hi, masked, lut);
}

void Check(cudaError_t status, const char* what) {
  if (status != cudaSuccess) throw InputError(Sprintf("CUDA error %s: %s", what, cudaGetErrorString(status)));
}

}  // namespace

// ---------------------------------------------------------------------------------------------------------
// [SECTION] CudaGlTexture
// ---------------------------------------------------------------------------------------------------------

CudaGlTexture::CudaGlTexture(int width, int height, bool force_host_copy) : width_(width), height_(height) {
  if (width < 1 || height < 1) throw InputError(Sprintf("texture size %d × %d is empty", width, height));
  glGenTextures(1, &texture_);
  glBindTexture(GL_TEXTURE_2D, texture_);
  glTexParameteri(GL_TEXTURE_2D, GL_TEXTURE_MIN_FILTER, GL_NEAREST);  // cells stay crisp
  glTexParameteri(GL_TEXTURE_2D, GL_TEXTURE_MAG_FILTER, GL_NEAREST);
  glTexParameteri(GL_TEXTURE_2D, GL_TEXTURE_WRAP_S, GL_CLAMP_TO_EDGE);
  glTexParameteri(GL_TEXTURE_2D, GL_TEXTURE_WRAP_T, GL_CLAMP_TO_EDGE);
  glTexImage2D(GL_TEXTURE_2D, 0, GL_RGBA8, width, height, 0, GL_RGBA, GL_UNSIGNED_BYTE, nullptr);
  if (const GLenum error = glGetError(); error != GL_NO_ERROR)
    throw InputError(Sprintf("OpenGL error 0x%x creating a %d × %d texture", error, width, height));
  Check(cudaMalloc(&lut_device_, sizeof(ColorLut)), "allocating the colour table");
  if (force_host_copy) {
    host_copy_reason_ = "host copy chosen (comparison mode)";
  } else {
    // Registered once per texture (per size): registration is the expensive step, mapping is cheap.
    cudaGraphicsResource_t resource = nullptr;
    const cudaError_t status =
        cudaGraphicsGLRegisterImage(&resource, texture_, GL_TEXTURE_2D, cudaGraphicsRegisterFlagsSurfaceLoadStore);
    if (status == cudaSuccess) {
      resource_ = resource;
      path_ = Path::kInterop;
    } else {
      cudaGetLastError();  // the refusal is expected off the CUDA GPU; clear it so later calls do not see it
      const char* renderer = reinterpret_cast<const char*>(glGetString(GL_RENDERER));
      host_copy_reason_ = Sprintf("CUDA cannot register textures of this GL context (%s: %s), so kernel output is "
                                  "copied through the host",
                                  renderer ? renderer : "unknown renderer", cudaGetErrorString(status));
    }
  }
  if (path_ == Path::kHostCopy)
    Check(cudaMalloc(reinterpret_cast<void**>(&staging_), sizeof(std::uint32_t) * width * height),
          "allocating the staging buffer");
}

CudaGlTexture::~CudaGlTexture() {
  if (resource_) cudaGraphicsUnregisterResource(static_cast<cudaGraphicsResource_t>(resource_));
  cudaFree(staging_);
  cudaFree(lut_device_);
  glDeleteTextures(1, &texture_);
}

float CudaGlTexture::Draw(const float* device_values, int rows, int cols, ColormapRange range, const ColorLut& lut) {
  if (rows < 1 || cols < 1) throw InputError("nothing to draw: the matrix is empty");
  Check(cudaMemcpy(lut_device_, lut.data(), sizeof(ColorLut), cudaMemcpyHostToDevice), "uploading the colour table");
  const dim3 block(16, 16), grid((width_ + 15) / 16, (height_ + 15) / 16);
  const auto* lut_d = static_cast<const std::uint32_t*>(lut_device_);
  cudaEvent_t start, stop;
  Check(cudaEventCreate(&start), "creating an event");
  Check(cudaEventCreate(&stop), "creating an event");
  Check(cudaEventRecord(start), "recording an event");
  std::vector<std::uint32_t> host;
  if (path_ == Path::kInterop) {
    auto resource = static_cast<cudaGraphicsResource_t>(resource_);
    Check(cudaGraphicsMapResources(1, &resource), "mapping the texture");
    cudaArray_t array = nullptr;
    Check(cudaGraphicsSubResourceGetMappedArray(&array, resource, 0, 0), "getting the texture's array");
    cudaResourceDesc desc{};
    desc.resType = cudaResourceTypeArray;
    desc.res.array.array = array;
    cudaSurfaceObject_t surface = 0;
    Check(cudaCreateSurfaceObject(&surface, &desc), "creating a surface");
    ColormapIntoSurface<<<grid, block>>>(surface, device_values, rows, cols, width_, height_, range.lo, range.hi,
                                         range.masked, lut_d);
    Check(cudaGetLastError(), "launching the colormap kernel");
    Check(cudaDestroySurfaceObject(surface), "destroying a surface");
    Check(cudaGraphicsUnmapResources(1, &resource), "unmapping the texture");  // orders GL after the kernel
  } else {
    ColormapIntoBuffer<<<grid, block>>>(staging_, device_values, rows, cols, width_, height_, range.lo, range.hi,
                                        range.masked, lut_d);
    Check(cudaGetLastError(), "launching the colormap kernel");
    host.resize(static_cast<std::size_t>(width_) * height_);
    Check(cudaMemcpy(host.data(), staging_, host.size() * sizeof(std::uint32_t), cudaMemcpyDeviceToHost),
          "copying texels to the host");
  }
  Check(cudaEventRecord(stop), "recording an event");
  Check(cudaEventSynchronize(stop), "running the colormap");
  float ms = 0;
  Check(cudaEventElapsedTime(&ms, start, stop), "reading the timer");
  cudaEventDestroy(start);
  cudaEventDestroy(stop);
  if (path_ == Path::kHostCopy) {
    glBindTexture(GL_TEXTURE_2D, texture_);
    glPixelStorei(GL_UNPACK_ALIGNMENT, 4);
    glTexSubImage2D(GL_TEXTURE_2D, 0, 0, 0, width_, height_, GL_RGBA, GL_UNSIGNED_BYTE, host.data());
  }
  return ms;
}

std::vector<std::uint32_t> CudaGlTexture::ReadBack() const {
  std::vector<std::uint32_t> texels(static_cast<std::size_t>(width_) * height_);
  glBindTexture(GL_TEXTURE_2D, texture_);
  glPixelStorei(GL_PACK_ALIGNMENT, 4);
  glGetTexImage(GL_TEXTURE_2D, 0, GL_RGBA, GL_UNSIGNED_BYTE, texels.data());
  return texels;
}

}  // namespace flashviz::interop
