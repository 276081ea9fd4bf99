// A blocking parallel loop over [0, count) on plain std::threads: the CPU paths split work into independent
// chunks (row blocks, batches) and need nothing more than this.
#pragma once

#include <cstdint>
#include <functional>

namespace flashviz {

// Hardware threads, at least 1.
int HardwareThreads();

// How many workers ParallelFor(count, threads, ...) runs: size per-worker scratch with it.
int ParallelWorkers(std::int64_t count, int threads);

// Calls body(index, worker) for every index in [0, count) on ParallelWorkers(count, threads) threads
// (threads 0: HardwareThreads()), worker in [0, workers); indices are handed out dynamically so uneven chunks
// (causal rows) balance. Rethrows the first exception.
void ParallelFor(std::int64_t count, int threads, const std::function<void(std::int64_t index, int worker)>& body);

}  // namespace flashviz
