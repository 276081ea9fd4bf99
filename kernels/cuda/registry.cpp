// The catalogue: registry_rows.inc's metadata as plain C++ (no CUDA), plus the checks and byte models that
// need nothing but the shape. Compiled into flashviz_kernels in every build.
#include "kernels/cuda/registry.h"

#include <cmath>

#include "kernels/common/format.h"
#include "kernels/cuda/tile_sizes.h"

namespace flashviz::cuda {
namespace {

// The first three arguments name CUDA functions; this build reads only the metadata after them.
#define FLASHVIZ_VARIANT(launch, not_applicable, workspace, ...) VariantInfo{__VA_ARGS__},
const VariantInfo kCatalogue[] = {
#include "kernels/cuda/registry_rows.inc"
};
#undef FLASHVIZ_VARIANT

double Elements(const AttentionShape& shape) {  // elements of one of Q, K, V, O
  return static_cast<double>(shape.Heads()) * shape.n * shape.d;
}
double ScoreElements(const AttentionShape& shape) {  // elements of S (or P): B·H·N²
  return static_cast<double>(shape.Heads()) * shape.n * static_cast<double>(shape.n);
}

}  // namespace

std::span<const VariantInfo> Catalogue() { return kCatalogue; }

const VariantInfo* FindVariantInfo(std::string_view id) {
  for (const VariantInfo& variant : kCatalogue)
    if (id == variant.id) return &variant;
  return nullptr;
}

std::string DTypesText(unsigned dtypes) {
  std::string text;
  for (DType dtype : {DType::kFp32, DType::kFp16, DType::kBf16})
    if (dtypes & DTypeBit(dtype)) {
      if (!text.empty()) text += ", ";
      text += DTypeName(dtype);
    }
  return text;
}

std::string HeadDimsText(const VariantInfo& variant) {
  if (variant.head_dims[0] == 0) return Sprintf("any d ≤ %d", variant.max_head_dim);
  std::string text;
  for (int d : variant.head_dims)
    if (d > 0) {
      if (!text.empty()) text += ", ";
      text += std::to_string(d);
    }
  return text;
}

std::optional<std::string> CatalogueNotApplicable(const VariantInfo& variant, const AttentionShape& shape,
                                                  DType dtype) {
  if (shape.batch < 1 || shape.heads < 1)
    return Sprintf("B = %d, H = %d: both must be at least 1", shape.batch, shape.heads);
  if (shape.n < 1) return Sprintf("N = %d: N must be at least 1", shape.n);
  if (shape.d < 1) return Sprintf("d = %d: d must be at least 1", shape.d);
  if (!(variant.dtypes & DTypeBit(dtype)))
    return Sprintf("%s: %s runs %s only", std::string(DTypeName(dtype)).c_str(), variant.id,
                   DTypesText(variant.dtypes).c_str());
  bool listed = variant.head_dims[0] == 0 && shape.d <= variant.max_head_dim;
  for (int d : variant.head_dims) listed |= d > 0 && d == shape.d;
  if (!listed)
    return Sprintf("d = %d: %s supports %s", shape.d, variant.id, HeadDimsText(variant).c_str());
  // Every variant puts B·H in one grid dimension of at most 65535 blocks, or walks it in such a grid.
  if (shape.Heads() > 65535)
    return Sprintf("B·H = %lld: at most 65535 heads per launch", static_cast<long long>(shape.Heads()));
  if (!std::isfinite(shape.scale)) return Sprintf("scale = %g: must be finite", static_cast<double>(shape.scale));
  return std::nullopt;
}

double AttentionFlops(const AttentionShape& shape) {
  const double flops = 4.0 * ScoreElements(shape) * shape.d;
  return shape.causal ? flops / 2 : flops;
}

double FusedHbmBytes(const AttentionShape& shape, DType dtype) {
  return 4.0 * Elements(shape) * static_cast<double>(DTypeBytes(dtype));
}

double QuantizedFp8HbmBytes(const AttentionShape& shape, DType dtype) {
  const double input = static_cast<double>(DTypeBytes(dtype));
  // 3 inputs read twice + 3 one-byte copies written + the copies read + O written.
  return Elements(shape) * (3.0 * 2.0 * input + 3.0 + 3.0 + input);
}

double E4m3AttentionTolerance(const AttentionShape& shape, DType /*dtype*/) {
  // flash3_fp8.cu's bound with |x̂| ≤ 3: Σ_l |q̂_l k̂_l| ≤ 9d; the tensor cores' accumulation 2^-14 per k32 step
  // (S: d/32 + 1, P̃V: 4⌈N/128⌉ + 1, the padded keys included); the exponential 2^-13; ℓ's fp32 sum N·2^-26;
  // P̃'s rounding 2^-4; O's bf16 rounding 2^-8; Σ p|v|/ℓ ≤ 3.
  const double d = shape.d, n = shape.n, bound = 3.0;
  const double epsilon_s = std::ldexp(d / 32 + 1, -14), epsilon_o = std::ldexp(4 * std::ceil(n / 128) + 1, -14);
  const double perturbation = static_cast<double>(shape.scale) * epsilon_s * bound * bound * d + std::ldexp(1.0, -13) +
                              n * std::ldexp(1.0, -26);
  const double kappa = std::exp(2 * perturbation) * (1 + epsilon_o);
  const double core = ((kappa - 1) + kappa / 16) * bound;
  return core + std::ldexp(bound + core, -8);
}

double MaterializedFp32HbmBytes(const AttentionShape& shape, DType dtype) {
  // S written by the first kernel and read by the softmax, P written by the softmax and read by PV.
  return FusedHbmBytes(shape, dtype) + 4.0 * ScoreElements(shape) * 4.0;
}

double MaterializedHbmBytes(const AttentionShape& shape, DType dtype) {
  return FusedHbmBytes(shape, dtype) + 4.0 * ScoreElements(shape) * static_cast<double>(DTypeBytes(dtype));
}

double Algorithm1HbmBytes(const AttentionShape& shape, DType dtype) {
  // Algorithm 1 (flash1's tiles): init writes O, ℓ, m; then for every K/V tile j it loads K_j, V_j once and, for
  // each query row r that tile j reaches (all rows; causal: rows r ≥ j·B_c), reads Q_i, O_i, ℓ_i, m_i and writes
  // O_i, ℓ_i, m_i back.
  const double heads = static_cast<double>(shape.Heads());
  const double element = static_cast<double>(DTypeBytes(dtype));
  const int bc = tiles::kFlash1Bc;
  double row_visits = 0;  // Σ_j rows that tile j updates
  for (int col = 0; col < shape.n; col += bc) row_visits += shape.causal ? shape.n - col : shape.n;
  const double per_row_visit = shape.d * element + 2.0 * (shape.d + 2) * 4.0;  // Q row; O row, ℓ, m in and out
  const double init = (static_cast<double>(shape.n) * shape.d + 2.0 * shape.n) * 4.0;
  const double kv_once = 2.0 * shape.n * shape.d * element;
  return heads * (init + kv_once + row_visits * per_row_visit);
}

}  // namespace flashviz::cuda
