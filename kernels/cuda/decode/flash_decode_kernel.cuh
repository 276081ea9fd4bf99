// The flash_decode kernel template, shared by flash_decode.cu (contiguous cache) and flash_decode_paged.cu (paged
// pool): the only difference is where a key's row lives (RowOffset). flash_decode.cu tells the story and the
// measurements; this file is the mechanism.
//
// [SECTION] index
//   1. PTX wrappers: device_common.cuh's (ldmatrix, mma.sync m16n8k16, packing two floats, cp.async, ex2)
//   2. Traits: tile, stages, shared-memory layout, the XOR swizzle
//   3. The split kernel: per tile S = Q·K_jᵀ, online softmax, O += P̃·V_j; the warps' partials merged per block;
//      the last split of a (sequence, KV head) to finish merges the splits' (m, ℓ, O) into O
//   4. Host launch
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
using device::LoadMatrixX4;
using device::LoadMatrixX4Trans;
using device::MmaM16N8K16;
using device::PackPair;
using device::SharedAddress;

// The PTX wrappers (ldmatrix, mma.sync, cp.async, ex2) are device_common.cuh's.

// ---------------------------------------------------------------------------------------------------------------
// [SECTION] 2. Traits

template <int kD>
struct Traits {
  static constexpr int kWarps = 4;
  static constexpr int kThreads = 32 * kWarps;
  static constexpr int kKeys = kDecodeTileKeys;      // keys per tile: 16 per warp
  static constexpr int kRows = kDecodeRowsPerBlock;  // query rows per block (padded with zeros)
  // Tiles in flight: with 16 KB (d = 64) or 32 KB (d = 128) of K_j and V_j per stage, 3-4 stages keep 48-96 KB of
  // loads outstanding per block, and the shared memory still holds 3 (d = 64) or 2 (d = 128) blocks per SM. (Six
  // stages at d = 128, one block per SM, measured no faster at B = 1 or 8: run6.)
  static constexpr int kStages = kD == 64 ? 4 : 3;
  static constexpr int kRowBytes = kD * 2;
  static constexpr int kChunks = kD / 8;  // 16-byte chunks per row
  static constexpr int kTileBytes = kKeys * kRowBytes;
  static constexpr int kQBytes = kRows * kRowBytes;
  static constexpr int kSmemBytes = kQBytes + 2 * kStages * kTileBytes;
  // The paged cache's block-table entries of a split, read once at block start (8 KB: 2048 pages, a whole split of
  // 131072 keys at P = 64); the shared memory still holds 2 (d = 128) or 3 (d = 64) blocks per SM.
  static constexpr int kTableEntries = 2048;
  static constexpr int kPagedSmemBytes = kSmemBytes + kTableEntries * 4;
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
  unsigned* arrivals;  // [B][G·row groups]: splits done so far; 0 between launches
  int heads, kv_heads, q_rows, kv_len, d;
  int group_rows, row_groups;  // H/G·R, ⌈H/G·R / 16⌉
  int page_size, pages_per_sequence;
  int splits, keys_per_split;
  float scale_log2;  // scale · log2 e: scores in base-2 units, so e^x is one ex2
};

// Element offset of key `key`'s row of KV head g in sequence b. Contiguous: [B][G][N][d]. Paged: the page's
// physical block from the split's copy of the block table in shared memory (`table`, pages first_page …), or from
// the global table past its kTableEntries entries; then [block][G][P][d].
struct PageTable {
  const std::int32_t* entries;  // shared memory: block_table[b][first_page + i]
  int first_page;
};

template <int kD, bool kPaged>
__device__ __forceinline__ std::int64_t RowOffset(const FlashDecodeParams& p, const PageTable& table, int b, int g,
                                                  int key) {
  if constexpr (kPaged) {
    const int page = key / p.page_size;
    const int local = page - table.first_page;
    const std::int64_t block = local < Traits<kD>::kTableEntries
                                   ? table.entries[local]
                                   : __ldg(p.block_table + static_cast<std::int64_t>(b) * p.pages_per_sequence + page);
    return ((block * p.kv_heads + g) * p.page_size + (key - page * p.page_size)) * kD;
  } else {
    return ((static_cast<std::int64_t>(b) * p.kv_heads + g) * p.kv_len + key) * kD;
  }
}

// A tile's copy is split in two steps so that the paged cache's lookups run one tile ahead: FindRows computes where
// this thread's rows of tile (key0 …) live (for the paged pool, from the split's block-table entries in shared
// memory), CopyRows issues their cp.async an iteration later. Each thread keeps one 16-byte chunk column (chunk =
// thread mod d/8) and kRowsPerThread rows, so one lookup serves its K and its V copy.
template <int kD>
inline constexpr int kRowsPerThread = Traits<kD>::kKeys* Traits<kD>::kChunks / Traits<kD>::kThreads;

template <int kD, bool kPaged>
__device__ __forceinline__ void FindRows(std::int64_t (&offset)[kRowsPerThread<kD>], const FlashDecodeParams& p,
                                         const PageTable& table, int b, int g, int key0, int key_end) {
  using Tr = Traits<kD>;
  const int row0 = threadIdx.x / Tr::kChunks;  // this thread's rows: row0 + j · kThreads/kChunks
  if constexpr (kPaged) {
    // P a multiple of the tile (64, 128, 256 …): tiles start at multiples of 64, so the whole tile lies in one page
    // and its rows are consecutive there: one lookup and additions, instead of a division and a lookup per row (at
    // one block per SM that per-row index arithmetic, not the memory, was what held a block back).
    if (p.page_size % Tr::kKeys == 0) {
      const std::int64_t tile = key0 < key_end ? RowOffset<kD, true>(p, table, b, g, key0) : 0;
#pragma unroll
      for (int j = 0; j < kRowsPerThread<kD>; ++j) {
        const int row = row0 + j * (Tr::kThreads / Tr::kChunks);
        offset[j] = key0 + row < key_end ? tile + static_cast<std::int64_t>(row) * kD : -1;
      }
      return;
    }
  }
#pragma unroll
  for (int j = 0; j < kRowsPerThread<kD>; ++j) {
    const int key = key0 + row0 + j * (Tr::kThreads / Tr::kChunks);
    offset[j] = key < key_end ? RowOffset<kD, kPaged>(p, table, b, g, key) : -1;  // −1: past the split, zero-filled
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
  // The paged cache: the split's block-table entries into shared memory, one coalesced read, before any lookup.
  PageTable table{nullptr, 0};
  if constexpr (kPaged) {
    auto* entries = reinterpret_cast<std::int32_t*>(smem + Tr::kSmemBytes);
    table.first_page = key_begin / p.page_size;
    const int pages = min(Tr::kTableEntries, (key_end - 1) / p.page_size - table.first_page + 1);
    const std::int32_t* row = p.block_table + static_cast<std::int64_t>(b) * p.pages_per_sequence + table.first_page;
    for (int i = threadIdx.x; i < pages; i += Tr::kThreads) entries[i] = __ldg(row + i);
    table.entries = entries;
    __syncthreads();
  }
  std::int64_t rows_ahead[kRowsPerThread<kD>];  // where the next tile to copy lives
#pragma unroll
  for (int stage = 0; stage < Tr::kStages - 1; ++stage) {
    FindRows<kD, kPaged>(rows_ahead, p, table, b, g, key_begin + stage * Tr::kKeys, key_end);
    if (stage < tiles)
      CopyRows<T, kD>(k_tiles + stage * Tr::kTileBytes, v_tiles + stage * Tr::kTileBytes, rows_ahead, p);
    CpAsyncCommit();  // empty groups too: the wait below counts groups, one per tile
  }
  FindRows<kD, kPaged>(rows_ahead, p, table, b, g, key_begin + (Tr::kStages - 1) * Tr::kKeys, key_end);
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
      FindRows<kD, kPaged>(rows_ahead, p, table, b, g, key_begin + (next + 1) * Tr::kKeys, key_end);
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
      MmaM16N8K16<T>(s[0], q_frag[ks], kb[0], kb[1]);
      MmaM16N8K16<T>(s[1], q_frag[ks], kb[2], kb[3]);
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
      MmaM16N8K16<T>(o_acc[2 * dp], p_frag, vb[0], vb[1]);
      MmaM16N8K16<T>(o_acc[2 * dp + 1], p_frag, vb[2], vb[3]);
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
  if (p.splits == 1) return;

  // The merge of the splits, by the last of them to finish. Memory ordering (the CUDA C++ Programming Guide's
  // "Memory Fence Functions" example): every thread fences its partial stores at device scope (__threadfence),
  // then the barrier orders all of them before thread 0's atomicAdd on this (sequence, KV head, row group)'s
  // counter. The block whose add returns splits − 1 therefore comes after every other block's add, and so after
  // every other block's fenced partials; its own fence after the barrier orders its loads after the add (fence to
  // fence through the atomic), and the loads go to L2 (__ldcg), never to a line of L1 an earlier launch left there.
  // No block of this launch touches the counter after the last add, and the next launch on the stream starts after
  // this one ends: the last block sets it back to 0 with a plain store, so the workspace needs no memset per launch.
  __threadfence();
  __syncthreads();
  bool last_split = false;
  if (threadIdx.x == 0) {
    unsigned* arrivals = p.arrivals + static_cast<std::int64_t>(b) * gridDim.y + blockIdx.y;
    last_split = atomicAdd(arrivals, 1u) == static_cast<unsigned>(p.splits - 1);
    if (last_split) *arrivals = 0;
  }
  if (!__syncthreads_or(last_split)) return;  // thread 0's answer, to every thread
  __threadfence();

  // M = max_s m_s, α_s = 2^(m_s − M) (m in base-2 units), ℓ = Σ α_s ℓ_s, O = Σ α_s O_s / ℓ. Thread i owns four
  // consecutive elements of a row (a warp per row at d = 128), so each split's O row is one coalesced read.
  constexpr int kQuads = kD / 4;
  for (int i = threadIdx.x; i < rows * kQuads; i += Tr::kThreads) {
    const int row = i / kQuads, quad = i % kQuads;
    const std::int64_t out_row = row0 + row;
    const float2* ml = p.partial_ml + out_row * p.splits;
    const float4* o_s = reinterpret_cast<const float4*>(p.partial_o + out_row * p.splits * kD) + quad;
    float m_all = -INFINITY;
    for (int s = 0; s < p.splits; ++s) m_all = fmaxf(m_all, __ldcg(ml + s).x);
    float l = 0.0f;
    float4 acc = make_float4(0.0f, 0.0f, 0.0f, 0.0f);
#pragma unroll 4
    for (int s = 0; s < p.splits; ++s) {
      const float2 partial = __ldcg(ml + s);
      const float alpha = FastExp2(partial.x - m_all);
      const float4 x = __ldcg(o_s + s * kQuads);
      l += alpha * partial.y;
      acc.x += alpha * x.x;
      acc.y += alpha * x.y;
      acc.z += alpha * x.z;
      acc.w += alpha * x.w;
    }
    const float inverse = 1.0f / l;
    T* out = static_cast<T*>(p.o) + out_row * kD + quad * 4;
    const std::uint32_t packed[2] = {PackPair<T>(acc.x * inverse, acc.y * inverse),
                                     PackPair<T>(acc.z * inverse, acc.w * inverse)};
    *reinterpret_cast<uint2*>(out) = make_uint2(packed[0], packed[1]);
  }
}

// ---------------------------------------------------------------------------------------------------------------
// [SECTION] 4. Host launch

template <typename T, int kD, bool kPaged>
cudaError_t LaunchTyped(const DecodeArgs& args, int splits) {
  using Tr = Traits<kD>;
  const DecodeLaunchShape& shape = args.shape;
  FlashDecodeParams p;
  p.q = args.q;
  p.k = args.k;
  p.v = args.v;
  p.o = args.o;
  p.block_table = args.block_table;
  // The workspace (splits > 1, DecodeWorkspaceBytes): O partials (B·H·R·splits·d floats, an even count, so the
  // float2 array after them stays 8-byte aligned), (m, ℓ) partials, then one arrival counter per (b, g, row group).
  p.partial_o = static_cast<float*>(args.workspace);
  p.partial_ml = splits > 1 ? reinterpret_cast<float2*>(p.partial_o + shape.QueryRows() * splits * kD) : nullptr;
  p.arrivals = splits > 1 ? reinterpret_cast<unsigned*>(p.partial_ml + shape.QueryRows() * splits) : nullptr;
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
  const int smem_bytes = kPaged ? Tr::kPagedSmemBytes : Tr::kSmemBytes;
  if (const cudaError_t error = device::AllowSharedMemory(kernel, smem_bytes); error != cudaSuccess) return error;
  const dim3 grid(static_cast<unsigned>(splits), static_cast<unsigned>(shape.kv_heads * p.row_groups),
                  static_cast<unsigned>(shape.batch));
  kernel<<<grid, Tr::kThreads, smem_bytes, args.stream>>>(p);
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
