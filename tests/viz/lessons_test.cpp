// The shipped lessons walked stop by stop: every stop's step exists in its problem, its panel exists, its text
// names only values the model has, and every question's answer is available and equals what a separate Stepper
// (and, for S and P~, the plain definitions) computes. And lesson files are checked field by field.
#include "viz/lessons.h"

#include <gtest/gtest.h>

#include <cmath>
#include <optional>
#include <set>

#include "kernels/common/input_error.h"
#include "kernels/cpu/stepper.h"
#include "viz/panels/panel_table.h"

namespace flashviz {
namespace {

void Load(Model& model, const ProblemForm& form) {
  const AttentionProblem p = ResolveProblem(form.ToRequest());
  model.SetProblem(p, std::make_shared<AttentionInputs>(MakeRandomInputs(p, form.seed)), {form.seed, "", 0});
}

// The value a question asks for, from a Stepper of its own at `step` (not the Model's cached states).
double Independent(const AttentionProblem& p, const AttentionInputs& in, std::int64_t step, const LessonQuestion& q) {
  const Stepper stepper(p, &in);
  const StepState s = stepper.StateAt(step);
  const auto r = static_cast<std::size_t>(q.row - s.row_begin);
  const auto cell = r * static_cast<std::size_t>(s.cols) + static_cast<std::size_t>(q.col - s.col_begin);
  switch (q.quantity) {
    case LessonQuantity::kScore: {
      if (p.Masked(q.row, q.col)) return -INFINITY;
      double dot = 0;
      for (int e = 0; e < p.d; ++e) dot += static_cast<double>(in.q[q.row * p.d + e]) * in.k[q.col * p.d + e];
      EXPECT_DOUBLE_EQ(s.tile.s[cell], p.scale * dot);
      return p.scale * dot;
    }
    case LessonQuantity::kProbability:
      if (p.backward()) return s.grad.p[cell];
      return s.tile.p[cell];
    case LessonQuantity::kTileMax: return s.tile.m_tile[r];
    case LessonQuantity::kTileSum: return s.tile.l_tile[r];
    case LessonQuantity::kRunningMax: return s.tile.m[r];
    case LessonQuantity::kRunningSum: return s.tile.l[r];
    case LessonQuantity::kRescale: return s.tile.alpha[r];
    case LessonQuantity::kOutput: return s.tile.o[r * static_cast<std::size_t>(p.d) + static_cast<std::size_t>(q.col)];
    case LessonQuantity::kHbmBytes: return static_cast<double>(s.ledger.HbmBytes());
    // The backward pass, from the definitions: P = exp(S − L) with L over the whole row, dS = P·(dP − D).
    case LessonQuantity::kDelta:
    case LessonQuantity::kGradP:
    case LessonQuantity::kGradS:
    case LessonQuantity::kGradQ: break;
  }
  const auto dot = [&](const std::vector<float>& a, int ra, const std::vector<float>& b, int rb) {
    double sum = 0;
    for (int e = 0; e < p.d; ++e) sum += static_cast<double>(a[ra * p.d + e]) * b[rb * p.d + e];
    return sum;
  };
  const auto lse = [&](int row) {
    double m = -INFINITY, l = 0;
    for (int c = 0; c < p.n; ++c)
      if (!p.Masked(row, c)) m = std::max(m, p.scale * dot(in.q, row, in.k, c));
    for (int c = 0; c < p.n; ++c)
      if (!p.Masked(row, c)) l += std::exp(p.scale * dot(in.q, row, in.k, c) - m);
    return m + std::log(l);
  };
  const auto prob = [&](int row, int col) {
    return p.Masked(row, col) ? 0.0 : std::exp(p.scale * dot(in.q, row, in.k, col) - lse(row));
  };
  const auto delta = [&](int row) {
    double sum = 0;
    for (int e = 0; e < p.d; ++e) {
      double o = 0;
      for (int c = 0; c < p.n; ++c) o += prob(row, c) * in.v[c * p.d + e];
      sum += in.dout[row * p.d + e] * o;
    }
    return sum;
  };
  switch (q.quantity) {
    case LessonQuantity::kDelta: return delta(q.row);
    case LessonQuantity::kGradP: return dot(in.dout, q.row, in.v, q.col);
    case LessonQuantity::kGradS: return prob(q.row, q.col) * (dot(in.dout, q.row, in.v, q.col) - delta(q.row));
    case LessonQuantity::kGradQ: {  // in HBM: the K/V tiles before this one, and this one from grad_q on
      const bool added = s.info.phase == Phase::kGradQ || s.info.phase == Phase::kGradK;
      const int keys = s.col_begin + (added ? s.cols : 0);
      double sum = 0;
      for (int c = 0; c < keys; ++c)
        sum += p.scale * prob(q.row, c) * (dot(in.dout, q.row, in.v, c) - delta(q.row)) * in.k[c * p.d + q.col];
      return sum;
    }
    default: return NAN;
  }
}

TEST(Lessons, TheFourLessonsShip) {
  std::set<std::string> ids;
  for (const Lesson& lesson : ShippedLessons()) ids.insert(lesson.id);
  for (const char* id : {"first-lesson", "tiling-and-traffic", "causal-mask", "vortex-mapping", "backward-pass"})
    EXPECT_TRUE(ids.count(id)) << id;
  EXPECT_EQ(ShippedLessons().front().id, "first-lesson");
}

TEST(Lessons, EveryStopOfEveryShippedLessonWalks) {
  int questions = 0;
  for (const Lesson& lesson : ShippedLessons()) {
    // One model per problem of the lesson (a stop may change it): loading one starts background work (the
    // exact result, the sweep of bytes against N) that the walk does not need again for every stop.
    Model model;
    std::optional<ProblemForm> loaded;
    for (int k = 0; k < static_cast<int>(lesson.stops.size()); ++k) {
      const LessonStop& stop = lesson.stops[static_cast<std::size_t>(k)];
      const std::string where = lesson.id + ", stop " + std::to_string(k + 1);
      if (!loaded || !(*loaded == FormAtStop(lesson, k))) {
        loaded = FormAtStop(lesson, k);
        Load(model, *loaded);
      }
      const std::optional<std::int64_t> step = StopStep(model.schedule(), stop);
      ASSERT_TRUE(step.has_value()) << where;
      EXPECT_NE(FindPanel(stop.panel), nullptr) << where;
      model.SetStep(*step);
      model.WaitIdle();
      model.Update();
      const StepInfo at = model.schedule().Info(*step);
      std::vector<std::string> unknown;
      const std::string text = FillLessonText(model, at, stop.text, &unknown);
      EXPECT_TRUE(unknown.empty()) << where << ": unknown {" << (unknown.empty() ? "" : unknown[0]) << "}";
      EXPECT_EQ(text.find("{-1}"), std::string::npos) << where;
      if (!stop.question) continue;
      ++questions;
      // Unanswered, the view stands one step before the question's step: it must exist.
      EXPECT_GE(*step, 1) << where;
      FillLessonText(model, at, stop.question->ask, &unknown);
      EXPECT_TRUE(unknown.empty()) << where;
      const LessonAnswer answer = AnswerAt(model, *stop.question);
      ASSERT_TRUE(answer.available) << where << ": " << answer.why;
      const double expected = Independent(model.problem(), model.inputs(), *step, *stop.question);
      EXPECT_NEAR(answer.value, expected, 1e-12 * std::max(1.0, std::abs(expected))) << where << ": " << answer.name;
      EXPECT_TRUE(AnswerMatches(*stop.question, expected, answer.value)) << where;
    }
  }
  EXPECT_GE(questions, 10);
}

// The backward lesson's last stop says that at its B_c the flash backward pass moves more than standard
// attention's, and that it wins once B_c exceeds (4d + 2)/7 keys: both hold in the model.
TEST(Lessons, TheBackwardLessonsTrafficClaimHolds) {
  const Lesson* lesson = FindLesson("backward-pass");
  ASSERT_NE(lesson, nullptr);
  const ProblemForm form = FormAtStop(*lesson, static_cast<int>(lesson->stops.size()) - 1);
  const AttentionProblem p = ResolveProblem(form.ToRequest());
  ASSERT_TRUE(p.backward());
  ASSERT_LT(p.bc, (4.0 * p.d + 2) / 7);
  EXPECT_GT(Stepper(p, nullptr).FinalLedger().HbmBytes(), StandardAttentionBackwardLedger(p.n, p.d).HbmBytes());
  for (const int n : {256, 1024}) {  // wider K/V tiles turn it around, as the stop says
    ProblemRequest wide = form.ToRequest();
    wide.n = n;
    wide.bc = 4 * p.d;
    wide.br = 4 * p.d;
    const AttentionProblem q = ResolveProblem(wide);
    EXPECT_LT(Stepper(q, nullptr).FinalLedger().HbmBytes(), StandardAttentionBackwardLedger(q.n, q.d).HbmBytes()) << n;
  }
}

TEST(Lessons, AnswersAreJudgedToTheShownPrecision) {
  LessonQuestion m;
  m.quantity = LessonQuantity::kRunningMax;
  EXPECT_TRUE(AnswerMatches(m, 1.234, 1.2345));
  EXPECT_FALSE(AnswerMatches(m, 1.3, 1.2345));
  EXPECT_TRUE(AnswerMatches(m, 0.001, 0.0));
  EXPECT_TRUE(AnswerMatches(m, -INFINITY, -INFINITY));
  EXPECT_FALSE(AnswerMatches(m, -1e30, -INFINITY));
  LessonQuestion bytes;
  bytes.quantity = LessonQuantity::kHbmBytes;
  EXPECT_TRUE(AnswerMatches(bytes, 1024, 1024));
  EXPECT_FALSE(AnswerMatches(bytes, 1023, 1024));
}

TEST(Lessons, AFaultyLessonIsRefusedByName) {
  const std::string good = R"({"title": "t", "problem": {"n": 8, "d": 2, "br": 2, "bc": 2},
                               "stops": [{"phase": "scores", "i": 0, "j": 0, "text": "x"}]})";
  EXPECT_NO_THROW(ParseLesson(good, "good.json"));
  const std::pair<const char*, const char*> bad[] = {
      {R"({"problem": {"n": 8}, "stops": [{"phase": "init", "text": "x"}]})", "\"title\" is missing"},
      {R"({"title": "t", "problem": {"n": 8}, "stops": []})", "non-empty"},
      {R"({"title": "t", "problem": {"n": 8}, "stops": [{"phase": "warp", "text": "x"}]})", "phase"},
      {R"({"title": "t", "problem": {"n": 8}, "stops": [{"phase": "init", "panel": "nope", "text": "x"}]})", "nope"},
      {R"({"title": "t", "problem": {"n": 8}, "stops": [{"phase": "init", "text": "x",
           "question": {"ask": "?", "quantity": "m"}}]})", "\"row\""},
      {R"({"title": "t", "problem": {"n": 8}, "stops": [{"phase": "init", "text": "x",
           "question": {"ask": "?", "quantity": "beta", "row": 0}}]})", "beta"},
      {R"({"title": "t", "problem": {"n": 0}, "stops": [{"phase": "init", "text": "x"}]})", "\"n\""},
      {R"({"title": "t", "problem": {"n": 8}, "stops": [{"phase": "init", "text": "x", "problem": {"d": 4}}]})",
       "\"d\""},
      {R"({"title": "t", "problem": {"n": 8}, "stops": [{"phase": "init", "text": "x"},]})", "not valid JSON"},
  };
  for (const auto& [text, expected] : bad) {
    try {
      ParseLesson(text, "bad.json");
      ADD_FAILURE() << "accepted: " << text;
    } catch (const InputError& e) {
      const std::string message = e.what();
      EXPECT_EQ(message.rfind("bad.json", 0), 0u) << message;
      EXPECT_NE(message.find(expected), std::string::npos) << message;
      EXPECT_EQ(message.find("json.exception"), std::string::npos) << message;
    }
  }
}

TEST(Lessons, AStopThatNamesNoStepIsFound) {
  const Lesson lesson = ParseLesson(R"({"title": "t", "problem": {"n": 8, "d": 2, "br": 2, "bc": 2},
                                        "stops": [{"phase": "finalize", "i": 0, "text": "q order only"},
                                                  {"phase": "scores", "i": 9, "j": 0, "text": "no tile 9"},
                                                  {"step": 100000, "text": "too far"}]})",
                                    "t.json");
  Model model;
  Load(model, lesson.form);
  for (const LessonStop& stop : lesson.stops) EXPECT_FALSE(StopStep(model.schedule(), stop).has_value()) << stop.text;
}

}  // namespace
}  // namespace flashviz
