// [SECTION] device helpers (masking, safe exponentials, tile loads)
// [SECTION] flash1 instrumented: Algorithm 1, one launch per K/V tile j
// [SECTION] flash2_row instrumented: one block per Q tile, one thread per query row
// [SECTION] host: device checks, buffers, launches, the debug buffers read back
//
// These kernels teach and check; they are not fast. One thread owns one query row (the Vortex SIMT mapping),
// the S/P row of that thread lives in shared memory because B_c is a run-time choice of the student, and every
// exponential is expf (not __expf) so the numbers agree with the float64 model to fp32 rounding.
#include "kernels/cuda/probe/tile_probe.h"

#include <cuda_runtime.h>

#include <cmath>
#include <limits>
#include <memory>

#include "kernels/common/format.h"
#include "kernels/cuda/probe/probe_buffers.cuh"

namespace flashviz::cuda {
namespace {

// ---------------------------------------------------------------------------------------------------------
// [SECTION] device helpers
// ---------------------------------------------------------------------------------------------------------

struct ProbeParams {
  const float* q;
  const float* k;
  const float* v;
  float* o;        // N × d: kv keeps the normalized O here between launches; q writes the result
  float* m;        // N (kv only: m_i in HBM)
  float* l;        // N (kv only: ℓ_i in HBM)
  float* m_after;  // (T_r·T_c·B_r) debug buffer
  float* l_after;
  float* o_row_after;  // (T_c·d) debug buffer for the probed row
  int n, d, br, bc, tc;
  float scale;
  bool causal;
  int probe_tile, probe_row;
};

__device__ float NegInf() { return -INFINITY; }
// e^(from − to) for a rescale factor: a statistic still at −∞ contributes nothing (no −∞ − −∞ = NaN).
__device__ float Rescale(float from, float to) { return from == -INFINITY ? 0.0f : expf(from - to); }

// K_j and V_j (cols × d) into shared memory, all threads of the block striding over the elements.
__device__ void LoadKvTile(const ProbeParams& p, int col_begin, int cols, float* k_tile, float* v_tile) {
  const int count = cols * p.d;
  const float* k = p.k + static_cast<size_t>(col_begin) * p.d;
  const float* v = p.v + static_cast<size_t>(col_begin) * p.d;
  for (int at = threadIdx.x; at < count; at += blockDim.x) {
    k_tile[at] = k[at];
    v_tile[at] = v[at];
  }
}

// S_ij row of query `row` against the K_j tile: scale·q·k, −∞ where causal masking hides the key.
// Returns rowmax(S_ij) for this row.
__device__ float ScoreRow(const ProbeParams& p, const float* q_row, int row, int col_begin, int cols,
                          const float* k_tile, float* s_row) {
  float row_max = NegInf();
  for (int c = 0; c < cols; ++c) {
    if (p.causal && col_begin + c > row) {
      s_row[c] = NegInf();
      continue;
    }
    float dot = 0.0f;
    for (int e = 0; e < p.d; ++e) dot = fmaf(q_row[e], k_tile[c * p.d + e], dot);
    s_row[c] = p.scale * dot;
    row_max = fmaxf(row_max, s_row[c]);
  }
  return row_max;
}

// P̃ = exp(S − row_max) in place; returns rowsum(P̃). Masked scores give exactly 0.
__device__ float ExpRow(float* s_row, int cols, float row_max) {
  float sum = 0.0f;
  for (int c = 0; c < cols; ++c) {
    const float p = s_row[c] == -INFINITY ? 0.0f : expf(s_row[c] - row_max);
    s_row[c] = p;
    sum += p;
  }
  return sum;
}

// (P̃ V_j)[e] for one row.
__device__ float PvElement(const float* p_row, const float* v_tile, int cols, int d, int e) {
  float acc = 0.0f;
  for (int c = 0; c < cols; ++c) acc = fmaf(p_row[c], v_tile[c * d + e], acc);
  return acc;
}

__device__ void RecordStats(const ProbeParams& p, int i, int j, int r, float m, float l) {
  const size_t at = (static_cast<size_t>(i) * p.tc + j) * p.br + r;
  p.m_after[at] = m;
  p.l_after[at] = l;
}

// ---------------------------------------------------------------------------------------------------------
// [SECTION] flash1 instrumented: Algorithm 1. Launch j has one block per active Q tile i; the host's loop over
// j is Algorithm 1's outer loop, so the running O_i, ℓ_i, m_i of tile i pass through HBM between launches.
// Shared memory: K_j, V_j (B_c × d each), the S/P rows (B_r × B_c).
// ---------------------------------------------------------------------------------------------------------

__global__ void Flash1TileIteration(ProbeParams p, int j, int first_tile) {
  extern __shared__ float shared[];
  const int i = first_tile + blockIdx.x;
  const int col_begin = j * p.bc;
  const int cols = min(p.bc, p.n - col_begin);
  float* k_tile = shared;
  float* v_tile = k_tile + p.bc * p.d;
  float* s_rows = v_tile + p.bc * p.d;
  LoadKvTile(p, col_begin, cols, k_tile, v_tile);  // line 6: load K_j, V_j
  __syncthreads();  // every row's thread reads all of K_j and V_j

  const int r = threadIdx.x;
  const int row = i * p.br + r;
  if (row >= p.n) return;  // edge tile: nothing beyond row N
  float* s_row = s_rows + r * p.bc;
  // line 8: load Q_i, O_i, ℓ_i, m_i (this thread's row of each)
  const float* q_row = p.q + static_cast<size_t>(row) * p.d;
  float* o_row = p.o + static_cast<size_t>(row) * p.d;
  const float m_old = p.m[row], l_old = p.l[row];
  const float m_tile = ScoreRow(p, q_row, row, col_begin, cols, k_tile, s_row);  // S_ij, m̃_ij
  const float l_tile = ExpRow(s_row, cols, m_tile);                               // P̃_ij, ℓ̃_ij
  // line 11: m_new = max(m_i, m̃_ij), ℓ_new = e^(m_i − m_new)ℓ_i + e^(m̃_ij − m_new)ℓ̃_ij
  const float m_new = fmaxf(m_old, m_tile);
  const float alpha = Rescale(m_old, m_new), beta = Rescale(m_tile, m_new);
  const float l_new = alpha * l_old + beta * l_tile;
  // line 12: O_i ← diag(ℓ_new)⁻¹ (diag(ℓ_i) e^(m_i − m_new) O_i + e^(m̃_ij − m_new) P̃_ij V_j)
  const bool probed = i == p.probe_tile && r == p.probe_row;
  for (int e = 0; e < p.d; ++e) {
    const float updated =
        l_new == 0.0f ? 0.0f : (l_old * alpha * o_row[e] + beta * PvElement(s_row, v_tile, cols, p.d, e)) / l_new;
    o_row[e] = updated;
    if (probed) p.o_row_after[static_cast<size_t>(j) * p.d + e] = updated;
  }
  // line 13: ℓ_i ← ℓ_new, m_i ← m_new to HBM
  p.m[row] = m_new;
  p.l[row] = l_new;
  RecordStats(p, i, j, r, m_new, l_new);
}

// O = 0, ℓ = 0, m = −∞ in HBM (Algorithm 1, line 2).
__global__ void Flash1Init(float* o, float* l, float* m, int n, int d) {
  const size_t count = static_cast<size_t>(n) * d;
  for (size_t at = blockIdx.x * static_cast<size_t>(blockDim.x) + threadIdx.x; at < count;
       at += static_cast<size_t>(gridDim.x) * blockDim.x) {
    o[at] = 0.0f;
    if (at < static_cast<size_t>(n)) {
      l[at] = 0.0f;
      m[at] = -INFINITY;
    }
  }
}

// ---------------------------------------------------------------------------------------------------------
// [SECTION] flash2_row instrumented: FlashAttention-2's Q outer loop, one block per Q tile, one thread per
// query row; m_i, ℓ_i in registers, O_i and the S/P rows in shared memory (d and B_c are run-time sizes).
// Shared memory: K_j, V_j (B_c × d each), S/P rows (B_r × B_c), Q_i and O_i (B_r × d each).
// ---------------------------------------------------------------------------------------------------------

__global__ void Flash2RowProbe(ProbeParams p) {
  extern __shared__ float shared[];
  const int i = blockIdx.x;
  float* k_tile = shared;
  float* v_tile = k_tile + p.bc * p.d;
  float* s_rows = v_tile + p.bc * p.d;
  float* q_rows = s_rows + p.br * p.bc;
  float* o_rows = q_rows + p.br * p.d;
  const int r = threadIdx.x;
  const int row = i * p.br + r;
  const bool has_row = row < p.n;
  const int rows = min(p.br, p.n - i * p.br);
  float* q_row = q_rows + r * p.d;
  float* o_row = o_rows + r * p.d;
  float* s_row = s_rows + r * p.bc;
  if (has_row)
    for (int e = 0; e < p.d; ++e) {
      q_row[e] = p.q[static_cast<size_t>(row) * p.d + e];  // load Q_i
      o_row[e] = 0.0f;                                    // O_i = 0 on chip
    }
  float m = NegInf(), l = 0.0f;
  // Causal: K/V tiles past the last query of this tile are skipped entirely (no loads).
  const int last_row = i * p.br + rows - 1;
  const int tiles = p.causal ? min(p.tc, last_row / p.bc + 1) : p.tc;
  for (int j = 0; j < tiles; ++j) {
    const int col_begin = j * p.bc;
    const int cols = min(p.bc, p.n - col_begin);
    __syncthreads();  // every thread is done with the previous K_j, V_j before they are overwritten
    LoadKvTile(p, col_begin, cols, k_tile, v_tile);
    __syncthreads();  // the new K_j, V_j are visible to every row's thread
    if (!has_row) continue;
    const float tile_max = ScoreRow(p, q_row, row, col_begin, cols, k_tile, s_row);
    const float m_new = fmaxf(m, tile_max);                 // rowmax: m_i becomes m_new
    const float alpha = Rescale(m, m_new);
    const float tile_sum = ExpRow(s_row, cols, m_new);      // P̃_ij = exp(S_ij − m_new)
    l = alpha * l + tile_sum;                               // rowsum
    m = m_new;
    const bool probed = i == p.probe_tile && r == p.probe_row;
    for (int e = 0; e < p.d; ++e) {                         // O_i ← diag(α) O_i + P̃_ij V_j
      o_row[e] = alpha * o_row[e] + PvElement(s_row, v_tile, cols, p.d, e);
      if (probed) p.o_row_after[static_cast<size_t>(j) * p.d + e] = o_row[e];
    }
    RecordStats(p, i, j, r, m, l);
  }
  if (!has_row) return;
  for (int e = 0; e < p.d; ++e)  // finalize and write back O_i
    p.o[static_cast<size_t>(row) * p.d + e] = l > 0.0f ? o_row[e] / l : 0.0f;
}

// ---------------------------------------------------------------------------------------------------------
// [SECTION] host
// ---------------------------------------------------------------------------------------------------------

using probe::Allocate;
using probe::Check;
using probe::DeviceBuffer;
using probe::Download;
using probe::kMaxSharedBytes;
using probe::Upload;

std::size_t SharedBytes(const AttentionProblem& p) {
  const std::size_t kv = 2ull * p.bc * p.d, s = static_cast<std::size_t>(p.br) * p.bc;
  const std::size_t q_side = p.order == LoopOrder::kQOuter ? 2ull * p.br * p.d : 0;
  return (kv + s + q_side) * sizeof(float);
}

}  // namespace

std::string CudaDeviceDescription() {
  if (!CudaDeviceUnavailableReason().empty()) return "";
  cudaDeviceProp prop{};
  if (cudaGetDeviceProperties(&prop, 0) != cudaSuccess) return "";
  return Sprintf("%s (sm_%d%d, %d SMs)", prop.name, prop.major, prop.minor, prop.multiProcessorCount);
}

std::string TileProbeNotApplicable(const AttentionProblem& p) {
  if (p.br > 1024)
    return Sprintf("B_r = %d rows exceed 1024 threads per block (one thread per query row)", p.br);
  const std::size_t shared = SharedBytes(p);
  if (shared > kMaxSharedBytes)
    return Sprintf("the tiles need %zu KB of shared memory, more than the %zu KB a block can have", shared / 1024,
                   kMaxSharedBytes / 1024);
  return "";
}

TileProbeResult RunTileProbe(const AttentionProblem& p, const AttentionInputs& in, int probe_tile, int probe_row) {
  if (const std::string why = CudaDeviceUnavailableReason(); !why.empty()) throw InputError(why);
  if (const std::string why = TileProbeNotApplicable(p); !why.empty()) throw InputError(why);
  if (probe_tile < 0 || probe_tile >= p.tr() || probe_row < 0 || probe_row >= p.RowsInTile(probe_tile))
    throw InputError(Sprintf("probe row %d of tile %d is outside the problem", probe_row, probe_tile));
  const bool kv = p.order == LoopOrder::kKvOuter;
  TileProbeResult result;
  result.kernel = kv ? "flash1 (instrumented)" : "flash2_row (instrumented)";
  result.tr = p.tr();
  result.tc = p.tc();
  result.br = p.br;
  result.d = p.d;
  result.probe_tile = probe_tile;
  result.probe_row = probe_row;

  const std::size_t nd = static_cast<std::size_t>(p.n) * p.d;
  const std::size_t stats = static_cast<std::size_t>(p.tr()) * p.tc() * p.br;
  DeviceBuffer q = Upload(in.q, "uploading Q"), k = Upload(in.k, "uploading K"), v = Upload(in.v, "uploading V");
  DeviceBuffer o = Allocate(nd, "allocating O"), m = Allocate(p.n, "allocating m"), l = Allocate(p.n, "allocating l");
  DeviceBuffer m_after = Allocate(stats, "allocating the debug buffer");
  DeviceBuffer l_after = Allocate(stats, "allocating the debug buffer");
  DeviceBuffer o_row_after = Allocate(static_cast<std::size_t>(p.tc()) * p.d, "allocating the debug buffer");
  // NaN everywhere a pair is skipped or a row lies past N: 0xFF bytes are a NaN pattern.
  Check(cudaMemset(m_after.get(), 0xFF, stats * sizeof(float)), "clearing the debug buffer");
  Check(cudaMemset(l_after.get(), 0xFF, stats * sizeof(float)), "clearing the debug buffer");
  Check(cudaMemset(o_row_after.get(), 0xFF, static_cast<std::size_t>(p.tc()) * p.d * sizeof(float)),
        "clearing the debug buffer");

  ProbeParams params{q.get(), k.get(), v.get(), o.get(), m.get(), l.get(), m_after.get(), l_after.get(),
                     o_row_after.get(), p.n, p.d, p.br, p.bc, p.tc(), static_cast<float>(p.scale), p.causal,
                     probe_tile, probe_row};
  const std::size_t shared = SharedBytes(p);
  Check(cudaFuncSetAttribute(kv ? reinterpret_cast<const void*>(Flash1TileIteration)
                                : reinterpret_cast<const void*>(Flash2RowProbe),
                             cudaFuncAttributeMaxDynamicSharedMemorySize, static_cast<int>(shared)),
        "raising the shared-memory limit");
  const Schedule schedule(p);  // the model's own table of active (i, j) pairs
  result.kernel_ms = probe::TimeKernels(
      [&] {
        if (!kv) {
          Flash2RowProbe<<<p.tr(), p.br, shared>>>(params);
          return;
        }
        Flash1Init<<<std::min<std::size_t>((nd + 255) / 256, 1024), 256>>>(o.get(), l.get(), m.get(), p.n, p.d);
        for (int j = 0; j < p.tc(); ++j) {
          const Schedule::Outer& outer = schedule.outer(j);
          const int tiles = outer.inner_end - outer.inner_begin;
          if (tiles > 0) Flash1TileIteration<<<tiles, p.br, shared>>>(params, j, outer.inner_begin);
        }
      },
      "running the instrumented kernel");

  Download(m_after, stats, result.m_after, "reading the debug buffer");
  Download(l_after, stats, result.l_after, "reading the debug buffer");
  Download(o_row_after, static_cast<std::size_t>(p.tc()) * p.d, result.o_row_after, "reading the debug buffer");
  Download(o, nd, result.o, "reading O");
  return result;
}

}  // namespace flashviz::cuda
