// The algorithm panel: the pseudocode of the current loop order with the current phase's line highlighted and
// annotated with the model's numbers for the selected row, and beside it the CUDA kernel that runs the same
// tiles with the current phase's lines highlighted (viz/algorithm.h). A click on a pseudocode line goes to the
// next step that runs it.
#include <algorithm>
#include <cmath>

#include "kernels/common/format.h"
#include "viz/algorithm.h"
#include "viz/panels/algorithm_panel.h"
#include "viz/panels/panels.h"
#include "viz/widgets.h"

namespace flashviz {
namespace {


bool Runs(const std::vector<Phase>& phases, Phase phase) {
  return std::find(phases.begin(), phases.end(), phase) != phases.end();
}

ImU32 HighlightColor() { return (GetPalette().cursor & 0x00FFFFFF) | 0x40000000; }

void DrawPseudocode(const Model& model, UiState& ui, const Pseudocode& code, float width) {
  const StepState& s = model.state();
  const AttentionProblem& p = model.problem();
  const Phase phase = s.info.phase;
  const float number_w = ImGui::CalcTextSize("00 ").x;
  const float indent_w = ImGui::CalcTextSize("    ").x;
  const int row = ui.cursor.selected_row >= 0 ? ui.cursor.selected_row : s.row_begin;
  ImGui::PushTextWrapPos(0);
  MathTextColored(GetPalette().dim, code.source.c_str());
  ImGui::PopTextWrapPos();
  for (std::size_t k = 0; k < code.lines.size(); ++k) {
    const PseudocodeLine& line = code.lines[k];
    if (line.causal_only && !p.causal) continue;
    ImGui::PushID(static_cast<int>(k));
    const bool current = Runs(line.phases, phase);
    const ImVec2 top = ImGui::GetCursorScreenPos();
    const float text_x = number_w + indent_w * static_cast<float>(line.indent);
    // The loop headers say where the loops are (the papers count from 1, the app's tiles from 0).
    std::string text = line.text;
    if (line.loop_index) {
      const int value = line.loop_index == 'j' ? s.info.j : s.info.i;
      if (value >= 0) text += Sprintf("      now %c = %d (tile %d, 0-based)", line.loop_index, value + 1, value);
    }
    const float wrap = std::max(60.0f, width - text_x - 8);
    const ImVec2 size = CalcMathTextSize(text.c_str());
    const float lines_h = std::ceil(std::max(1.0f, size.x / wrap)) * ImGui::GetTextLineHeightWithSpacing();
    const std::string annotation = current ? AnnotateStep(model, row) : std::string();
    const float annotation_h = annotation.empty() ? 0.0f : ImGui::GetTextLineHeightWithSpacing() *
                                                                std::ceil(std::max(1.0f, CalcMathTextSize(
                                                                    annotation.c_str()).x / wrap));
    const float h = lines_h + annotation_h;
    if (ImGui::InvisibleButton("##line", ImVec2(std::max(width, 1.0f), h)) && !line.phases.empty()) {
      if (const auto next = NextStepOfLine(model.schedule(), line, model.step())) ui.cursor.step = *next;
    }
    if (ImGui::IsItemHovered() && !line.phases.empty())
      MathTooltip("Click: the next step that runs this line");
    ImDrawList* dl = ImGui::GetWindowDrawList();
    if (current) dl->AddRectFilled(top, ImVec2(top.x + width, top.y + h), HighlightColor(), 3);
    const ImVec2 after = ImGui::GetCursorScreenPos();
    ImGui::SetCursorScreenPos(top);
    ImGui::TextDisabled("%s", line.number.c_str());
    ImGui::SetCursorScreenPos(ImVec2(top.x + text_x, top.y));
    ImGui::PushTextWrapPos(top.x + width - 8 - ImGui::GetWindowPos().x);
    if (line.number.empty()) MathTextColored(GetPalette().dim, text.c_str());
    else MathText(text.c_str());
    if (!annotation.empty()) MathTextColored(GetPalette().cursor, annotation.c_str());
    ImGui::PopTextWrapPos();
    ImGui::SetCursorScreenPos(after);
    // Keep the current line in view when the step moves (a short pane at 1280×720 would hide it).
    if (current && AlgorithmState(ui).pseudocode_scrolled_step != model.step()) {
      AlgorithmState(ui).pseudocode_scrolled_step = model.step();
      const float y = top.y - ImGui::GetWindowPos().y + ImGui::GetScrollY();
      if (y < ImGui::GetScrollY() || y + h > ImGui::GetScrollY() + ImGui::GetWindowHeight())
        ImGui::SetScrollY(std::max(0.0f, y - ImGui::GetWindowHeight() * 0.3f));
    }
    ImGui::PopID();
  }
}

void DrawSource(const Model& model, UiState& ui, const KernelSource& source) {
  const Phase phase = model.state().info.phase;
  AlgorithmPanelState& st = AlgorithmState(ui);
  ImGui::TextDisabled("%s — the registry's %s kernel, the lines of this phase marked", source.file.c_str(),
                      source.kernel.c_str());
  ImGui::PushFont(MonoFont());
  ImGui::BeginChild("##source", ImVec2(0, 0), true, ImGuiWindowFlags_HorizontalScrollbar);
  const float line_h = ImGui::GetTextLineHeightWithSpacing();
  int first_marked = -1;
  for (const SourceRegion& region : source.regions)
    if (Runs(region.phases, phase)) {
      first_marked = first_marked < 0 ? region.first_line : std::min(first_marked, region.first_line);
    }
  if (st.scrolled_step != model.step()) {
    st.scrolled_step = model.step();
    if (first_marked > 0)
      ImGui::SetScrollY(std::max(0.0f, (static_cast<float>(first_marked) - 4) * line_h));
  }
  ImDrawList* dl = ImGui::GetWindowDrawList();
  ImGuiListClipper clipper;
  clipper.Begin(static_cast<int>(source.lines.size()), line_h);
  while (clipper.Step()) {
    for (int k = clipper.DisplayStart; k < clipper.DisplayEnd; ++k) {
      const int number = k + 1;
      bool marked = false;
      for (const SourceRegion& region : source.regions)
        if (number >= region.first_line && number <= region.last_line && Runs(region.phases, phase)) marked = true;
      const bool marker = std::find(source.marker_lines.begin(), source.marker_lines.end(), number) !=
                          source.marker_lines.end();
      const ImVec2 at = ImGui::GetCursorScreenPos();
      if (marked)
        dl->AddRectFilled(at, ImVec2(at.x + ImGui::GetContentRegionAvail().x + ImGui::GetScrollMaxX() + 2000,
                                     at.y + line_h), HighlightColor());
      ImGui::TextDisabled("%4d", number);
      ImGui::SameLine();
      if (marker) ImGui::TextDisabled("%s", source.lines[static_cast<std::size_t>(k)].c_str());
      else ImGui::TextUnformatted(source.lines[static_cast<std::size_t>(k)].c_str());
    }
  }
  ImGui::EndChild();
  ImGui::PopFont();
}

}  // namespace

void DrawAlgorithmPanel(const Model& model, UiState& ui) {
  if (!model.has_problem()) return;
  const AttentionProblem& p = model.problem();
  AlgorithmPanelState& st = AlgorithmState(ui);
  const bool kv = !p.backward() && p.order == LoopOrder::kKvOuter;
  if (kv) {
    int version = st.version == PseudocodeVersion::kPaper ? 0 : 1;
    ImGui::SetNextItemWidth(ImGui::CalcTextSize("the course assignment (HW4)").x + ImGui::GetFrameHeight() * 2);
    if (ImGui::Combo("##version", &version, "the paper's numbering\0the course assignment (HW4)\0"))
      st.version = version == 0 ? PseudocodeVersion::kPaper : PseudocodeVersion::kAssignment;
    ImGui::SameLine();
  }
  HelpMarker("The pseudocode of the loop order being stepped (kv: Algorithm 1 of FlashAttention; q: the forward "
             "pass of FlashAttention-2; the backward pass: Algorithm 2 of FlashAttention-2), the line of the current "
             "phase highlighted with its numbers for the selected row (click a row of Q to pick another). Beside it "
             "the CUDA kernel that runs the same loop (flash1 for kv, flash2_row for q, flash2_bwd for the backward "
             "pass), the lines of the phase marked. Click a pseudocode line to go to the next step that runs it.");
  const Pseudocode& code = PseudocodeFor(p, st.version);
  ImGui::PushFont(LargeFont());
  ImGui::TextUnformatted(PlainNotation(code.title.c_str()).c_str());
  ImGui::PopFont();
  const float avail = ImGui::GetContentRegionAvail().x;
  const bool side_by_side = avail >= 900.0f * ImGui::GetFontSize() / 15.0f;
  const float code_w = side_by_side ? std::floor(avail * 0.52f) : avail;
  ImGui::BeginChild("##pseudocode", ImVec2(code_w, side_by_side ? 0 : ImGui::GetContentRegionAvail().y * 0.55f));
  DrawPseudocode(model, ui, code, ImGui::GetContentRegionAvail().x);
  ImGui::EndChild();
  if (side_by_side) ImGui::SameLine();
  ImGui::BeginChild("##kernel", ImVec2(0, 0));
  DrawSource(model, ui, KernelSourceFor(p));
  ImGui::EndChild();
}

}  // namespace flashviz
