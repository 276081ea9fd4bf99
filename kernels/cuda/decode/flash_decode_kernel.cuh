// The flash_decode kernel template, shared by flash_decode.cu (contiguous cache) and flash_decode_paged.cu (paged
// pool): the only difference is where a key's row lives (RowOffset). flash_decode.cu tells the story and the
// measurements; this file is the mechanism.
//
// [SECTION] index
//   1. PTX wrappers: ldmatrix, mma.sync m16n8k16, packing two floats
//   2. Traits: tile, stages, shared-memory layout, the XOR swizzle
//   3. The split kernel: per tile S = Q·K_jᵀ, online softmax, O += P̃·V_j; the warps' partials merged per block
//   4. The merge kernel: the splits' (m, ℓ, O) rescaled into O
//   5. Host launch
//
// Fragment layouts (PTX ISA, "Matrix fragments for mma.m16n8k16"), lane = 0..31, g = lane / 4, c = lane % 4:
//   A (16×16): a0 = (row g, cols 2c, 2c+1), a1 = (row g+8, same), a2 = (row g, cols 2c+8, 2c+9), a3 = (row g+8, same)
//   B (16×8):  b0 = (rows 2c, 2c+1, col g), b1 = (rows 2c+8, 2c+9, col g)
//   C (16×8, fp32): c0, c1 = (row g, cols 2c, 2c+1), c2, c3 = (row g+8, same cols)
// The two C tiles of S (keys 0-7 and 8-15) hold exactly the A fragment of P̃ for P̃·V: P̃ never leaves registers.
#pragma once

#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include <cstdint>
#include <type_traits>

#include "kernels/cuda/decode/decode_variants.h"
#include "kernels/cuda/device_common.cuh"

namespace flashviz::cuda::decode_device {

using device::CeilDiv;
using device::CpAsync16;
using device::CpAsyncCommit;
using device::CpAsyncWait;
using device::FastExp2;

// ---------------------------------------------------------------------------------------------------------------
// [SECTION] 1. PTX wrappers

__device__ __forceinline__ std::uint32_t SharedAddress(const void* pointer) {
  return static_cast<std::uint32_t>(__cvta_generic_to_shared(pointer));
}

// Four 8×8 matrices of 16-bit elements; lanes 8m … 8m+7 give the row addresses of matrix m.
__device__ __forceinline__ void LoadMatrixX4(std::uint32_t (&r)[4], std::uint32_t address) {
  asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0, %1, %2, %3}, [%4];\n"
               : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
               : "r"(address));
}
// The same, each matrix transposed on the way: V_j is stored key-major, the B operand of P̃·V_j wants it d-major.
__device__ __forceinline__ void LoadMatrixX4Trans(std::uint32_t (&r)[4], std::uint32_t address) {
  asm volatile("ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16 {%0, %1, %2, %3}, [%4];\n"
               : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
               : "r"(address));
}

// D += A·B, 16×8×16, fp32 accumulators.
template <typename T>
__device__ __forceinline__ void Mma(float (&d)[4], const std::uint32_t (&a)[4], std::uint32_t b0, std::uint32_t b1) {
  if constexpr (std::is_same_v<T, __half>) {
    asm volatile(
        "mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%0, %1, %2, %3}, {%4, %5, %6, %7}, {%8, %9}, "
        "{%0, %1, %2, %3};\n"
        : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
        : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1));
  } else {
    asm volatile(
        "mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 {%0, %1, %2, %3}, {%4, %5, %6, %7}, {%8, %9}, "
        "{%0, %1, %2, %3};\n"
        : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
        : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1));
  }
}

// Two floats → one register of two 16-bit elements, `low` in the low half (the lower column index).
template <typename T>
__device__ __forceinline__ std::uint32_t PackPair(float low, float high) {
  if constexpr (std::is_same_v<T, __half>) {
    const __half2 pair = __floats2half2_rn(low, high);
    return *reinterpret_cast<const std::uint32_t*>(&pair);
  } else {
    const __nv_bfloat162 pair = __floats2bfloat162_rn(low, high);
    return *reinterpret_cast<const std::uint32_t*>(&pair);
  }
}

// ---------------------------------------------------------------------------------------------------------------
// [SECTION] 2. Traits

template <int kD>
struct Traits {
  static constexpr int kWarps = 4;
  static constexpr int kThreads = 32 * kWarps;
  static constexpr int kKeys = kDecodeTileKeys;      // keys per tile: 16 per warp
  static constexpr int kRows = kDecodeRowsPerBlock;  // query rows per block (padded with zeros)
  // Tiles in flight: with 16 KB (d = 64) or 32 KB (d = 128) of K_j and V_j per stage, 3-4 stages keep 48-96 KB of
  // loads outstanding per block, and the shared memory still holds 3 (d = 64) or 2 (d = 128) blocks per SM.
  static constexpr int kStages = kD == 64 ? 4 : 3;
  static constexpr int kRowBytes = kD * 2;
  static constexpr int kChunks = kD / 8;  // 16-byte chunks per row
  static constexpr int kTileBytes = kKeys * kRowBytes;
  static constexpr int kQBytes = kRows * kRowBytes;
  static constexpr int kSmemBytes = kQBytes + 2 * kStages * kTileBytes;
  // The end-of-split merge of the four warps' partials reuses the pipeline's memory: O, m and ℓ per warp and row.
  static constexpr int kMergeBytes = (kWarps * kRows * kD + 2 * kWarps * kRows) * 4;
  static_assert(kMergeBytes <= kSmemBytes);
  static_assert(kD == 64 || kD == 128);
};

// Byte offset of 16-byte chunk `chunk` of row `row` in a tile with rows of kRowBytes. Chunk c of row r lives at
// c ^ (r mod 8): an ldmatrix phase reads one logical chunk of 8 consecutive rows, which then fall in 8 different
// 16-byte bank groups (no conflict), and a cp.async row write stays within its row.
template <int kD>
__device__ __forceinline__ std::uint32_t Swizzle(int row, int chunk) {
  return static_cast<std::uint32_t>(row * Traits<kD>::kRowBytes + ((chunk ^ (row & 7)) << 4));
}

struct FlashDecodeParams {
  const void* q;
  const void* k;
  const void* v;
  void* o;
  const std::int32_t* block_table;
  float* partial_o;    // [query row][split][d], with splits > 1
  float2* partial_ml;  // [query row][split]: (m in log2 units, ℓ)
  int heads, kv_heads, q_rows, kv_len, d;
  int group_rows, row_groups;  // H/G·R, ⌈H/G·R / 16⌉
  int page_size, pages_per_sequence;
  int splits, keys_per_split;
  float scale_log2;  // scale · log2 e: scores in base-2 units, so e^x is one ex2
};

// Element offset of key `key`'s row of KV head g in sequence b. Contiguous: [B][G][N][d]. Paged: the page's
// physical block from the table, then [block][G][P][d].
template <int kD, bool kPaged>
__device__ __forceinline__ std::int64_t RowOffset(const FlashDecodeParams& p, int b, int g, int key) {
  if constexpr (kPaged) {
    const int page = key / p.page_size;
    const std::int64_t block = __ldg(p.block_table + static_cast<std::int64_t>(b) * p.pages_per_sequence + page);
    return ((block * p.kv_heads + g) * p.page_size + (key - page * p.page_size)) * kD;
  } else {
    return ((static_cast<std::int64_t>(b) * p.kv_heads + g) * p.kv_len + key) * kD;
  }
}

// A tile's copy is split in two steps so that the paged cache's lookups run one tile ahead: FindRows reads where
// this thread's rows of tile (key0 …) live (for the paged pool, the block table), CopyRows issues their cp.async an
// iteration later, when the table's answer has long arrived. Each thread keeps one 16-byte chunk column (chunk =
// thread mod d/8) and kRowsPerThread rows, so one lookup serves its K and its V copy.
template <int kD>
inline constexpr int kRowsPerThread = Traits<kD>::kKeys* Traits<kD>::kChunks / Traits<kD>::kThreads;

template <int kD, bool kPaged>
__device__ __forceinline__ void FindRows(std::int64_t (&offset)[kRowsPerThread<kD>], const FlashDecodeParams& p, int b,
                                         int g, int key0, int key_end) {
  using Tr = Traits<kD>;
#pragma unroll
  for (int j = 0; j < kRowsPerThread<kD>; ++j) {
    const int key = key0 + threadIdx.x / Tr::kChunks + j * (Tr::kThreads / Tr::kChunks);
    offset[j] = key < key_end ? RowOffset<kD, kPaged>(p, b, g, key) : -1;  // −1: past the split, zero-filled
  }
}

// cp.async of K_j and V_j into a stage from the offsets FindRows found; rows past the split's end are zero-filled
// (their scores are masked anyway).
template <typename T, int kD>
__device__ __forceinline__ void CopyRows(unsigned char* k_stage, unsigned char* v_stage,
                                         const std::int64_t (&offset)[kRowsPerThread<kD>], const FlashDecodeParams& p) {
  using Tr = Traits<kD>;
  const int chunk = threadIdx.x % Tr::kChunks;
  const T* k = static_cast<const T*>(p.k) + chunk * 8;
  const T* v = static_cast<const T*>(p.v) + chunk * 8;
#pragma unroll
  for (int j = 0; j < kRowsPerThread<kD>; ++j) {
    const int row = threadIdx.x / Tr::kChunks + j * (Tr::kThreads / Tr::kChunks);
    const bool valid = offset[j] >= 0;
    const std::int64_t source = valid ? offset[j] : 0;
    CpAsync16(k_stage + Swizzle<kD>(row, chunk), k + source, valid);
    CpAsync16(v_stage + Swizzle<kD>(row, chunk), v + source, valid);
  }
}

// ---------------------------------------------------------------------------------------------------------------
// [SECTION] 3. The split kernel
//
// Block (split, KV head g · row group, sequence b): query rows first_row … first_row + 15 of the H/G·R rows that
// read KV head g (query head g·H/G + ⌊row / R⌋, row mod R), against keys [split·keys_per_split, … ). Warp w owns
// keys 16w … 16w+15 of every tile and keeps its own m, ℓ, O; the four are merged once, at the end.
template <typename T, int kD, bool kPaged>
__global__ void __launch_bounds__(Traits<kD>::kThreads) FlashDecodeKernel(const FlashDecodeParams p) {
  using Tr = Traits<kD>;
  extern __shared__ __align__(1024) unsigned char smem[];
  unsigned char* q_tile = smem;
  unsigned char* k_tiles = smem + Tr::kQBytes;
  unsigned char* v_tiles = k_tiles + Tr::kStages * Tr::kTileBytes;

  const int split = blockIdx.x, g = blockIdx.y / p.row_groups, b = blockIdx.z;
  const int first_row = (blockIdx.y % p.row_groups) * Tr::kRows;
  const int rows = min(Tr::kRows, p.group_rows - first_row);
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  // The group's rows are consecutive in Q and O: query heads g·H/G … are adjacent, R rows each.
  const std::int64_t row0 =
      (static_cast<std::int64_t>(b) * p.heads + static_cast<std::int64_t>(g) * (p.heads / p.kv_heads)) * p.q_rows +
      first_row;
  const int key_begin = split * p.keys_per_split;
  const int key_end = min(p.kv_len, key_begin + p.keys_per_split);
  const int tiles = CeilDiv(key_end - key_begin, Tr::kKeys);

  // Q's rows (zeros past `rows`) travel in the first copy group, with tile 0.
  const T* q = static_cast<const T*>(p.q) + row0 * kD;
  for (int i = threadIdx.x; i < Tr::kRows * Tr::kChunks; i += Tr::kThreads) {
    const int row = i / Tr::kChunks, chunk = i % Tr::kChunks;
    CpAsync16(q_tile + Swizzle<kD>(row, chunk), q + (row < rows ? row * kD + chunk * 8 : 0), row < rows);
  }
  std::int64_t rows_ahead[kRowsPerThread<kD>];  // where the next tile to copy lives
#pragma unroll
  for (int stage = 0; stage < Tr::kStages - 1; ++stage) {
    FindRows<kD, kPaged>(rows_ahead, p, b, g, key_begin + stage * Tr::kKeys, key_end);
    if (stage < tiles)
      CopyRows<T, kD>(k_tiles + stage * Tr::kTileBytes, v_tiles + stage * Tr::kTileBytes, rows_ahead, p);
    CpAsyncCommit();  // empty groups too: the wait below counts groups, one per tile
  }
  FindRows<kD, kPaged>(rows_ahead, p, b, g, key_begin + (Tr::kStages - 1) * Tr::kKeys, key_end);
  CpAsyncWait<Tr::kStages - 2>();
  __syncthreads();  // Q (group 0) is in shared memory for every thread

  // Q's A fragments, kept in registers for the whole split: matrix m of k-step ks is rows 8·(m mod 2) …, chunk
  // 2ks + m/2.
  std::uint32_t q_frag[kD / 16][4];
#pragma unroll
  for (int ks = 0; ks < kD / 16; ++ks) {
    const int m = lane / 8;
    LoadMatrixX4(q_frag[ks], SharedAddress(q_tile) + Swizzle<kD>((m % 2) * 8 + lane % 8, 2 * ks + m / 2));
  }

  float o_acc[kD / 8][4] = {};
  float m_run[2] = {-INFINITY, -INFINITY};  // rows g and g+8 of this lane, base-2 units
  float l_run[2] = {0.0f, 0.0f};            // this lane's part of ℓ (its columns); the quad's sum at the end
  for (int t = 0; t < tiles; ++t) {
    CpAsyncWait<Tr::kStages - 2>();
    __syncthreads();  // tile t is in shared memory for every thread, and every warp is done with tile t − 1,
                      // whose stage the copy below refills
    if (const int next = t + Tr::kStages - 1; next < tiles) {
      CopyRows<T, kD>(k_tiles + (next % Tr::kStages) * Tr::kTileBytes, v_tiles + (next % Tr::kStages) * Tr::kTileBytes,
                      rows_ahead, p);
      // The lookups of the tile after it, in flight while this tile is computed.
      FindRows<kD, kPaged>(rows_ahead, p, b, g, key_begin + (next + 1) * Tr::kKeys, key_end);
    }
    CpAsyncCommit();
    const std::uint32_t k_base = SharedAddress(k_tiles + (t % Tr::kStages) * Tr::kTileBytes);
    const std::uint32_t v_base = SharedAddress(v_tiles + (t % Tr::kStages) * Tr::kTileBytes);

    // S = Q·K_jᵀ over the warp's 16 keys: matrix m of an ldmatrix.x4 is keys 8·(m/2) …, chunk 2ks + m mod 2, so
    // registers 0, 1 are n-tile 0's b0, b1 and registers 2, 3 n-tile 1's.
    float s[2][4] = {};
#pragma unroll
    for (int ks = 0; ks < kD / 16; ++ks) {
      const int m = lane / 8;
      std::uint32_t kb[4];
      LoadMatrixX4(kb, k_base + Swizzle<kD>(warp * 16 + (m / 2) * 8 + lane % 8, 2 * ks + m % 2));
      Mma<T>(s[0], q_frag[ks], kb[0], kb[1]);
      Mma<T>(s[1], q_frag[ks], kb[2], kb[3]);
    }
    const int warp_key0 = key_begin + t * Tr::kKeys + warp * 16;
#pragma unroll
    for (int nt = 0; nt < 2; ++nt)
#pragma unroll
      for (int c = 0; c < 4; ++c) {
        const int key = warp_key0 + nt * 8 + 2 * (lane % 4) + (c & 1);
        s[nt][c] = key < key_end ? s[nt][c] * p.scale_log2 : -INFINITY;
      }

      // Online softmax per row (half 0: row g, registers 0, 1; half 1: row g + 8, registers 2, 3); the row's 16
      // scores are spread over the 4 lanes of a quad.
#pragma unroll
    for (int half = 0; half < 2; ++half) {
      float tile_max = fmaxf(fmaxf(s[0][2 * half], s[0][2 * half + 1]), fmaxf(s[1][2 * half], s[1][2 * half + 1]));
      tile_max = fmaxf(tile_max, __shfl_xor_sync(0xffffffffu, tile_max, 1));
      tile_max = fmaxf(tile_max, __shfl_xor_sync(0xffffffffu, tile_max, 2));
      const float m_new = fmaxf(m_run[half], tile_max);
      // A row that has seen no key yet (the warp's keys all past key_end) subtracts 0, not −∞: everything stays 0.
      const float base = m_new == -INFINITY ? 0.0f : m_new;
      const float alpha = FastExp2(m_run[half] - base);  // e^(m_old − m_new); 0 while m_old = −∞
      m_run[half] = m_new;
      l_run[half] *= alpha;
#pragma unroll
      for (int nt = 0; nt < 2; ++nt)
#pragma unroll
        for (int e = 0; e < 2; ++e) {
          const float probability = FastExp2(s[nt][2 * half + e] - base);
          s[nt][2 * half + e] = probability;
          l_run[half] += probability;
        }
#pragma unroll
      for (int n = 0; n < kD / 8; ++n) {
        o_acc[n][2 * half] *= alpha;
        o_acc[n][2 * half + 1] *= alpha;
      }
    }

    // O += P̃·V_j: P̃'s A fragment straight from S's registers; matrix m of an ldmatrix.x4.trans is keys
    // 8·(m mod 2) …, chunk 2dp + m/2, so registers 0, 1 are n-tile 2dp's b0, b1 and 2, 3 n-tile 2dp + 1's.
    const std::uint32_t p_frag[4] = {PackPair<T>(s[0][0], s[0][1]), PackPair<T>(s[0][2], s[0][3]),
                                     PackPair<T>(s[1][0], s[1][1]), PackPair<T>(s[1][2], s[1][3])};
#pragma unroll
    for (int dp = 0; dp < kD / 16; ++dp) {
      const int m = lane / 8;
      std::uint32_t vb[4];
      LoadMatrixX4Trans(vb, v_base + Swizzle<kD>(warp * 16 + (m % 2) * 8 + lane % 8, 2 * dp + m / 2));
      Mma<T>(o_acc[2 * dp], p_frag, vb[0], vb[1]);
      Mma<T>(o_acc[2 * dp + 1], p_frag, vb[2], vb[3]);
    }
  }
  CpAsyncWait<0>();
  __syncthreads();  // every warp is done with the last tile: the pipeline's memory now holds the merge

  // The four warps' (m, ℓ, O) → shared memory, then one (m, ℓ, O) per row for the block.
  float* merge_o = reinterpret_cast<float*>(smem);  // [warp][row][d]
  float* merge_m = merge_o + Tr::kWarps * Tr::kRows * kD;
  float* merge_l = merge_m + Tr::kWarps * Tr::kRows;
#pragma unroll
  for (int half = 0; half < 2; ++half) {
    l_run[half] += __shfl_xor_sync(0xffffffffu, l_run[half], 1);
    l_run[half] += __shfl_xor_sync(0xffffffffu, l_run[half], 2);
    const int row = warp * Tr::kRows + lane / 4 + 8 * half;
    if (lane % 4 == 0) {
      merge_m[row] = m_run[half];
      merge_l[row] = l_run[half];
    }
#pragma unroll
    for (int n = 0; n < kD / 8; ++n)
      *reinterpret_cast<float2*>(merge_o + row * kD + n * 8 + 2 * (lane % 4)) =
          make_float2(o_acc[n][2 * half], o_acc[n][2 * half + 1]);
  }
  __syncthreads();  // every warp's partial is in shared memory

  for (int i = threadIdx.x; i < rows * kD; i += Tr::kThreads) {
    const int row = i / kD, col = i % kD;
    float m_block = -INFINITY;
#pragma unroll
    for (int w = 0; w < Tr::kWarps; ++w) m_block = fmaxf(m_block, merge_m[w * Tr::kRows + row]);
    float l = 0.0f, o = 0.0f;
#pragma unroll
    for (int w = 0; w < Tr::kWarps; ++w) {
      const float alpha = FastExp2(merge_m[w * Tr::kRows + row] - m_block);  // 0 for a warp that saw no key
      l += alpha * merge_l[w * Tr::kRows + row];
      o += alpha * merge_o[(w * Tr::kRows + row) * kD + col];
    }
    const std::int64_t out_row = row0 + row;
    if (p.splits == 1) {
      static_cast<T*>(p.o)[out_row * kD + col] = device::FromFloat<T>(o / l);
    } else {
      const std::int64_t partial = out_row * p.splits + split;
      p.partial_o[partial * kD + col] = o;
      if (col == 0) p.partial_ml[partial] = make_float2(m_block, l);
    }
  }
}

// ---------------------------------------------------------------------------------------------------------------
// [SECTION] 4. The merge kernel
//
// One warp per query row: M = max_s m_s, α_s = 2^(m_s − M) (m in base-2 units), ℓ = Σ α_s ℓ_s,
// O = Σ α_s O_s / ℓ. Lane l owns d/32 consecutive elements, so each split's O row is one coalesced read.
template <typename T, int kD>
__global__ void __launch_bounds__(128)
    MergeSplitsKernel(const float* __restrict__ partial_o, const float2* __restrict__ partial_ml, T* __restrict__ o,
                      std::int64_t rows, int splits) {
  constexpr int kPerLane = kD / 32;
  const std::int64_t row = static_cast<std::int64_t>(blockIdx.x) * 4 + threadIdx.x / 32;
  const int lane = threadIdx.x % 32;
  if (row >= rows) return;
  const float2* ml = partial_ml + row * splits;
  float m_all = -INFINITY;
  for (int s = lane; s < splits; s += 32) m_all = fmaxf(m_all, ml[s].x);
#pragma unroll
  for (int offset = 16; offset > 0; offset /= 2) m_all = fmaxf(m_all, __shfl_xor_sync(0xffffffffu, m_all, offset));
  float acc[kPerLane] = {};
  float l = 0.0f;
  for (int s = 0; s < splits; ++s) {
    const float2 partial = ml[s];
    const float alpha = FastExp2(partial.x - m_all);
    l += alpha * partial.y;
    const float* o_s = partial_o + (row * splits + s) * kD + lane * kPerLane;
    if constexpr (kPerLane == 4) {
      const float4 x = *reinterpret_cast<const float4*>(o_s);
      acc[0] += alpha * x.x;
      acc[1] += alpha * x.y;
      acc[2] += alpha * x.z;
      acc[3] += alpha * x.w;
    } else {
      const float2 x = *reinterpret_cast<const float2*>(o_s);
      acc[0] += alpha * x.x;
      acc[1] += alpha * x.y;
    }
  }
#pragma unroll
  for (int u = 0; u < kPerLane; ++u) o[row * kD + lane * kPerLane + u] = device::FromFloat<T>(acc[u] / l);
}

// ---------------------------------------------------------------------------------------------------------------
// [SECTION] 5. Host launch

template <typename T, int kD, bool kPaged>
cudaError_t LaunchTyped(const DecodeArgs& args, int splits) {
  using Tr = Traits<kD>;
  const DecodeProblem& shape = args.shape;
  FlashDecodeParams p;
  p.q = args.q;
  p.k = args.k;
  p.v = args.v;
  p.o = args.o;
  p.block_table = args.block_table;
  p.partial_o = static_cast<float*>(args.workspace);
  // (m, ℓ) after every O partial: B·H·R·splits·d floats, an even count, so the float2 array stays 8-byte aligned.
  p.partial_ml = splits > 1 ? reinterpret_cast<float2*>(p.partial_o + shape.QueryRows() * splits * kD) : nullptr;
  p.heads = shape.heads;
  p.kv_heads = shape.kv_heads;
  p.q_rows = shape.q_rows;
  p.kv_len = shape.kv_len;
  p.d = kD;
  p.group_rows = shape.GroupRows();
  p.row_groups = DecodeRowGroups(shape);
  p.page_size = kPaged ? shape.page_size : 0;
  p.pages_per_sequence = kPaged ? shape.PagesPerSequence() : 0;
  p.splits = splits;
  p.keys_per_split = DecodeKeysPerSplit(shape, splits);
  p.scale_log2 = shape.Scale() * device::kLog2e;
  const auto kernel = FlashDecodeKernel<T, kD, kPaged>;
  if (const cudaError_t error = device::AllowSharedMemory(kernel, Tr::kSmemBytes); error != cudaSuccess) return error;
  const dim3 grid(static_cast<unsigned>(splits), static_cast<unsigned>(shape.kv_heads * p.row_groups),
                  static_cast<unsigned>(shape.batch));
  kernel<<<grid, Tr::kThreads, Tr::kSmemBytes, args.stream>>>(p);
  if (splits > 1) {
    const std::int64_t rows = shape.QueryRows();
    MergeSplitsKernel<T, kD><<<static_cast<unsigned>((rows + 3) / 4), 128, 0, args.stream>>>(
        p.partial_o, p.partial_ml, static_cast<T*>(args.o), rows, splits);
  }
  return cudaGetLastError();
}

template <bool kPaged>
cudaError_t LaunchFlashDecodeKernels(const DecodeArgs& args) {
  const int splits = DecodeSplitsFor(args);
  const bool half = args.dtype == DType::kFp16;
  if (args.shape.d == 64)
    return half ? LaunchTyped<__half, 64, kPaged>(args, splits) : LaunchTyped<__nv_bfloat16, 64, kPaged>(args, splits);
  return half ? LaunchTyped<__half, 128, kPaged>(args, splits) : LaunchTyped<__nv_bfloat16, 128, kPaged>(args, splits);
}

}  // namespace flashviz::cuda::decode_device
