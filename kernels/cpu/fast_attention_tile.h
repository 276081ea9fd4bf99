// Internal to the fast CPU path: the per-Q-tile entry points of the two builds of fast_attention_tile.inc.
#pragma once

#include <cstddef>
#include <vector>

namespace flashviz::fast_attention {

inline constexpr int kRows = 128;  // rows of a Q tile (B_r): K_j is transposed once per 128 rows
inline constexpr int kCols = 64;  // keys of a K/V tile (B_c)
inline int PaddedDim(int d) { return (d + 7) / 8 * 8; }

// Per-thread scratch, reused across tiles: everything one tile iteration touches stays in L1/L2.
struct Workspace {
  std::vector<float> q, kt, v, s, o, m, l;
  void Reserve(int dp) {
    const auto rows = static_cast<std::size_t>(kRows), cols = static_cast<std::size_t>(kCols);
    const auto width = static_cast<std::size_t>(dp);
    if (q.size() >= rows * width) return;
    q.resize(rows * width);
    kt.resize(width * cols);
    v.resize(cols * width);
    s.resize(rows * cols);
    o.resize(rows * width);
    m.resize(rows);
    l.resize(rows);
  }
};

struct TileArgs {
  const float* q;  // N×d, one head
  const float* k;
  const float* v;
  float* out;      // N×d
  int n, d, row_begin;
  float scale;
  bool causal;
};

void AttentionTileAvx2(const TileArgs& args, Workspace& workspace);
void AttentionTileGeneric(const TileArgs& args, Workspace& workspace);

}  // namespace flashviz::fast_attention
