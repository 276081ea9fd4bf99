// Tile sizes of the backward variants, shared by the kernels and the catalogue's byte models (plain C++), so the
// numbers `flashviz kernels` prints are the ones the kernels use.
#pragma once

namespace flashviz::cuda::backward_tiles {

inline constexpr int kNaiveGemm = 32;  // naive_bwd: 32×32 output tiles, k-steps of 32

inline constexpr int kFlash2Br = 32;  // flash2_bwd: B_r query rows per inner step
inline constexpr int kFlash2Bc = 64;  // flash2_bwd: B_c keys of K_j, V_j per block (dK_j, dV_j on chip)
inline constexpr int kFlash2Threads = 256;

// flash2_bwd_tf32x3: 4 warps of 16 keys each (one m16 tile), and B_r = 64 so that the dQ step gives each warp one
// m16 tile of query rows too. At d = 64 Sᵀ, dPᵀ, dK_j, dV_j and one product's fresh accumulators take 160
// registers a thread; the tiles take 87 KB of shared memory: two blocks a multiprocessor.
inline constexpr int kTf32x3Warps = 4;
inline constexpr int kTf32x3Bc = 64;
inline constexpr int kTf32x3Br = 64;

inline constexpr int kMmaWarps = 4;
// flash2_bwd_mma: m16 key tiles a warp owns. 2 at d = 64 (32 keys: every Q_i / dO_i fragment read from shared
// memory feeds two mma, and B_c = 128 halves the dQ atomics and the Q_i / dO_i copies per key); 1 at d = 128,
// where dK_j and dV_j of 16 keys already take 128 registers a thread.
inline constexpr int MmaKeyTiles(int d) {
  return d == 64 ? 2 : 1;
}
inline constexpr int MmaBc(int d) {  // B_c keys per block: 128 (d = 64), 64 (d = 128)
  return 16 * kMmaWarps * MmaKeyTiles(d);
}
// B_r = 32 query rows per inner step at both d: Sᵀ and dPᵀ of the warp's keys × B_r take 64 registers at d = 64
// (two key tiles) and 32 at d = 128, beside dK_j and dV_j's 128.
inline constexpr int MmaBr(int /*d*/) {
  return 32;
}
inline constexpr int kMmaDqBr = 64;  // the separate dQ pass: 4 warps × 16 query rows
inline constexpr int kMmaDqBc = 64;

}  // namespace flashviz::cuda::backward_tiles
