#include "viz/decode_formulas.h"

#include <cmath>

#include "kernels/common/format.h"
#include "viz/widgets.h"

namespace flashviz {
namespace {

const DecodeState& State(const Model& m) {
  return m.decode_state();
}
const DecodeProblem& Problem(const Model& m) {
  return m.decode_problem();
}

// Where the current step stands: "split 2 of KV head 1, step 40 (exp)" or "merge of KV head 0, step 70 (merge_o)".
std::string Where(const Model& m) {
  const DecodeStepInfo& info = State(m).info;
  const std::string phase(DecodePhaseName(info.phase));
  if (info.kv_head < 0) return Sprintf("step %lld (%s)", static_cast<long long>(info.step), phase.c_str());
  const bool merging = !State(m).merge.m.empty();
  if (merging)
    return Sprintf("merge of KV head %d, step %lld (%s)", info.kv_head, static_cast<long long>(info.step),
                   phase.c_str());
  return Sprintf("split %d of KV head %d, step %lld (%s)", info.split, info.kv_head, static_cast<long long>(info.step),
                 phase.c_str());
}

// The query row and the key of a split's cell, as the inputs hold them.
const float* QueryRow(const Model& m, int g, int r) {
  const DecodeProblem& p = Problem(m);
  const int h = p.FirstHeadOf(g) + r / p.shape.q_rows;
  return m.decode_inputs().q.data() + (static_cast<std::size_t>(h) * p.shape.q_rows + r % p.shape.q_rows) * p.d();
}
const float* KeyRow(const Model& m, int g, int key, bool value) {
  const DecodeProblem& p = Problem(m);
  const std::vector<float>& t = value ? m.decode_inputs().v : m.decode_inputs().k;
  return t.data() + (static_cast<std::size_t>(g) * p.kv_len() + key) * p.d();
}

bool SplitCell(const Model& m, int r, int c) {
  const DecodeState& s = State(m);
  return s.merge.m.empty() && r >= 0 && r < s.rows && c >= 0 && c < s.keys;
}

// "key 37 (page 4, block 9)"
std::string KeyName(const Model& m, int key) {
  const DecodeProblem& p = Problem(m);
  const int page = key / p.page;
  return Sprintf("key %d (page %d, block %d)", key, page, p.block_table[static_cast<std::size_t>(page)]);
}

}  // namespace

std::string DecodeRowName(const DecodeProblem& p, int g, int r) {
  const int h = p.FirstHeadOf(g) + r / p.shape.q_rows;
  return p.shape.q_rows == 1 ? Sprintf("head %d", h) : Sprintf("head %d, row %d", h, r % p.shape.q_rows);
}

Explanation ExplainDecodeScore(const Model& m, int r, int c) {
  const DecodeState& s = State(m);
  if (!SplitCell(m, r, c) || s.split.s.empty()) return MissingValue("S", "no scores on chip at " + Where(m));
  const DecodeProblem& p = Problem(m);
  const int g = s.info.kv_head, key = s.key_begin + c;
  const float* q = QueryRow(m, g, r);
  const float* k = KeyRow(m, g, key, false);
  double dot = 0;
  for (int e = 0; e < p.d(); ++e) dot += static_cast<double>(q[e]) * k[e];
  Explanation x = ExplainedValue(s.split.s[static_cast<std::size_t>(r) * s.keys + c],
                        Sprintf("S[%s, %s]", DecodeRowName(p, g, r).c_str(), KeyName(m, key).c_str()));
  x.lines.push_back(Sprintf("= scale·(q·k) = %s × %s = %s", Num(p.shape.scale).c_str(), Num(dot, 6).c_str(),
                            Num(p.shape.scale * dot, 6).c_str()));
  x.lines.push_back(
      Sprintf("KV head %d's key, read once for the %d query heads that share it; %s", g, p.group(), Where(m).c_str()));
  return x;
}

Explanation ExplainDecodeProbability(const Model& m, int r, int c) {
  const DecodeState& s = State(m);
  if (!SplitCell(m, r, c) || s.split.p.empty()) return MissingValue("P~", "exp has not run at " + Where(m));
  const DecodeProblem& p = Problem(m);
  const double score = s.split.s[static_cast<std::size_t>(r) * s.keys + c], m_s = s.split.m[r];
  Explanation x =
      ExplainedValue(s.split.p[static_cast<std::size_t>(r) * s.keys + c],
            Sprintf("P~[%s, %s]", DecodeRowName(p, s.info.kv_head, r).c_str(), KeyName(m, s.key_begin + c).c_str()));
  x.lines.push_back(Sprintf("= exp(S − m_s) = exp(%s − %s) = %s", Num(score, 6).c_str(), Num(m_s, 6).c_str(),
                            Num(std::exp(score - m_s), 6).c_str()));
  x.lines.push_back("m_s is this split's own row maximum: no running max inside a split, the merge rescales");
  return x;
}

Explanation ExplainDecodeSplitMax(const Model& m, int r) {
  const DecodeState& s = State(m);
  if (!s.merge.m.empty() || r < 0 || r >= s.rows || s.split.m.empty())
    return MissingValue("m_s", "rowmax has not run at " + Where(m));
  const DecodeProblem& p = Problem(m);
  Explanation x = ExplainedValue(s.split.m[r], Sprintf("m_%d[%s]", s.info.split, DecodeRowName(p, s.info.kv_head, r).c_str()));
  x.lines.push_back(Sprintf("= max over keys %d … %d of S = %s", s.key_begin, s.key_begin + s.keys - 1,
                            Num(s.split.m[r], 6).c_str()));
  x.lines.push_back(Where(m));
  return x;
}

Explanation ExplainDecodeSplitSum(const Model& m, int r) {
  const DecodeState& s = State(m);
  if (!s.merge.m.empty() || r < 0 || r >= s.rows || s.split.l.empty())
    return MissingValue("ℓ_s", "rowsum has not run at " + Where(m));
  const DecodeProblem& p = Problem(m);
  double sum = 0;
  for (int c = 0; c < s.keys; ++c) sum += s.split.p[static_cast<std::size_t>(r) * s.keys + c];
  Explanation x = ExplainedValue(s.split.l[r], Sprintf("ℓ_%d[%s]", s.info.split, DecodeRowName(p, s.info.kv_head, r).c_str()));
  x.lines.push_back(Sprintf("= Σ P~ over the split's %d keys = %s", s.keys, Num(sum, 6).c_str()));
  x.lines.push_back(Where(m));
  return x;
}

Explanation ExplainDecodeSplitOutput(const Model& m, int r, int e) {
  const DecodeState& s = State(m);
  const DecodeProblem& p = Problem(m);
  if (!s.merge.m.empty() || r < 0 || r >= s.rows || e < 0 || e >= p.d() || s.split.o.empty())
    return MissingValue("O_s", "update_o has not run at " + Where(m));
  double sum = 0;
  for (int c = 0; c < s.keys; ++c)
    sum += s.split.p[static_cast<std::size_t>(r) * s.keys + c] * KeyRow(m, s.info.kv_head, s.key_begin + c, true)[e];
  Explanation x = ExplainedValue(s.split.o[static_cast<std::size_t>(r) * p.d() + e],
                        Sprintf("O_%d[%s, %d]", s.info.split, DecodeRowName(p, s.info.kv_head, r).c_str(), e));
  x.lines.push_back(
      Sprintf("= Σ_k P~[k] V[k, %d] over keys %d … %d = %s (unnormalized: ℓ_s = %s divides it only "
              "after the merge)",
              e, s.key_begin, s.key_begin + s.keys - 1, Num(sum, 6).c_str(), Num(s.split.l[r], 6).c_str()));
  x.lines.push_back(Where(m));
  return x;
}

Explanation ExplainDecodeMergeMax(const Model& m, int r) {
  const DecodeState& s = State(m);
  if (s.merge.m.empty() || r < 0 || r >= s.rows) return MissingValue("M", "no merge at " + Where(m));
  const DecodeProblem& p = Problem(m);
  std::string terms;
  for (int k = 0; k < p.splits; ++k)
    terms += (k ? ", " : "") + Num(s.merge.m_split[static_cast<std::size_t>(r) * p.splits + k], 5);
  Explanation x = ExplainedValue(s.merge.m[r], Sprintf("M[%s]", DecodeRowName(p, s.info.kv_head, r).c_str()));
  x.lines.push_back(Sprintf("= max_s m_s = max(%s) = %s", terms.c_str(), Num(s.merge.m[r], 6).c_str()));
  x.lines.push_back("the row's maximum over the whole cache, from the partials alone");
  return x;
}

Explanation ExplainDecodeAlpha(const Model& m, int r, int split) {
  const DecodeState& s = State(m);
  const DecodeProblem& p = Problem(m);
  if (s.merge.m.empty() || r < 0 || r >= s.rows || split < 0 || split >= p.splits)
    return MissingValue("α_s", "no merge at " + Where(m));
  const std::size_t at = static_cast<std::size_t>(r) * p.splits + split;
  const double m_s = s.merge.m_split[at], big_m = s.merge.m[r];
  Explanation x = ExplainedValue(s.merge.alpha[at], Sprintf("α_%d[%s]", split, DecodeRowName(p, s.info.kv_head, r).c_str()));
  x.lines.push_back(Sprintf("= e^(m_s − M) = e^(%s − %s) = %s", Num(m_s, 6).c_str(), Num(big_m, 6).c_str(),
                            Num(std::exp(m_s - big_m), 6).c_str()));
  x.lines.push_back(s.merge.alpha[at] == 1.0 ? "this split holds the row's maximum: its partial is taken as it is"
                                             : "the online softmax's rescale, one level up: this split's ℓ_s and O_s "
                                               "were computed against its own max m_s");
  x.lines.push_back(split < s.merge.merged ? "added into O" : "not added into O yet");
  return x;
}

Explanation ExplainDecodeMergeSum(const Model& m, int r) {
  const DecodeState& s = State(m);
  const DecodeProblem& p = Problem(m);
  if (s.merge.m.empty() || r < 0 || r >= s.rows) return MissingValue("ℓ", "no merge at " + Where(m));
  std::string terms;
  double sum = 0;
  for (int k = 0; k < p.splits; ++k) {
    const std::size_t at = static_cast<std::size_t>(r) * p.splits + k;
    terms += Sprintf("%s%s×%s", k ? " + " : "", Num(s.merge.alpha[at], 3).c_str(), Num(s.merge.l_split[at], 4).c_str());
    sum += s.merge.alpha[at] * s.merge.l_split[at];
  }
  Explanation x = ExplainedValue(s.merge.l[r], Sprintf("ℓ[%s]", DecodeRowName(p, s.info.kv_head, r).c_str()));
  x.lines.push_back(Sprintf("= Σ_s α_s ℓ_s = %s = %s", terms.c_str(), Num(sum, 6).c_str()));
  return x;
}

Explanation ExplainDecodeMergeOutput(const Model& m, int r, int e) {
  const DecodeState& s = State(m);
  const DecodeProblem& p = Problem(m);
  if (s.merge.m.empty() || r < 0 || r >= s.rows || e < 0 || e >= p.d()) return MissingValue("O", "no merge at " + Where(m));
  std::string terms;
  double sum = 0;
  for (int k = 0; k < s.merge.merged; ++k) {
    const double alpha = s.merge.alpha[static_cast<std::size_t>(r) * p.splits + k];
    const double o = s.partials[static_cast<std::size_t>(k)].o[static_cast<std::size_t>(r) * p.d() + e];
    terms += Sprintf("%s%s×%s", k ? " + " : "", Num(alpha, 3).c_str(), Num(o, 4).c_str());
    sum += alpha * o;
  }
  const std::string row = DecodeRowName(p, s.info.kv_head, r);
  const double so_far = s.merge.o[static_cast<std::size_t>(r) * p.d() + e];
  if (s.info.phase == DecodePhase::kWriteO) {
    const double written = s.o_final[static_cast<std::size_t>(r) * p.d() + e];
    Explanation x = ExplainedValue(written, Sprintf("O[%s, %d]", row.c_str(), e));
    x.lines.push_back(Sprintf("= (Σ_s α_s O_s) / ℓ = %s / %s = %s", Num(so_far, 6).c_str(),
                              Num(s.merge.l[r], 6).c_str(), Num(so_far / s.merge.l[r], 6).c_str()));
    const int h = p.FirstHeadOf(s.info.kv_head) + r / p.shape.q_rows;
    const double exact =
        m.decode_reference()[(static_cast<std::size_t>(h) * p.shape.q_rows + r % p.shape.q_rows) * p.d() + e];
    x.lines.push_back(Sprintf("exact (float64 softmax over all %d keys): %s, error %s", p.kv_len(),
                              Num(exact, 6).c_str(), Num(std::abs(written - exact), 2).c_str()));
    return x;
  }
  Explanation x = ExplainedValue(so_far, Sprintf("Σ α_s O_s[%s, %d] so far", row.c_str(), e));
  x.lines.push_back(s.merge.merged == 0 ? std::string("= 0: no partial added yet")
                                        : Sprintf("= %s = %s", terms.c_str(), Num(sum, 6).c_str()));
  x.lines.push_back(Sprintf("%d of %d splits added; write_o divides by ℓ = %s", s.merge.merged, p.splits,
                            Num(s.merge.l[r], 6).c_str()));
  return x;
}

Explanation ExplainDecodePartial(const Model& m, int split, int r) {
  const DecodeState& s = State(m);
  const DecodeProblem& p = Problem(m);
  if (split < 0 || split >= static_cast<int>(s.partials.size()) || r < 0 || r >= s.rows)
    return MissingValue("partial", Sprintf("split %d has not written its partial yet", split));
  const DecodeSplitNumerics& part = s.partials[static_cast<std::size_t>(split)];
  Explanation x =
      ExplainedValue(part.m[r], Sprintf("m_%d[%s] = %s, ℓ_%d = %s", split, DecodeRowName(p, s.info.kv_head, r).c_str(),
                               Num(part.m[r], 5).c_str(), split, Num(part.l[r], 5).c_str()));
  x.lines.push_back(Sprintf("split %d's partial in HBM: keys %d … %d, with O_%d (d = %d values a row, unnormalized)",
                            split, p.SplitKeyBegin(split), p.SplitKeyEnd(split) - 1, split, p.d()));
  return x;
}

std::string NarrateDecode(const Model& m) {
  const DecodeState& s = State(m);
  const DecodeProblem& p = Problem(m);
  const DecodeStepInfo& info = s.info;
  const int g = info.kv_head;
  const std::string heads = g < 0 ? std::string()
                            : p.group() == 1
                                ? Sprintf("query head %d", p.FirstHeadOf(g))
                                : Sprintf("query heads %d–%d", p.FirstHeadOf(g), p.FirstHeadOf(g) + p.group() - 1);
  // The group's first row, by its head, for the sample values the narration quotes.
  const std::string row0 = g >= 0 ? DecodeRowName(p, g, 0) : std::string();
  const auto bytes = [](std::int64_t b) { return HumanBytes(static_cast<double>(b)); };
  const std::int64_t read = s.delta.HbmReadBytes(), written = s.delta.HbmWriteBytes();
  switch (info.phase) {
    case DecodePhase::kLoadKv: {
      const int first = p.SplitPageBegin(info.split), last = p.SplitPageBegin(info.split + 1) - 1;
      return Sprintf(
          "load_kv: split %d of KV head %d reads keys %d–%d (pages %d–%d through the block table) and their "
          "values: %s, loaded once for the %d %s that share this KV head.",
          info.split, g, s.key_begin, s.key_begin + s.keys - 1, first, last, bytes(read).c_str(), p.group(),
          p.group() == 1 ? "query head" : "query heads");
    }
    case DecodePhase::kLoadQ:
      return Sprintf("load_q: the %d query row%s of %s (%s) come on chip beside the chunk.", s.rows,
                     s.rows == 1 ? "" : "s", heads.c_str(), bytes(read).c_str());
    case DecodePhase::kScores:
      return Sprintf("scores: S = scale·q·kᵀ for %d row%s × %d keys of split %d.", s.rows, s.rows == 1 ? "" : "s",
                     s.keys, info.split);
    case DecodePhase::kRowMax:
      return Sprintf("rowmax: m_%d = the split's own row maximum%s. No running max: each split starts fresh.",
                     info.split, s.split.m.empty() ? "" : (" (" + row0 + ": " + Num(s.split.m[0], 4) + ")").c_str());
    case DecodePhase::kExp:
      return Sprintf("exp: P~ = exp(S − m_%d), every entry in (0, 1], in place of S.", info.split);
    case DecodePhase::kRowSum:
      return Sprintf("rowsum: ℓ_%d = Σ P~ over the split's %d keys%s.", info.split, s.keys,
                     s.split.l.empty() ? "" : (" (" + row0 + ": " + Num(s.split.l[0], 4) + ")").c_str());
    case DecodePhase::kUpdateO:
      if (p.splits == 1)
        return Sprintf("update_o: O_0 = P~ V, unnormalized; with one split the division by ℓ_0 comes at write_o.");
      return Sprintf("update_o: O_%d = P~ V, unnormalized: dividing by ℓ_%d now would have to be undone in the merge.",
                     info.split, info.split);
    case DecodePhase::kWritePartial:
      return Sprintf(
          "write_partial: split %d writes its partial (m_%d, ℓ_%d and O_%d of %d row%s) to HBM: %s that "
          "the merge reads back, the price of splitting.",
          info.split, info.split, info.split, info.split, s.rows, s.rows == 1 ? "" : "s", bytes(written).c_str());
    case DecodePhase::kMergeStats: {
      std::string alphas;
      for (int k = 0; k < p.splits && !s.merge.alpha.empty(); ++k)
        alphas += (k ? ", " : "") + Num(s.merge.alpha[static_cast<std::size_t>(k)], 3);
      return Sprintf(
          "merge_stats: KV head %d's %d partials: M = max_s m_s, α_s = e^(m_s − M) (%s: %s), "
          "ℓ = Σ α_s ℓ_s.",
          g, p.splits, row0.c_str(), alphas.c_str());
    }
    case DecodePhase::kMergeO:
      return Sprintf(
          "merge_o: O += α_%d · O_%d (%s: α_%d = %s): split %d's partial rescaled to the common max, "
          "%d of %d added.",
          info.split, info.split, row0.c_str(), info.split,
          s.merge.alpha.empty() ? "?" : Num(s.merge.alpha[static_cast<std::size_t>(info.split)], 4).c_str(), info.split,
          s.merge.merged, p.splits);
    case DecodePhase::kWriteO:
      if (p.splits == 1)
        return Sprintf("write_o: one split, so no partial and no merge: O = O_0 / ℓ_0 for %s goes to HBM (%s).",
                       heads.c_str(), bytes(written).c_str());
      return Sprintf("write_o: O = (Σ α_s O_s) / ℓ for %s goes to HBM (%s): the softmax over all %d keys.",
                     heads.c_str(), bytes(written).c_str(), p.kv_len());
    case DecodePhase::kDone: {
      const double naive_reads = KvCacheReads(p, m.decode_naive_ledger());
      const std::int64_t partials =
          s.ledger[HbmTensor::kOPartial].read_bytes + s.ledger[HbmTensor::kOPartial].write_bytes +
          s.ledger[HbmTensor::kStatsPartial].read_bytes + s.ledger[HbmTensor::kStatsPartial].write_bytes;
      return Sprintf(
          "done: the KV cache (%s) was read once per KV head (%d head%s); decode_naive would read it %g "
          "time%s, once per query head. %s",
          bytes(KvCacheBytes(p)).c_str(), p.shape.kv_heads, p.shape.kv_heads == 1 ? "" : "s", naive_reads,
          naive_reads == 1 ? "" : "s",
          p.splits == 1 ? "One split: no partials, no merge." : ("The partials cost " + bytes(partials) + ".").c_str());
    }
  }
  return {};
}

}  // namespace flashviz
