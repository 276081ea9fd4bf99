// The problem: presets, N, d, the tiles (from the SRAM size M as the assignment does, or B_r and B_c given),
// the loop order, the scale, causal masking, the seed, or an HW4 file with a batch picker. Invalid values are
// explained in place (ProblemRequestError, GuiProblemError) and never applied; valid edits apply when the
// field is left or a button is pressed.
#include <algorithm>
#include <cmath>

#include <imgui.h>
#include <imgui_stdlib.h>

#include "kernels/common/format.h"
#include "viz/file_picker.h"
#include "viz/panels/panels.h"
#include "viz/widgets.h"

namespace flashviz {
namespace {

// Applies when a field is left after editing, or at once for buttons, checkboxes and radio buttons.
bool Committed(bool changed) { return (changed && !ImGui::IsItemActive()) || ImGui::IsItemDeactivatedAfterEdit(); }

// The reason `form` cannot be shown, or empty. A file's N and d are checked by the app when it reads it.
std::string FormError(const ProblemForm& form) {
  if (form.ring) {
    const RingRequest request = form.ToRingRequest();
    if (auto error = RingRequestError(request)) return *error;
    if (auto error = RingGuiProblemError(ResolveRingProblem(request))) return *error;
    return {};
  }
  if (form.decode) {
    const DecodeRequest request = form.ToDecodeRequest();
    if (auto error = DecodeRequestError(request)) return *error;
    if (auto error = DecodeGuiProblemError(ResolveDecodeProblem(request, form.seed))) return *error;
    return {};
  }
  if (!form.input_path.empty()) return {};
  const ProblemRequest request = form.ToRequest();
  if (auto error = ProblemRequestError(request)) return *error;
  const AttentionProblem problem = ResolveProblem(request);
  if (auto error = GuiProblemError(problem)) return *error;
  return {};
}

void Label(const char* text, const char* help, float label_w) {
  ImGui::AlignTextToFramePadding();
  MathText(text);
  if (help) {
    ImGui::SameLine();
    HelpMarker(help);
  }
  ImGui::SameLine(label_w);
}

void IntField(const char* label, const char* id, const char* help, int* value, int step, int fast, float label_w,
              bool& commit) {
  Label(label, help, label_w);
  ImGui::SetNextItemWidth(-1);
  commit |= Committed(ImGui::InputInt(id, value, step, fast));
}

void ReportProblem(const std::string& error, const UiState& ui) {
  const std::string& shown = !error.empty() ? error : ui.form_status.problem_error;
  if (shown.empty()) return;
  ImGui::PushTextWrapPos(0);
  MathTextColored(GetPalette().bad, shown.c_str());
  ImGui::PopTextWrapPos();
}

// Decoding's fields (kernels/cpu/decode.h): the cache, the heads, the query rows, the pages and the splits.
void DrawDecodeFields(const Model& model, UiState& ui, bool& commit, float label_w) {
  ProblemForm& f = ui.form;
  IntField("N keys", "##kv-len", "Keys in the KV cache: the tokens generated so far.", &f.kv_len, 1, 64, label_w,
           commit);
  IntField("d", "##d", "Head dimension: the length of each query, key and value vector.", &f.d, 1, 8, label_w, commit);
  IntField("H", "##heads", "Query heads.", &f.heads, 1, 4, label_w, commit);
  IntField("G", "##kv-heads",
           "KV heads (grouped-query attention): G divides H, and query head h reads KV head ⌊h·G/H⌋, so H/G "
           "consecutive query heads share one K/V chunk loaded once. G = H is multi-head attention, G = 1 "
           "multi-query attention.",
           &f.kv_heads, 1, 1, label_w, commit);
  IntField("R", "##q-rows", "Query rows per head: 1 for one new token, a few for speculative decoding.", &f.q_rows, 1,
           1, label_w, commit);
  IntField("P", "##page",
           "Tokens per block of the paged KV cache: the cache is a pool of blocks found through a block table "
           "(shuffled from the seed, as an allocator serving many sequences leaves it).",
           &f.page, 1, 8, label_w, commit);
  Label("splits",
        "The keys cut into chunks of whole pages that run in parallel, each writing a partial (m_s, ℓ_s, O_s). From M: "
        "the "
        "largest chunk whose K, V, Q rows, scores, O_s and statistics fit in M (2·C·d + rows·(2d + C + 2) "
        "floats).",
        label_w);
  int splits = f.splits_from_sram ? 0 : 1;
  commit |= Committed(ImGui::RadioButton("from M", &splits, 0));
  ImGui::SameLine();
  commit |= Committed(ImGui::RadioButton("given", &splits, 1));
  f.splits_from_sram = splits == 0;
  if (!f.splits_from_sram) IntField("count", "##splits", "The number of splits.", &f.splits, 1, 4, label_w, commit);
  Label("M (bytes)", "On-chip SRAM size M in bytes: the budget a split's tiles are shown against.", label_w);
  ImGui::SetNextItemWidth(-1);
  long long sram = f.sram_bytes;
  commit |= Committed(ImGui::InputScalar("##sram", ImGuiDataType_S64, &sram, nullptr, nullptr, "%lld"));
  f.sram_bytes = sram;
  Label("scale", "The factor on q·k before the softmax: 1/√d by default.", label_w);
  int scale_mode = static_cast<int>(f.scale_mode);
  commit |= Committed(ImGui::RadioButton("1/√d", &scale_mode, 0));
  ImGui::SameLine();
  commit |= Committed(ImGui::RadioButton("none", &scale_mode, 1));
  f.scale_mode = static_cast<ProblemForm::ScaleMode>(scale_mode);
  Label("seed", "Q, K, V uniform in [−3, 3] and the block table's order, from this seed.", label_w);
  ImGui::SetNextItemWidth(-1);
  long long seed = static_cast<long long>(f.seed);
  commit |= Committed(ImGui::InputScalar("##seed", ImGuiDataType_S64, &seed, nullptr, nullptr, "%lld"));
  f.seed = static_cast<std::uint64_t>(std::max(0LL, seed));

  const std::string error = FormError(f);
  ReportProblem(error, ui);
  if (model.decode_mode()) {
    const DecodeProblem& p = model.decode_problem();
    ImGui::PushTextWrapPos(0);
    MathTextColored(GetPalette().dim,
                    Sprintf("%d query heads over %d KV heads (%d a group), %d split%s of ≤ %d keys (%s), %d pages "
                            "of %d, scale %.4g, %lld steps",
                            p.shape.heads, p.shape.kv_heads, p.group(), p.splits, p.splits == 1 ? "" : "s",
                            p.MaxSplitKeys(), p.splits_from_sram ? "from M" : "given", p.pages(), p.page, p.shape.scale,
                            static_cast<long long>(model.step_count()))
                        .c_str());
    ImGui::PopTextWrapPos();
  }
  if (commit && error.empty()) ui.requests.Push(UiRequest::kApplyForm);
}

// Ring attention's fields (kernels/cpu/ring.h): the sequence, the devices and their slices, the mask, each device's
// tiles, the cost model's rates.
void DrawRingFields(const Model& model, UiState& ui, bool& commit, float label_w) {
  ProblemForm& f = ui.form;
  IntField("N", "##ring-n", "Sequence length: query rows and keys, cut into slices over the devices.", &f.n, 1, 8,
           label_w, commit);
  IntField("d", "##ring-d", "Head dimension: the length of each query, key and value vector.", &f.d, 1, 8, label_w,
           commit);
  IntField("P", "##ring-devices",
           "Devices in the ring (2 or more). Each holds a slice of Q, K and V; at ring step s device p holds the "
           "K/V that device (p − s) mod P started with.",
           &f.ring_devices, 1, 1, label_w, commit);
  Label("slices",
        "contiguous: device p holds chunk p of P. zigzag: 2P chunks, device p holds chunks p and 2P − 1 − p, so "
        "that under the causal mask every device has the same work at every ring step.",
        label_w);
  int zigzag = f.zigzag ? 1 : 0;
  const float radio_x = ImGui::GetCursorPosX();
  commit |= Committed(ImGui::RadioButton("contiguous", &zigzag, 0));
  ImGui::SameLine();
  WrapIfNoRoom(RadioButtonWidth("zigzag"), radio_x);
  commit |= Committed(ImGui::RadioButton("zigzag", &zigzag, 1));
  f.zigzag = zigzag == 1;
  Label("causal", "Mask keys after the query (key index > query index): a device skips the K/V slices that lie "
                  "wholly after its rows.", label_w);
  commit |= Committed(ImGui::Checkbox("##ring-causal", &f.causal));
  Label("tiles", "Each device runs FlashAttention-2 over its rows and the K/V it holds, in B_r × B_c tiles: from M "
                 "(B_c = ⌈M/4d⌉, B_r = min(B_c, d)) or given.", label_w);
  int tiles = f.tiles_from_sram ? 0 : 1;
  commit |= Committed(ImGui::RadioButton("from M##ring", &tiles, 0));
  ImGui::SameLine();
  WrapIfNoRoom(RadioButtonWidth("B_r, B_c"), radio_x);
  commit |= Committed(ImGui::RadioButton("B_r, B_c##ring", &tiles, 1));
  f.tiles_from_sram = tiles == 0;
  if (f.tiles_from_sram) {
    Label("M (bytes)", "SRAM size M in bytes: the tiles come from it.", label_w);
    ImGui::SetNextItemWidth(-1);
    long long sram = f.sram_bytes;
    commit |= Committed(ImGui::InputScalar("##ring-sram", ImGuiDataType_S64, &sram, nullptr, nullptr, "%lld"));
    f.sram_bytes = sram;
  } else {
    IntField("B_r", "##ring-br", "Rows of a Q tile.", &f.br, 1, 8, label_w, commit);
    IntField("B_c", "##ring-bc", "Rows of a K/V tile.", &f.bc, 1, 8, label_w, commit);
  }
  Label("TFLOP/s", "The timeline's cost model: the attention rate of one device (a step's compute is 4·d FLOPs per "
                   "score its tiles compute).", label_w);
  ImGui::SetNextItemWidth(-1);
  commit |= Committed(ImGui::InputDouble("##ring-tflops", &f.ring_tflops, 0, 0, "%.4g"));
  Label("link GB/s", "The timeline's cost model: one link's bandwidth, one direction (a step's exchange sends the "
                     "K and V it holds, 4-byte elements).", label_w);
  ImGui::SetNextItemWidth(-1);
  commit |= Committed(ImGui::InputDouble("##ring-link", &f.ring_link_gbps, 0, 0, "%.4g"));
  Label("scale", "The factor on q·k before the softmax: 1/√d by default.", label_w);
  int scale_mode = static_cast<int>(f.scale_mode);
  commit |= Committed(ImGui::RadioButton("1/√d##ring", &scale_mode, 0));
  ImGui::SameLine();
  WrapIfNoRoom(RadioButtonWidth("none"), radio_x);
  commit |= Committed(ImGui::RadioButton("none##ring", &scale_mode, 1));
  ImGui::SameLine();
  WrapIfNoRoom(RadioButtonWidth("custom"), radio_x);
  commit |= Committed(ImGui::RadioButton("custom##ring", &scale_mode, 2));
  f.scale_mode = static_cast<ProblemForm::ScaleMode>(scale_mode);
  if (f.scale_mode == ProblemForm::ScaleMode::kCustom) {
    ImGui::SameLine();
    ImGui::SetNextItemWidth(-1);
    commit |= Committed(ImGui::InputDouble("##ring-scale", &f.scale, 0, 0, "%.6g"));
  }
  Label("seed", "Q, K, V uniform in [−3, 3] from this seed.", label_w);
  ImGui::SetNextItemWidth(-1);
  long long seed = static_cast<long long>(f.seed);
  commit |= Committed(ImGui::InputScalar("##ring-seed", ImGuiDataType_S64, &seed, nullptr, nullptr, "%lld"));
  f.seed = static_cast<std::uint64_t>(std::max(0LL, seed));

  const std::string error = FormError(f);
  ReportProblem(error, ui);
  if (model.ring_mode()) {
    const RingProblem& p = model.ring_problem();
    ImGui::PushTextWrapPos(0);
    MathTextColored(GetPalette().dim,
                    Sprintf("%d devices, %d %s chunks of %d-%d rows, B_r = %d, B_c = %d, scale %.4g%s, %lld steps",
                            p.devices, p.chunks(), std::string(RingAssignmentName(p.assignment)).c_str(),
                            p.n / p.chunks(), (p.n + p.chunks() - 1) / p.chunks(), p.br, p.bc, p.scale,
                            p.causal ? ", causal" : "", static_cast<long long>(model.step_count()))
                        .c_str());
    ImGui::PopTextWrapPos();
  }
  if (commit && error.empty()) ui.requests.Push(UiRequest::kApplyForm);
}

}  // namespace

void DrawProblemPanel(const Model& model, UiState& ui) {
  ProblemForm& f = ui.form;
  bool commit = false;
  const float label_w = ImGui::CalcTextSize("M (bytes) (?)  ").x + ImGui::GetStyle().ItemSpacing.x;
  const float field_w = -1;

  // Presets, two to a row.
  const float half = (ImGui::GetContentRegionAvail().x - ImGui::GetStyle().ItemSpacing.x) / 2;
  int k = 0;
  for (const Preset& preset : Presets()) {
    if (k % 2) ImGui::SameLine();
    if (ImGui::Button(preset.name, ImVec2(half, 0))) {
      f = preset.form;
      commit = true;
    }
    MathTooltip(preset.description);
    ++k;
  }
  ImGui::Separator();

  Label("mode",
        "attention: the forward or backward pass over N queries and N keys. decoding: one generation step, "
        "R query rows per head against a KV cache of N keys, split into S chunks that run in parallel and "
        "are merged (flash-decoding), with grouped-query heads and a paged cache. ring: the sequence over P "
        "devices, the K/V slices passed around a ring (ring attention, context parallelism).",
        label_w);
  int mode = f.ring ? 2 : f.decode ? 1 : 0;
  const float mode_x = ImGui::GetCursorPosX();
  commit |= Committed(ImGui::RadioButton("attention", &mode, 0));
  ImGui::SameLine();
  WrapIfNoRoom(RadioButtonWidth("decoding"), mode_x);
  commit |= Committed(ImGui::RadioButton("decoding", &mode, 1));
  ImGui::SameLine();
  WrapIfNoRoom(RadioButtonWidth("ring"), mode_x);
  commit |= Committed(ImGui::RadioButton("ring", &mode, 2));
  f.decode = mode == 1;
  f.ring = mode == 2;
  if (f.ring) {
    DrawRingFields(model, ui, commit, label_w);
    return;
  }
  if (f.decode) {
    DrawDecodeFields(model, ui, commit, label_w);
    return;
  }

  const bool from_file = !f.input_path.empty();
  ImGui::BeginDisabled(from_file);
  Label("N", "Sequence length: the number of query rows (and keys).", label_w);
  ImGui::SetNextItemWidth(field_w);
  commit |= Committed(ImGui::InputInt("##n", &f.n, 1, 64));
  Label("d", "Head dimension: the length of each query, key and value vector.", label_w);
  ImGui::SetNextItemWidth(field_w);
  commit |= Committed(ImGui::InputInt("##d", &f.d, 1, 8));
  ImGui::EndDisabled();

  Label("tiles", "Algorithm 1 derives the tiles from the on-chip SRAM size M: B_c = ⌈M/4d⌉ floats per K/V tile "
                 "row count, B_r = min(B_c, d). The backward pass takes B_r = B_c = the largest B whose tiles all fit "
                 "in M (K_j, V_j, dK_j, dV_j, Q_i, dO_i, dQ_i, S/P, dP/dS, L_i, D_i: 7·B·d + 2·B² + 2·B floats). Or give "
                 "B_r and B_c yourself.", label_w);
  int tiles = f.tiles_from_sram ? 0 : 1;
  commit |= Committed(ImGui::RadioButton("from M", &tiles, 0));
  ImGui::SameLine();
  commit |= Committed(ImGui::RadioButton("B_r, B_c", &tiles, 1));
  f.tiles_from_sram = tiles == 0;
  Label("M (bytes)", "SRAM (on-chip memory) size M in bytes: the budget the occupancy is shown against. 16384 is a "
                     "Vortex core's local memory; 49152 the 48 KiB of shared memory of the course's GPUs.", label_w);
  ImGui::SetNextItemWidth(field_w);
  long long sram = f.sram_bytes;
  commit |= Committed(ImGui::InputScalar("##sram", ImGuiDataType_S64, &sram, nullptr, nullptr, "%lld"));
  f.sram_bytes = sram;
  if (!f.tiles_from_sram) {
    Label("B_r", "Rows of a Q tile (queries per tile).", label_w);
    ImGui::SetNextItemWidth(field_w);
    commit |= Committed(ImGui::InputInt("##br", &f.br, 1, 8));
    Label("B_c", "Rows of a K/V tile (keys per tile).", label_w);
    ImGui::SetNextItemWidth(field_w);
    commit |= Committed(ImGui::InputInt("##bc", &f.bc, 1, 8));
  }

  Label("pass", "forward: O = softmax(scale·Q Kᵀ) V. backward: FlashAttention-2's backward pass (dQ, dK, dV from "
                "dO), after the forward pass in the q order that saves O and the log-sum-exp L. Ctrl+B switches.",
        label_w);
  int pass = f.pass == Pass::kForward ? 0 : 1;
  commit |= Committed(ImGui::RadioButton("forward", &pass, 0));
  MathTooltip("The forward pass in the loop order below");
  ImGui::SameLine();
  commit |= Committed(ImGui::RadioButton("backward", &pass, 1));
  MathTooltip(
      "For each K/V tile j (dK_j, dV_j on chip), for each Q tile i: recompute S_ij and P_ij from L_i, then "
      "dV_j, dP_ij, dS_ij, dQ_i read-modify-written in HBM, and dK_j");
  f.pass = pass == 0 ? Pass::kForward : Pass::kBackward;

  // The backward pass has one order of its own (K/V outside); the forward pass it follows runs in the q order.
  // Said in words, so no radio shows an order the pass does not run.
  Label("order",
        "kv: Algorithm 1 as written, K/V tiles in the outer loop: O_i, ℓ_i, m_i go through HBM on every "
        "K/V tile. q: FlashAttention-2, Q tiles outside: the running state stays on chip. The backward pass "
        "has its own order: K/V tiles outside, after the forward pass in the q order.",
        label_w);
  if (f.pass == Pass::kBackward) {
    MathTextColored(GetPalette().dim, "K/V outer (forward: q)");
  } else {
    int order = f.order == LoopOrder::kKvOuter ? 0 : 1;
    commit |= Committed(ImGui::RadioButton("kv", &order, 0));
    MathTooltip("Algorithm 1: for each K/V tile j, for each Q tile i");
    ImGui::SameLine();
    commit |= Committed(ImGui::RadioButton("q", &order, 1));
    MathTooltip("FlashAttention-2: for each Q tile i, for each K/V tile j");
    f.order = order == 0 ? LoopOrder::kKvOuter : LoopOrder::kQOuter;
  }

  Label("scale", "The factor on Q Kᵀ before the softmax: 1/√d by default; none (1) as the Vortex program.", label_w);
  int scale_mode = static_cast<int>(f.scale_mode);
  const float radio_x = ImGui::GetCursorPosX();  // a wrapped button lines up under the first
  commit |= Committed(ImGui::RadioButton("1/√d", &scale_mode, 0));
  ImGui::SameLine();
  WrapIfNoRoom(RadioButtonWidth("none"), radio_x);
  commit |= Committed(ImGui::RadioButton("none", &scale_mode, 1));
  ImGui::SameLine();
  WrapIfNoRoom(RadioButtonWidth("custom"), radio_x);
  commit |= Committed(ImGui::RadioButton("custom", &scale_mode, 2));
  f.scale_mode = static_cast<ProblemForm::ScaleMode>(scale_mode);
  if (f.scale_mode == ProblemForm::ScaleMode::kCustom) {
    ImGui::SameLine();
    ImGui::SetNextItemWidth(-1);
    commit |= Committed(ImGui::InputDouble("##scale", &f.scale, 0, 0, "%.6g"));
  }

  Label("causal", "Mask keys after the query (key index > query index). Tile pairs whose every key is masked do no "
                  "work at all: no loads, no steps.", label_w);
  commit |= Committed(ImGui::Checkbox("##causal", &f.causal));

  ImGui::BeginDisabled(from_file);
  Label("seed", "Random inputs, uniform in [−3, 3] (the assignment's range), from this seed; the backward pass's dO "
                "uniform in [−1, 1] from it too.", label_w);
  ImGui::SetNextItemWidth(field_w);
  long long seed = static_cast<long long>(f.seed);
  commit |= Committed(ImGui::InputScalar("##seed", ImGuiDataType_S64, &seed, nullptr, nullptr, "%lld"));
  f.seed = static_cast<std::uint64_t>(std::max(0LL, seed));
  ImGui::EndDisabled();

  // HW4 file.
  Label("HW4 file", "Q, K, V from the course's binary format (int32 B, N, d, then per batch N·d float32 each of Q, "
                    "K, V). N and d come from the file. Clear the path for random inputs.", label_w);
  if (f.input_path != ui.form_status.path_synced)
    ui.form_status.path_edit = ui.form_status.path_synced = f.input_path;  // set by a preset or session
  ImGui::SetNextItemWidth(-(ImGui::GetFrameHeight() + ImGui::GetStyle().ItemSpacing.x + 4));
  const bool edited = ImGui::InputTextWithHint("##file", "path/to/input.bin", &ui.form_status.path_edit,
                                               ImGuiInputTextFlags_EnterReturnsTrue) ||
                      ImGui::IsItemDeactivatedAfterEdit();
  ImGui::SameLine();
  const bool picked = FilePickerButton("hw4-picker", &ui.form_status.path_edit, "",
                                       "Choose an HW4 input file (flashviz gen writes one)");
  if (edited || picked) {
    f.input_path = ui.form_status.path_synced = ui.form_status.path_edit;
    f.batch = 0;
    ui.requests.Push(UiRequest::kInspectInputFile);
    commit = true;
  }
  if (!f.input_path.empty()) {
    if (ui.form_status.input_file_batches > 1) {
      Label("batch", "Which batch of the file to step through.", label_w);
      ImGui::SetNextItemWidth(field_w);
      commit |= Committed(ImGui::SliderInt("##batch", &f.batch, 0, ui.form_status.input_file_batches - 1));
    }
    if (!ui.form_status.input_file_info.empty()) ImGui::TextDisabled("%s", ui.form_status.input_file_info.c_str());
  }

  // What the problem resolves to, or why it cannot be run.
  const std::string error = FormError(f);
  if (!error.empty()) {
    ImGui::PushTextWrapPos(0);
    MathTextColored(GetPalette().bad, error.c_str());
    ImGui::PopTextWrapPos();
  } else if (!ui.form_status.problem_error.empty()) {
    ImGui::PushTextWrapPos(0);
    MathTextColored(GetPalette().bad, ui.form_status.problem_error.c_str());
    ImGui::PopTextWrapPos();
  }
  if (model.has_problem()) {
    const AttentionProblem& p = model.problem();
    ImGui::PushTextWrapPos(0);
    const std::string order =
        p.backward() ? std::string("backward pass") : std::string(LoopOrderName(p.order)) + " order";
    MathTextColored(GetPalette().dim,
                    Sprintf("B_r = %d, B_c = %d, T_r × T_c = %d × %d, %s, scale %.4g%s, %lld steps", p.br, p.bc,
                            p.tr(), p.tc(), order.c_str(), p.scale, p.causal ? ", causal" : "",
                            static_cast<long long>(model.step_count()))
                        .c_str());
    ImGui::PopTextWrapPos();
  }
  if (commit && error.empty()) ui.requests.Push(UiRequest::kApplyForm);
}

}  // namespace flashviz
