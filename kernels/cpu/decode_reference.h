// Reference decoding attention in float64: every query row of every query head against all N keys of the KV head
// it reads (grouped-query attention: query head h reads KV head ⌊h·G/H⌋, so consecutive query heads share one, as
// PyTorch's scaled_dot_product_attention does with enable_gqa). No mask: a decoding step's query rows come after
// every key in the cache. It shares nothing with the split-KV model (kernels/cpu/decode.h) or the CUDA kernels
// beyond the layout, so it can judge both.
#pragma once

#include <vector>

namespace flashviz {

// The logical layout of one sequence's decoding step (head-major, row-major within a head), float32:
// Q is H × R × d, K and V are G × N × d each; O is H × R × d.
struct DecodeShape {
  int heads = 1;     // H, query heads
  int kv_heads = 1;  // G, KV heads; divides H
  int q_rows = 1;    // R, query rows per head (1 for one generated token; more for speculative decoding)
  int kv_len = 1;    // N, keys in the cache
  int d = 64;
  double scale = 1.0;
  int group() const { return heads / kv_heads; }  // query heads per KV head
  // The KV head query head h reads.
  int KvHeadOf(int h) const { return static_cast<int>(static_cast<long long>(h) * kv_heads / heads); }
};

// O (H × R × d) in float64; parallel over heads.
std::vector<double> ReferenceDecode(const DecodeShape& shape, const float* q, const float* k, const float* v,
                                    int threads = 0);

}  // namespace flashviz
