#include "viz/ring_formulas.h"

#include <algorithm>
#include <cmath>

#include "kernels/common/format.h"
#include "viz/widgets.h"

namespace flashviz {
namespace {

// "ring step 2 of 4, step 7 (merge)" or "step 12 (done)".
std::string Where(const Model& m) {
  const RingStepInfo& info = m.ring_state().info;
  const std::string phase(RingPhaseName(info.phase));
  if (info.ring_step < 0) return Sprintf("step %lld (%s)", static_cast<long long>(info.step), phase.c_str());
  return Sprintf("ring step %d of %d, step %lld (%s)", info.ring_step + 1, m.ring_problem().devices,
                 static_cast<long long>(info.step), phase.c_str());
}

const RingDeviceState* Device(const Model& m, int device) {
  const RingState& s = m.ring_state();
  if (device < 0 || device >= static_cast<int>(s.devices.size())) return nullptr;
  return &s.devices[static_cast<std::size_t>(device)];
}

bool BlockCell(const RingDeviceState* d, int r, int c) {
  return d && !d->s.empty() && r >= 0 && r < d->rows && c >= 0 && c < d->keys;
}

bool RowOf(const RingDeviceState* d, const std::vector<double>& v, int r) {
  return d && r >= 0 && r < d->rows && v.size() == static_cast<std::size_t>(d->rows);
}

double Dot(const Model& m, int row, int col) {
  const int d = m.ring_problem().d;
  const float* q = m.ring_inputs().q.data() + static_cast<std::size_t>(row) * d;
  const float* k = m.ring_inputs().k.data() + static_cast<std::size_t>(col) * d;
  double dot = 0;
  for (int e = 0; e < d; ++e) dot += static_cast<double>(q[e]) * k[e];
  return dot;
}

// How device p meets the K/V it holds at ring step s: "full", "diagonal", "skipped", or a mix with zigzag slices.
std::string PairKinds(const RingProblem& p, int device, int s) {
  const int owner = p.KvOwner(device, s);
  int full = 0, diagonal = 0, skipped = 0;
  for (int a = 0; a < p.ChunksPerDevice(); ++a)
    for (int b = 0; b < p.ChunksPerDevice(); ++b) {
      const ChunkPairKind kind = p.PairKind(p.DeviceChunk(device, a), p.DeviceChunk(owner, b));
      (kind == ChunkPairKind::kFull ? full : kind == ChunkPairKind::kDiagonal ? diagonal : skipped)++;
    }
  const int pairs = full + diagonal + skipped;
  if (skipped == pairs) return "skipped (every key comes after its rows)";
  if (full == pairs) return pairs == 1 ? "full" : "all full";
  std::string text;
  for (const auto& [count, name] : {std::pair{full, "full"}, {diagonal, "diagonal"}, {skipped, "skipped"}})
    if (count) text += Sprintf("%s%d %s", text.empty() ? "" : ", ", count, name);
  return text + " chunk pairs";
}

}  // namespace

std::string RingRowName(const RingProblem& p, int device, int r) {
  return Sprintf("row %d", p.GlobalRow(device, r));
}

std::string RingSliceName(const RingProblem& p, int device) {
  std::string text = "rows ";
  for (int k = 0; k < p.ChunksPerDevice(); ++k) {
    const int c = p.DeviceChunk(device, k);
    text += Sprintf("%s%d-%d", k ? ", " : "", p.ChunkBegin(c), p.ChunkEnd(c) - 1);
  }
  return text;
}

Explanation ExplainRingScore(const Model& m, int device, int r, int c) {
  const RingDeviceState* d = Device(m, device);
  if (!BlockCell(d, r, c)) return MissingValue("S", "no block on chip at " + Where(m));
  const RingProblem& p = m.ring_problem();
  const int row = p.GlobalRow(device, r), col = p.GlobalRow(d->kv_owner, c);
  Explanation x = ExplainedValue(d->s[static_cast<std::size_t>(r) * d->keys + c],
                        Sprintf("S[row %d, key %d] on device %d", row, col, device));
  if (p.Masked(row, col)) {
    x.lines.push_back(Sprintf("masked: key %d follows query row %d (causal), so S = −∞ and P~ = 0", col, row));
  } else {
    const double dot = Dot(m, row, col);
    x.lines.push_back(Sprintf("= scale·(q·k) = %s × %s = %s", Num(p.scale).c_str(), Num(dot, 6).c_str(),
                              Num(p.scale * dot, 6).c_str()));
  }
  x.lines.push_back(
      Sprintf("key %d is device %d's, held by device %d at %s", col, d->kv_owner, device, Where(m).c_str()));
  return x;
}

Explanation ExplainRingProbability(const Model& m, int device, int r, int c) {
  const RingDeviceState* d = Device(m, device);
  if (!BlockCell(d, r, c) || d->p.empty()) return MissingValue("P~", "no block on chip at " + Where(m));
  const RingProblem& p = m.ring_problem();
  const int row = p.GlobalRow(device, r), col = p.GlobalRow(d->kv_owner, c);
  const double score = d->s[static_cast<std::size_t>(r) * d->keys + c];
  const double block_max = d->block_m[static_cast<std::size_t>(r)];
  Explanation x = ExplainedValue(d->p[static_cast<std::size_t>(r) * d->keys + c],
                        Sprintf("P~[row %d, key %d] on device %d", row, col, device));
  if (std::isinf(score))
    x.lines.push_back("masked: exp(−∞) = 0");
  else
    x.lines.push_back(Sprintf("= exp(S − m~) = exp(%s − %s) = %s", Num(score, 6).c_str(), Num(block_max, 6).c_str(),
                              Num(std::exp(score - block_max), 6).c_str()));
  x.lines.push_back("m~ is the block's own row maximum: the merge rescales it against the running m");
  return x;
}

Explanation ExplainRingBlockMax(const Model& m, int device, int r) {
  const RingDeviceState* d = Device(m, device);
  if (!RowOf(d, d ? d->block_m : std::vector<double>{}, r)) return MissingValue("m~", "no block on chip at " + Where(m));
  const RingProblem& p = m.ring_problem();
  Explanation x = ExplainedValue(d->block_m[static_cast<std::size_t>(r)],
                        Sprintf("m~[%s] on device %d", RingRowName(p, device, r).c_str(), device));
  if (std::isinf(x.value))
    x.lines.push_back(Sprintf("= −∞: every key device %d holds follows this row (causal)", device));
  else
    x.lines.push_back(Sprintf("= max over the %d keys of device %d's slice (%s) of S = %s", d->keys, d->kv_owner,
                              RingSliceName(p, d->kv_owner).c_str(), Num(x.value, 6).c_str()));
  x.lines.push_back(Where(m));
  return x;
}

Explanation ExplainRingBlockSum(const Model& m, int device, int r) {
  const RingDeviceState* d = Device(m, device);
  if (!RowOf(d, d ? d->block_l : std::vector<double>{}, r)) return MissingValue("ℓ~", "no block on chip at " + Where(m));
  const RingProblem& p = m.ring_problem();
  Explanation x = ExplainedValue(d->block_l[static_cast<std::size_t>(r)],
                        Sprintf("ℓ~[%s] on device %d", RingRowName(p, device, r).c_str(), device));
  x.lines.push_back(Sprintf("= Σ over the held keys of P~ = exp(S − m~) = %s", Num(x.value, 6).c_str()));
  x.lines.push_back(Where(m));
  return x;
}

Explanation ExplainRingAlpha(const Model& m, int device, int r) {
  const RingDeviceState* d = Device(m, device);
  const RingState* before = m.ring_previous();
  if (!RowOf(d, d ? d->alpha : std::vector<double>{}, r) || !before)
    return MissingValue("α", "the merge has not run at " + Where(m));
  const double m_old = before->devices[static_cast<std::size_t>(device)].m[static_cast<std::size_t>(r)];
  const double m_new = d->m[static_cast<std::size_t>(r)];
  Explanation x = ExplainedValue(d->alpha[static_cast<std::size_t>(r)],
                        Sprintf("α[%s] on device %d", RingRowName(m.ring_problem(), device, r).c_str(), device));
  if (std::isinf(m_old))
    x.lines.push_back("= 0: no key was seen before this block (m_old = −∞), there is nothing to rescale");
  else
    x.lines.push_back(Sprintf("= e^(m_old − m_new) = e^(%s − %s) = %s", Num(m_old, 6).c_str(), Num(m_new, 6).c_str(),
                              Num(std::exp(m_old - m_new), 6).c_str()));
  x.lines.push_back("rescales the running ℓ and O to the new maximum (the online softmax, one level up)");
  return x;
}

Explanation ExplainRingBeta(const Model& m, int device, int r) {
  const RingDeviceState* d = Device(m, device);
  if (!RowOf(d, d ? d->beta : std::vector<double>{}, r)) return MissingValue("β", "the merge has not run at " + Where(m));
  const double block_max = d->block_m[static_cast<std::size_t>(r)];
  const double m_new = d->m[static_cast<std::size_t>(r)];
  Explanation x = ExplainedValue(d->beta[static_cast<std::size_t>(r)],
                        Sprintf("β[%s] on device %d", RingRowName(m.ring_problem(), device, r).c_str(), device));
  if (std::isinf(block_max))
    x.lines.push_back("= 0: the block has no unmasked key for this row (m~ = −∞)");
  else
    x.lines.push_back(Sprintf("= e^(m~ − m_new) = e^(%s − %s) = %s", Num(block_max, 6).c_str(), Num(m_new, 6).c_str(),
                              Num(std::exp(block_max - m_new), 6).c_str()));
  x.lines.push_back("rescales the block's ℓ~ and Õ = P~V to the new maximum");
  return x;
}

Explanation ExplainRingRunningMax(const Model& m, int device, int r) {
  const RingDeviceState* d = Device(m, device);
  if (!RowOf(d, d ? d->m : std::vector<double>{}, r)) return MissingValue("m", "no numbers at " + Where(m));
  const RingProblem& p = m.ring_problem();
  Explanation x = ExplainedValue(d->m[static_cast<std::size_t>(r)],
                        Sprintf("m[%s] on device %d", RingRowName(p, device, r).c_str(), device));
  const RingState* before = m.ring_previous();
  if (m.ring_state().info.phase == RingPhase::kMerge && before) {
    const double m_old = before->devices[static_cast<std::size_t>(device)].m[static_cast<std::size_t>(r)];
    x.lines.push_back(Sprintf("= max(m_old, m~) = max(%s, %s) = %s", Num(m_old, 6).c_str(),
                              Num(d->block_m[static_cast<std::size_t>(r)], 6).c_str(), Num(x.value, 6).c_str()));
  } else if (std::isinf(x.value)) {
    x.lines.push_back("= −∞: no key seen yet (the running state starts at m = −∞, ℓ = 0, O = 0)");
  } else {
    x.lines.push_back("the largest score over every key this device has merged so far");
  }
  x.lines.push_back(Where(m));
  return x;
}

Explanation ExplainRingRunningSum(const Model& m, int device, int r) {
  const RingDeviceState* d = Device(m, device);
  if (!RowOf(d, d ? d->l : std::vector<double>{}, r)) return MissingValue("ℓ", "no numbers at " + Where(m));
  const RingProblem& p = m.ring_problem();
  Explanation x = ExplainedValue(d->l[static_cast<std::size_t>(r)],
                        Sprintf("ℓ[%s] on device %d", RingRowName(p, device, r).c_str(), device));
  const RingState* before = m.ring_previous();
  if (m.ring_state().info.phase == RingPhase::kMerge && before) {
    const auto ur = static_cast<std::size_t>(r);
    const double l_old = before->devices[static_cast<std::size_t>(device)].l[ur];
    x.lines.push_back(Sprintf("= α·ℓ_old + β·ℓ~ = %s × %s + %s × %s = %s", Num(d->alpha[ur], 6).c_str(),
                              Num(l_old, 6).c_str(), Num(d->beta[ur], 6).c_str(), Num(d->block_l[ur], 6).c_str(),
                              Num(d->alpha[ur] * l_old + d->beta[ur] * d->block_l[ur], 6).c_str()));
  } else {
    x.lines.push_back("Σ e^(S − m) over every key this device has merged so far");
  }
  x.lines.push_back(Where(m));
  return x;
}

Explanation ExplainRingOutput(const Model& m, int device, int r, int e) {
  const RingDeviceState* d = Device(m, device);
  const RingProblem& p = m.ring_problem();
  if (!d || r < 0 || r >= d->rows || e < 0 || e >= p.d || d->o.empty())
    return MissingValue("O", "no numbers at " + Where(m));
  const int row = p.GlobalRow(device, r);
  const double value = d->o[static_cast<std::size_t>(r) * p.d + e];
  Explanation x = ExplainedValue(value, Sprintf("O[row %d, %d] on device %d", row, e, device));
  if (d->o_normalized) {
    x.lines.push_back(Sprintf("= O/ℓ, written at the last merge; exact (float64): %s",
                              Num(m.ring_reference()[static_cast<std::size_t>(row) * p.d + e], 8).c_str()));
  } else {
    x.lines.push_back("unnormalized: Σ e^(S − m)·V over the keys merged so far (divided by ℓ after the last step)");
  }
  x.lines.push_back(Where(m));
  return x;
}

Explanation ExplainRingDevice(const Model& m, int device) {
  const RingDeviceState* d = Device(m, device);
  if (!d) return MissingValue("device", "no such device");
  const RingProblem& p = m.ring_problem();
  Explanation x = ExplainedValue(device, Sprintf("device %d: %s (%d rows)", device, RingSliceName(p, device).c_str(), d->rows));
  x.lines.push_back(Sprintf("holds the K/V of device %d (%s) after %s", d->kv_owner,
                            RingSliceName(p, d->kv_owner).c_str(), Where(m).c_str()));
  x.lines.push_back(Sprintf("HBM so far: read %s, written %s; links: sent %s, received %s",
                            HumanBytes(static_cast<double>(d->ledger.HbmReadBytes())).c_str(),
                            HumanBytes(static_cast<double>(d->ledger.HbmWriteBytes())).c_str(),
                            HumanBytes(static_cast<double>(d->link.sent_bytes)).c_str(),
                            HumanBytes(static_cast<double>(d->link.received_bytes)).c_str()));
  return x;
}

Explanation ExplainRingStepWork(const Model& m, int ring_step, int device, bool link) {
  const RingProblem& p = m.ring_problem();
  if (ring_step < 0 || ring_step >= p.devices || device < 0 || device >= p.devices)
    return MissingValue("work", "no such ring step or device");
  const RingWork& w = m.ring_work()[static_cast<std::size_t>(ring_step) * p.devices + device];
  if (link) {
    Explanation x = ExplainedValue(w.LinkSeconds(p), Sprintf("ring step %d, device %d → %d: the exchange", ring_step + 1, device,
                                                    (device + 1) % p.devices));
    if (w.link_bytes == 0) {
      x.lines.push_back("nothing: after the last ring step every device has seen every slice");
      return x;
    }
    x.lines.push_back(Sprintf("sends device %d's K and V (%s) at %.4g GB/s: %s, while the compute runs",
                              p.KvOwner(device, ring_step), HumanBytes(static_cast<double>(w.link_bytes)).c_str(),
                              p.link_gbps, HumanSeconds(x.value).c_str()));
    return x;
  }
  Explanation x =
      ExplainedValue(w.ComputeSeconds(p), Sprintf("ring step %d, device %d: attend and merge", ring_step + 1, device));
  x.lines.push_back(Sprintf("%lld scores in %lld tiles (%s) × 4d FLOPs at %.4g TFLOP/s: %s",
                            static_cast<long long>(w.score_entries), static_cast<long long>(w.active_tiles),
                            PairKinds(p, device, ring_step).c_str(), p.device_tflops, HumanSeconds(x.value).c_str()));
  return x;
}

std::string NarrateRing(const Model& m) {
  const RingProblem& p = m.ring_problem();
  const RingState& s = m.ring_state();
  const int step = s.info.ring_step;
  switch (s.info.phase) {
    case RingPhase::kAttend: {
      std::string held, skipping;
      int skips = 0;
      for (int dev = 0; dev < p.devices; ++dev) {
        if (dev < 6) held += Sprintf("%s%d ← %d", dev ? ", " : "device ", dev, p.KvOwner(dev, step));
        if (PairKinds(p, dev, step).starts_with("skipped")) {
          skipping += Sprintf("%s%d", skips ? ", " : "", dev);
          ++skips;
        }
      }
      if (p.devices > 6) held += ", …";
      return Sprintf(
          "Ring step %d of %d: each device attends its rows to the K/V it holds (%s); m~ and ℓ~ are the "
          "block's own.%s",
          step + 1, p.devices, held.c_str(),
          skips ? Sprintf(" Device%s %s skip%s it: every key comes after %s rows.", skips > 1 ? "s" : "",
                          skipping.c_str(), skips > 1 ? "" : "s", skips > 1 ? "their" : "its")
                      .c_str()
                : "");
    }
    case RingPhase::kMerge: {
      const RingDeviceState& d = s.devices[0];
      std::string example;
      if (!d.m.empty() && !d.alpha.empty())
        example = Sprintf(" Device 0, %s: α = %s, β = %s, m = %s.", RingRowName(p, 0, 0).c_str(),
                          Num(d.alpha[0], 4).c_str(), Num(d.beta[0], 4).c_str(), Num(d.m[0], 4).c_str());
      const bool last = step == p.devices - 1;
      return Sprintf(
          "Merge, the online softmax one level up: m_new = max(m, m~), ℓ = αℓ + βℓ~, O = αO + β·P~V with α = "
          "e^(m − m_new), β = e^(m~ − m_new).%s%s",
          example.c_str(), last ? " Every key is seen: O/ℓ is written." : "");
    }
    case RingPhase::kExchange: {
      const RingWork& w = m.ring_work()[static_cast<std::size_t>(step) * p.devices];
      return Sprintf(
          "Exchange: each device sends the K/V it held to the next device and receives the previous device's "
          "(%s a link). It runs during the compute: modelled %s on the link against %s of compute on device 0.",
          HumanBytes(static_cast<double>(w.link_bytes)).c_str(), HumanSeconds(w.LinkSeconds(p)).c_str(),
          HumanSeconds(w.ComputeSeconds(p)).c_str());
    }
    case RingPhase::kDone: {
      double worst = 0;
      const std::vector<double>& ref = m.ring_reference();
      const std::vector<double>& out = m.ring_output();
      for (std::size_t k = 0; k < std::min(ref.size(), out.size()); ++k)
        worst = std::max(worst, std::abs(ref[k] - out[k]));
      return Sprintf(
          "Done: after %d ring steps every device has seen all %d keys and holds O = O/ℓ for its rows; max |O − "
          "exact| = %s. %s moved over the links in all.",
          p.devices, p.n, Num(worst, 2).c_str(), HumanBytes(static_cast<double>(s.total_link.sent_bytes)).c_str());
    }
  }
  return {};
}

}  // namespace flashviz
