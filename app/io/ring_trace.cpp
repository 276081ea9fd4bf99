#include "app/io/ring_trace.h"

#include <algorithm>

#include "kernels/common/format.h"

namespace flashviz {
namespace {

Json Index(int value) {
  return value >= 0 ? Json(value) : Json(nullptr);
}

// The row ranges [begin, end) of device p's chunks in the sequence.
Json ChunkRanges(const RingProblem& p, int device) {
  Json ranges = Json::array();
  for (int k = 0; k < p.ChunksPerDevice(); ++k) {
    const int c = p.DeviceChunk(device, k);
    ranges.push_back({p.ChunkBegin(c), p.ChunkEnd(c)});
  }
  return ranges;
}

// A per-row vector of every device, gathered into the sequence's row order (null where a device has none).
Json SequenceOrder(const RingProblem& p, const RingState& state, std::vector<double> RingDeviceState::*field) {
  std::vector<double> out(static_cast<std::size_t>(p.n));
  for (const RingDeviceState& d : state.devices) {
    const std::vector<double>& values = d.*field;
    if (values.size() != static_cast<std::size_t>(d.rows)) return Json(nullptr);
    for (int r = 0; r < d.rows; ++r)
      out[static_cast<std::size_t>(p.GlobalRow(d.device, r))] = values[static_cast<std::size_t>(r)];
  }
  return JsonNumbers(out);
}

}  // namespace

std::string RingTraceConfigLine(const RingProblem& p, std::uint64_t seed) {
  Json devices = Json::array();
  for (int dev = 0; dev < p.devices; ++dev) devices.push_back(ChunkRanges(p, dev));
  Json config = {{"mode", "ring"},
                 {"n", p.n},
                 {"d", p.d},
                 {"devices", p.devices},
                 {"causal", p.causal},
                 {"assignment", std::string(RingAssignmentName(p.assignment))},
                 {"chunks", p.chunks()},
                 {"device_rows", devices},
                 {"br", p.br},
                 {"bc", p.bc},
                 {"scale", p.scale},
                 {"sram_bytes", p.sram_bytes},
                 {"device_tflops", p.device_tflops},
                 {"link_gbps", p.link_gbps},
                 {"seed", seed}};
  return Json{{"config", config}}.dump() + "\n";
}

std::string RingTraceStepLine(const RingProblem& p, const RingState& state) {
  const RingStepInfo& info = state.info;
  Json line = {{"step", info.step},
               {"phase", std::string(RingPhaseName(info.phase))},
               {"ring_step", Index(info.ring_step)},
               {"i", nullptr},
               {"j", nullptr}};
  line["m"] = SequenceOrder(p, state, &RingDeviceState::m);
  line["l"] = SequenceOrder(p, state, &RingDeviceState::l);
  if (info.phase == RingPhase::kAttend) {
    line["block_m"] = SequenceOrder(p, state, &RingDeviceState::block_m);
    line["block_l"] = SequenceOrder(p, state, &RingDeviceState::block_l);
  }
  if (info.phase == RingPhase::kMerge) {
    line["alpha"] = SequenceOrder(p, state, &RingDeviceState::alpha);
    line["beta"] = SequenceOrder(p, state, &RingDeviceState::beta);
  }
  line["hbm_read_bytes"] = state.total.HbmReadBytes();
  line["hbm_write_bytes"] = state.total.HbmWriteBytes();
  line["sram_bytes"] = state.total.sram_bytes;
  line["link_bytes"] = state.total_link.sent_bytes;
  Json devices = Json::array();
  for (const RingDeviceState& d : state.devices) {
    devices.push_back({{"device", d.device},
                       {"kv_owner", d.kv_owner},
                       {"kv_rows", ChunkRanges(p, d.kv_owner)},
                       {"hbm_read_bytes", d.ledger.HbmReadBytes()},
                       {"hbm_write_bytes", d.ledger.HbmWriteBytes()},
                       {"sram_bytes", d.ledger.sram_bytes},
                       {"link_sent_bytes", d.link.sent_bytes},
                       {"link_received_bytes", d.link.received_bytes},
                       {"score_entries", d.work.score_entries}});
  }
  line["devices"] = devices;
  return line.dump() + "\n";
}

std::vector<double> WriteRingTrace(const RingStepper& stepper, std::uint64_t seed, const TraceLineSink& out,
                                   RingState* final_state) {
  const RingProblem& p = stepper.problem();
  out(RingTraceConfigLine(p, seed), -1);
  return stepper.Walk([&](const RingState& state) {
    out(RingTraceStepLine(p, state), state.info.step);
    if (final_state && state.info.phase == RingPhase::kDone) *final_state = state;
    return true;
  });
}

std::string RingTraceSummary(const RingStepper& stepper, const RingState& final_state) {
  const RingProblem& p = stepper.problem();
  std::string text =
      Sprintf("ring: N = %d, d = %d, P = %d devices, %s%s (%d chunks of %d-%d rows), local tiles B_r = %d, B_c = %d\n",
              p.n, p.d, p.devices, std::string(RingAssignmentName(p.assignment)).c_str(), p.causal ? ", causal" : "",
              p.chunks(), p.n / p.chunks(), (p.n + p.chunks() - 1) / p.chunks(), p.br, p.bc);
  const std::vector<RingWork> work = stepper.WorkTable();
  text += "device  rows  hbm_read_bytes  hbm_write_bytes  link_sent_bytes  link_received_bytes  score_entries\n";
  for (const RingDeviceState& d : final_state.devices) {
    std::int64_t entries = 0;
    for (int s = 0; s < p.devices; ++s)
      entries += work[static_cast<std::size_t>(s) * p.devices + d.device].score_entries;
    text += Sprintf("%6d %5d %15lld %16lld %16lld %20lld %14lld\n", d.device, d.rows,
                    static_cast<long long>(d.ledger.HbmReadBytes()), static_cast<long long>(d.ledger.HbmWriteBytes()),
                    static_cast<long long>(d.link.sent_bytes), static_cast<long long>(d.link.received_bytes),
                    static_cast<long long>(entries));
  }
  text += Sprintf("hbm_read_bytes %lld\nhbm_write_bytes %lld\nlink_bytes %lld\n",
                  static_cast<long long>(final_state.total.HbmReadBytes()),
                  static_cast<long long>(final_state.total.HbmWriteBytes()),
                  static_cast<long long>(final_state.total_link.sent_bytes));
  const Ledger one = Stepper(RingSingleDeviceProblem(p), nullptr).FinalLedger();
  text += Sprintf(
      "one device (FlashAttention-2, the same tiles): hbm_read_bytes %lld, hbm_write_bytes %lld; the ring moves "
      "%.3gx its HBM bytes in all, %.3gx on its busiest device\n",
      static_cast<long long>(one.HbmReadBytes()), static_cast<long long>(one.HbmWriteBytes()),
      static_cast<double>(final_state.total.HbmBytes()) /
          static_cast<double>(std::max<std::int64_t>(1, one.HbmBytes())),
      [&] {
        std::int64_t most = 0;
        for (const RingDeviceState& d : final_state.devices) most = std::max(most, d.ledger.HbmBytes());
        return static_cast<double>(most) / static_cast<double>(std::max<std::int64_t>(1, one.HbmBytes()));
      }());
  const RingTimeline t = ComputeRingTimeline(p, work);
  text += Sprintf(
      "cost model (%.4g TFLOP/s a device, %.4g GB/s a link, 4-byte elements): ring %s with the exchange "
      "overlapped, %s without; one device %s: %.3gx on %d devices\n",
      p.device_tflops, p.link_gbps, HumanSeconds(t.overlapped_seconds).c_str(), HumanSeconds(t.serial_seconds).c_str(),
      HumanSeconds(t.single_device_seconds).c_str(), t.single_device_seconds / std::max(1e-300, t.overlapped_seconds),
      p.devices);
  text += Sprintf("the exchange hides behind the compute from about %.0f rows a chunk (2F/B, no mask)\n",
                  RingOverlapChunkRows(p));
  return text;
}

}  // namespace flashviz
