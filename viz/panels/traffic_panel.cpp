// Traffic: where the bytes go, counted by the stepper where it loads and stores tiles (docs/design.md, principle 2).
//   - a memory chart in the layout of Nsight Compute's: HBM ↔ SRAM ↔ compute, each arrow labelled with the bytes
//     this step moved (StepState::delta) and the running total (StepState::ledger)
//   - SRAM occupancy against M, split by resident tile
//   - FlashAttention against standard attention (S and P through HBM): cumulative bytes and the ratio
//   - HBM bytes against N on log-log axes for both, with the current problem marked: every point is a
//     count-only Stepper (FinalLedger) or StandardAttentionLedger, never a formula
//
// [SECTION] the memory chart
// [SECTION] flash against standard
// [SECTION] HBM bytes against N
// [SECTION] the panel
#include <algorithm>
#include <array>
#include <vector>
#include <cmath>

#include "kernels/common/format.h"
#include "viz/panels/panels.h"
#include "viz/plot.h"
#include "viz/widgets.h"

namespace flashviz {
namespace {

// ---------------------------------------------------------------------------------------------------------
// [SECTION] the memory chart
// ---------------------------------------------------------------------------------------------------------

std::string Bytes(std::int64_t b) { return HumanBytes(static_cast<double>(b)); }

const char* ComputeOperation(const Model& m) {
  const bool kv = m.problem().order == LoopOrder::kKvOuter;
  if (m.problem().backward()) {
    switch (m.state().info.phase) {
      case Phase::kDelta: return "D_i = rowsum(dO_i ∘ O_i)";
      case Phase::kScores: return "S_ij = scale·Q_i K_jᵀ (again)";
      case Phase::kProbs: return "P_ij = exp(S_ij − L_i)";
      case Phase::kGradV: return "dV_j += P_ijᵀ dO_i";
      case Phase::kGradP: return "dP_ij = dO_i V_jᵀ";
      case Phase::kGradS: return "dS_ij = P_ij ∘ (dP_ij − D_i)";
      case Phase::kGradK: return "dK_j += scale·dS_ijᵀ Q_i";
      case Phase::kGradQ: return "dQ_i += scale·dS_ij K_j";
      case Phase::kDone: return "done: nothing moves";
      default: return "idle: this phase moves data only";
    }
  }
  switch (m.state().info.phase) {
    case Phase::kScores: return "S_ij = scale·Q_i K_jᵀ";
    case Phase::kRowMax: return kv ? "m~_ij = rowmax(S_ij)" : "m_i ← max(m_i, rowmax S_ij)";
    case Phase::kExp: return kv ? "P~_ij = exp(S_ij − m~_ij)" : "P~_ij = exp(S_ij − m_i)";
    case Phase::kRowSum: return kv ? "ℓ~_ij = rowsum(P~_ij)" : "ℓ_i ← α·ℓ_i + rowsum(P~_ij)";
    case Phase::kUpdateStats: return "m_new, ℓ_new";
    case Phase::kUpdateO: return kv ? "O_i ← (ℓ_i α O_i + β P~_ij V_j)/ℓ_new" : "O_i ← α·O_i + P~_ij V_j";
    case Phase::kFinalize: return "O_i ← O_i / ℓ_i";
    default: return "idle: this phase moves data only";
  }
}

void Arrow(ImDrawList* dl, ImVec2 from, ImVec2 to, ImU32 color, float thickness) {
  const float dir = to.x > from.x ? 1.0f : -1.0f;
  const float head = thickness * 3.0f;
  dl->AddLine(from, ImVec2(to.x - dir * head, to.y), color, thickness);
  dl->AddTriangleFilled(to, ImVec2(to.x - dir * head * 1.4f, to.y - head),
                        ImVec2(to.x - dir * head * 1.4f, to.y + head), color);
}

// An arrow between two boxes with "this step" above (or below) and the total beside it.
void LabelledArrow(ImDrawList* dl, float x0, float x1, float y, bool rightwards, std::int64_t step_bytes,
                   std::int64_t total_bytes, const char* name, bool label_above, float scale) {
  const Palette& pal = GetPalette();
  const bool active = step_bytes > 0;
  const ImU32 color = active ? pal.cursor : pal.dim;
  Arrow(dl, ImVec2(rightwards ? x0 : x1, y), ImVec2(rightwards ? x1 : x0, y), color,
        active ? 3.0f * scale : 1.5f * scale);
  const float fs = ImGui::GetFontSize();
  const std::string now = active ? "+" + Bytes(step_bytes) : std::string("0 B");
  const std::string total = "Σ " + Bytes(total_bytes);
  const float cx = (x0 + x1) / 2;
  const float y_name = label_above ? y - 3 * fs - 6 : y + 6;
  auto centred = [&](float yy, ImU32 c, const std::string& text) {
    const ImVec2 size = CalcMathTextSize(text.c_str());
    DrawMathText(dl, ImVec2(cx - size.x / 2, yy), c, text.c_str());
  };
  centred(y_name, pal.dim, name);
  centred(y_name + fs, active ? pal.cursor : ImGui::GetColorU32(ImGuiCol_Text), now);
  centred(y_name + 2 * fs, pal.dim, total);
}

void Box(ImDrawList* dl, const ScreenRect& r, ImU32 fill, const char* title) {
  dl->AddRectFilled(r.min, r.max, fill, 4.0f);
  dl->AddRect(r.min, r.max, ImGui::GetColorU32(ImGuiCol_Border), 4.0f);
  DrawMathText(dl, ImVec2(r.min.x + 6, r.min.y + 4), GetPalette().heading, title);
}

// The tensors FlashAttention moves (forward and backward); S, P, dP and dS only standard attention does.
constexpr std::array<HbmTensor, 12> kFlashTensors = {
    HbmTensor::kQ, HbmTensor::kK,  HbmTensor::kV,  HbmTensor::kO,  HbmTensor::kL,  HbmTensor::kM,
    HbmTensor::kLse, HbmTensor::kDO, HbmTensor::kD, HbmTensor::kDQ, HbmTensor::kDK, HbmTensor::kDV};

// SramTileName with the UI's notation (ℓ for l, α for alpha).
std::string SramDisplayName(SramTile t) {
  switch (t) {
    case SramTile::kL: return "ℓ_i";
    case SramTile::kLTile: return "ℓ~_ij";
    case SramTile::kLNew: return "ℓ_new";
    case SramTile::kAlpha: return "α";
    default: return std::string(SramTileName(t));
  }
}

const char* TensorLabel(HbmTensor t) {
  switch (t) {
    case HbmTensor::kL: return "ℓ";
    case HbmTensor::kLse: return "L (lse)";
    case HbmTensor::kD: return "D";
    default: return nullptr;
  }
}

std::string TensorName(HbmTensor t) {
  const char* label = TensorLabel(t);
  return label ? std::string(label) : std::string(HbmTensorName(t));
}

void DrawSramBar(ImDrawList* dl, const Model& m, const ScreenRect& bar) {
  const StepState& s = m.state();
  const Palette& pal = GetPalette();
  const std::int64_t budget = m.problem().sram_bytes;
  const std::int64_t peak = std::max(s.ledger.sram_peak_bytes, m.final_ledger().sram_peak_bytes);
  const double full = static_cast<double>(std::max(budget, peak));
  dl->AddRectFilled(bar.min, bar.max, pal.plot_bg);
  float x = bar.min.x;
  static const std::array<ImU32, kSramTileCount> kColors = {
      IM_COL32(90, 150, 230, 255),  IM_COL32(80, 190, 150, 255), IM_COL32(60, 160, 110, 255),
      IM_COL32(230, 150, 70, 255),  IM_COL32(200, 120, 200, 255), IM_COL32(160, 100, 200, 255),
      IM_COL32(230, 200, 70, 255),  IM_COL32(170, 170, 170, 255), IM_COL32(150, 150, 150, 255),
      IM_COL32(130, 130, 130, 255), IM_COL32(120, 120, 120, 255), IM_COL32(200, 90, 90, 255),
      // the backward pass's: dO_i, dK_j, dV_j, dQ_i, L_i, D_i, S_ij/P_ij, dP_ij/dS_ij
      IM_COL32(240, 120, 160, 255), IM_COL32(60, 190, 200, 255), IM_COL32(40, 150, 170, 255),
      IM_COL32(250, 170, 110, 255), IM_COL32(190, 160, 230, 255), IM_COL32(210, 210, 120, 255),
      IM_COL32(230, 200, 70, 255),  IM_COL32(220, 110, 90, 255)};
  for (int k = 0; k < kSramTileCount; ++k) {
    const auto tile = static_cast<SramTile>(k);
    if (!(s.sram_tiles & Bit(tile))) continue;
    const std::int64_t bytes = 4 * SramTileFloats(tile, s.rows, s.cols, m.problem().d);
    const float w = static_cast<float>(static_cast<double>(bytes) / full) * bar.width();
    dl->AddRectFilled(ImVec2(x, bar.min.y), ImVec2(x + w, bar.max.y), kColors[static_cast<std::size_t>(k)]);
    if (w > 2) dl->AddLine(ImVec2(x + w, bar.min.y), ImVec2(x + w, bar.max.y), pal.plot_bg);
    if (ImGui::IsMouseHoveringRect(ImVec2(x, bar.min.y), ImVec2(x + w, bar.max.y))) {
      ImGui::BeginTooltip();
      MathTextF("%s: %s", SramDisplayName(tile).c_str(), Bytes(bytes).c_str());
      ImGui::EndTooltip();
    }
    x += w;
  }
  const float mx = bar.min.x + static_cast<float>(static_cast<double>(budget) / full) * bar.width();
  dl->AddLine(ImVec2(mx, bar.min.y - 4), ImVec2(mx, bar.max.y + 4), pal.bad, 2.0f);
  dl->AddRect(bar.min, bar.max, ImGui::GetColorU32(ImGuiCol_Border));
}

void DrawMemoryChart(const Model& m, const UiState& ui, const ScreenRect& area, float scale) {
  const StepState& s = m.state();
  const Ledger& now = s.delta;
  const Ledger& total = s.ledger;
  const Palette& pal = GetPalette();
  ImDrawList* dl = ImGui::GetWindowDrawList();
  const float w = area.width();
  const float fs = ImGui::GetFontSize();
  const ScreenRect hbm{area.min, ImVec2(area.min.x + w * 0.25f, area.max.y)};
  const ScreenRect sram{ImVec2(area.min.x + w * 0.40f, area.min.y), ImVec2(area.min.x + w * 0.70f, area.max.y)};
  const ScreenRect comp{ImVec2(area.min.x + w * 0.84f, area.min.y), area.max};

  const float top = hbm.min.y + fs + 8;
  std::vector<HbmTensor> listed;
  for (HbmTensor t : kFlashTensors)
    if (total[t].read_bytes || total[t].write_bytes || now[t].read_bytes || now[t].write_bytes) listed.push_back(t);
  // One tensor a line; where the lines do not fit (the backward pass moves ten tensors), a smaller font and the
  // shorter form "dQ 512 B/640 B" (read/written), so none is dropped.
  const float fit = (hbm.max.y - 2 - top) / (fs + 1);
  const bool compact = static_cast<float>(listed.size()) > fit;
  const float size = compact ? std::max(0.6f * fs, fs * fit / static_cast<float>(listed.size())) : fs;
  Box(dl, hbm, pal.hbm, compact ? "HBM (off chip): read/written" : "HBM (off chip)");
  for (std::size_t k = 0; k < listed.size(); ++k) {
    const HbmTensor t = listed[k];
    const float y = top + static_cast<float>(k) * (size + 1);
    if (y + size > hbm.max.y - 2) break;
    const bool moved = now[t].read_bytes > 0 || now[t].write_bytes > 0;
    const std::string line =
        compact ? Sprintf("%s %s/%s", TensorName(t).c_str(), Bytes(total[t].read_bytes).c_str(),
                          Bytes(total[t].write_bytes).c_str())
                : Sprintf("%s  r %s  w %s", TensorName(t).c_str(), Bytes(total[t].read_bytes).c_str(),
                          Bytes(total[t].write_bytes).c_str());
    DrawMathText(dl, ImVec2(hbm.min.x + 8, y), moved ? pal.cursor : ImGui::GetColorU32(ImGuiCol_Text), line.c_str(),
                 nullptr, size);
  }

  Box(dl, sram, pal.sram, Sprintf("SRAM (on chip), M = %s", Bytes(m.problem().sram_bytes).c_str()).c_str());
  const ScreenRect bar{ImVec2(sram.min.x + 8, sram.min.y + fs * 1.6f + 6),
                       ImVec2(sram.max.x - 8, sram.min.y + fs * 2.8f + 6)};
  DrawSramBar(dl, m, bar);
  const double used = static_cast<double>(total.sram_bytes), budget = static_cast<double>(m.problem().sram_bytes);
  float y = bar.max.y + 6;
  DrawMathText(dl, ImVec2(sram.min.x + 8, y), used > budget ? pal.bad : ImGui::GetColorU32(ImGuiCol_Text),
               Sprintf("now %s = %.0f%% of M", Bytes(total.sram_bytes).c_str(), 100.0 * used / budget).c_str());
  y += fs + 1;
  DrawMathText(dl, ImVec2(sram.min.x + 8, y), pal.dim,
               Sprintf("peak %s", Bytes(total.sram_peak_bytes).c_str()).c_str());
  y += fs + 3;
  // The resident tiles, as many to a line as fit.
  float x = sram.min.x + 8;
  bool any = false;
  for (int k = 0; k < kSramTileCount; ++k) {
    if (!(s.sram_tiles & Bit(static_cast<SramTile>(k)))) continue;
    any = true;
    const std::string name = SramDisplayName(static_cast<SramTile>(k));
    const float w = CalcMathTextSize(name.c_str()).x + fs * 0.6f;
    if (x + w > sram.max.x - 4 && x > sram.min.x + 8) {
      x = sram.min.x + 8;
      y += fs + 1;
    }
    if (y + fs > sram.max.y - 2) break;
    DrawMathText(dl, ImVec2(x, y), ImGui::GetColorU32(ImGuiCol_Text), name.c_str());
    x += w;
  }
  if (!any) DrawMathText(dl, ImVec2(sram.min.x + 8, y), pal.dim, "empty");

  Box(dl, comp, pal.compute, "Compute");
  ImGui::PushTextWrapPos(0);
  const std::string op = ComputeOperation(m);
  // Wrap by hand, word by word: the box is narrow (a line is drawn before the word that would overflow it).
  float cy = comp.min.y + fs + 10;
  const float room = comp.width() - 12;
  std::string line;
  const auto flush = [&] {
    if (line.empty()) return;
    DrawMathText(dl, ImVec2(comp.min.x + 6, cy), ImGui::GetColorU32(ImGuiCol_Text), line.c_str());
    cy += fs + 1;
    line.clear();
  };
  for (std::size_t from = 0; from < op.size();) {
    const std::size_t space = std::min(op.find(' ', from), op.size());
    const std::string word = op.substr(from, space - from);
    const std::string trial = line.empty() ? word : line + " " + word;
    if (!line.empty() && CalcMathTextSize(trial.c_str()).x > room) {
      flush();
      line = word;
    } else {
      line = trial;
    }
    from = space + 1;
  }
  flush();
  ImGui::PopTextWrapPos();

  // Arrows: reads above (rightwards), writes below (leftwards).
  const float ya = area.min.y + area.height() * 0.36f, yb = area.min.y + area.height() * 0.72f;
  const float pad = 6 * scale;
  LabelledArrow(dl, hbm.max.x + pad, sram.min.x - pad, ya, true, now.HbmReadBytes(), total.HbmReadBytes(), "HBM → SRAM",
                true, scale);
  LabelledArrow(dl, hbm.max.x + pad, sram.min.x - pad, yb, false, now.HbmWriteBytes(), total.HbmWriteBytes(),
                "SRAM → HBM", false, scale);
  LabelledArrow(dl, sram.max.x + pad, comp.min.x - pad, ya, true, now.sram_read_bytes, total.sram_read_bytes,
                "operands", true, scale);
  LabelledArrow(dl, sram.max.x + pad, comp.min.x - pad, yb, false, now.sram_write_bytes, total.sram_write_bytes,
                "results", false, scale);
  // The step's transition: what this step loads travels along the HBM → SRAM arrow, what it writes back along
  // SRAM → HBM, as a tile-shaped block.
  if (InTransition(ui)) {
    const float e = static_cast<float>(TransitionEase(ui));
    const float w = 18 * scale, h = 12 * scale;
    const auto block = [&](float x, float y) {
      dl->AddRectFilled(ImVec2(x - w / 2, y - h / 2), ImVec2(x + w / 2, y + h / 2), pal.cursor, 2 * scale);
      dl->AddRect(ImVec2(x - w / 2, y - h / 2), ImVec2(x + w / 2, y + h / 2), ImGui::GetColorU32(ImGuiCol_Text),
                  2 * scale);
    };
    const float left = hbm.max.x + pad + w / 2, right = sram.min.x - pad - w / 2;
    if (now.HbmReadBytes() > 0) block(left + (right - left) * e, ya);
    if (now.HbmWriteBytes() > 0) block(right - (right - left) * e, yb);
  }
}

// ---------------------------------------------------------------------------------------------------------
// [SECTION] flash against standard
// ---------------------------------------------------------------------------------------------------------

void Bar(const char* label, double value, double full, ImU32 color, const std::string& text) {
  ImGui::AlignTextToFramePadding();
  MathText(label);
  ImGui::SameLine(ImGui::CalcTextSize("standard, whole run ").x + ImGui::GetStyle().ItemSpacing.x);
  const ImVec2 p =
      ImVec2(ImGui::GetCursorScreenPos().x, ImGui::GetCursorScreenPos().y + ImGui::GetFrameHeight() * 0.1f);
  const float w = ImGui::GetContentRegionAvail().x, h = ImGui::GetFrameHeight() * 0.8f;
  ImDrawList* dl = ImGui::GetWindowDrawList();
  dl->AddRectFilled(p, ImVec2(p.x + w, p.y + h), GetPalette().plot_bg);
  dl->AddRectFilled(p, ImVec2(p.x + w * static_cast<float>(std::clamp(value / full, 0.0, 1.0)), p.y + h), color);
  const ImVec2 size = ImGui::CalcTextSize(text.c_str());
  dl->AddText(ImVec2(p.x + 4, p.y + (h - size.y) / 2), ContrastingText(GetPalette().plot_bg), text.c_str());
  ImGui::Dummy(ImVec2(w, ImGui::GetFrameHeight() - ImGui::GetFrameHeight() * 0.1f));
}

void DrawComparison(const Model& m) {
  const Palette& pal = GetPalette();
  const double so_far = static_cast<double>(m.state().ledger.HbmBytes());
  const double flash = static_cast<double>(m.final_ledger().HbmBytes());
  const double standard = static_cast<double>(m.standard_ledger().HbmBytes());
  const double full = std::max({flash, standard, 1.0});
  const bool backward = m.problem().backward();
  if (backward)
    SectionTitle("Backward: flash against standard",
                 "Standard attention's backward reads the P its forward pass stored (N × N) twice, writes dP and dS "
                 "(N × N each) and reads them back: 7N² floats beside the N × d tensors. FlashAttention-2's backward "
                 "recomputes S_ij and P_ij from Q, K and the saved L on chip; its cost is reloading Q_i, dO_i, L_i, "
                 "D_i and reading and writing dQ_i once per K/V tile.");
  else
    SectionTitle("Flash against standard attention",
                 "Standard attention writes S = scale·QKᵀ (N × N) to HBM, reads it back for the softmax, writes P, "
                 "and reads P again for O = PV: 4N² floats beside the inputs. FlashAttention never lets S or P leave "
                 "SRAM; its cost is reloading tiles (and, in Algorithm 1, O_i, ℓ_i, m_i on every K/V tile).");
  Bar("flash, so far", so_far, full, pal.flash, Bytes(static_cast<std::int64_t>(so_far)));
  Bar("flash, whole run", flash, full, pal.flash, Bytes(static_cast<std::int64_t>(flash)));
  Bar("standard, whole run", standard, full, pal.standard, Bytes(static_cast<std::int64_t>(standard)));
  MathTextF("standard / flash = %.2f×", flash > 0 ? standard / flash : 0.0);
  ImGui::SameLine();
  if (backward)
    HelpMarker("Below 1× FlashAttention's backward moves more bytes than standard attention's: it reads Q_i, dO_i "
               "and reads and writes dQ_i once per K/V tile, about 16·N²·d/B_c bytes against standard's 28·N², so it "
               "wins when B_c is large against d.");
  else
    HelpMarker("Below 1× FlashAttention moves more bytes than standard attention: Algorithm 1 (kv order) reads Q_i "
               "and reads and writes O_i, ℓ_i, m_i once per K/V tile, about 12·N²·d/B_c bytes against standard's "
               "16·N², so it wins only when B_c (that is M) is large against d. The q order loads Q_i once.");
  if (backward) {
    // A training step pays both passes: the forward pass (q order, which saves O and L) and this one.
    const double flash_total = static_cast<double>(m.forward_ledger().HbmBytes()) + flash;
    const double standard_total = static_cast<double>(m.standard_forward_ledger().HbmBytes()) + standard;
    const double total_full = std::max({flash_total, standard_total, 1.0});
    Bar("flash, fwd + bwd", flash_total, total_full, pal.flash, Bytes(static_cast<std::int64_t>(flash_total)));
    Bar("standard, fwd + bwd", standard_total, total_full, pal.standard,
        Bytes(static_cast<std::int64_t>(standard_total)));
    MathTextF("forward + backward: standard / flash = %.2f×", flash_total > 0 ? standard_total / flash_total : 0.0);
    ImGui::SameLine();
    HelpMarker("The whole training step: the forward pass in the q order (FlashAttention-2, which saves O and L for "
               "this pass) plus this backward pass, against standard attention's forward (which stores P) plus its "
               "backward.");
  }

  if (ImGui::BeginTable("##tensors", 5, ImGuiTableFlags_BordersInnerH | ImGuiTableFlags_SizingStretchProp)) {
    ImGui::TableSetupColumn("HBM");
    ImGui::TableSetupColumn("flash r");
    ImGui::TableSetupColumn("flash w");
    ImGui::TableSetupColumn("std r");
    ImGui::TableSetupColumn("std w");
    ImGui::TableHeadersRow();
    const Ledger& f = m.final_ledger();
    const Ledger& sl = m.standard_ledger();
    for (int k = 0; k < kHbmTensorCount; ++k) {
      const auto t = static_cast<HbmTensor>(k);
      if (f[t].read_bytes + f[t].write_bytes + sl[t].read_bytes + sl[t].write_bytes == 0) continue;
      ImGui::TableNextRow();
      ImGui::TableNextColumn();
      MathText(TensorName(t).c_str());
      for (std::int64_t v : {f[t].read_bytes, f[t].write_bytes, sl[t].read_bytes, sl[t].write_bytes}) {
        ImGui::TableNextColumn();
        if (v) ImGui::TextUnformatted(Bytes(v).c_str());
        else ImGui::TextDisabled("–");
      }
    }
    ImGui::EndTable();
  }
}

// ---------------------------------------------------------------------------------------------------------
// [SECTION] HBM bytes against N
// ---------------------------------------------------------------------------------------------------------

void DrawSweepPlot(const Model& m, ImVec2 size) {
  const Palette& pal = GetPalette();
  const Sweep* sweep = m.sweep_current() ? m.sweep() : nullptr;
  PlotSpec spec;
  spec.title =
      Sprintf("HBM bytes against N (d = %d, B_r = %d, B_c = %d)", m.problem().d, m.problem().br, m.problem().bc);
  spec.x.label = "N";
  spec.x.log = true;
  spec.x.log_base = 2;
  spec.x.format = [](double v) { return Sprintf("%.0f", v); };
  spec.y.label = "HBM bytes read + written";
  spec.y.log = true;
  spec.y.log_base = 2;
  spec.y.format = [](double v) { return HumanBytes(v); };
  spec.empty_message = "counting…";
  if (sweep) {
    PlotSeries flash{"FlashAttention", {}, {}, pal.flash};
    PlotSeries standard{"standard attention", {}, {}, pal.standard};
    for (const SweepPoint& p : sweep->points) {
      flash.x.push_back(p.n);
      flash.y.push_back(static_cast<double>(p.flash_hbm_bytes));
      standard.x.push_back(p.n);
      standard.y.push_back(static_cast<double>(p.standard_hbm_bytes));
    }
    spec.series = {std::move(flash), std::move(standard)};
  }
  const double n = m.problem().n;
  spec.marks.push_back({n, static_cast<double>(m.final_ledger().HbmBytes()),
                        Sprintf("N = %d (this problem)", m.problem().n), pal.cursor});
  spec.marks.push_back({n, static_cast<double>(m.standard_ledger().HbmBytes()), "", pal.cursor});
  Plot("##sweep", size, spec);
  if (sweep && !sweep->note.empty()) {
    ImGui::PushTextWrapPos(0);
    ImGui::TextDisabled("%s", sweep->note.c_str());
    ImGui::PopTextWrapPos();
  }
}

}  // namespace

// ---------------------------------------------------------------------------------------------------------
// [SECTION] the panel
// ---------------------------------------------------------------------------------------------------------

void DrawTrafficPanel(const Model& model, UiState& ui) {
  if (!model.has_problem()) return;
  if (model.ring_mode()) return DrawRingTrafficPanel(model, ui);
  if (model.decode_mode()) return DrawDecodeTrafficPanel(model, ui);
  const ImVec2 avail = ImGui::GetContentRegionAvail();
  const ImVec2 origin = ImGui::GetCursorScreenPos();
  const float fs = ImGui::GetFontSize();
  SectionTitle("Memory chart for this step",
               "As in Nsight Compute's memory chart: HBM (large, slow, off chip) ↔ SRAM (small, fast, on chip) ↔ the "
               "compute units. Each arrow shows the bytes this step moved (+, bright when non-zero) and the running "
               "total (Σ). The counts come from the stepper's loads and stores, edge tiles at their real size.");
  const float chart_h = std::clamp(avail.y * 0.40f, 11.5f * fs, 15.0f * fs);
  const ImVec2 c0 = ImGui::GetCursorScreenPos();
  DrawMemoryChart(model, ui, {c0, ImVec2(c0.x + avail.x, c0.y + chart_h)}, ui.appearance.ui_scale);
  ImGui::SetCursorScreenPos(ImVec2(c0.x, c0.y + chart_h + ImGui::GetStyle().ItemSpacing.y));
  const float rest_h = origin.y + avail.y - ImGui::GetCursorScreenPos().y;
  const float left_w = std::floor(avail.x * 0.46f);
  ImGui::BeginChild("##comparison", ImVec2(left_w, rest_h), false);
  DrawComparison(model);
  ImGui::EndChild();
  ImGui::SameLine();
  ImGui::BeginChild("##sweep-child", ImVec2(0, rest_h), false);
  DrawSweepPlot(model, ImVec2(ImGui::GetContentRegionAvail().x,
                              ImGui::GetContentRegionAvail().y - ImGui::GetTextLineHeightWithSpacing()));
  ImGui::EndChild();
}

}  // namespace flashviz
