// The ring attention model (kernels/cpu/ring.h): its final O, m and ℓ against the float64 reference; the slices of
// both assignments; its ledger and interconnect bytes against closed forms; the causal work per device (balanced by
// the zigzag assignment); StateAt against the walk at every step; the cost model's timeline; the request errors.
#include "kernels/cpu/ring.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <set>

#include "kernels/common/format.h"
#include "kernels/common/input_error.h"
#include "kernels/cpu/reference.h"

namespace flashviz {
namespace {

RingRequest Request(int n, int d, int devices, bool causal, bool zigzag, std::optional<int> br = std::nullopt,
                    std::optional<int> bc = std::nullopt) {
  RingRequest r;
  r.n = n;
  r.d = d;
  r.devices = devices;
  r.causal = causal;
  r.zigzag = zigzag;
  r.br = br;
  r.bc = bc;
  return r;
}

struct Case {
  int n, d, devices;
  bool causal, zigzag;
  std::optional<int> br, bc;
};

const Case kCases[] = {{64, 8, 2, false, false, 8, 8},   {64, 8, 4, true, false, 8, 8},
                       {64, 8, 4, true, true, 8, 8},     {37, 4, 3, true, true, 4, 5},
                       {100, 16, 8, true, true, {}, {}}, {100, 16, 8, false, true, 16, 16},
                       {17, 8, 8, true, true, 1, 1},     {50, 8, 3, true, false, 7, 3},
                       {96, 8, 2, true, true, 12, 12},   {33, 4, 4, false, false, 64, 64}};

std::string Name(const Case& c) {
  return "N=" + std::to_string(c.n) + " d=" + std::to_string(c.d) + " P=" + std::to_string(c.devices) +
         (c.causal ? " causal" : "") + (c.zigzag ? " zigzag" : "");
}

TEST(Ring, SlicesCoverTheSequenceOnce) {
  for (const Case& c : kCases) {
    const RingProblem p = ResolveRingProblem(Request(c.n, c.d, c.devices, c.causal, c.zigzag, c.br, c.bc));
    std::vector<int> seen(static_cast<std::size_t>(c.n), 0);
    for (int dev = 0; dev < p.devices; ++dev) {
      for (int r = 0; r < p.DeviceRows(dev); ++r) {
        const int row = p.GlobalRow(dev, r);
        ++seen[static_cast<std::size_t>(row)];
        EXPECT_EQ(p.OwnerOfRow(row), dev) << Name(c) << " row " << row;
      }
      if (p.zigzag()) {
        EXPECT_EQ(p.DeviceChunk(dev, 0), dev);
        EXPECT_EQ(p.DeviceChunk(dev, 1), 2 * p.devices - 1 - dev);
      }
    }
    for (int row = 0; row < c.n; ++row) EXPECT_EQ(seen[static_cast<std::size_t>(row)], 1) << Name(c);
    for (int ch = 0; ch < p.chunks(); ++ch) {
      EXPECT_GE(p.ChunkRows(ch), c.n / p.chunks());
      EXPECT_LE(p.ChunkRows(ch), c.n / p.chunks() + 1);
    }
    // At ring step s device p holds device (p − s) mod P's K/V: every device's slice visits every device once.
    for (int dev = 0; dev < p.devices; ++dev) {
      std::set<int> owners;
      for (int s = 0; s < p.devices; ++s) owners.insert(p.KvOwner(dev, s));
      EXPECT_EQ(static_cast<int>(owners.size()), p.devices);
      EXPECT_EQ(p.KvOwner(dev, 0), dev);
    }
  }
}

TEST(Ring, FinalOutputAndStatisticsMatchTheReference) {
  for (const Case& c : kCases) {
    const RingProblem p = ResolveRingProblem(Request(c.n, c.d, c.devices, c.causal, c.zigzag, c.br, c.bc));
    const AttentionInputs in = MakeRandomInputs(c.n, c.d, 11);
    const RingStepper stepper(p, &in);
    RingState last;
    const std::vector<double> o = stepper.Walk([&](const RingState& s) {
      last = s;
      return true;
    });
    std::vector<double> ref(static_cast<std::size_t>(c.n) * c.d);
    std::vector<RowSoftmaxStats> stats(static_cast<std::size_t>(c.n));
    ReferenceAttentionRows(in.q.data(), in.k.data(), in.v.data(), c.n, c.d, p.scale, c.causal, 0, c.n, ref.data(),
                           stats.data());
    ASSERT_EQ(o.size(), ref.size());
    double worst = 0, top = 0;
    for (std::size_t i = 0; i < o.size(); ++i) {
      worst = std::max(worst, std::abs(o[i] - ref[i]));
      top = std::max(top, std::abs(ref[i]));
    }
    EXPECT_LT(worst, 1e-12 * top) << Name(c);
    ASSERT_EQ(last.info.phase, RingPhase::kDone);
    for (const RingDeviceState& d : last.devices) {
      EXPECT_TRUE(d.o_normalized);
      for (int r = 0; r < d.rows; ++r) {
        const RowSoftmaxStats& want = stats[static_cast<std::size_t>(p.GlobalRow(d.device, r))];
        EXPECT_NEAR(d.m[static_cast<std::size_t>(r)], want.m, 1e-12 * std::max(1.0, std::abs(want.m))) << Name(c);
        EXPECT_NEAR(d.l[static_cast<std::size_t>(r)], want.l, 1e-12 * want.l) << Name(c);
      }
    }
  }
}

// The merge is the online softmax one level up: after ring step s, a row's (m, ℓ) are the softmax statistics of the
// keys its device has seen so far.
TEST(Ring, RunningStatisticsAreThoseOfTheKeysSeenSoFar) {
  const RingProblem p = ResolveRingProblem(Request(48, 8, 4, true, true, 4, 4));
  const AttentionInputs in = MakeRandomInputs(p.n, p.d, 3);
  const RingStepper stepper(p, &in);
  for (int s = 0; s < p.devices; ++s) {
    const RingState state = stepper.StateAt(stepper.FirstStepOfRingStep(s) + 1);
    ASSERT_EQ(state.info.phase, RingPhase::kMerge);
    for (const RingDeviceState& d : state.devices) {
      for (int r = 0; r < d.rows; ++r) {
        const int row = p.GlobalRow(d.device, r);
        double m = -INFINITY;
        std::vector<double> scores;
        for (int t = 0; t <= s; ++t) {
          const int owner = p.KvOwner(d.device, t);
          for (int c = 0; c < p.DeviceRows(owner); ++c) {
            const int col = p.GlobalRow(owner, c);
            if (p.Masked(row, col)) continue;
            double dot = 0;
            for (int k = 0; k < p.d; ++k) dot += static_cast<double>(in.q[row * p.d + k]) * in.k[col * p.d + k];
            scores.push_back(p.scale * dot);
            m = std::max(m, scores.back());
          }
        }
        double l = 0;
        for (const double x : scores) l += std::exp(x - m);
        EXPECT_EQ(d.m[static_cast<std::size_t>(r)], m) << "s=" << s << " row " << row;
        EXPECT_NEAR(d.l[static_cast<std::size_t>(r)], l, 1e-12 * std::max(1.0, l)) << "s=" << s << " row " << row;
        // α rescales the old state and β the block: after the merge max(α, β) = 1 wherever a key was seen.
        if (!scores.empty()) {
          EXPECT_DOUBLE_EQ(std::max(d.alpha[static_cast<std::size_t>(r)], d.beta[static_cast<std::size_t>(r)]), 1.0);
        }
      }
    }
  }
}

int QTiles(const RingProblem& p, int dev) {
  int tiles = 0;
  for (int k = 0; k < p.ChunksPerDevice(); ++k) tiles += (p.ChunkRows(p.DeviceChunk(dev, k)) + p.br - 1) / p.br;
  return tiles;
}

// Without the mask every device reads Q_p once a ring step, the held K/V once per Q tile, reads its running state
// back after step 0 and writes it every step (O and L at the last); the K/V slices each travel P − 1 hops.
TEST(Ring, LedgerMatchesClosedFormsWithoutTheMask) {
  for (const Case& c : kCases) {
    if (c.causal) continue;
    const RingProblem p = ResolveRingProblem(Request(c.n, c.d, c.devices, false, c.zigzag, c.br, c.bc));
    const RingStepper stepper(p, nullptr);
    const RingState done = stepper.FinalState();
    const std::int64_t P = p.devices, d = p.d;
    std::int64_t sent_total = 0;
    for (const RingDeviceState& dev : done.devices) {
      const std::int64_t rows = dev.rows;
      std::int64_t kv_compute = 0, kv_sent = 0, kv_received = 0;
      for (int s = 0; s < p.devices; ++s) {
        const int owner = p.KvOwner(dev.device, s);
        kv_compute += static_cast<std::int64_t>(QTiles(p, dev.device)) * p.DeviceRows(owner) * d;
        if (s + 1 < p.devices) {
          kv_sent += p.DeviceRows(owner) * d;
          kv_received += p.DeviceRows(p.KvOwner(dev.device, s + 1)) * d;
        }
      }
      const Ledger& l = dev.ledger;
      EXPECT_EQ(l[HbmTensor::kQ].read_bytes, 4 * P * rows * d) << Name(c);
      EXPECT_EQ(l[HbmTensor::kK].read_bytes, 4 * (kv_compute + kv_sent)) << Name(c);
      EXPECT_EQ(l[HbmTensor::kV].read_bytes, 4 * (kv_compute + kv_sent)) << Name(c);
      EXPECT_EQ(l[HbmTensor::kK].write_bytes, 4 * kv_received) << Name(c);
      EXPECT_EQ(l[HbmTensor::kO].read_bytes, 4 * (P - 1) * rows * d) << Name(c);
      EXPECT_EQ(l[HbmTensor::kO].write_bytes, 4 * P * rows * d) << Name(c);
      EXPECT_EQ(l[HbmTensor::kM].write_bytes, 4 * (P - 1) * rows) << Name(c);
      EXPECT_EQ(l[HbmTensor::kL].read_bytes, 4 * (P - 1) * rows) << Name(c);
      EXPECT_EQ(l[HbmTensor::kLse].write_bytes, 4 * rows) << Name(c);
      // It sends every slice but the one it receives last, its successor's: N − rows(p + 1) rows of K and V.
      EXPECT_EQ(dev.link.sent_bytes, 8 * (p.n - p.DeviceRows((dev.device + 1) % p.devices)) * d) << Name(c);
      EXPECT_EQ(dev.link.received_bytes, 8 * (p.n - rows) * d) << Name(c);
      sent_total += dev.link.sent_bytes;
    }
    EXPECT_EQ(sent_total, 8 * (P - 1) * p.n * d) << Name(c);
    EXPECT_EQ(done.total_link.sent_bytes, done.total_link.received_bytes);
  }
}

// With one tile per chunk, the causal mask leaves device p of the contiguous assignment work at ring steps 0 … p
// (the diagonal, then the chunks before its own); the zigzag assignment gives every device the same: 3 chunk pairs
// at step 0 (two diagonals and one full), 2 full ones at every later step.
TEST(Ring, CausalWorkPerDeviceAndStep) {
  const int P = 4, c = 8;
  {
    const RingProblem p = ResolveRingProblem(Request(P * c, 4, P, true, false, c, c));
    const std::vector<RingWork> work = RingStepper(p, nullptr).WorkTable();
    for (int s = 0; s < P; ++s)
      for (int dev = 0; dev < P; ++dev) {
        const RingWork& w = work[static_cast<std::size_t>(s * P + dev)];
        EXPECT_EQ(w.active_tiles, s <= dev ? 1 : 0) << "contiguous s=" << s << " p=" << dev;
        EXPECT_EQ(w.score_entries, s <= dev ? c * c : 0);
      }
  }
  {
    const RingProblem p = ResolveRingProblem(Request(2 * P * c, 4, P, true, true, c, c));
    const std::vector<RingWork> work = RingStepper(p, nullptr).WorkTable();
    for (int s = 0; s < P; ++s)
      for (int dev = 0; dev < P; ++dev)
        EXPECT_EQ(work[static_cast<std::size_t>(s * P + dev)].active_tiles, s == 0 ? 3 : 2)
            << "zigzag s=" << s << " p=" << dev;
    // The cost model sees the balance: the zigzag ring's critical path is shorter than the contiguous one's.
    const RingProblem contiguous = ResolveRingProblem(Request(2 * P * c, 4, P, true, false, 2 * c, 2 * c));
    const RingTimeline tz = ComputeRingTimeline(p, work);
    const RingTimeline tc = ComputeRingTimeline(contiguous, RingStepper(contiguous, nullptr).WorkTable());
    EXPECT_LT(tz.overlapped_seconds, tc.overlapped_seconds);
  }
}

TEST(Ring, StateAtMatchesTheWalkAtEveryStep) {
  for (const Case& c : {kCases[2], kCases[3], kCases[7]}) {
    const RingProblem p = ResolveRingProblem(Request(c.n, c.d, c.devices, c.causal, c.zigzag, c.br, c.bc));
    const AttentionInputs in = MakeRandomInputs(c.n, c.d, 5);
    const RingStepper stepper(p, &in);
    std::int64_t steps = 0;
    stepper.Walk([&](const RingState& walked) {
      const RingState built = stepper.StateAt(walked.info.step, RingStateDetail::kBlocks);
      EXPECT_EQ(built.info, walked.info);
      EXPECT_EQ(built.total, walked.total);
      EXPECT_EQ(built.total_link, walked.total_link);
      for (std::size_t k = 0; k < built.devices.size(); ++k) {
        const RingDeviceState &a = built.devices[k], &b = walked.devices[k];
        EXPECT_EQ(a.ledger, b.ledger);
        EXPECT_EQ(a.delta, b.delta);
        EXPECT_EQ(a.kv_owner, b.kv_owner);
        EXPECT_EQ(a.m, b.m);
        EXPECT_EQ(a.l, b.l);
        EXPECT_EQ(a.o, b.o);
        EXPECT_EQ(a.block_m, b.block_m);
        // S and P̃ exactly where the block is live; their row max and sum are the block's m̃ and ℓ̃.
        const bool block = walked.info.phase == RingPhase::kAttend || walked.info.phase == RingPhase::kMerge;
        EXPECT_EQ(a.s.size(), block ? static_cast<std::size_t>(a.rows) * a.keys : 0u);
        for (int r = 0; block && r < a.rows; ++r) {
          double mx = -INFINITY, sum = 0;
          for (int col = 0; col < a.keys; ++col) {
            mx = std::max(mx, a.s[static_cast<std::size_t>(r * a.keys + col)]);
            sum += a.p[static_cast<std::size_t>(r * a.keys + col)];
          }
          EXPECT_EQ(mx, a.block_m[static_cast<std::size_t>(r)]);
          EXPECT_NEAR(sum, a.block_l[static_cast<std::size_t>(r)], 1e-12 * std::max(1.0, sum));
        }
      }
      ++steps;
      return true;
    });
    EXPECT_EQ(steps, stepper.step_count());
    EXPECT_EQ(stepper.step_count(), 3 * c.devices);
  }
}

TEST(Ring, PhasesRunInRingOrder) {
  const RingProblem p = ResolveRingProblem(Request(32, 4, 3, false, false));
  const RingStepper stepper(p, nullptr);
  std::vector<std::string> phases;
  for (std::int64_t t = 0; t < stepper.step_count(); ++t) {
    const RingStepInfo info = stepper.Info(t);
    phases.push_back(std::string(RingPhaseName(info.phase)) + std::to_string(info.ring_step));
  }
  const std::vector<std::string> want = {"attend0",   "merge0",  "exchange0", "attend1", "merge1",
                                         "exchange1", "attend2", "merge2",    "done-1"};
  EXPECT_EQ(phases, want);
}

// Non-causal, one chunk per device: a step's compute is 4·c²·d FLOPs, its exchange 8·c·d bytes, so the exchange
// hides behind the compute from c = 2F/B rows on; the timeline's step is the longer of the two.
TEST(Ring, TimelineOverlapsTheExchangeWithTheCompute) {
  RingRequest r = Request(4 * 256, 16, 4, false, false, 64, 64);
  r.device_tflops = 1.0;  // 1e12 FLOP/s
  r.link_gbps = 8.0;      // 8e9 B/s: 2F/B = 250 rows
  const RingProblem p = ResolveRingProblem(r);
  EXPECT_DOUBLE_EQ(RingOverlapChunkRows(p), 250.0);
  const std::vector<RingWork> work = RingStepper(p, nullptr).WorkTable();
  const RingWork& w = work[0];
  EXPECT_EQ(w.score_entries, 256 * 256);
  EXPECT_EQ(w.link_bytes, 8 * 256 * 16);
  EXPECT_GT(w.ComputeSeconds(p), w.LinkSeconds(p));  // 256 rows > 250
  const RingTimeline t = ComputeRingTimeline(p, work);
  EXPECT_NEAR(t.overlapped_seconds, 4 * w.ComputeSeconds(p), 1e-15);
  EXPECT_NEAR(t.serial_seconds, 4 * w.ComputeSeconds(p) + 3 * w.LinkSeconds(p), 1e-15);
  EXPECT_NEAR(t.single_device_seconds / t.overlapped_seconds, 4.0, 1e-9);
  ASSERT_EQ(t.step_begin.size(), 5u);
  EXPECT_DOUBLE_EQ(t.step_begin.back(), t.overlapped_seconds);

  r.n = 4 * 128;  // 128 rows < 250: the link sets the pace
  const RingProblem short_chunks = ResolveRingProblem(r);
  const RingWork w2 = RingStepper(short_chunks, nullptr).WorkTable()[0];
  EXPECT_LT(w2.ComputeSeconds(short_chunks), w2.LinkSeconds(short_chunks));
}

// The timeline's and the summary's times, down to the picoseconds of a GUI-sized ring.
TEST(Ring, HumanSeconds) {
  EXPECT_EQ(HumanSeconds(7.5e-12), "7.50 ps");
  EXPECT_EQ(HumanSeconds(2.56e-9), "2.56 ns");
  EXPECT_EQ(HumanSeconds(916e-6), "916 µs");
  EXPECT_EQ(HumanSeconds(1.08e-3), "1.08 ms");
  EXPECT_EQ(HumanSeconds(12.5), "12.5 s");
  EXPECT_EQ(HumanSeconds(0), "0.00 ps");
}

TEST(Ring, RequestErrors) {
  EXPECT_TRUE(RingRequestError(Request(64, 8, 1, false, false)).has_value());  // one device is no ring
  EXPECT_TRUE(RingRequestError(Request(7, 8, 4, false, true)).has_value());    // 8 chunks, 7 rows
  EXPECT_FALSE(RingRequestError(Request(8, 8, 4, false, true)).has_value());
  EXPECT_TRUE(RingRequestError(Request(64, 0, 2, false, false)).has_value());
  EXPECT_TRUE(RingRequestError(Request(64, 8, kMaxRingDevices + 1, false, false)).has_value());
  RingRequest r = Request(64, 8, 2, false, false);
  r.link_gbps = 0;
  EXPECT_TRUE(RingRequestError(r).has_value());
  EXPECT_THROW(ResolveRingProblem(Request(3, 8, 4, false, false)), InputError);
}

}  // namespace
}  // namespace flashviz
