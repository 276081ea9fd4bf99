// One attention problem as the tiled algorithm sees it: N, d, the tile sizes B_r × B_c, the loop order,
// the scale and the causal mask. Paper notation (Algorithm 1 of the FlashAttention paper) throughout.
#pragma once

#include <cstdint>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>

#include "kernels/common/input_error.h"

namespace flashviz {

enum class LoopOrder : std::uint8_t {
  kKvOuter,  // Algorithm 1 as written: K/V outer loop, O_i, ℓ_i, m_i through HBM every inner iteration
  kQOuter,   // FlashAttention-2: Q outer loop, statistics and unnormalized O_i stay on chip
};

std::string_view LoopOrderName(LoopOrder order);  // "kv" or "q"
std::optional<LoopOrder> ParseLoopOrder(std::string_view text);

// Which pass the schedule steps through. The backward pass has one order of its own (FlashAttention-2's: K/V
// outer, dK_j and dV_j on chip, dQ_i read-modify-written in HBM); it consumes the O and L that the forward pass
// in the Q-outer order saves, so `order` does not change it.
enum class Pass : std::uint8_t { kForward, kBackward };
std::string_view PassName(Pass pass);  // "forward" or "backward"
std::optional<Pass> ParsePass(std::string_view text);

// The Vortex core's local memory: the "SRAM" of the report this tool grew from.
inline constexpr std::int64_t kDefaultSramBytes = 16 * 1024;
inline constexpr int kMaxSequenceLength = 1 << 20;
inline constexpr int kMaxHeadDim = 1024;

// What was asked for, before the tile sizes are resolved.
struct ProblemRequest {
  int n = 64;
  int d = 8;
  std::optional<int> br;                  // B_r; from the SRAM size when absent
  std::optional<int> bc;                  // B_c; from the SRAM size when absent
  std::optional<std::int64_t> sram_bytes; // M in bytes; kDefaultSramBytes when absent
  LoopOrder order = LoopOrder::kKvOuter;
  Pass pass = Pass::kForward;
  std::optional<double> scale;            // absent: 1/√d; "none" is 1
  bool causal = false;
};

// A resolved problem: every number the schedule needs.
struct AttentionProblem {
  int n = 0;
  int d = 0;
  int br = 0;  // B_r, rows of a Q tile
  int bc = 0;  // B_c, rows of a K/V tile
  LoopOrder order = LoopOrder::kKvOuter;
  Pass pass = Pass::kForward;
  double scale = 1.0;
  bool causal = false;
  std::int64_t sram_bytes = kDefaultSramBytes;  // M, the budget the occupancy is shown against

  bool backward() const { return pass == Pass::kBackward; }
  // The outer loop runs over K/V tiles: Algorithm 1's forward order, and the backward pass.
  bool KvOuterLoop() const { return backward() || order == LoopOrder::kKvOuter; }
  int tr() const { return (n + br - 1) / br; }  // T_r = ⌈N / B_r⌉
  int tc() const { return (n + bc - 1) / bc; }  // T_c = ⌈N / B_c⌉
  int RowBegin(int i) const { return i * br; }
  int RowsInTile(int i) const;  // B_r, or fewer for the last (edge) tile
  int ColBegin(int j) const { return j * bc; }
  int ColsInTile(int j) const;  // B_c, or fewer for the last (edge) tile
  // Causal: a tile pair whose every key index exceeds every query index does no work at all.
  bool TilePairActive(int i, int j) const;
  // The K/V tiles Q tile i meets: j = 0 … ActiveKvTiles(i) − 1 (all T_c of them without the mask).
  int ActiveKvTiles(int i) const;
  // Causal: key index k is masked for query index r when k > r.
  bool Masked(int row, int col) const { return causal && col > row; }
};

// Why a request cannot be run, or nothing when it can.
std::optional<std::string> ProblemRequestError(const ProblemRequest& request);

// Resolves the tile sizes as the assignment does: M = BYTES/4 floats, B_c = ⌈M/4d⌉, B_r = min(B_c, d), unless
// B_r/B_c are given; the backward pass takes B_r = B_c = the largest B whose tiles all fit in M (7·B·d + 2·B² + 2·B
// floats). Throws InputError with the reason when the request is impossible.
AttentionProblem ResolveProblem(const ProblemRequest& request);

double DefaultScale(int d);  // 1/√d

}  // namespace flashviz
