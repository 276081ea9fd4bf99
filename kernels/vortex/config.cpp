#include "kernels/vortex/config.h"

#include "kernels/common/format.h"

namespace flashviz::vortex {

std::string_view ModeName(Mode mode) { return mode == Mode::kSimt ? "simt" : "tcu"; }

std::optional<Mode> ParseMode(std::string_view text) {
  if (text == "simt") return Mode::kSimt;
  if (text == "tcu") return Mode::kTcu;
  return std::nullopt;
}

bool IsPowerOfTwo(std::int64_t x) { return x > 0 && (x & (x - 1)) == 0; }

std::optional<std::string> RequestError(const Request& r) {
  const MachineConfig& m = r.machine;
  if (m.cores < 1 || m.cores > kMaxCores)
    return Sprintf("cores = %d is out of range: between 1 and %d", m.cores, kMaxCores);
  if (m.warps_per_core < 1 || m.warps_per_core > kMaxWarpsPerCore)
    return Sprintf("warps per core = %d is out of range: between 1 and %d", m.warps_per_core, kMaxWarpsPerCore);
  if (m.threads_per_warp < 1 || m.threads_per_warp > kMaxThreadsPerWarp)
    return Sprintf("threads per warp = %d is out of range: between 1 and %d", m.threads_per_warp,
                   kMaxThreadsPerWarp);
  if (m.local_memory_bytes < 1 || m.local_memory_bytes > kMaxLocalMemoryBytes)
    return Sprintf("local memory of %lld bytes is out of range: between 1 and %lld bytes per core",
                   static_cast<long long>(m.local_memory_bytes), static_cast<long long>(kMaxLocalMemoryBytes));
  if (m.fp_registers_per_thread < 1 || m.fp_registers_per_thread > kMaxFpRegisters)
    return Sprintf("FP registers per thread = %d is out of range: between 1 and %d", m.fp_registers_per_thread,
                   kMaxFpRegisters);
  if (r.n < 1 || r.n > kMaxN) return Sprintf("N = %d is out of range: between 1 and %d", r.n, kMaxN);
  if (r.d < 1 || r.d > kMaxD) return Sprintf("d = %d is out of range: between 1 and %d", r.d, kMaxD);
  // The report's host program takes powers of two only (its grid is N/B_r blocks with no edge tile).
  if (!IsPowerOfTwo(r.n)) return Sprintf("N = %d is not a power of two: the Vortex flash programs take N = 2^k", r.n);
  if (!IsPowerOfTwo(r.d)) return Sprintf("d = %d is not a power of two: the Vortex flash programs take d = 2^k", r.d);
  if (r.mode == Mode::kSimt) {
    // B_r = min(W·T, N) threads per block; the grid N/B_r must cover every row exactly.
    const int threads = m.threads_per_core();
    if (threads < r.n && r.n % threads != 0)
      return Sprintf("B_r = W·T = %d·%d = %d does not divide N = %d: the grid of N/B_r blocks would leave rows "
                     "without a thread",
                     m.warps_per_core, m.threads_per_warp, threads, r.n);
  } else if (m.threads_per_core() < 8) {
    return Sprintf("a TCU block is 8 threads but a core has only W·T = %d·%d = %d", m.warps_per_core,
                   m.threads_per_warp, m.threads_per_core());
  }
  return std::nullopt;
}

}  // namespace flashviz::vortex
