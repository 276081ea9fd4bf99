#include "kernels/cuda/device_status.h"

#include <cuda_runtime.h>

#include "kernels/common/format.h"

namespace flashviz::cuda {
namespace {

std::string VersionText(int version) { return Sprintf("%d.%d", version / 1000, version % 1000 / 10); }

}  // namespace

std::string CudaDeviceUnavailableReason() {
  int count = 0;
  const cudaError_t error = cudaGetDeviceCount(&count);
  if (error != cudaSuccess) cudaGetLastError();
  if (error == cudaErrorNoDevice || (error == cudaSuccess && count == 0)) return "no CUDA device found";
  if (error == cudaErrorInsufficientDriver) {
    int driver = 0;
    cudaDriverGetVersion(&driver);
    if (driver == 0) return "no NVIDIA driver is installed (libcuda.so.1 not found), so no CUDA device";
    return Sprintf("the NVIDIA driver is too old: it supports CUDA %s, this flashviz needs CUDA %s",
                   VersionText(driver).c_str(), VersionText(CUDART_VERSION).c_str());
  }
  if (error != cudaSuccess) return Sprintf("CUDA is unusable here: %s", cudaGetErrorString(error));
  return "";
}

std::string KernelImageUnavailableReason(int probe_error) {
  const auto probe = static_cast<cudaError_t>(probe_error);
  cudaGetLastError();
  cudaDeviceProp prop{};
  cudaGetDeviceProperties(&prop, 0);
  if (probe == cudaErrorNoKernelImageForDevice || probe == cudaErrorInvalidDeviceFunction)
    return Sprintf("this flashviz has no kernels for the GPU's architecture (%s, sm_%d%d); rebuild with "
                   "-DCMAKE_CUDA_ARCHITECTURES=%d%d",
                   prop.name, prop.major, prop.minor, prop.major, prop.minor);
  return Sprintf("CUDA is unusable here: %s", cudaGetErrorString(probe));
}

}  // namespace flashviz::cuda
