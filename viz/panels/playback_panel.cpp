// Playback: play/pause, one phase or one tile iteration back and forward, first/last step, speed, the step
// number, and jump to a tile pair (i, j). Every button names its keyboard shortcut in its tooltip.
#include <algorithm>
#include <cmath>

#include "kernels/common/format.h"
#include "viz/panels/panels.h"
#include "viz/widgets.h"

namespace flashviz {
namespace {

bool IconButton(const char* label, const char* tooltip, float width) {
  const bool pressed = ImGui::Button(label, ImVec2(width, 0));
  if (ImGui::IsItemHovered()) MathTooltip(tooltip);
  return pressed;
}

}  // namespace

namespace {

// Ring attention: jump to ring step s (1-based, as the title counts them).
void DrawRingJump(const Model& model, UiState& ui) {
  const RingProblem& p = model.ring_problem();
  const RingStepInfo& info = model.ring_state().info;
  if (model.step() != ui.cursor.jump_fields_step) {
    if (info.ring_step >= 0) ui.cursor.jump_i = info.ring_step + 1;
    ui.cursor.jump_fields_step = model.step();
  }
  const ImGuiStyle& style = ImGui::GetStyle();
  ImGui::AlignTextToFramePadding();
  MathText("Jump to ring step");
  ImGui::SameLine();
  ImGui::SetNextItemWidth(std::max(40.0f, ImGui::GetContentRegionAvail().x - ImGui::CalcTextSize("Go").x -
                                              2 * style.FramePadding.x - style.ItemSpacing.x));
  ImGui::InputInt("##jump-ring", &ui.cursor.jump_i, 0);
  MathTooltip(Sprintf("ring step 1 … %d: its attend step", p.devices).c_str());
  ImGui::SameLine();
  if (ImGui::Button("Go")) {
    ui.cursor.jump_error.clear();
    if (ui.cursor.jump_i < 1 || ui.cursor.jump_i > p.devices)
      ui.cursor.jump_error = Sprintf("the ring has steps 1 … %d (P = %d devices)", p.devices, p.devices);
    else
      ui.cursor.step = model.ring_stepper().FirstStepOfRingStep(ui.cursor.jump_i - 1);
  }
  if (!ui.cursor.jump_error.empty()) {
    ImGui::PushTextWrapPos(0);
    MathTextColored(GetPalette().bad, ui.cursor.jump_error.c_str());
    ImGui::PopTextWrapPos();
  }
}

// Decoding: jump to split s of KV head g (the fields are the same two as (i, j), read as (g, s)).
void DrawDecodeJump(const Model& model, UiState& ui) {
  const DecodeProblem& p = model.decode_problem();
  const DecodeStepInfo& info = model.decode_state().info;
  if (model.step() != ui.cursor.jump_fields_step) {
    if (info.kv_head >= 0) ui.cursor.jump_i = info.kv_head;
    if (info.split >= 0) ui.cursor.jump_j = info.split;
    ui.cursor.jump_fields_step = model.step();
  }
  const ImGuiStyle& style = ImGui::GetStyle();
  ImGui::AlignTextToFramePadding();
  MathText("Jump to (g, s)");
  ImGui::SameLine();
  const float field = std::max(40.0f, (ImGui::GetContentRegionAvail().x - ImGui::CalcTextSize("Go").x -
                                       2 * style.FramePadding.x - 2 * style.ItemSpacing.x) /
                                          2);
  ImGui::SetNextItemWidth(field);
  ImGui::InputInt("##jump-g", &ui.cursor.jump_i, 0);
  MathTooltip("KV head g (0-based)");
  ImGui::SameLine();
  ImGui::SetNextItemWidth(field);
  ImGui::InputInt("##jump-s", &ui.cursor.jump_j, 0);
  MathTooltip("split s (0-based)");
  ImGui::SameLine();
  if (ImGui::Button("Go")) {
    ui.cursor.jump_error.clear();
    if (ui.cursor.jump_i < 0 || ui.cursor.jump_i >= p.shape.kv_heads || ui.cursor.jump_j < 0 ||
        ui.cursor.jump_j >= p.splits)
      ui.cursor.jump_error = Sprintf("(g, s) must be within G × S = %d × %d (0-based)", p.shape.kv_heads, p.splits);
    else
      ui.cursor.step = model.decode_stepper().FirstStepOfSplit(ui.cursor.jump_i, ui.cursor.jump_j);
  }
  if (!ui.cursor.jump_error.empty()) {
    ImGui::PushTextWrapPos(0);
    MathTextColored(GetPalette().bad, ui.cursor.jump_error.c_str());
    ImGui::PopTextWrapPos();
  }
}

}  // namespace

void DrawPlaybackPanel(const Model& model, UiState& ui) {
  if (!model.has_problem()) return;
  const std::int64_t last = model.step_count() - 1;
  const ImGuiStyle& style = ImGui::GetStyle();
  const float avail = ImGui::GetContentRegionAvail().x;
  const float w = std::floor((avail - 6 * style.ItemSpacing.x) / 7);

  if (IconButton("|\u25c0##first", "First step (Home)", w)) ui.cursor.step = 0;
  ImGui::SameLine();
  if (IconButton("\u25c0\u25c0##tile-back", "Back one tile iteration (Shift+←)", w))
    ui.cursor.step = model.PreviousTileIterationStep();
  ImGui::SameLine();
  if (IconButton("\u25c0##back", "Back one phase (←)", w)) ui.cursor.step = std::max<std::int64_t>(0, model.step() - 1);
  ImGui::SameLine();
  if (IconButton(ui.cursor.playing ? "||##play" : "\u25b6##play", ui.cursor.playing ? "Pause (Space)" : "Play (Space)",
                 w)) {
    ui.cursor.playing = !ui.cursor.playing;
    if (ui.cursor.playing && model.step() == last) ui.cursor.step = 0;  // play from the start again
  }
  ImGui::SameLine();
  if (IconButton("\u25b6##fwd", "Forward one phase (→)", w)) ui.cursor.step = std::min(last, model.step() + 1);
  ImGui::SameLine();
  if (IconButton("\u25b6\u25b6##tile-fwd", "Forward one tile iteration (Shift+→)", w))
    ui.cursor.step = model.NextTileIterationStep();
  ImGui::SameLine();
  if (IconButton("\u25b6|##last", "Last step (End)", w)) ui.cursor.step = last;

  // Step number: typing a number jumps there.
  long long step = ui.cursor.step;
  ImGui::SetNextItemWidth(avail * 0.45f);
  if (ImGui::InputScalar("##step", ImGuiDataType_S64, &step, nullptr, nullptr, "%lld",
                         ImGuiInputTextFlags_EnterReturnsTrue))
    ui.cursor.step = std::clamp<std::int64_t>(step, 0, last);
  MathTooltip("The step number; type one and press Enter to jump there.");
  ImGui::SameLine();
  ImGui::Text("/ %lld", static_cast<long long>(last));
  ImGui::SameLine();
  HelpMarker(Sprintf("Steps are numbered 0 to %lld (%lld in all), as on the timeline. A step is one phase of the "
                     "algorithm (load, scores, rowmax, exp, rowsum, update, write back). The state after any step is "
                     "rebuilt by replaying the schedule, so stepping back is as fast as forward.",
                     static_cast<long long>(last), static_cast<long long>(model.step_count()))
                 .c_str());

  ImGui::SetNextItemWidth(avail * 0.55f);
  ImGui::SliderFloat("##speed", &ui.cursor.speed, 0.25f, 240.0f,
                     ui.cursor.play_unit == StepUnit::kPhase ? "%.2g phases/s" : "%.2g tiles/s",
                     ImGuiSliderFlags_Logarithmic);
  MathTooltip("Playback speed ([ and ] halve and double it)");
  ImGui::SameLine();
  int unit = ui.cursor.play_unit == StepUnit::kPhase ? 0 : 1;
  ImGui::SetNextItemWidth(-1);
  if (ImGui::Combo("##unit", &unit, "by phase\0by tile\0"))
    ui.cursor.play_unit = unit == 0 ? StepUnit::kPhase : StepUnit::kTileIteration;
  MathTooltip("Play one phase or one whole tile iteration per tick");

  if (model.ring_mode()) return DrawRingJump(model, ui);
  if (model.decode_mode()) return DrawDecodeJump(model, ui);
  // Jump to a tile pair. The fields show the current pair whenever the cursor moves (a click on a tile, a key,
  // playback), and keep what was typed until it does.
  const AttentionProblem& p = model.problem();
  if (model.step() != ui.cursor.jump_fields_step) {
    const StepInfo& info = model.state().info;
    if (info.i >= 0) ui.cursor.jump_i = info.i;
    if (info.j >= 0) ui.cursor.jump_j = info.j;
    ui.cursor.jump_fields_step = model.step();
  }
  ImGui::AlignTextToFramePadding();
  MathText("Jump to (i, j)");
  ImGui::SameLine();
  const float field = std::max(40.0f, (ImGui::GetContentRegionAvail().x - ImGui::CalcTextSize("Go").x -
                                       2 * style.FramePadding.x - 2 * style.ItemSpacing.x) / 2);
  ImGui::SetNextItemWidth(field);
  ImGui::InputInt("##jump-i", &ui.cursor.jump_i, 0);
  MathTooltip("Q tile index i (0-based)");
  ImGui::SameLine();
  ImGui::SetNextItemWidth(field);
  ImGui::InputInt("##jump-j", &ui.cursor.jump_j, 0);
  MathTooltip("K/V tile index j (0-based)");
  ImGui::SameLine();
  if (ImGui::Button("Go")) {
    ui.cursor.jump_error.clear();
    if (ui.cursor.jump_i < 0 || ui.cursor.jump_i >= p.tr() || ui.cursor.jump_j < 0 || ui.cursor.jump_j >= p.tc())
      ui.cursor.jump_error = Sprintf("(i, j) must be within T_r × T_c = %d × %d (0-based)", p.tr(), p.tc());
    else if (const auto first = model.schedule().FirstStepOfPair(ui.cursor.jump_i, ui.cursor.jump_j))
      ui.cursor.step = *first;
    else
      ui.cursor.jump_error = Sprintf("(%d, %d) is masked (causal): it does no work, so it has no step",
                                     ui.cursor.jump_i, ui.cursor.jump_j);
  }
  if (!ui.cursor.jump_error.empty()) {
    ImGui::PushTextWrapPos(0);
    MathTextColored(GetPalette().bad, ui.cursor.jump_error.c_str());
    ImGui::PopTextWrapPos();
  }
}

}  // namespace flashviz
