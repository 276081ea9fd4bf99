#include "kernels/cpu/ledger.h"

#include <algorithm>

namespace flashviz {

std::string_view HbmTensorName(HbmTensor tensor) {
  static constexpr std::string_view kNames[kHbmTensorCount] = {
      "Q", "K", "V", "O", "l", "m", "L", "S", "P", "dO", "dQ", "dK", "dV", "D", "dP", "dS", "blocks", "O_s", "m_s,l_s"};
  return kNames[static_cast<int>(tensor)];
}

std::int64_t Ledger::HbmReadBytes() const {
  std::int64_t total = 0;
  for (const Traffic& t : hbm) total += t.read_bytes;
  return total;
}

std::int64_t Ledger::HbmWriteBytes() const {
  std::int64_t total = 0;
  for (const Traffic& t : hbm) total += t.write_bytes;
  return total;
}

Ledger LedgerDelta(const Ledger& before, const Ledger& after) {
  Ledger delta = after;
  for (int t = 0; t < kHbmTensorCount; ++t) {
    delta.hbm[t].read_bytes -= before.hbm[t].read_bytes;
    delta.hbm[t].write_bytes -= before.hbm[t].write_bytes;
  }
  delta.sram_read_bytes -= before.sram_read_bytes;
  delta.sram_write_bytes -= before.sram_write_bytes;
  return delta;
}

Ledger StandardAttentionLedger(int n, int d) {
  Ledger ledger;
  const std::int64_t row = n;  // one row of S or P holds N floats
  // Stage 1, S = scale·Q·Kᵀ: every row of Q and K is read once, every row of S written once.
  for (int r = 0; r < n; ++r) {
    ledger.ReadHbm(HbmTensor::kQ, d);
    ledger.ReadHbm(HbmTensor::kK, d);
    ledger.WriteHbm(HbmTensor::kS, row);
  }
  // Stage 2, P = softmax(S) row by row: S read back, P written.
  for (int r = 0; r < n; ++r) {
    ledger.ReadHbm(HbmTensor::kS, row);
    ledger.WriteHbm(HbmTensor::kP, row);
  }
  // Stage 3, O = P·V: P read back, every row of V read once, O written.
  for (int r = 0; r < n; ++r) {
    ledger.ReadHbm(HbmTensor::kP, row);
    ledger.ReadHbm(HbmTensor::kV, d);
    ledger.WriteHbm(HbmTensor::kO, d);
  }
  return ledger;
}

Ledger StandardAttentionBackwardLedger(int n, int d) {
  Ledger ledger;
  const std::int64_t row = n;
  for (int r = 0; r < n; ++r) {  // dV = Pᵀ dO: row r of P and of dO meet every row of dV
    ledger.ReadHbm(HbmTensor::kP, row);
    ledger.ReadHbm(HbmTensor::kDO, d);
    ledger.WriteHbm(HbmTensor::kDV, d);
  }
  for (int r = 0; r < n; ++r) {  // dP = dO Vᵀ
    ledger.ReadHbm(HbmTensor::kDO, d);
    ledger.ReadHbm(HbmTensor::kV, d);
    ledger.WriteHbm(HbmTensor::kDP, row);
  }
  for (int r = 0; r < n; ++r) {  // dS = P ∘ (dP − rowsum(P ∘ dP)), the softmax's backward row by row
    ledger.ReadHbm(HbmTensor::kP, row);
    ledger.ReadHbm(HbmTensor::kDP, row);
    ledger.WriteHbm(HbmTensor::kDS, row);
  }
  for (int r = 0; r < n; ++r) {  // dQ = scale·dS K
    ledger.ReadHbm(HbmTensor::kDS, row);
    ledger.ReadHbm(HbmTensor::kK, d);
    ledger.WriteHbm(HbmTensor::kDQ, d);
  }
  for (int r = 0; r < n; ++r) {  // dK = scale·dSᵀ Q
    ledger.ReadHbm(HbmTensor::kDS, row);
    ledger.ReadHbm(HbmTensor::kQ, d);
    ledger.WriteHbm(HbmTensor::kDK, d);
  }
  return ledger;
}

Ledger LedgerSum(const Ledger& a, const Ledger& b) {
  Ledger sum = a;
  for (int t = 0; t < kHbmTensorCount; ++t) {
    sum.hbm[t].read_bytes += b.hbm[t].read_bytes;
    sum.hbm[t].write_bytes += b.hbm[t].write_bytes;
  }
  sum.sram_read_bytes += b.sram_read_bytes;
  sum.sram_write_bytes += b.sram_write_bytes;
  sum.sram_bytes = std::max(a.sram_bytes, b.sram_bytes);
  sum.sram_peak_bytes = std::max(a.sram_peak_bytes, b.sram_peak_bytes);
  return sum;
}

}  // namespace flashviz
