// flash2_mma_bench: the standalone driver for iterating on kernels/cuda/mma: flash2_mma and
// flash3_wgmma. It validates, then times.
//
//   flash2_mma_bench time [--kernel flash2_mma,flash3_wgmma,flash3_fp8] [--n 1024,2048,...] [--d 64,128,256]
//                         [--dtype fp16,bf16]
//                         [--causal 0,1] [--options 0,8,...] [--reps 20] [--csv FILE]
//   flash2_mma_bench sanitize [--kernel K] [--heads H] [--n N] [OPTIONS-LIST]
//                                              one small checked launch per options word (default: every flash2_mma
//                                              kernel; flash3_wgmma: 0, 1, 2, 4), dtype, d and causal flag: what
//                                              compute-sanitizer runs over; --heads H (default 2) sets B·H, so that
//                                              a persistent grid's blocks take several work tiles; --n N (default 200)
//                                              the sequence length (flash3_fp8 cuts the last passes' work tiles from
//                                              N = 1921 at d = 128: --heads 17 --n 2000)
//
// Timing (docs/design.md, principle 5): B·H fills the chip as in docs/peers.md (1024 at N ≤ 2048, 256 at 4096,
// 64 at 8192, 16 at 16384; H = 16), fresh N(0, 1) inputs per shape, two input sets used in turn (each set is
// larger than the 60 MB L2 at every size here), 3 warm-up launches, then the median of `reps` launches each timed
// by its own pair of CUDA events. A shape is timed only after its output matched the float64 reference on
// sampled rows (the first and last 64 rows of the first and last head, and 64 rows in the middle) and every
// output element was written (the output is poisoned with NaN first). TFLOP/s counts 4·B·H·N²·d for the
// full problem and half of that for causal (the convention of the FlashAttention papers). Right after a shape's
// timed launches the SM clock is measured on the device (mma_check::MeasureSmClockMhz), printed and written to the
// CSV (sm_mhz): the power cap can hold it below the maximum, and a slow row then says so.
#include <cuda_runtime.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include "kernels/common/format.h"
#include "kernels/cuda/mma/flash2_mma.h"
#include "kernels/cuda/mma/flash3_wgmma.h"
#include "kernels/cuda/mma/mma_check.h"

namespace {

using flashviz::Sprintf;
using namespace flashviz::cuda;

std::vector<int> ParseList(const std::string& text) {
  std::vector<int> values;
  std::size_t start = 0;
  while (start <= text.size()) {
    const std::size_t comma = text.find(',', start);
    const std::string item = text.substr(start, comma == std::string::npos ? std::string::npos : comma - start);
    if (!item.empty()) values.push_back(static_cast<int>(std::strtol(item.c_str(), nullptr, 0)));
    if (comma == std::string::npos) break;
    start = comma + 1;
  }
  return values;
}

// The kernels this driver runs: the registry's three functions and the name of an options word.
struct Kernel {
  const char* name;
  cudaError_t (*launch)(const AttentionArgs&);
  std::optional<std::string> (*not_applicable)(const AttentionShape&, DType);  // such shapes are skipped
  std::size_t (*workspace_bytes)(const AttentionShape&, DType);
  std::string (*options_name)(unsigned);
  unsigned all_options;  // an --options word with other bits is skipped for this kernel
  // Options with this bit reuse what a launch without it left in the workspace (flash3_fp8's quantized inputs):
  // such a launch on the validated input set goes first.
  unsigned reuses_workspace = 0;
  double relative_tolerance = 0;  // 0: mma_check::Tolerance of the dtype
};
const Kernel kKernels[] = {
    {"flash2_mma", &LaunchFlash2Mma, &Flash2MmaNotApplicable, &Flash2MmaWorkspaceBytes, &Flash2MmaOptionsName,
     kFlash2MmaAllOptions},
    {"flash3_wgmma", &LaunchFlash3Wgmma, &Flash3WgmmaNotApplicable, &Flash3WgmmaWorkspaceBytes,
     &Flash3WgmmaOptionsName, kFlash3WgmmaAllOptions},
    // e4m3 rounds each input and P̃ to 2^-4 relative: the sampled rows' relative error stays far below that
    // (the roundings average over keys); flash3_fp8.cu derives the per-element bound its test checks.
    {"flash3_fp8", &LaunchFlash3Fp8, &Flash3Fp8NotApplicable, &Flash3Fp8WorkspaceBytes, &Flash3Fp8OptionsName,
     kFlash3Fp8AllOptions, kFlash3Fp8Prequantized, 0.0625}};
double RelativeTolerance(const Kernel& kernel, DType dtype) {
  return kernel.relative_tolerance > 0 ? kernel.relative_tolerance : mma_check::Tolerance(dtype);
}
const Kernel* FindKernel(const std::string& name) {
  for (const Kernel& kernel : kKernels)
    if (name == kernel.name) return &kernel;
  return nullptr;
}

int BatchHeadsFor(int n) { return n <= 2048 ? 1024 : n <= 4096 ? 256 : n <= 8192 ? 64 : 16; }

#define CHECK_CUDA(call)                                                                              \
  do {                                                                                                \
    const cudaError_t status_ = (call);                                                               \
    if (status_ != cudaSuccess) {                                                                     \
      std::fprintf(stderr, "flash2_mma_bench: %s failed: %s\n", #call, cudaGetErrorString(status_)); \
      std::exit(1);                                                                                   \
    }                                                                                                 \
  } while (0)

struct Buffers {
  void* q[2] = {nullptr, nullptr};
  void* k[2] = {nullptr, nullptr};
  void* v[2] = {nullptr, nullptr};
  void* o = nullptr;
};

// Validates args (which point at one input set) on sampled rows; prints and returns false on a mismatch.
// On a mismatch the error is also given per 64-column block of d and per 64-row block of the sampled rows (which
// shared-memory block or which consumer warpgroup went wrong, for flash3_wgmma).
bool Validate(const Kernel& kernel, const AttentionArgs& args, const std::string& label) {
  const int n = args.shape.n, heads = args.shape.batch * args.shape.heads;
  if (args.options & kernel.reuses_workspace) {
    AttentionArgs first = args;
    first.options &= ~kernel.reuses_workspace;
    CHECK_CUDA(kernel.launch(first));
  }
  CHECK_CUDA(mma_check::Poison(args.o, static_cast<std::size_t>(heads) * n * args.shape.d, args.dtype, args.stream));
  CHECK_CUDA(kernel.launch(args));
  std::uint64_t non_finite = 0;
  CHECK_CUDA(mma_check::CountNonFinite(args.o, static_cast<std::size_t>(heads) * n * args.shape.d, args.dtype,
                                       args.stream, &non_finite));
  if (non_finite) {
    std::printf("FAIL %s: %llu output elements NaN/inf (unwritten or overflowed)\n", label.c_str(),
                static_cast<unsigned long long>(non_finite));
    return false;
  }
  const int rows = std::min(64, n);
  const int samples[][2] = {{0, 0}, {heads - 1, n - rows}, {heads / 2, (n - rows) / 2}, {heads - 1, 0}};
  double worst = 0;
  for (const auto& sample : samples) {
    const mma_check::RowComparison c = mma_check::CompareRows(args, sample[0], sample[1], sample[1] + rows);
    if (!c.error.empty()) {
      std::printf("FAIL %s: %s\n", label.c_str(), c.error.c_str());
      return false;
    }
    worst = std::max(worst, c.relative_error);
    if (c.non_finite || c.relative_error > RelativeTolerance(kernel, args.dtype)) {
      std::printf("FAIL %s: head %d rows %d..%d relative error %.3g (tolerance %.1g), %zu non-finite\n",
                  label.c_str(), sample[0], sample[1], sample[1] + rows - 1, c.relative_error,
                  RelativeTolerance(kernel, args.dtype), c.non_finite);
      for (const auto& block : mma_check::BlockErrors(args, sample[0], sample[1], sample[1] + rows))
        std::printf("     rows %d..%d cols %d..%d: relative error %.3g\n", block.row_begin, block.row_end - 1,
                    block.col_begin, block.col_end - 1, block.relative_error);
      return false;
    }
  }
  std::printf("ok   %s: relative error %.2e\n", label.c_str(), worst);
  return true;
}

int Time(int argc, char** argv) {
  std::vector<int> ns = {1024, 2048, 4096, 8192, 16384}, ds = {64, 128}, causals = {0, 1}, options = {0};
  std::vector<const Kernel*> kernels = {&kKernels[0]};
  std::vector<DType> dtypes = {DType::kFp16, DType::kBf16};
  int reps = 20;
  std::string csv_path;
  for (int i = 2; i < argc; ++i) {
    const std::string flag = argv[i];
    if (i + 1 >= argc) {
      std::fprintf(stderr, "flash2_mma_bench: %s needs a value\n", flag.c_str());
      return 2;
    }
    const std::string value = argv[++i];
    if (flag == "--n") ns = ParseList(value);
    else if (flag == "--d") ds = ParseList(value);
    else if (flag == "--causal") causals = ParseList(value);
    else if (flag == "--options") options = ParseList(value);
    else if (flag == "--reps") reps = std::max(1, std::atoi(value.c_str()));
    else if (flag == "--csv") csv_path = value;
    else if (flag == "--kernel") {
      kernels.clear();
      std::size_t start = 0;
      while (start <= value.size()) {
        const std::size_t comma = value.find(',', start);
        const std::string name = value.substr(start, comma == std::string::npos ? std::string::npos : comma - start);
        const Kernel* kernel = FindKernel(name);
        if (!kernel) {
          std::fprintf(stderr, "flash2_mma_bench: unknown kernel %s (flash2_mma, flash3_wgmma, flash3_fp8)\n",
                       name.c_str());
          return 2;
        }
        kernels.push_back(kernel);
        if (comma == std::string::npos) break;
        start = comma + 1;
      }
    }
    else if (flag == "--dtype") {
      dtypes.clear();
      if (value.find("fp16") != std::string::npos) dtypes.push_back(DType::kFp16);
      if (value.find("bf16") != std::string::npos) dtypes.push_back(DType::kBf16);
    } else {
      std::fprintf(stderr, "flash2_mma_bench: unknown option %s\n", flag.c_str());
      return 2;
    }
  }
  std::size_t max_elements = 0;
  for (int n : ns)
    for (int d : ds) max_elements = std::max(max_elements, static_cast<std::size_t>(BatchHeadsFor(n)) * n * d);
  Buffers buffers;
  for (int set = 0; set < 2; ++set) {
    CHECK_CUDA(cudaMalloc(&buffers.q[set], max_elements * 2));
    CHECK_CUDA(cudaMalloc(&buffers.k[set], max_elements * 2));
    CHECK_CUDA(cudaMalloc(&buffers.v[set], max_elements * 2));
  }
  CHECK_CUDA(cudaMalloc(&buffers.o, max_elements * 2));
  std::size_t workspace_bytes = 0;
  for (const Kernel* kernel : kernels)
    for (int n : ns)
      for (int d : ds)
        for (DType dtype : dtypes) {
          const AttentionShape shape{BatchHeadsFor(n) / 16, 16, n, d, 1.0f, false};
          workspace_bytes = std::max(workspace_bytes, kernel->workspace_bytes(shape, dtype));
        }
  void* workspace = nullptr;
  if (workspace_bytes > 0) CHECK_CUDA(cudaMalloc(&workspace, workspace_bytes));
  cudaDeviceProp properties{};
  CHECK_CUDA(cudaGetDeviceProperties(&properties, 0));
  std::printf("device: %s, %d SMs, L2 %d MB\n", properties.name, properties.multiProcessorCount,
              properties.l2CacheSize >> 20);

  FILE* csv = csv_path.empty() ? nullptr : std::fopen(csv_path.c_str(), "w");
  if (!csv_path.empty() && !csv) {
    std::fprintf(stderr, "flash2_mma_bench: cannot write %s\n", csv_path.c_str());
    return 2;
  }
  if (csv)
    std::fprintf(csv, "kernel,options,dtype,d,n,batch_heads,causal,median_ms,min_ms,tflops,rel_error_ok,sm_mhz\n");
  cudaEvent_t start[64], stop[64];
  reps = std::min(reps, 64);
  for (int r = 0; r < reps; ++r) {
    CHECK_CUDA(cudaEventCreate(&start[r]));
    CHECK_CUDA(cudaEventCreate(&stop[r]));
  }
  std::random_device entropy;
  int failures = 0;
  for (DType dtype : dtypes)
    for (int d : ds)
      for (int causal : causals)
        for (int n : ns) {
          const int batch_heads = BatchHeadsFor(n);
          const std::size_t elements = static_cast<std::size_t>(batch_heads) * n * d;
          const std::uint64_t seed = (static_cast<std::uint64_t>(entropy()) << 32) ^ entropy();
          for (int set = 0; set < 2; ++set) {
            CHECK_CUDA(mma_check::FillNormal(buffers.q[set], elements, dtype, seed + 6 * set + 1, nullptr));
            CHECK_CUDA(mma_check::FillNormal(buffers.k[set], elements, dtype, seed + 6 * set + 2, nullptr));
            CHECK_CUDA(mma_check::FillNormal(buffers.v[set], elements, dtype, seed + 6 * set + 3, nullptr));
          }
          for (const Kernel* kernel : kernels)
          for (int option : options) {
            if (static_cast<unsigned>(option) & ~kernel->all_options) continue;
            AttentionArgs args;
            args.shape = AttentionShape{batch_heads / 16, 16, n, d, 1.0f / std::sqrt(static_cast<float>(d)),
                                        causal != 0};
            args.dtype = dtype;
            args.options = static_cast<unsigned>(option);
            args.o = buffers.o;
            args.workspace = workspace;
            args.workspace_bytes = workspace_bytes;
            if (kernel->not_applicable(args.shape, dtype)) continue;
            const auto use_set = [&](int set) {
              args.q = buffers.q[set];
              args.k = buffers.k[set];
              args.v = buffers.v[set];
            };
            const std::string options_name = kernel->options_name(args.options);
            const std::string label = Sprintf("%s[%s] %s d=%d N=%d B*H=%d %s", kernel->name, options_name.c_str(),
                                              mma_check::DTypeName(dtype), d, n, batch_heads,
                                              causal ? "causal" : "full");
            use_set(0);
            const bool valid = Validate(*kernel, args, label);
            if (!valid) {
              ++failures;
              continue;
            }
            for (int w = 0; w < 3; ++w) {
              use_set(w & 1);
              CHECK_CUDA(kernel->launch(args));
            }
            for (int r = 0; r < reps; ++r) {
              use_set(r & 1);
              CHECK_CUDA(cudaEventRecord(start[r]));
              CHECK_CUDA(kernel->launch(args));
              CHECK_CUDA(cudaEventRecord(stop[r]));
            }
            // The SM clock the launches ended at (the power cap can hold it below the maximum).
            double sm_mhz = 0;
            CHECK_CUDA(mma_check::MeasureSmClockMhz(args.stream, &sm_mhz));
            CHECK_CUDA(cudaDeviceSynchronize());
            std::vector<float> times(reps);
            for (int r = 0; r < reps; ++r) CHECK_CUDA(cudaEventElapsedTime(&times[r], start[r], stop[r]));
            std::sort(times.begin(), times.end());
            const double median_ms = reps % 2 ? times[reps / 2] : 0.5 * (times[reps / 2 - 1] + times[reps / 2]);
            const double flops = 4.0 * batch_heads * static_cast<double>(n) * n * d * (causal ? 0.5 : 1.0);
            const double tflops = flops / (median_ms * 1e-3) / 1e12;
            std::printf("time %s: median %.3f ms (min %.3f), %.1f TFLOP/s, SM clock %.0f MHz after\n", label.c_str(),
                        median_ms, times[0], tflops, sm_mhz);
            if (csv)
              std::fprintf(csv, "%s,%s,%s,%d,%d,%d,%d,%.5f,%.5f,%.2f,1,%.0f\n", kernel->name, options_name.c_str(),
                           mma_check::DTypeName(dtype), d, n, batch_heads, causal, median_ms, times[0], tflops, sm_mhz);
            if (csv) std::fflush(csv);  // a later shape that hangs (and is killed) keeps the rows before it
          }
        }
  if (csv) std::fclose(csv);
  return failures ? 1 : 0;
}

// One small launch per options combination, dtype, d and causal flag: what compute-sanitizer's memcheck and
// racecheck run over (N = 200 by default: an edge K/V tile and an edge Q tile; B·H = batch_heads).
int Sanitize(const Kernel& kernel, const std::vector<int>& option_list, int batch_heads, int n) {
  int failures = 0;
  for (int d : {64, 128, 256}) {
    const std::size_t elements = static_cast<std::size_t>(batch_heads) * n * d;
    void *q, *k, *v, *o;
    CHECK_CUDA(cudaMalloc(&q, elements * 2));
    CHECK_CUDA(cudaMalloc(&k, elements * 2));
    CHECK_CUDA(cudaMalloc(&v, elements * 2));
    CHECK_CUDA(cudaMalloc(&o, elements * 2));
    const AttentionShape workspace_shape{1, batch_heads, n, d, 1.0f, false};
    const std::size_t workspace_bytes = kernel.workspace_bytes(workspace_shape, DType::kBf16);
    void* workspace = nullptr;
    if (workspace_bytes > 0) CHECK_CUDA(cudaMalloc(&workspace, workspace_bytes));
    for (DType dtype : {DType::kFp16, DType::kBf16}) {
      CHECK_CUDA(mma_check::FillNormal(q, elements, dtype, 11, nullptr));
      CHECK_CUDA(mma_check::FillNormal(k, elements, dtype, 12, nullptr));
      CHECK_CUDA(mma_check::FillNormal(v, elements, dtype, 13, nullptr));
      for (int causal = 0; causal < 2; ++causal)
        for (int option : option_list) {
          const unsigned options = static_cast<unsigned>(option);
          AttentionArgs args;
          args.shape = AttentionShape{1, batch_heads, n, d, 1.0f / std::sqrt(static_cast<float>(d)), causal != 0};
          args.dtype = dtype;
          args.q = q;
          args.k = k;
          args.v = v;
          args.o = o;
          args.options = options;
          args.workspace = workspace;
          args.workspace_bytes = workspace_bytes;
          if (kernel.not_applicable(args.shape, dtype)) continue;
          const std::string label = Sprintf("sanitize %s[%s] %s d=%d causal=%d", kernel.name,
                                            kernel.options_name(options).c_str(), mma_check::DTypeName(dtype), d,
                                            causal);
          if (!Validate(kernel, args, label)) ++failures;
        }
    }
    for (void* pointer : {q, k, v, o, workspace})
      if (pointer) CHECK_CUDA(cudaFree(pointer));
  }
  std::printf("sanitize: %d failure(s)\n", failures);
  return failures ? 1 : 0;
}

}  // namespace

int main(int argc, char** argv) {
  const std::string mode = argc > 1 ? argv[1] : "";
  if (mode == "time") return Time(argc, argv);
  if (mode == "sanitize") {
    int next = 2;
    const Kernel* kernel = &kKernels[0];
    if (argc > 3 && std::string(argv[2]) == "--kernel") {
      kernel = FindKernel(argv[3]);
      if (!kernel) {
        std::fprintf(stderr, "flash2_mma_bench: unknown kernel %s (flash2_mma, flash3_wgmma, flash3_fp8)\n", argv[3]);
        return 2;
      }
      next = 4;
    }
    // `--flag VALUE` at argv[next], VALUE a positive count: read into `value` (left as it is when the flag is absent);
    // false for a bad VALUE.
    const auto positive_option = [&](const char* flag, int& value) {
      if (argc <= next + 1 || std::string(argv[next]) != flag) return true;
      value = std::atoi(argv[next + 1]);
      if (value < 1) {
        std::fprintf(stderr, "flash2_mma_bench: %s takes a positive count, not %s\n", flag, argv[next + 1]);
        return false;
      }
      next += 2;
      return true;
    };
    int batch_heads = 2, n = 200;
    if (!positive_option("--heads", batch_heads) || !positive_option("--n", n)) return 2;
    std::vector<int> options;
    if (argc > next) options = ParseList(argv[next]);
    else if (kernel == &kKernels[0])
      for (unsigned o = 0; o <= kFlash2MmaKernelOptions; ++o) options.push_back(static_cast<int>(o));
    else if (kernel == &kKernels[2])
      options = {0, static_cast<int>(kFlash3Fp8Prequantized), static_cast<int>(kFlash3Fp8OtherSchedule),
                 static_cast<int>(kFlash3Fp8OtherGrid)};
    else
      options = {0, static_cast<int>(kFlash3WgmmaOtherGrid), static_cast<int>(kFlash3WgmmaSerialSoftmax),
                 static_cast<int>(kFlash3WgmmaDirectStore), static_cast<int>(kFlash3WgmmaOtherSchedule),
                 static_cast<int>(kFlash3WgmmaOtherRows)};
    return Sanitize(*kernel, options, batch_heads, n);
  }
  std::fprintf(stderr, "usage: flash2_mma_bench time [--kernel LIST --n LIST --d LIST --dtype LIST --causal LIST "
                       "--options LIST --reps R --csv FILE] | sanitize [--kernel K] [--heads H] [--n N] "
                       "[OPTIONS-LIST]\n");
  return 2;
}
