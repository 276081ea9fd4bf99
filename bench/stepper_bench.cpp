// The stepper's speed targets: jumping to any step at N = 4096 is instant (both passes), and the count-only ledger
// at N = 32768 takes well under a second. Run: build/bench/stepper_bench
#include <benchmark/benchmark.h>

#include "kernels/cpu/stepper.h"

namespace {

flashviz::AttentionProblem Problem(int n, int d, std::int64_t sram, flashviz::LoopOrder order) {
  flashviz::ProblemRequest r;
  r.n = n;
  r.d = d;
  r.sram_bytes = sram;
  r.order = order;
  return flashviz::ResolveProblem(r);
}

// State after a step in the middle and at the end of the run (both orders), N = 4096, d = 64, M = 48 KiB.
void BM_StateAtN4096(benchmark::State& state) {
  const auto order = state.range(0) ? flashviz::LoopOrder::kQOuter : flashviz::LoopOrder::kKvOuter;
  const auto p = Problem(4096, 64, 48 * 1024, order);
  const auto in = flashviz::MakeRandomInputs(p.n, p.d, 1);
  const flashviz::Stepper stepper(p, &in);
  const std::int64_t step = stepper.step_count() * state.range(1) / 100 - 1;
  for (auto _ : state) benchmark::DoNotOptimize(stepper.StateAt(step));
  state.SetLabel(std::to_string(stepper.step_count()) + " steps");
}

// The backward pass, N = 4096, d = 64, M = 48 KiB (B_r = B_c from M): the state after a step in the middle of the run
// (its Q tile's dQ_i through every K/V tile so far, its K/V tile's dK_j, dV_j through its Q tiles), and what opening
// the problem costs once (the forward pass in the q order for O, L and D).
flashviz::AttentionProblem BackwardN4096() {
  flashviz::ProblemRequest r;
  r.n = 4096;
  r.d = 64;
  r.sram_bytes = 48 * 1024;
  r.pass = flashviz::Pass::kBackward;
  return flashviz::ResolveProblem(r);
}

void BM_BackwardStateAtN4096(benchmark::State& state) {
  const auto p = BackwardN4096();
  const auto in = flashviz::MakeRandomInputs(p, 1);
  const flashviz::Stepper stepper(p, &in);
  const std::int64_t step = stepper.step_count() / 2;
  for (auto _ : state) benchmark::DoNotOptimize(stepper.StateAt(step));
  state.SetLabel(std::to_string(stepper.step_count()) + " steps, B_r=B_c=" + std::to_string(p.bc));
}

void BM_BackwardOpenN4096(benchmark::State& state) {
  const auto p = BackwardN4096();
  const auto in = flashviz::MakeRandomInputs(p, 1);
  for (auto _ : state) benchmark::DoNotOptimize(flashviz::Stepper(p, &in));
}

// Count-only ledger of the whole run, N = 32768.
void BM_CountOnlyN32768(benchmark::State& state) {
  const auto order = state.range(0) ? flashviz::LoopOrder::kQOuter : flashviz::LoopOrder::kKvOuter;
  const auto p = Problem(32768, static_cast<int>(state.range(1)), state.range(2), order);
  const flashviz::Stepper stepper(p, nullptr);
  for (auto _ : state) benchmark::DoNotOptimize(stepper.FinalLedger());
  state.SetLabel(std::to_string(stepper.step_count()) + " steps, B_r=" + std::to_string(p.br) +
                 " B_c=" + std::to_string(p.bc));
}

}  // namespace

BENCHMARK(BM_StateAtN4096)->ArgsProduct({{0, 1}, {50, 100}})->Unit(benchmark::kMillisecond);
BENCHMARK(BM_BackwardStateAtN4096)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_BackwardOpenN4096)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_CountOnlyN32768)
    ->Args({0, 64, 16 * 1024})
    ->Args({1, 64, 16 * 1024})
    ->Args({0, 64, 48 * 1024})
    ->Args({0, 128, 96 * 1024})
    ->Unit(benchmark::kMillisecond);
BENCHMARK_MAIN();
