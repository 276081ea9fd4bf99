// The live GPU view as the panels see it: plain data, no CUDA. The app (app/interop, CUDA builds)
// runs the kernels on the current problem, draws their output into GL textures and fills this; the live GPU
// panel and the m/ℓ view only read it. In builds without CUDA it stays empty and says why.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "viz/ui_state.h"

namespace flashviz {

// One matrix the GPU drew into a GL texture (straight from device memory, or through a host copy).
struct LiveGpuImage {
  std::string title;        // "O (GPU)", "|O − O_ref|", "S = scale·QKᵀ", "P = softmax(S)"
  unsigned gl_texture = 0;  // GL texture name, drawn as an ImTextureID
  int width = 0, height = 0;  // texels
  int rows = 0, cols = 0;     // the matrix (texels pool cells when the matrix is larger)
  double lo = 0, hi = 1;      // the values at the two ends of the colour map
  bool diverging = true;      // diverging (signed) or sequential ([0, 1]) map
  double max_value = 0;       // e.g. the largest |O − O_ref|
};

struct LiveGpuView {
  // --- can it run at all --------------------------------------------------------------------------------
  bool built_with_cuda = false;
  std::string unavailable_reason = "this flashviz was built without CUDA: the live GPU view needs the CUDA "
                                   "toolkit at build time and an NVIDIA GPU at run time";
  std::string device;  // "NVIDIA H200 (sm_90, 132 SMs)"

  // --- the last run ---------------------------------------------------------------------------------------
  bool has_result = false;
  std::uint64_t problem_version = 0;  // the Model::problem_version() it ran on (stale when it differs)
  std::string error;                  // why the last run failed ("" when it worked)
  bool interop = false;               // true: CUDA wrote straight into GL textures
  std::string path_note;              // what the drawing path is, or why it is the host copy
  float draw_ms = 0;                  // colormap kernels (and host copies) for all images
  std::vector<LiveGpuImage> images;

  // The registry variant timed on the problem (B = H = 1, fp32) and whose output is drawn.
  std::string variant_id, variant_name, variant_note;  // note: why S/P are not shown, or not applicable
  float variant_ms_median = 0, variant_ms_min = 0;
  int variant_repeats = 0;
  double variant_max_error = 0;  // max |O − O_ref| against the float64 reference

  // The instrumented kernel on the model's tiles (flash1 for kv, flash2_row for q) and its cross-check.
  std::string probe_kernel;
  std::string probe_note;  // why the cross-check did not run (tiles too large for it), or ""
  float probe_ms = 0;
  int tr = 0, tc = 0, br = 0, d = 0, probe_tile = 0, probe_row = 0;
  std::vector<float> gpu_m_after, gpu_l_after;        // [(i·T_c + j)·B_r + r]; NaN where not run
  std::vector<double> model_m_after, model_l_after;   // the stepper's, same layout
  std::vector<float> gpu_o_row_after;                 // [j·d + e] for the probed row
  std::vector<double> model_o_row_after;
  bool agrees = false;
  std::string summary;  // one line: agrees / DISAGREES, the largest differences, where
  double max_m_error = 0, max_l_rel_error = 0, max_o_error = 0;
  int worst_i = -1, worst_j = -1, worst_row = -1;

  // The backward pass: the instrumented flash2_bwd's dK_j and dV_j after every tile iteration, and the stepper's,
  // [((j·T_r + i)·B_c + c)·d + e]; NaN where not run. The images are then dQ, |dQ − dQ_ref|, dK and dV.
  bool backward = false;  // the last run was of the backward pass
  int bc = 0;
  std::vector<float> gpu_dk_after, gpu_dv_after;
  std::vector<double> model_dk_after, model_dv_after;
  double max_dk_error = 0, max_dv_error = 0, max_grad_error = 0;
  bool has_backward_probe() const { return !gpu_dk_after.empty(); }
  std::size_t BackwardIndex(int i, int j, int c, int e) const {
    return ((static_cast<std::size_t>(j) * static_cast<std::size_t>(tr) + static_cast<std::size_t>(i)) *
                static_cast<std::size_t>(bc) + static_cast<std::size_t>(c)) * static_cast<std::size_t>(d) +
           static_cast<std::size_t>(e);
  }

  bool has_probe() const { return !gpu_m_after.empty(); }
  // GPU and model values of row r of tile i after tile iteration j (NaN where the GPU has none).
  float GpuM(int i, int j, int r) const { return gpu_m_after[Index(i, j, r)]; }
  float GpuL(int i, int j, int r) const { return gpu_l_after[Index(i, j, r)]; }
  double ModelM(int i, int j, int r) const { return model_m_after[Index(i, j, r)]; }
  double ModelL(int i, int j, int r) const { return model_l_after[Index(i, j, r)]; }
  std::size_t Index(int i, int j, int r) const {
    return (static_cast<std::size_t>(i) * static_cast<std::size_t>(tc) + static_cast<std::size_t>(j)) *
               static_cast<std::size_t>(br) + static_cast<std::size_t>(r);
  }
};

// What the panel asks the app for (kept in UiState under the panel's id, "gpu").
struct LiveGpuRequest {
  bool run = false;              // request: run now
  bool rerun_on_change = true;   // run again whenever the problem changes while the panel is open
  bool force_host_copy = false;  // draw through the host even where interop works (to compare the paths)
  std::string variant = "naive"; // the registry variant to time and draw (naive materializes S and P)
  std::string backward_variant = "flash2_bwd";  // the backward registry's, for the backward pass
  int repeats = 10;              // timed runs after one warm-up
};

inline LiveGpuRequest& LiveGpuState(UiState& ui) { return PanelState<LiveGpuRequest>(ui, "gpu"); }
inline const LiveGpuRequest& LiveGpuState(const UiState& ui) { return PanelState<LiveGpuRequest>(ui, "gpu"); }

}  // namespace flashviz
