// The registry's catalogue: one row of plain metadata per CUDA variant, in the order of the progression
// (docs/design.md, principle 4). Plain C++ with no cuda_runtime.h, compiled into flashviz_kernels in every build,
// so `flashviz kernels`, the GUI and the no-GPU tests can list the variants and say why a shape is not
// applicable even where CUDA was not built. The launch functions join these rows in variants.h (CUDA builds).
//
// The rows themselves live in registry_rows.inc (one FLASHVIZ_VARIANT entry per variant).
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>

#include "kernels/cuda/attention_types.h"

namespace flashviz::cuda {

// The bytes a variant's algorithm must move through device memory for this shape (each tensor it reads or
// writes, counted once per time the algorithm as written reads or writes it; cache hits not subtracted).
using HbmBytesFunction = double (*)(const AttentionShape& shape, DType dtype);

// How a variant rounds its inputs before it computes with them. The harness validates against the float64
// reference of the inputs so rounded: what is left is the variant's own arithmetic, which its tolerance bounds.
enum class InputRounding : std::uint8_t {
  kNone,
  // Each of Q, K, V to e4m3 with one scale per tensor: x̂ = descale·e4m3(x·(1/descale)), descale = max|x| / 448 in
  // fp32 (1 for an all-zero tensor); flash3_fp8.
  kE4m3PerTensor,
};

struct VariantInfo {
  const char* id;        // what --kernels takes: "flash2_warp"
  const char* name;      // a title for tables and the GUI
  const char* changes;   // what it changes versus the variant before it
  const char* teaches;   // the idea the step teaches, in one line
  const char* mirrors;   // the paper, project or library it mirrors (docs/sources.md names them)
  unsigned dtypes;       // DTypeBit(...) set
  std::array<int, 6> head_dims;  // supported d, ascending, 0 after the last; all 0: any d in [1, max_head_dim]
  int max_head_dim;
  const char* tiles;     // B_r × B_c (and what else is tiled)
  const char* launch;    // grid, block, shared memory, number of kernels
  const char* workspace; // what the device scratch holds, "none" when there is none
  HbmBytesFunction hbm_bytes;
  InputRounding input_rounding = InputRounding::kNone;
  // The largest |kernel − reference| the harness allows for this shape, when the variant computes in a narrower type
  // than its inputs (flash3_fp8); null: the dtype's own tolerance (harness.h, Tolerance).
  double (*tolerance)(const AttentionShape& shape, DType dtype) = nullptr;
  // Options bits that reuse what a launch without them left in the workspace (flash3_fp8's quantized inputs): the
  // harness makes such a launch first.
  unsigned options_reusing_workspace = 0;
};

// Every row, in the order of registry_rows.inc.
std::span<const VariantInfo> Catalogue();
const VariantInfo* FindVariantInfo(std::string_view id);

// The checks the catalogue's data can make on its own (dtype, d, sizes), with the reason as one line
// ("dtype fp16: flash2_warp runs fp32 only"). A CUDA build adds each variant's own check (variants.h).
std::optional<std::string> CatalogueNotApplicable(const VariantInfo& variant, const AttentionShape& shape,
                                                  DType dtype);

// "fp32, fp16, bf16"; "32, 64, 128" or "any d ≤ 1024".
std::string DTypesText(unsigned dtypes);
std::string HeadDimsText(const VariantInfo& variant);

// FLOPs as the FlashAttention papers count them: 4·B·H·N²·d (two matrix products of 2·N²·d each per head),
// halved for causal masking (half the score matrix is masked; the papers halve it too).
double AttentionFlops(const AttentionShape& shape);

// Byte models shared by several rows (the rows of issues 7 and 8 can use them too).
double FusedHbmBytes(const AttentionShape& shape, DType dtype);        // Q, K, V read once, O written once
double MaterializedFp32HbmBytes(const AttentionShape& shape, DType dtype);  // + S and P (fp32) written and read
double MaterializedHbmBytes(const AttentionShape& shape, DType dtype);  // + S and P in the input dtype
double Algorithm1HbmBytes(const AttentionShape& shape, DType dtype);    // + O_i, ℓ_i, m_i (and Q_i) per K/V tile
// flash3_fp8: the quantization reads Q, K, V twice (max |x|, then the rounding) and writes their e4m3 copies, the
// attention reads the copies and writes O (in `dtype`).
double QuantizedFp8HbmBytes(const AttentionShape& shape, DType dtype);
// flash3_fp8's error bound (kernels/cuda/mma/flash3_fp8.cu) on its own rounded inputs, at the largest |x| the
// harness draws (3): the tolerance of its row.
double E4m3AttentionTolerance(const AttentionShape& shape, DType dtype);

}  // namespace flashviz::cuda
