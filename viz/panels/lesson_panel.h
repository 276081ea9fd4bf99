// The lesson panel's own state (kept in UiState under the panel's id, "lesson"), and the moves the menu, the
// keys (PageDown / PageUp, what a presenter's clicker sends) and the command line make through a lesson.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "viz/ui_state.h"

namespace flashviz {

struct LessonPanelState {
  std::string lesson_id;  // "" while no lesson runs (the panel lists them)
  int stop = 0;
  bool arrived = false;   // the cursor and the panel were moved to this stop once its problem was loaded
  bool answered = false;  // the stop's question was checked or its answer shown
  std::string typed;               // the answer field
  std::optional<double> checked;   // the number Check took (judged against the stepper at the stop's step)
  bool not_a_number = false;       // Check found no number in the field
};

inline LessonPanelState& LessonState(UiState& ui) { return PanelState<LessonPanelState>(ui, "lesson"); }
inline const LessonPanelState& LessonState(const UiState& ui) { return PanelState<LessonPanelState>(ui, "lesson"); }

// Starts lesson `id` at `stop` (0-based, clamped): opens the panel and asks for the lesson's problem. False when
// no shipped lesson has that id.
bool StartLesson(UiState& ui, std::string_view id, int stop = 0);
// The next or the previous stop of the running lesson (nothing when none runs or at its ends).
void LessonStep(UiState& ui, int delta);

}  // namespace flashviz
