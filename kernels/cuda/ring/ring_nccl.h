// NCCL for the ring's `nccl` transport, loaded at run time with dlopen (FLASHVIZ_NCCL_LIBRARY, else libnccl.so.2
// on the library path), so that the flashviz binary starts without libnccl. Internal to kernels/cuda/ring: the
// communicator is an opaque pointer here, so that nccl.h stays in ring_nccl.cpp.
#pragma once

#include <cuda_runtime.h>

#include <cstddef>
#include <optional>
#include <string>
#include <vector>

namespace flashviz::cuda::ring_internal {

// Loads NCCL once (the first call; later calls return the first answer). Nothing when usable, else one line
// ("this flashviz was built without nccl.h", "libnccl.so.2: cannot open shared object file ..."). Before loading
// it forces NCCL_NVLS_ENABLE=0 in the process environment (NVLink multicast stays off, whatever was set).
std::optional<std::string> LoadNccl(std::string* version);

// The communicators of a ring of `ranks` GPUs (rank r on GPU r), created on the first request for that size (every
// rank's ncclCommInitRank on its own thread, one shared unique id) and kept until ReleaseNccl. Fills `comms`
// (one opaque ncclComm_t per rank) or returns why not.
std::optional<std::string> NcclRing(int ranks, std::vector<void*>& comms);

// On `stream` (of rank's GPU), one group: send `send_bytes` from `send` to rank + 1 and receive `recv_bytes` into
// `recv` from rank − 1 (mod ranks). Returns why the calls failed, or nothing.
std::optional<std::string> NcclExchange(void* comm, int rank, int ranks, const void* send, std::size_t send_bytes,
                                        void* recv, std::size_t recv_bytes, cudaStream_t stream);

// Destroys every communicator made by NcclRing (each on its GPU, in parallel).
void ReleaseNccl();

}  // namespace flashviz::cuda::ring_internal
