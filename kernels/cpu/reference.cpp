#include "kernels/cpu/reference.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include "kernels/common/parallel.h"

namespace flashviz {

void ReferenceAttentionRows(const float* q, const float* k, const float* v, int n, int d, double scale,
                            bool causal, int row_begin, int row_end, double* out, RowSoftmaxStats* stats) {
  std::vector<double> s(static_cast<std::size_t>(n));
  for (int row = row_begin; row < row_end; ++row) {
    const float* qr = q + static_cast<std::size_t>(row) * d;
    const int keys = causal ? row + 1 : n;  // causal: key index > query index is masked
    double m = -std::numeric_limits<double>::infinity();
    for (int col = 0; col < keys; ++col) {
      const float* kc = k + static_cast<std::size_t>(col) * d;
      double dot = 0.0;
      for (int e = 0; e < d; ++e) dot += static_cast<double>(qr[e]) * kc[e];
      s[col] = scale * dot;
      m = std::max(m, s[col]);
    }
    double l = 0.0;
    for (int col = 0; col < keys; ++col) l += (s[col] = std::exp(s[col] - m));
    double* o = out + static_cast<std::size_t>(row - row_begin) * d;
    std::fill(o, o + d, 0.0);
    for (int col = 0; col < keys; ++col) {
      const float* vc = v + static_cast<std::size_t>(col) * d;
      const double p = s[col] / l;
      for (int e = 0; e < d; ++e) o[e] += p * vc[e];
    }
    if (stats) stats[row - row_begin] = {m, l};
  }
}

std::vector<double> ReferenceAttention(const float* q, const float* k, const float* v, int n, int d, double scale,
                                       bool causal, int threads) {
  std::vector<double> out(static_cast<std::size_t>(n) * d);
  constexpr int kRowsPerTask = 16;
  const int tasks = (n + kRowsPerTask - 1) / kRowsPerTask;
  ParallelFor(tasks, threads, [&](std::int64_t t, int) {
    const int begin = static_cast<int>(t) * kRowsPerTask;
    const int end = std::min(n, begin + kRowsPerTask);
    ReferenceAttentionRows(q, k, v, n, d, scale, causal, begin, end, out.data() + static_cast<std::size_t>(begin) * d);
  });
  return out;
}

std::vector<double> ReferenceAttentionBatched(const float* qkv, int batch, int n, int d, double scale, bool causal,
                                              int threads) {
  const std::size_t head = static_cast<std::size_t>(n) * d;
  std::vector<double> out(head * static_cast<std::size_t>(batch));
  constexpr int kRowsPerTask = 16;
  const std::int64_t tasks_per_head = (n + kRowsPerTask - 1) / kRowsPerTask;
  ParallelFor(tasks_per_head * batch, threads, [&](std::int64_t t, int) {
    const std::int64_t b = t / tasks_per_head;
    const int begin = static_cast<int>(t % tasks_per_head) * kRowsPerTask;
    const int end = std::min(n, begin + kRowsPerTask);
    const float* q = qkv + static_cast<std::size_t>(b) * 3 * head;
    ReferenceAttentionRows(q, q + head, q + 2 * head, n, d, scale, causal, begin, end,
                           out.data() + static_cast<std::size_t>(b) * head + static_cast<std::size_t>(begin) * d);
  });
  return out;
}

}  // namespace flashviz
