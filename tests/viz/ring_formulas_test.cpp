// Ring attention's hover values and narration against an independent computation: every S, P~, m~, ℓ~, α, β, m, ℓ
// and O value a tooltip shows, at every step of small rings (causal with both assignments and not, uneven chunks),
// recomputed here from Q, K and V with the plain definitions (device p holds device (p − s) mod P's keys at ring step
// s; the running statistics are those of the keys seen so far), not from the stepper.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <limits>

#include "viz/ring_formulas.h"

namespace flashviz {
namespace {

constexpr double kNegInf = -std::numeric_limits<double>::infinity();

struct Oracle {
  const RingProblem& p;
  const AttentionInputs& in;
  double S(int row, int col) const {
    if (p.causal && col > row) return kNegInf;
    double dot = 0;
    for (int e = 0; e < p.d; ++e)
      dot += static_cast<double>(in.q[static_cast<std::size_t>(row) * p.d + e]) *
             in.k[static_cast<std::size_t>(col) * p.d + e];
    return p.scale * dot;
  }
  // The keys device `device` holds at ring step s, as rows of the sequence.
  std::vector<int> Keys(int device, int s) const {
    const int owner = ((device - s) % p.devices + p.devices) % p.devices;
    std::vector<int> keys;
    for (int k = 0; k < p.ChunksPerDevice(); ++k) {
      const int c = k == 0 ? owner : 2 * p.devices - 1 - owner;
      for (int col = c * p.n / p.chunks(); col < (c + 1) * p.n / p.chunks(); ++col) keys.push_back(col);
    }
    return keys;
  }
  double Max(int row, const std::vector<int>& keys) const {
    double m = kNegInf;
    for (const int col : keys) m = std::max(m, S(row, col));
    return m;
  }
  double Sum(int row, const std::vector<int>& keys) const {
    const double m = Max(row, keys);
    double l = 0;
    for (const int col : keys)
      if (S(row, col) != kNegInf) l += std::exp(S(row, col) - m);
    return l;
  }
  // Every key device `device` has merged after ring step s (none for s < 0).
  std::vector<int> Seen(int device, int s) const {
    std::vector<int> keys;
    for (int t = 0; t <= s; ++t) {
      const std::vector<int> more = Keys(device, t);
      keys.insert(keys.end(), more.begin(), more.end());
    }
    return keys;
  }
};

void Near(const Explanation& x, double expected, const std::string& what) {
  ASSERT_TRUE(x.available) << what << ": " << x.title;
  if (std::isinf(expected)) {
    ASSERT_EQ(x.value, expected) << what << ": " << x.title;
    return;
  }
  ASSERT_NEAR(x.value, expected, 1e-10 * std::max(1.0, std::abs(expected))) << what << ": " << x.title;
}

struct Case {
  int n, d, devices;
  bool causal, zigzag;
  int tile;
};

TEST(RingFormulas, EveryHoverValueAtEveryStepMatchesTheDefinitions) {
  for (const Case c : {Case{32, 4, 4, true, true, 4}, Case{19, 3, 3, true, false, 2}, Case{12, 4, 2, false, false, 3},
                       Case{21, 2, 2, true, true, 4}}) {
    RingRequest request;
    request.n = c.n;
    request.d = c.d;
    request.devices = c.devices;
    request.causal = c.causal;
    request.zigzag = c.zigzag;
    request.br = request.bc = c.tile;
    const RingProblem p = ResolveRingProblem(request);
    Model model;
    const AttentionProblem forward = ResolveProblem(ProblemRequest{});
    model.SetProblem(forward, std::make_shared<AttentionInputs>(MakeRandomInputs(forward, 0)), {});
    auto inputs = std::make_shared<AttentionInputs>(MakeRandomInputs(p.n, p.d, 9));
    model.SetRingProblem(p, inputs);
    const Oracle o{p, *inputs};
    for (std::int64_t step = 0; step < model.step_count(); ++step) {
      model.SetStep(step);
      const RingStepInfo info = model.ring_state().info;
      const int s = info.ring_step;
      const std::string where = "N=" + std::to_string(c.n) + " step " + std::to_string(step);
      const std::string narration = NarrateRing(model);
      ASSERT_FALSE(narration.empty()) << where;
      for (int dev = 0; dev < p.devices; ++dev) {
        const std::vector<int> keys = s >= 0 ? o.Keys(dev, s) : std::vector<int>{};
        for (int r = 0; r < p.DeviceRows(dev); ++r) {
          const int row = p.GlobalRow(dev, r);
          const std::string at = where + " device " + std::to_string(dev) + " row " + std::to_string(row);
          if (info.phase == RingPhase::kAttend || info.phase == RingPhase::kMerge) {
            const double block_max = o.Max(row, keys);
            Near(ExplainRingBlockMax(model, dev, r), block_max, "m~ " + at);
            Near(ExplainRingBlockSum(model, dev, r), o.Sum(row, keys), "ℓ~ " + at);
            for (int k = 0; k < static_cast<int>(keys.size()); ++k) {
              const double score = o.S(row, keys[static_cast<std::size_t>(k)]);
              Near(ExplainRingScore(model, dev, r, k), score, "S " + at);
              Near(ExplainRingProbability(model, dev, r, k), score == kNegInf ? 0.0 : std::exp(score - block_max),
                   "P~ " + at);
            }
          } else {
            EXPECT_FALSE(ExplainRingScore(model, dev, r, 0).available) << "no block at " << at;
          }
          // The running statistics: after the merge of ring step s those of the keys seen so far; before it (attend,
          // and the exchange after it) those of the steps before.
          const int merged = info.phase == RingPhase::kAttend ? s - 1 : s >= 0 ? s : p.devices - 1;
          const std::vector<int> seen = o.Seen(dev, merged);
          const double m = o.Max(row, seen);
          Near(ExplainRingRunningMax(model, dev, r), m, "m " + at);
          Near(ExplainRingRunningSum(model, dev, r), o.Sum(row, seen), "ℓ " + at);
          if (info.phase == RingPhase::kMerge) {
            const double m_old = o.Max(row, o.Seen(dev, s - 1));
            const double block_max = o.Max(row, keys);
            Near(ExplainRingAlpha(model, dev, r), m_old == kNegInf ? 0.0 : std::exp(m_old - m), "α " + at);
            Near(ExplainRingBeta(model, dev, r), block_max == kNegInf ? 0.0 : std::exp(block_max - m), "β " + at);
          } else {
            EXPECT_FALSE(ExplainRingAlpha(model, dev, r).available) << "no α at " << at;
          }
          if (info.phase == RingPhase::kDone) {
            for (int e = 0; e < p.d; ++e)
              Near(ExplainRingOutput(model, dev, r, e), model.ring_reference()[static_cast<std::size_t>(row) * p.d + e],
                   "O " + at);
          }
        }
      }
      // The narration names the ring step and what each device holds.
      if (info.phase == RingPhase::kAttend) {
        EXPECT_NE(narration.find("Ring step " + std::to_string(s + 1) + " of " + std::to_string(p.devices)),
                  std::string::npos)
            << narration;
        EXPECT_NE(narration.find(", 1 ← " + std::to_string(p.KvOwner(1, s))), std::string::npos) << narration;
      }
      if (info.phase == RingPhase::kDone) {
        EXPECT_NE(narration.find("all " + std::to_string(p.n) + " keys"), std::string::npos) << narration;
      }
    }
  }
}

// The timeline's bars: each ring step's compute and exchange of every device, as the cost model prices them.
TEST(RingFormulas, StepWorkIsTheCostModels) {
  RingRequest request;
  request.n = 64;
  request.d = 8;
  request.devices = 4;
  request.causal = true;
  request.zigzag = true;
  request.br = request.bc = 8;
  request.device_tflops = 2.0;
  request.link_gbps = 5.0;
  const RingProblem p = ResolveRingProblem(request);
  Model model;
  const AttentionProblem forward = ResolveProblem(ProblemRequest{});
  model.SetProblem(forward, std::make_shared<AttentionInputs>(MakeRandomInputs(forward, 0)), {});
  model.SetRingProblem(p, std::make_shared<AttentionInputs>(MakeRandomInputs(p.n, p.d, 1)));
  for (int s = 0; s < p.devices; ++s)
    for (int dev = 0; dev < p.devices; ++dev) {
      // Zigzag, one tile per chunk: 3 chunk pairs at step 0 (two diagonal, one full), 2 full ones after.
      const double entries = (s == 0 ? 3 : 2) * 8.0 * 8.0;
      Near(ExplainRingStepWork(model, s, dev, false), 4 * entries * p.d / 2e12, "compute");
      const double link = s + 1 < p.devices ? 8.0 * 16 * p.d / 5e9 : 0.0;
      Near(ExplainRingStepWork(model, s, dev, true), link, "link");
    }
}

}  // namespace
}  // namespace flashviz
