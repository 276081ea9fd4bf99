#include "app/io/trace_writer.h"

#include <gtest/gtest.h>

#include <cmath>
#include <nlohmann/json.hpp>
#include <sstream>

namespace flashviz {
namespace {

std::vector<nlohmann::json> TraceLines(const AttentionProblem& p, const AttentionInputs& in) {
  const Stepper stepper(p, &in);
  std::vector<nlohmann::json> lines;
  std::int64_t expected_step = -1;
  WriteTrace(stepper, {}, [&](std::string_view line, std::int64_t step) {
    EXPECT_EQ(step, expected_step++);
    ASSERT_FALSE(line.empty());
    EXPECT_EQ(line.back(), '\n');
    EXPECT_EQ(line.find('\n'), line.size() - 1) << "one line per call";
    lines.push_back(nlohmann::json::parse(line));
  });
  return lines;
}

TEST(TraceWriter, ConfigLineThenOneLinePerStep) {
  ProblemRequest r;
  r.n = 10;
  r.d = 3;
  r.br = 4;
  r.bc = 3;
  r.order = LoopOrder::kQOuter;
  r.causal = true;
  const AttentionProblem p = ResolveProblem(r);
  const AttentionInputs in = MakeRandomInputs(10, 3, 1);
  const auto lines = TraceLines(p, in);
  ASSERT_EQ(static_cast<std::int64_t>(lines.size()), Stepper(p, nullptr).step_count() + 1);
  const auto& config = lines[0]["config"];
  EXPECT_EQ(config["n"], 10);
  EXPECT_EQ(config["d"], 3);
  EXPECT_EQ(config["br"], 4);
  EXPECT_EQ(config["bc"], 3);
  EXPECT_EQ(config["order"], "q");
  EXPECT_EQ(config["causal"], true);
  EXPECT_DOUBLE_EQ(config["scale"].get<double>(), 1.0 / std::sqrt(3.0));

  const auto& first = lines[1];
  EXPECT_EQ(first["step"], 0);
  EXPECT_EQ(first["phase"], "load_q");
  EXPECT_EQ(first["i"], 0);
  EXPECT_TRUE(first["j"].is_null());
  // m = −∞ right after load_q is written as null; ℓ = 0.
  for (const auto& m : first["m"]) EXPECT_TRUE(m.is_null());
  for (const auto& l : first["l"]) EXPECT_EQ(l.get<double>(), 0.0);

  const auto& done = lines.back();
  EXPECT_EQ(done["phase"], "done");
  EXPECT_TRUE(done["m"].is_null());
  const std::int64_t n = 10, d = 3;
  EXPECT_EQ(done["standard_hbm_read_bytes"], 4 * (2 * n * d + 2 * n * n + n * d));
  EXPECT_EQ(done["standard_hbm_write_bytes"], 4 * (2 * n * n + n * d));
  EXPECT_EQ(done["hbm_write_bytes"], 4 * (n * d + n));  // O and L, once
  EXPECT_EQ(done["sram_bytes"], 0);
  for (std::size_t k = 2; k < lines.size(); ++k) {
    EXPECT_GE(lines[k]["hbm_read_bytes"].get<std::int64_t>(), lines[k - 1]["hbm_read_bytes"].get<std::int64_t>());
    EXPECT_EQ(lines[k]["step"], lines[k - 1]["step"].get<int>() + 1);
  }
}

TEST(TraceWriter, NumbersRoundTripExactly) {
  ProblemRequest r;
  r.n = 6;
  r.d = 2;
  r.br = 3;
  r.bc = 2;
  const AttentionProblem p = ResolveProblem(r);
  const AttentionInputs in = MakeRandomInputs(6, 2, 4);
  const auto lines = TraceLines(p, in);
  const Stepper stepper(p, &in);
  for (std::size_t k = 1; k < lines.size(); ++k) {
    const StepState state = stepper.StateAt(static_cast<std::int64_t>(k - 1));
    if (state.info.i < 0) continue;
    ASSERT_EQ(lines[k]["l"].size(), state.tile.l.size());
    for (std::size_t row = 0; row < state.tile.l.size(); ++row) {
      EXPECT_EQ(lines[k]["l"][row].get<double>(), state.tile.l[row]);
      if (std::isfinite(state.tile.m[row])) {
        EXPECT_EQ(lines[k]["m"][row].get<double>(), state.tile.m[row]);
      }
    }
  }
}

TEST(TraceSummary, PrintsTheTotals) {
  ProblemRequest r;
  r.n = 32;
  r.d = 4;
  const AttentionProblem p = ResolveProblem(r);
  const std::string text = TraceSummary(p, Stepper(p, nullptr).FinalLedger(), StandardAttentionLedger(32, 4));
  EXPECT_NE(text.find("hbm_read_bytes"), std::string::npos);
  EXPECT_NE(text.find("standard_hbm_write_bytes 8704"), std::string::npos);  // 4·(2·32² + 32·4)
}

}  // namespace
}  // namespace flashviz
