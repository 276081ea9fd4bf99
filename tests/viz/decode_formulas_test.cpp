// Decoding's hover values and narration against an independent computation: every S, P~, m_s, ℓ_s, O_s, M, α_s, ℓ
// and O value a tooltip shows, at every step of small problems (grouped heads, several query rows, one split and
// many, an edge page), recomputed here from Q, K and V with the plain definitions (each split's own softmax over its
// keys, the merge from those), not from the stepper.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <limits>

#include "kernels/cpu/decode_reference.h"
#include "viz/decode_formulas.h"

namespace flashviz {
namespace {

struct Oracle {
  const DecodeProblem& p;
  const DecodeInputs& in;
  const float* Q(int g, int r) const {
    const int h = p.FirstHeadOf(g) + r / p.shape.q_rows;
    return in.q.data() + (static_cast<std::size_t>(h) * p.shape.q_rows + r % p.shape.q_rows) * p.d();
  }
  double S(int g, int r, int key) const {
    double dot = 0;
    for (int e = 0; e < p.d(); ++e)
      dot += static_cast<double>(Q(g, r)[e]) * in.k[(static_cast<std::size_t>(g) * p.kv_len() + key) * p.d() + e];
    return p.shape.scale * dot;
  }
  double V(int g, int key, int e) const { return in.v[(static_cast<std::size_t>(g) * p.kv_len() + key) * p.d() + e]; }
  double SplitMax(int g, int r, int s) const {
    double m = -std::numeric_limits<double>::infinity();
    for (int key = p.SplitKeyBegin(s); key < p.SplitKeyEnd(s); ++key) m = std::max(m, S(g, r, key));
    return m;
  }
  double SplitSum(int g, int r, int s) const {
    double l = 0;
    for (int key = p.SplitKeyBegin(s); key < p.SplitKeyEnd(s); ++key) l += std::exp(S(g, r, key) - SplitMax(g, r, s));
    return l;
  }
  double SplitO(int g, int r, int s, int e) const {
    double o = 0;
    for (int key = p.SplitKeyBegin(s); key < p.SplitKeyEnd(s); ++key)
      o += std::exp(S(g, r, key) - SplitMax(g, r, s)) * V(g, key, e);
    return o;
  }
  double M(int g, int r) const {
    double m = -std::numeric_limits<double>::infinity();
    for (int s = 0; s < p.splits; ++s) m = std::max(m, SplitMax(g, r, s));
    return m;
  }
  double Alpha(int g, int r, int s) const { return std::exp(SplitMax(g, r, s) - M(g, r)); }
};

void Near(const Explanation& x, double expected, const std::string& what) {
  ASSERT_TRUE(x.available) << what << ": " << x.title;
  ASSERT_NEAR(x.value, expected, 1e-10 * std::max(1.0, std::abs(expected))) << what << ": " << x.title;
}

struct Case {
  int heads, kv_heads, q_rows, kv_len, d, page, splits;
};

TEST(DecodeFormulas, EveryHoverValueAtEveryStepMatchesTheDefinitions) {
  for (const Case c : {Case{4, 2, 1, 40, 4, 8, 3}, Case{3, 1, 2, 19, 3, 4, 5}, Case{2, 2, 1, 9, 4, 4, 1}}) {
    DecodeRequest request;
    request.heads = c.heads;
    request.kv_heads = c.kv_heads;
    request.q_rows = c.q_rows;
    request.kv_len = c.kv_len;
    request.d = c.d;
    request.page = c.page;
    request.splits = c.splits;
    const DecodeProblem p = ResolveDecodeProblem(request, 4);
    Model model;
    const AttentionProblem forward = ResolveProblem(ProblemRequest{});
    model.SetProblem(forward, std::make_shared<AttentionInputs>(MakeRandomInputs(forward, 0)), {});
    auto inputs = std::make_shared<DecodeInputs>(MakeRandomDecodeInputs(p, 4));
    model.SetDecodeProblem(p, inputs);
    const Oracle o{p, *inputs};
    const std::vector<double> exact = ReferenceDecode(p.shape, inputs->q.data(), inputs->k.data(), inputs->v.data());
    int finals = 0;
    for (std::int64_t step = 0; step < model.step_count(); ++step) {
      model.SetStep(step);
      const DecodeState& s = model.decode_state();
      const std::string where = "step " + std::to_string(step) + " " + std::string(DecodePhaseName(s.info.phase));
      const std::string narration = NarrateDecode(model);
      ASSERT_EQ(narration.rfind(std::string(DecodePhaseName(s.info.phase)) + ":", 0), 0u) << narration;
      const int g = s.info.kv_head;
      if (g < 0) continue;
      const bool merging = !s.merge.m.empty();
      for (int r = 0; r < s.rows; ++r) {
        if (!merging) {
          const int split = s.info.split;
          for (int k = 0; k < s.keys; ++k) {
            const int key = s.key_begin + k;
            if (!s.split.s.empty()) Near(ExplainDecodeScore(model, r, k), o.S(g, r, key), where + " S");
            if (!s.split.p.empty())
              Near(ExplainDecodeProbability(model, r, k), std::exp(o.S(g, r, key) - o.SplitMax(g, r, split)),
                   where + " P");
          }
          if (!s.split.m.empty()) Near(ExplainDecodeSplitMax(model, r), o.SplitMax(g, r, split), where + " m_s");
          if (!s.split.l.empty()) Near(ExplainDecodeSplitSum(model, r), o.SplitSum(g, r, split), where + " l_s");
          for (int e = 0; e < p.d() && !s.split.o.empty(); ++e)
            Near(ExplainDecodeSplitOutput(model, r, e), o.SplitO(g, r, split, e), where + " O_s");
          for (int k = 0; k < static_cast<int>(s.partials.size()); ++k)
            Near(ExplainDecodePartial(model, k, r), o.SplitMax(g, r, k), where + " partial");
          // A partial is in HBM exactly when its split has written it.
          ASSERT_EQ(static_cast<int>(s.partials.size()), split + (s.info.phase == DecodePhase::kWritePartial ? 1 : 0));
        } else {
          Near(ExplainDecodeMergeMax(model, r), o.M(g, r), where + " M");
          double l = 0;
          for (int k = 0; k < p.splits; ++k) {
            Near(ExplainDecodeAlpha(model, r, k), o.Alpha(g, r, k), where + " alpha");
            l += o.Alpha(g, r, k) * o.SplitSum(g, r, k);
          }
          Near(ExplainDecodeMergeSum(model, r), l, where + " l");
          for (int e = 0; e < p.d(); ++e) {
            double sum = 0;
            for (int k = 0; k < s.merge.merged; ++k) sum += o.Alpha(g, r, k) * o.SplitO(g, r, k, e);
            const int h = p.FirstHeadOf(g) + r / p.shape.q_rows;
            const double final_o =
                exact[(static_cast<std::size_t>(h) * p.shape.q_rows + r % p.shape.q_rows) * p.d() + e];
            Near(ExplainDecodeMergeOutput(model, r, e), s.info.phase == DecodePhase::kWriteO ? final_o : sum,
                 where + " O");
          }
        }
        if (s.info.phase == DecodePhase::kWriteO) ++finals;
      }
      // merge_o adds one split a step, in order.
      if (s.info.phase == DecodePhase::kMergeO) {
        ASSERT_EQ(s.merge.merged, s.info.split + 1);
      }
    }
    // Every query row of every head got its final O, checked against the float64 reference.
    ASSERT_EQ(finals, c.heads * c.q_rows);
  }
}

}  // namespace
}  // namespace flashviz
