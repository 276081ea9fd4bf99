// The validation and timing harness of the backward variants, the forward harness's protocol
// (kernels/cuda/harness.h) applied to the backward pass: fresh random Q, K, V and dO (uniform in [−1, 1]); O and
// L from a forward kernel of the harness's own (fp32 accumulation, not timed); dQ, dK, dV poisoned with NaN
// before every run; every element checked for being written, then the sampled heads (all heads for tests)
// checked against the float64 reference (kernels/cpu/backward_reference.h) before any timing; then CUDA-event
// timing with warm-up, L2 flushed before every repeat, median and minimum. Plain C++ (no cuda_runtime.h);
// implemented in the CUDA library (backward_harness.cu), present only in CUDA builds.
#pragma once

#include "kernels/cuda/attention_types.h"
#include "kernels/cuda/harness.h"  // MeasureOptions, Measurement (the same fields, the same CSV row)

namespace flashviz::cuda {

// The error measure of the backward pass, per tensor: max |kernel − reference| / max |reference| over the
// validated heads (a gradient's scale depends on N and d, so an absolute bound would not carry across shapes);
// Measurement::max_abs_error holds the largest of dQ's, dK's and dV's. Allowed: fp32 1e-4 (fp32 arithmetic lands
// near 1e-6); fp16 4·2⁻¹¹ ≈ 2.0e-3 and bf16 4·2⁻⁸ ≈ 1.6e-2: O, P and dS are rounded to the input type before
// they enter a matrix product (each a relative error of up to one unit 2⁻¹¹ or 2⁻⁸), the rounding errors of the
// N terms of a gradient add up like a random walk while the gradient itself grows the same way, so the measure
// stays near one unit (measured on the H100, 2026-11-25, 125 test cases: at most 1.2 units in fp16, 1.3 in bf16;
// PyTorch's backends at most 2 units); a wrong index, mask or missing scale gives errors of order 1.
double BackwardTolerance(DType dtype);

// Validates `variant` (a row of BackwardCatalogue()) on fresh inputs, then (options.time) times it.
// options.validate_all_rows checks every head; otherwise the first, middle and last heads (the last alone for
// N > 4096, where the float64 reference takes seconds per head). The reference gradients of a shape, dtype and
// seed are kept for the next variant measured on the same inputs (a sweep gives the variants of one N one seed).
Measurement MeasureBackward(const VariantInfo& variant, const AttentionShape& shape, DType dtype,
                            const MeasureOptions& options);

}  // namespace flashviz::cuda
