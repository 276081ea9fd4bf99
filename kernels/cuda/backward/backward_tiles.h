// Tile sizes of the backward variants, shared by the kernels and the catalogue's byte models (plain C++), so the
// numbers `flashviz kernels` prints are the ones the kernels use.
#pragma once

namespace flashviz::cuda::backward_tiles {

inline constexpr int kNaiveGemm = 32;  // naive_bwd: 32×32 output tiles, k-steps of 32

inline constexpr int kFlash2Br = 32;  // flash2_bwd: B_r query rows per inner step
inline constexpr int kFlash2Bc = 64;  // flash2_bwd: B_c keys of K_j, V_j per block (dK_j, dV_j on chip)
inline constexpr int kFlash2Threads = 256;

inline constexpr int kMmaWarps = 4;            // flash2_bwd_mma: 16 keys a warp
inline constexpr int kMmaBc = 16 * kMmaWarps;  // B_c = 64 keys per block
// B_r query rows per inner step: 64 at d = 64; 32 at d = 128, where dK_j and dV_j already take 128 registers.
inline constexpr int MmaBr(int d) {
  return d == 64 ? 64 : 32;
}
inline constexpr int kMmaDqBr = 64;  // the separate dQ pass: 4 warps × 16 query rows
inline constexpr int kMmaDqBc = 64;

}  // namespace flashviz::cuda::backward_tiles
