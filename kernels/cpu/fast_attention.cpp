#include "kernels/cpu/fast_attention.h"

#include <algorithm>
#include <atomic>
#include <mutex>
#include <vector>

#include "kernels/common/parallel.h"
#include "kernels/cpu/fast_attention_tile.h"

namespace flashviz {
namespace {

using fast_attention::TileArgs;
using fast_attention::Workspace;
using TileFunction = void (*)(const TileArgs&, Workspace&);

bool HasAvx2Fma() {
#if defined(__x86_64__) || defined(__i386__)
  return __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
#else
  return false;
#endif
}

TileFunction SelectTileFunction() {
  return HasAvx2Fma() ? fast_attention::AttentionTileAvx2 : fast_attention::AttentionTileGeneric;
}

}  // namespace

std::string_view FastAttentionIsa() { return HasAvx2Fma() ? "avx2+fma" : "generic"; }

void FastAttentionBatched(const float* qkv, int batch, int n, int d, float scale, bool causal, float* out,
                          int threads, const ProgressCallback& progress) {
  const TileFunction tile = SelectTileFunction();
  const std::size_t head = static_cast<std::size_t>(n) * d;
  const std::int64_t tiles_per_head = (n + fast_attention::kRows - 1) / fast_attention::kRows;
  const std::int64_t tasks = tiles_per_head * batch;
  std::atomic<std::int64_t> done{0};
  std::mutex progress_mutex;
  const std::int64_t report_every = std::max<std::int64_t>(1, tasks / 100);
  // One workspace per worker, kept across its tasks.
  std::vector<Workspace> workspaces(static_cast<std::size_t>(ParallelWorkers(tasks, threads)));
  ParallelFor(tasks, threads, [&](std::int64_t t, int worker) {
    const std::int64_t b = t / tiles_per_head;
    const float* q = qkv + static_cast<std::size_t>(b) * 3 * head;
    const TileArgs args{q,    q + head, q + 2 * head, out + static_cast<std::size_t>(b) * head,
                        n,    d,        static_cast<int>(t % tiles_per_head) * fast_attention::kRows,
                        scale, causal};
    tile(args, workspaces[static_cast<std::size_t>(worker)]);
    const std::int64_t finished = done.fetch_add(1, std::memory_order_relaxed) + 1;
    if (progress && finished % report_every == 0) {
      std::lock_guard lock(progress_mutex);
      progress(static_cast<double>(finished) / static_cast<double>(tasks));
    }
  });
}

void FastAttention(const float* q, const float* k, const float* v, int n, int d, float scale, bool causal,
                   float* out, int threads) {
  const TileFunction tile = SelectTileFunction();
  const std::int64_t tiles = (n + fast_attention::kRows - 1) / fast_attention::kRows;
  std::vector<Workspace> workspaces(static_cast<std::size_t>(ParallelWorkers(tiles, threads)));
  ParallelFor(tiles, threads, [&](std::int64_t t, int worker) {
    const TileArgs args{q, k, v, out, n, d, static_cast<int>(t) * fast_attention::kRows, scale, causal};
    tile(args, workspaces[static_cast<std::size_t>(worker)]);
  });
}

}  // namespace flashviz
