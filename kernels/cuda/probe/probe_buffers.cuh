// Device buffers of the instrumented kernels (tile_probe.cu, backward_probe.cu): float arrays freed with their
// owner, CUDA errors turned into InputError with what was being done.
#pragma once

#include <cuda_runtime.h>

#include <algorithm>
#include <memory>
#include <vector>

#include "kernels/common/format.h"
#include "kernels/common/input_error.h"

namespace flashviz::cuda::probe {

inline void Check(cudaError_t status, const char* what) {
  if (status != cudaSuccess) throw InputError(Sprintf("CUDA error in %s: %s", what, cudaGetErrorString(status)));
}

struct DeviceFree {
  void operator()(void* p) const { cudaFree(p); }
};
using DeviceBuffer = std::unique_ptr<float, DeviceFree>;

inline DeviceBuffer Allocate(std::size_t floats, const char* what) {
  void* p = nullptr;
  Check(cudaMalloc(&p, std::max<std::size_t>(floats, 1) * sizeof(float)), what);
  return DeviceBuffer(static_cast<float*>(p));
}

inline DeviceBuffer Upload(const std::vector<float>& host, const char* what) {
  DeviceBuffer buffer = Allocate(host.size(), what);
  Check(cudaMemcpy(buffer.get(), host.data(), host.size() * sizeof(float), cudaMemcpyHostToDevice), what);
  return buffer;
}

inline void Download(const DeviceBuffer& from, std::size_t floats, std::vector<float>& to, const char* what) {
  to.resize(floats);
  Check(cudaMemcpy(to.data(), from.get(), floats * sizeof(float), cudaMemcpyDeviceToHost), what);
}

// Milliseconds between two CUDA events around `enqueue` (the instrumented kernels' launches), after it ran.
template <class Enqueue>
float TimeKernels(const Enqueue& enqueue, const char* what) {
  cudaEvent_t start, stop;
  Check(cudaEventCreate(&start), "creating an event");
  Check(cudaEventCreate(&stop), "creating an event");
  Check(cudaEventRecord(start), "recording an event");
  enqueue();
  Check(cudaGetLastError(), what);
  Check(cudaEventRecord(stop), "recording an event");
  Check(cudaEventSynchronize(stop), what);
  float ms = 0;
  Check(cudaEventElapsedTime(&ms, start, stop), "reading the timer");
  cudaEventDestroy(start);
  cudaEventDestroy(stop);
  return ms;
}

// Hopper's opt-in limit of shared memory per block.
inline constexpr std::size_t kMaxSharedBytes = 227 * 1024;

}  // namespace flashviz::cuda::probe
