// The TCU program on Vortex's 8×8 tensor unit, computed numerically: fp16 inputs (rounded with our own
// RoundToFp16), fp32 accumulation, the 8-wide head dimension (and the 8-wide key dimension of P~) zero-padded
// to K = 16. Beside it, the SIMT program in fp32 and the float64 reference, so the real fp16 rounding error
// is measured, not assumed.
//
// [SECTION] fragments: shapes, register ranges, which lane and register holds each element, padding
// [SECTION] micro-ops: the 32 4×2×2 steps one mma_sync expands into
// [SECTION] numerics: one tile iteration's fragments, the whole TCU and SIMT programs, their errors
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "kernels/cpu/stepper.h"
#include "kernels/vortex/mapping.h"

namespace flashviz::vortex {

// ---- [SECTION] fragments ---------------------------------------------------------------------------------------

enum class Fragment : std::uint8_t {
  kA,  // M×K = 8×16 fp16, row-major: Q_i for S = Q_i·K_j^T, then P~_ij for P~_ij·V_j
  kB,  // K×N = 16×8 fp16, loaded column-major: K_j^T, then V_j
  kC,  // M×N = 8×8 fp32: S_ij, then P~_ij·V_j
};
std::string_view FragmentName(Fragment fragment);  // "A", "B", "C"

struct FragmentShape {
  int rows = 0, cols = 0;
  int element_bytes = 0;   // 2 (fp16, two per register) or 4 (fp32)
  int first_register = 0;  // f0, f10, f24
};
FragmentShape ShapeOf(Fragment fragment);

// Where element (row, col) of a fragment lives: lane (thread of the warp), register (0–7 within the fragment,
// f<first_register + reg>) and half (0 = low 16 bits, 1 = high; always 0 for fp32). The lane layout follows
// Vortex's wmma configuration for 8 threads and 8 registers per fragment: the tensor core's micro-tile is
// tcM × tcN × tcK = 4 × 2 × 2 words (4 fp16 along K), so A's lane t holds rows t/2 and t/2 + 4, B's lane t holds
// columns from (t mod 4)/2 + 2·(t/4) and C's lane t holds rows t/2, t/2 + 4 at columns t mod 2 + 2·step.
struct FragmentSlot {
  int lane = 0;
  int reg = 0;
  int half = 0;
  bool operator==(const FragmentSlot&) const = default;
};
FragmentSlot SlotOf(Fragment fragment, int row, int col);

struct FragmentElement {
  int row = 0, col = 0;
};
// The elements register `reg` of `lane` holds (two for A and B, one for C), low half first.
std::vector<FragmentElement> ElementsOf(Fragment fragment, int lane, int reg);

// Padding: A's columns and B's rows past the valid K (8 for both matrix operations of the program).
bool IsPadding(Fragment fragment, int row, int col);
// Whether register `reg` of a fragment holds only padding zeros in every lane (A: f2, f3, f6, f7; B: f14–f17).
bool RegisterIsPadding(Fragment fragment, int reg);
// Those registers by name, for people: "f2, f3, f6, f7".
std::string PaddingRegisterNames(Fragment fragment);

// ---- [SECTION] micro-ops ---------------------------------------------------------------------------------------

inline constexpr int kMicroOpsPerMma = 32;

struct MicroOp {
  int m_step = 0, n_step = 0, k_step = 0;  // 2 × 4 × 4 steps
  int row_begin = 0, rows = 4;             // C rows it updates
  int col_begin = 0, cols = 2;             // C columns it updates
  int k_begin = 0, k_count = 4;            // fp16 elements of K it consumes
  bool only_padding = false;               // its K range lies entirely in the zero padding
};
// The micro-ops of one mma_sync in issue order (m, then n, then k fastest).
std::vector<MicroOp> MmaMicroOps();

// Who does what in one tile iteration of the TCU program (for the view and the CLI).
struct TcuRoles {
  std::string_view rowmax = "thread r (r < 8) scans row r of S_ij for its max";
  std::string_view exp = "all 8 threads: thread t computes exp(S[r][t] − rowmax_r) for column t of every row r";
  std::string_view rowsum = "thread r sums row r of P~_ij, updates m_r, l_r and rescales its O row by alpha";
  std::string_view accumulate = "thread r adds beta·(P~_ij·V_j)[r] to O row r";
};

// NVIDIA's WMMA tile of the flash2_wmma kernel, for the comparison toggle: m16n16k16, one warp of 32 threads,
// fp16 A and B, fp32 accumulator.
struct MmaTileShape {
  int m = 0, n = 0, k = 0;
  int threads = 0;
  std::string_view name;
};
inline constexpr MmaTileShape kVortexTcuTile{8, 8, 16, 8, "Vortex TCU 8×8×16 (fp16 → fp32)"};
inline constexpr MmaTileShape kNvidiaWmmaTile{16, 16, 16, 32, "NVIDIA WMMA m16n16k16 (fp16 → fp32)"};
// Multiply-adds one S = Q_i·K_j^T instruction does, and how many of them are useful for head dimension d
// (the rest multiply the zero padding of K).
std::int64_t MacsPerMma(const MmaTileShape& shape);
double UsefulFraction(const MmaTileShape& shape, int d);

// ---- [SECTION] numerics ----------------------------------------------------------------------------------------

// What one tile iteration (Q tile i, K/V tile j) of one block puts into the fragments, fp16 values as floats.
struct TcuTileSnapshot {
  int i = 0, j = 0;
  std::array<float, 8 * 16> q_a{};      // fragment A for S: fp16(Q_i), columns 8–15 zero
  std::array<float, 16 * 8> kt_b{};     // fragment B for S: fp16(K_j^T) as K×N (k = head dim), rows 8–15 zero
  std::array<float, 8 * 8> s{};         // accumulator: S_ij = Q_i·K_j^T in fp32
  std::array<float, 8> rowmax{};        // rowmax(S_ij)
  std::array<float, 8 * 16> p_a{};      // fragment A for the second mma: fp16(P~_ij), columns 8–15 zero
  std::array<float, 8> rowsum{};        // rowsum of the fp32 exp values
  std::array<float, 16 * 8> v_b{};      // fragment B: fp16(V_j) as K×N (k = key index), rows 8–15 zero
  std::array<float, 8 * 8> pv{};        // accumulator: P~_ij·V_j in fp32
  std::array<float, 8> m_before{}, l_before{}, m_after{}, l_after{};
  std::array<float, 8> alpha{}, beta{};  // e^(m_before − m_after), e^(rowmax − m_after)
  std::array<float, 8 * 8> o_after{};   // O_i after the tile, unnormalized
};

// Runs block i of the TCU program up to and including tile iteration j. Inputs must have d = 8 and N a
// multiple of 8; throws std::invalid_argument otherwise.
TcuTileSnapshot TcuSnapshot(const AttentionInputs& inputs, int i, int j);

struct NumericsResult {
  std::vector<float> o_tcu;        // N×d: fp16 inputs, fp32 accumulation (empty when the TCU does not apply)
  std::vector<float> o_simt;       // N×d: the SIMT program in fp32 (its B_c, rowmax-based statistics)
  std::vector<double>
      o_reference;  // N×d: float64 softmax(Q·K^T)·V of the same fp32 inputs (no 1/√d: the program has none)
  double max_error_tcu = 0;        // max |o_tcu − o_reference|
  double max_error_simt = 0;       // max |o_simt − o_reference|
  double max_tcu_vs_simt = 0;      // max |o_tcu − o_simt|
  // Elements outside the program's check |ref − out| ≤ 1e-3 + 1e-3·|out|.
  std::int64_t tcu_outside_check = 0;
  std::int64_t simt_outside_check = 0;
};
inline constexpr double kProgramAbsTolerance = 1e-3;
inline constexpr double kProgramRelTolerance = 1e-3;

// The SIMT program's arithmetic in fp32 for tiles of B_c keys (one row at a time, as each thread does).
std::vector<float> RunSimtProgram(const AttentionInputs& inputs, int bc);
// The TCU program's arithmetic (d = 8, N a multiple of 8).
std::vector<float> RunTcuProgram(const AttentionInputs& inputs);
// Both programs against the float64 reference; the TCU part only when d = 8 and N ≥ 8.
NumericsResult RunNumerics(const AttentionInputs& inputs, int simt_bc);

}  // namespace flashviz::vortex
