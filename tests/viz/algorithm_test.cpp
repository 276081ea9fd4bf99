// The algorithm panel's anchors: every phase the stepper emits has its pseudocode line and its marked region in
// the CUDA kernel of the same loop order, each region holds the code that does that phase (so moving code without
// moving its marker fails here), the embedded kernels are the files of the tree, and a click on a line lands on a
// step that runs it.
#include "viz/algorithm.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <fstream>
#include <map>
#include <set>
#include <sstream>

#include "kernels/common/input_error.h"
#include "viz/widgets.h"

namespace flashviz {
namespace {

AttentionProblem Make(LoopOrder order, bool causal) {
  ProblemRequest r;
  r.n = 10;
  r.d = 2;
  r.br = 3;
  r.bc = 4;
  r.order = order;
  r.causal = causal;
  return ResolveProblem(r);
}

std::set<Phase> PhasesOf(const Schedule& schedule) {
  std::set<Phase> phases;
  for (std::int64_t k = 0; k < schedule.step_count(); ++k) phases.insert(schedule.Info(k).phase);
  return phases;
}

std::string RegionText(const KernelSource& source, Phase phase) {
  std::string text;
  for (const SourceRegion& region : source.regions)
    if (std::find(region.phases.begin(), region.phases.end(), phase) != region.phases.end())
      for (int line = region.first_line; line <= region.last_line; ++line)
        text += source.lines[static_cast<std::size_t>(line - 1)] + "\n";
  return text;
}

TEST(Algorithm, EveryPhaseHasItsLineAndItsKernelRegion) {
  // What each phase's region must contain: the statement that does the phase in flash1.cu / flash2_row.cu.
  const std::map<Phase, const char*> kv_code = {
      {Phase::kInit, "m[i] = -INFINITY"},          {Phase::kLoadKv, "k_tile)[idx]"},
      {Phase::kLoadQ, "q_tile + r * kQStride"},      {Phase::kScores, "s[c] += qv.x * kv.x"},
      {Phase::kRowMax, "m_tile = fmaxf(m_tile"},     {Phase::kExp, "expf(s[c] - m_tile)"},
      {Phase::kRowSum, "l_tile += s[c]"},            {Phase::kUpdateStats, "m_new = fmaxf(m_old, m_tile)"},
      {Phase::kUpdateO, "updated.x = (old_weight"},  {Phase::kWriteBack, "l_hbm[stat] = l_new"}};
  const std::map<Phase, const char*> q_code = {
      {Phase::kLoadQ, "q_tile + r * kQStride"},      {Phase::kLoadKv, "k_tile)[idx]"},
      {Phase::kScores, "s[c] += qv.x * kv.x"},       {Phase::kRowMax, "m_new = fmaxf(m, m_tile)"},
      {Phase::kExp, "expf(s[c] - m_new)"},           {Phase::kRowSum, "l = alpha * l + row_sum"},
      {Phase::kUpdateO, "o_acc[e] *= alpha"},        {Phase::kFinalize, "inv_l = 1.0f / l"},
      {Phase::kWriteBack, "reinterpret_cast<float4*>(o_row + 4 * c4)"}};
  for (const LoopOrder order : {LoopOrder::kKvOuter, LoopOrder::kQOuter}) {
    const KernelSource& source = KernelSourceFor(order);
    const auto& code = order == LoopOrder::kKvOuter ? kv_code : q_code;
    for (const bool causal : {false, true}) {
      const Schedule schedule(Make(order, causal));
      for (const PseudocodeVersion version : {PseudocodeVersion::kPaper, PseudocodeVersion::kAssignment}) {
        const Pseudocode& pseudocode = PseudocodeFor(order, version);
        for (const Phase phase : PhasesOf(schedule)) {
          const bool has_line = std::any_of(pseudocode.lines.begin(), pseudocode.lines.end(), [&](const auto& l) {
            return std::find(l.phases.begin(), l.phases.end(), phase) != l.phases.end();
          });
          EXPECT_TRUE(has_line) << pseudocode.title << ": no line for " << PhaseName(phase);
        }
      }
      for (const Phase phase : PhasesOf(schedule)) {
        if (phase == Phase::kDone) continue;  // nothing left to run
        const std::string text = RegionText(source, phase);
        ASSERT_FALSE(text.empty()) << source.file << ": no `// @phase " << PhaseName(phase) << "` region";
        ASSERT_TRUE(code.count(phase)) << PhaseName(phase);
        EXPECT_NE(text.find(code.at(phase)), std::string::npos)
            << source.file << ": the " << PhaseName(phase) << " region does not hold `" << code.at(phase)
            << "`; move the marker with the code:\n" << text;
      }
    }
  }
}

// The backward pass: FlashAttention-2's Algorithm 2 and flash2_bwd.cu, every phase with its line and its region.
TEST(Algorithm, EveryBackwardPhaseHasItsLineAndItsKernelRegion) {
  const std::map<Phase, const char*> code = {
      {Phase::kInit, "cudaMemsetAsync(args.dq, 0"},   {Phase::kDelta, "LaunchRowDot<float>(args.dout, args.o"},
      {Phase::kLoadKv, "LoadRows<kD>(k_s, k, col0"},  {Phase::kLoadQ, "LoadRows<kD>(q_s, q, row0"},
      {Phase::kScores, "s[u] += qe * k_s"},           {Phase::kProbs, "expf(scale * s[u] - l_s[s_row])"},
      {Phase::kGradV, "dv_acc[u] += p * do_s"},       {Phase::kGradP, "dp[u] += doe * v_s"},
      {Phase::kGradS, "p * (dp[u] - delta_s[s_row])"}, {Phase::kGradK, "dk_acc[u] += ds * q_s"},
      {Phase::kGradQ, "atomicAdd(dq +"},              {Phase::kWriteGrads, "dk[index] = scale * dk_acc[u]"}};
  for (const bool causal : {false, true}) {
    AttentionProblem p = Make(LoopOrder::kKvOuter, causal);
    p.pass = Pass::kBackward;
    const KernelSource& source = KernelSourceFor(p);
    EXPECT_EQ(source.kernel, "flash2_bwd");
    const Pseudocode& pseudocode = PseudocodeFor(p);
    for (const Phase phase : PhasesOf(Schedule(p))) {
      EXPECT_FALSE(PseudocodeLineOf(pseudocode, phase).empty()) << "no line of Algorithm 2 for " << PhaseName(phase);
      if (phase == Phase::kDone) continue;
      const std::string text = RegionText(source, phase);
      ASSERT_FALSE(text.empty()) << source.file << ": no `// @phase " << PhaseName(phase) << "` region";
      ASSERT_TRUE(code.count(phase)) << PhaseName(phase);
      EXPECT_NE(text.find(code.at(phase)), std::string::npos)
          << source.file << ": the " << PhaseName(phase) << " region does not hold `" << code.at(phase)
          << "`; move the marker with the code:\n" << text;
    }
  }
}

TEST(Algorithm, TheEmbeddedKernelsAreTheFilesOfTheTree) {
  AttentionProblem backward = Make(LoopOrder::kKvOuter, false);
  backward.pass = Pass::kBackward;
  for (const KernelSource* source : {&KernelSourceFor(LoopOrder::kKvOuter), &KernelSourceFor(LoopOrder::kQOuter),
                                     &KernelSourceFor(backward)}) {
    const KernelSource& embedded = *source;
    std::ifstream file(std::string(FLASHVIZ_SOURCE_DIR) + "/" + embedded.file);
    ASSERT_TRUE(file) << embedded.file;
    std::stringstream text;
    text << file.rdbuf();
    const KernelSource on_disk = ParseKernelSource(embedded.file, embedded.kernel, text.str());
    EXPECT_EQ(on_disk.lines, embedded.lines) << embedded.file << " changed after the build embedded it";
  }
}

TEST(Algorithm, MarkersAreCheckedByName) {
  const KernelSource source = ParseKernelSource("k.cu", "k", "a\n// @phase scores\nb\nc\n  // @phase exp rowsum\nd\n"
                                                                "// @phase end\ne\n");
  ASSERT_EQ(source.regions.size(), 2u);
  EXPECT_EQ(source.regions[0].first_line, 3);
  EXPECT_EQ(source.regions[0].last_line, 4);
  EXPECT_EQ(source.regions[1].phases, (std::vector<Phase>{Phase::kExp, Phase::kRowSum}));
  EXPECT_EQ(source.regions[1].first_line, 6);
  EXPECT_EQ(source.regions[1].last_line, 6);
  EXPECT_EQ(source.marker_lines, (std::vector<int>{2, 5, 7}));
  try {
    ParseKernelSource("k.cu", "k", "x\n// @phase softmax\n");
    ADD_FAILURE() << "an unknown phase was accepted";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("k.cu:2"), std::string::npos) << e.what();
  }
}

TEST(Algorithm, AClickOnALineGoesToAStepThatRunsIt) {
  for (const LoopOrder order : {LoopOrder::kKvOuter, LoopOrder::kQOuter}) {
    const Schedule schedule(Make(order, true));
    for (const PseudocodeLine& line : PseudocodeFor(order).lines) {
      for (const std::int64_t from : {std::int64_t{0}, schedule.step_count() / 2, schedule.step_count() - 1}) {
        const auto next = NextStepOfLine(schedule, line, from);
        if (line.phases.empty()) {
          EXPECT_FALSE(next.has_value()) << line.text;
          continue;
        }
        ASSERT_TRUE(next.has_value()) << line.text;
        const Phase phase = schedule.Info(*next).phase;
        EXPECT_NE(std::find(line.phases.begin(), line.phases.end(), phase), line.phases.end()) << line.text;
        // init and done happen once: a click there stays (or wraps back) on that one step.
        if (phase != Phase::kInit && phase != Phase::kDone) { EXPECT_NE(*next, from); }
      }
    }
  }
}

// The timeline names the phase's line in the numbering the algorithm panel shows.
TEST(Algorithm, EachPhaseHasTheLineNumberOfItsVersion) {
  EXPECT_EQ(PseudocodeLineOf(PseudocodeFor(LoopOrder::kKvOuter, PseudocodeVersion::kPaper), Phase::kUpdateStats), "11");
  EXPECT_EQ(PseudocodeLineOf(PseudocodeFor(LoopOrder::kKvOuter, PseudocodeVersion::kAssignment), Phase::kUpdateStats),
            "12");
  EXPECT_EQ(PseudocodeLineOf(PseudocodeFor(LoopOrder::kKvOuter), Phase::kLoadKv), "6");
  EXPECT_EQ(PseudocodeLineOf(PseudocodeFor(LoopOrder::kQOuter), Phase::kRowMax), "9");
  EXPECT_EQ(PseudocodeLineOf(PseudocodeFor(LoopOrder::kQOuter), Phase::kFinalize), "12");
  EXPECT_EQ(PseudocodeLineOf(PseudocodeFor(LoopOrder::kQOuter), Phase::kInit), "");
}

TEST(Algorithm, TheAnnotationCarriesTheModelsNumbers) {
  Model model;
  const AttentionProblem p = Make(LoopOrder::kKvOuter, false);
  model.SetProblem(p, std::make_shared<AttentionInputs>(MakeRandomInputs(p.n, p.d, 4)), {});
  std::int64_t step = 0;
  while (model.schedule().Info(step).phase != Phase::kUpdateStats || model.schedule().Info(step).j != 1) ++step;
  model.SetStep(step);
  model.WaitIdle();
  model.Update();
  const StepState& s = model.state();
  const std::string text = AnnotateStep(model, s.row_begin + 1);
  EXPECT_NE(text.find("row " + std::to_string(s.row_begin + 1)), std::string::npos) << text;
  EXPECT_NE(text.find("= " + Num(s.tile.m[1], 4) + ","), std::string::npos) << text;
  EXPECT_NE(text.find("ℓ_new = " + Num(s.tile.l[1], 4)), std::string::npos) << text;
}

}  // namespace
}  // namespace flashviz
