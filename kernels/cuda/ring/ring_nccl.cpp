// NCCL through dlopen for the ring's `nccl` transport (ring_nccl.h says why at run time). Compiled against nccl.h
// where CMake found it (FLASHVIZ_HAVE_NCCL_HEADER); otherwise every entry says the build has no NCCL.
#include "kernels/cuda/ring/ring_nccl.h"

#include <cstdlib>
#include <map>
#include <mutex>
#include <thread>

#include "kernels/common/format.h"

#ifdef FLASHVIZ_HAVE_NCCL_HEADER
#include <dlfcn.h>
#include <nccl.h>
#endif

namespace flashviz::cuda::ring_internal {

#ifndef FLASHVIZ_HAVE_NCCL_HEADER

std::optional<std::string> LoadNccl(std::string*) {
  return std::string("this flashviz was built without nccl.h (CMake did not find it), so the nccl transport is off");
}
std::optional<std::string> NcclRing(int, std::vector<void*>&) {
  return LoadNccl(nullptr);
}
std::optional<std::string> NcclExchange(void*, int, int, const void*, std::size_t, void*, std::size_t, cudaStream_t) {
  return LoadNccl(nullptr);
}
void ReleaseNccl() {}

#else

namespace {

// The entry points the ring uses, looked up by name in the loaded library.
struct NcclApi {
  decltype(&ncclGetVersion) get_version = nullptr;
  decltype(&ncclGetUniqueId) get_unique_id = nullptr;
  decltype(&ncclCommInitRank) comm_init_rank = nullptr;
  decltype(&ncclCommDestroy) comm_destroy = nullptr;
  decltype(&ncclGroupStart) group_start = nullptr;
  decltype(&ncclGroupEnd) group_end = nullptr;
  decltype(&ncclSend) send = nullptr;
  decltype(&ncclRecv) recv = nullptr;
  decltype(&ncclGetErrorString) error_string = nullptr;
};

struct Loaded {
  NcclApi api;
  std::optional<std::string> error;
  std::string version;
};

const Loaded& Load() {
  static const Loaded loaded = [] {
    Loaded l;
    // NVLink multicast (NVLS) stays off: forced, not defaulted, since a value of 1 from the caller's environment
    // would otherwise win. NCCL reads it when it initializes, after this.
    setenv("NCCL_NVLS_ENABLE", "0", 1);
    const char* chosen = std::getenv("FLASHVIZ_NCCL_LIBRARY");
    const std::string path = chosen && *chosen ? chosen : "libnccl.so.2";
    void* handle = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (!handle) {
      const char* why = dlerror();
      l.error = Sprintf("NCCL cannot be loaded (%s%s): %s", path.c_str(),
                        chosen ? ", from FLASHVIZ_NCCL_LIBRARY" : "; set FLASHVIZ_NCCL_LIBRARY or LD_LIBRARY_PATH",
                        why ? why : "dlopen failed");
      return l;
    }
    bool complete = true;
    auto find = [&](auto& entry, const char* name) {
      entry = reinterpret_cast<std::remove_reference_t<decltype(entry)> >(dlsym(handle, name));
      if (!entry && complete) {
        complete = false;
        l.error = Sprintf("NCCL (%s) has no %s", path.c_str(), name);
      }
    };
    find(l.api.get_version, "ncclGetVersion");
    find(l.api.get_unique_id, "ncclGetUniqueId");
    find(l.api.comm_init_rank, "ncclCommInitRank");
    find(l.api.comm_destroy, "ncclCommDestroy");
    find(l.api.group_start, "ncclGroupStart");
    find(l.api.group_end, "ncclGroupEnd");
    find(l.api.send, "ncclSend");
    find(l.api.recv, "ncclRecv");
    find(l.api.error_string, "ncclGetErrorString");
    if (!complete) return l;
    int code = 0;
    if (l.api.get_version(&code) == ncclSuccess)
      l.version = code >= 10000 ? Sprintf("%d.%d.%d", code / 10000, code / 100 % 100, code % 100)
                                : Sprintf("%d.%d.%d", code / 1000, code / 100 % 10, code % 100);
    return l;
  }();
  return loaded;
}

std::string Describe(ncclResult_t result) {
  const Loaded& l = Load();
  return l.api.error_string ? l.api.error_string(result) : Sprintf("ncclResult_t %d", static_cast<int>(result));
}

std::mutex ring_mutex;
std::map<int, std::vector<void*> > rings;  // ranks → one communicator per rank

}  // namespace

std::optional<std::string> LoadNccl(std::string* version) {
  const Loaded& l = Load();
  if (version) *version = l.version;
  return l.error;
}

std::optional<std::string> NcclRing(int ranks, std::vector<void*>& comms) {
  if (auto error = LoadNccl(nullptr)) return error;
  const NcclApi& api = Load().api;
  std::lock_guard lock(ring_mutex);
  if (auto it = rings.find(ranks); it != rings.end()) {
    comms = it->second;
    return std::nullopt;
  }
  ncclUniqueId id;
  if (ncclResult_t r = api.get_unique_id(&id); r != ncclSuccess) return "ncclGetUniqueId: " + Describe(r);
  // ncclCommInitRank blocks until every rank has joined: one thread per rank, each on its GPU.
  std::vector<ncclComm_t> made(static_cast<std::size_t>(ranks), nullptr);
  std::vector<std::string> errors(static_cast<std::size_t>(ranks));
  std::vector<std::thread> threads;
  for (int rank = 0; rank < ranks; ++rank)
    threads.emplace_back([&, rank] {
      const std::size_t at = static_cast<std::size_t>(rank);
      if (cudaError_t e = cudaSetDevice(rank); e != cudaSuccess) {
        errors[at] = Sprintf("cudaSetDevice(%d): %s", rank, cudaGetErrorString(e));
        return;
      }
      if (ncclResult_t r = api.comm_init_rank(&made[at], ranks, id, rank); r != ncclSuccess)
        errors[at] = Sprintf("ncclCommInitRank (rank %d of %d): %s", rank, ranks, Describe(r).c_str());
    });
  for (std::thread& t : threads) t.join();
  for (int rank = 0; rank < ranks; ++rank)
    if (!errors[static_cast<std::size_t>(rank)].empty()) {
      for (int other = 0; other < ranks; ++other)
        if (made[static_cast<std::size_t>(other)]) {
          cudaSetDevice(other);
          api.comm_destroy(made[static_cast<std::size_t>(other)]);
        }
      return errors[static_cast<std::size_t>(rank)];
    }
  std::vector<void*>& kept = rings[ranks];
  for (ncclComm_t comm : made) kept.push_back(comm);
  comms = kept;
  return std::nullopt;
}

std::optional<std::string> NcclExchange(void* comm, int rank, int ranks, const void* send, std::size_t send_bytes,
                                        void* recv, std::size_t recv_bytes, cudaStream_t stream) {
  const NcclApi& api = Load().api;
  auto* c = static_cast<ncclComm_t>(comm);
  // Send and receive in one group: issued apart, each rank's send would wait for its successor's receive, which
  // waits behind that rank's own send: a cycle around the ring.
  if (ncclResult_t r = api.group_start(); r != ncclSuccess) return "ncclGroupStart: " + Describe(r);
  const ncclResult_t sent = api.send(send, send_bytes, ncclUint8, (rank + 1) % ranks, c, stream);
  const ncclResult_t received = api.recv(recv, recv_bytes, ncclUint8, (rank + ranks - 1) % ranks, c, stream);
  const ncclResult_t ended = api.group_end();
  if (sent != ncclSuccess) return "ncclSend: " + Describe(sent);
  if (received != ncclSuccess) return "ncclRecv: " + Describe(received);
  if (ended != ncclSuccess) return "ncclGroupEnd: " + Describe(ended);
  return std::nullopt;
}

void ReleaseNccl() {
  std::lock_guard lock(ring_mutex);
  if (rings.empty()) return;  // (and NCCL is not loaded just to find nothing to release)
  const NcclApi& api = Load().api;
  for (auto& [ranks, comms] : rings) {
    std::vector<std::thread> threads;
    for (int rank = 0; rank < ranks; ++rank)
      threads.emplace_back([&, rank] {
        cudaSetDevice(rank);
        api.comm_destroy(static_cast<ncclComm_t>(comms[static_cast<std::size_t>(rank)]));
      });
    for (std::thread& t : threads) t.join();
  }
  rings.clear();
}

#endif

}  // namespace flashviz::cuda::ring_internal
