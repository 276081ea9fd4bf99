// The lesson panel: the list of shipped lessons, or the running lesson's stop: its paragraph (model values filled
// in), its question with an answer field checked against the stepper, and Back / Next. Arriving at a stop loads
// the lesson's problem when needed, moves the cursor (to the step before a question's step until it is answered,
// so the view does not give the answer away) and brings the stop's panel to the front.
#include "viz/panels/lesson_panel.h"

#include <imgui_stdlib.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>

#include "kernels/common/format.h"
#include "viz/lessons.h"
#include "viz/panels/panel_table.h"
#include "viz/panels/panels.h"
#include "viz/widgets.h"

namespace flashviz {
namespace {

void Wrapped(const char* text) {
  ImGui::PushTextWrapPos(0);
  MathText(text);
  ImGui::PopTextWrapPos();
}

// The model runs the problem the stop needs (the form was applied and the model took it).
bool ProblemReady(const Model& model, const UiState& ui, const ProblemForm& form) {
  if (!model.has_problem() || !(ui.form == form)) return false;
  const AttentionProblem& p = model.problem();
  return p.n == form.n && p.d == form.d && p.order == form.order && p.pass == form.pass && p.causal == form.causal &&
         (form.tiles_from_sram || (p.br == form.br && p.bc == form.bc));
}

void EnterStop(UiState& ui, int stop) {
  LessonPanelState& st = LessonState(ui);
  st.stop = stop;
  st.arrived = false;
  st.answered = false;
  st.typed.clear();
  st.checked.reset();
  st.not_a_number = false;
  ui.cursor.playing = false;
}

void DrawLessonList(UiState& ui) {
  Wrapped("Guided lessons: each loads its problem and walks through the steps that matter, with questions "
                  "whose answers the stepper computes. PageDown / PageUp move between stops.");
  for (const Lesson& lesson : ShippedLessons()) {
    if (ImGui::Button(lesson.title.c_str(), ImVec2(-1, 0))) StartLesson(ui, lesson.id);
    if (ImGui::IsItemHovered()) MathTooltip(lesson.summary.c_str());
  }
}

void DrawQuestion(const Model& model, UiState& ui, const LessonQuestion& question, std::int64_t step,
                  const StepInfo& at) {
  LessonPanelState& st = LessonState(ui);
  const Palette& palette = GetPalette();
  ImGui::Separator();
  Wrapped(FillLessonText(model, at, question.ask).c_str());
  const auto reveal = [&] {
    st.answered = true;
    ui.cursor.step = step;  // the view now shows the step the question was about
  };
  // The answer is computed once the model stands at the stop's step; before that, at the step just before it.
  const bool at_step = model.step() == step;
  if (!st.answered) {
    ImGui::PushTextWrapPos(0);
    ImGui::TextDisabled("The view shows the step before: Check or Show moves on.");
    ImGui::PopTextWrapPos();
  }
  ImGui::SetNextItemWidth(std::max(80.0f, ImGui::GetContentRegionAvail().x * 0.45f));
  const bool entered = ImGui::InputText("##answer", &st.typed, ImGuiInputTextFlags_EnterReturnsTrue);
  ImGui::SameLine();
  const bool check = ImGui::Button("Check") || entered;
  ImGui::SameLine();
  if (ImGui::Button("Show")) {
    st.checked.reset();
    st.not_a_number = false;
    reveal();
  }
  if (check) {
    char* end = nullptr;
    const double typed = std::strtod(st.typed.c_str(), &end);
    st.not_a_number = st.typed.empty() || end == st.typed.c_str() || *end != '\0';
    if (!st.not_a_number) {
      st.checked = typed;  // judged below, once the model stands at the step
      reveal();
    }
  }
  if (st.not_a_number) MathTextColored(palette.bad, "Type a number (e.g. 1.25, -0.5, 2e-3, -inf).");
  if (!at_step) return;
  const LessonAnswer answer = AnswerAt(model, question);
  if (!answer.available) {
    MathTextColored(palette.bad, ("the lesson asks for a value this step does not have: " + answer.why).c_str());
    return;
  }
  if (st.checked) {
    const bool right = AnswerMatches(question, *st.checked, answer.value);
    MathTextColored(right ? palette.good : palette.bad,
                    right ? Sprintf("Right: %s = %s.", answer.name.c_str(), Num(answer.value, 5).c_str()).c_str()
                          : Sprintf("Not quite: you said %s; %s = %s.", Num(*st.checked, 5).c_str(),
                                    answer.name.c_str(), Num(answer.value, 5).c_str()).c_str());
  } else if (st.answered) {
    MathTextF("%s = %s", answer.name.c_str(), Num(answer.value, 5).c_str());
  }
}

}  // namespace

bool StartLesson(UiState& ui, std::string_view id, int stop) {
  const Lesson* lesson = FindLesson(id);
  if (!lesson) return false;
  LessonState(ui).lesson_id = std::string(id);
  EnterStop(ui, std::clamp(stop, 0, static_cast<int>(lesson->stops.size()) - 1));
  FocusPanel(ui, "lesson");
  return true;
}

void LessonStep(UiState& ui, int delta) {
  const LessonPanelState& st = LessonState(ui);
  const Lesson* lesson = FindLesson(st.lesson_id);
  if (!lesson) return;
  const int next = st.stop + delta;
  if (next >= 0 && next < static_cast<int>(lesson->stops.size())) EnterStop(ui, next);
}

void DrawLessonPanel(const Model& model, UiState& ui) {
  LessonPanelState& st = LessonState(ui);
  const Lesson* lesson = FindLesson(st.lesson_id);
  if (!lesson) {
    DrawLessonList(ui);
    return;
  }
  const int stops = static_cast<int>(lesson->stops.size());
  const LessonStop& stop = lesson->stops[static_cast<std::size_t>(st.stop)];

  // Arrive: the stop's problem first (the controller applies the form between frames), then the cursor.
  const ProblemForm form = FormAtStop(*lesson, st.stop);
  if (!(ui.form == form)) {
    ui.form = form;
    ui.requests.Push(UiRequest::kApplyForm);
  }
  const bool ready = ProblemReady(model, ui, form);
  // −1: the problem is not loaded yet, or it has no such step.
  const std::int64_t step = ready ? StopStep(model.schedule(), stop).value_or(-1) : -1;
  if (step >= 0 && !st.arrived) {
    ui.cursor.step = stop.question && !st.answered ? std::max<std::int64_t>(0, step - 1) : step;
    FocusPanel(ui, stop.panel);
    st.arrived = true;
  }

  ImGui::PushFont(LargeFont());
  Wrapped(lesson->title.c_str());
  ImGui::PopFont();
  ImGui::TextDisabled("stop %d of %d", st.stop + 1, stops);
  ImGui::SameLine();
  HelpMarker("PageDown / PageUp: next / previous stop. The lesson loads its own problem; the stop's step and panel "
             "are shown when you arrive. Questions are answered by the stepper (float64), not by the lesson file.");
  ImGui::Separator();
  if (!ready) {
    ImGui::TextDisabled("loading the lesson's problem…");
  } else if (step < 0) {
    MathTextColored(GetPalette().bad, "this stop names a step the problem does not have");
  } else {
    const StepInfo at = model.schedule().Info(step);
    Wrapped(FillLessonText(model, at, stop.text).c_str());
    if (stop.question) DrawQuestion(model, ui, *stop.question, step, at);
  }

  ImGui::Separator();
  const float w = (ImGui::GetContentRegionAvail().x - 2 * ImGui::GetStyle().ItemSpacing.x) / 3;
  ImGui::BeginDisabled(st.stop == 0);
  if (ImGui::Button("Back", ImVec2(w, 0))) LessonStep(ui, -1);
  ImGui::EndDisabled();
  if (ImGui::IsItemHovered(ImGuiHoveredFlags_AllowWhenDisabled)) MathTooltip("Previous stop (PageUp)");
  ImGui::SameLine();
  ImGui::BeginDisabled(st.stop + 1 >= stops);
  if (ImGui::Button("Next", ImVec2(w, 0))) LessonStep(ui, 1);
  ImGui::EndDisabled();
  if (ImGui::IsItemHovered(ImGuiHoveredFlags_AllowWhenDisabled)) MathTooltip("Next stop (PageDown)");
  ImGui::SameLine();
  if (ImGui::Button("End", ImVec2(w, 0))) st.lesson_id.clear();
  if (ImGui::IsItemHovered()) MathTooltip("Leave the lesson (the problem and the step stay)");
}

}  // namespace flashviz
