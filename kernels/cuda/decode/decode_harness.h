// The validation and timing harness of the decoding kernels, the forward harness's protocol (kernels/cuda/harness.h)
// applied to a decoding step: fresh random Q, K, V (uniform in [−1, 1], a hash of the seed and the element's
// logical index, so the contiguous and the paged cache hold the same values, and the host recomputes them exactly);
// the paged pool's pages shuffled (a random block table); O poisoned with NaN before every run; every element of O
// checked for being written; then sampled (sequence, KV head) pairs (all of them for tests) compared with the
// float64 reference (kernels/cpu/decode_reference.h); then CUDA-event timing: warm-up, L2 flushed before every
// repeat, median and minimum. Plain C++ (no cuda_runtime.h); implemented in decode_harness.cu (CUDA builds).
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

#include "kernels/cuda/decode/decode_registry.h"
#include "kernels/cuda/harness.h"  // Measurement, MeasureStatus

namespace flashviz::cuda {

// max |kernel − reference| allowed over O, on the harness's inputs (|v| ≤ 1, so |O| ≤ 1). Two sources of error
// beyond fp32 arithmetic (about 1e-5 here): the probabilities P̃ are rounded to the dtype before P̃·V (flash_decode's
// tensor cores take 16-bit operands) while ℓ sums them unrounded, an error of at most u·max|v| = u; and O itself is
// rounded to the dtype, at most u·|O| ≤ u. u = 2⁻¹¹ (fp16), 2⁻⁸ (bf16). Tolerance 2u: fp16 9.8e-4, bf16 7.8e-3.
// A wrong key range, a lost split or a missing rescale gives errors of order 0.1. (decode_naive rounds only O.)
double DecodeTolerance(DType dtype);

struct DecodeMeasureOptions {
  int warmup = 2;
  int repeats = 20;           // reported figures use at least 20
  bool flush_l2 = true;       // write 256 MB before every timed run
  std::uint64_t seed = 1;     // fresh inputs: the caller changes it for every measurement
  bool validate_all = false;  // tests: every (sequence, KV head); bench: the first and the last
  bool time = true;           // false: validate only
  bool compare = true;        // false: no float64 comparison (sweeps of a tested kernel), only every O written
  int splits = 0;             // flash_decode's split count forced (> 0), or the automatic rule (0)
};

struct DecodeMeasurement : Measurement {
  double kv_bytes = 0;  // DecodeKvCacheBytes: the least a decoding step reads
  double gbps = 0;      // kv_bytes / ms_median
  int splits = 0;       // the split count the kernel ran with (1 for decode_naive)
};

// Validates `variant` (a row of DecodeCatalogue()) on fresh inputs, then (options.time) times it. A problem whose
// buffers do not fit in the free device memory is "not applicable" with the sizes in the reason.
DecodeMeasurement MeasureDecode(const VariantInfo& variant, const DecodeLaunchShape& problem, DType dtype,
                                const DecodeMeasureOptions& options);

// The HBM bandwidth ceiling the decode figures are judged against: a device copy of `bytes` (two buffers of that
// size, 16-byte loads and stores, grid-stride), (read + write bytes) / median time of `repeats` runs after a warm-up.
struct CopyBandwidth {
  double gbps = 0;
  double ms_median = 0;
  std::size_t bytes = 0;  // copied per run (read once, written once)
  std::string error;      // empty when measured
};
CopyBandwidth MeasureCopyBandwidth(std::size_t bytes, int repeats);

}  // namespace flashviz::cuda
