// Ring attention (context parallelism) on real GPUs: the plain C++ face of kernels/cuda/ring, with no CUDA header,
// so that the command line, the catalogue and the non-GPU tests compile in every build.
//
// P devices each hold a slice of the sequence's rows of Q, K and V ([B][H][rows_p][d] per device). Ring step
// s = 0 … P − 1: device p attends its query rows to the K/V it holds (that of device (p − s) mod P) with a
// FlashAttention-2 kernel that CONTINUES the online softmax from the running (m, ℓ, O) in HBM, while its
// communication stream sends that K/V on to device p + 1 and receives the next from device p − 1. The merge of
// the ring is thus the online softmax itself; the last step writes O/ℓ and L = m + log ℓ. The chunk layout is the
// CPU model's (kernels/cpu/ring.h, RingProblem): C = P chunks (contiguous, device p holds chunk p) or C = 2P
// (zigzag, device p holds chunks p and 2P − 1 − p), chunk c = rows [⌊c·N/C⌋, ⌊(c + 1)·N/C⌋).
//
// Two transports move the K/V: `nccl`, one host thread per GPU with ncclSend/ncclRecv (NCCL is dlopen'ed at run
// time: FLASHVIZ_NCCL_LIBRARY, else libnccl.so.2), and `virtual`, P virtual devices on one GPU with their own
// buffers and streams and cudaMemcpyAsync in place of the NCCL calls, so that everything but NCCL itself is
// tested on one GPU. The layout, budget and parsing functions below are in every build (ring_layout.cpp); the
// measurement exists in CUDA builds (ring_attention.cu).
#pragma once

#include <cmath>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "kernels/cuda/attention_types.h"
#include "kernels/cuda/harness.h"  // MeasureStatus

namespace flashviz::cuda {

inline constexpr int kMaxRingDevicesCuda = 64;

// One ring attention problem as the GPUs run it.
struct RingShape {
  int batch = 1;
  int heads = 32;
  int n = 0;        // N, the whole sequence
  int d = 128;      // 64 or 128
  int devices = 1;  // P
  bool causal = false;
  bool zigzag = false;  // 2P chunks, device p holds p and 2P − 1 − p; else P chunks, device p holds chunk p
  DType dtype = DType::kFp16;
  float scale = 0;  // applied to q·k; 0 means 1/√d

  float Scale() const;
  std::int64_t Heads() const { return static_cast<std::int64_t>(batch) * heads; }  // B·H
  int Chunks() const { return zigzag ? 2 * devices : devices; }                    // C
  // The same cut as RingProblem::ChunkBegin: chunk c starts at ⌊c·N/C⌋.
  int ChunkBegin(int c) const { return static_cast<int>(static_cast<std::int64_t>(c) * n / Chunks()); }
  int ChunkRows(int c) const { return ChunkBegin(c + 1) - ChunkBegin(c); }
  int ChunksPerDevice() const { return zigzag ? 2 : 1; }
  int DeviceChunk(int p, int k) const { return k == 0 ? p : 2 * devices - 1 - p; }
  int DeviceRows(int p) const;  // rows of Q (and of its own K/V) on device p
  int MaxDeviceRows() const;    // the K/V buffers are this long: any device's K/V passes through them
  // Local row r of device p (0 … DeviceRows(p) − 1) as a row of the sequence: its chunks one after the other.
  int GlobalRow(int p, int r) const;
  int OwnerOfRow(int global_row) const;  // the device whose Q holds that row
  int KvOwner(int p, int s) const { return ((p - s) % devices + devices) % devices; }  // whose K/V p holds at step s
};

// Why the GPUs cannot run `shape` ("d = 96: only 64 and 128", "N = 5 is less than the 8 chunks ..."), or nothing.
std::optional<std::string> RingShapeError(const RingShape& shape);

// 4·B·H·N²·d, halved when causal (the convention of the other benches: the masked half is not counted).
double RingFlops(const RingShape& shape);

// What one device allocates (bytes), the sum the per-GPU budget of `bench --ring --budget-gib` is held against.
struct RingDeviceBytes {
  std::int64_t q = 0;           // its Q slice, [B][H][rows_p][d], dtype
  std::int64_t own_kv = 0;      // its own K and V slices (ring step 0 reads them in place and sends them on)
  std::int64_t kv_buffers = 0;  // min(2, P − 1) buffers of K and V of MaxDeviceRows rows (held / next)
  std::int64_t state = 0;       // running O (rows_p × d fp32), m and ℓ (rows_p fp32 each)
  std::int64_t output = 0;      // O (dtype) and L (fp32)
  std::int64_t Total() const { return q + own_kv + kv_buffers + state + output; }
};
RingDeviceBytes RingBytesOfDevice(const RingShape& shape, int p);
std::int64_t RingMaxDeviceBytes(const RingShape& shape);  // the largest device's Total()

enum class RingTransportKind : std::uint8_t { kVirtual, kNccl };
std::string_view RingTransportName(RingTransportKind kind);  // "virtual", "nccl"
std::optional<RingTransportKind> ParseRingTransport(std::string_view text);

// max |O − reference| allowed: the decode harness's 2u (decode_harness.h says why: P̃ rounded to the dtype before
// P̃V while ℓ sums it unrounded, at most u·max|v|; O rounded, at most u): fp16 9.8e-4, bf16 7.8e-3. The running O
// crosses HBM in fp32 between ring steps, so the ring adds no rounding of its own.
double RingTolerance(DType dtype);
// max |L − reference| allowed for the log-sum-exp (fp32 sums of ex2.approx terms): 1e-3 + 1e-5·|L|.
double RingLseTolerance(double reference);

// ---- `flashviz bench --ring`'s rows: one per (N, P), in every build (the scaling arithmetic and the CSV are tested
// without a GPU).
struct RingBenchRow {
  RingShape shape;
  std::string transport, gpu;
  std::int64_t device_bytes = 0;  // RingMaxDeviceBytes
  std::int64_t budget_bytes = 0;  // 0: no budget
  bool fits = true;               // device_bytes ≤ budget_bytes (or no budget); a row that does not fit is not run
  std::string status = "ok";  // "ok", "does not fit: …", "not applicable: …", "validation failed: …", "error: …"
  double ms_median = NAN, ms_min = NAN, tflops_per_gpu = NAN;
  double compute_ms = NAN, exchange_ms = NAN;
  double max_abs_error = NAN, lse_max_error = NAN, tolerance = NAN;
  // Filled by RingFillScaling: speedup = ms(P = 1) / ms(P) at the same N where P = 1 ran; ideal = P; efficiency =
  // per-GPU TFLOP/s over P = 1's at the same N, or (N beyond one GPU's budget) at the largest N that P = 1 ran,
  // which efficiency_base_n names; hidden = the share of the exchange that overlapped the compute,
  // (compute + exchange − ring) / exchange, clamped to [0, 1].
  double speedup = NAN, ideal = NAN, efficiency = NAN, hidden = NAN;
  int efficiency_base_n = 0;
  bool Ok() const { return status == "ok"; }
};
// Rows of one sweep (same dtype, d, B, H, mask and assignment): fills the scaling columns.
void RingFillScaling(std::vector<RingBenchRow>& rows);
std::string RingCsvHeader();
std::string RingCsvLine(const RingBenchRow& row);

// ---- Measurement (CUDA builds: ring_attention.cu).

struct RingMeasureOptions {
  RingTransportKind transport = RingTransportKind::kVirtual;
  int warmup = 2;
  int repeats = 20;
  std::uint64_t seed = 1;     // fresh inputs: the caller changes it for every measurement
  bool validate_all = false;  // tests: every row of every head; bench: sampled rows of the first and last head
  bool time = true;           // false: validate only
  bool flush_l2 = true;       // write 256 MB on every device before every timed run
  bool time_parts = true;     // also time the compute alone and the exchanges alone (one serial run)
};

struct RingMeasurement {
  MeasureStatus status = MeasureStatus::kError;
  std::string reason;
  double ms_median = 0, ms_min = 0;  // the whole ring: every step of every device, common start to last end
  double tflops_per_gpu = 0;         // RingFlops / ms_median / P
  double compute_ms = 0;             // serial run: per ring step the slowest device's kernel, summed over steps
  double exchange_ms = 0;            // serial run: per ring step the slowest device's exchange, summed
  double max_abs_error = 0;          // O over the validated rows
  double lse_max_error = 0;          // L over the same rows
  double tolerance = 0;
  std::int64_t validated_rows = 0;
  bool Ok() const { return status == MeasureStatus::kOk; }
};

// Builds the P devices (NCCL: GPUs 0 … P − 1, one thread each; virtual: all on the current GPU), fills fresh
// inputs, runs the ring once with O and L poisoned and validates it against the float64 reference, then
// (options.time) times it. A failed validation is reported and not timed.
RingMeasurement MeasureRing(const RingShape& shape, const RingMeasureOptions& options);

// CUDA devices visible to this process (0 when none or no driver).
int RingGpuCount();
// Why the NCCL transport cannot be used here ("built without nccl.h", "libnccl.so.2: cannot open ..."), or nothing;
// loads NCCL on the first call. `version` gets "2.28.3" when it loads.
std::optional<std::string> NcclUnavailableReason(std::string* version = nullptr);
// Destroys the NCCL communicators kept between measurements (one set per P); call before the process ends.
void ReleaseRingCommunicators();

}  // namespace flashviz::cuda
