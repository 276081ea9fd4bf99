#include "kernels/cpu/backward_reference.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include "kernels/common/parallel.h"

namespace flashviz {
namespace {

double Dot(const float* a, const float* b, int d) {
  double sum = 0.0;
  for (int e = 0; e < d; ++e) sum += static_cast<double>(a[e]) * b[e];
  return sum;
}

}  // namespace

ReferenceGradients ReferenceBackward(const float* q, const float* k, const float* v, const float* dout, int n, int d,
                                     double scale, bool causal, int threads) {
  const auto nd = static_cast<std::size_t>(n) * d;
  ReferenceGradients g;
  g.o.assign(nd, 0.0);
  g.lse.assign(static_cast<std::size_t>(n), -std::numeric_limits<double>::infinity());
  g.dq.assign(nd, 0.0);
  g.dk.assign(nd, 0.0);
  g.dv.assign(nd, 0.0);
  std::vector<double> delta(static_cast<std::size_t>(n), 0.0);  // D_r = rowsum(dO ∘ O)
  auto row_of = [d](const float* base, int r) { return base + static_cast<std::size_t>(r) * d; };
  auto keys_of = [&](int row) { return causal ? std::min(n, row + 1) : n; };

  // Pass 1, per query row: S, P (two-pass softmax), O, L, D and dQ = scale·Σ_c dS_rc K_c.
  ParallelFor(n, threads, [&](std::int64_t index, int) {
    const int row = static_cast<int>(index);
    const int keys = keys_of(row);
    std::vector<double> s(static_cast<std::size_t>(keys));
    double m = -std::numeric_limits<double>::infinity();
    for (int c = 0; c < keys; ++c) m = std::max(m, s[c] = scale * Dot(row_of(q, row), row_of(k, c), d));
    double l = 0.0;
    for (int c = 0; c < keys; ++c) l += std::exp(s[c] - m);
    if (keys == 0) return;
    g.lse[row] = m + std::log(l);
    double* o = g.o.data() + static_cast<std::size_t>(row) * d;
    for (int c = 0; c < keys; ++c) {
      const double p = std::exp(s[c] - g.lse[row]);
      for (int e = 0; e < d; ++e) o[e] += p * row_of(v, c)[e];
    }
    double dd = 0.0;
    for (int e = 0; e < d; ++e) dd += static_cast<double>(row_of(dout, row)[e]) * o[e];
    delta[row] = dd;
    double* dq = g.dq.data() + static_cast<std::size_t>(row) * d;
    for (int c = 0; c < keys; ++c) {
      const double p = std::exp(s[c] - g.lse[row]);
      const double ds = p * (Dot(row_of(dout, row), row_of(v, c), d) - dd);
      for (int e = 0; e < d; ++e) dq[e] += scale * ds * row_of(k, c)[e];
    }
  });

  // Pass 2, per key: dV_c = Σ_r P_rc dO_r and dK_c = scale·Σ_r dS_rc Q_r over the rows that see key c.
  ParallelFor(n, threads, [&](std::int64_t index, int) {
    const int col = static_cast<int>(index);
    double* dk = g.dk.data() + static_cast<std::size_t>(col) * d;
    double* dv = g.dv.data() + static_cast<std::size_t>(col) * d;
    for (int row = causal ? col : 0; row < n; ++row) {
      const double p = std::exp(scale * Dot(row_of(q, row), row_of(k, col), d) - g.lse[row]);
      const double ds = p * (Dot(row_of(dout, row), row_of(v, col), d) - delta[row]);
      for (int e = 0; e < d; ++e) {
        dv[e] += p * row_of(dout, row)[e];
        dk[e] += scale * ds * row_of(q, row)[e];
      }
    }
  });
  return g;
}

}  // namespace flashviz
