// [SECTION] device: D = rowsum(dO ∘ O), then one block per K/V tile j walking its Q tiles
// [SECTION] host: buffers, launches, the record read back
// [SECTION] the cross-check against the stepper
//
// Like tile_probe.cu, these kernels teach and check; they are not fast: the tile sizes are the student's, the
// block's threads stride over whatever B_r × B_c and B_c × d are, and every exponential is expf.
#include "kernels/cuda/probe/backward_probe.h"

#include <cuda_runtime.h>

#include <cmath>
#include <limits>

#include "kernels/cuda/device_status.h"
#include "kernels/cuda/probe/probe_buffers.cuh"

namespace flashviz::cuda {
namespace {

using probe::Allocate;
using probe::Check;
using probe::DeviceBuffer;
using probe::Download;
using probe::kMaxSharedBytes;
using probe::Upload;

constexpr int kThreads = 256;
// The record of dK_j, dV_j after every tile iteration, at most this many floats each (T_c·T_r·B_c·d).
constexpr std::size_t kMaxRecordFloats = std::size_t{64} << 20;

struct BackwardParams {
  const float* q;
  const float* k;
  const float* v;
  const float* o;
  const float* dout;
  const float* lse;
  float* delta;  // D, N
  float* dq;     // N × d, zeroed, added into by every K/V tile
  float* dk;     // N × d
  float* dv;     // N × d
  float* dk_after;
  float* dv_after;
  int n, d, br, bc, tr;
  float scale;
  bool causal;
};

// ---------------------------------------------------------------------------------------------------------
// [SECTION] device
// ---------------------------------------------------------------------------------------------------------

__global__ void DeltaKernel(BackwardParams p) {
  const int row = blockIdx.x * blockDim.x + threadIdx.x;
  if (row >= p.n) return;
  float sum = 0.0f;
  for (int e = 0; e < p.d; ++e)
    sum = fmaf(p.dout[static_cast<size_t>(row) * p.d + e], p.o[static_cast<size_t>(row) * p.d + e], sum);
  p.delta[row] = sum;
}

// Block j: dK_j, dV_j in shared memory; P_ij and dS_ij (B_r × B_c) in shared memory between the products.
__global__ void BackwardTileKernel(BackwardParams p) {
  extern __shared__ float shared[];
  const int j = blockIdx.x;
  const int col0 = j * p.bc, cols = min(p.bc, p.n - col0);
  float* dk = shared;              // B_c × d
  float* dv = dk + p.bc * p.d;     // B_c × d
  float* prob = dv + p.bc * p.d;   // B_r × B_c
  float* ds = prob + p.br * p.bc;  // B_r × B_c
  for (int at = threadIdx.x; at < cols * p.d; at += blockDim.x) dk[at] = dv[at] = 0.0f;
  __syncthreads();
  // The Q tiles that meet K/V tile j: all of them, or (causal) those whose last row reaches its first key.
  const int first_i = p.causal ? col0 / p.br : 0;
  for (int i = first_i; i < p.tr; ++i) {
    const int row0 = i * p.br, rows = min(p.br, p.n - row0);
    // P_ij = exp(S_ij − L_i) and dS_ij = P_ij ∘ (dO_i V_jᵀ − D_i), one entry per thread at a time.
    for (int at = threadIdx.x; at < rows * cols; at += blockDim.x) {
      const int r = at / cols, c = at % cols, row = row0 + r, col = col0 + c;
      float pr = 0.0f, dp = 0.0f;
      if (!(p.causal && col > row)) {
        float s = 0.0f;
        for (int e = 0; e < p.d; ++e)
          s = fmaf(p.q[static_cast<size_t>(row) * p.d + e], p.k[static_cast<size_t>(col) * p.d + e], s);
        pr = expf(p.scale * s - p.lse[row]);
      }
      for (int e = 0; e < p.d; ++e)
        dp = fmaf(p.dout[static_cast<size_t>(row) * p.d + e], p.v[static_cast<size_t>(col) * p.d + e], dp);
      prob[r * p.bc + c] = pr;
      ds[r * p.bc + c] = pr * (dp - p.delta[row]);
    }
    __syncthreads();
    // dV_j += P_ijᵀ dO_i, dK_j += scale·dS_ijᵀ Q_i.
    for (int at = threadIdx.x; at < cols * p.d; at += blockDim.x) {
      const int c = at / p.d, e = at % p.d;
      float add_v = 0.0f, add_k = 0.0f;
      for (int r = 0; r < rows; ++r) {
        add_v = fmaf(prob[r * p.bc + c], p.dout[static_cast<size_t>(row0 + r) * p.d + e], add_v);
        add_k = fmaf(ds[r * p.bc + c], p.q[static_cast<size_t>(row0 + r) * p.d + e], add_k);
      }
      dv[at] += add_v;
      dk[at] += p.scale * add_k;
      const size_t record = ((static_cast<size_t>(j) * p.tr + i) * p.bc + c) * p.d + e;
      p.dv_after[record] = dv[at];
      p.dk_after[record] = dk[at];
    }
    // dQ_i += scale·dS_ij K_j: the blocks of the other K/V tiles add into the same rows, so atomicAdd.
    for (int at = threadIdx.x; at < rows * p.d; at += blockDim.x) {
      const int r = at / p.d, e = at % p.d;
      float add = 0.0f;
      for (int c = 0; c < cols; ++c) add = fmaf(ds[r * p.bc + c], p.k[static_cast<size_t>(col0 + c) * p.d + e], add);
      atomicAdd(&p.dq[static_cast<size_t>(row0 + r) * p.d + e], p.scale * add);
    }
    __syncthreads();  // P_ij and dS_ij are overwritten by the next Q tile
  }
  for (int at = threadIdx.x; at < cols * p.d; at += blockDim.x) {
    p.dk[static_cast<size_t>(col0) * p.d + at] = dk[at];
    p.dv[static_cast<size_t>(col0) * p.d + at] = dv[at];
  }
}

std::size_t SharedBytes(const AttentionProblem& p) {
  return (2ull * p.bc * p.d + 2ull * p.br * p.bc) * sizeof(float);
}

std::size_t RecordFloats(const AttentionProblem& p) {
  return static_cast<std::size_t>(p.tc()) * p.tr() * p.bc * p.d;
}

}  // namespace

// ---------------------------------------------------------------------------------------------------------
// [SECTION] host
// ---------------------------------------------------------------------------------------------------------

std::string BackwardProbeNotApplicable(const AttentionProblem& p) {
  const std::size_t shared = SharedBytes(p);
  if (shared > kMaxSharedBytes)
    return Sprintf(
        "the tiles need %zu KB of shared memory (dK_j, dV_j, P_ij, dS_ij), more than the %zu KB a block "
        "can have",
        shared / 1024, kMaxSharedBytes / 1024);
  if (RecordFloats(p) > kMaxRecordFloats)
    return Sprintf("recording dK_j and dV_j after each of the %lld tile iterations takes %s: larger tiles, please",
                   static_cast<long long>(p.tr()) * p.tc(),
                   HumanBytes(2.0 * static_cast<double>(RecordFloats(p)) * sizeof(float)).c_str());
  return "";
}

BackwardProbeResult RunBackwardProbe(const AttentionProblem& p, const AttentionInputs& in, const ForwardSaved& saved) {
  if (const std::string why = CudaDeviceUnavailableReason(); !why.empty()) throw InputError(why);
  if (const std::string why = BackwardProbeNotApplicable(p); !why.empty()) throw InputError(why);
  BackwardProbeResult result;
  result.kernel = "flash2_bwd (instrumented)";
  result.tr = p.tr();
  result.tc = p.tc();
  result.bc = p.bc;
  result.d = p.d;
  const std::size_t nd = static_cast<std::size_t>(p.n) * p.d, record = RecordFloats(p);
  const std::vector<float> o32(saved.o.begin(), saved.o.end()), lse32(saved.lse.begin(), saved.lse.end());
  DeviceBuffer q = Upload(in.q, "uploading Q"), k = Upload(in.k, "uploading K"), v = Upload(in.v, "uploading V");
  DeviceBuffer dout = Upload(in.dout, "uploading dO"), o = Upload(o32, "uploading O"),
               lse = Upload(lse32, "uploading L");
  DeviceBuffer delta = Allocate(p.n, "allocating D"), dq = Allocate(nd, "allocating dQ");
  DeviceBuffer dk = Allocate(nd, "allocating dK"), dv = Allocate(nd, "allocating dV");
  DeviceBuffer dk_after = Allocate(record, "allocating the debug buffer");
  DeviceBuffer dv_after = Allocate(record, "allocating the debug buffer");
  Check(cudaMemset(dq.get(), 0, nd * sizeof(float)), "clearing dQ");
  // NaN everywhere a pair is skipped or a key lies past N: 0xFF bytes are a NaN pattern.
  Check(cudaMemset(dk_after.get(), 0xFF, record * sizeof(float)), "clearing the debug buffer");
  Check(cudaMemset(dv_after.get(), 0xFF, record * sizeof(float)), "clearing the debug buffer");
  const BackwardParams params{q.get(),     k.get(),  v.get(),  o.get(),  dout.get(),     lse.get(),
                              delta.get(), dq.get(), dk.get(), dv.get(), dk_after.get(), dv_after.get(),
                              p.n,         p.d,      p.br,     p.bc,     p.tr(),         static_cast<float>(p.scale),
                              p.causal};
  const std::size_t shared = SharedBytes(p);
  Check(cudaFuncSetAttribute(BackwardTileKernel, cudaFuncAttributeMaxDynamicSharedMemorySize, static_cast<int>(shared)),
        "raising the shared-memory limit");
  result.kernel_ms = probe::TimeKernels(
      [&] {
        DeltaKernel<<<(p.n + kThreads - 1) / kThreads, kThreads>>>(params);
        BackwardTileKernel<<<p.tc(), kThreads, shared>>>(params);
      },
      "running the instrumented backward kernel");
  Download(dk_after, record, result.dk_after, "reading the debug buffer");
  Download(dv_after, record, result.dv_after, "reading the debug buffer");
  Download(dq, nd, result.dq, "reading dQ");
  Download(dk, nd, result.dk, "reading dK");
  Download(dv, nd, result.dv, "reading dV");
  return result;
}

// ---------------------------------------------------------------------------------------------------------
// [SECTION] the cross-check
// ---------------------------------------------------------------------------------------------------------

double BackwardTileError(const AttentionProblem& p, const BackwardProbeResult& gpu, const std::vector<double>& mine,
                         bool dk, int i, int j) {
  const std::vector<float>& theirs = dk ? gpu.dk_after : gpu.dv_after;
  if (mine.size() != static_cast<std::size_t>(p.ColsInTile(j)) * p.d) return std::numeric_limits<double>::infinity();
  double top = 1.0, error = 0.0;
  for (double x : mine) top = std::max(top, std::fabs(x));
  for (int c = 0; c < p.ColsInTile(j); ++c)
    for (int e = 0; e < p.d; ++e) {
      const double diff = std::fabs(theirs[gpu.At(i, j, c, e)] - mine[static_cast<std::size_t>(c) * p.d + e]);
      error = std::isnan(diff) ? std::numeric_limits<double>::infinity() : std::max(error, diff);
    }
  return error / top;
}

BackwardCrossCheck CompareBackwardWithModel(const Stepper& model, const BackwardProbeResult& gpu) {
  const AttentionProblem& p = model.problem();
  BackwardCrossCheck check;
  check.model_dk_after.assign(gpu.dk_after.size(), std::numeric_limits<double>::quiet_NaN());
  check.model_dv_after.assign(gpu.dv_after.size(), std::numeric_limits<double>::quiet_NaN());
  bool within = true;
  const auto keep = [&](const std::vector<double>& mine, std::vector<double>& into, int i, int j) {
    for (int c = 0; c < p.ColsInTile(j) && static_cast<std::size_t>(c + 1) * p.d <= mine.size(); ++c)
      for (int e = 0; e < p.d; ++e) into[gpu.At(i, j, c, e)] = mine[static_cast<std::size_t>(c) * p.d + e];
  };
  const auto compare = [&](const std::vector<double>& mine, bool dk, int i, int j, double& worst) {
    const double relative = BackwardTileError(p, gpu, mine, dk, i, j);
    if (!(relative <= kBackwardCrossCheckTolerance)) within = false;
    if (relative > worst) {
      worst = relative;
      check.worst_i = i;
      check.worst_j = j;
    }
  };
  const std::vector<double> grads = model.Replay([&](const StepView& view) {
    const StepInfo& info = view.info();
    if (info.phase != Phase::kGradK) return true;  // the end of a tile iteration: dK_j, dV_j are updated
    compare(view.grad().dk, true, info.i, info.j, check.max_dk_error);
    compare(view.grad().dv, false, info.i, info.j, check.max_dv_error);
    keep(view.grad().dk, check.model_dk_after, info.i, info.j);
    keep(view.grad().dv, check.model_dv_after, info.i, info.j);
    ++check.compared;
    return true;
  });
  const std::size_t nd = static_cast<std::size_t>(p.n) * p.d;
  const std::vector<float>* finals[3] = {&gpu.dq, &gpu.dk, &gpu.dv};
  for (int t = 0; t < 3 && grads.size() == 3 * nd; ++t) {
    double top = 1.0, error = 0.0;
    for (std::size_t at = 0; at < nd; ++at) top = std::max(top, std::fabs(grads[t * nd + at]));
    for (std::size_t at = 0; at < nd; ++at) {
      const double diff = std::fabs((*finals[t])[at] - grads[t * nd + at]);
      error = std::isnan(diff) ? std::numeric_limits<double>::infinity() : std::max(error, diff);
    }
    check.max_grad_error = std::max(check.max_grad_error, error / top);
  }
  if (!(check.max_grad_error <= kBackwardCrossCheckTolerance)) within = false;
  check.agrees = within && check.compared > 0;
  check.summary = Sprintf(
      "%s: %s the model over %d tile iterations: max |ΔdK_j| = %.3g, max |ΔdV_j| = %.3g, "
      "final dQ, dK, dV %.3g (relative to each tile's largest value; tolerance %.0e)",
      gpu.kernel.c_str(), check.agrees ? "agrees with" : "DISAGREES with", check.compared, check.max_dk_error,
      check.max_dv_error, check.max_grad_error, kBackwardCrossCheckTolerance);
  if (!check.agrees && check.worst_i >= 0)
    check.summary += Sprintf("; largest difference at tile i = %d, j = %d", check.worst_i, check.worst_j);
  return check;
}

}  // namespace flashviz::cuda
