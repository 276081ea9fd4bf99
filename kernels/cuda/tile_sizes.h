// Tile sizes of the progression's variants, shared by the kernels (kernels/cuda/*.cu) and the catalogue's
// byte models (registry.cpp), so the numbers `flashviz kernels` prints are the ones the kernels use.
#pragma once

namespace flashviz::cuda::tiles {

inline constexpr int kTiled = 32;            // tiled: 32×32 tiles of S = QKᵀ and of O = PV, k-steps of 32

inline constexpr int kFlash1Br = 64;         // flash1: B_r rows of Q_i (one thread each)
inline constexpr int kFlash1Bc = 32;         // flash1: B_c rows of K_j, V_j

inline constexpr int kFlash2RowBr = 128;     // flash2_row: B_r rows of Q_i (one thread each)
inline constexpr int kFlash2RowBc = 32;      // flash2_row: B_c rows of K_j, V_j

inline constexpr int kFlash2WarpThreads = 256;  // flash2_warp: 16 row groups × 16 column groups
inline constexpr int Flash2WarpBr(int d) { return d == 128 ? 64 : 128; }
inline constexpr int Flash2WarpBc(int /*d*/) { return 64; }

// flash2_wmma: 16 rows of Q_i per warp; 8 warps (B_r = 128) at d ≤ 64, 4 (B_r = 64) at d = 128, where the
// O accumulators take twice the registers (measured on the H200, 2026-11-21: 157 vs 147 TFLOP/s at d = 64,
// 194 vs 162 at d = 128, fp16, N = 4096, B·H = 64).
inline constexpr int Flash2WmmaWarps(int d) { return d <= 64 ? 8 : 4; }
inline constexpr int kFlash2WmmaBc = 64;

}  // namespace flashviz::cuda::tiles
