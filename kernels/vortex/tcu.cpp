#include "kernels/vortex/tcu.h"

#include <algorithm>
#include <cassert>
#include <cmath>
#include <limits>
#include <stdexcept>

#include "kernels/common/parallel.h"
#include "kernels/cpu/reference.h"
#include "kernels/vortex/fp16.h"

namespace flashviz::vortex {
namespace {

constexpr int kT = kTcuTile;  // 8
constexpr int kK = kTcuK;     // 16
constexpr float kMinusInfinity = -std::numeric_limits<float>::infinity();

// C (8×8 fp32) += A (8×16 fp16) · B (16×8 fp16): the products of two fp16 values are exact in fp32, the sums
// are rounded to fp32 in the order of the micro-ops (K ascending).
void Mma(const std::array<float, kT * kK>& a, const std::array<float, kK * kT>& b, std::array<float, kT * kT>& c) {
  for (int r = 0; r < kT; ++r)
    for (int n = 0; n < kT; ++n) {
      float acc = c[r * kT + n];
      for (int k = 0; k < kK; ++k) acc += a[r * kK + k] * b[k * kT + n];
      c[r * kT + n] = acc;
    }
}

void RequireTcuShape(const AttentionInputs& in) {
  if (in.d != kT || in.n < kT || in.n % kT != 0)
    throw std::invalid_argument("the TCU program needs d = 8 and N a multiple of 8");
}

// Block i of the TCU program, tile iterations 0..last_j; fills `snapshot` with iteration last_j and returns the
// normalized O_i (8×8).
std::array<float, kT * kT> RunTcuBlock(const AttentionInputs& in, int i, int last_j, TcuTileSnapshot* snapshot) {
  const auto at = [](const std::vector<float>& x, int row, int col) { return x[row * kT + col]; };
  TcuTileSnapshot s;
  s.i = i;
  for (int r = 0; r < kT; ++r)
    for (int e = 0; e < kT; ++e) s.q_a[r * kK + e] = RoundToFp16(at(in.q, i * kT + r, e));
  std::array<float, kT * kT> o{};
  std::array<float, kT> m, l{};
  m.fill(kMinusInfinity);
  for (int j = 0; j <= last_j; ++j) {
    s.j = j;
    s.m_before = m;
    s.l_before = l;
    for (int k = 0; k < kT; ++k)
      for (int n = 0; n < kT; ++n) {
        s.kt_b[k * kT + n] = RoundToFp16(at(in.k, j * kT + n, k));  // K_j^T[k][n] = K_j[n][k]
        s.v_b[k * kT + n] = RoundToFp16(at(in.v, j * kT + k, n));   // V_j[k][n]
      }
    s.s.fill(0.0f);
    Mma(s.q_a, s.kt_b, s.s);  // first mma_sync: S_ij = Q_i·K_j^T
    for (int r = 0; r < kT; ++r) {
      float rowmax = kMinusInfinity;
      for (int c = 0; c < kT; ++c) rowmax = std::max(rowmax, s.s[r * kT + c]);
      s.rowmax[r] = rowmax;
      float rowsum = 0.0f;
      for (int c = 0; c < kT; ++c) {
        const float value = std::exp(s.s[r * kT + c] - rowmax);
        s.p_a[r * kK + c] = RoundToFp16(value);  // P~ is stored as fp16 for the mma
        rowsum += value;  // the row sum reads the fp32 values kept in S's bytes
      }
      s.rowsum[r] = rowsum;
      const float m_new = std::max(m[r], rowmax);
      const float alpha = std::exp(m[r] - m_new);
      const float beta = std::exp(rowmax - m_new);
      l[r] = alpha * l[r] + beta * rowsum;
      m[r] = m_new;
      s.alpha[r] = alpha;
      s.beta[r] = beta;
      for (int c = 0; c < kT; ++c) o[r * kT + c] *= alpha;
    }
    s.pv.fill(0.0f);
    Mma(s.p_a, s.v_b, s.pv);  // second mma_sync: P~_ij·V_j
    for (int r = 0; r < kT; ++r)
      for (int c = 0; c < kT; ++c) o[r * kT + c] += s.beta[r] * s.pv[r * kT + c];
    s.m_after = m;
    s.l_after = l;
    s.o_after = o;
  }
  if (snapshot) *snapshot = s;
  std::array<float, kT * kT> normalized{};
  for (int r = 0; r < kT; ++r) {
    const float inv_l = 1.0f / l[r];
    for (int c = 0; c < kT; ++c) normalized[r * kT + c] = o[r * kT + c] * inv_l;
  }
  return normalized;
}

}  // namespace

// ---- fragments ---------------------------------------------------------------------------------------------------

std::string_view FragmentName(Fragment fragment) {
  switch (fragment) {
    case Fragment::kA: return "A";
    case Fragment::kB: return "B";
    case Fragment::kC: return "C";
  }
  return "?";
}

FragmentShape ShapeOf(Fragment fragment) {
  switch (fragment) {
    case Fragment::kA: return {kT, kK, 2, kTcuFirstRegisterA};
    case Fragment::kB: return {kK, kT, 2, kTcuFirstRegisterB};
    case Fragment::kC: return {kT, kT, 4, kTcuFirstRegisterC};
  }
  return {};
}

FragmentSlot SlotOf(Fragment fragment, int row, int col) {
  switch (fragment) {
    case Fragment::kA:  // row = t/2 + 4·(reg/4), col = 4·(reg mod 4) + 2·(t mod 2) + half
      return {2 * (row % 4) + (col % 4) / 2, 4 * (row / 4) + col / 4, col % 2};
    case Fragment::kB: {  // k = 2·(t mod 2) + 4·(reg/2) + half, n = (t mod 4)/2 + 2·(t/4) + 4·(reg mod 2)
      const int k = row, n = col;
      return {4 * ((n % 4) / 2) + 2 * (n % 2) + (k % 4) / 2, 2 * (k / 4) + n / 4, k % 2};
    }
    case Fragment::kC:  // row = t/2 + 4·(reg/4), col = t mod 2 + 2·(reg mod 4)
      return {2 * (row % 4) + col % 2, 4 * (row / 4) + col / 2, 0};
  }
  return {};
}

std::vector<FragmentElement> ElementsOf(Fragment fragment, int lane, int reg) {
  switch (fragment) {
    case Fragment::kA: {
      const int row = lane / 2 + 4 * (reg / 4), col = 4 * (reg % 4) + 2 * (lane % 2);
      return {{row, col}, {row, col + 1}};
    }
    case Fragment::kB: {
      const int k = 2 * (lane % 2) + 4 * (reg / 2), n = (lane % 4) / 2 + 2 * (lane / 4) + 4 * (reg % 2);
      return {{k, n}, {k + 1, n}};
    }
    case Fragment::kC: return {{lane / 2 + 4 * (reg / 4), lane % 2 + 2 * (reg % 4)}};
  }
  return {};
}

bool IsPadding(Fragment fragment, int row, int col) {
  if (fragment == Fragment::kA) return col >= kT;
  if (fragment == Fragment::kB) return row >= kT;
  return false;
}

bool RegisterIsPadding(Fragment fragment, int reg) {
  for (int lane = 0; lane < kTcuThreads; ++lane)
    for (const FragmentElement& e : ElementsOf(fragment, lane, reg))
      if (!IsPadding(fragment, e.row, e.col)) return false;
  return true;
}

std::string PaddingRegisterNames(Fragment fragment) {
  std::string names;
  for (int reg = 0; reg < kTcuFragmentRegisters; ++reg)
    if (RegisterIsPadding(fragment, reg))
      names += (names.empty() ? "f" : ", f") + std::to_string(ShapeOf(fragment).first_register + reg);
  return names;
}

std::vector<MicroOp> MmaMicroOps() {
  std::vector<MicroOp> ops;
  for (int m = 0; m < 2; ++m)
    for (int n = 0; n < 4; ++n)
      for (int k = 0; k < 4; ++k) {
        MicroOp op;
        op.m_step = m;
        op.n_step = n;
        op.k_step = k;
        op.row_begin = 4 * m;
        op.col_begin = 2 * n;
        op.k_begin = 4 * k;
        op.only_padding = op.k_begin >= kT;
        ops.push_back(op);
      }
  assert(static_cast<int>(ops.size()) == kMicroOpsPerMma);
  return ops;
}

std::int64_t MacsPerMma(const MmaTileShape& shape) { return std::int64_t{shape.m} * shape.n * shape.k; }

double UsefulFraction(const MmaTileShape& shape, int d) {
  if (d < 1) return 0.0;
  const int k_tiles = (d + shape.k - 1) / shape.k;  // the head dimension is padded to a multiple of K
  return static_cast<double>(d) / (static_cast<double>(k_tiles) * shape.k);
}

// ---- numerics ------------------------------------------------------------------------------------------------

TcuTileSnapshot TcuSnapshot(const AttentionInputs& inputs, int i, int j) {
  RequireTcuShape(inputs);
  const int tiles = inputs.n / kT;
  if (i < 0 || i >= tiles || j < 0 || j >= tiles) throw std::invalid_argument("TcuSnapshot: tile index out of range");
  TcuTileSnapshot snapshot;
  RunTcuBlock(inputs, i, j, &snapshot);
  return snapshot;
}

std::vector<float> RunTcuProgram(const AttentionInputs& inputs) {
  RequireTcuShape(inputs);
  const int tiles = inputs.n / kT;
  std::vector<float> o(inputs.n * kT);
  for (int i = 0; i < tiles; ++i) {
    const auto block = RunTcuBlock(inputs, i, tiles - 1, nullptr);
    std::copy(block.begin(), block.end(), o.begin() + static_cast<std::ptrdiff_t>(i) * kT * kT);
  }
  return o;
}

std::vector<float> RunSimtProgram(const AttentionInputs& in, int bc) {
  if (bc < 1 || bc > in.n || in.n % bc != 0)
    throw std::invalid_argument("the SIMT program needs B_c ≤ N with B_c dividing N");
  const int n = in.n, d = in.d;
  std::vector<float> out(n * d);
  // Rows are independent (one Vortex thread each): emulated on all host cores, each with its own scratch.
  ParallelFor(n, 0, [&](std::int64_t row_index, int) {
    const int row = static_cast<int>(row_index);
    std::vector<float> sp(bc), o(d);
    const float* q = &in.q[row * d];
    std::fill(o.begin(), o.end(), 0.0f);
    float m = kMinusInfinity, l = 0.0f;
    for (int j0 = 0; j0 < n; j0 += bc) {
      for (int k = 0; k < bc; ++k) {
        const float* key = &in.k[(j0 + k) * d];
        float acc = 0.0f;
        for (int e = 0; e < d; ++e) acc += q[e] * key[e];
        sp[k] = acc;
      }
      float rowmax = sp[0];
      for (int k = 1; k < bc; ++k) rowmax = std::max(rowmax, sp[k]);
      float rowsum = 0.0f;
      for (int k = 0; k < bc; ++k) {
        sp[k] = std::exp(sp[k] - rowmax);
        rowsum += sp[k];
      }
      const float m_new = std::max(m, rowmax);
      const float alpha = std::exp(m - m_new), beta = std::exp(rowmax - m_new);
      l = alpha * l + beta * rowsum;
      for (int c = 0; c < d; ++c) {
        float dot = 0.0f;
        for (int k = 0; k < bc; ++k) dot += sp[k] * in.v[(j0 + k) * d + c];
        o[c] = alpha * o[c] + beta * dot;
      }
      m = m_new;
    }
    const float inv_l = 1.0f / l;
    for (int c = 0; c < d; ++c) out[row * d + c] = o[c] * inv_l;
  });
  return out;
}

NumericsResult RunNumerics(const AttentionInputs& inputs, int simt_bc) {
  NumericsResult r;
  r.o_reference = ReferenceAttention(inputs.q.data(), inputs.k.data(), inputs.v.data(), inputs.n, inputs.d, 1.0,
                                     false);
  const auto outside_check = [&](const std::vector<float>& out, std::int64_t& count, double& max_error) {
    for (std::size_t x = 0; x < out.size(); ++x) {
      const double error = std::fabs(r.o_reference[x] - out[x]);
      max_error = std::max(max_error, error);
      if (error > kProgramAbsTolerance + kProgramRelTolerance * std::fabs(out[x])) ++count;
    }
  };
  r.o_simt = RunSimtProgram(inputs, simt_bc);
  outside_check(r.o_simt, r.simt_outside_check, r.max_error_simt);
  if (inputs.d == kT && inputs.n >= kT && inputs.n % kT == 0) {
    r.o_tcu = RunTcuProgram(inputs);
    outside_check(r.o_tcu, r.tcu_outside_check, r.max_error_tcu);
    for (std::size_t x = 0; x < r.o_tcu.size(); ++x)
      r.max_tcu_vs_simt = std::max(r.max_tcu_vs_simt, static_cast<double>(std::fabs(r.o_tcu[x] - r.o_simt[x])));
  }
  return r;
}

}  // namespace flashviz::vortex
