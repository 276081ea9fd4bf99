// The backward catalogue: backward_rows.inc's metadata as plain C++ (no CUDA), the FLOP count and the byte
// models. Compiled into flashviz_kernels in every build.
#include "kernels/cuda/backward/backward_registry.h"

#include <algorithm>
#include <string>

#include "kernels/common/format.h"
#include "kernels/common/input_error.h"

#include "kernels/cuda/backward/backward_tiles.h"

namespace flashviz::cuda {
namespace {

// The first three arguments name CUDA functions; this build reads only the metadata after them.
#define FLASHVIZ_BACKWARD_VARIANT(launch, not_applicable, workspace, ...) VariantInfo{__VA_ARGS__},
const VariantInfo kBackwardCatalogue[] = {
#include "kernels/cuda/backward/backward_rows.inc"
};
#undef FLASHVIZ_BACKWARD_VARIANT

double HeadElements(const AttentionShape& shape) {
  return static_cast<double>(shape.n) * shape.d;
}

// Σ over K/V tiles j of the query rows its block visits: all N, or (causal) from the first Q tile of B_r rows
// that meets j; rows past N included, as the kernels load them (zero-filled).
double RowVisits(const AttentionShape& shape, int block_rows, int block_keys) {
  const int q_tiles = (shape.n + block_rows - 1) / block_rows;
  double visits = 0;
  for (int col = 0; col < shape.n; col += block_keys) {
    const int first_tile = shape.causal ? col / block_rows : 0;
    visits += static_cast<double>(q_tiles - first_tile) * block_rows;
  }
  return visits;
}

// The fused schedule's traffic per head: K, V read and dK, dV written once; per row visit Q_i and dO_i read,
// L_i and D_i read, `dq_visit_bytes` of dQ traffic; plus the D pass (O and dO read, D written).
double FusedBackwardBytes(const AttentionShape& shape, DType dtype, int block_rows, int block_keys,
                          double dq_visit_bytes_per_element) {
  const double element = static_cast<double>(DTypeBytes(dtype));
  const double kv = 4.0 * HeadElements(shape) * element;
  const double d_pass = 2.0 * HeadElements(shape) * element + 4.0 * shape.n;
  const double per_visit = 2.0 * shape.d * element + 2.0 * 4.0 + shape.d * dq_visit_bytes_per_element;
  return static_cast<double>(shape.Heads()) * (kv + d_pass + RowVisits(shape, block_rows, block_keys) * per_visit);
}

}  // namespace

std::span<const VariantInfo> BackwardCatalogue() {
  return kBackwardCatalogue;
}

const VariantInfo* FindBackwardInfo(std::string_view id) {
  for (const VariantInfo& variant : kBackwardCatalogue)
    if (id == variant.id) return &variant;
  return nullptr;
}

std::vector<SweepPoint> BackwardSweepPoints(const SweepSpec& spec) {
  std::vector<const VariantInfo*> variants;
  for (const std::string& id : spec.kernels) {
    const VariantInfo* variant = FindBackwardInfo(id);
    if (!variant) {
      std::string known;
      for (const VariantInfo& v : kBackwardCatalogue) known += (known.empty() ? "" : ", ") + std::string(v.id);
      throw InputError(Sprintf("unknown backward kernel '%s' (known: %s)", id.c_str(), known.c_str()));
    }
    variants.push_back(variant);
  }
  // The forward sweep's checks and shapes, for one stand-in kernel; each of its shapes then gets every variant.
  SweepSpec shapes_only = spec;
  shapes_only.kernels = {Catalogue().front().id};
  if (spec.kernels.empty()) shapes_only.kernels.clear();  // "no kernels to run"
  std::vector<SweepPoint> points;
  for (const SweepPoint& shape_point : SweepPoints(shapes_only))
    for (const VariantInfo* variant : variants) points.push_back({variant, shape_point.shape});
  return points;
}

double BackwardFlops(const AttentionShape& shape) {
  return 2.5 * AttentionFlops(shape);
}

double NaiveBackwardHbmBytes(const AttentionShape& shape, DType dtype) {
  // Inputs as the kernels read them: Q (P, dK), K (P, dQ), V (dP), O (D), dO (D, dP, dV); dQ, dK, dV written;
  // L read, D written and read. N² fp32 matrices: P written, read by dV and dS; dP written, read by dS; dS
  // written, read by dQ and dK.
  const double heads = static_cast<double>(shape.Heads());
  const double tensors = 12.0 * heads * HeadElements(shape) * static_cast<double>(DTypeBytes(dtype));
  const double rows = 3.0 * heads * shape.n * 4.0;
  const double squares = 8.0 * heads * static_cast<double>(shape.n) * shape.n * 4.0;
  return tensors + rows + squares;
}

double Flash2BackwardHbmBytes(const AttentionShape& shape, DType dtype) {
  // dQ zeroed once, then read and written (atomicAdd) at every row visit.
  return FusedBackwardBytes(shape, dtype, backward_tiles::kFlash2Br, backward_tiles::kFlash2Bc, 8.0) +
         static_cast<double>(shape.Heads()) * HeadElements(shape) * 4.0;
}

double MmaBackwardAtomicHbmBytes(const AttentionShape& shape, DType dtype) {
  // The fp32 accumulator: zeroed, read and written at every row visit, read once by the convert kernel, which
  // writes dQ in the input dtype.
  const double accumulator_once =
      static_cast<double>(shape.Heads()) * HeadElements(shape) * (4.0 + 4.0 + static_cast<double>(DTypeBytes(dtype)));
  return FusedBackwardBytes(shape, dtype, backward_tiles::MmaBr(shape.d), backward_tiles::MmaBc(shape.d), 8.0) +
         accumulator_once;
}

double MmaBackwardDqPassHbmBytes(const AttentionShape& shape, DType dtype) {
  // dK/dV pass without dQ; then the dQ pass: Q, dO, L, D read and dQ written once per Q tile, K_j and V_j read
  // at every key visit (the same count as the forward pass's).
  const double element = static_cast<double>(DTypeBytes(dtype));
  const int q_tiles = (shape.n + backward_tiles::kMmaDqBr - 1) / backward_tiles::kMmaDqBr;
  double key_visits = 0;  // Σ over Q tiles of the keys its block reads
  for (int tile = 0; tile < q_tiles; ++tile) {
    const int last_key = shape.causal ? std::min(shape.n, (tile + 1) * backward_tiles::kMmaDqBr) - 1 : shape.n - 1;
    key_visits += static_cast<double>(last_key / backward_tiles::kMmaDqBc + 1) * backward_tiles::kMmaDqBc;
  }
  const double dq_pass =
      static_cast<double>(shape.Heads()) *
      (3.0 * HeadElements(shape) * element + 2.0 * shape.n * 4.0 + key_visits * 2.0 * shape.d * element);
  return FusedBackwardBytes(shape, dtype, backward_tiles::MmaBr(shape.d), backward_tiles::MmaBc(shape.d), 0.0) +
         dq_pass;
}

double MmaBackwardHbmBytes(const AttentionShape& shape, DType dtype) {
  // The dQ strategy flash2_bwd_mma registers for each d (backward_variants.h): the separate pass at d = 128.
  return shape.d == 128 ? MmaBackwardDqPassHbmBytes(shape, dtype) : MmaBackwardAtomicHbmBytes(shape, dtype);
}

std::size_t NaiveBackwardWorkspaceBytes(const AttentionShape& shape, DType /*dtype*/) {
  const auto heads = static_cast<std::size_t>(shape.Heads());
  const auto n = static_cast<std::size_t>(shape.n);
  return (3 * heads * n * n + heads * n) * sizeof(float);
}

std::size_t Flash2BackwardWorkspaceBytes(const AttentionShape& shape, DType /*dtype*/) {
  return static_cast<std::size_t>(shape.Heads()) * static_cast<std::size_t>(shape.n) * sizeof(float);
}

std::size_t MmaBackwardWorkspaceBytes(const AttentionShape& shape, DType /*dtype*/) {
  // D, then the fp32 dQ accumulator, which starts 16-byte aligned (the D part is rounded up to 4 floats).
  const std::size_t rows = static_cast<std::size_t>(shape.Heads()) * static_cast<std::size_t>(shape.n);
  const std::size_t d_floats = (rows + 3) / 4 * 4;
  return (d_floats + rows * static_cast<std::size_t>(shape.d)) * sizeof(float);
}

}  // namespace flashviz::cuda
