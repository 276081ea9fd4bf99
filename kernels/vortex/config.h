// The Vortex machine and the request the mapping is computed for: cores → warps → threads, each core's local
// memory, each thread's FP registers, and the problem (N, d) in one of the report's two flash programs.
// The defaults are the report's configuration, from its source (github.com/eyoon1131/vortex, tests/regression/
// flash): 4 cores, 2 warps/core, 8 threads/warp, 16 KB local memory per core, 32 FP registers per thread (RV32IMAF).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace flashviz::vortex {

// The report's two FlashAttention programs: scalar SIMT (one thread per query row) and the tensor unit (TCU).
enum class Mode : std::uint8_t { kSimt, kTcu };
std::string_view ModeName(Mode mode);  // "simt", "tcu"
std::optional<Mode> ParseMode(std::string_view text);

struct MachineConfig {
  int cores = 4;                             // NUM_CORES
  int warps_per_core = 2;                    // NUM_WARPS
  int threads_per_warp = 8;                  // NUM_THREADS
  std::int64_t local_memory_bytes = 16384;   // per core, shared by the blocks resident on it (LMEM_LOG_SIZE 14)
  int fp_registers_per_thread = 32;          // f0–f31 (ilp32f)
  int threads_per_core() const { return warps_per_core * threads_per_warp; }
  bool operator==(const MachineConfig&) const = default;
};

// The configuration of the report's published table.
inline constexpr MachineConfig kReportMachine{};
inline constexpr int kReportN = 64;
inline constexpr int kReportD = 8;

// Sane bounds for the model (not Vortex limits): they keep every count in 64-bit range and the row list small.
inline constexpr int kMaxCores = 1024;         // vx_spawn's NUM_CORES_MAX
inline constexpr int kMaxWarpsPerCore = 64;
inline constexpr int kMaxThreadsPerWarp = 64;
inline constexpr std::int64_t kMaxLocalMemoryBytes = std::int64_t{1} << 30;
inline constexpr int kMaxFpRegisters = 256;
inline constexpr int kMaxN = 1 << 16;
inline constexpr int kMaxD = 1024;

struct Request {
  MachineConfig machine;
  Mode mode = Mode::kSimt;
  int n = kReportN;  // sequence length N
  int d = kReportD;  // head dimension d
  bool operator==(const Request&) const = default;
};

// Why the request is malformed (one line), or nothing. A well-formed request that the program or the machine
// cannot hold is not an error: the mapping's verdict says why it does not fit.
std::optional<std::string> RequestError(const Request& request);

bool IsPowerOfTwo(std::int64_t x);

}  // namespace flashviz::vortex
