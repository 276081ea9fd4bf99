#include "kernels/cpu/problem.h"

#include <algorithm>
#include <cmath>
#include "kernels/common/format.h"

namespace flashviz {

std::string_view LoopOrderName(LoopOrder order) { return order == LoopOrder::kKvOuter ? "kv" : "q"; }

std::optional<LoopOrder> ParseLoopOrder(std::string_view text) {
  if (text == "kv") return LoopOrder::kKvOuter;
  if (text == "q") return LoopOrder::kQOuter;
  return std::nullopt;
}

std::string_view PassName(Pass pass) { return pass == Pass::kForward ? "forward" : "backward"; }

std::optional<Pass> ParsePass(std::string_view text) {
  if (text == "forward") return Pass::kForward;
  if (text == "backward") return Pass::kBackward;
  return std::nullopt;
}

double DefaultScale(int d) { return 1.0 / std::sqrt(static_cast<double>(d)); }

int AttentionProblem::RowsInTile(int i) const { return std::min(br, n - RowBegin(i)); }
int AttentionProblem::ColsInTile(int j) const { return std::min(bc, n - ColBegin(j)); }

bool AttentionProblem::TilePairActive(int i, int j) const {
  if (!causal) return true;
  const int last_row = RowBegin(i) + RowsInTile(i) - 1;
  return ColBegin(j) <= last_row;
}

int AttentionProblem::ActiveKvTiles(int i) const {
  if (!causal) return tc();
  return std::min(tc(), (RowBegin(i) + RowsInTile(i) - 1) / bc + 1);
}

std::optional<std::string> ProblemRequestError(const ProblemRequest& r) {
  if (r.n < 1 || r.n > kMaxSequenceLength)
    return Sprintf("N = %d is out of range: N must be between 1 and %d", r.n, kMaxSequenceLength);
  if (r.d < 1 || r.d > kMaxHeadDim)
    return Sprintf("d = %d is out of range: d must be between 1 and %d", r.d, kMaxHeadDim);
  if (r.br && *r.br < 1) return Sprintf("B_r = %d is impossible: a Q tile needs at least one row", *r.br);
  if (r.bc && *r.bc < 1) return Sprintf("B_c = %d is impossible: a K/V tile needs at least one row", *r.bc);
  if (r.br && *r.br > kMaxSequenceLength)
    return Sprintf("B_r = %d is out of range (at most %d)", *r.br, kMaxSequenceLength);
  if (r.bc && *r.bc > kMaxSequenceLength)
    return Sprintf("B_c = %d is out of range (at most %d)", *r.bc, kMaxSequenceLength);
  if (r.sram_bytes) {
    // Algorithm 1 sizes its tiles so that K_j, V_j, Q_i and O_i fit: at least one row of each.
    const std::int64_t one_row_each = 16LL * r.d;
    if (*r.sram_bytes < one_row_each)
      return Sprintf(
          "SRAM of %lld bytes is too small for one row each of Q_i, K_j, V_j and O_i: needs at least 4·4·d = "
          "%lld bytes",
          static_cast<long long>(*r.sram_bytes), static_cast<long long>(one_row_each));
    // The backward pass holds K_j, V_j, dK_j, dV_j, Q_i, dO_i, dQ_i (d each), S/P, dP/dS, L_i and D_i (1 each) for
    // one row each: 7d + 4 floats.
    const std::int64_t one_backward_row = 4LL * (7LL * r.d + 4);
    if (r.pass == Pass::kBackward && !(r.br && r.bc) && *r.sram_bytes < one_backward_row)
      return Sprintf(
          "SRAM of %lld bytes is too small for the backward pass's tiles of one row each (K_j, V_j, dK_j, dV_j, "
          "Q_i, dO_i, dQ_i, S/P, dP/dS, L_i, D_i): needs at least 4·(7d + 4) = %lld bytes",
          static_cast<long long>(*r.sram_bytes), static_cast<long long>(one_backward_row));
    if (*r.sram_bytes > (std::int64_t{1} << 40))
      return Sprintf("SRAM of %lld bytes is out of range (at most 1 TiB)", static_cast<long long>(*r.sram_bytes));
  }
  if (r.scale && !std::isfinite(*r.scale)) return "the scale must be a finite number (or \"none\")";
  return std::nullopt;
}

AttentionProblem ResolveProblem(const ProblemRequest& r) {
  if (auto error = ProblemRequestError(r)) throw InputError(*error);
  AttentionProblem p;
  p.n = r.n;
  p.d = r.d;
  p.order = r.order;
  p.pass = r.pass;
  p.causal = r.causal;
  p.scale = r.scale.value_or(DefaultScale(r.d));
  p.sram_bytes = r.sram_bytes.value_or(kDefaultSramBytes);
  const std::int64_t m_floats = p.sram_bytes / 4;                            // M
  if (r.pass == Pass::kBackward) {
    // The backward pass holds K_j, V_j, dK_j, dV_j, Q_i, dO_i, dQ_i, L_i, D_i, S_ij/P_ij and dP_ij/dS_ij at once:
    // 7·B·d + 2·B² + 2·B floats for B_r = B_c = B. The largest B that fits in M (at least one row).
    std::int64_t b = 1;
    while (b < kMaxSequenceLength && 7 * (b + 1) * r.d + 2 * (b + 1) * (b + 1) + 2 * (b + 1) <= m_floats) ++b;
    p.bc = r.bc.value_or(static_cast<int>(b));
    p.br = r.br.value_or(static_cast<int>(b));
    return p;
  }
  const std::int64_t bc_from_sram = (m_floats + 4LL * r.d - 1) / (4LL * r.d);  // ⌈M / 4d⌉
  // A tile may be larger than N (then it is one edge tile of N rows); the cap only keeps indices in int range.
  p.bc = r.bc.value_or(static_cast<int>(std::min<std::int64_t>(bc_from_sram, kMaxSequenceLength)));
  p.br = r.br.value_or(static_cast<int>(std::min<std::int64_t>(bc_from_sram, r.d)));
  return p;
}

}  // namespace flashviz
