// The timeline: a scrubber over every step with marks where tile iterations begin (Schedule::
// TileIterationStart; taller marks where an outer iteration begins), the cursor, a hover readout of any step,
// click or drag to go there; and the narration line for the current phase.
#include <algorithm>
#include <cfloat>
#include <cmath>
#include <functional>

#include "kernels/common/format.h"
#include "viz/algorithm.h"
#include "viz/decode_formulas.h"
#include "viz/ring_formulas.h"
#include "viz/frame_report.h"
#include "viz/narration.h"
#include "viz/panels/algorithm_panel.h"
#include "viz/panels/panels.h"
#include "viz/widgets.h"

namespace flashviz {
namespace {

// Marks along the scrubber: `count` of them, the k-th at step `step(k)`.
struct Marks {
  std::int64_t count = 0;
  std::function<std::int64_t(std::int64_t)> step;
};

// The scrubber over every step: short marks, tall marks, the cursor; click or drag to go there, hover for
// `tooltip(step)` (the lines above the hint).
void DrawScrubber(const Model& m, UiState& ui, float width, float height, const Marks& short_marks,
                  const Marks& tall_marks, const std::function<void(std::int64_t)>& tooltip, const char* hint) {
  const Palette& pal = GetPalette();
  const std::int64_t count = m.step_count();
  const ImVec2 p = ImGui::GetCursorScreenPos();
  ImGui::InvisibleButton("##scrubber", ImVec2(std::max(width, 1.0f), height));
  const bool hovered = ImGui::IsItemHovered(), active = ImGui::IsItemActive();
  ImDrawList* dl = ImGui::GetWindowDrawList();
  const float x0 = p.x + 6, x1 = p.x + width - 6;
  const float mid = p.y + height * 0.5f;
  auto X = [&](std::int64_t step) {
    return x0 +
           (x1 - x0) * static_cast<float>(count > 1 ? static_cast<double>(step) / static_cast<double>(count - 1) : 0.0);
  };
  dl->AddRectFilled(ImVec2(x0, mid - 3), ImVec2(x1, mid + 3), pal.plot_bg, 3);
  dl->AddRectFilled(ImVec2(x0, mid - 3), ImVec2(X(m.step()), mid + 3), pal.flash, 3);

  // Marks only where they are at least 3 px apart.
  const float span = x1 - x0;
  if (short_marks.count > 0 && span / static_cast<float>(short_marks.count) >= 3.0f)
    for (std::int64_t t = 0; t < short_marks.count; ++t) {
      const float x = std::floor(X(short_marks.step(t))) + 0.5f;
      dl->AddLine(ImVec2(x, mid - height * 0.22f), ImVec2(x, mid + height * 0.22f),
                  ImGui::GetColorU32(ImGuiCol_Text, 0.45f));
    }
  if (tall_marks.count > 0 && span / static_cast<float>(tall_marks.count) >= 3.0f)
    for (std::int64_t t = 0; t < tall_marks.count; ++t) {
      const float x = std::floor(X(tall_marks.step(t))) + 0.5f;
      dl->AddLine(ImVec2(x, p.y + 2), ImVec2(x, p.y + height - 2), ImGui::GetColorU32(ImGuiCol_Text, 0.8f), 1.5f);
    }
  // The cursor.
  const float cx = X(m.step());
  dl->AddTriangleFilled(ImVec2(cx - 6, p.y), ImVec2(cx + 6, p.y), ImVec2(cx, p.y + 8), pal.cursor);
  dl->AddLine(ImVec2(cx, p.y), ImVec2(cx, p.y + height), pal.cursor, 2.0f);

  const float mx = ImGui::GetIO().MousePos.x;
  const std::int64_t at = std::clamp<std::int64_t>(
      static_cast<std::int64_t>(std::llround((mx - x0) / std::max(span, 1.0f) * static_cast<float>(count - 1))), 0,
      count - 1);
  if (active) ui.cursor.step = at;
  if (hovered) {
    ImGui::BeginTooltip();
    tooltip(at);
    MathTextColored(GetPalette().dim, hint);
    ImGui::EndTooltip();
  }
}

// The two label lines (`where`, and `unit` dimmed; `widest` sizes them so the scrubber does not move as they
// change), the scrubber beside them and the narration under both.
void DrawTimeline(const Model& model, UiState& ui, const std::string& where, const std::string& unit,
                  const std::string& widest_where, const std::string& widest_unit, const Marks& short_marks,
                  const Marks& tall_marks, const std::function<void(std::int64_t)>& tooltip, const char* hint,
                  const std::string& narration) {
  const float label_w =
      std::max(ImGui::CalcTextSize(widest_where.c_str()).x, ImGui::CalcTextSize(widest_unit.c_str()).x) + 12;
  const float height = ImGui::GetFrameHeight() * 1.3f;
  const ImVec2 p = ImGui::GetCursorScreenPos();
  ImGui::TextUnformatted(where.c_str());
  ImGui::TextDisabled("%s", unit.c_str());
  const float labels_bottom = ImGui::GetCursorScreenPos().y;  // two lines: taller than the scrubber
  const ScreenRect labels{p, ImGui::GetItemRectMax()};
  ImGui::SetCursorScreenPos(ImVec2(p.x + label_w, p.y));
  const ScreenRect scrubber{ImGui::GetCursorScreenPos(), ImVec2(ImGui::GetCursorScreenPos().x +
                                                                    ImGui::GetContentRegionAvail().x, p.y + height)};
  DrawScrubber(model, ui, ImGui::GetContentRegionAvail().x, height, short_marks, tall_marks, tooltip, hint);
  ImGui::SetCursorScreenPos(
      ImVec2(p.x, std::max({ImGui::GetCursorScreenPos().y, p.y + height + 2, labels_bottom})));

  // The narration, in the large font where it fits the two lines the layout gives it (a long one on a narrow
  // projector, e.g. write_back at 1024 px in presentation mode, takes the text font rather than being cut off).
  ImFont* large = LargeFont();
  const float wrap = ImGui::GetContentRegionAvail().x;
  const float large_h = large->CalcTextSizeA(large->FontSize, FLT_MAX, wrap, narration.c_str()).y;
  const bool fits = large_h <= 2 * large->FontSize + 1;
  if (fits) ImGui::PushFont(large);
  ImGui::PushTextWrapPos(0);
  MathText(narration.c_str());
  ImGui::PopTextWrapPos();
  if (fits) ImGui::PopFont();
  if (FrameReport* report = CurrentFrameReport()) {
    report->timeline_labels = labels;
    report->timeline_scrubber = scrubber;
    report->timeline_narration = ScreenRect{ImGui::GetItemRectMin(), ImGui::GetItemRectMax()};
    report->timeline_drawn = true;
  }
}

// Decoding: marks at every split, tall where a KV head's splits and its merge begin.
void DrawDecodeTimeline(const Model& model, UiState& ui) {
  const DecodeState& s = model.decode_state();
  const DecodeProblem& p = model.decode_problem();
  const DecodeStepper& stepper = model.decode_stepper();
  const long long last = static_cast<long long>(model.step_count() - 1);
  const std::string where = Sprintf("step %lld / %lld · %s", static_cast<long long>(model.step()), last,
                                    std::string(DecodePhaseName(s.info.phase)).c_str());
  const std::string unit = s.info.kv_head < 0   ? std::string("all KV heads done")
                           : !s.merge.m.empty() ? Sprintf("merge of KV head %d", s.info.kv_head)
                           : p.splits == 1      ? Sprintf("KV head %d (one split)", s.info.kv_head)
                                                : Sprintf("split %d of KV head %d", s.info.split, s.info.kv_head);
  const std::vector<std::int64_t> starts = DecodeUnitStarts(stepper);
  std::vector<std::int64_t> tall;
  for (const std::int64_t step : starts)
    if (stepper.Info(step).split <= 0) tall.push_back(step);
  DrawTimeline(
      model, ui, where, unit, Sprintf("step %lld / %lld · write_partial", last, last),
      Sprintf("split %d of KV head %d", p.splits, p.shape.kv_heads),
      Marks{static_cast<std::int64_t>(starts.size()),
            [&](std::int64_t k) { return starts[static_cast<std::size_t>(k)]; }},
      Marks{static_cast<std::int64_t>(tall.size()), [&](std::int64_t k) { return tall[static_cast<std::size_t>(k)]; }},
      [&](std::int64_t at) {
        const DecodeStepInfo info = stepper.Info(at);
        MathTextF("step %lld: %s", static_cast<long long>(at), std::string(DecodePhaseName(info.phase)).c_str());
        if (info.kv_head >= 0)
          MathTextF("KV head %d%s", info.kv_head, info.split >= 0 ? Sprintf(", split %d", info.split).c_str() : "");
      },
      "click or drag to go there; short marks: splits, tall: a KV head's first split and its merge",
      NarrateDecode(model));
}

// Ring attention: a mark at every ring step.
void DrawRingTimeline(const Model& model, UiState& ui) {
  const RingState& s = model.ring_state();
  const RingProblem& p = model.ring_problem();
  const RingStepper& stepper = model.ring_stepper();
  const long long last = static_cast<long long>(model.step_count() - 1);
  const std::string where = Sprintf("step %lld / %lld · %s", static_cast<long long>(model.step()), last,
                                    std::string(RingPhaseName(s.info.phase)).c_str());
  const std::string unit = s.info.ring_step < 0 ? std::string("every device has seen every key")
                                                : Sprintf("ring step %d of %d", s.info.ring_step + 1, p.devices);
  const std::vector<std::int64_t> starts = RingUnitStarts(stepper);
  DrawTimeline(
      model, ui, where, unit, Sprintf("step %lld / %lld · exchange", last, last),
      Sprintf("ring step %d of %d", p.devices, p.devices),
      Marks{model.step_count(), [](std::int64_t k) { return k; }},
      Marks{static_cast<std::int64_t>(starts.size()),
            [&](std::int64_t k) { return starts[static_cast<std::size_t>(k)]; }},
      [&](std::int64_t at) {
        const RingStepInfo info = stepper.Info(at);
        MathTextF("step %lld: %s", static_cast<long long>(at), std::string(RingPhaseName(info.phase)).c_str());
        if (info.ring_step >= 0) MathTextF("ring step %d of %d", info.ring_step + 1, p.devices);
      },
      "click or drag to go there; short marks: steps, tall: the ring steps", NarrateRing(model));
}

}  // namespace

void DrawTimelinePanel(const Model& model, UiState& ui) {
  if (!model.has_problem()) return;
  if (model.ring_mode()) return DrawRingTimeline(model, ui);
  if (model.decode_mode()) return DrawDecodeTimeline(model, ui);
  const StepState& s = model.state();
  const Schedule& sched = model.schedule();
  // The phase's line of the algorithm (the numbering the algorithm panel shows), so the pseudocode is one
  // glance away even while the step view is on screen.
  const std::string line = PseudocodeLineOf(PseudocodeFor(model.problem(), AlgorithmState(ui).version), s.info.phase);
  const std::string where = Sprintf(
      "step %lld / %lld · %s%s", static_cast<long long>(model.step()), static_cast<long long>(model.step_count() - 1),
      std::string(PhaseName(s.info.phase)).c_str(), line.empty() ? "" : (" · line " + line).c_str());
  const std::string tiles = Sprintf(
      "tile iteration %lld of %lld",
      static_cast<long long>(model.tile_iteration() >= 0 ? model.tile_iteration() + 1 : model.tile_iterations_done()),
      static_cast<long long>(sched.tile_iteration_count()));
  // The widest the two labels can be for this problem (the last step's number, the longest phase name, the last
  // tile iteration), not this step's: a label that changed width would move the scrubber and its marks sideways
  // at every step of playback.
  const long long last = static_cast<long long>(model.step_count() - 1);
  const long long iterations = static_cast<long long>(sched.tile_iteration_count());
  DrawTimeline(
      model, ui, where, tiles, Sprintf("step %lld / %lld · update_stats · line 17", last, last),
      Sprintf("tile iteration %lld of %lld", iterations, iterations),
      Marks{sched.tile_iteration_count(), [&](std::int64_t t) { return sched.TileIterationStart(t); }},
      Marks{sched.outer_count(), [&](std::int64_t t) { return sched.outer(static_cast<int>(t)).first_step; }},
      [&](std::int64_t at) {
        const StepInfo info = sched.Info(at);
        MathTextF("step %lld: %s", static_cast<long long>(at), std::string(PhaseName(info.phase)).c_str());
        if (info.i >= 0 || info.j >= 0)
          MathTextF("%s%s", info.i >= 0 ? Sprintf("Q tile i = %d  ", info.i).c_str() : "",
                    info.j >= 0 ? Sprintf("K/V tile j = %d", info.j).c_str() : "");
      },
      "click or drag to go there; short marks: tile iterations, tall: outer iterations", Narrate(model));
}

}  // namespace flashviz
