#include "kernels/cpu/ring.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <stdexcept>

#include "kernels/common/format.h"
#include "kernels/common/input_error.h"

namespace flashviz {
namespace {

constexpr double kNegInf = -std::numeric_limits<double>::infinity();

// One device's tile walk at one ring step, as its kernel runs it: per Q tile of its chunks, the running state read
// (after step 0), the K/V tiles of the held chunks that the mask leaves any work in, the state written back (or
// O/ℓ and L at the last step). A Q tile with no K/V tile to meet at this step moves nothing, except at the last
// step, where it still turns its running state into O. The one place where ring bytes and work are counted.
struct StepCounts {
  Ledger attend, merge;  // the attend phase moves Q, K, V; the merge the running state
  RingWork work;
};

StepCounts CountRingStep(const RingProblem& p, int device, int s) {
  StepCounts c;
  const int owner = p.KvOwner(device, s);
  const bool first = s == 0, last = s == p.devices - 1;
  std::int64_t peak_floats = 0;
  for (int qk = 0; qk < p.ChunksPerDevice(); ++qk) {
    const int q_chunk = p.DeviceChunk(device, qk);
    for (int row0 = p.ChunkBegin(q_chunk); row0 < p.ChunkEnd(q_chunk); row0 += p.br) {
      const int rows = std::min(p.br, p.ChunkEnd(q_chunk) - row0);
      const int last_row = row0 + rows - 1;
      bool any = false;
      for (int kk = 0; kk < p.ChunksPerDevice(); ++kk) {
        const int kv_chunk = p.DeviceChunk(owner, kk);
        if (p.PairKind(q_chunk, kv_chunk) == ChunkPairKind::kSkipped) continue;
        for (int col0 = p.ChunkBegin(kv_chunk); col0 < p.ChunkEnd(kv_chunk); col0 += p.bc) {
          if (p.causal && col0 > last_row) break;  // every key of this tile and the next follows every row
          const int cols = std::min(p.bc, p.ChunkEnd(kv_chunk) - col0);
          if (!any) c.attend.ReadHbm(HbmTensor::kQ, static_cast<std::int64_t>(rows) * p.d);
          any = true;
          c.attend.ReadHbm(HbmTensor::kK, static_cast<std::int64_t>(cols) * p.d);
          c.attend.ReadHbm(HbmTensor::kV, static_cast<std::int64_t>(cols) * p.d);
          // S = Q_i K_jᵀ reads Q_i and K_j; P̃ V_j reads S and V_j; they write S and O_i's update.
          c.attend.ComputeReadsSram(static_cast<std::int64_t>(rows + 2 * cols) * p.d +
                                    static_cast<std::int64_t>(rows) * cols);
          c.attend.ComputeWritesSram(static_cast<std::int64_t>(rows) * cols + static_cast<std::int64_t>(rows) * p.d);
          c.work.score_entries += static_cast<std::int64_t>(rows) * cols;
          ++c.work.active_tiles;
          // Q_i, K_j, V_j, S_ij, O_i and m_i, ℓ_i on chip at once.
          peak_floats = std::max(peak_floats, static_cast<std::int64_t>(2 * rows + 2 * cols) * p.d +
                                                  static_cast<std::int64_t>(rows) * cols + 2 * rows);
        }
      }
      if (!any && !last) continue;
      if (!first) {  // the running state of the rows, written at an earlier step
        c.merge.ReadHbm(HbmTensor::kO, static_cast<std::int64_t>(rows) * p.d);
        c.merge.ReadHbm(HbmTensor::kM, rows);
        c.merge.ReadHbm(HbmTensor::kL, rows);
      }
      c.merge.WriteHbm(HbmTensor::kO, static_cast<std::int64_t>(rows) * p.d);
      if (last) {
        c.merge.WriteHbm(HbmTensor::kLse, rows);
      } else {
        c.merge.WriteHbm(HbmTensor::kM, rows);
        c.merge.WriteHbm(HbmTensor::kL, rows);
      }
      peak_floats = std::max(peak_floats, static_cast<std::int64_t>(rows) * p.d + 2 * rows);
    }
  }
  c.attend.SetSramOccupancy(4 * peak_floats);
  c.merge.SetSramOccupancy(4 * peak_floats);
  if (!last) {
    for (int kk = 0; kk < p.ChunksPerDevice(); ++kk)
      c.work.link_bytes += 8LL * p.ChunkRows(p.DeviceChunk(owner, kk)) * p.d;  // K and V, 4-byte elements
  }
  return c;
}

// Each device's local FlashAttention-2: its tiles come from M as a single device's would.
ProblemRequest LocalTilesRequest(const RingRequest& r) {
  ProblemRequest local;
  local.n = r.n;
  local.d = r.d;
  local.br = r.br;
  local.bc = r.bc;
  local.sram_bytes = r.sram_bytes;
  local.scale = r.scale;
  local.order = LoopOrder::kQOuter;
  return local;
}

// Adds `delta`'s traffic to `ledger` and takes its occupancy.
void Apply(Ledger& ledger, const Ledger& delta) {
  ledger = LedgerSum(ledger, delta);
  ledger.SetSramOccupancy(delta.sram_bytes);
}

}  // namespace

std::string_view RingAssignmentName(RingAssignment assignment) {
  return assignment == RingAssignment::kZigzag ? "zigzag" : "contiguous";
}

std::string_view RingPhaseName(RingPhase phase) {
  static constexpr std::string_view kNames[kRingPhaseCount] = {"attend", "merge", "exchange", "done"};
  return kNames[static_cast<int>(phase)];
}

int RingProblem::DeviceRows(int p) const {
  int rows = 0;
  for (int k = 0; k < ChunksPerDevice(); ++k) rows += ChunkRows(DeviceChunk(p, k));
  return rows;
}

int RingProblem::GlobalRow(int p, int r) const {
  const int first = ChunkRows(DeviceChunk(p, 0));
  return r < first ? ChunkBegin(DeviceChunk(p, 0)) + r : ChunkBegin(DeviceChunk(p, 1)) + (r - first);
}

int RingProblem::OwnerOfRow(int global_row) const {
  // ChunkBegin is monotonic: the last chunk whose first row is at or before this one.
  int lo = 0, hi = chunks() - 1;
  while (lo < hi) {
    const int mid = (lo + hi + 1) / 2;
    if (ChunkBegin(mid) <= global_row)
      lo = mid;
    else
      hi = mid - 1;
  }
  return lo < devices ? lo : 2 * devices - 1 - lo;
}

ChunkPairKind RingProblem::PairKind(int q_chunk, int kv_chunk) const {
  if (!causal || kv_chunk < q_chunk) return ChunkPairKind::kFull;
  return kv_chunk == q_chunk ? ChunkPairKind::kDiagonal : ChunkPairKind::kSkipped;
}

double RingWork::ComputeSeconds(const RingProblem& p) const {
  return 4.0 * static_cast<double>(score_entries) * p.d / (p.device_tflops * 1e12);
}

double RingWork::LinkSeconds(const RingProblem& p) const {
  return static_cast<double>(link_bytes) / (p.link_gbps * 1e9);
}

std::optional<std::string> RingRequestError(const RingRequest& r) {
  if (r.devices < 2 || r.devices > kMaxRingDevices)
    return Sprintf("--ring must be in 2 … %d devices (got %d): a ring of one device is FlashAttention itself",
                   kMaxRingDevices, r.devices);
  const int chunks = r.zigzag ? 2 * r.devices : r.devices;
  if (r.n < chunks || r.n > kMaxSequenceLength)
    return Sprintf("--n must be in %d … %d for %d devices%s (got %d): every chunk needs a row", chunks,
                   kMaxSequenceLength, r.devices, r.zigzag ? " with --zigzag (2P chunks)" : "", r.n);
  if (!std::isfinite(r.device_tflops) || r.device_tflops <= 0)
    return Sprintf("--ring-tflops must be a positive number (got %g)", r.device_tflops);
  if (!std::isfinite(r.link_gbps) || r.link_gbps <= 0)
    return Sprintf("--ring-link-gbps must be a positive number (got %g)", r.link_gbps);
  return ProblemRequestError(LocalTilesRequest(r));
}

RingProblem ResolveRingProblem(const RingRequest& r) {
  if (auto error = RingRequestError(r)) throw InputError(*error);
  const AttentionProblem tiles = ResolveProblem(LocalTilesRequest(r));
  RingProblem p;
  p.n = r.n;
  p.d = r.d;
  p.devices = r.devices;
  p.causal = r.causal;
  p.assignment = r.zigzag ? RingAssignment::kZigzag : RingAssignment::kContiguous;
  p.scale = tiles.scale;
  p.br = tiles.br;
  p.bc = tiles.bc;
  p.sram_bytes = tiles.sram_bytes;
  p.device_tflops = r.device_tflops;
  p.link_gbps = r.link_gbps;
  return p;
}

AttentionProblem RingSingleDeviceProblem(const RingProblem& r) {
  AttentionProblem p;
  p.n = r.n;
  p.d = r.d;
  p.br = r.br;
  p.bc = r.bc;
  p.order = LoopOrder::kQOuter;
  p.scale = r.scale;
  p.causal = r.causal;
  p.sram_bytes = r.sram_bytes;
  return p;
}

RingStepper::RingStepper(const RingProblem& problem, const AttentionInputs* inputs)
    : problem_(problem), inputs_(inputs) {
  if (!inputs) return;
  const std::size_t values = static_cast<std::size_t>(problem.n) * problem.d;
  if (inputs->q.size() != values || inputs->k.size() != values || inputs->v.size() != values)
    throw std::invalid_argument("RingStepper: the inputs do not match the problem's N and d");
}

RingStepInfo RingStepper::Info(std::int64_t step) const {
  if (step < 0 || step >= step_count()) throw std::out_of_range("RingStepper::Info: no such step");
  RingStepInfo info;
  info.step = step;
  if (step == step_count() - 1) {
    info.phase = RingPhase::kDone;
    return info;
  }
  info.ring_step = static_cast<int>(step / 3);
  info.phase = static_cast<RingPhase>(step % 3);
  return info;
}

// Every device's running state and cumulative counters during a replay.
struct RingStepper::Running {
  std::vector<RingDeviceState> devices;
  std::vector<StepCounts> counts;  // the current ring step's, per device
};

void RingStepper::Advance(Running& run, std::int64_t step, RingStateDetail detail, RingState& state) const {
  const RingProblem& p = problem_;
  const RingStepInfo info = Info(step);
  const int s = info.ring_step;
  if (info.phase == RingPhase::kAttend) {
    run.counts.clear();
    for (int dev = 0; dev < p.devices; ++dev) run.counts.push_back(CountRingStep(p, dev, s));
  }
  for (int dev = 0; dev < p.devices; ++dev) {
    RingDeviceState& d = run.devices[static_cast<std::size_t>(dev)];
    const Ledger before = d.ledger;
    switch (info.phase) {
      case RingPhase::kAttend: {
        const StepCounts& c = run.counts[static_cast<std::size_t>(dev)];
        Apply(d.ledger, c.attend);
        d.work = c.work;
        d.work.link_bytes = 0;
        d.kv_owner = p.KvOwner(dev, s);
        d.keys = p.DeviceRows(d.kv_owner);
        d.alpha.clear();
        d.beta.clear();
        d.s.clear();
        d.p.clear();
        if (!inputs_) break;
        // The block alone: S over the held keys (masked entries −∞), its row max, P̃, row sum and P̃V.
        const int rows = d.rows, keys = d.keys, dim = p.d;
        d.block_m.assign(static_cast<std::size_t>(rows), kNegInf);
        d.block_l.assign(static_cast<std::size_t>(rows), 0.0);
        d.block_o.assign(static_cast<std::size_t>(rows) * dim, 0.0);
        std::vector<double> srow(static_cast<std::size_t>(keys));
        if (detail == RingStateDetail::kBlocks) {
          d.s.assign(static_cast<std::size_t>(rows) * keys, kNegInf);
          d.p.assign(static_cast<std::size_t>(rows) * keys, 0.0);
        }
        for (int r = 0; r < rows; ++r) {
          const int row = p.GlobalRow(dev, r);
          const float* q = inputs_->q.data() + static_cast<std::size_t>(row) * dim;
          double mx = kNegInf;
          for (int c = 0; c < keys; ++c) {
            const int col = p.GlobalRow(d.kv_owner, c);
            double v = kNegInf;
            if (!p.Masked(row, col)) {
              const float* k = inputs_->k.data() + static_cast<std::size_t>(col) * dim;
              double dot = 0;
              for (int t = 0; t < dim; ++t) dot += static_cast<double>(q[t]) * k[t];
              v = p.scale * dot;
              mx = std::max(mx, v);
            }
            srow[static_cast<std::size_t>(c)] = v;
          }
          d.block_m[static_cast<std::size_t>(r)] = mx;
          if (mx == kNegInf) {
            if (!d.s.empty()) std::copy(srow.begin(), srow.end(), d.s.begin() + static_cast<std::ptrdiff_t>(r) * keys);
            continue;
          }
          double l = 0;
          double* o = d.block_o.data() + static_cast<std::size_t>(r) * dim;
          for (int c = 0; c < keys; ++c) {
            const double sc = srow[static_cast<std::size_t>(c)];
            const double e = sc == kNegInf ? 0.0 : std::exp(sc - mx);
            if (!d.s.empty()) {
              d.s[static_cast<std::size_t>(r) * keys + c] = sc;
              d.p[static_cast<std::size_t>(r) * keys + c] = e;
            }
            if (e == 0.0) continue;
            l += e;
            const float* v = inputs_->v.data() + static_cast<std::size_t>(p.GlobalRow(d.kv_owner, c)) * dim;
            for (int t = 0; t < dim; ++t) o[t] += e * v[t];
          }
          d.block_l[static_cast<std::size_t>(r)] = l;
        }
        break;
      }
      case RingPhase::kMerge: {
        const StepCounts& c = run.counts[static_cast<std::size_t>(dev)];
        Apply(d.ledger, c.merge);
        d.work = c.work;
        d.work.link_bytes = 0;
        if (!inputs_) break;
        const int rows = d.rows, dim = p.d;
        d.alpha.assign(static_cast<std::size_t>(rows), 0.0);
        d.beta.assign(static_cast<std::size_t>(rows), 0.0);
        for (int r = 0; r < rows; ++r) {
          const auto ur = static_cast<std::size_t>(r);
          const double m_new = std::max(d.m[ur], d.block_m[ur]);
          // A row with no unmasked key yet keeps m = −∞, ℓ = 0, O = 0: nothing to rescale.
          const double a = d.m[ur] == kNegInf ? 0.0 : std::exp(d.m[ur] - m_new);
          const double b = d.block_m[ur] == kNegInf ? 0.0 : std::exp(d.block_m[ur] - m_new);
          d.alpha[ur] = a;
          d.beta[ur] = b;
          d.m[ur] = m_new;
          d.l[ur] = a * d.l[ur] + b * d.block_l[ur];
          for (int t = 0; t < dim; ++t) {
            double& o = d.o[ur * dim + t];
            o = a * o + b * d.block_o[ur * dim + t];
          }
        }
        if (s == p.devices - 1) {  // every key seen: O = O/ℓ
          for (int r = 0; r < rows; ++r)
            for (int t = 0; t < dim; ++t)
              d.o[static_cast<std::size_t>(r) * dim + t] /= d.l[static_cast<std::size_t>(r)];
          d.o_normalized = true;
        }
        break;
      }
      case RingPhase::kExchange: {
        // The held K/V is read from HBM and sent to device p + 1; the next arrives from p − 1 and is written.
        Ledger moved;
        const int owner = p.KvOwner(dev, s), next_owner = p.KvOwner(dev, s + 1);
        for (int k = 0; k < p.ChunksPerDevice(); ++k) {
          const std::int64_t sent = static_cast<std::int64_t>(p.ChunkRows(p.DeviceChunk(owner, k))) * p.d;
          const std::int64_t received = static_cast<std::int64_t>(p.ChunkRows(p.DeviceChunk(next_owner, k))) * p.d;
          moved.ReadHbm(HbmTensor::kK, sent);
          moved.ReadHbm(HbmTensor::kV, sent);
          moved.WriteHbm(HbmTensor::kK, received);
          moved.WriteHbm(HbmTensor::kV, received);
          d.link.sent_bytes += 8 * sent;
          d.link.received_bytes += 8 * received;
        }
        Apply(d.ledger, moved);
        d.work = RingWork{};
        d.work.link_bytes = run.counts[static_cast<std::size_t>(dev)].work.link_bytes;
        d.kv_owner = next_owner;
        d.keys = p.DeviceRows(next_owner);
        d.s.clear();
        d.p.clear();
        d.block_m.clear();
        d.block_l.clear();
        d.block_o.clear();
        d.alpha.clear();
        d.beta.clear();
        break;
      }
      case RingPhase::kDone: {
        Ledger idle;
        Apply(d.ledger, idle);  // nothing on chip any more
        d.work = RingWork{};
        d.s.clear();
        d.p.clear();
        d.block_m.clear();
        d.block_l.clear();
        d.block_o.clear();
        d.alpha.clear();
        d.beta.clear();
        break;
      }
    }
    d.delta = LedgerDelta(before, d.ledger);
  }
  state.info = info;
  state.devices = run.devices;
  state.total = Ledger{};
  state.total_link = RingLink{};
  for (const RingDeviceState& d : run.devices) {
    state.total = LedgerSum(state.total, d.ledger);
    state.total_link.sent_bytes += d.link.sent_bytes;
    state.total_link.received_bytes += d.link.received_bytes;
  }
}

namespace {

RingDeviceState InitialDevice(const RingProblem& p, int dev, bool numbers) {
  RingDeviceState d;
  d.device = dev;
  d.rows = p.DeviceRows(dev);
  d.kv_owner = dev;
  d.keys = d.rows;
  if (numbers) {
    d.m.assign(static_cast<std::size_t>(d.rows), kNegInf);
    d.l.assign(static_cast<std::size_t>(d.rows), 0.0);
    d.o.assign(static_cast<std::size_t>(d.rows) * p.d, 0.0);
  }
  return d;
}

}  // namespace

RingState RingStepper::StateAt(std::int64_t step, RingStateDetail detail) const {
  if (step < 0 || step >= step_count()) throw std::out_of_range("RingStepper::StateAt: no such step");
  Running run;
  for (int dev = 0; dev < problem_.devices; ++dev) run.devices.push_back(InitialDevice(problem_, dev, inputs_));
  RingState state;
  // S and P̃ are kept only for the step asked for; earlier blocks need their statistics alone.
  for (std::int64_t t = 0; t <= step; ++t) {
    const bool blocks = detail == RingStateDetail::kBlocks && (t == step || (t + 1 == step && t % 3 == 0));
    Advance(run, t, blocks ? RingStateDetail::kBlocks : RingStateDetail::kStats, state);
  }
  return state;
}

std::vector<double> RingStepper::Walk(const std::function<bool(const RingState&)>& visit) const {
  Running run;
  for (int dev = 0; dev < problem_.devices; ++dev) run.devices.push_back(InitialDevice(problem_, dev, inputs_));
  RingState state;
  for (std::int64_t t = 0; t < step_count(); ++t) {
    Advance(run, t, RingStateDetail::kStats, state);
    if (!visit(state)) return {};
  }
  if (!inputs_) return {};
  std::vector<double> o(static_cast<std::size_t>(problem_.n) * problem_.d);
  for (const RingDeviceState& d : run.devices)
    for (int r = 0; r < d.rows; ++r)
      std::copy_n(d.o.begin() + static_cast<std::ptrdiff_t>(r) * problem_.d, problem_.d,
                  o.begin() + static_cast<std::ptrdiff_t>(problem_.GlobalRow(d.device, r)) * problem_.d);
  return o;
}

std::vector<RingWork> RingStepper::WorkTable() const {
  std::vector<RingWork> table;
  for (int s = 0; s < problem_.devices; ++s)
    for (int dev = 0; dev < problem_.devices; ++dev) table.push_back(CountRingStep(problem_, dev, s).work);
  return table;
}

RingTimeline ComputeRingTimeline(const RingProblem& p, const std::vector<RingWork>& work) {
  if (work.size() != static_cast<std::size_t>(p.devices) * p.devices)
    throw std::invalid_argument("ComputeRingTimeline: the work table is not ring steps × devices");
  RingTimeline t;
  t.step_begin.push_back(0);
  for (int s = 0; s < p.devices; ++s) {
    double overlapped = 0, serial = 0;
    for (int dev = 0; dev < p.devices; ++dev) {
      const RingWork& w = work[static_cast<std::size_t>(s) * p.devices + dev];
      overlapped = std::max(overlapped, std::max(w.ComputeSeconds(p), w.LinkSeconds(p)));
      serial = std::max(serial, w.ComputeSeconds(p) + w.LinkSeconds(p));
      t.single_device_seconds += w.ComputeSeconds(p);
    }
    t.overlapped_seconds += overlapped;
    t.serial_seconds += serial;
    t.step_begin.push_back(t.overlapped_seconds);
  }
  return t;
}

double RingOverlapChunkRows(const RingProblem& p) {
  return 2.0 * p.device_tflops * 1e12 / (p.link_gbps * 1e9);
}

}  // namespace flashviz
