// Ring attention (context parallelism) as the stepper walks it.
//
// When a sequence no longer fits one GPU, each of P devices holds a slice of Q, K and V. The K/V slices travel
// around a ring: at ring step s device p holds the K/V that device (p − s) mod P started with, attends its own
// query rows to it, and merges the result into its running (m, ℓ, O) with the online softmax's rescaling, one
// level up: m_new = max(m, m̃), ℓ_new = e^(m − m_new) ℓ + e^(m̃ − m_new) ℓ̃, O_new = e^(m − m_new) O + e^(m̃ − m_new) Õ,
// where m̃, ℓ̃ and Õ = P̃V are the block's own (P̃ = exp(S − m̃)). Meanwhile it sends that K/V on to device p + 1 and
// receives the next from device p − 1, so communication hides behind compute when a slice is long enough.
// After P steps every device has seen every key and writes O = O/ℓ for its rows.
//
// Slices. The sequence is cut into C chunks of ⌊N/C⌋ or ⌈N/C⌉ rows. Contiguous: C = P, device p holds chunk p.
// With the causal mask that leaves device 0 one block of work and device P − 1 all P, so the zigzag assignment
// cuts C = 2P chunks and gives device p chunks p and 2P − 1 − p: every device then has the same work each step.
//
// The local attention is FlashAttention-2's Q-outer loop over B_r × B_c tiles with the merge fused in: per Q tile
// the running (m, ℓ, O) is read from HBM (after step 0), the tiles of the held K/V stream through SRAM, and the
// state is written back (at the last step O/ℓ and L = m + log ℓ instead). The ledger counts every device's HBM
// bytes where these tiles move, and the interconnect's bytes where the K/V is sent and received (the receive
// writes the K/V into HBM, the send reads it); nothing is computed from a formula. The same contract as the tiled
// stepper (stepper.h): the state after any step is rebuilt with arithmetic, nothing N² is kept.
#pragma once

#include <array>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "kernels/cpu/ledger.h"
#include "kernels/cpu/stepper.h"

namespace flashviz {

inline constexpr int kMaxRingDevices = 64;
// The timeline's cost model: one device's attention rate and one link's bandwidth (one direction). Defaults of the
// order of an H100 running flash2_mma and of NVLink as NCCL's point-to-point reaches it; the GUI and trace take
// others (--ring-tflops, --ring-link-gbps).
inline constexpr double kDefaultRingTflops = 300.0;
inline constexpr double kDefaultRingLinkGbps = 300.0;

enum class RingAssignment : std::uint8_t {
  kContiguous,  // device p: chunk p of P
  kZigzag,      // device p: chunks p and 2P − 1 − p of 2P (load-balanced under the causal mask)
};
std::string_view RingAssignmentName(RingAssignment assignment);  // "contiguous" or "zigzag"

// What was asked for, before the tile sizes are resolved.
struct RingRequest {
  int n = 64;
  int d = 8;
  int devices = 4;  // P
  bool causal = false;
  bool zigzag = false;
  std::optional<int> br, bc;               // the local tiles; from M when absent (as ResolveProblem)
  std::optional<std::int64_t> sram_bytes;  // M
  std::optional<double> scale;             // absent: 1/√d
  double device_tflops = kDefaultRingTflops;
  double link_gbps = kDefaultRingLinkGbps;
};

// How a (Q chunk, K/V chunk) pair meets the causal mask.
enum class ChunkPairKind : std::uint8_t {
  kFull,      // every key precedes every query row (or no mask)
  kDiagonal,  // the same chunk: the mask cuts through it
  kSkipped,   // every key follows every query row: no work
};

struct RingProblem {
  int n = 0;
  int d = 0;
  int devices = 1;  // P
  bool causal = false;
  RingAssignment assignment = RingAssignment::kContiguous;
  double scale = 1.0;
  int br = 0, bc = 0;  // B_r, B_c of each device's local FlashAttention
  std::int64_t sram_bytes = 0;
  double device_tflops = kDefaultRingTflops;
  double link_gbps = kDefaultRingLinkGbps;

  bool zigzag() const { return assignment == RingAssignment::kZigzag; }
  int chunks() const { return zigzag() ? 2 * devices : devices; }  // C
  int ChunkBegin(int c) const { return static_cast<int>(static_cast<std::int64_t>(c) * n / chunks()); }
  int ChunkEnd(int c) const { return ChunkBegin(c + 1); }
  int ChunkRows(int c) const { return ChunkEnd(c) - ChunkBegin(c); }
  // The chunks device p holds, in order: its query rows, and at ring step 0 its K/V.
  int ChunksPerDevice() const { return zigzag() ? 2 : 1; }
  int DeviceChunk(int p, int k) const { return k == 0 ? p : 2 * devices - 1 - p; }
  int DeviceRows(int p) const;
  // Row r of device p's slice (0 … DeviceRows(p) − 1) as a row of the sequence, and back.
  int GlobalRow(int p, int r) const;
  int OwnerOfRow(int global_row) const;
  // The device whose K/V device p holds at ring step s: (p − s) mod P.
  int KvOwner(int p, int s) const { return ((p - s) % devices + devices) % devices; }
  ChunkPairKind PairKind(int q_chunk, int kv_chunk) const;
  bool Masked(int global_row, int global_col) const { return causal && global_col > global_row; }
};

// Why a request cannot be run, or nothing when it can.
std::optional<std::string> RingRequestError(const RingRequest& request);
// Resolves the local tile sizes as ResolveProblem does for N/C rows. Throws InputError when impossible.
RingProblem ResolveRingProblem(const RingRequest& request);
// The same problem on one device (the forward pass in the Q-outer order), for the reference and the comparisons.
AttentionProblem RingSingleDeviceProblem(const RingProblem& problem);

enum class RingPhase : std::uint8_t {
  kAttend,  // every device: S = scale·Q_p K_heldᵀ (masked), m̃ = rowmax S, P̃ = exp(S − m̃), ℓ̃ = rowsum P̃, Õ = P̃V
  kMerge,  // every device: m_new = max(m, m̃), α = e^(m − m_new), β = e^(m̃ − m_new), ℓ = αℓ + βℓ̃, O = αO + βÕ;
           // at the last ring step O/ℓ and L = m + log ℓ are written instead
  kExchange,  // every device: the held K/V → device p + 1, the next ← device p − 1 (not after the last step)
  kDone,
};
inline constexpr int kRingPhaseCount = 4;
std::string_view RingPhaseName(RingPhase phase);  // "attend", "merge", "exchange", "done"

struct RingStepInfo {
  std::int64_t step = 0;
  RingPhase phase = RingPhase::kAttend;
  int ring_step = -1;  // s, −1 on done
  bool operator==(const RingStepInfo&) const = default;
};

// What one device moved over the interconnect, cumulative.
struct RingLink {
  std::int64_t sent_bytes = 0;
  std::int64_t received_bytes = 0;
  bool operator==(const RingLink&) const = default;
};

// The work a device does at one ring step, counted by the same tile walk as the ledger.
struct RingWork {
  std::int64_t score_entries = 0;  // entries of S the local tiles compute (whole tiles, as a kernel does)
  std::int64_t active_tiles = 0;   // (Q tile, K/V tile) pairs computed
  std::int64_t link_bytes = 0;     // bytes the device sends at this ring step (0 at the last)
  double ComputeSeconds(const RingProblem& p) const;  // 4·entries·d FLOPs at device_tflops
  double LinkSeconds(const RingProblem& p) const;     // link_bytes at link_gbps
};

// One device after a step. Numbers are empty when the stepper has no inputs.
struct RingDeviceState {
  int device = 0;
  int kv_owner = -1;  // whose K/V it holds (after an exchange: the one it received)
  int rows = 0;       // its query rows
  int keys = 0;       // the rows of the K/V it holds
  // The block of this ring step (attend and merge): S and P̃ (rows × keys, only with RingStateDetail::kBlocks),
  // m̃, ℓ̃ (rows), Õ (rows × d). Rows whose every key is masked have m̃ = −∞, ℓ̃ = 0.
  std::vector<double> s, p;
  std::vector<double> block_m, block_l, block_o;
  // The merge's factors (merge): α = e^(m − m_new), β = e^(m̃ − m_new) (rows).
  std::vector<double> alpha, beta;
  // The running state after the step (rows; O rows × d, unnormalized, or O/ℓ once written at the last merge).
  std::vector<double> m, l, o;
  bool o_normalized = false;
  Ledger ledger;  // this device's HBM traffic, cumulative
  Ledger delta;   // what this step moved
  RingLink link;  // cumulative
  RingWork work;  // this ring step's (attend and merge; the exchange's link bytes on exchange)
};

struct RingState {
  RingStepInfo info;
  std::vector<RingDeviceState> devices;
  Ledger total;         // every device's HBM traffic summed (occupancy fields: the largest device's)
  RingLink total_link;  // summed over devices
};

enum class RingStateDetail : std::uint8_t { kStats, kBlocks };

class RingStepper {
 public:
  // `inputs` (N × d each of Q, K, V) may be null: the stepper then counts and does no arithmetic. It must outlive
  // the stepper.
  RingStepper(const RingProblem& problem, const AttentionInputs* inputs);

  const RingProblem& problem() const { return problem_; }
  bool has_inputs() const { return inputs_ != nullptr; }
  std::int64_t step_count() const { return 3LL * problem_.devices - 1 + 1; }
  RingStepInfo Info(std::int64_t step) const;
  std::int64_t FirstStepOfRingStep(int s) const { return 3LL * s; }

  // The state after `step`. kBlocks adds S and P̃ of every device's block (N²/P² values each; the GUI's sizes).
  RingState StateAt(std::int64_t step, RingStateDetail detail = RingStateDetail::kStats) const;
  // Every step in order (false stops); returns O (N × d, the sequence's row order) when inputs were given and the
  // walk finished.
  std::vector<double> Walk(const std::function<bool(const RingState&)>& visit) const;
  RingState FinalState() const { return StateAt(step_count() - 1); }

  // Each ring step's work per device (ring steps × devices), from the tile walk.
  std::vector<RingWork> WorkTable() const;

 private:
  struct Running;
  void Advance(Running& run, std::int64_t step, RingStateDetail detail, RingState& state) const;

  RingProblem problem_;
  const AttentionInputs* inputs_;
};

// The timeline of the cost model: each ring step lasts as long as its slowest device's compute or its link,
// whichever is longer (the exchange overlaps the compute; every device waits for its next K/V).
struct RingTimeline {
  std::vector<double> step_begin;    // seconds, ring steps + 1 entries (the last is the end)
  double overlapped_seconds = 0;     // the ring as run: per step max(compute, link), slowest device
  double serial_seconds = 0;         // the same with the exchange after the compute (no overlap)
  double single_device_seconds = 0;  // one device doing all of the work (the same tiles, no link)
};
RingTimeline ComputeRingTimeline(const RingProblem& problem, const std::vector<RingWork>& work);

// The chunk length (rows) above which a step's compute outlasts its exchange, for a non-causal full block:
// 4·c²·d FLOPs at F against 2·c·d·4 bytes at B, so c ≥ 2F/B (elements of 4 bytes).
double RingOverlapChunkRows(const RingProblem& problem);

}  // namespace flashviz
