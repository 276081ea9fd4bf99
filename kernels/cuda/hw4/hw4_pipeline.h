// The GPU side of `flashviz hw4 --backend cuda`: stream an HW4 input through the device in chunks of whole
// batches — the file read of chunk c + 1 overlaps the copy in, the kernel and the copy out of chunk c, on
// several streams — and hand the output back in order. File access stays with the caller (two callbacks),
// so this knows nothing of paths or of the atomic output file.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>

#include "kernels/cuda/hw4/hw4_kernels.h"

namespace flashviz::cuda::hw4 {

// Why the CUDA backend cannot run on this machine, or "" when it can: no device, a driver older than this
// build's CUDA runtime, no machine code for this GPU in the build, or the runtime's own error text.
std::string Hw4CudaUnavailableReason();

// Fills dst with `batches` batches starting at `first_batch`, in the file's layout (per batch Q, K, V, each
// N×d float32). Called on the calling thread of RunHw4Pipeline, in order.
using Hw4ReadChunk = std::function<void(std::int64_t first_batch, std::int64_t batches, float* dst)>;
// Receives the next `floats` values of O (whole batches, in order). Called on a writer thread.
using Hw4WriteChunk = std::function<void(const float* src, std::size_t floats)>;

struct Hw4PipelineOptions {
  Hw4Kernel kernel = Hw4Kernel::kTf32x3;
  int streams = 3;                // ≥ 2: chunk c goes to stream c mod streams
  std::int64_t chunk_bytes = 0;   // input bytes per chunk (whole batches); 0 picks ⅛ of the input in 16–64 MiB
};

struct Hw4PipelineReport {
  std::string device;              // "NVIDIA H200, sm_90, 132 SMs"
  double init_s = 0;               // CUDA context and device query
  double alloc_s = 0;              // pinned host and device buffers, streams, events
  double read_s = 0;               // host time spent in the read callback (busy, overlapped with the GPU)
  double write_s = 0;              // host time spent in the write callback (busy, overlapped)
  double h2d_s = 0, kernel_s = 0, d2h_s = 0;  // GPU busy time of each stage: the union of the chunks' intervals
  double pipeline_s = 0;           // wall time from the first read to the last write
  double flops = 0;                // 4·B·N²·d
  int chunks = 0;
  std::int64_t batches_per_chunk = 0;
  int streams = 0;
  std::optional<std::uint64_t> first_non_finite;  // index of the first NaN/Inf among the file's floats
};

// Runs the whole input. Throws std::runtime_error with a one-line message on any CUDA error (out of memory,
// no device, a failed launch); exceptions from the callbacks pass through. Inputs with a non-finite value are
// still computed; first_non_finite says where, for the caller to refuse the output.
Hw4PipelineReport RunHw4Pipeline(int b, int n, int d, float scale, const Hw4ReadChunk& read,
                                 const Hw4WriteChunk& write, const Hw4PipelineOptions& options);

}  // namespace flashviz::cuda::hw4
