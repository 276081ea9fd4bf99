// Reference backward pass in float64, written the way autograd differentiates standard attention: every row of
// S = scale·QKᵀ (+ mask), P = softmax(S) and dP = dO·Vᵀ is formed in full, then dS = P ∘ (dP − rowsum(dO ∘ O)),
// dQ = scale·dS·K, dK = scale·dSᵀ·Q, dV = Pᵀ·dO. It shares nothing with the tiled model (kernels/cpu/backward.h)
// or the CUDA kernels beyond the input layout, so it can judge both.
#pragma once

#include <vector>

namespace flashviz {

struct ReferenceGradients {
  std::vector<double> o;           // N × d, the forward output
  std::vector<double> lse;         // N, L = m + log ℓ (−∞ for a row with every key masked)
  std::vector<double> dq, dk, dv;  // N × d each
};

// One head, row-major N×d float32 inputs and upstream gradient dO. Parallel over rows (dQ) and keys (dK, dV).
ReferenceGradients ReferenceBackward(const float* q, const float* k, const float* v, const float* dout, int n, int d,
                                     double scale, bool causal, int threads = 0);

}  // namespace flashviz
