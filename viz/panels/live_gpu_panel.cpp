// The live GPU view: the real kernels on the problem being stepped through.
// [SECTION] availability (why it is off, when it is)
// [SECTION] controls: run, re-run on change, the variant to time and draw, the host-copy comparison
// [SECTION] timings and the drawing path (interop or host copy, and why)
// [SECTION] the cross-check banner and the current tile's m_i, ℓ_i: model against GPU
// [SECTION] the images: O, |O − O_ref|, S and P, drawn by CUDA into GL textures
#include <imgui.h>

#include <cmath>

#include "kernels/common/format.h"
#include "kernels/cuda/backward/backward_registry.h"
#include "kernels/cuda/registry.h"
#include "viz/colormap.h"
#include "viz/live_gpu.h"
#include "viz/panels/panels.h"
#include "viz/theme.h"
#include "viz/widgets.h"

namespace flashviz {
namespace {

constexpr const char* kViewHelp =
    "The kernels of kernels/cuda run on the current problem (one head, fp32). Their output is drawn straight "
    "from device memory into OpenGL textures through CUDA-GL interop: a colormap kernel writes into the mapped "
    "texture, with no copy through the host. When the GL context is not on the CUDA GPU (Mesa, another GPU) "
    "CUDA cannot register the textures and the same kernel's pixels are copied through the host instead; the "
    "view says which path it is on.";

constexpr const char* kCrossCheckHelp =
    "An instrumented kernel runs exactly the tiles of the step view (B_r, B_c, loop order, scale, causal): "
    "flash1 (Algorithm 1, one launch per K/V tile) for the kv order, flash2_row (one thread per query row) for "
    "the q order. After every tile iteration it records m_i and l_i of every row, and the O_i row under the "
    "cursor, into a debug buffer. They are compared value by value with the stepper (float64): they must agree "
    "to fp32 rounding. A mismatch is shown, never hidden.";

void DrawUnavailable(const LiveGpuView& gpu) {
  const Palette& palette = GetPalette();
  ImGui::PushStyleColor(ImGuiCol_Text, palette.warn);
  ImGui::TextWrapped("GPU view off: %s.", gpu.unavailable_reason.c_str());
  ImGui::PopStyleColor();
  ImGui::Spacing();
  ImGui::TextWrapped(
      "With an NVIDIA GPU this view runs the CUDA kernels on the problem you are stepping through, draws O, "
      "|O - O_ref| and (for the kernels that materialize them) S and P through CUDA-GL interop, times the "
      "kernel, and checks the GPU's running m_i and l_i against the model tile by tile. Everything else in "
      "flashviz works without a GPU.");
}

// The registry variant picker: variants that cannot run this shape are listed with their reason, disabled.
// The backward pass picks from the backward registry (request.backward_variant), the forward pass from the
// forward one (request.variant).
void DrawVariantPicker(const Model& model, LiveGpuRequest& request) {
  cuda::AttentionShape shape;
  shape.n = model.problem().n;
  shape.d = model.problem().d;
  shape.scale = static_cast<float>(model.problem().scale);
  shape.causal = model.problem().causal;
  const bool backward = model.problem().backward();
  std::string& chosen = backward ? request.backward_variant : request.variant;
  const cuda::VariantInfo* selected = backward ? cuda::FindBackwardInfo(chosen) : cuda::FindVariantInfo(chosen);
  ImGui::SetNextItemWidth(220.0f * ImGui::GetIO().FontGlobalScale + 120.0f);
  if (ImGui::BeginCombo("kernel", selected ? selected->name : chosen.c_str())) {
    for (const cuda::VariantInfo& variant : backward ? cuda::BackwardCatalogue() : cuda::Catalogue()) {
      const auto why = cuda::CatalogueNotApplicable(variant, shape, cuda::DType::kFp32);
      ImGui::BeginDisabled(why.has_value());
      if (ImGui::Selectable(variant.name, chosen == variant.id)) chosen = variant.id;
      ImGui::EndDisabled();
      if (ImGui::IsItemHovered(ImGuiHoveredFlags_AllowWhenDisabled))
        ImGui::SetTooltip("%s\n%s", why ? why->c_str() : variant.changes, variant.workspace);
    }
    ImGui::EndCombo();
  }
  ImGui::SameLine();
  HelpMarker(backward ? "The backward variant timed on this problem (one head, fp32, on the O and L the model's "
                        "forward pass saved) and whose dQ, dK and dV are drawn."
                      : "The variant timed on this problem (one head, fp32) and whose output is drawn. naive and "
                        "tiled materialize S and P in device memory, so those are drawn too.");
}

void DrawTimings(const LiveGpuView& gpu) {
  const Palette& palette = GetPalette();
  if (!gpu.variant_id.empty()) {
    if (gpu.variant_repeats > 0) {
      ImGui::Text("%s: median %.3f ms, min %.3f ms over %d runs; max %s = %s", gpu.variant_id.c_str(),
                  gpu.variant_ms_median, gpu.variant_ms_min, gpu.variant_repeats,
                  gpu.backward ? "|dQ - dQ_ref|" : "|O - O_ref|", Num(gpu.variant_max_error, 3).c_str());
      ImGui::SameLine();
      HelpMarker("CUDA events around the variant's launch, one warm-up first; the error is against the float64 "
                 "reference of the step view.");
    }
    if (!gpu.variant_note.empty())
      ImGui::TextColored(ImGui::ColorConvertU32ToFloat4(palette.dim), "%s", gpu.variant_note.c_str());
  }
  if (!gpu.probe_kernel.empty())
    ImGui::Text("%s on the model's tiles: %.3f ms", gpu.probe_kernel.c_str(), gpu.probe_ms);
  ImGui::PushStyleColor(ImGuiCol_Text, gpu.interop ? palette.good : palette.warn);
  ImGui::TextWrapped("%s (colormaps %.3f ms)", gpu.path_note.c_str(), gpu.draw_ms);
  ImGui::PopStyleColor();
}

// The verdict: quiet when the GPU agrees, a banner in the "bad" colour when it does not.
void DrawVerdict(const LiveGpuView& gpu) {
  const Palette& palette = GetPalette();
  if (gpu.agrees) {
    ImGui::PushStyleColor(ImGuiCol_Text, palette.good);
    ImGui::TextWrapped("%s", gpu.summary.c_str());
    ImGui::PopStyleColor();
  } else {
    // Loud: a banner in the "bad" colour that cannot be scrolled past unnoticed.
    const ImVec2 start = ImGui::GetCursorScreenPos();
    const float width = ImGui::GetContentRegionAvail().x;
    ImGui::GetWindowDrawList()->AddRectFilled(
        start, ImVec2(start.x + width, start.y + ImGui::GetTextLineHeight() * 3.2f), palette.bad, 4.0f);
    ImGui::PushStyleColor(ImGuiCol_Text, IM_COL32(255, 255, 255, 255));
    ImGui::TextWrapped("MISMATCH between the GPU and the model. %s", gpu.summary.c_str());
    ImGui::PopStyleColor();
    ImGui::Dummy(ImVec2(0, ImGui::GetTextLineHeight()));
  }
}

constexpr const char* kBackwardCrossCheckHelp =
    "An instrumented flash2_bwd runs exactly the tiles of the step view (B_r, B_c, scale, causal) in fp32: one block "
    "per K/V tile j with dK_j and dV_j in shared memory, the Q tiles that meet it in order, dQ_i added into HBM by "
    "atomicAdd. After every tile iteration it records dK_j and dV_j into a debug buffer; they are compared value by "
    "value with the stepper (float64), as are the final dQ, dK and dV: they must agree to fp32 rounding.";

// The backward pass: dK_j and dV_j of the cursor's tile pair (or the last pair its K/V tile finished), model
// against GPU, key by key.
void DrawBackwardCrossCheck(const Model& model, const LiveGpuView& gpu) {
  SectionTitle("Cross-check: the GPU's dK_j and dV_j against the model", kBackwardCrossCheckHelp);
  if (!gpu.probe_note.empty()) {
    ImGui::TextColored(ImGui::ColorConvertU32ToFloat4(GetPalette().warn), "%s", gpu.probe_note.c_str());
    return;
  }
  if (!gpu.has_backward_probe()) return;
  DrawVerdict(gpu);
  const StepState& state = model.state();
  const int j = state.info.j;
  int i = state.info.i;
  if (j < 0 || j >= gpu.tc) {
    ImGui::TextDisabled("Step to a phase of a K/V tile to compare its dK_j and dV_j.");
    return;
  }
  // The last tile iteration finished by this step: this one at grad_k (its last phase), the one before it earlier
  // in the pair, the last Q tile's at write_dk_dv.
  if (state.info.phase == Phase::kWriteGrads) i = gpu.tr - 1;
  else if (state.info.phase != Phase::kGradK) --i;
  if (i < 0 || i >= gpu.tr || std::isnan(gpu.gpu_dk_after[gpu.BackwardIndex(i, j, 0, 0)])) {
    ImGui::TextDisabled("K/V tile %d has not finished a tile iteration yet.", j);
    return;
  }
  MathTextF("K/V tile j = %d after Q tile i = %d (the values the GPU recorded at the end of that tile iteration)", j,
            i);
  const int keys = std::min(gpu.bc, model.problem().n - j * gpu.bc), d = gpu.d;
  const ImGuiTableFlags flags = ImGuiTableFlags_Borders | ImGuiTableFlags_RowBg | ImGuiTableFlags_ScrollY |
                                ImGuiTableFlags_SizingStretchProp;
  const float height = std::max(3.5f * ImGui::GetTextLineHeightWithSpacing(),
                                std::min(std::min(keys + 1.5f, 9.5f) * ImGui::GetTextLineHeightWithSpacing(),
                                         ImGui::GetContentRegionAvail().y / 3.0f));
  if (!ImGui::BeginTable("backward-crosscheck", 7, flags, ImVec2(0, height))) return;
  ImGui::TableSetupScrollFreeze(0, 1);
  for (const char* heading : {"key", "dK[.,0] model", "dK[.,0] GPU", "max |ddK|", "dV[.,0] model", "dV[.,0] GPU",
                              "max |ddV|"})
    ImGui::TableSetupColumn(heading);
  ImGui::TableHeadersRow();
  for (int c = 0; c < keys; ++c) {
    double dk_error = 0, dv_error = 0;
    for (int e = 0; e < d; ++e) {
      const std::size_t at = gpu.BackwardIndex(i, j, c, e);
      dk_error = std::max(dk_error, std::fabs(gpu.gpu_dk_after[at] - gpu.model_dk_after[at]));
      dv_error = std::max(dv_error, std::fabs(gpu.gpu_dv_after[at] - gpu.model_dv_after[at]));
    }
    const std::size_t first = gpu.BackwardIndex(i, j, c, 0);
    ImGui::TableNextRow();
    ImGui::TableNextColumn();
    ImGui::Text("%d", j * gpu.bc + c);
    for (const std::string& cell : {Num(gpu.model_dk_after[first], 7), Num(gpu.gpu_dk_after[first], 7),
                                    Num(dk_error, 2), Num(gpu.model_dv_after[first], 7),
                                    Num(gpu.gpu_dv_after[first], 7), Num(dv_error, 2)}) {
      ImGui::TableNextColumn();
      ImGui::TextUnformatted(cell.c_str());
    }
  }
  ImGui::EndTable();
}

void DrawCrossCheck(const Model& model, const LiveGpuView& gpu) {
  if (gpu.backward) return DrawBackwardCrossCheck(model, gpu);
  SectionTitle("Cross-check: the GPU's m_i and l_i against the model", kCrossCheckHelp);
  if (!gpu.probe_note.empty()) {
    ImGui::TextColored(ImGui::ColorConvertU32ToFloat4(GetPalette().warn), "%s", gpu.probe_note.c_str());
    return;
  }
  if (!gpu.has_probe()) return;
  DrawVerdict(gpu);

  // The current tile's rows at the cursor's K/V tile (or the last one the tile finished).
  const StepState& state = model.state();
  const int i = state.info.i;
  if (i < 0 || i >= gpu.tr) {
    ImGui::TextDisabled("Step to a phase of a Q tile to compare its rows.");
    return;
  }
  int j = state.info.j;
  if (j < 0 && !state.history_j.empty()) j = state.history_j.back();
  if (j < 0 || j >= gpu.tc || std::isnan(gpu.GpuL(i, j, 0))) {
    ImGui::TextDisabled("Q tile %d has not finished a tile iteration yet.", i);
    return;
  }
  MathTextF("Q tile i = %d after K/V tile j = %d (the values the GPU recorded at the end of that tile iteration)", i,
            j);
  const int rows = std::min(gpu.br, model.problem().n - i * gpu.br);
  const ImGuiTableFlags flags = ImGuiTableFlags_Borders | ImGuiTableFlags_RowBg | ImGuiTableFlags_ScrollY |
                                ImGuiTableFlags_SizingStretchProp;
  // At most a third of what is left, so the images below still show on a 720-pixel screen (it scrolls).
  const float height = std::max(3.5f * ImGui::GetTextLineHeightWithSpacing(),
                                std::min(std::min(rows + 1.5f, 9.5f) * ImGui::GetTextLineHeightWithSpacing(),
                                         ImGui::GetContentRegionAvail().y / 3.0f));
  if (!ImGui::BeginTable("crosscheck", 7, flags, ImVec2(0, height))) return;
  ImGui::TableSetupScrollFreeze(0, 1);
  for (const char* heading : {"row", "m model", "m GPU", "|dm|", "l model", "l GPU", "|dl|/l"})
    ImGui::TableSetupColumn(heading);
  ImGui::TableHeadersRow();
  for (int r = 0; r < rows; ++r) {
    const double mm = gpu.ModelM(i, j, r), ml = gpu.ModelL(i, j, r);
    const double gm = gpu.GpuM(i, j, r), gl = gpu.GpuL(i, j, r);
    const double dm = std::isinf(mm) && gm == mm ? 0.0 : std::fabs(gm - mm);
    const double dl = ml > 0 ? std::fabs(gl - ml) / ml : std::fabs(gl);
    ImGui::TableNextRow();
    ImGui::TableNextColumn();
    ImGui::Text("%d", i * gpu.br + r);
    for (const std::string& cell : {Num(mm, 7), Num(gm, 7), Num(dm, 2), Num(ml, 7), Num(gl, 7), Num(dl, 2)}) {
      ImGui::TableNextColumn();
      ImGui::TextUnformatted(cell.c_str());
    }
  }
  ImGui::EndTable();
}

void DrawImages(const LiveGpuView& gpu) {
  if (gpu.images.empty()) return;
  SectionTitle("Kernel output, drawn by CUDA",
               "Each image is coloured on the GPU by a colormap kernel; when a matrix is larger than its texture, "
               "a texel shows the value of largest magnitude among the cells it covers.");
  const float avail = ImGui::GetContentRegionAvail().x;
  const int per_row = avail > 900.0f ? 4 : (avail > 450.0f ? 2 : 1);
  const float side = std::max(80.0f, avail / static_cast<float>(per_row) - ImGui::GetStyle().ItemSpacing.x);
  // Title, legend and "max" lines around each image: the images take the height that is left (one row of
  // them fits without scrolling when the window is tall enough).
  const float text_h = 3.6f * ImGui::GetTextLineHeightWithSpacing();
  const float max_image_h = std::max(60.0f, ImGui::GetContentRegionAvail().y - text_h);
  for (std::size_t k = 0; k < gpu.images.size(); ++k) {
    const LiveGpuImage& image = gpu.images[k];
    if (k % static_cast<std::size_t>(per_row) != 0) ImGui::SameLine();
    ImGui::BeginGroup();
    MathText(image.title.c_str());
    // Tall matrices (O is N × d) are shown at most 1.5 times as tall as wide.
    const float aspect = std::min(1.5f, static_cast<float>(image.rows) / static_cast<float>(std::max(1, image.cols)));
    const float height = std::min(side * aspect, max_image_h);
    const ImVec2 size(std::min(side, height / std::max(aspect, 1e-3f)), height);
    const ImVec2 origin = ImGui::GetCursorScreenPos();
    ImGui::Image(reinterpret_cast<ImTextureID>(static_cast<std::intptr_t>(image.gl_texture)), size);
    if (ImGui::IsItemHovered()) {
      const ImVec2 mouse = ImGui::GetIO().MousePos;
      const int col = std::clamp(static_cast<int>((mouse.x - origin.x) / size.x * image.cols), 0, image.cols - 1);
      const int row = std::clamp(static_cast<int>((mouse.y - origin.y) / size.y * image.rows), 0, image.rows - 1);
      ImGui::SetTooltip("%s\nrow %d, column %d of %d × %d\n(%d × %d texels on the GPU)", image.title.c_str(), row,
                        col, image.rows, image.cols, image.width, image.height);
    }
    const ColorScale scale = image.diverging ? ColorScale::Symmetric(std::max(std::fabs(image.lo), std::fabs(image.hi)))
                                             : ColorScale{ColorScale::Kind::kSequential, image.lo, image.hi};
    DrawColorLegend("", scale, size.x * 0.6f);
    if (image.max_value > 0) ImGui::Text("max %s", Num(image.max_value, 3).c_str());
    ImGui::EndGroup();
  }
}

}  // namespace

void DrawLiveGpuPanel(const Model& model, UiState& ui) {
  const LiveGpuView& gpu = model.live_gpu();
  SectionTitle("The real kernels on this problem", kViewHelp);
  if (!gpu.built_with_cuda || !gpu.unavailable_reason.empty()) {
    DrawUnavailable(gpu);
    return;
  }
  ImGui::Text("Device: %s", gpu.device.c_str());
  LiveGpuRequest& request = LiveGpuState(ui);
  if (ImGui::Button("Run on GPU")) request.run = true;
  if (ImGui::IsItemHovered()) ImGui::SetTooltip("Run the instrumented kernel and the chosen variant now (G)");
  ImGui::SameLine();
  ImGui::Checkbox("re-run when the problem changes", &request.rerun_on_change);
  DrawVariantPicker(model, request);
  ImGui::Checkbox("draw through the host (compare the paths)", &request.force_host_copy);
  ImGui::SameLine();
  HelpMarker("Off: CUDA writes into the GL textures directly when it can. On: the pixels are copied through the "
             "host, as they are when GL runs on Mesa or another GPU. The images must look the same.");
  ImGui::Separator();

  if (!gpu.has_result) {
    ImGui::TextDisabled("Not run on this problem yet: press Run on GPU.");
    return;
  }
  if (gpu.problem_version != model.problem_version())
    ImGui::TextColored(ImGui::ColorConvertU32ToFloat4(GetPalette().warn),
                       "These results are for the previous problem: run again.");
  if (!gpu.error.empty()) {
    ImGui::PushStyleColor(ImGuiCol_Text, GetPalette().bad);
    ImGui::TextWrapped("The GPU run failed: %s", gpu.error.c_str());
    ImGui::PopStyleColor();
  }
  DrawTimings(gpu);
  ImGui::Separator();
  DrawCrossCheck(model, gpu);
  ImGui::Separator();
  DrawImages(gpu);
}

}  // namespace flashviz
