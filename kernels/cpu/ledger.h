// The traffic ledger: bytes moved between HBM and SRAM, per tensor, and between SRAM and the compute units.
// docs/design.md, principle 2: these counters are only ever incremented where a schedule loads or stores a tile
// (edge tiles at their real size). The tests hold them against the closed forms, never the other way round.
#pragma once

#include <array>
#include <cstdint>
#include <string_view>

namespace flashviz {

// The tensors that live in HBM. S, P, dP and dS exist in HBM only in standard attention; dO, dQ, dK, dV and
// D = rowsum(dO ∘ O) only in the backward pass; the block table (int32 entries, 4 bytes like a float) and the
// split-KV partials (O_s, and m_s with ℓ_s) only in decoding.
enum class HbmTensor : std::uint8_t {
  kQ,
  kK,
  kV,
  kO,
  kL,
  kM,
  kLse,
  kS,
  kP,
  kDO,
  kDQ,
  kDK,
  kDV,
  kD,
  kDP,
  kDS,
  kBlockTable,
  kOPartial,
  kStatsPartial
};
inline constexpr int kHbmTensorCount = 19;
// "Q", "K", "V", "O", "l", "m", "L", "S", "P", "dO", "dQ", "dK", "dV", "D", "dP", "dS", "blocks", "O_s", "m_s,l_s"
std::string_view HbmTensorName(HbmTensor tensor);

struct Traffic {
  std::int64_t read_bytes = 0;
  std::int64_t write_bytes = 0;
  bool operator==(const Traffic&) const = default;
};

struct Ledger {
  std::array<Traffic, kHbmTensorCount> hbm{};
  std::int64_t sram_read_bytes = 0;   // operands the compute units read from SRAM
  std::int64_t sram_write_bytes = 0;  // results the compute units wrote to SRAM
  std::int64_t sram_bytes = 0;        // SRAM occupied right now (live tiles)
  std::int64_t sram_peak_bytes = 0;   // the most it has held so far

  const Traffic& operator[](HbmTensor t) const { return hbm[static_cast<int>(t)]; }
  std::int64_t HbmReadBytes() const;
  std::int64_t HbmWriteBytes() const;
  std::int64_t HbmBytes() const { return HbmReadBytes() + HbmWriteBytes(); }

  // The only mutators. Byte counts are floats × 4 (the model moves fp32 values, as the kernels do).
  void ReadHbm(HbmTensor t, std::int64_t floats) { hbm[static_cast<int>(t)].read_bytes += 4 * floats; }
  void WriteHbm(HbmTensor t, std::int64_t floats) { hbm[static_cast<int>(t)].write_bytes += 4 * floats; }
  void ComputeReadsSram(std::int64_t floats) { sram_read_bytes += 4 * floats; }
  void ComputeWritesSram(std::int64_t floats) { sram_write_bytes += 4 * floats; }
  void SetSramOccupancy(std::int64_t bytes) {
    sram_bytes = bytes;
    if (bytes > sram_peak_bytes) sram_peak_bytes = bytes;
  }

  bool operator==(const Ledger&) const = default;
};

// The difference of two cumulative ledgers: what one step moved. Occupancy fields are taken from `after`.
Ledger LedgerDelta(const Ledger& before, const Ledger& after);

// Standard attention for the same problem, counted by walking its three stages (S = scale·QKᵀ written to
// HBM, P = softmax(S) read and written back, O = PV), each matrix read or written once per stage:
// reads 2Nd + N² + N² + Nd floats, writes N² + N² + Nd floats.
Ledger StandardAttentionLedger(int n, int d);

// Standard attention's backward pass (what autograd does with the P the forward pass stored), stage by stage:
// dV = Pᵀ dO (P, dO read; dV written), dP = dO Vᵀ (dO, V read; dP written), dS = P ∘ (dP − rowsum(P ∘ dP))
// (P, dP read; dS written), dQ = scale·dS K (dS, K read; dQ written), dK = scale·dSᵀ Q (dS, Q read; dK written):
// reads 5N² + 5Nd floats, writes 2N² + 3Nd floats.
Ledger StandardAttentionBackwardLedger(int n, int d);

// The sum of two ledgers' traffic (forward + backward); occupancy fields are the larger of the two.
Ledger LedgerSum(const Ledger& a, const Ledger& b);

}  // namespace flashviz
