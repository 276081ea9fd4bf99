// hw4_bench: validate, then time, the hw4 kernels on HW4-shaped inputs (one head per batch, values uniform in
// [−3, 3], the same values `flashviz gen --seed S` writes), for the README's table against PyTorch.
//
//   hw4_bench [--shapes B:N:d,...|spec] [--kernels ID[:alt][:otc],...] [--seed S] [--csv FILE]
//
// :alt and :otc run a variant with the option bit kHw4AltOccupancy / kHw4OInTensorCores (hw4_kernels.h).
//
// Per shape: inputs filled on the device; per kernel: the output poisoned with NaN, one launch, every element
// checked written and sampled rows of the first and last batch checked against the float64 CPU reference at
// the assignment's 5e-3; only then timed — CUDA events, 2 warm-ups, the median of 3–15 launches (fewer for
// long ones). The inputs are 0.2–0.7 GB, several times the L2, so repeated launches do not run from cache.
// `spec` is every (N, d) of the assignment at its largest B (B·N·d < 56M, B ≤ 14000).
#include <cuda_runtime.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <stdexcept>
#include <string>
#include <vector>

#include "kernels/common/format.h"
#include "kernels/common/parallel.h"
#include "kernels/cpu/reference.h"
#include "kernels/cuda/hw4/hw4_kernels.h"

namespace hw4 = flashviz::cuda::hw4;
using flashviz::Sprintf;

namespace {

struct Shape {
  long long b;
  int n, d;
};

void Check(cudaError_t e, const char* what) {
  if (e != cudaSuccess) throw std::runtime_error(Sprintf("CUDA error %s: %s", what, cudaGetErrorString(e)));
}

std::vector<Shape> SpecShapes() {
  std::vector<Shape> shapes;
  for (int d : {32, 64})
    for (int n = 128; n <= 32768; n *= 2)
      shapes.push_back({std::min<long long>(14000, (56000000LL - 1) / (static_cast<long long>(n) * d)), n, d});
  return shapes;
}

std::vector<Shape> ParseShapes(const std::string& text) {
  if (text == "spec") return SpecShapes();
  std::vector<Shape> shapes;
  std::size_t at = 0;
  while (at < text.size()) {
    std::size_t end = text.find(',', at);
    if (end == std::string::npos) end = text.size();
    Shape s{};
    if (std::sscanf(text.substr(at, end - at).c_str(), "%lld:%d:%d", &s.b, &s.n, &s.d) != 3 || s.b < 1 || s.n < 1 ||
        s.d < 1)
      throw std::runtime_error("--shapes: expected B:N:d,... or spec, got " + text);
    shapes.push_back(s);
    at = end + 1;
  }
  return shapes;
}

// The rows whose float64 reference is computed: all of them for N ≤ 512, else 96 spread over [0, N) plus the
// edges of the 64-row tiles at both ends.
std::vector<int> SampleRows(int n) {
  std::vector<int> rows;
  if (n <= 512) {
    for (int r = 0; r < n; ++r) rows.push_back(r);
    return rows;
  }
  for (int r : {0, 1, 15, 16, 63, 64, n - 65, n - 64, n - 1}) rows.push_back(r);
  for (int i = 0; i < 96; ++i) rows.push_back(static_cast<int>((static_cast<long long>(i) * 7919 * 13) % n));
  std::sort(rows.begin(), rows.end());
  rows.erase(std::unique(rows.begin(), rows.end()), rows.end());
  return rows;
}

struct Reference {
  long long batch;
  std::vector<int> rows;
  std::vector<double> o;  // rows.size() × d
};

std::vector<Reference> ComputeReferences(const float* in_dev, const Shape& s) {
  const std::size_t head = static_cast<std::size_t>(s.n) * s.d;
  std::vector<Reference> refs;
  for (long long batch : {0LL, s.b - 1}) {
    if (!refs.empty() && refs.back().batch == batch) break;
    std::vector<float> qkv(3 * head);
    Check(cudaMemcpy(qkv.data(), in_dev + static_cast<std::size_t>(batch) * 3 * head, qkv.size() * sizeof(float),
                     cudaMemcpyDeviceToHost),
          "reading inputs back");
    Reference ref{batch, SampleRows(s.n), {}};
    ref.o.resize(ref.rows.size() * static_cast<std::size_t>(s.d));
    const double scale = 1.0 / std::sqrt(static_cast<double>(s.d));
    flashviz::ParallelFor(static_cast<std::int64_t>(ref.rows.size()), 0, [&](std::int64_t i, int) {
      const int row = ref.rows[static_cast<std::size_t>(i)];
      flashviz::ReferenceAttentionRows(qkv.data(), qkv.data() + head, qkv.data() + 2 * head, s.n, s.d, scale, false,
                                       row, row + 1, ref.o.data() + static_cast<std::size_t>(i) * s.d);
    });
    refs.push_back(std::move(ref));
  }
  return refs;
}

// Max |O − reference| over the sampled rows, or +inf when an element was never written (still NaN).
double MaxError(const float* out_dev, const Shape& s, const std::vector<Reference>& refs) {
  unsigned long long* first_bad = nullptr;
  Check(cudaMalloc(&first_bad, sizeof *first_bad), "allocating");
  Check(cudaMemset(first_bad, 0xff, sizeof *first_bad), "clearing");
  Check(hw4::LaunchFirstNonFinite(out_dev, s.b * s.n * s.d, 0, first_bad, nullptr), "checking the output");
  unsigned long long bad = 0;
  Check(cudaMemcpy(&bad, first_bad, sizeof bad, cudaMemcpyDeviceToHost), "checking the output");
  cudaFree(first_bad);
  if (bad != std::numeric_limits<unsigned long long>::max()) return INFINITY;
  const std::size_t head = static_cast<std::size_t>(s.n) * s.d;
  double worst = 0;
  for (const Reference& ref : refs) {
    std::vector<float> o(head);
    Check(cudaMemcpy(o.data(), out_dev + static_cast<std::size_t>(ref.batch) * head, head * sizeof(float),
                     cudaMemcpyDeviceToHost),
          "reading the output");
    for (std::size_t i = 0; i < ref.rows.size(); ++i)
      for (int c = 0; c < s.d; ++c)
        worst = std::max(worst, std::abs(static_cast<double>(o[static_cast<std::size_t>(ref.rows[i]) * s.d + c]) -
                                         ref.o[i * static_cast<std::size_t>(s.d) + c]));
  }
  return worst;
}

}  // namespace

int main(int argc, char** argv) {
  std::string shapes_text = "13000:128:32,3400:256:64,100:4096:64,256:4096:64,256:4096:32,26:32768:64,52:32768:32";
  std::string kernels_text = "tf32x3,tf32x3:alt,tf32x3:otc,fp32-simt";
  std::string csv_path;
  unsigned long long seed = 1;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    const bool has_value = i + 1 < argc;
    if (arg == "--shapes" && has_value) shapes_text = argv[++i];
    else if (arg == "--kernels" && has_value) kernels_text = argv[++i];
    else if (arg == "--csv" && has_value) csv_path = argv[++i];
    else if (arg == "--seed" && has_value) seed = std::strtoull(argv[++i], nullptr, 10);
    else {
      std::fprintf(
          stderr,
          "usage: hw4_bench [--shapes B:N:d,...|spec] [--kernels ID[:alt][:otc],... of %s] [--seed S] [--csv FILE]\n",
          hw4::Hw4KernelIdList().c_str());
      return 2;
    }
  }
  try {
    // ID or ID:alt (the kHw4AltOccupancy variant).
    struct Variant {
      hw4::Hw4Kernel kernel;
      unsigned options;
      std::string name;
    };
    std::vector<Variant> kernels;
    for (std::size_t at = 0; at < kernels_text.size();) {
      std::size_t end = kernels_text.find(',', at);
      if (end == std::string::npos) end = kernels_text.size();
      std::string name = kernels_text.substr(at, end - at), id = name;
      unsigned options = 0;
      for (std::size_t colon; (colon = id.rfind(':')) != std::string::npos; id.resize(colon)) {
        const std::string flag = id.substr(colon + 1);
        if (flag == "alt") options |= hw4::kHw4AltOccupancy;
        else if (flag == "otc") options |= hw4::kHw4OInTensorCores;
        else throw std::runtime_error("--kernels: unknown variant flag :" + flag + " (alt, otc)");
      }
      const auto k = hw4::ParseHw4Kernel(id);
      if (!k)
        throw std::runtime_error("--kernels: one of " + hw4::Hw4KernelIdList() + ", each optionally with :alt, :otc");
      kernels.push_back({*k, options, name});
      at = end + 1;
    }
    cudaDeviceProp prop{};
    Check(cudaGetDeviceProperties(&prop, 0), "reading the device");
    std::printf("hw4_bench on %s (sm_%d%d, %d SMs)\n", prop.name, prop.major, prop.minor, prop.multiProcessorCount);
    std::FILE* csv = csv_path.empty() ? nullptr : std::fopen(csv_path.c_str(), "w");
    if (csv) std::fprintf(csv, "kernel,B,N,d,ms,tflops,max_error,reps\n");
    std::printf("%-13s %6s %6s %3s %10s %8s %10s\n", "kernel", "B", "N", "d", "ms", "TFLOP/s", "max|err|");
    cudaEvent_t start, stop;
    Check(cudaEventCreate(&start), "event");
    Check(cudaEventCreate(&stop), "event");
    for (const Shape& s : ParseShapes(shapes_text)) {
      const std::size_t head = static_cast<std::size_t>(s.n) * s.d;
      float *in = nullptr, *out = nullptr;
      Check(cudaMalloc(&in, static_cast<std::size_t>(s.b) * 3 * head * sizeof(float)), "allocating inputs");
      Check(cudaMalloc(&out, static_cast<std::size_t>(s.b) * head * sizeof(float)), "allocating outputs");
      Check(hw4::LaunchFillUniform(in, s.b * 3 * static_cast<long long>(head), seed, -3.0f, 3.0f, nullptr), "filling");
      Check(cudaDeviceSynchronize(), "filling");
      const std::vector<Reference> refs = ComputeReferences(in, s);
      hw4::Hw4Heads heads;
      heads.q = in;
      heads.k = in + head;
      heads.v = in + 2 * head;
      heads.qkv_stride = static_cast<std::int64_t>(3 * head);
      heads.o = out;
      heads.o_stride = static_cast<std::int64_t>(head);
      heads.heads = s.b;
      heads.n = s.n;
      heads.d = s.d;
      heads.scale = static_cast<float>(1.0 / std::sqrt(static_cast<double>(s.d)));
      const double flops = hw4::Hw4Flops(s.b, s.n, s.d);
      for (const Variant& variant : kernels) {
        const hw4::Hw4Kernel kernel = variant.kernel;
        heads.options = variant.options;
        const char* id = variant.name.c_str();
        if (const auto why = hw4::Hw4KernelNotApplicable(kernel, s.d)) {
          std::printf("%-13s %6lld %6d %3d  not applicable: %s\n", id, s.b, s.n, s.d, why->c_str());
          continue;
        }
        Check(cudaMemset(out, 0xff, static_cast<std::size_t>(s.b) * head * sizeof(float)), "poisoning");
        Check(hw4::LaunchHw4Attention(kernel, heads, nullptr), "launching");
        Check(cudaDeviceSynchronize(), "running");
        const double error = MaxError(out, s, refs);
        if (!(error <= 5e-3)) {
          std::printf("%-13s %6lld %6d %3d  WRONG: max|err| = %.3g over the sampled rows (limit 5e-3)\n", id, s.b,
                      s.n, s.d, error);
          if (csv) std::fprintf(csv, "%s,%lld,%d,%d,,,%.3g,0\n", id, s.b, s.n, s.d, error);
          continue;
        }
        // Time one launch to size the repeats: about a second per kernel and shape.
        Check(cudaEventRecord(start), "event");
        Check(hw4::LaunchHw4Attention(kernel, heads, nullptr), "launching");
        Check(cudaEventRecord(stop), "event");
        Check(cudaEventSynchronize(stop), "running");
        float first_ms = 0;
        Check(cudaEventElapsedTime(&first_ms, start, stop), "event");
        const int reps = std::clamp(static_cast<int>(1000.0f / std::max(first_ms, 1e-3f)), 3, 15);
        std::vector<float> times;
        for (int r = 0; r < reps; ++r) {
          Check(cudaEventRecord(start), "event");
          Check(hw4::LaunchHw4Attention(kernel, heads, nullptr), "launching");
          Check(cudaEventRecord(stop), "event");
          Check(cudaEventSynchronize(stop), "running");
          float ms = 0;
          Check(cudaEventElapsedTime(&ms, start, stop), "event");
          times.push_back(ms);
        }
        std::sort(times.begin(), times.end());
        const double ms = times[times.size() / 2];
        std::printf("%-13s %6lld %6d %3d %10.3f %8.2f %10.2e\n", id, s.b, s.n, s.d, ms, flops / (ms * 1e-3) * 1e-12,
                    error);
        if (csv)
          std::fprintf(csv, "%s,%lld,%d,%d,%.4f,%.3f,%.3g,%d\n", id, s.b, s.n, s.d, ms, flops / (ms * 1e-3) * 1e-12,
                       error, reps);
        std::fflush(stdout);
      }
      cudaFree(in);
      cudaFree(out);
    }
    if (csv) std::fclose(csv);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "hw4_bench: %s\n", e.what());
    return 1;
  }
  return 0;
}
