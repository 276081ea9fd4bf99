#include "kernels/cpu/decode_reference.h"

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <limits>

#include "kernels/common/parallel.h"

namespace flashviz {

std::vector<double> ReferenceDecode(const DecodeShape& shape, const float* q, const float* k, const float* v,
                                    int threads) {
  const int d = shape.d, n = shape.kv_len, rows = shape.q_rows;
  std::vector<double> out(static_cast<std::size_t>(shape.heads) * rows * d);
  ParallelFor(static_cast<std::int64_t>(shape.heads) * rows, threads, [&](std::int64_t task, int) {
    const int h = static_cast<int>(task / rows);
    const std::size_t kv_offset = static_cast<std::size_t>(shape.KvHeadOf(h)) * n * d;
    const float* qr = q + static_cast<std::size_t>(task) * d;
    std::vector<double> s(static_cast<std::size_t>(n));
    double m = -std::numeric_limits<double>::infinity();
    for (int key = 0; key < n; ++key) {
      const float* kr = k + kv_offset + static_cast<std::size_t>(key) * d;
      double dot = 0;
      for (int e = 0; e < d; ++e) dot += static_cast<double>(qr[e]) * kr[e];
      s[key] = shape.scale * dot;
      m = std::max(m, s[key]);
    }
    double l = 0;
    for (int key = 0; key < n; ++key) l += (s[key] = std::exp(s[key] - m));
    double* o = out.data() + static_cast<std::size_t>(task) * d;
    for (int key = 0; key < n; ++key) {
      const float* vr = v + kv_offset + static_cast<std::size_t>(key) * d;
      const double p = s[key] / l;
      for (int e = 0; e < d; ++e) o[e] += p * vr[e];
    }
  });
  return out;
}

}  // namespace flashviz
