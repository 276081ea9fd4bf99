#include "kernels/common/parallel.h"

#include <algorithm>
#include <atomic>
#include <exception>
#include <mutex>
#include <thread>
#include <vector>

namespace flashviz {

int HardwareThreads() { return std::max(1u, std::thread::hardware_concurrency()); }

int ParallelWorkers(std::int64_t count, int threads) {
  if (threads <= 0) threads = HardwareThreads();
  return static_cast<int>(std::max<std::int64_t>(1, std::min<std::int64_t>(threads, count)));
}

void ParallelFor(std::int64_t count, int threads, const std::function<void(std::int64_t, int)>& body) {
  if (count <= 0) return;
  threads = ParallelWorkers(count, threads);
  std::atomic<std::int64_t> next{0};
  std::exception_ptr error;
  std::mutex error_mutex;
  auto worker = [&](int id) {
    for (std::int64_t index; (index = next.fetch_add(1, std::memory_order_relaxed)) < count;) {
      try {
        body(index, id);
      } catch (...) {
        std::lock_guard lock(error_mutex);
        if (!error) error = std::current_exception();
        next.store(count);
      }
    }
  };
  std::vector<std::thread> pool;
  pool.reserve(static_cast<std::size_t>(threads - 1));
  for (int t = 1; t < threads; ++t) pool.emplace_back(worker, t);
  worker(0);
  for (std::thread& t : pool) t.join();
  if (error) std::rethrow_exception(error);
}

}  // namespace flashviz
