// The plain-C++ half of the launch signature: element types, the problem shape, and the per-variant
// not-applicable and workspace functions. No cuda_runtime.h here, so the registry's catalogue
// (registry.h), `flashviz kernels` and the no-GPU tests compile in a build without CUDA.
// attention_launch.h adds the device side (AttentionArgs, LaunchFunction).
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace flashviz::cuda {

enum class DType : std::uint8_t { kFp32, kFp16, kBf16 };

constexpr std::string_view DTypeName(DType dtype) {
  switch (dtype) {
    case DType::kFp32: return "fp32";
    case DType::kFp16: return "fp16";
    case DType::kBf16: return "bf16";
  }
  return "?";
}

constexpr std::optional<DType> ParseDType(std::string_view text) {
  if (text == "fp32") return DType::kFp32;
  if (text == "fp16") return DType::kFp16;
  if (text == "bf16") return DType::kBf16;
  return std::nullopt;
}

constexpr std::size_t DTypeBytes(DType dtype) { return dtype == DType::kFp32 ? 4 : 2; }

// A set of dtypes as bits, for the registry's "dtypes" column.
constexpr unsigned DTypeBit(DType dtype) { return 1u << static_cast<unsigned>(dtype); }
inline constexpr unsigned kFp32Only = DTypeBit(DType::kFp32);
inline constexpr unsigned kHalfTypes = DTypeBit(DType::kFp16) | DTypeBit(DType::kBf16);
inline constexpr unsigned kAllDTypes = kFp32Only | kHalfTypes;

struct AttentionShape {
  int batch = 1;
  int heads = 1;
  int n = 0;      // sequence length N (any N ≥ 1, not only multiples of the tile)
  int d = 0;      // head dimension
  float scale = 1.0f;  // applied to Q·Kᵀ (1/√d by default)
  bool causal = false; // key index > query index is masked

  std::int64_t Heads() const { return static_cast<std::int64_t>(batch) * heads; }  // B·H
};

// Why the variant cannot run this shape and dtype ("d = 96: only d = 64 and 128"), or nothing when it can.
using NotApplicableFunction = std::optional<std::string> (*)(const AttentionShape& shape, DType dtype);
// Bytes of device scratch the variant needs for this shape (0: none).
using WorkspaceFunction = std::size_t (*)(const AttentionShape& shape, DType dtype);

}  // namespace flashviz::cuda
