// Guided lessons: a problem and a list of stops, each a step of the schedule, the panel to show there and a
// paragraph, optionally with a question whose answer the stepper computes (never typed into the lesson). Lessons
// are JSON files in assets/lessons/ (the format is in assets/lessons/README.md), embedded into the binary at
// build time so an installed flashviz has them.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "kernels/cpu/schedule.h"
#include "viz/model.h"
#include "viz/ui_state.h"

namespace flashviz {

// What a question asks for, read from the StepState after the stop's step.
enum class LessonQuantity {
  kScore,       // S[row, col]
  kProbability, // P~[row, col]
  kTileMax,     // m~_ij (kv) or rowmax(S_ij) (q) of a row
  kTileSum,     // ℓ~_ij (kv) or rowsum(P~_ij) (q) of a row
  kRunningMax,  // m_i of a row after the step
  kRunningSum,  // ℓ_i of a row after the step
  kRescale,     // α = e^(m_old − m_new) of a row
  kOutput,      // O_i[row, col] on chip after the step (normalized in kv, not yet in q until finalize)
  kHbmBytes,    // bytes moved through HBM so far (reads + writes)
  // The backward pass (kProbability is then P_ij = exp(S_ij − L_i); kScore the recomputed S_ij):
  kDelta,       // D_i = rowsum(dO_i ∘ O_i) of a row
  kGradP,       // dP_ij[row, col]
  kGradS,       // dS_ij[row, col]
  kGradQ,       // dQ_i[row, col] as it stands in HBM after the step
};

struct LessonQuestion {
  std::string ask;  // "Predict m_new for row 1."
  LessonQuantity quantity = LessonQuantity::kRunningMax;
  int row = -1, col = -1;  // global query row and key (or column of O); −1 where not used
};

struct LessonStop {
  // Where: the schedule step of `phase` for tile pair (i, j) (−1 where the phase has no such index), or an
  // explicit step number when `step` is set.
  Phase phase = Phase::kInit;
  int i = -1, j = -1;
  std::optional<std::int64_t> step;
  std::string panel;  // the panel to bring to the front (a PanelInfo id)
  std::string text;   // may name model values in braces, filled in at the stop: see FillLessonText
  std::optional<LessonQuestion> question;
  // Changes to the problem from this stop on (to compare the loop orders, tile sizes, the mask); later stops
  // keep them.
  std::optional<LoopOrder> order;
  std::optional<int> br, bc;
  std::optional<bool> causal;
};

struct Lesson {
  std::string id;      // the file's name without .json: "first-lesson"
  std::string title;
  std::string summary;
  int order = 1000;  // where the Lessons menu lists it (its "order" field)
  ProblemForm form;
  std::vector<LessonStop> stops;
};

// Parses one lesson file; InputError naming `name` and the field when it is not a valid lesson.
Lesson ParseLesson(const std::string& json_text, const std::string& name);
// The lessons that ship in assets/lessons/ (embedded), in the order of their "order" field.
std::span<const Lesson> ShippedLessons();
const Lesson* FindLesson(std::string_view id);

// The lesson's form with the changes of every stop up to `stop`.
ProblemForm FormAtStop(const Lesson& lesson, int stop);
// The step of `schedule` the stop stands at, or nothing when the schedule has no such step.
std::optional<std::int64_t> StopStep(const Schedule& schedule, const LessonStop& stop);

struct LessonAnswer {
  bool available = false;
  double value = 0;
  std::string name;  // "m_new of row 1", "S[0, 3]", ...
  std::string why;   // when not available: why the step has no such value
};
// The answer to `question` from the model, which stands at the stop's step.
LessonAnswer AnswerAt(const Model& model, const LessonQuestion& question);
// True when `typed` is the answer to the shown precision: within 0.5% (or 0.005 near zero); byte counts exactly.
bool AnswerMatches(const LessonQuestion& question, double typed, double answer);
// The stop's text with {N}, {d}, {Br}, {Bc}, {Tr}, {Tc}, {scale}, {steps}, {i} and {j} (the stop's tile pair,
// `at`), {keys} (the keys of K/V tile j: "keys 8–15"), {rescale} (what the model's tile iteration does to α), {hbm} (HBM bytes so far), {hbm_total} and
// {hbm_standard} (the whole run's, and standard attention's) filled in from the model; an unknown name stays as
// written and is listed in `unknown` when given.
std::string FillLessonText(const Model& model, const StepInfo& at, const std::string& text,
                           std::vector<std::string>* unknown = nullptr);

}  // namespace flashviz
