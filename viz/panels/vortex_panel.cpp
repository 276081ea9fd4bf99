// Vortex: the current step of the tiled algorithm on the Vortex RISC-V GPGPU of the report, read from
// the kernels/vortex model (mapping, budgets, phase view, TCU fragments). The view follows the main cursor:
// VortexStepFor maps the main step to the step of the Vortex program's own schedule (its B_r × B_c, Q-outer).
//   - the machine: cores → warps → threads, each thread drawn with the Q row it owns (the main heatmaps' colours);
//     the block of the current Q tile lights up, the blocks running the same phase on other cores are outlined
//   - the register file of one thread (click a thread to pick it) and each core's local memory, filling and
//     emptying with the phases
//   - TCU mode: the fragments of the two mma_sync of the current tile iteration, with the zero padding of K
//     visible, coloured by value or by lane; a toggle sets NVIDIA's 16×16×16 WMMA tile beside it
//   - what the block executes in this phase, by operation class
//
// [SECTION] helpers
// [SECTION] controls and verdict
// [SECTION] the thread grid
// [SECTION] the register file
// [SECTION] local memory
// [SECTION] TCU fragments and the WMMA comparison
// [SECTION] the panel
#include <algorithm>
#include <array>
#include <cctype>
#include <utility>
#include <cmath>
#include <optional>
#include <span>
#include <string>

#include "kernels/common/format.h"
#include "kernels/vortex/counting.h"
#include "kernels/vortex/mapping.h"
#include "kernels/vortex/phase_view.h"
#include "kernels/vortex/report.h"
#include "kernels/vortex/tcu.h"
#include "viz/heatmap.h"
#include "viz/panels/panels.h"
#include "viz/panels/vortex_panel.h"
#include "viz/widgets.h"

namespace flashviz {
namespace {

using vortex::Mapping;
using vortex::PhaseView;
using vortex::RegisterContent;

// ---------------------------------------------------------------------------------------------------------
// [SECTION] helpers
// ---------------------------------------------------------------------------------------------------------

// "K_j^T" → "K_jᵀ" for MathText (the model's labels are ASCII).
std::string Pretty(std::string text) {
  for (std::size_t at; (at = text.find("^T")) != std::string::npos;) text.replace(at, 2, "\u1d40");
  return text;
}

ImU32 WithAlpha(ImU32 color, int alpha) {
  return (color & ~IM_COL32_A_MASK) | (static_cast<ImU32>(std::clamp(alpha, 0, 255)) << IM_COL32_A_SHIFT);
}

// One colour per kind of register content, readable on both themes.
ImU32 ContentColor(RegisterContent c) {
  switch (c) {
    case RegisterContent::kORow: return IM_COL32(70, 130, 220, 255);
    case RegisterContent::kSPRow: return IM_COL32(230, 140, 50, 255);
    case RegisterContent::kStats: return IM_COL32(70, 175, 90, 255);
    case RegisterContent::kTemporary: return IM_COL32(160, 110, 210, 255);
    case RegisterContent::kFragmentA: return IM_COL32(40, 170, 170, 255);
    case RegisterContent::kFragmentB: return IM_COL32(205, 175, 40, 255);
    case RegisterContent::kAccumulator: return IM_COL32(215, 80, 80, 255);
  }
  return IM_COL32(128, 128, 128, 255);
}

// Eight hues for the lanes of a warp.
ImU32 LaneColor(int lane) {
  static constexpr std::array<ImU32, 8> kLanes = {IM_COL32(228, 26, 28, 255), IM_COL32(55, 126, 184, 255),
                                                  IM_COL32(77, 175, 74, 255), IM_COL32(152, 78, 163, 255),
                                                  IM_COL32(255, 127, 0, 255), IM_COL32(200, 200, 50, 255),
                                                  IM_COL32(166, 86, 40, 255), IM_COL32(247, 129, 191, 255)};
  return kLanes[static_cast<std::size_t>(((lane % 8) + 8) % 8)];
}

bool MouseIn(const ScreenRect& r) { return ImGui::IsWindowHovered() && r.Contains(ImGui::GetIO().MousePos); }

// Reserves `size` of layout for custom drawing and returns its rectangle.
ScreenRect Canvas(const char* id, ImVec2 size) {
  const ImVec2 p = ImGui::GetCursorScreenPos();
  size.x = std::max(size.x, 1.0f);
  size.y = std::max(size.y, 1.0f);
  ImGui::InvisibleButton(id, size);
  return {p, ImVec2(p.x + size.x, p.y + size.y)};
}

// ---------------------------------------------------------------------------------------------------------
// [SECTION] controls and verdict
// ---------------------------------------------------------------------------------------------------------

void UsePreset(UiState& ui, vortex::Mode mode) {
  VortexPanelState& v = VortexState(ui);
  v.machine = vortex::kReportMachine;
  v.mode = mode;
  v.pinned_core = v.pinned_warp = v.pinned_thread = -1;
  if (const Preset* preset = FindPreset("vortex")) {
    ui.form = preset->form;  // N = 64, d = 8, Q outer, no scale: the report's problem
    if (mode == vortex::Mode::kTcu) {
      ui.form.tiles_from_sram = false;
      ui.form.br = ui.form.bc = vortex::kTcuTile;
    }
    ui.requests.Push(UiRequest::kApplyForm);
  }
}

// After SameLine(): a labelled field of `field_width` stays on this line if it fits (WrapIfNoRoom).
void WrapFieldIfNoRoom(const char* label, float field_width) {
  WrapIfNoRoom(ImGui::CalcTextSize(label).x + ImGui::GetStyle().ItemSpacing.x + field_width);
}

void DrawControls(UiState& ui, float scale) {
  VortexPanelState& v = VortexState(ui);
  const float field = 90.0f * scale;
  auto int_field = [&](const char* label, const char* id, int* value, const char* help) {
    WrapFieldIfNoRoom(label, field);
    ImGui::AlignTextToFramePadding();
    ImGui::TextUnformatted(label);
    ImGui::SameLine();
    ImGui::SetNextItemWidth(field);
    if (ImGui::InputInt(id, value, 1, 4)) v.pinned_core = v.pinned_warp = v.pinned_thread = -1;
    MathTooltip(help);
    ImGui::SameLine();
  };
  int_field("cores", "##cores", &v.machine.cores, "NUM_CORES: blocks go to cores round-robin (block b → core b mod C)");
  int_field("warps", "##warps", &v.machine.warps_per_core, "NUM_WARPS per core");
  int_field("threads", "##threads", &v.machine.threads_per_warp,
            "NUM_THREADS per warp (the TCU's wmma_context is built for 8)");
  // Wide enough for six digits beside its − and + buttons ("16384" was cut to "1638…" in presentation mode).
  const ImGuiStyle& style = ImGui::GetStyle();
  const float lmem_field = std::max(field * 1.2f, ImGui::CalcTextSize("000000").x + 2 * style.FramePadding.x +
                                                      2 * (ImGui::GetFrameHeight() + style.ItemInnerSpacing.x));
  WrapFieldIfNoRoom("local memory", lmem_field);
  ImGui::AlignTextToFramePadding();
  ImGui::TextUnformatted("local memory");
  ImGui::SameLine();
  ImGui::SetNextItemWidth(lmem_field);
  int lmem = static_cast<int>(std::clamp<std::int64_t>(v.machine.local_memory_bytes, 0, vortex::kMaxLocalMemoryBytes));
  if (ImGui::InputInt("##lmem", &lmem, 1024, 4096)) v.machine.local_memory_bytes = lmem;
  MathTooltip(
      "Bytes of local memory (\"SRAM\") per core, shared by the blocks resident on it (16384 on the report's machine)");
  ImGui::SameLine();
  WrapFieldIfNoRoom("FP regs", field);
  ImGui::AlignTextToFramePadding();
  ImGui::TextUnformatted("FP regs");
  ImGui::SameLine();
  ImGui::SetNextItemWidth(field);
  ImGui::InputInt("##fpregs", &v.machine.fp_registers_per_thread, 1, 8);
  MathTooltip("FP registers per thread: f0–f31 on RV32IMAF");

  int mode = v.mode == vortex::Mode::kSimt ? 0 : 1;
  ImGui::AlignTextToFramePadding();
  ImGui::TextUnformatted("program");
  ImGui::SameLine();
  if (ImGui::RadioButton("SIMT", &mode, 0)) v.mode = vortex::Mode::kSimt;
  MathTooltip(
      "One thread per query row: O_row, the S/P~ row, m and ℓ in FP registers; B_r = min(W·T, N), B_c = max(B_r, 8)");
  ImGui::SameLine();
  if (ImGui::RadioButton("TCU", &mode, 1)) v.mode = vortex::Mode::kTcu;
  MathTooltip("The 8×8 tensor unit: d = 8, B_r = B_c = 8, one warp per block, two mma_sync per K/V tile");
  ImGui::SameLine();
  ImGui::TextDisabled("|");
  ImGui::SameLine();
  if (ImGui::Button("Report: SIMT")) UsePreset(ui, vortex::Mode::kSimt);
  MathTooltip(
      "4 cores × 2 warps × 8 threads, 16 KB local memory; N = 64, d = 8, Q outer loop, no 1/√d (also sets the main "
      "problem)");
  ImGui::SameLine();
  if (ImGui::Button("Report: TCU")) UsePreset(ui, vortex::Mode::kTcu);
  MathTooltip("The same machine with the tensor unit: B_r = B_c = 8 (also sets the main problem's tiles to 8×8)");
  ImGui::SameLine();
  HelpMarker("The model of kernels/vortex: how the report's FlashAttention programs (SIMT and TCU) map this problem's "
             "N and d onto a Vortex machine. Edit the machine here; N and d come from the Problem panel. The view "
             "follows the main cursor: the step of the Vortex program working on the same rows in the same phase.");
}

void DrawVerdict(const Mapping& m, const Palette& pal) {
  ImGui::PushTextWrapPos(0);
  if (m.fits) {
    MathTextColored(pal.good, ("Fits — " + Pretty(m.reason.substr(std::string("fits: ").size()))).c_str());
  } else {
    MathTextColored(pal.bad, ("Does not fit: " + Pretty(m.reason)).c_str());
  }
  ImGui::PopTextWrapPos();
  if (ImGui::IsItemHovered()) {
    std::string all;
    for (const vortex::FitCheck& c : m.checks) all += (c.ok ? "✓ " : "✗ ") + c.name + ": " + Pretty(c.detail) + "\n";
    MathTooltip(all.c_str());
  }
}

// ---------------------------------------------------------------------------------------------------------
// [SECTION] the thread grid
// ---------------------------------------------------------------------------------------------------------

struct ThreadPick {
  int core = -1, warp = -1, thread = -1;
};

// Cores as boxes of W rows (warps) × T cells (threads); a cell shows its Q row's values as d stripes.
// `arrive` < 1: the transition into load_q, where the block's query rows travel into the threads that own them
// (thread by thread, each sliding in from the left and fading in); 1 otherwise.
ThreadPick DrawThreadGrid(const Model& model, const Mapping& m, const PhaseView& v, const ThreadPick& pinned,
                          const Palette& pal, float width, double arrive = 1.0) {
  const vortex::MachineConfig& machine = m.request.machine;
  const AttentionInputs& in = model.inputs();
  const ColorScale q_scale = ColorScale::Symmetric(model.q_abs_max());
  const float fs = ImGui::GetFontSize();
  constexpr int kMaxCoresShown = 16;
  const int shown = std::min(machine.cores, kMaxCoresShown);
  const int centre = v.core >= 0 ? v.core : 0;
  const int first_core = std::clamp(centre - shown / 2, 0, machine.cores - shown);
  const int t = machine.threads_per_warp, w = machine.warps_per_core;
  const float gap = fs * 0.6f;
  // Cores per row: the most that still leaves a thread cell of 1.3 font heights (at least one).
  const auto cell_for = [&](int per_row) {
    return std::floor((width - gap * static_cast<float>(per_row + 1)) / static_cast<float>(per_row * t + per_row));
  };
  int per_row = std::min(shown, 4);
  while (per_row > 1 && cell_for(per_row) < fs * 1.3f) --per_row;
  const float cell = std::clamp(cell_for(per_row), 6.0f, fs * 2.4f);
  const float core_w = cell * static_cast<float>(t) + fs * 0.8f,
              core_h = cell * static_cast<float>(w) * 1.25f + fs * 1.6f;
  const int rows_of_cores = (shown + per_row - 1) / per_row;
  const ScreenRect area =
      Canvas("##threads", ImVec2(per_row * (core_w + gap), static_cast<float>(rows_of_cores) * (core_h + gap)));
  ImDrawList* dl = ImGui::GetWindowDrawList();
  const int wave = std::max(v.wave, 0);
  ThreadPick hovered;
  for (int k = 0; k < shown; ++k) {
    const int core = first_core + k;
    const float x0 = area.min.x + static_cast<float>(k % per_row) * (core_w + gap);
    const float y0 = area.min.y + static_cast<float>(k / per_row) * (core_h + gap);
    const ScreenRect box{ImVec2(x0, y0), ImVec2(x0 + core_w, y0 + core_h)};
    const bool current_core = core == v.core;
    dl->AddRectFilled(box.min, box.max, pal.plot_bg, 4.0f);
    dl->AddRect(box.min, box.max, current_core ? pal.cursor : ImGui::GetColorU32(ImGuiCol_Border), 4.0f, 0,
                current_core ? 2.0f : 1.0f);
    dl->AddText(ImVec2(x0 + fs * 0.4f, y0 + fs * 0.15f), current_core ? pal.cursor : pal.heading,
                Sprintf("core %d", core).c_str());
    for (int warp = 0; warp < w; ++warp) {
      const float wy = y0 + fs * 1.35f + static_cast<float>(warp) * cell * 1.25f;
      for (int lane = 0; lane < t; ++lane) {
        const float cx = x0 + fs * 0.4f + static_cast<float>(lane) * cell;
        const ScreenRect r{ImVec2(cx + 1, wy + 1), ImVec2(cx + cell - 1, wy + cell - 1)};
        const int row = m.RowOfThread(core, warp, lane, wave);
        if (row < 0) {
          dl->AddRectFilled(r.min, r.max, WithAlpha(pal.dim, 40));
        } else {
          // The thread's Q row, as the Q heatmap colours it: d vertical stripes (at most 16). Arriving (load_q's
          // transition, the current core only): thread k of the block lands in the k-th slice of the transition.
          double here = 1.0;
          if (arrive < 1.0 && current_core) {
            const double k = static_cast<double>(warp * t + lane), n = static_cast<double>(w * t);
            here = std::clamp(arrive * n - k, 0.0, 1.0);
            dl->AddRectFilled(r.min, r.max, WithAlpha(pal.dim, 40));
          }
          const float shift = static_cast<float>(1.0 - here) * -2.0f * cell;
          const int alpha = static_cast<int>(255.0 * here);
          const int d = in.d;
          const int stripes = std::min(d, 16);
          for (int s = 0; here > 0 && s < stripes; ++s) {
            const int e = s * d / stripes;
            const float sx0 = shift + r.min.x + r.width() * static_cast<float>(s) / static_cast<float>(stripes);
            const float sx1 = shift + r.min.x + r.width() * static_cast<float>(s + 1) / static_cast<float>(stripes);
            dl->AddRectFilled(ImVec2(sx0, r.min.y), ImVec2(sx1 + 0.5f, r.max.y),
                              WithAlpha(q_scale(in.q[static_cast<std::size_t>(row) * d + e]), alpha));
          }
        }
        const bool active = std::any_of(v.active.begin(), v.active.end(), [&](const vortex::ActiveThread& a) {
          return core == v.core && a.warp == warp && a.thread == lane;
        });
        const vortex::RowOwner owner = row >= 0 ? m.OwnerOfRow(row) : vortex::RowOwner{};
        const bool concurrent = row >= 0 && std::find(v.concurrent_blocks.begin(), v.concurrent_blocks.end(),
                                                      owner.block) != v.concurrent_blocks.end();
        if (active)
          dl->AddRect(ImVec2(r.min.x - 1, r.min.y - 1), ImVec2(r.max.x + 1, r.max.y + 1), pal.cursor, 0, 0, 2.5f);
        else if (concurrent) dl->AddRect(r.min, r.max, WithAlpha(pal.cursor, 110), 0, 0, 1.0f);
        if (core == pinned.core && warp == pinned.warp && lane == pinned.thread)
          dl->AddCircleFilled(ImVec2(r.max.x - cell * 0.18f, r.min.y + cell * 0.18f), std::max(2.0f, cell * 0.12f),
                              ImGui::GetColorU32(ImGuiCol_Text));
        if (MouseIn(r)) {
          hovered = {core, warp, lane};
          std::string tip = Sprintf("core %d, warp %d, thread %d", core, warp, lane);
          if (row >= 0) {
            tip += Sprintf("\nowns query row %d (block %d = Q tile %d, wave %d)", row, owner.block, owner.block,
                           owner.wave);
            const auto it = std::find_if(v.active.begin(), v.active.end(), [&](const vortex::ActiveThread& a) {
              return core == v.core && a.warp == warp && a.thread == lane;
            });
            if (it != v.active.end()) tip += "\nactive in this phase: " + it->role;
            else if (concurrent) tip += "\nits block runs the same phase on its own tile";
          } else {
            tip += "\nno row in this wave";
          }
          tip += "\nclick: show its registers";
          MathTooltip(tip.c_str());
        }
      }
    }
  }
  if (machine.cores > shown) {
    ImGui::TextDisabled("cores %d–%d of %d shown (the pattern repeats: block b on core b mod %d)", first_core,
                        first_core + shown - 1, machine.cores, machine.cores);
  }
  ThreadPick clicked;
  if (hovered.core >= 0 && ImGui::IsMouseClicked(ImGuiMouseButton_Left)) clicked = hovered;
  return clicked;
}

// ---------------------------------------------------------------------------------------------------------
// [SECTION] the register file
// ---------------------------------------------------------------------------------------------------------

// The register cell's text for lane `lane` (TCU fragments hold other elements in other lanes).
std::string CellLabel(const vortex::RegisterCell& c, bool tcu, int lane, int mma) {
  if (tcu && mma > 0 && (c.content == RegisterContent::kFragmentA || c.content == RegisterContent::kFragmentB ||
                         c.content == RegisterContent::kAccumulator)) {
    const vortex::Fragment frag = c.content == RegisterContent::kFragmentA   ? vortex::Fragment::kA
                                  : c.content == RegisterContent::kFragmentB ? vortex::Fragment::kB
                                                                            : vortex::Fragment::kC;
    const int reg = c.index - vortex::ShapeOf(frag).first_register;
    const auto elements = vortex::ElementsOf(frag, lane, reg);
    static constexpr const char* kFirst[] = {"Q", "K\u1d40", "S"};
    static constexpr const char* kSecond[] = {"P~", "V", "PV"};
    const char* name = (mma == 1 ? kFirst : kSecond)[static_cast<int>(frag)];
    if (elements.size() == 2)
      return frag == vortex::Fragment::kA
                 ? Sprintf("%s[%d][%d,%d]", name, elements[0].row, elements[0].col, elements[1].col)
                 : Sprintf("%s[%d,%d][%d]", name, elements[0].row, elements[1].row, elements[0].col);
    return Sprintf("%s[%d][%d]", name, elements[0].row, elements[0].col);
  }
  return Pretty(c.label);
}

// A short form that fits in a cell: "O[3]" → "O3", "P~[12]" → "P~12", "Q[4][8,9]" → "Q4,8", "alpha" → "α".
std::string ShortLabel(const std::string& label) {
  static constexpr std::pair<const char*, const char*> kNames[] = {
      {"alpha", "\u03b1"}, {"beta", "\u03b2"}, {"l", "\u2113"}, {"rowmax", "max"}, {"rowmax_r", "max"},
      {"rowsum", "sum"}, {"rowsum_r", "sum"}, {"m_new", "m'"}, {"l_new", "\u2113'"}, {"1/l", "1/\u2113"},
      {"1/l_r", "1/\u2113"}, {"exp value", "exp"}, {"acc (P~·V)", "acc"}, {"operand V", "op"},
      {"operand Q/K", "op"}, {"operand (copy)", "op"}};
  for (const auto& [name, brief] : kNames)
    if (label == name) return brief;
  // name[i][j...] or name[i]: the name, the first index and, for matrices, the first column.
  const std::size_t open = label.find('[');
  if (open == std::string::npos) return label.size() > 6 ? label.substr(0, 5) : label;
  std::string out = label.substr(0, open);
  std::size_t p = open + 1;
  auto number = [&] {
    std::string n;
    while (p < label.size() && std::isdigit(static_cast<unsigned char>(label[p]))) n += label[p++];
    return n;
  };
  out += number();
  p = label.find('[', p);
  if (p != std::string::npos) {
    ++p;
    out += "," + number();
  }
  return out;
}

void DrawRegisterFile(const Mapping& m, const PhaseView& v, const ThreadPick& shown, int shown_row, bool shown_active,
                      const Palette& pal, float width) {
  const bool tcu = m.request.mode == vortex::Mode::kTcu;
  const float fs = ImGui::GetFontSize();
  const int count = static_cast<int>(v.registers.size());
  const int per_row = 8;
  const float cw = std::clamp(std::floor(width / static_cast<float>(per_row)), fs * 1.6f, fs * 4.2f);
  const float ch = fs * 1.5f;
  const int rows = (count + per_row - 1) / per_row;
  if (shown.core >= 0)
    MathTextF("thread: core %d, warp %d, lane %d — query row %d%s", shown.core, shown.warp, shown.thread, shown_row,
              shown_active ? "" : " (idle in this phase)");
  const ScreenRect area = Canvas("##registers", ImVec2(cw * per_row, ch * static_cast<float>(rows)));
  ImDrawList* dl = ImGui::GetWindowDrawList();
  const int lane = std::max(shown.thread, 0);
  for (int f = 0; f < count; ++f) {
    const vortex::RegisterCell& c = v.registers[static_cast<std::size_t>(f)];
    const float x = area.min.x + cw * static_cast<float>(f % per_row),
                y = area.min.y + ch * static_cast<float>(f / per_row);
    const ScreenRect r{ImVec2(x + 1, y + 1), ImVec2(x + cw - 1, y + ch - 1)};
    const bool has_content = !c.label.empty() || c.live;
    const ImU32 base = ContentColor(c.content);
    const ImU32 fill = !has_content ? WithAlpha(pal.dim, 25) : WithAlpha(base, c.live && shown_active ? 230 : 70);
    dl->AddRectFilled(r.min, r.max, fill, 2.0f);
    if (c.padding) DrawHatch(dl, r, WithAlpha(ImGui::GetColorU32(ImGuiCol_Text), 120), 5.0f);
    if (c.spilled) dl->AddRect(r.min, r.max, pal.bad, 2.0f, 0, 2.0f);
    else if (c.written && shown_active) dl->AddRect(r.min, r.max, pal.cursor, 2.0f, 0, 2.0f);
    else dl->AddRect(r.min, r.max, WithAlpha(ImGui::GetColorU32(ImGuiCol_Border), 160), 2.0f);
    const ImU32 text = c.live && shown_active ? ContrastingText(base) : ImGui::GetColorU32(ImGuiCol_Text);
    dl->AddText(ImGui::GetFont(), fs * 0.62f, ImVec2(r.min.x + 2, r.min.y + 1), WithAlpha(text, 170),
                Sprintf("f%d", f).c_str());
    const std::string label = c.padding ? "0" : CellLabel(c, tcu, lane, v.mma);
    const std::string brief = ShortLabel(label);
    const ImVec2 size = CalcMathTextSize(brief.c_str(), nullptr, fs * 0.78f);
    if (size.x <= r.width())
      DrawMathText(dl, ImVec2(r.min.x + (r.width() - size.x) / 2, r.min.y + fs * 0.5f), text, brief.c_str(), nullptr,
                   fs * 0.78f);
    if (MouseIn(r)) {
      std::string tip = Sprintf("f%d: %s", f, std::string(vortex::RegisterContentName(c.content)).c_str());
      if (!label.empty()) tip += "\nholds " + label;
      if (c.padding) tip += "\nzero padding of K: every lane holds 0 here";
      if (c.written) tip += "\nwritten in this phase";
      if (!c.live) tip += "\nnot live in this phase";
      if (c.spilled) tip += "\npast the register file: the compiler would spill it to the stack";
      MathTooltip(tip.c_str());
    }
  }
  // Legend.
  const RegisterContent legend_simt[] = {RegisterContent::kORow, RegisterContent::kSPRow, RegisterContent::kStats,
                                         RegisterContent::kTemporary};
  const RegisterContent legend_tcu[] = {RegisterContent::kFragmentA, RegisterContent::kFragmentB,
                                        RegisterContent::kAccumulator, RegisterContent::kTemporary};
  for (RegisterContent c :
       tcu ? std::span<const RegisterContent>(legend_tcu) : std::span<const RegisterContent>(legend_simt)) {
    const ImVec2 p = ImGui::GetCursorScreenPos();
    ImGui::GetWindowDrawList()->AddRectFilled(ImVec2(p.x, p.y + fs * 0.2f), ImVec2(p.x + fs * 0.8f, p.y + fs),
                                              ContentColor(c));
    ImGui::Dummy(ImVec2(fs, fs));
    ImGui::SameLine();
    MathText(std::string(vortex::RegisterContentName(c)).c_str());
    ImGui::SameLine();
  }
  ImGui::NewLine();
}

// ---------------------------------------------------------------------------------------------------------
// [SECTION] local memory
// ---------------------------------------------------------------------------------------------------------

ImU32 RegionColor(int index) {
  static constexpr std::array<ImU32, 9> kColors = {
      IM_COL32(70, 130, 220, 255), IM_COL32(230, 140, 50, 255), IM_COL32(70, 175, 90, 255),
      IM_COL32(215, 80, 80, 255),  IM_COL32(160, 110, 210, 255), IM_COL32(120, 160, 60, 255),
      IM_COL32(40, 170, 170, 255), IM_COL32(205, 175, 40, 255), IM_COL32(170, 120, 90, 255)};
  return kColors[static_cast<std::size_t>(index) % kColors.size()];
}

// One bar per core (up to 4): the capacity, and each resident block's regions at their byte offsets.
void DrawLocalMemory(const Mapping& m, const PhaseView& v, const Palette& pal, float width) {
  const vortex::LocalMemoryLayout& l = m.local_memory;
  const float fs = ImGui::GetFontSize();
  const std::int64_t span = std::max(l.capacity, l.bytes_per_core);
  const int cores = std::min(m.active_cores, 4);
  const float bar_h = fs * 1.6f;
  const ScreenRect area = Canvas("##lmem", ImVec2(width, (bar_h + fs * 0.5f) * static_cast<float>(cores) + fs * 1.2f));
  ImDrawList* dl = ImGui::GetWindowDrawList();
  const float label_w = fs * 3.6f;
  const float bar_w = area.width() - label_w;
  auto X = [&](std::int64_t bytes) {
    return area.min.x + label_w + bar_w * static_cast<float>(static_cast<double>(bytes) / static_cast<double>(span));
  };
  const int wave = std::max(v.wave, 0);
  for (int k = 0; k < cores; ++k) {
    // Cores in their order (0, 1, 2, 3), the current one in the cursor colour.
    const int core = k;
    const float y = area.min.y + static_cast<float>(k) * (bar_h + fs * 0.5f);
    dl->AddText(ImVec2(area.min.x, y + bar_h * 0.2f), core == v.core ? pal.cursor : pal.dim,
                Sprintf("core %d", core).c_str());
    const ScreenRect bar{ImVec2(X(0), y), ImVec2(X(l.capacity), y + bar_h)};
    dl->AddRectFilled(bar.min, bar.max, pal.plot_bg);
    if (l.bytes_per_core > l.capacity)
      DrawHatch(dl, ScreenRect{ImVec2(X(l.capacity), y), ImVec2(X(span), y + bar_h)}, pal.bad, 4.0f);
    for (int slot = 0; slot < l.blocks_per_core; ++slot) {
      // The block in this slot of this core in the current wave, if any.
      const std::int64_t block =
          (static_cast<std::int64_t>(wave) * m.blocks_per_core + slot) * m.request.machine.cores + core;
      const bool present = block < m.tr && v.runs;
      const bool running =
          present && (block == v.block || std::find(v.concurrent_blocks.begin(), v.concurrent_blocks.end(),
                                                    static_cast<int>(block)) != v.concurrent_blocks.end());
      const std::int64_t base = slot * l.bytes_per_block;
      for (const vortex::LocalRegionState& s : v.local_memory) {
        const vortex::LocalRegion& region = l.regions[static_cast<std::size_t>(s.region)];
        const ScreenRect r{
            ImVec2(X(base + region.offset), y + 1),
            ImVec2(std::max(X(base + region.offset + region.bytes), X(base + region.offset) + 1.0f), y + bar_h - 1)};
        const bool live = running && s.live;
        dl->AddRectFilled(r.min, r.max, WithAlpha(RegionColor(s.region), live ? 220 : 45));
        if (running && s.written) dl->AddRect(r.min, r.max, pal.cursor, 0, 0, 2.0f);
        else if (running && s.read) dl->AddRect(r.min, r.max, ImGui::GetColorU32(ImGuiCol_Text), 0, 0, 1.0f);
        if (MouseIn(r)) {
          std::string tip =
              Sprintf("core %d, block %lld: %s\nbytes %lld–%lld (%lld B)\n%s", core, static_cast<long long>(block),
                      Pretty(region.name).c_str(), static_cast<long long>(base + region.offset),
                      static_cast<long long>(base + region.offset + region.bytes - 1),
                      static_cast<long long>(region.bytes), Pretty(region.layout).c_str());
          tip += live ? "\nholds " + Pretty(s.holds) : std::string("\nempty in this phase");
          if (running && s.written) tip += "\nwritten in this phase";
          if (running && s.read) tip += "\nread in this phase";
          MathTooltip(tip.c_str());
        }
      }
    }
    dl->AddRect(bar.min, bar.max, ImGui::GetColorU32(ImGuiCol_Border));
  }
  const float ty = area.min.y + static_cast<float>(cores) * (bar_h + fs * 0.5f);
  dl->AddText(ImVec2(X(0), ty), pal.dim, "0");
  const std::string cap = Sprintf("%lld B", static_cast<long long>(l.capacity));
  dl->AddText(ImVec2(X(l.capacity) - ImGui::CalcTextSize(cap.c_str()).x, ty), pal.dim, cap.c_str());

  // The current block's regions, zoomed to its own bytes so that every region has room for its name.
  if (!v.runs || l.bytes_per_block <= 0) return;
  const int slot = ((v.block / m.request.machine.cores) % m.blocks_per_core);
  const std::int64_t base = slot * l.bytes_per_block;
  MathTextF("core %d, block %d: bytes %lld–%lld, zoomed", v.core, v.block, static_cast<long long>(base),
            static_cast<long long>(base + l.bytes_per_block - 1));
  const ScreenRect zoom = Canvas("##lmem_zoom", ImVec2(width, fs * 2.2f));
  for (const vortex::LocalRegionState& s : v.local_memory) {
    const vortex::LocalRegion& region = l.regions[static_cast<std::size_t>(s.region)];
    const auto ZX = [&](std::int64_t bytes) {
      return zoom.min.x +
             zoom.width() * static_cast<float>(static_cast<double>(bytes) / static_cast<double>(l.bytes_per_block));
    };
    const ScreenRect r{ImVec2(ZX(region.offset) + 1, zoom.min.y),
                       ImVec2(ZX(region.offset + region.bytes) - 1, zoom.max.y)};
    const ImU32 color = RegionColor(s.region);
    dl->AddRectFilled(r.min, r.max, WithAlpha(color, s.live ? 220 : 45), 2.0f);
    if (s.written) dl->AddRect(r.min, r.max, pal.cursor, 2.0f, 0, 2.5f);
    else if (s.read) dl->AddRect(r.min, r.max, ImGui::GetColorU32(ImGuiCol_Text), 2.0f, 0, 1.0f);
    const std::string name = s.live ? Pretty(s.holds) : Pretty(region.name);
    const ImVec2 size = CalcMathTextSize(name.c_str(), nullptr, fs * 0.8f);
    if (size.x <= r.width() - 2)
      DrawMathText(dl, ImVec2((r.min.x + r.max.x - size.x) / 2, r.min.y + (r.height() - size.y) / 2),
                   s.live ? ContrastingText(color) : pal.dim, name.c_str(), nullptr, fs * 0.8f);
    if (MouseIn(r)) {
      std::string tip =
          Sprintf("%s: bytes %lld–%lld of the block (%lld B)\n%s", Pretty(region.name).c_str(),
                  static_cast<long long>(region.offset), static_cast<long long>(region.offset + region.bytes - 1),
                  static_cast<long long>(region.bytes), Pretty(region.layout).c_str());
      tip += s.live ? "\nholds " + Pretty(s.holds) : std::string("\nempty in this phase");
      if (s.written) tip += "\nwritten in this phase";
      if (s.read) tip += "\nread in this phase";
      MathTooltip(tip.c_str());
    }
  }
}

// ---------------------------------------------------------------------------------------------------------
// [SECTION] TCU fragments and the WMMA comparison
// ---------------------------------------------------------------------------------------------------------

struct FragmentValues {
  const float* values = nullptr;  // row-major, rows × cols
  ColorScale scale;
  const char* name = "";
};

// A fragment grid: values (or lanes), padding hatched, a tooltip with the lane, register and half.
void DrawFragment(ImDrawList* dl, ImVec2 at, float cell, vortex::Fragment frag, const FragmentValues& f, bool lanes,
                  bool computed, const Palette& pal) {
  const vortex::FragmentShape shape = vortex::ShapeOf(frag);
  for (int r = 0; r < shape.rows; ++r)
    for (int c = 0; c < shape.cols; ++c) {
      const ScreenRect rect{ImVec2(at.x + cell * static_cast<float>(c), at.y + cell * static_cast<float>(r)),
                            ImVec2(at.x + cell * static_cast<float>(c + 1), at.y + cell * static_cast<float>(r + 1))};
      const bool pad = vortex::IsPadding(frag, r, c);
      const vortex::FragmentSlot slot = vortex::SlotOf(frag, r, c);
      const double value = f.values ? f.values[r * shape.cols + c] : 0.0;
      ImU32 fill = pad ? WithAlpha(pal.dim, 50)
                       : lanes ? WithAlpha(LaneColor(slot.lane), 200)
                               : (computed && f.values ? f.scale(value) : WithAlpha(pal.dim, 30));
      dl->AddRectFilled(rect.min, rect.max, fill);
      if (pad) DrawHatch(dl, rect, WithAlpha(ImGui::GetColorU32(ImGuiCol_Text), 90), 4.0f);
      if (MouseIn(rect)) {
        std::string tip = Sprintf("%s[%d][%d]", f.name, r, c);
        tip += pad ? " = 0 (padding of K to 16)"
                   : (computed && f.values ? " = " + Num(value) : std::string(" (not computed yet)"));
        tip += Sprintf("\nlane %d, f%d, %s", slot.lane, shape.first_register + slot.reg,
                       shape.element_bytes == 2 ? (slot.half ? "high half" : "low half") : "fp32");
        MathTooltip(tip.c_str());
      }
    }
  dl->AddRect(at, ImVec2(at.x + cell * static_cast<float>(shape.cols), at.y + cell * static_cast<float>(shape.rows)),
              ImGui::GetColorU32(ImGuiCol_Border));
}

double AbsMax(const float* values, int count) {
  double m = 0;
  for (int k = 0; k < count; ++k) m = std::max(m, static_cast<double>(std::fabs(values[k])));
  return m;
}

void DrawTcuFragments(const Model& model, const Mapping& m, const PhaseView& v, UiState& ui, const Palette& pal,
                      float width) {
  VortexPanelState& st = VortexState(ui);
  SectionTitle("Tensor unit: two mma_sync per K/V tile",
               "Per K/V tile the warp issues mma_sync twice on 8×8 tiles with K = 16 (fp16 in, fp32 accumulate): "
               "S_ij = Q_i·K_jᵀ, then P~_ij·V_j. The 8-wide dimension is padded with zeros (hatched): half of every "
               "A and B fragment, and 16 of the 32 micro-ops (4×2×2) of each mma_sync, multiply zeros. Hover a "
               "cell for the lane, register and half that hold it.");
  ImGui::Checkbox("colour by lane", &st.color_lanes);
  MathTooltip("Each of the warp's 8 lanes in its own colour: which thread's registers hold which elements");
  ImGui::SameLine();
  ImGui::Checkbox("compare with NVIDIA WMMA 16×16×16", &st.compare_wmma);
  MathTooltip("The fragment tile of the flash2_wmma CUDA kernel, at the same cell size");

  const AttentionInputs& in = model.inputs();
  const bool numeric = in.d == vortex::kTcuTile && in.n >= vortex::kTcuTile && in.n % vortex::kTcuTile == 0 &&
                       v.block >= 0 && v.kv_tile >= 0;
  std::optional<vortex::TcuTileSnapshot> snap;
  if (numeric) snap = vortex::TcuSnapshot(in, v.block, v.kv_tile);
  const float fs = ImGui::GetFontSize();
  const float cell = std::clamp(std::floor((width - fs * 6) / 34.0f), 5.0f, fs * 1.1f);
  // The first mma_sync has run from `scores` on in this tile iteration, the second in `update_o`.
  const Phase phase = v.step.phase;
  const bool first_done = v.kv_tile >= 0 && phase != Phase::kLoadKv;
  const bool second_done = phase == Phase::kUpdateO;
  // The two matrix operations side by side when there is room (2 × 32 cells), else one above the other.
  const bool side_by_side = width >= cell * 64 + fs * 14;
  const float op_w = cell * 32 + fs * 5, op_h = cell * 16 + fs * 1.6f;
  const ImVec2 origin = ImGui::GetCursorScreenPos();
  Canvas("##mma", side_by_side ? ImVec2(2 * op_w + fs * 2, op_h) : ImVec2(op_w, 2 * op_h + fs));
  ImDrawList* dl = ImGui::GetWindowDrawList();
  for (int mma = 1; mma <= 2; ++mma) {
    const bool now = v.mma == mma;
    const bool computed = mma == 1 ? first_done : second_done;
    const ImVec2 top = side_by_side ? ImVec2(origin.x + static_cast<float>(mma - 1) * (op_w + fs * 2), origin.y)
                                    : ImVec2(origin.x, origin.y + static_cast<float>(mma - 1) * (op_h + fs));
    const std::string title = std::string(mma == 1 ? "#1  S_ij = Q_i · K_jᵀ" : "#2  P~_ij · V_j") +
                              (now ? "   ← this phase" : (computed ? "" : "   (not yet in this tile iteration)"));
    DrawMathText(dl, top, now ? pal.cursor : pal.heading, title.c_str());
    const ImVec2 at(top.x, top.y + fs * 1.4f);
    FragmentValues a, b, c;
    if (snap) {
      const double kmax = std::max(AbsMax(snap->q_a.data(), 128), AbsMax(snap->kt_b.data(), 128));
      a = {mma == 1 ? snap->q_a.data() : snap->p_a.data(), mma == 1 ? ColorScale::Symmetric(kmax) : ColorScale::Unit(),
           mma == 1 ? "Q_i" : "P~_ij"};
      b = {mma == 1 ? snap->kt_b.data() : snap->v_b.data(),
           ColorScale::Symmetric(mma == 1 ? kmax : AbsMax(snap->v_b.data(), 128)), mma == 1 ? "K_jᵀ" : "V_j"};
      const float* cv = mma == 1 ? snap->s.data() : snap->pv.data();
      c = {cv, ColorScale::Symmetric(AbsMax(cv, 64)), mma == 1 ? "S_ij" : "P~_ijV_j"};
    } else {
      a.name = mma == 1 ? "Q_i" : "P~_ij";
      b.name = mma == 1 ? "K_jᵀ" : "V_j";
      c.name = mma == 1 ? "S_ij" : "P~_ijV_j";
    }
    const float x_b = at.x + cell * 16 + fs * 1.5f, x_c = x_b + cell * 8 + fs * 2.5f;
    DrawFragment(dl, at, cell, vortex::Fragment::kA, a, st.color_lanes, computed, pal);
    dl->AddText(ImVec2(at.x + cell * 16 + fs * 0.4f, at.y + cell * 3), pal.dim, "×");
    DrawFragment(dl, ImVec2(x_b, at.y), cell, vortex::Fragment::kB, b, st.color_lanes, computed, pal);
    dl->AddText(ImVec2(x_b + cell * 8 + fs * 0.8f, at.y + cell * 3), pal.dim, "→");
    DrawFragment(dl, ImVec2(x_c, at.y), cell, vortex::Fragment::kC, c, st.color_lanes, computed, pal);
    // Where each fragment lives, under A (8 rows tall) and C.
    dl->AddText(ImVec2(at.x, at.y + cell * 8 + 4), pal.dim, "A: f0–f7 (8×16 fp16)");
    dl->AddText(ImVec2(at.x, at.y + cell * 8 + 4 + fs), pal.dim, "B: f10–f17 (16×8 fp16)");
    dl->AddText(ImVec2(x_c, at.y + cell * 8 + 4), pal.dim, "C: f24–f31");
    if (now)
      dl->AddRect(ImVec2(top.x - 3, top.y - 3), ImVec2(x_c + cell * 8 + fs * 4.5f, at.y + cell * 16 + 3), pal.cursor,
                  3.0f, 0, 2.0f);
  }
  if (!numeric) ImGui::TextDisabled("values appear in a tile iteration when d = 8 (the layout is shown without them)");

  if (st.compare_wmma) {
    const int d = m.request.d;
    const vortex::MmaTileShape& vx = vortex::kVortexTcuTile;
    const vortex::MmaTileShape& nv = vortex::kNvidiaWmmaTile;
    MathTextColored(
        pal.heading,
        "The A operand of one matrix instruction, Vortex and NVIDIA, at the same scale (hatched: K padding at this d)");
    const ImVec2 at = ImGui::GetCursorScreenPos();
    Canvas("##wmma", ImVec2(std::max(width, cell * 32 + fs * 40), cell * 16 + fs * 1.4f));
    ImDrawList* wdl = ImGui::GetWindowDrawList();
    // Useful (k < d) and padded cells of an A operand, rows × K.
    auto tile = [&](ImVec2 p, int rows, int k, int useful_k, ImU32 color, const char* title) {
      wdl->AddText(p, pal.heading, title);
      p.y += fs * 1.3f;
      for (int r = 0; r < rows; ++r)
        for (int kk = 0; kk < k; ++kk) {
          const ScreenRect rect{
              ImVec2(p.x + cell * static_cast<float>(kk), p.y + cell * static_cast<float>(r)),
              ImVec2(p.x + cell * static_cast<float>(kk + 1), p.y + cell * static_cast<float>(r + 1))};
          if (kk < useful_k) wdl->AddRectFilled(rect.min, rect.max, WithAlpha(color, 200));
          else DrawHatch(wdl, rect, WithAlpha(ImGui::GetColorU32(ImGuiCol_Text), 90), 3.0f);
        }
      wdl->AddRect(p, ImVec2(p.x + cell * static_cast<float>(k), p.y + cell * static_cast<float>(rows)),
                   ImGui::GetColorU32(ImGuiCol_Border));
    };
    tile(at, vx.m, vx.k, std::min(d, vx.k), ContentColor(RegisterContent::kFragmentA), "Vortex TCU: 8×16 (M×K)");
    const float x_nv = at.x + cell * 16 + fs * 2;
    tile(ImVec2(x_nv, at.y), nv.m, nv.k, std::min(d, nv.k), IM_COL32(118, 185, 0, 255), "NVIDIA WMMA: 16×16");
    const float x_text = x_nv + cell * 16 + fs * 2;
    const std::string lines[] = {
        Sprintf("Vortex wmma_context<8, fp16, fp32>: a warp of %d threads, %d×%d×%d = %lld multiply-adds", vx.threads,
                vx.m, vx.n, vx.k, static_cast<long long>(vortex::MacsPerMma(vx))),
        Sprintf("per mma_sync, %.0f%% of them useful at d = %d. The lane layout follows the 4×2×2 micro-op,",
                100 * vortex::UsefulFraction(vx, d), d),
        Sprintf("so the padding fills whole registers (A: %s; B: %s).",
                vortex::PaddingRegisterNames(vortex::Fragment::kA).c_str(),
                vortex::PaddingRegisterNames(vortex::Fragment::kB).c_str()),
        Sprintf("NVIDIA m16n16k16 (flash2_wmma): a warp of %d threads, %lld multiply-adds, %.0f%% useful", nv.threads,
                static_cast<long long>(vortex::MacsPerMma(nv)), 100 * vortex::UsefulFraction(nv, d)),
        "at this d; one warp owns 16 rows of Q_i (B_r = 64 with 4 warps). WMMA does not say which",
        "lane holds which element, so flash2_wmma probes its accumulator layout once."};
    float y = at.y + fs * 1.3f;
    for (const std::string& line : lines) {
      DrawMathText(wdl, ImVec2(x_text, y), ImGui::GetColorU32(ImGuiCol_Text), line.c_str());
      y += fs * 1.25f;
    }
  }
}

// The three programs of the report counted by the model at this N and d, beside its published measurements.
void DrawProgramTable(const std::array<vortex::ProgramCounts, vortex::kProgramCount>& counts, const Palette& pal) {
  SectionTitle("The three programs",
               "Counted by the model (kernels/vortex/counting.h) at this N, d and machine: operations per thread "
               "summed over all threads, and global-memory bytes. Beside them, the report's measurements on its "
               "own configuration (4 cores × 2 warps × 8 threads, N = 64, d = 8): instructions also count address "
               "arithmetic and loop control, which the model leaves out.");
  if (!ImGui::BeginTable("##programs", 5, ImGuiTableFlags_BordersInnerH | ImGuiTableFlags_SizingFixedFit)) return;
  ImGui::TableSetupColumn("program");
  ImGui::TableSetupColumn("operations");
  ImGui::TableSetupColumn("global B");
  ImGui::TableSetupColumn("mma_sync");
  ImGui::TableSetupColumn("report instr.");
  ImGui::TableHeadersRow();
  for (const vortex::ProgramCounts& c : counts) {
    ImGui::TableNextRow();
    ImGui::TableNextColumn();
    static constexpr const char* kShort[] = {"attention", "flash SIMT", "flash TCU"};
    ImGui::TextUnformatted(kShort[static_cast<int>(c.program)]);
    MathTooltip(std::string(vortex::ProgramTitle(c.program)).c_str());
    if (!c.applicable) {
      MathTooltip(("not applicable: " + Pretty(c.not_applicable_reason)).c_str());
      for (int k = 0; k < 3; ++k) {
        ImGui::TableNextColumn();
        ImGui::TextColored(ImGui::ColorConvertU32ToFloat4(pal.dim), "n/a");
      }
    } else {
      ImGui::TableNextColumn();
      ImGui::Text("%lld", static_cast<long long>(c.total.Total()));
      ImGui::TableNextColumn();
      ImGui::TextUnformatted(
          HumanBytes(static_cast<double>(c.total.GlobalReadBytes() + c.total.GlobalWriteBytes())).c_str());
      ImGui::TableNextColumn();
      ImGui::Text("%lld", static_cast<long long>(c.mma_sync));
    }
    ImGui::TableNextColumn();
    ImGui::Text("%lld",
                static_cast<long long>(vortex::kPublishedTable[static_cast<std::size_t>(c.program)].instructions));
  }
  ImGui::EndTable();
}

}  // namespace

// ---------------------------------------------------------------------------------------------------------
// [SECTION] the panel
// ---------------------------------------------------------------------------------------------------------

void DrawVortexPanel(const Model& model, UiState& ui) {
  if (!model.has_problem()) return;
  const Palette& pal = GetPalette();
  VortexPanelState& st = VortexState(ui);
  DrawControls(ui, ui.appearance.ui_scale);

  const AttentionProblem& problem = model.problem();
  if (problem.backward()) {
    // The Vortex report maps the forward kernel; its programs have no backward pass to step in lockstep.
    ImGui::PushTextWrapPos(0);
    MathTextColored(pal.warn, "The backward pass is stepped in the other tabs: the Vortex programs below are the "
                              "forward pass of the same N and d (the cursor does not follow the backward steps). "
                              "Ctrl+B switches to the forward pass.");
    ImGui::PopTextWrapPos();
  }
  const vortex::Request request{st.machine, st.mode, problem.n, problem.d};
  std::string error;
  const vortex::Report* report = model.VortexReport(request, &error);
  if (!report) {
    ImGui::PushTextWrapPos(0);
    MathTextColored(pal.bad, ("Cannot map: " + error).c_str());
    MathTextColored(pal.dim,
                    "Pick a preset above (it also sets N = 64, d = 8) or change N and d in the Problem panel.");
    ImGui::PopTextWrapPos();
    return;
  }
  const Mapping& m = report->mapping;
  const PhaseView& v = model.VortexView(request);

  DrawVerdict(m, pal);
  // Wrapped, like the verdict: at 1280×720 the centre column is narrower than these lines.
  ImGui::PushTextWrapPos(0);
  MathTextF(
      "B_r = %d, B_c = %d: %d block%s of %d threads (%d warp%s), %d per core at a time; T_c = %d K/V tile%s per block",
      m.br, m.bc, m.tr, m.tr == 1 ? "" : "s", m.threads_per_block, m.warps_per_block, m.warps_per_block == 1 ? "" : "s",
      m.blocks_per_core, m.tc, m.tc == 1 ? "" : "s");
  if (v.runs) {
    MathTextColored(pal.cursor,
                    Sprintf("%s of Q tile %d%s → block %d on core %d, warp%s %d%s — %s", v.phase.c_str(), v.block,
                            v.kv_tile >= 0 ? Sprintf(", K/V tile %d", v.kv_tile).c_str() : "", v.block, v.core,
                            m.warps_per_block > 1 ? "s" : "", v.active.empty() ? 0 : v.active.front().warp,
                            m.warps_per_block > 1 ? Sprintf("–%d", v.active.back().warp).c_str() : "",
                            Pretty(v.what).c_str())
                        .c_str());
  } else {
    MathTextColored(pal.dim, v.what.c_str());
  }
  ImGui::PopTextWrapPos();
  ImGui::Separator();

  const float avail = ImGui::GetContentRegionAvail().x;
  const float left_w = std::floor(avail * 0.5f);
  if (ImGui::BeginTable("##vortex_layout", 2, ImGuiTableFlags_SizingFixedFit | ImGuiTableFlags_BordersInnerV)) {
    ImGui::TableSetupColumn("machine", ImGuiTableColumnFlags_WidthFixed, left_w);
    ImGui::TableSetupColumn("state", ImGuiTableColumnFlags_WidthStretch);
    ImGui::TableNextRow();
    ImGui::TableNextColumn();
    SectionTitle("Cores → warps → threads",
                 "Each cell is one thread, drawn with the values of the query row it owns (the colours of the Q "
                 "heatmap). The block of the current Q tile is framed; blocks of the same wave, running the same "
                 "phase on their own tiles on other cores, are outlined. Click a thread to show its registers.");
    ThreadPick pinned{st.pinned_core, st.pinned_warp, st.pinned_thread};
    // The rows travel into their threads while the step into load_q is animated.
    const double arrive = v.step.phase == Phase::kLoadQ && InTransition(ui) ? TransitionEase(ui) : 1.0;
    const ThreadPick clicked =
        DrawThreadGrid(model, m, v, pinned, pal, left_w - ImGui::GetStyle().CellPadding.x * 2, arrive);
    if (clicked.core >= 0) {
      st.pinned_core = clicked.core;
      st.pinned_warp = clicked.warp;
      st.pinned_thread = clicked.thread;
    }
    SectionTitle("This phase, one block", "Operations the block's threads execute in this step (counted per thread, as "
                                          "Vortex counts instructions), from the counting model of kernels/vortex.");
    std::string ops;
    for (int op = 0; op < vortex::kOpClassCount; ++op) {
      const auto cls = static_cast<vortex::OpClass>(op);
      if (v.block_ops[cls] == 0) continue;
      if (!ops.empty()) ops += ", ";
      ops +=
          Sprintf("%s %lld", std::string(vortex::OpClassName(cls)).c_str(), static_cast<long long>(v.block_ops[cls]));
    }
    ImGui::PushTextWrapPos(0);
    ImGui::TextUnformatted(ops.empty() ? "nothing" : ops.c_str());
    ImGui::PopTextWrapPos();
    DrawProgramTable(report->counts, pal);

    ImGui::TableNextColumn();
    const float right_w = ImGui::GetContentRegionAvail().x;
    // The thread whose registers are shown: the pinned one, else the first active one.
    ThreadPick shown{st.pinned_core, st.pinned_warp, st.pinned_thread};
    if (shown.core < 0 || shown.core >= st.machine.cores || shown.warp >= st.machine.warps_per_core ||
        shown.thread >= st.machine.threads_per_warp) {
      shown =
          v.active.empty() ? ThreadPick{0, 0, 0} : ThreadPick{v.core, v.active.front().warp, v.active.front().thread};
    }
    const int shown_row = m.RowOfThread(shown.core, shown.warp, shown.thread, std::max(v.wave, 0));
    const bool shown_active = std::any_of(v.active.begin(), v.active.end(), [&](const vortex::ActiveThread& a) {
      return shown.core == v.core && a.warp == shown.warp && a.thread == shown.thread;
    });
    SectionTitle("Register file (FP)",
                 st.mode == vortex::Mode::kSimt
                     ? "One thread's 32 FP registers as the SIMT program uses them: its O row (d), its S row that "
                       "becomes the P~ row (B_c), m, ℓ and four temporaries. Bright: live in this phase; framed: "
                       "written in this phase; red frame: past f31, spilled. The allocation is the model's (the "
                       "compiler's may differ in order)."
                     : "The fragments of mma_sync: A in f0–f7, B in f10–f17, the accumulator in f24–f31, two fp16 per "
                       "register for A and B. Hatched: registers that hold only the zero padding of K in every lane. "
                       "The row scalars of thread r (rowmax, m_new, ℓ_new, α, β) use the free registers.");
    // The TCU program exists for d = 8 only: at another d its fragments would show columns that do not exist.
    const bool tcu_elsewhere = st.mode == vortex::Mode::kTcu && m.request.d != vortex::kTcuTile;
    if (tcu_elsewhere) {
      ImGui::PushTextWrapPos(0);
      MathTextColored(pal.dim, Sprintf("Not drawn: the TCU program's registers hold 8 × 8 fragments of d = %d; at "
                                       "d = %d it does not run (see the verdict above).",
                                       vortex::kTcuTile, m.request.d).c_str());
      ImGui::PopTextWrapPos();
    } else {
      DrawRegisterFile(m, v, shown, shown_row, shown_active, pal, right_w);
    }
    SectionTitle("Local memory per core",
                 "Each core's local memory (the program's \"SRAM\") at its byte offsets: the regions of every block "
                 "resident on the core. Filled: holds data in this phase; framed bright: written now; thin frame: read "
                 "now; red hatching: past the capacity.");
    DrawLocalMemory(m, v, pal, right_w);
    ImGui::EndTable();
  }
  if (st.mode == vortex::Mode::kTcu && m.request.d == vortex::kTcuTile) {
    ImGui::Separator();
    DrawTcuFragments(model, m, v, ui, pal, avail);
  }
}

}  // namespace flashviz
