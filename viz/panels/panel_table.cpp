#include "viz/panels/panel_table.h"

#include <array>
#include <string>

#include "viz/panels/panels.h"
#include "viz/widgets.h"

namespace flashviz {
namespace {

// clang-format off
constexpr std::array kPanels = {
  PanelInfo{"lesson",     "Lesson",             PanelSlot::kSidebar,   false, 0.0f, &DrawLessonPanel,
            "guided lessons: a stop at a time, with questions the stepper answers (PageDown / PageUp)"},
  PanelInfo{"playback",   "Playback",           PanelSlot::kSidebar,   true, 0.0f, &DrawPlaybackPanel,
            "play, step by phase or tile iteration, speed, jump to (i, j)"},
  PanelInfo{"problem",    "Problem",            PanelSlot::kSidebar,   true, 0.0f, &DrawProblemPanel,
            "N, d, tiles or SRAM, loop order, scale, causal, seed, HW4 file, presets"},
  PanelInfo{"step",       "Step view",          PanelSlot::kCentreTab, true, 1.0f, &DrawStepPanel,
            "Q, Kᵀ, S, Vᵀ and O with the current tiles, and S_ij, P~_ij large"},
  PanelInfo{"algorithm",  "Algorithm",          PanelSlot::kCentreTab, true, 1.0f, &DrawAlgorithmPanel,
            "the pseudocode and the CUDA kernel of the loop order, the current phase's lines marked, with numbers"},
  PanelInfo{"traffic",    "Traffic",            PanelSlot::kCentreTab, true, 1.0f, &DrawTrafficPanel,
            "HBM ↔ SRAM ↔ compute, SRAM occupancy, flash against standard attention, bytes against N"},
  PanelInfo{"statistics", "Running statistics", PanelSlot::kRight,     true, 0.56f, &DrawStatisticsPanel,
            "m_i and ℓ_i per row with their previous values, α, their history over j"},
  PanelInfo{"output",     "Output row O_i",     PanelSlot::kRight,     true, 0.44f, &DrawOutputPanel,
            "O_i converging to the exact reference row, with the error"},
  PanelInfo{"timeline",   "Timeline",           PanelSlot::kBottom,    true, 0.0f, &DrawTimelinePanel,
            "the scrubber with tile-iteration marks and the narration line"},
  PanelInfo{"vortex",     "Vortex",             PanelSlot::kCentreTab, true, 1.0f, &DrawVortexPanel,
            "the step on the Vortex GPGPU: cores → warps → threads, registers, local memory, the 8×8 tensor unit"},
  PanelInfo{"benchmark",  "Benchmark",          PanelSlot::kCentreTab, true, 1.0f, &DrawBenchmarkPanel,
            "the CUDA kernels timed against N (log-log), speedup over naive, PyTorch's backends from a CSV"},
  PanelInfo{"gpu",        "Live GPU",           PanelSlot::kCentreTab, true, 1.0f, &DrawLiveGpuPanel,
            "the real CUDA kernels on this problem: output through CUDA-GL interop, timing, m/l cross-check"},
};
// clang-format on

}  // namespace

std::span<const PanelInfo> Panels() { return kPanels; }

std::string PanelTitle(const PanelInfo& panel, const Model& model) {
  const bool backward = model.has_problem() && model.problem().backward();
  const std::string_view id = panel.id;
  if (backward && id == "statistics") return PlainNotation("Row statistics: L_i, D_i");
  if (backward && id == "output") return PlainNotation("Output row dQ_i");
  return PlainNotation(panel.title);
}

const PanelInfo* FindPanel(std::string_view id) {
  for (const PanelInfo& p : kPanels)
    if (id == p.id) return &p;
  return nullptr;
}

bool IsPanelOpen(const UiState& ui, const PanelInfo& panel) {
  const auto it = ui.panel_open.find(panel.id);
  return it == ui.panel_open.end() ? panel.open_by_default : it->second;
}

bool PanelApplies(const PanelInfo& panel, const Model& model) {
  if (!model.decode_mode() && !model.ring_mode()) return true;
  for (const std::string_view id : {"lesson", "playback", "problem", "step", "traffic", "timeline"})
    if (id == panel.id) return true;
  return false;
}

bool PanelShown(const UiState& ui, const Model& model, const PanelInfo& panel) {
  return IsPanelOpen(ui, panel) && PanelApplies(panel, model);
}

void SetPanelOpen(UiState& ui, const PanelInfo& panel, bool open) { ui.panel_open[panel.id] = open; }

bool FocusPanel(UiState& ui, std::string_view id) {
  const PanelInfo* panel = FindPanel(id);
  if (!panel) return false;
  SetPanelOpen(ui, *panel, true);
  if (panel->slot == PanelSlot::kCentreTab) ui.focus_tab = panel->id;
  return true;
}

std::string PanelIdList() {
  std::string list;
  for (const PanelInfo& p : kPanels) {
    if (!list.empty()) list += ", ";
    list += p.id;
  }
  return list;
}

}  // namespace flashviz
