// Why CUDA cannot run here, worded once for every part of flashviz that needs a GPU: `hw4 --backend cuda`,
// `bench`, `kernels`, `trace --gpu`, the benchmark panel and the live GPU tab all say the same thing.
// Plain C++ (no CUDA headers), so that headers meant for callers without CUDA can include it.
#pragma once

#include <string>

namespace flashviz::cuda {

// Empty when a CUDA device is there and the driver can run this build; otherwise one line: "no NVIDIA driver is
// installed (libcuda.so.1 not found)", "the NVIDIA driver is too old: it supports CUDA 12.2, this flashviz needs
// CUDA 13.0", "no CUDA device found", or "CUDA is unusable here: <the runtime's message>".
std::string CudaDeviceUnavailableReason();

// The reason for a failed probe of one of this build's kernels (`probe`: the cudaError_t of cudaFuncGetAttributes
// on it): the build has no kernels for the GPU's architecture (with the CMake option that adds them), or the
// runtime's message. The error is cleared so that it does not poison the next call.
std::string KernelImageUnavailableReason(int probe);

// The current device's multiprocessors and L2 cache bytes, asked once per device (a launch should not pay for the
// query each time; the launch rules depend on the device it runs on). 0 when the runtime cannot say (the error is
// cleared).
int CurrentDeviceMultiprocessors();
long long CurrentDeviceL2Bytes();

}  // namespace flashviz::cuda
