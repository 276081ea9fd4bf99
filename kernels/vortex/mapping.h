// How the report's FlashAttention programs land on a Vortex machine: tile sizes, blocks → cores, each query row
// → (core, warp, thread), the per-thread FP register budget, the per-block local-memory layout with byte offsets,
// and a verdict that says exactly why a configuration does not fit.
//
// SIMT (the report's program, eyoon1131/vortex tests/regression/flash): B_r = min(W·T, N), B_c = max(B_r, 8); a block
// is B_r threads = one Q tile, one thread = one query row; block b runs on core b mod C (round-robin). Each thread
// keeps O_row[d], the S/P row [B_c], m and l in FP registers; the program is instantiated only for d·B_c ≤ 128. Local
// memory per block: Q_i, K_j and V_j^T, (B_r + 2·B_c)·d·4 bytes. TCU: d = 8, B_r = B_c = 8, one block = one warp of 8
// threads; fragments A f0–f7, B f10–f17, C/D f24–f31.
//
// Labels are ASCII (plus the middle dot) so the GUI's font can draw them: l for ℓ, P~ for P̃, ^T for ᵀ.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "kernels/vortex/config.h"

namespace flashviz::vortex {

// The SIMT program's instantiation rule: the kernel exists only for d·B_c ≤ 128 (32 FP registers).
inline constexpr int kSimtMaxDTimesBc = 128;
// The SIMT program's argument limit.
inline constexpr int kSimtMaxD = 16;
// B_c is at least this many rows (B_c = max(B_r, 8)).
inline constexpr int kSimtMinBc = 8;
// Scalars the SIMT thread keeps besides O_row and the S/P row, at the peak of the loop body (update of O):
// alpha = e^(m − m_new), beta = e^(rowmax − m_new), the dot-product accumulator and one operand from local memory.
inline constexpr int kSimtTemporaries = 4;

// The TCU program's fixed shape (wmma_context<8, fp16, fp32>).
inline constexpr int kTcuTile = 8;         // B_r = B_c = d = M = N of the tile
inline constexpr int kTcuK = 16;           // K of the tile in fp16 elements: the 8-wide dimension padded with zeros
inline constexpr int kTcuThreads = 8;      // threads per warp the context is built for
inline constexpr int kTcuFragmentRegisters = 8;
inline constexpr int kTcuFirstRegisterA = 0;    // f0–f7
inline constexpr int kTcuFirstRegisterB = 10;   // f10–f17
inline constexpr int kTcuFirstRegisterC = 24;   // f24–f31
// Scalars a TCU thread needs beside the fragments (row statistics of its row r): rowmax/rowsum, m_new, l_new,
// alpha, beta. They live in the registers the fragments leave free (f8, f9, f18–f23).
inline constexpr int kTcuScalars = 6;

struct BlockPlacement {
  int block = 0;       // block b = Q tile i
  int core = 0;        // b mod C
  int wave = 0;        // 0 for the first blocks a core runs, 1 for the ones it runs after those finish, ...
  int first_warp = 0;  // the block's first warp on its core
  int warps = 0;
  int row_begin = 0;
  int rows = 0;
};

struct RowOwner {
  int row = 0;
  int block = 0;
  int core = 0;
  int warp = 0;
  int thread = 0;  // lane within the warp
  int wave = 0;
  bool operator==(const RowOwner&) const = default;
};

enum class RegisterContent : std::uint8_t {
  kORow,         // SIMT: O_row[d]
  kSPRow,        // SIMT: the S row, then the P~ row [B_c]
  kStats,        // SIMT: m, l
  kTemporary,    // SIMT: alpha, beta, accumulator, operand; TCU: the row's scalars
  kFragmentA,    // TCU: Q_i, then P~_ij (8×16 fp16, two per register)
  kFragmentB,    // TCU: K_j^T, then V_j (16×8 fp16, two per register)
  kAccumulator,  // TCU: S_ij, then P~_ij·V_j (8×8 fp32)
};
std::string_view RegisterContentName(RegisterContent content);

struct RegisterRange {
  int first = 0;  // f<first>
  int count = 0;
  RegisterContent content = RegisterContent::kTemporary;
  std::string label;  // "O_row[0..7]", "fragment A: Q_i / P~_ij", ...
};

struct RegisterBudget {
  std::vector<RegisterRange> ranges;  // in register order; may run past `available` when it does not fit
  int used = 0;
  int available = 0;
  std::string breakdown;  // "O row d = 8 + S/P row B_c = 16 + m, l 2 + temporaries 4 = 30"
};

struct LocalRegion {
  std::string name;     // "Q_i", "K_j", "V_j^T", ...
  std::string layout;   // "16×8 fp32, row-major"
  std::int64_t offset = 0;  // bytes from the block's base
  std::int64_t bytes = 0;
  int rows = 0, cols = 0;   // as stored (padding included)
  int element_bytes = 4;
};

struct LocalMemoryLayout {
  std::vector<LocalRegion> regions;  // one block's, in address order
  std::int64_t bytes_per_block = 0;
  int blocks_per_core = 0;           // resident on one core at the same time
  std::int64_t bytes_per_core = 0;   // blocks_per_core · bytes_per_block (the blocks get disjoint ranges)
  std::int64_t capacity = 0;
};

struct FitCheck {
  std::string name;    // "registers", "instantiation", "local memory", ...
  bool ok = true;
  std::string detail;  // one line: the numbers and, when it fails, the consequence
};

struct Mapping {
  Request request;
  int br = 0, bc = 0;        // B_r, B_c
  int tr = 0, tc = 0;        // T_r = N/B_r (blocks), T_c = N/B_c (K/V tiles per block), at least 1
  int threads_per_block = 0;
  int warps_per_block = 0;
  int blocks_per_core = 0;   // resident at once on one core
  int active_cores = 0;
  int waves = 0;             // rounds of blocks on the busiest core
  std::vector<BlockPlacement> blocks;
  RegisterBudget registers;
  LocalMemoryLayout local_memory;
  std::vector<FitCheck> checks;
  bool fits = true;
  std::string reason;        // the failed checks' details, or what it uses when it fits

  // The thread that owns query row `row` (0 ≤ row < N): the one that computes its O row and statistics.
  RowOwner OwnerOfRow(int row) const;
  // The row a (core, warp, thread) owns in `wave`, or −1 when that thread has no row then.
  int RowOfThread(int core, int warp, int thread, int wave) const;
};

// Throws InputError (kernels/cpu/problem.h) when RequestError says the request is malformed.
Mapping MapToVortex(const Request& request);

}  // namespace flashviz::vortex
