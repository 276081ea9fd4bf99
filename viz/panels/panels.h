// The draw function of every panel, one file each in viz/panels/ (registered in panel_table.cpp).
#pragma once

#include "viz/model.h"
#include "viz/ui_state.h"

namespace flashviz {

void DrawPlaybackPanel(const Model& model, UiState& ui);    // playback_panel.cpp
void DrawProblemPanel(const Model& model, UiState& ui);     // problem_panel.cpp
void DrawStepPanel(const Model& model, UiState& ui);        // step_panel.cpp: Q, Kᵀ, S, Vᵀ, O and the tile
// backward_step_panel.cpp: DrawStepPanel's view of the backward pass (the HBM columns, the tiles on chip)
void DrawBackwardStepPanel(const Model& model, UiState& ui);
// decode_step_panel.cpp: decoding's step view (the pool, the block table, the heads, the split and the merge) and its
// traffic tab (the step and traffic panels hand over to them in decode mode; the timeline draws decoding itself)
void DrawDecodeStepPanel(const Model& model, UiState& ui);
void DrawDecodeTrafficPanel(const Model& model, UiState& ui);
// ring_step_panel.cpp: ring attention's step view (the devices side by side, the ring, the cost model's timeline) and
// its traffic tab (per device HBM and link bytes), handed over to in ring mode as decoding's are
void DrawRingStepPanel(const Model& model, UiState& ui);
void DrawRingTrafficPanel(const Model& model, UiState& ui);
void DrawTrafficPanel(const Model& model, UiState& ui);     // traffic_panel.cpp
void DrawStatisticsPanel(const Model& model, UiState& ui);  // statistics_panel.cpp: m_i, ℓ_i, α
void DrawOutputPanel(const Model& model, UiState& ui);      // output_panel.cpp: O_i against the reference
void DrawTimelinePanel(const Model& model, UiState& ui);    // timeline_panel.cpp: scrubber and narration
void DrawVortexPanel(const Model& model, UiState& ui);      // vortex_panel.cpp: the step on the Vortex GPGPU
void DrawBenchmarkPanel(const Model& model, UiState& ui);   // benchmark_panel.cpp: the CUDA kernels against N
void DrawLiveGpuPanel(const Model& model, UiState& ui);     // live_gpu_panel.cpp: the real kernels on this problem
void DrawLessonPanel(const Model& model, UiState& ui);      // lesson_panel.cpp: guided lessons, stop by stop
void DrawAlgorithmPanel(const Model& model, UiState& ui);   // algorithm_panel.cpp: pseudocode and kernel in step

}  // namespace flashviz
