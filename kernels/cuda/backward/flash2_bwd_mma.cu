// flash2_bwd_mma: FlashAttention-2's backward pass on the tensor cores, fp16/bf16 in and out, fp32 accumulation
// (mma.sync m16n8k16). The schedule is flash2_bwd's: a block per (K/V tile j, head) keeps dK_j and dV_j in
// registers and walks the Q tiles i that meet j. What changes is where each operand lives:
//
//   - Each warp owns 32 keys of K_j at d = 64 (16 at d = 128, backward_tiles.h) and computes the TRANSPOSED tiles
//     S_ijᵀ = K_j Q_iᵀ and dP_ijᵀ = V_j dO_iᵀ (keys as the mma's rows). Their fp32 accumulators are, repacked,
//     exactly the A operands of dV_j += P_ijᵀ dO_i and dK_j += dS_ijᵀ Q_i (the forward kernel's P̃-in-registers
//     trick, applied twice), so P and dS never touch shared memory on the way to dK and dV. Shared memory
//     bandwidth bounds these loops (about one ldmatrix.x4, 4 clocks of it, per two mma); two key tiles a warp
//     let every Q_i / dO_i fragment feed both, a quarter fewer ldmatrix per mma over the five products.
//   - Q_i and dO_i serve twice: as B of S/dP (ldmatrix, rows are the n index) and as B of dV/dK (ldmatrix .trans,
//     rows are the k index). Both read the same XOR-swizzled tile without bank conflicts.
//   - dQ_i += scale·dS_ij K_j needs dS with queries as rows, across the warps: each warp stores its dSᵀ slice into
//     a padded shared tile, and after a barrier every warp multiplies one part of dQ_i and adds it to an fp32
//     accumulator in HBM with float2 atomics; a last kernel converts it to the output dtype (the default at
//     d = 64). The other strategy (the default at d = 128, measured faster there; kFlash2BackwardMmaOtherDqStrategy
//     flips it) leaves dQ to a second kernel in the Q-outer order that recomputes S, P, dP and dS per (i, j) and
//     keeps dQ_i in registers, the forward kernel's shape.
//   - Q_{i+1}, dO_{i+1}, L_{i+1} and D_{i+1} are copied by cp.async into the second buffer under the work on i.
//
// The PTX wrappers, the swizzle and the tile copies are flash2_mma's (kernels/cuda/mma/flash2_mma_kernel.cuh).
#include "kernels/cuda/backward/backward_common.cuh"
#include "kernels/cuda/backward/backward_tiles.h"
#include "kernels/cuda/backward/backward_variants.h"
#include "kernels/cuda/mma/flash2_mma_kernel.cuh"

namespace flashviz::cuda {
namespace {

using mma_detail::ChunkAddress;
using mma_detail::CopyAsyncCommit;
using mma_detail::CopyAsyncWaitAll;
using device::FastExp2;
using mma_detail::LaneChunkBytes;
using mma_detail::LoadMatrixX4;
using mma_detail::LoadMatrixX4Trans;
using mma_detail::LoadTileAsync;
using mma_detail::MmaM16N8K16;
using mma_detail::PackPair;
using mma_detail::SharedAddress;

constexpr bool kSwizzle = true;
constexpr int kWarps = backward_tiles::kMmaWarps;
constexpr int kThreads = 32 * kWarps;

// A 4-byte global → shared copy (L_i and D_i entries); src_bytes = 0 writes a zero (rows past N).
__device__ __forceinline__ void CopyAsync4(std::uint32_t shared_dst, const void* global_src, int src_bytes) {
  asm volatile("cp.async.ca.shared.global [%0], [%1], 4, %2;\n" ::"r"(shared_dst), "l"(global_src), "r"(src_bytes));
}

template <typename T>
struct BackwardMmaParams {
  const T* q;
  const T* k;
  const T* v;
  const T* dout;
  const float* lse;
  const float* delta;
  float* dq_accumulator;  // the K/V-outer kernel with atomics: fp32, B·H·N·d, zeroed before
  T* dq;                  // the separate dQ pass
  T* dk;
  T* dv;
  int n;
  float scale;
  float scale_log2;  // scale · log2(e): P = 2^(s·scale_log2 − L·log2 e)
  bool causal;
};

template <int kD>
struct KvLayout {
  static constexpr int kKeyTiles = backward_tiles::MmaKeyTiles(kD);  // m16 key tiles a warp
  static constexpr int kBc = backward_tiles::MmaBc(kD);
  static constexpr int kBr = backward_tiles::MmaBr(kD);
  static constexpr int kRowBytes = kD * 2;
  static constexpr int kKvTileBytes = kBc * kRowBytes;
  static constexpr int kQTileBytes = kBr * kRowBytes;
  static constexpr int kDsRowBytes = (kBr + 8) * 2;  // 16 bytes of padding: ldmatrix rows in 8 bank groups
  static constexpr int kK = 0;
  static constexpr int kV = kK + kKvTileBytes;
  static constexpr int kQ = kV + kKvTileBytes;      // two buffers
  static constexpr int kDo = kQ + 2 * kQTileBytes;  // two buffers
  static constexpr int kL = kDo + 2 * kQTileBytes;  // two buffers of kBr floats
  static constexpr int kDelta = kL + 2 * kBr * 4;   // two buffers of kBr floats
  static constexpr int kDs = kDelta + 2 * kBr * 4;  // dSᵀ: kBc rows of kBr (+8) elements
  static constexpr int kBytesWithoutDs = kDs;
  static constexpr int kBytes = kDs + kBc * kDsRowBytes;
  static_assert(kKvTileBytes % 1024 == 0 && kQTileBytes % 1024 == 0, "swizzled tiles start on 1024-byte lines");
};

// ---------------------------------------------------------------------------------------------------------
// The K/V-outer kernel: dK_j, dV_j (and, with kDqAtomic, dQ by atomics). Grid (⌈N/B_c⌉, B·H).
// Fragment layouts as in flash2_mma_kernel.cuh: a lane holds rows g and g+8 (g = lane/4) and columns 2c, 2c+1
// (c = lane % 4) of each 16×8 accumulator tile.
template <typename T, int kD, bool kDqAtomic>
__global__ void __launch_bounds__(kThreads, 2) BackwardMmaKvKernel(const BackwardMmaParams<T> params) {
  using L = KvLayout<kD>;
  constexpr int kM = L::kKeyTiles, kBc = L::kBc, kBr = L::kBr, kRowBytes = L::kRowBytes;
  constexpr int kWarpKeys = 16 * kM;
  constexpr int kKSteps = kD / 16;   // k-steps over d of Sᵀ and dPᵀ
  constexpr int kQTiles = kBr / 8;   // n8 tiles (queries) of Sᵀ and dPᵀ
  constexpr int kQSteps = kBr / 16;  // k-steps over queries of dV and dK
  constexpr int kDTiles = kD / 8;    // n8 tiles of dV and dK

  extern __shared__ __align__(1024) unsigned char shared[];
  const std::uint32_t base = SharedAddress(shared);
  if (base % 1024 != 0) __trap();  // ChunkAddress's XOR needs 1024-byte aligned tiles
  const auto* l_shared = reinterpret_cast<const float*>(shared + L::kL);
  const auto* delta_shared = reinterpret_cast<const float*>(shared + L::kDelta);

  const int thread = threadIdx.x, warp = thread / 32, lane = thread % 32;
  const int g = lane / 4, c = lane % 4, lane_mod8 = lane % 8;
  const int n = params.n;
  const int col0 = blockIdx.x * kBc;  // first key of K_j
  const std::size_t head_row0 = static_cast<std::size_t>(blockIdx.y) * n;
  const T* q_head = params.q + head_row0 * kD;
  const T* do_head = params.dout + head_row0 * kD;
  const float* lse_head = params.lse + head_row0;
  const float* delta_head = params.delta + head_row0;

  const int q_tiles = (n + kBr - 1) / kBr;
  const int first_tile = params.causal ? col0 / kBr : 0;  // causal: Q tiles wholly before key col0 see none of j

  // Q_i, dO_i, L_i, D_i of tile i into buffer `buffer` (rows past N zero: they add nothing, see below).
  const auto load_q_tile = [&](int i, int buffer) {
    const int row0 = i * kBr;
    LoadTileAsync<kD, kBr, kThreads, kSwizzle>(base + L::kQ + buffer * L::kQTileBytes,
                                               q_head + static_cast<std::size_t>(row0) * kD, n - row0, thread);
    LoadTileAsync<kD, kBr, kThreads, kSwizzle>(base + L::kDo + buffer * L::kQTileBytes,
                                               do_head + static_cast<std::size_t>(row0) * kD, n - row0, thread);
    if (thread < 2 * kBr) {
      const int r = thread % kBr;
      const bool valid = row0 + r < n;
      const float* source = (thread < kBr ? lse_head : delta_head) + (valid ? row0 + r : 0);
      const int offset = (thread < kBr ? L::kL : L::kDelta) + (buffer * kBr + r) * 4;
      CopyAsync4(base + offset, source, valid ? 4 : 0);
    }
  };
  LoadTileAsync<kD, kBc, kThreads, kSwizzle>(base + L::kK, params.k + (head_row0 + col0) * kD, n - col0, thread);
  LoadTileAsync<kD, kBc, kThreads, kSwizzle>(base + L::kV, params.v + (head_row0 + col0) * kD, n - col0, thread);
  load_q_tile(first_tile, 0);
  CopyAsyncCommit();

  // Lane addresses. Key tile 0 of this warp's K_j / V_j as the A operand (rows lane % 16, chunk lane / 16); tile m
  // is 16·m rows further, which keeps the row mod 8 the swizzle keys on.
  const std::uint32_t k_a_lane =
      base + L::kK + (warp * kWarpKeys + lane % 16) * kRowBytes + LaneChunkBytes<kSwizzle>(lane / 16, lane_mod8);
  const std::uint32_t v_a_lane = k_a_lane + (L::kV - L::kK);
  // Q_i / dO_i as the B operand of Sᵀ / dPᵀ (queries are n): two n8 tiles per ldmatrix.x4, as K_j in the forward.
  const std::uint32_t q_b_lane =
      base + L::kQ + ((lane / 16) * 8 + lane % 8) * kRowBytes + LaneChunkBytes<kSwizzle>((lane / 8) % 2, lane_mod8);
  // Q_i / dO_i as the B operand of dK / dV (queries are k), transposed, as V_j in the forward.
  const std::uint32_t q_t_lane =
      base + L::kQ + (lane % 16) * kRowBytes + LaneChunkBytes<kSwizzle>(lane / 16, lane_mod8);
  constexpr std::uint32_t kDoMinusQ = L::kDo - L::kQ;

  float dk_acc[kM][kDTiles][4], dv_acc[kM][kDTiles][4];
#pragma unroll
  for (int m = 0; m < kM; ++m)
#pragma unroll
    for (int t = 0; t < kDTiles; ++t)
#pragma unroll
      for (int e = 0; e < 4; ++e) dk_acc[m][t][e] = dv_acc[m][t][e] = 0.0f;
  const float scale_log2 = params.scale_log2;
  const int warp_key0 = col0 + warp * kWarpKeys;
  const int key_a = warp_key0 + g;  // the lane's keys: key_a + 16·m and key_a + 16·m + 8

  for (int i = first_tile; i < q_tiles; ++i) {
    const int buffer = (i - first_tile) & 1;
    const int row0 = i * kBr;
    CopyAsyncWaitAll();
    // Tile i is visible to all; every warp finished tile i−1, so its buffer (and dSᵀ) may be overwritten.
    __syncthreads();
    if (i + 1 < q_tiles) {
      load_q_tile(i + 1, buffer ^ 1);
      CopyAsyncCommit();
    }
    const std::uint32_t stage_bytes = buffer * L::kQTileBytes;

    // dPᵀ = V_j dO_iᵀ, then Sᵀ = K_j Q_iᵀ for this warp's keys × B_r queries, one product at a time (one A operand
    // live: the registers are full), then Pᵀ and dSᵀ, packed to T at once: 32 registers instead of 64 during dV
    // and dK. Causal: a warp whose keys all come after the tile's last query has P = dS = 0 and goes to the dQ step
    // with zeros.
    std::uint32_t ds_packed[kM][kQTiles][2];  // dSᵀ as T pairs: rows g and g+8 of n8 tile t
#pragma unroll
    for (int m = 0; m < kM; ++m)
#pragma unroll
      for (int t = 0; t < kQTiles; ++t) ds_packed[m][t][0] = ds_packed[m][t][1] = 0u;
    if (!params.causal || warp_key0 < row0 + kBr) {
      // A of key tile m is 16·m rows below tile 0's; B: two n8 tiles (queries) per ldmatrix.x4, for every m.
      const auto transposed_product = [&](float(&acc)[kM][kQTiles][4], std::uint32_t a_lane,
                                          std::uint32_t b_lane) {
#pragma unroll
        for (int m = 0; m < kM; ++m)
#pragma unroll
          for (int t = 0; t < kQTiles; ++t)
#pragma unroll
            for (int e = 0; e < 4; ++e) acc[m][t][e] = 0.0f;
#pragma unroll
        for (int ks = 0; ks < kKSteps; ++ks) {
          std::uint32_t a[kM][4];
#pragma unroll
          for (int m = 0; m < kM; ++m) LoadMatrixX4(a[m], ChunkAddress<kSwizzle>(a_lane, ks * 32) + m * 16 * kRowBytes);
#pragma unroll
          for (int qp = 0; qp < kQSteps; ++qp) {
            std::uint32_t b[4];
            LoadMatrixX4(b, ChunkAddress<kSwizzle>(b_lane, ks * 32) + qp * 16 * kRowBytes);
#pragma unroll
            for (int m = 0; m < kM; ++m) {
              MmaM16N8K16<T>(acc[m][2 * qp], a[m], b[0], b[1]);
              MmaM16N8K16<T>(acc[m][2 * qp + 1], a[m], b[2], b[3]);
            }
          }
        }
      };
      float dpt[kM][kQTiles][4], st[kM][kQTiles][4];
      transposed_product(dpt, v_a_lane, q_b_lane + stage_bytes + kDoMinusQ);
      transposed_product(st, k_a_lane, q_b_lane + stage_bytes);

      // Pᵀ = exp(scale·Sᵀ − L) with the causal mask (key > query → 0), dSᵀ = Pᵀ ∘ (dPᵀ − D), both rounded to T as
      // the next products read them. Query rows past N were loaded as zeros with L = D = 0: their P is 1 but it
      // multiplies dO = 0 and Q = 0, and their dS is 0. Keys past N are zero rows of K_j and V_j: their dK, dV are
      // never stored and their dS meets K = 0 in dQ.
      const bool crosses_diagonal = params.causal && warp_key0 + kWarpKeys - 1 > row0;
      const float* l_buffer = l_shared + buffer * kBr;
      const float* delta_buffer = delta_shared + buffer * kBr;
      std::uint32_t p_packed[kM][kQTiles][2];
#pragma unroll
      for (int t = 0; t < kQTiles; ++t) {
        const float2 lse_pair = *reinterpret_cast<const float2*>(l_buffer + t * 8 + 2 * c);
        const float2 delta_pair = *reinterpret_cast<const float2*>(delta_buffer + t * 8 + 2 * c);
#pragma unroll
        for (int m = 0; m < kM; ++m) {
          float p[4], ds[4];
#pragma unroll
          for (int e = 0; e < 4; ++e) {
            const float lse = (e & 1) ? lse_pair.y : lse_pair.x;
            const float delta = (e & 1) ? delta_pair.y : delta_pair.x;
            p[e] = FastExp2(fmaf(st[m][t][e], scale_log2, -lse * device::kLog2e));
            if (crosses_diagonal && key_a + m * 16 + (e / 2) * 8 > row0 + t * 8 + 2 * c + (e & 1)) p[e] = 0.0f;
            ds[e] = p[e] * (dpt[m][t][e] - delta);
          }
          p_packed[m][t][0] = PackPair<T>(p[0], p[1]);
          p_packed[m][t][1] = PackPair<T>(p[2], p[3]);
          ds_packed[m][t][0] = PackPair<T>(ds[0], ds[1]);
          ds_packed[m][t][1] = PackPair<T>(ds[2], ds[3]);
        }
      }

      // dV_j += Pᵀ dO_i and dK_j += dSᵀ Q_i: the A operand of key tile m, k-step u (queries 16u..16u+15) is its
      // n8 tiles 2u, 2u+1; each B fragment of dO_i / Q_i serves every key tile.
#pragma unroll
      for (int u = 0; u < kQSteps; ++u)
#pragma unroll
        for (int dp = 0; dp < kD / 16; ++dp) {
          std::uint32_t b[4];
          const std::uint32_t address =
              ChunkAddress<kSwizzle>(q_t_lane + stage_bytes, dp * 32) + u * 16 * kRowBytes;
          LoadMatrixX4Trans(b, address + kDoMinusQ);
#pragma unroll
          for (int m = 0; m < kM; ++m) {
            const std::uint32_t p_a[4] = {p_packed[m][2 * u][0], p_packed[m][2 * u][1], p_packed[m][2 * u + 1][0],
                                          p_packed[m][2 * u + 1][1]};
            MmaM16N8K16<T>(dv_acc[m][2 * dp], p_a, b[0], b[1]);
            MmaM16N8K16<T>(dv_acc[m][2 * dp + 1], p_a, b[2], b[3]);
          }
          LoadMatrixX4Trans(b, address);
#pragma unroll
          for (int m = 0; m < kM; ++m) {
            const std::uint32_t ds_a[4] = {ds_packed[m][2 * u][0], ds_packed[m][2 * u][1],
                                           ds_packed[m][2 * u + 1][0], ds_packed[m][2 * u + 1][1]};
            MmaM16N8K16<T>(dk_acc[m][2 * dp], ds_a, b[0], b[1]);
            MmaM16N8K16<T>(dk_acc[m][2 * dp + 1], ds_a, b[2], b[3]);
          }
        }
    }

    if constexpr (kDqAtomic) {
      // dSᵀ into shared memory (row = key, rounded to T as the mma's A operand would be), then dQ_i = dS K_j
      // split over the warps: warp w takes m16 tile w mod (B_r/16) of the queries and kDqDims dims.
      const std::uint32_t ds_store = base + L::kDs + (warp * kWarpKeys + g) * L::kDsRowBytes + (2 * c) * 2;
#pragma unroll
      for (int m = 0; m < kM; ++m)
#pragma unroll
        for (int t = 0; t < kQTiles; ++t) {
          const std::uint32_t address = ds_store + m * 16 * L::kDsRowBytes + t * 16;
          asm volatile("st.shared.b32 [%0], %1;\n" ::"r"(address), "r"(ds_packed[m][t][0]));
          asm volatile("st.shared.b32 [%0], %1;\n" ::"r"(address + 8 * L::kDsRowBytes), "r"(ds_packed[m][t][1]));
        }
      __syncthreads();
      constexpr int kMTiles = kBr / 16;
      constexpr int kDqDims = kD * kMTiles / kWarps;  // 32 (d = 64) or 64 (d = 128) dims a warp
      static_assert(kDqDims % 16 == 0 && kD % kDqDims == 0, "each warp multiplies 16 query rows × kDqDims of dQ_i");
      const int m_tile = warp % kMTiles, dim0 = (warp / kMTiles) * kDqDims;
      // A = dS (queries × keys) read transposed from dSᵀ: lanes 0-7 keys 0-7 queries 0-7, 8-15 keys 0-7 queries
      // 8-15, 16-23 keys 8-15 queries 0-7, 24-31 keys 8-15 queries 8-15 → a0..a3.
      const std::uint32_t ds_lane =
          base + L::kDs + (lane % 8 + 8 * (lane / 16)) * L::kDsRowBytes + (m_tile * 16 + 8 * ((lane / 8) % 2)) * 2;
      // B = K_j (keys × dims), transposed as V_j in the forward.
      const std::uint32_t k_t_lane =
          base + L::kK + (lane % 16) * kRowBytes + LaneChunkBytes<kSwizzle>(lane / 16, lane_mod8);
      float dq_acc[kDqDims / 8][4];
#pragma unroll
      for (int t = 0; t < kDqDims / 8; ++t)
#pragma unroll
        for (int e = 0; e < 4; ++e) dq_acc[t][e] = 0.0f;
#pragma unroll
      for (int ks = 0; ks < kBc / 16; ++ks) {
        std::uint32_t a[4];
        LoadMatrixX4Trans(a, ds_lane + ks * 16 * L::kDsRowBytes);
#pragma unroll
        for (int dp = 0; dp < kDqDims / 16; ++dp) {
          std::uint32_t b[4];
          LoadMatrixX4Trans(b, ChunkAddress<kSwizzle>(k_t_lane, dim0 * 2 + dp * 32) + ks * 16 * kRowBytes);
          MmaM16N8K16<T>(dq_acc[2 * dp], a, b[0], b[1]);
          MmaM16N8K16<T>(dq_acc[2 * dp + 1], a, b[2], b[3]);
        }
      }
      const int row_a = row0 + m_tile * 16 + g;
      const float scale = params.scale;
#pragma unroll
      for (int t = 0; t < kDqDims / 8; ++t) {
        float* target = params.dq_accumulator + (head_row0 + row_a) * kD + dim0 + t * 8 + 2 * c;
        if (row_a < n) backward_device::AtomicAddPair(target, scale * dq_acc[t][0], scale * dq_acc[t][1]);
        if (row_a + 8 < n) backward_device::AtomicAddPair(target + 8 * kD, scale * dq_acc[t][2], scale * dq_acc[t][3]);
      }
    }
  }

  // dK_j = scale·Σ dSᵀ Q, dV_j = Σ Pᵀ dO, straight from the accumulators (keys past N are not stored).
  const float scale = params.scale;
#pragma unroll
  for (int m = 0; m < kM; ++m)
#pragma unroll
    for (int t = 0; t < kDTiles; ++t) {
      const int dim = t * 8 + 2 * c;
#pragma unroll
      for (int half = 0; half < 2; ++half) {
        const int key = key_a + 16 * m + 8 * half;
        if (key >= n) continue;
        const std::size_t index = (head_row0 + key) * kD + dim;
        *reinterpret_cast<std::uint32_t*>(params.dk + index) =
            PackPair<T>(scale * dk_acc[m][t][2 * half], scale * dk_acc[m][t][2 * half + 1]);
        *reinterpret_cast<std::uint32_t*>(params.dv + index) =
            PackPair<T>(dv_acc[m][t][2 * half], dv_acc[m][t][2 * half + 1]);
      }
    }
}

// ---------------------------------------------------------------------------------------------------------
// The separate dQ pass: Q-outer, a block per (Q tile i of 64 rows, head), warp w owning rows 16w..16w+15; per K/V
// tile j it recomputes S = Q_i K_jᵀ and dP = dO_i V_jᵀ, forms dS in registers and adds dS K_j to dQ_i (the
// accumulators of dS are the A operand, as P̃ in the forward). K_{j+1}, V_{j+1} come by cp.async under tile j.
template <int kD>
struct DqLayout {
  static constexpr int kBr = backward_tiles::kMmaDqBr;
  static constexpr int kBcDq = backward_tiles::kMmaDqBc;
  static constexpr int kRowBytes = kD * 2;
  static constexpr int kQTileBytes = kBr * kRowBytes;
  static constexpr int kKvTileBytes = kBcDq * kRowBytes;
  static constexpr int kQ = 0;
  static constexpr int kDo = kQ + kQTileBytes;
  static constexpr int kK = kDo + kQTileBytes;      // two buffers
  static constexpr int kV = kK + 2 * kKvTileBytes;  // two buffers
  static constexpr int kBytes = kV + 2 * kKvTileBytes;
};

template <typename T, int kD>
__global__ void __launch_bounds__(kThreads, 2) BackwardMmaDqKernel(const BackwardMmaParams<T> params) {
  using L = DqLayout<kD>;
  constexpr int kBr = L::kBr, kBcDq = L::kBcDq, kRowBytes = L::kRowBytes;
  static_assert(kBr == 16 * kWarps, "16 query rows a warp");
  constexpr int kKSteps = kD / 16, kSTiles = kBcDq / 8, kKeySteps = kBcDq / 16, kDTiles = kD / 8;

  extern __shared__ __align__(1024) unsigned char shared[];
  const std::uint32_t base = SharedAddress(shared);
  if (base % 1024 != 0) __trap();
  const int thread = threadIdx.x, warp = thread / 32, lane = thread % 32;
  const int g = lane / 4, c = lane % 4, lane_mod8 = lane % 8;
  const int n = params.n;
  // Causal: the longest rows (the last Q tiles) start first.
  const int q_tile = params.causal ? static_cast<int>(gridDim.x - 1 - blockIdx.x) : static_cast<int>(blockIdx.x);
  const int row0 = q_tile * kBr, warp_row0 = row0 + warp * 16;
  const std::size_t head_row0 = static_cast<std::size_t>(blockIdx.y) * n;
  const T* k_head = params.k + head_row0 * kD;
  const T* v_head = params.v + head_row0 * kD;
  const int last_key = params.causal ? min(n, row0 + kBr) - 1 : n - 1;
  const int kv_tiles = last_key / kBcDq + 1;

  LoadTileAsync<kD, kBr, kThreads, kSwizzle>(base + L::kQ, params.q + (head_row0 + row0) * kD, n - row0, thread);
  LoadTileAsync<kD, kBr, kThreads, kSwizzle>(base + L::kDo, params.dout + (head_row0 + row0) * kD, n - row0, thread);
  const auto load_kv_tile = [&](int j, int buffer) {
    const int col0 = j * kBcDq;
    LoadTileAsync<kD, kBcDq, kThreads, kSwizzle>(base + L::kK + buffer * L::kKvTileBytes,
                                                 k_head + static_cast<std::size_t>(col0) * kD, n - col0, thread);
    LoadTileAsync<kD, kBcDq, kThreads, kSwizzle>(base + L::kV + buffer * L::kKvTileBytes,
                                                 v_head + static_cast<std::size_t>(col0) * kD, n - col0, thread);
  };
  load_kv_tile(0, 0);
  CopyAsyncCommit();

  // The lane's rows g and g+8 of the warp: L·log2 e and D (rows past N: 0, never stored).
  float lse_log2[2], delta[2];
#pragma unroll
  for (int half = 0; half < 2; ++half) {
    const int row = warp_row0 + g + 8 * half;
    lse_log2[half] = row < n ? params.lse[head_row0 + row] * device::kLog2e : 0.0f;
    delta[half] = row < n ? params.delta[head_row0 + row] : 0.0f;
  }
  // Q_i / dO_i as A (rows lane % 16 of the warp, chunk lane / 16); K_j / V_j as B of S / dP (as K_j in the
  // forward); K_j as B of dS K_j, transposed (as V_j in the forward).
  const std::uint32_t q_a_lane =
      base + L::kQ + (warp * 16 + lane % 16) * kRowBytes + LaneChunkBytes<kSwizzle>(lane / 16, lane_mod8);
  const std::uint32_t do_a_lane = q_a_lane + (L::kDo - L::kQ);
  const std::uint32_t k_b_lane =
      base + L::kK + ((lane / 16) * 8 + lane % 8) * kRowBytes + LaneChunkBytes<kSwizzle>((lane / 8) % 2, lane_mod8);
  const std::uint32_t k_t_lane =
      base + L::kK + (lane % 16) * kRowBytes + LaneChunkBytes<kSwizzle>(lane / 16, lane_mod8);
  constexpr std::uint32_t kVMinusK = L::kV - L::kK;

  float dq_acc[kDTiles][4];
#pragma unroll
  for (int t = 0; t < kDTiles; ++t)
#pragma unroll
    for (int e = 0; e < 4; ++e) dq_acc[t][e] = 0.0f;
  const float scale_log2 = params.scale_log2;

  for (int j = 0; j < kv_tiles; ++j) {
    const int buffer = j & 1, col0 = j * kBcDq;
    CopyAsyncWaitAll();
    __syncthreads();  // tile j visible; every warp is done with tile j−1's buffer
    if (j + 1 < kv_tiles) {
      load_kv_tile(j + 1, buffer ^ 1);
      CopyAsyncCommit();
    }
    if (params.causal && col0 > warp_row0 + 15) continue;  // every key after every row of this warp
    const std::uint32_t stage_bytes = buffer * L::kKvTileBytes;

    float s[kSTiles][4], dp[kSTiles][4];
#pragma unroll
    for (int t = 0; t < kSTiles; ++t)
#pragma unroll
      for (int e = 0; e < 4; ++e) s[t][e] = dp[t][e] = 0.0f;
#pragma unroll
    for (int ks = 0; ks < kKSteps; ++ks) {
      std::uint32_t a_q[4], a_do[4];
      LoadMatrixX4(a_q, ChunkAddress<kSwizzle>(q_a_lane, ks * 32));
      LoadMatrixX4(a_do, ChunkAddress<kSwizzle>(do_a_lane, ks * 32));
#pragma unroll
      for (int kp = 0; kp < kSTiles / 2; ++kp) {
        std::uint32_t b[4];
        const std::uint32_t address = ChunkAddress<kSwizzle>(k_b_lane + stage_bytes, ks * 32) + kp * 16 * kRowBytes;
        LoadMatrixX4(b, address);
        MmaM16N8K16<T>(s[2 * kp], a_q, b[0], b[1]);
        MmaM16N8K16<T>(s[2 * kp + 1], a_q, b[2], b[3]);
        LoadMatrixX4(b, address + kVMinusK);
        MmaM16N8K16<T>(dp[2 * kp], a_do, b[0], b[1]);
        MmaM16N8K16<T>(dp[2 * kp + 1], a_do, b[2], b[3]);
      }
    }
    const bool crosses_diagonal = params.causal && col0 + kBcDq - 1 > warp_row0;
#pragma unroll
    for (int t = 0; t < kSTiles; ++t)
#pragma unroll
      for (int e = 0; e < 4; ++e) {
        float p = FastExp2(fmaf(s[t][e], scale_log2, -lse_log2[e / 2]));
        if (crosses_diagonal && col0 + t * 8 + 2 * c + (e & 1) > warp_row0 + g + 8 * (e / 2)) p = 0.0f;
        dp[t][e] = p * (dp[t][e] - delta[e / 2]);  // dS
      }
#pragma unroll
    for (int u = 0; u < kKeySteps; ++u) {
      const std::uint32_t ds_a[4] = {PackPair<T>(dp[2 * u][0], dp[2 * u][1]), PackPair<T>(dp[2 * u][2], dp[2 * u][3]),
                                     PackPair<T>(dp[2 * u + 1][0], dp[2 * u + 1][1]),
                                     PackPair<T>(dp[2 * u + 1][2], dp[2 * u + 1][3])};
#pragma unroll
      for (int dd = 0; dd < kD / 16; ++dd) {
        std::uint32_t b[4];
        LoadMatrixX4Trans(b, ChunkAddress<kSwizzle>(k_t_lane + stage_bytes, dd * 32) + u * 16 * kRowBytes);
        MmaM16N8K16<T>(dq_acc[2 * dd], ds_a, b[0], b[1]);
        MmaM16N8K16<T>(dq_acc[2 * dd + 1], ds_a, b[2], b[3]);
      }
    }
  }

  const float scale = params.scale;
#pragma unroll
  for (int half = 0; half < 2; ++half) {
    const int row = warp_row0 + g + 8 * half;
    if (row >= n) continue;
#pragma unroll
    for (int t = 0; t < kDTiles; ++t)
      *reinterpret_cast<std::uint32_t*>(params.dq + (head_row0 + row) * kD + t * 8 + 2 * c) =
          PackPair<T>(scale * dq_acc[t][2 * half], scale * dq_acc[t][2 * half + 1]);
  }
}

template <typename T, int kD>
cudaError_t DispatchBackwardMma(const BackwardArgs& args, float* delta, float* dq_accumulator) {
  const AttentionShape& shape = args.shape;
  const BackwardMmaParams<T> params{static_cast<const T*>(args.q),
                                    static_cast<const T*>(args.k),
                                    static_cast<const T*>(args.v),
                                    static_cast<const T*>(args.dout),
                                    args.lse,
                                    delta,
                                    dq_accumulator,
                                    static_cast<T*>(args.dq),
                                    static_cast<T*>(args.dk),
                                    static_cast<T*>(args.dv),
                                    shape.n,
                                    shape.scale,
                                    shape.scale * device::kLog2e,
                                    shape.causal};
  const unsigned heads = static_cast<unsigned>(shape.Heads());
  const std::int64_t rows = shape.Heads() * shape.n;
  if (cudaError_t error = backward_device::LaunchRowDot<T>(args.dout, args.o, delta, rows, kD, args.stream);
      error != cudaSuccess)
    return error;
  const dim3 kv_grid(device::CeilDiv(shape.n, KvLayout<kD>::kBc), heads);
  if (Flash2BackwardMmaSeparateDqPass(kD, args.options)) {
    auto* kv_kernel = &BackwardMmaKvKernel<T, kD, false>;
    constexpr int kKvBytes = KvLayout<kD>::kBytesWithoutDs;
    if (cudaError_t error = device::AllowSharedMemory(kv_kernel, kKvBytes); error != cudaSuccess) return error;
    kv_kernel<<<kv_grid, kThreads, kKvBytes, args.stream>>>(params);
    if (cudaError_t error = cudaGetLastError(); error != cudaSuccess) return error;
    auto* dq_kernel = &BackwardMmaDqKernel<T, kD>;
    constexpr int kDqBytes = DqLayout<kD>::kBytes;
    if (cudaError_t error = device::AllowSharedMemory(dq_kernel, kDqBytes); error != cudaSuccess) return error;
    dq_kernel<<<dim3(device::CeilDiv(shape.n, DqLayout<kD>::kBr), heads), kThreads, kDqBytes, args.stream>>>(params);
    return cudaGetLastError();
  }
  const std::int64_t dq_elements = rows * kD;
  if (cudaError_t error = cudaMemsetAsync(dq_accumulator, 0, dq_elements * sizeof(float), args.stream);
      error != cudaSuccess)
    return error;
  auto* kv_kernel = &BackwardMmaKvKernel<T, kD, true>;
  constexpr int kKvBytes = KvLayout<kD>::kBytes;
  if (cudaError_t error = device::AllowSharedMemory(kv_kernel, kKvBytes); error != cudaSuccess) return error;
  kv_kernel<<<kv_grid, kThreads, kKvBytes, args.stream>>>(params);
  if (cudaError_t error = cudaGetLastError(); error != cudaSuccess) return error;
  backward_device::ConvertKernel<T>
      <<<1024, 256, 0, args.stream>>>(dq_accumulator, static_cast<T*>(args.dq), dq_elements);
  return cudaGetLastError();
}

}  // namespace

cudaError_t LaunchFlash2BackwardMma(const BackwardArgs& args) {
  if (const cudaError_t error = CheckBackwardArgs("flash2_bwd_mma", args); error != cudaSuccess) return error;
  if (args.options & ~static_cast<unsigned>(kFlash2BackwardMmaOtherDqStrategy)) return cudaErrorInvalidValue;
  const std::size_t rows = static_cast<std::size_t>(args.shape.Heads()) * static_cast<std::size_t>(args.shape.n);
  auto* delta = static_cast<float*>(args.workspace);
  float* dq_accumulator = delta + (rows + 3) / 4 * 4;  // 16-byte aligned (MmaBackwardWorkspaceBytes)
  const bool half = args.dtype == DType::kFp16;
  switch (args.shape.d) {
    case 64:
      return half ? DispatchBackwardMma<__half, 64>(args, delta, dq_accumulator)
                  : DispatchBackwardMma<__nv_bfloat16, 64>(args, delta, dq_accumulator);
    case 128:
      return half ? DispatchBackwardMma<__half, 128>(args, delta, dq_accumulator)
                  : DispatchBackwardMma<__nv_bfloat16, 128>(args, delta, dq_accumulator);
    default:
      return cudaErrorInvalidValue;
  }
}

}  // namespace flashviz::cuda
