// Sessions: the problem, the step, the open panels and the view settings as one JSON object, so a lesson can
// be saved and reopened (`flashviz --session FILE`, File → Save/Load session). Written atomically.
#pragma once

#include <cstdint>
#include <string>

#include "viz/ui_state.h"

namespace flashviz {

std::string SessionToJson(const UiState& ui, std::int64_t step);
// Applies a session's fields to `ui` (form, panels, tab, appearance, speed) and returns its step.
// Throws InputError with a one-line reason for malformed text; `ui` is unchanged then.
std::int64_t SessionFromJson(const std::string& text, const std::string& name, UiState& ui);

void SaveSession(const std::string& path, const UiState& ui, std::int64_t step);  // throws InputError
std::int64_t LoadSession(const std::string& path, UiState& ui);                     // throws InputError

}  // namespace flashviz
