// The fast CPU FlashAttention (fp32): the Q-outer tiled algorithm with 64-row Q tiles and 64-key K/V tiles,
// register-blocked SIMD micro-kernels (AVX2+FMA when the processor has it), a vectorized exp, and the row
// tiles of all heads spread over the hardware threads. It serves `hw4 --backend cpu` and is benchmarked
// against the float64 reference (bench/cpu_attention_bench.cpp).
#pragma once

#include <cstdint>
#include <functional>
#include <string_view>

namespace flashviz {

// Called with the fraction of the work done (0..1), from worker threads, at most about a hundred times.
using ProgressCallback = std::function<void(double fraction)>;

// `batch` heads in the HW4 layout (per batch: Q, K, V, each N×d row-major float32); `out` gets batch×N×d.
void FastAttentionBatched(const float* qkv, int batch, int n, int d, float scale, bool causal, float* out,
                          int threads = 0, const ProgressCallback& progress = {});

// One head with separate Q, K, V arrays.
void FastAttention(const float* q, const float* k, const float* v, int n, int d, float scale, bool causal,
                   float* out, int threads = 0);

// The instruction set the micro-kernels run with on this processor: "avx2+fma" or "generic".
std::string_view FastAttentionIsa();

}  // namespace flashviz
