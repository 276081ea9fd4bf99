// The registry with its launch functions (CUDA builds): each catalogue row of registry.h joined to the
// functions registry_rows.inc names for it. `flashviz bench`, the GUI's benchmark panel and the tests launch
// variants only through this. The progression's own functions are declared here, one group per .cu file.
#pragma once

#include <cstddef>
#include <optional>
#include <span>
#include <string>
#include <string_view>

#include "kernels/cuda/attention_launch.h"
#include "kernels/cuda/registry.h"

namespace flashviz::cuda {

struct Variant {
  const VariantInfo* info;                // the catalogue row (metadata)
  LaunchFunction launch;                  // enqueues the variant on args.stream
  NotApplicableFunction own_check;        // what only the variant knows (nullptr: the catalogue's data says all)
  WorkspaceFunction workspace_bytes;      // device scratch it needs
};

std::span<const Variant> Variants();  // the order of registry_rows.inc
const Variant* FindVariant(std::string_view id);

// The catalogue's check, then the variant's own: the reason a shape or dtype cannot run, or nothing.
std::optional<std::string> NotApplicable(const Variant& variant, const AttentionShape& shape, DType dtype);

// What every launch function checks first: the shape is applicable, the four tensors are non-null and 16-byte
// aligned (the kernels load 16 bytes at a time), the workspace is large enough. cudaErrorInvalidValue if not.
cudaError_t CheckArgs(std::string_view id, const AttentionArgs& args);

// --- The progression (one .cu file each). Launch returns cudaErrorInvalidValue for a shape it cannot run
// (NotApplicable says why) and otherwise the error of its launches.
cudaError_t LaunchNaive(const AttentionArgs& args);        // naive.cu
std::size_t NaiveWorkspaceBytes(const AttentionShape& shape, DType dtype);
cudaError_t LaunchTiled(const AttentionArgs& args);        // tiled.cu
std::size_t TiledWorkspaceBytes(const AttentionShape& shape, DType dtype);
cudaError_t LaunchFlash1(const AttentionArgs& args);       // flash1.cu
std::size_t Flash1WorkspaceBytes(const AttentionShape& shape, DType dtype);
cudaError_t LaunchFlash2Row(const AttentionArgs& args);    // flash2_row.cu
cudaError_t LaunchFlash2Warp(const AttentionArgs& args);   // flash2_warp.cu
cudaError_t LaunchFlash2Wmma(const AttentionArgs& args);   // flash2_wmma.cu
cudaError_t LaunchMath(const AttentionArgs& args);         // math.cu (cuBLAS)
std::size_t MathWorkspaceBytes(const AttentionShape& shape, DType dtype);
std::size_t NoWorkspaceBytes(const AttentionShape& shape, DType dtype);  // 0

// flash2_warp's options bits (AttentionArgs::options): alternative tile shapes, for measuring the choice.
enum Flash2WarpOption : unsigned {
  kFlash2WarpSmallTiles = 1u << 0,  // d = 32, 64: B_r = 64 (4 rows a thread); d = 128: B_c = 32 (both slower on
                                    // the H200, 2026-11-21: 33.9 vs 35.8 and 31.6 vs 32.9 TFLOP/s, N = 4096)
};
// flash2_wmma's options bits.
enum Flash2WmmaOption : unsigned {
  kFlash2WmmaOtherWarps = 1u << 0,  // the other block height: 4 warps (B_r = 64) at d ≤ 64, 8 (B_r = 128) at d = 128
};

}  // namespace flashviz::cuda
