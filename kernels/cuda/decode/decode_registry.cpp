// The decode catalogue: decode_rows.inc's metadata as plain C++ (no CUDA), the shape helpers, the split rule, the
// workspace size and the bench CSV rows. Compiled into flashviz_kernels in every build.
#include "kernels/cuda/decode/decode_registry.h"

#include <algorithm>
#include <cmath>

#include "kernels/common/format.h"
#include "kernels/common/input_error.h"

namespace flashviz::cuda {
namespace {

// The first argument names a CUDA function; this build reads only the metadata after it.
#define FLASHVIZ_DECODE_VARIANT(launch, ...) VariantInfo{__VA_ARGS__},
const VariantInfo kDecodeCatalogue[] = {
#include "kernels/cuda/decode/decode_rows.inc"
};
#undef FLASHVIZ_DECODE_VARIANT

int CeilDivide(std::int64_t a, std::int64_t b) {
  return static_cast<int>((a + b - 1) / b);
}

}  // namespace

float DecodeLaunchShape::Scale() const {
  return scale != 0 ? scale : 1.0f / std::sqrt(static_cast<float>(d));
}

DecodeShape DecodeLaunchShape::Sequence() const {
  DecodeShape shape;
  shape.heads = heads;
  shape.kv_heads = kv_heads;
  shape.q_rows = q_rows;
  shape.kv_len = kv_len;
  shape.d = d;
  shape.scale = Scale();
  return shape;
}

double DecodeKvCacheBytes(const DecodeLaunchShape& problem, DType dtype) {
  return 2.0 * static_cast<double>(problem.KvElements()) * static_cast<double>(DTypeBytes(dtype));
}

double DecodeFlops(const DecodeLaunchShape& problem) {
  return 4.0 * static_cast<double>(problem.QueryRows()) * problem.kv_len * problem.d;
}

std::span<const VariantInfo> DecodeCatalogue() {
  return kDecodeCatalogue;
}

const VariantInfo* FindDecodeInfo(std::string_view id) {
  for (const VariantInfo& variant : kDecodeCatalogue)
    if (id == variant.id) return &variant;
  return nullptr;
}

bool DecodeVariantIsPaged(const VariantInfo& variant) {
  return std::string_view(variant.id) == "flash_decode_paged";
}

std::optional<std::string> DecodeNotApplicable(const VariantInfo& variant, const DecodeLaunchShape& p, DType dtype) {
  if (p.batch < 1 || p.heads < 1 || p.kv_heads < 1 || p.q_rows < 1 || p.kv_len < 1)
    return Sprintf("B = %d, H = %d, G = %d, R = %d, N = %d: every one must be at least 1", p.batch, p.heads, p.kv_heads,
                   p.q_rows, p.kv_len);
  if (p.heads % p.kv_heads != 0) return Sprintf("G = %d does not divide H = %d", p.kv_heads, p.heads);
  // The catalogue's own checks (dtype, d) through an AttentionShape of the same d.
  AttentionShape shape;
  shape.batch = p.batch;
  shape.heads = p.heads;
  shape.n = p.kv_len;
  shape.d = p.d;
  if (auto reason = CatalogueNotApplicable(variant, shape, dtype)) return reason;
  if (DecodeVariantIsPaged(variant) && p.page_size < 1)
    return std::string(variant.id) + " reads a paged cache: give a page size P ≥ 1";
  // Grid dimensions y and z (G·row groups, B) are limited to 65535; element offsets are 64-bit throughout.
  if (p.batch > 65535 || static_cast<std::int64_t>(p.kv_heads) * DecodeRowGroups(p) > 65535)
    return Sprintf("B = %d, G·⌈H/G·R/16⌉ = %lld: at most 65535 each (CUDA grid limits)", p.batch,
                   static_cast<long long>(p.kv_heads) * DecodeRowGroups(p));
  return std::nullopt;
}

int DecodeRowGroups(const DecodeLaunchShape& problem) {
  return CeilDivide(problem.GroupRows(), kDecodeRowsPerBlock);
}

// The automatic rule, justified in flash_decode.cu by sweeps over split counts: about one block per SM
// (⌊SMs / (B·G·row groups)⌋ splits); the same for the paged cache when P is a multiple of the tile (one lookup per
// tile, run7), two per SM when it is not (a division and a lookup per row, which a second block per SM hides: P = 16
// lost up to 37% at one block per SM, run8); never a second wave of blocks (the shared memory holds two blocks per
// SM at d = 128); and no split shorter than kMinTilesPerSplit tiles, where the split's prologue (Q, the pipeline's
// first tiles) and its share of the merge stop paying for themselves.
namespace {
constexpr int kMinTilesPerSplit = 4;
constexpr int kBlocksPerSm = 1;
constexpr int kBlocksPerSmRowLookups = 2;
}  // namespace

int DecodeSplits(const DecodeLaunchShape& problem, int forced, int sm_count) {
  const int tiles = CeilDivide(problem.kv_len, kDecodeTileKeys);
  int splits = forced;
  if (splits <= 0) {
    const std::int64_t blocks = static_cast<std::int64_t>(problem.batch) * problem.kv_heads * DecodeRowGroups(problem);
    const bool row_lookups = problem.page_size > 0 && problem.page_size % kDecodeTileKeys != 0;
    const int blocks_per_sm = row_lookups ? kBlocksPerSmRowLookups : kBlocksPerSm;
    const auto per_sm = static_cast<int>(std::max<std::int64_t>(1, blocks_per_sm * std::max(1, sm_count) / blocks));
    splits = std::min(per_sm, std::max(1, tiles / kMinTilesPerSplit));
  }
  splits = std::clamp(splits, 1, tiles);
  return CeilDivide(tiles, CeilDivide(tiles, splits));  // no empty split
}

int DecodeKeysPerSplit(const DecodeLaunchShape& problem, int splits) {
  const int tiles = CeilDivide(problem.kv_len, kDecodeTileKeys);
  return CeilDivide(tiles, std::max(1, splits)) * kDecodeTileKeys;
}

std::size_t DecodeWorkspaceBytes(const DecodeLaunchShape& problem, int splits) {
  if (splits <= 1) return 0;
  const auto partials = static_cast<std::size_t>(problem.QueryRows()) * static_cast<std::size_t>(splits);
  const auto counters = static_cast<std::size_t>(problem.batch) * static_cast<std::size_t>(problem.kv_heads) *
                        static_cast<std::size_t>(DecodeRowGroups(problem));
  return partials * (static_cast<std::size_t>(problem.d) + 2) * sizeof(float) + counters * sizeof(std::uint32_t);
}

std::string DecodeCsvHeader() {
  std::string header = BenchCsvHeader();
  header.pop_back();  // '\n'
  return header + ",kv_heads,q_rows,page,splits,gbps,copy_gbps,share\n";
}

std::string DecodeCsvLine(const DecodeBenchRow& r) {
  std::string line = BenchCsvLine(r.row);
  line.pop_back();
  const auto number = [](double x, const char* format) {
    return std::isfinite(x) ? Sprintf(format, x) : std::string();
  };
  return line + Sprintf(",%d,%d,%d,%d,", r.kv_heads, r.q_rows, r.page, r.splits) + number(r.gbps, "%.5g") + "," +
         number(r.copy_gbps, "%.5g") + "," + number(r.share, "%.4f") + "\n";
}

std::vector<DecodeSweepPoint> DecodeSweepPoints(const std::vector<std::string>& kernels,
                                                const std::vector<int>& batches, const std::vector<int>& kv_lens,
                                                const DecodeLaunchShape& base) {
  std::vector<const VariantInfo*> variants;
  for (const std::string& id : kernels) {
    const VariantInfo* variant = FindDecodeInfo(id);
    if (!variant) {
      std::string known;
      for (const VariantInfo& v : kDecodeCatalogue) known += (known.empty() ? "" : ", ") + std::string(v.id);
      throw InputError(Sprintf("unknown decode kernel '%s' (known: %s)", id.c_str(), known.c_str()));
    }
    variants.push_back(variant);
  }
  if (variants.empty()) throw InputError("no kernels to run");
  if (batches.empty() || kv_lens.empty()) throw InputError("no shapes to run: give --batch and --kv-len");
  std::vector<DecodeSweepPoint> points;
  for (int batch : batches)
    for (int n : kv_lens)
      for (const VariantInfo* variant : variants) {
        DecodeLaunchShape problem = base;
        problem.batch = batch;
        problem.kv_len = n;
        if (!DecodeVariantIsPaged(*variant)) problem.page_size = 0;
        points.push_back({variant, problem});
      }
  return points;
}

}  // namespace flashviz::cuda
