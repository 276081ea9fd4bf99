// The decoding kernels' catalogue: one row of plain metadata per decode variant (decode_rows.inc), in the same
// VariantInfo form as the forward and backward registries, so `flashviz kernels` can print it with the same code.
// Also the decode problem's shape, the split-count rule of flash_decode, the workspace it needs and the rows of
// `flashviz bench --decode`'s CSV. Plain C++ (no cuda_runtime.h), compiled into flashviz_kernels in every build.
//
// A decoding step: B sequences; per sequence H query heads of R query rows each (R = 1 for one generated token, a
// few for speculative decoding) against a KV cache of N keys in G KV heads; query head h reads KV head ⌊h·G/H⌋
// (consecutive query heads share one: grouped-query attention, G = H is multi-head, G = 1 multi-query).
// Layouts, batch outermost, head-major, row-major within a head:
//   Q, O: [B][H][R][d]        K, V (contiguous): [B][G][N][d]
//   K, V (paged, page size P): a pool [num_blocks][G][P][d]; block_table [B][⌈N/P⌉] int32 maps sequence b's
//     logical page p (keys p·P … p·P + P − 1) to its physical block. One physical block holds one page of every
//     KV head, so a head's page is P·d contiguous elements (16 KB at P = 64, d = 128 fp16): the kernel reads it
//     with the same 16-byte row copies as the contiguous cache, and a table lookup serves K and V alike.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "kernels/cpu/decode_reference.h"
#include "kernels/cuda/bench_results.h"
#include "kernels/cuda/registry.h"

namespace flashviz::cuda {

// The shape of one batched decoding step as the CUDA kernels launch it (B sequences, the paged pool's page size).
// Not flashviz::DecodeProblem (kernels/cpu/decode.h), the CPU model's one-sequence problem with its inputs.
struct DecodeLaunchShape {
  int batch = 1;      // B sequences
  int heads = 32;     // H query heads
  int kv_heads = 8;   // G KV heads, divides H
  int q_rows = 1;     // R query rows per head
  int kv_len = 4096;  // N keys in every sequence's cache
  int d = 128;
  float scale = 0;    // applied to q·k; 0 means 1/√d (Scale() resolves it)
  int page_size = 0;  // P: 0 for the contiguous cache, else the paged pool's tokens per block

  float Scale() const;
  int Group() const { return heads / kv_heads; }      // query heads per KV head, H/G
  int GroupRows() const { return Group() * q_rows; }  // query rows that share one KV head
  int PagesPerSequence() const { return page_size > 0 ? (kv_len + page_size - 1) / page_size : 0; }
  std::int64_t QueryRows() const { return static_cast<std::int64_t>(batch) * heads * q_rows; }  // rows of Q and O
  std::int64_t KvElements() const { return static_cast<std::int64_t>(batch) * kv_heads * kv_len * d; }  // K or V
  // The pool's size in elements of K (or V): B·⌈N/P⌉ blocks of G·P·d (the last page of a sequence is padded).
  std::int64_t PoolElements() const {
    return static_cast<std::int64_t>(batch) * PagesPerSequence() * kv_heads * page_size * d;
  }
  DecodeShape Sequence() const;  // one sequence's shape, for ReferenceDecode
};

// The least a decoding step must read: the whole KV cache once, 2·B·G·N·d elements.
double DecodeKvCacheBytes(const DecodeLaunchShape& problem, DType dtype);
// 4·B·H·R·N·d: q·k and p·v for every (query row, key) pair.
double DecodeFlops(const DecodeLaunchShape& problem);

std::span<const VariantInfo> DecodeCatalogue();  // the order of decode_rows.inc
const VariantInfo* FindDecodeInfo(std::string_view id);
bool DecodeVariantIsPaged(const VariantInfo& variant);  // reads the paged pool (flash_decode_paged)

// Why `variant` cannot run `problem` in `dtype` (catalogue data, the shape's own consistency, the page size), or
// nothing when it can.
std::optional<std::string> DecodeNotApplicable(const VariantInfo& variant, const DecodeLaunchShape& problem,
                                               DType dtype);

// ---- flash_decode's split of the KV cache (flash_decode.cu says why, and what the sweep measured).
// A split is a range of whole tiles of kDecodeTileKeys keys; each (sequence, KV head, row group, split) is one block.
inline constexpr int kDecodeTileKeys = 64;
inline constexpr int kDecodeRowsPerBlock = 16;          // query rows one block computes: the m = 16 of mma.m16n8k16
int DecodeRowGroups(const DecodeLaunchShape& problem);  // ⌈H/G·R / 16⌉
// The split count flash_decode uses: `forced` (> 0) or the automatic rule for `sm_count` multiprocessors; then
// made effective: at most one split per tile, and no split left empty (⌈tiles / ⌈tiles / splits⌉⌉).
int DecodeSplits(const DecodeLaunchShape& problem, int forced, int sm_count);
// Keys per split (a multiple of kDecodeTileKeys) for an effective split count.
int DecodeKeysPerSplit(const DecodeLaunchShape& problem, int splits);
// Scratch of the split partials: per query row and split, O (d floats) and (m, ℓ), fp32; then one uint32 arrival
// counter per (sequence, KV head, row group), which must be 0 before the workspace's first use (the kernel leaves
// it 0 again). 0 bytes for one split.
std::size_t DecodeWorkspaceBytes(const DecodeLaunchShape& problem, int splits);

// ---- `flashviz bench --decode`'s rows: the bench CSV's columns (kernel, dtype, B, H, N, d, causal, ms_median,
// ms_min, tflops, max_abs_error, hbm_bytes, gpu, status) followed by kv_heads, q_rows, page, splits, gbps,
// copy_gbps, share. hbm_bytes is the KV cache (the minimum read), gbps = hbm_bytes / ms_median, share = gbps /
// copy_gbps. ParseBenchCsv reads such a file as any bench CSV (extra columns are ignored), so --replot draws it.
struct DecodeBenchRow {
  BenchRow row;  // N = kv_len, H = query heads, causal 0
  int kv_heads = 0, q_rows = 0, page = 0, splits = 0;
  double gbps = 0, copy_gbps = 0, share = 0;  // NaN where not measured
};
std::string DecodeCsvHeader();
std::string DecodeCsvLine(const DecodeBenchRow& row);

// The sweep of `flashviz bench --decode`: batch outer, then N, then kernels. Throws InputError for an unknown id.
struct DecodeSweepPoint {
  const VariantInfo* variant;
  DecodeLaunchShape problem;
};
std::vector<DecodeSweepPoint> DecodeSweepPoints(const std::vector<std::string>& kernels,
                                                const std::vector<int>& batches, const std::vector<int>& kv_lens,
                                                const DecodeLaunchShape& base);

}  // namespace flashviz::cuda
