// Reference attention in float64: O = softmax(scale · Q Kᵀ + mask) · V, the ground truth every other path
// (the stepper, the fast CPU path, the CUDA kernels, hw4) is checked against. Written for clarity: one query
// row at a time, the textbook two-pass softmax.
#pragma once

#include <cstdint>
#include <vector>

namespace flashviz {

struct RowSoftmaxStats {
  double m;  // max_k s_k over the unmasked keys
  double l;  // Σ_k e^(s_k − m)
};

// Rows [row_begin, row_end) of one head (row-major N×d inputs); writes (row_end − row_begin) × d values to
// `out` and, when `stats` is not null, the softmax statistics of each row.
void ReferenceAttentionRows(const float* q, const float* k, const float* v, int n, int d, double scale,
                            bool causal, int row_begin, int row_end, double* out, RowSoftmaxStats* stats = nullptr);

// All rows of `batch` heads stored one after another (the HW4 layout: per batch Q, K, V each N×d), in parallel.
// Returns batch × N × d values.
std::vector<double> ReferenceAttentionBatched(const float* qkv, int batch, int n, int d, double scale, bool causal,
                                              int threads = 0);

// One head with separate Q, K, V arrays.
std::vector<double> ReferenceAttention(const float* q, const float* k, const float* v, int n, int d, double scale,
                                       bool causal, int threads = 0);

}  // namespace flashviz
