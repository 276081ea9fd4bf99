#include "kernels/cuda/device_status.h"

#include <cuda_runtime.h>

#include <atomic>

#include "kernels/common/format.h"

namespace flashviz::cuda {
namespace {

std::string VersionText(int version) { return Sprintf("%d.%d", version / 1000, version % 1000 / 10); }

// One attribute of the current device, kept per device in `cache` (0: not asked yet, or unknown).
template <cudaDeviceAttr kAttribute>
int CachedAttribute() {
  constexpr int kMaxDevices = 64;
  static std::atomic<int> cache[kMaxDevices] = {};
  int device = 0;
  if (cudaGetDevice(&device) != cudaSuccess || device < 0 || device >= kMaxDevices) {
    cudaGetLastError();
    return 0;
  }
  int value = cache[device].load(std::memory_order_relaxed);
  if (value == 0) {
    if (cudaDeviceGetAttribute(&value, kAttribute, device) != cudaSuccess || value < 0) {
      cudaGetLastError();
      return 0;
    }
    cache[device].store(value, std::memory_order_relaxed);
  }
  return value;
}

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

int CurrentDeviceMultiprocessors() { return CachedAttribute<cudaDevAttrMultiProcessorCount>(); }

long long CurrentDeviceL2Bytes() { return CachedAttribute<cudaDevAttrL2CacheSize>(); }

}  // namespace flashviz::cuda
