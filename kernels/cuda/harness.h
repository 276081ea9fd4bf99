// The validation and timing harness every CUDA variant goes through (docs/design.md, principle 5): fresh random
// inputs, the output poisoned with NaN before every run, the result checked against the float64 CPU reference
// (kernels/cpu/reference.h) before any timing; then CUDA-event timing with warm-up, L2 flushed before every
// repeat, median and minimum of the repeats. Plain C++ (no cuda_runtime.h): `flashviz bench`, the GUI and the
// tests include it; it is implemented in the CUDA library (harness.cu) and exists only in CUDA builds.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>

#include "kernels/cuda/attention_types.h"
#include "kernels/cuda/bench_results.h"
#include "kernels/cuda/registry.h"

namespace flashviz::cuda {

// Why the kernels cannot run in this process ("no CUDA device: ...", "NVIDIA X is sm_75: the kernels are built
// for sm_90"), or nothing when they can.
std::optional<std::string> CudaUnavailableReason();
// "NVIDIA H200 (sm_90, 132 SMs, 139.8 GiB)"; empty when there is no device.
std::string DeviceDescription();
std::string DeviceName();  // "NVIDIA H200"

// The largest |kernel − reference| allowed for each dtype, on the harness's inputs (uniform in [−1, 1]):
// fp32 1e-4 (fp32 arithmetic lands near 1e-6); fp16 4e-3 (P̃ and O rounded to 11 significant bits); bf16
// 1.6e-2 (8 bits). A wrong index or a missing rescale gives errors of 1e-2 and more.
double Tolerance(DType dtype);

enum class InputPattern {
  kUniform,      // Q, K, V uniform in [−1, 1]
  kWide,         // uniform in [−3, 3] (the HW4 range): larger scores, sharper softmax
  kRisingKeys,   // scores grow with the key index, so the running max m_i changes at every K/V tile
};

struct MeasureOptions {
  int warmup = 2;
  int repeats = 20;          // reported figures use at least 20
  bool flush_l2 = true;      // write 256 MB before every timed run, so no input starts in the 50 MB L2
  std::uint64_t seed = 1;    // fresh inputs: the caller changes it for every measurement
  InputPattern pattern = InputPattern::kUniform;
  bool validate_all_rows = false;  // tests: every row of every head; bench: sampled heads and rows
  bool time = true;          // false: validate only
  unsigned variant_options = 0;    // AttentionArgs::options
};

enum class MeasureStatus { kOk, kNotApplicable, kValidationFailed, kError };
std::string_view MeasureStatusName(MeasureStatus status);  // "ok", "not applicable", ...

struct Measurement {
  MeasureStatus status = MeasureStatus::kError;
  std::string reason;             // why not applicable / what failed
  double ms_median = 0, ms_min = 0;
  double tflops = 0;              // AttentionFlops(shape) / median (causal: half the FLOPs)
  double max_abs_error = 0;       // over the validated rows
  double tolerance = 0;
  double hbm_bytes = 0;           // what the algorithm must move (the variant's byte model)
  std::int64_t validated_rows = 0;
  bool Ok() const { return status == MeasureStatus::kOk; }
};

// Validates `variant` on fresh inputs, then (options.time) times it. A variant is timed only after it matched.
// A CUDA error leaves status kError with the error's text; a sticky error (the context is lost) also says so.
Measurement MeasureVariant(const VariantInfo& variant, const AttentionShape& shape, DType dtype,
                           const MeasureOptions& options);

// A sweep point's measurement as one row of `bench`'s CSV, on `gpu`: NaN where nothing was measured, and the
// status with its reason when the point was not timed.
BenchRow ToBenchRow(const SweepPoint& point, DType dtype, const Measurement& m, const std::string& gpu);

// True once a kernel fault has poisoned the CUDA context: every later call fails, so sweeps should stop.
bool CudaContextLost();

}  // namespace flashviz::cuda
