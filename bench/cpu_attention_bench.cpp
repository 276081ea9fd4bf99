// The fast CPU FlashAttention against the float64 reference (issue goal: ≥ 20× at N = 2048, d = 64).
// Both use every hardware thread. Run: build/bench/cpu_attention_bench
#include <benchmark/benchmark.h>

#include <cmath>

#include "kernels/common/parallel.h"
#include "kernels/cpu/fast_attention.h"
#include "kernels/cpu/reference.h"
#include "kernels/cpu/stepper.h"

namespace {

void SetFlops(benchmark::State& state, int n, int d) {
  state.counters["GFLOP/s"] = benchmark::Counter(4.0 * n * n * d * static_cast<double>(state.iterations()) * 1e-9,
                                                 benchmark::Counter::kIsRate);
  state.counters["threads"] = flashviz::HardwareThreads();
}

void BM_ReferenceFloat64(benchmark::State& state) {
  const int n = static_cast<int>(state.range(0)), d = static_cast<int>(state.range(1));
  const auto in = flashviz::MakeRandomInputs(n, d, 1);
  for (auto _ : state) {
    auto o = flashviz::ReferenceAttention(in.q.data(), in.k.data(), in.v.data(), n, d, 1.0 / std::sqrt(d), false);
    benchmark::DoNotOptimize(o.data());
  }
  SetFlops(state, n, d);
}

void BM_FastFloat32(benchmark::State& state) {
  const int n = static_cast<int>(state.range(0)), d = static_cast<int>(state.range(1));
  const auto in = flashviz::MakeRandomInputs(n, d, 1);
  std::vector<float> out(static_cast<std::size_t>(n) * d);
  for (auto _ : state) {
    flashviz::FastAttention(in.q.data(), in.k.data(), in.v.data(), n, d, 1.0f / std::sqrt(static_cast<float>(d)),
                            false, out.data());
    benchmark::DoNotOptimize(out.data());
  }
  SetFlops(state, n, d);
  state.SetLabel(std::string(flashviz::FastAttentionIsa()));
}

}  // namespace

BENCHMARK(BM_ReferenceFloat64)->Args({2048, 64})->Args({1024, 32})->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK(BM_FastFloat32)
    ->Args({2048, 64})
    ->Args({1024, 32})
    ->Args({4096, 64})
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();
BENCHMARK_MAIN();
