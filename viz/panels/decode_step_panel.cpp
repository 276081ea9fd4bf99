// Decoding's views (DrawStepPanel, DrawTrafficPanel and the timeline hand over to them in decode mode):
//  - the step view: on the left the KV cache as pages in a pool (each block holds a page of every KV head; the
//    splits coloured, the current split's blocks framed), the block table beside it and the query heads grouped
//    over their KV head; on the right the split on chip, large with its numbers (S then P~ with m_s, O_s with ℓ_s),
//    the partials in HBM as they are written, and the merge: α_s per row and split, M, ℓ and O filled split by split.
//  - the traffic: bytes per tensor against decode_naive, the KV cache reads, the partials' share, SRAM against M.
// Every number is the decode stepper's (Model::decode_state); hovers come from viz/decode_formulas.h.
#include <algorithm>
#include <cmath>

#include "kernels/common/format.h"
#include "viz/colormap.h"
#include "viz/decode_formulas.h"
#include "viz/frame_report.h"
#include "viz/panels/number_grid.h"
#include "viz/panels/panels.h"
#include "viz/widgets.h"

namespace flashviz {
namespace {

// One colour per split, apart in hue; the same in the pool, the block table and the partials.
ImU32 SplitColor(int split, float alpha = 1.0f) {
  // Golden-ratio steps in hue: neighbouring splits far apart however many there are.
  const float hue = std::fmod(0.08f + 0.618034f * static_cast<float>(split), 1.0f);
  float r, g, b;
  ImGui::ColorConvertHSVtoRGB(hue, 0.55f, 0.88f, r, g, b);
  return ImGui::GetColorU32(ImVec4(r, g, b, alpha));
}

// Which splits of KV head g have been read by this step (their load_kv ran), for the pool's fading.
bool SplitRead(const DecodeState& s, const DecodeProblem& p, int g, int split) {
  if (s.info.phase == DecodePhase::kDone) return true;
  if (g < s.info.kv_head) return true;
  if (g > s.info.kv_head) return false;
  const bool merging = !s.merge.m.empty();
  return merging || split <= s.info.split || (s.info.split < 0 && p.splits == 1);
}

// The pool: one block per page in physical order, each with a band per KV head. Returns the height it took.
float DrawPool(const Model& m, const ScreenRect& area, float max_cell, Hovered& hovered) {
  const DecodeProblem& p = m.decode_problem();
  const DecodeState& s = m.decode_state();
  const Palette& pal = GetPalette();
  ImDrawList* dl = ImGui::GetWindowDrawList();
  const int blocks = p.pages();
  // Columns so that blocks come out about square.
  int cols = std::max(1, static_cast<int>(std::ceil(std::sqrt(blocks * area.width() / std::max(area.height(), 1.0f)))));
  cols = std::min(cols, blocks);
  const int rows = (blocks + cols - 1) / cols;
  const float cell = std::floor(
      std::min({area.width() / static_cast<float>(cols), area.height() / static_cast<float>(rows), max_cell}));
  if (cell < 3) return 0;
  std::vector<int> page_of_block(static_cast<std::size_t>(blocks));
  for (int page = 0; page < blocks; ++page)
    page_of_block[static_cast<std::size_t>(p.block_table[static_cast<std::size_t>(page)])] = page;
  ImFont* mono = MonoFont();
  const float band = (cell - 3) / static_cast<float>(p.shape.kv_heads);
  const ImVec2 mouse = ImGui::GetIO().MousePos;
  std::vector<ScreenRect> framed;  // drawn last, over the labels
  for (int b = 0; b < blocks; ++b) {
    const int page = page_of_block[static_cast<std::size_t>(b)];
    const int split = p.SplitOfPage(page);
    const ScreenRect r = Rect(area.min.x + cell * static_cast<float>(b % cols),
                              area.min.y + cell * static_cast<float>(b / cols), cell - 2, cell - 2);
    for (int g = 0; g < p.shape.kv_heads; ++g) {
      const bool current = g == s.info.kv_head && split == s.info.split && s.merge.m.empty();
      const float alpha = current ? 1.0f : SplitRead(s, p, g, split) ? 0.25f : 0.6f;
      const ScreenRect br = Rect(r.min.x, r.min.y + band * static_cast<float>(g), r.width(), std::max(band - 1, 1.0f));
      dl->AddRectFilled(br.min, br.max, SplitColor(split, alpha));
      if (current) framed.push_back(br);  // the band the split reads: KV head g's keys of this page
    }
    // The page it holds on a chip of the window's colour (legible over any band), the block's number in a corner.
    const std::string label = Sprintf("p%d", page);
    const ImVec2 size = mono->CalcTextSizeA(mono->FontSize, FLT_MAX, 0, label.c_str());
    if (size.x + 6 < r.width() && size.y + 2 < r.height()) {
      const ImVec2 at(r.min.x + (r.width() - size.x) / 2, r.min.y + (r.height() - size.y) / 2);
      dl->AddRectFilled(ImVec2(at.x - 2, at.y), ImVec2(at.x + size.x + 2, at.y + size.y),
                        ImGui::GetColorU32(ImGuiCol_WindowBg, 0.85f), 3.0f);
      dl->AddText(mono, mono->FontSize, at, ImGui::GetColorU32(ImGuiCol_Text), label.c_str());
      const std::string block_name = Sprintf("b%d", b);
      const float small = mono->FontSize * 0.8f;
      const ImVec2 block_size = mono->CalcTextSizeA(small, FLT_MAX, 0, block_name.c_str());
      if (block_size.y * 2 + size.y <= r.height())
        dl->AddText(mono, small, ImVec2(r.max.x - block_size.x - 2, r.max.y - block_size.y - 1),
                    ImGui::GetColorU32(ImGuiCol_Text), block_name.c_str());
    }
    if (r.Contains(mouse) && ImGui::IsWindowHovered(ImGuiHoveredFlags_ChildWindows)) {
      Explanation x;
      x.available = true;
      x.value = b;
      x.title = Sprintf("block %d of the pool holds page %d: keys %d … %d", b, page, page * p.page,
                        std::min(p.kv_len(), (page + 1) * p.page) - 1);
      x.lines.push_back(
          Sprintf("of every KV head (one band each, KV head 0 on top); split %d reads it one KV head at "
                  "a time (the framed band is the one being read)",
                  split));
      x.lines.push_back(
          Sprintf("block_table[%d] = %d: the split finds it through the table, not by position", page, b));
      hovered = {x, true};
    }
  }
  for (const ScreenRect& band_rect : framed) {
    DrawCursorRect(dl, band_rect, pal.cursor, 2.0f);
    if (FrameReport* report = CurrentFrameReport()) report->decode_split_blocks.push_back(band_rect);
  }
  const ScreenRect used =
      Rect(area.min.x, area.min.y, cell * static_cast<float>(cols), cell * static_cast<float>(rows));
  if (FrameReport* report = CurrentFrameReport()) report->tile_grids.push_back(used);
  return used.height();
}

// The block table: logical page → physical block, coloured by split, the current split's entries framed. Returns
// the height it took.
float DrawBlockTable(const Model& m, const ScreenRect& area, Hovered& hovered) {
  const DecodeProblem& p = m.decode_problem();
  const DecodeState& s = m.decode_state();
  ImDrawList* dl = ImGui::GetWindowDrawList();
  ImFont* mono = MonoFont();
  const int pages = p.pages();
  const float entry_w = mono->CalcTextSizeA(mono->FontSize, FLT_MAX, 0, Sprintf("%d→%d", pages, pages).c_str()).x + 8;
  const float entry_h = mono->FontSize + 4;
  const int per_row = std::max(1, static_cast<int>(area.width() / entry_w));
  const ImVec2 mouse = ImGui::GetIO().MousePos;
  float bottom = area.min.y;
  for (int page = 0; page < pages; ++page) {
    const float y = area.min.y + entry_h * static_cast<float>(page / per_row);
    if (y + 2 * entry_h > area.max.y && page / per_row != (pages - 1) / per_row) {
      dl->AddText(ImVec2(area.min.x, y), GetPalette().dim, Sprintf("… %d more pages", pages - page).c_str());
      bottom = y + entry_h;
      break;
    }
    bottom = y + entry_h;
    const ScreenRect r = Rect(area.min.x + entry_w * static_cast<float>(page % per_row), y, entry_w - 2, entry_h - 1);
    const int split = p.SplitOfPage(page);
    dl->AddRectFilled(r.min, r.max, SplitColor(split, 0.45f));
    if (split == s.info.split && s.merge.m.empty() && s.info.kv_head >= 0)
      DrawCursorRect(dl, r, GetPalette().cursor, 1.5f);
    const std::string text = Sprintf("%d→%d", page, p.block_table[static_cast<std::size_t>(page)]);
    dl->AddText(mono, mono->FontSize, ImVec2(r.min.x + 3, r.min.y + 1), ImGui::GetColorU32(ImGuiCol_Text),
                text.c_str());
    if (r.Contains(mouse) && ImGui::IsWindowHovered(ImGuiHoveredFlags_ChildWindows)) {
      Explanation x;
      x.available = true;
      x.value = p.block_table[static_cast<std::size_t>(page)];
      x.title = Sprintf("block_table[%d] = %d", page, p.block_table[static_cast<std::size_t>(page)]);
      x.lines.push_back(
          Sprintf("page %d (keys %d … %d) sits in block %d of the pool; split %d reads this entry "
                  "(4 bytes) before its keys",
                  page, page * p.page, std::min(p.kv_len(), (page + 1) * p.page) - 1,
                  p.block_table[static_cast<std::size_t>(page)], split));
      hovered = {x, true};
    }
  }
  return bottom - area.min.y;
}

// The query heads grouped over their KV head.
void DrawHeads(const Model& m, const ScreenRect& area, Hovered& hovered) {
  const DecodeProblem& p = m.decode_problem();
  const DecodeState& s = m.decode_state();
  const Palette& pal = GetPalette();
  ImDrawList* dl = ImGui::GetWindowDrawList();
  const int groups = p.shape.kv_heads;
  const float gap = 6;
  const float group_w = std::floor((area.width() - gap * static_cast<float>(groups - 1)) / static_cast<float>(groups));
  if (group_w < 6) return;
  const float line = ImGui::GetTextLineHeight();
  const ImVec2 mouse = ImGui::GetIO().MousePos;
  for (int g = 0; g < groups; ++g) {
    const ScreenRect r = Rect(area.min.x + (group_w + gap) * static_cast<float>(g), area.min.y, group_w, area.height());
    const bool current = g == s.info.kv_head;
    dl->AddRect(r.min, r.max, current ? pal.cursor : ImGui::GetColorU32(ImGuiCol_Border), 0, 0, current ? 2.0f : 1.0f);
    const std::string kv = groups <= 4 || group_w > 50 ? Sprintf("KV %d", g) : std::to_string(g);
    if (CalcMathTextSize(kv.c_str()).x + 4 < group_w)
      DrawMathText(dl, ImVec2(r.min.x + 3, r.min.y + 1), pal.dim, kv.c_str());
    // One small square per query head of the group, coloured while its rows are on chip or merged.
    const int heads = p.group();
    const float sq = std::min((group_w - 4) / static_cast<float>(heads), std::max(r.height() - line - 4, 2.0f));
    for (int k = 0; k < heads; ++k) {
      const ScreenRect hr = Rect(r.min.x + 2 + sq * static_cast<float>(k), r.max.y - sq - 2, sq - 1, sq - 1);
      dl->AddRectFilled(hr.min, hr.max, current ? pal.cursor_fill : pal.pending);
      dl->AddRect(hr.min, hr.max, ImGui::GetColorU32(ImGuiCol_Border));
      const std::string name = Sprintf("h%d", p.FirstHeadOf(g) + k);
      const ImVec2 size = ImGui::CalcTextSize(name.c_str());
      if (size.x + 2 < hr.width() && size.y < hr.height())
        dl->AddText(ImVec2(hr.min.x + (hr.width() - size.x) / 2, hr.min.y + (hr.height() - size.y) / 2),
                    ImGui::GetColorU32(ImGuiCol_Text), name.c_str());
    }
    if (r.Contains(mouse) && ImGui::IsWindowHovered(ImGuiHoveredFlags_ChildWindows)) {
      Explanation x;
      x.available = true;
      x.value = g;
      x.title = Sprintf("KV head %d: query heads %d … %d", g, p.FirstHeadOf(g), p.FirstHeadOf(g) + heads - 1);
      x.lines.push_back(
          Sprintf("query head h reads KV head ⌊h·G/H⌋ = ⌊h·%d/%d⌋: %d heads × %d row%s = %d rows per "
                  "split, one K/V chunk for all of them",
                  groups, p.shape.heads, heads, p.shape.q_rows, p.shape.q_rows == 1 ? "" : "s", p.rows()));
      hovered = {x, true};
    }
  }
}

// A rows × S grid's column header: each split's colour; `framed` (≥ 0) framed with the cursor.
void DrawSplitHeader(const ScreenRect& grid, int splits, int framed) {
  ImDrawList* dl = ImGui::GetWindowDrawList();
  const float w = grid.width() / static_cast<float>(splits);
  for (int k = 0; k < splits; ++k) {
    const ScreenRect r = Rect(grid.min.x + w * static_cast<float>(k), grid.min.y - 5, w - 1, 4);
    dl->AddRectFilled(r.min, r.max, SplitColor(k));
    if (k == framed)
      DrawCursorRect(dl, Rect(grid.min.x + w * static_cast<float>(k), grid.min.y, w, grid.height()),
                     GetPalette().cursor, 2.0f);
  }
}

// The rows of a grid of the group's query rows, named by their head ("h2", or "h2·r1" with several rows a head), in
// the margin left of the grid.
void DrawRowLabels(const DecodeProblem& p, int g, const ScreenRect& grid, int rows) {
  if (rows <= 0 || grid.height() <= 0) return;
  const float cell = grid.height() / static_cast<float>(rows);
  if (cell < ImGui::GetTextLineHeight() * 0.8f) return;
  ImDrawList* dl = ImGui::GetWindowDrawList();
  for (int r = 0; r < rows; ++r) {
    const int h = p.FirstHeadOf(g) + r / p.shape.q_rows;
    const std::string name = p.shape.q_rows == 1 ? Sprintf("h%d", h) : Sprintf("h%d·r%d", h, r % p.shape.q_rows);
    const ImVec2 size = ImGui::CalcTextSize(name.c_str());
    dl->AddText(ImVec2(grid.min.x - size.x - 4, grid.min.y + cell * (static_cast<float>(r) + 0.5f) - size.y / 2),
                GetPalette().dim, name.c_str());
  }
}

// The right area less the row labels' margin.
ScreenRect LessRowLabels(const DecodeProblem& p, const ScreenRect& area) {
  const float w = ImGui::CalcTextSize(p.shape.q_rows == 1 ? "h000" : "h000·r00").x + 6;
  return {ImVec2(area.min.x + w, area.min.y), area.max};
}

// The label under a grid, at its left edge.
void DrawGridName(const ScreenRect& grid, const char* name) {
  DrawMathText(ImGui::GetWindowDrawList(), ImVec2(grid.min.x, grid.max.y + 1), GetPalette().dim, name);
}

// m_s (left) and ℓ_s (right) per row and split, NaN (no number) where a split has not written its partial yet.
// `stat` beside the m_s grid: the merge's M (null in the split view). Returns the height used.
void DrawPartialStats(const Model& m, UiState& ui, const ScreenRect& area, const std::vector<double>& m_split,
                      const std::vector<double>& l_split, const std::vector<double>* stat, const char* stat_name,
                      const RowExplainer& explain_stat, int framed, Hovered& hovered) {
  const DecodeProblem& p = m.decode_problem();
  const DecodeState& s = m.decode_state();
  const float gap = 8.0f * ui.appearance.ui_scale;
  const float half = std::floor((area.width() - gap) / 2);
  const std::uint64_t v = m.step_version();
  const ScreenRect m_grid = DrawNumberGrid(
      "dec-partials-m", ui, Rect(area.min.x, area.min.y, half, area.height()), s.rows, p.splits, &m_split,
      ColorScale::Symmetric(FiniteAbsMax(m_split)), stat, stat_name,
      [&](int r, int c) { return ExplainDecodePartial(m, c, r); }, explain_stat, "", v * 8 + 2, hovered, -1);
  DrawSplitHeader(m_grid, p.splits, framed);
  DrawRowLabels(p, s.info.kv_head, m_grid, s.rows);
  DrawGridName(m_grid, "m_s");
  const ScreenRect l_grid = DrawNumberGrid(
      "dec-partials-l", ui, Rect(area.min.x + half + gap, area.min.y, half, area.height()), s.rows, p.splits, &l_split,
      ColorScale::Symmetric(FiniteAbsMax(l_split)), nullptr, "",
      [&](int r, int c) { return ExplainDecodePartial(m, c, r); }, nullptr, "", v * 8 + 5, hovered, -1);
  DrawSplitHeader(l_grid, p.splits, framed);
  DrawGridName(l_grid, "ℓ_s");
}

void DrawSplitTiles(const Model& m, UiState& ui, const ScreenRect& whole, Hovered& hovered) {
  const DecodeProblem& p = m.decode_problem();
  const DecodeState& s = m.decode_state();
  const ScreenRect area = LessRowLabels(p, whole);
  const float title_h = ImGui::GetTextLineHeightWithSpacing() + 2;
  const float gap = 8.0f * ui.appearance.ui_scale;
  const std::uint64_t v = m.step_version();
  const int rows = s.rows, keys = std::max(s.keys, 1), d = p.d(), g = s.info.kv_head;
  // Three bands: the scores, O_s, the partials so far (none with one split); the scores take the most room.
  const bool partials = p.splits > 1;
  const float line = ImGui::GetTextLineHeight();  // the label under a grid
  const float band = area.height() - (partials ? 3 : 2) * title_h - 2 * gap - line * 3 - 5;
  const float s_h = std::floor(band * (partials ? 0.42f : 0.55f));
  const float o_h = partials ? std::floor(band * 0.33f) : band - s_h, part_h = band - s_h - o_h;
  float y = area.min.y;
  const bool show_p = !s.split.p.empty();
  const std::string keys_text = Sprintf("keys %d … %d", s.key_begin, s.key_begin + keys - 1);
  ImGui::SetCursorScreenPos(ImVec2(whole.min.x, y));
  SectionTitle(FittingTitle(Sprintf("Split %d of KV head %d, %s: %s", s.info.split, g, keys_text.c_str(),
                                    show_p ? "P~ = exp(S − m_s), m_s beside" : "S = scale·q·kᵀ")
                                .c_str(),
                            (keys_text + (show_p ? ": P~ = exp(S − m_s)" : ": S = scale·q·kᵀ")).c_str(), whole.width()),
               "The split on chip: the group's query rows (one per query head sharing this KV head, × R) against "
               "the split's keys. Its softmax is its own: m_s is the split's row maximum, not the cache's.");
  y += title_h;
  const ScreenRect s_grid = DrawNumberGrid(
      "dec-s", ui, Rect(area.min.x, y, area.width(), s_h), rows, keys,
      show_p              ? &s.split.p
      : s.split.s.empty() ? nullptr
                          : &s.split.s,
      show_p ? ColorScale::Unit() : ColorScale::Symmetric(FiniteAbsMax(s.split.s)),
      s.split.m.empty() ? nullptr : &s.split.m, "m_s",
      [&](int r, int c) { return show_p ? ExplainDecodeProbability(m, r, c) : ExplainDecodeScore(m, r, c); },
      [&](int r) { return ExplainDecodeSplitMax(m, r); }, "scores not computed yet", v * 8, hovered, -1);
  if (FrameReport* report = CurrentFrameReport()) report->split_numbers_shown = report->tile_numbers_shown;
  DrawRowLabels(p, g, s_grid, rows);
  y += s_h + line + gap;

  // O_s, or with one split at write_o the O it writes: O_0 / ℓ_0.
  const bool written = s.info.phase == DecodePhase::kWriteO;
  ImGui::SetCursorScreenPos(ImVec2(whole.min.x, y));
  if (written) {
    SectionTitle("O = O_0 / ℓ_0, written to HBM (one split: no partials, no merge)",
                 "With a single split its softmax is the whole cache's: O_0 divided by ℓ_0 is the answer.");
  } else {
    SectionTitle(
        FittingTitle(Sprintf("O_%d = P~ V (unnormalized), ℓ_%d beside", s.info.split, s.info.split).c_str(), "O_s",
                     whole.width()),
        partials ? "The split's output, not divided by ℓ_s: the merge rescales every split's O_s and ℓ_s by α_s before "
                   "one division at the end."
                 : "Not divided by ℓ_0 yet: with one split that happens at write_o.");
  }
  y += title_h;
  const std::vector<double>& o = written ? s.o_final : s.split.o;
  const ScreenRect o_grid = DrawNumberGrid(
      "dec-o", ui, Rect(area.min.x, y, area.width(), o_h), rows, d, o.empty() ? nullptr : &o,
      ColorScale::Symmetric(o.empty() ? 1.0 : FiniteAbsMax(o)), s.split.l.empty() ? nullptr : &s.split.l,
      written ? "ℓ_0" : "ℓ_s",
      [&](int r, int e) {
        Explanation x = ExplainDecodeSplitOutput(m, r, e);
        if (written && x.available) {
          const double value = s.o_final[static_cast<std::size_t>(r) * d + e];
          x.lines.insert(x.lines.begin(), Sprintf("written: O = O_0 / ℓ_0 = %s / %s = %s", Num(x.value, 6).c_str(),
                                                  Num(s.split.l[r], 6).c_str(), Num(value, 6).c_str()));
          x.value = value;
        }
        return x;
      },
      [&](int r) { return ExplainDecodeSplitSum(m, r); }, "not computed yet", v * 8 + (written ? 6 : 1), hovered, -1);
  DrawRowLabels(p, g, o_grid, rows);
  if (!partials) return;
  y += o_h + line + gap;

  // The partials in HBM so far (no number for the splits not written yet).
  ImGui::SetCursorScreenPos(ImVec2(whole.min.x, y));
  SectionTitle(FittingTitle("Partials in HBM: m_s (left) and ℓ_s (right), a column per split", "Partials: m_s | ℓ_s",
                            whole.width()),
               "Each split writes m_s, ℓ_s and its O_s (d values a row) to HBM as soon as it is done; the merge reads "
               "them back. One column per split, in its colour; empty until the split has written.");
  y += title_h + 5;
  std::vector<double> m_split(static_cast<std::size_t>(rows) * p.splits, std::nan(""));
  std::vector<double> l_split(m_split.size(), std::nan(""));
  for (std::size_t k = 0; k < s.partials.size(); ++k)
    for (int r = 0; r < rows; ++r) {
      m_split[static_cast<std::size_t>(r) * p.splits + k] = s.partials[k].m[r];
      l_split[static_cast<std::size_t>(r) * p.splits + k] = s.partials[k].l[r];
    }
  DrawPartialStats(m, ui, Rect(area.min.x, y, area.width(), part_h), m_split, l_split, nullptr, "", nullptr,
                   s.info.phase == DecodePhase::kWritePartial ? s.info.split : -1, hovered);
}

void DrawMergeTiles(const Model& m, UiState& ui, const ScreenRect& whole, Hovered& hovered) {
  const DecodeProblem& p = m.decode_problem();
  const DecodeState& s = m.decode_state();
  const DecodeMergeNumerics& mg = s.merge;
  const ScreenRect area = LessRowLabels(p, whole);
  const float title_h = ImGui::GetTextLineHeightWithSpacing() + 2;
  const float gap = 8.0f * ui.appearance.ui_scale;
  const std::uint64_t v = m.step_version();
  const int rows = s.rows, d = p.d(), g = s.info.kv_head;
  const float line = ImGui::GetTextLineHeight();  // the label under a grid
  const float band = area.height() - 3 * title_h - 2 * gap - line * 3 - 10;
  const float stats_h = std::floor(band * 0.3f), o_h = band - 2 * stats_h;
  const int framed = s.info.phase == DecodePhase::kMergeO ? s.info.split : -1;
  float y = area.min.y;

  ImGui::SetCursorScreenPos(ImVec2(whole.min.x, y));
  SectionTitle(
      FittingTitle(
          Sprintf("Merge of KV head %d: the partials' m_s (M = max_s m_s beside) and ℓ_s, read back", g).c_str(),
          Sprintf("Merge of KV head %d: m_s, M, ℓ_s", g).c_str(), whole.width()),
      "Every split computed its softmax against its own maximum m_s. The merge first reads every split's "
      "m_s and ℓ_s (a few bytes a row) and takes the row's maximum over the whole cache, M.");
  y += title_h + 5;
  DrawPartialStats(
      m, ui, Rect(area.min.x, y, area.width(), stats_h), mg.m_split, mg.l_split, &mg.m, "M",
      [&](int r) { return ExplainDecodeMergeMax(m, r); }, framed, hovered);
  y += stats_h + line + gap;

  ImGui::SetCursorScreenPos(ImVec2(whole.min.x, y));
  SectionTitle(FittingTitle("α_s = e^(m_s − M) per split, ℓ = Σ α_s ℓ_s beside", "α_s = e^(m_s − M)", whole.width()),
               "The online softmax's rescaling one level up: split s is weighed by α_s = e^(m_s − M) ≤ 1 (1 for the "
               "split that holds the maximum). The framed column is the split being added; underlined, those added.");
  y += title_h + 5;
  const ScreenRect a_grid = DrawNumberGrid(
      "dec-alpha", ui, Rect(area.min.x, y, area.width(), stats_h), rows, p.splits, &mg.alpha, ColorScale::Unit(), &mg.l,
      "ℓ", [&](int r, int k) { return ExplainDecodeAlpha(m, r, k); },
      [&](int r) { return ExplainDecodeMergeSum(m, r); }, "", v * 8 + 3, hovered, -1);
  DrawSplitHeader(a_grid, p.splits, framed);
  DrawRowLabels(p, g, a_grid, rows);
  ImDrawList* dl = ImGui::GetWindowDrawList();
  const float w = a_grid.width() / static_cast<float>(p.splits);
  for (int k = 0; k < mg.merged; ++k)
    dl->AddLine(ImVec2(a_grid.min.x + w * static_cast<float>(k) + 2, a_grid.max.y + 2),
                ImVec2(a_grid.min.x + w * static_cast<float>(k + 1) - 3, a_grid.max.y + 2), GetPalette().good, 2.0f);
  y += stats_h + line + gap;

  // Two grids side by side: O_s read back → Σ α_s O_s while adding; Σ α_s O_s → O = (Σ α_s O_s) / ℓ at write_o.
  const bool final_o = s.info.phase == DecodePhase::kWriteO;
  const bool adding = framed >= 0;
  const bool pair = adding || final_o;
  const float half = std::floor((area.width() - gap) / 2);
  ImGui::SetCursorScreenPos(ImVec2(whole.min.x, y));
  SectionTitle(
      final_o ? FittingTitle("Σ α_s O_s (left) ÷ ℓ = O (right), written to HBM", "Σ α_s O_s ÷ ℓ = O", whole.width())
      : adding ? FittingTitle(
                     Sprintf("O_%d read back (left), added as α_%d·O_%d into Σ α_s O_s (right)", framed, framed, framed)
                         .c_str(),
                     "O_s → Σ α_s O_s", whole.width())
               : "Σ α_s O_s (no split added yet)",
      "Each merge_o reads one split's O_s and adds it scaled by its α_s; write_o divides by ℓ once. The result "
      "is the softmax over every key of the cache, however it was split.");
  y += title_h;
  if (adding) {
    const std::vector<double>& part = s.partials[static_cast<std::size_t>(framed)].o;
    const ScreenRect part_grid = DrawNumberGrid(
        "dec-merge-part", ui, Rect(area.min.x, y, half, o_h), rows, d, &part, ColorScale::Symmetric(FiniteAbsMax(part)),
        nullptr, "",
        [&](int r, int e) {
          Explanation x;
          x.available = true;
          x.value = part[static_cast<std::size_t>(r) * d + e];
          x.title = Sprintf("O_%d[%s, %d] = %s", framed, DecodeRowName(p, g, r).c_str(), e, Num(x.value, 5).c_str());
          x.lines.push_back(
              Sprintf("split %d's partial, read back from HBM; it enters O as α_%d × this = %s", framed, framed,
                      Num(mg.alpha[static_cast<std::size_t>(r) * p.splits + framed] * x.value, 5).c_str()));
          return x;
        },
        nullptr, "", v * 8 + 7, hovered, -1);
    DrawRowLabels(p, g, part_grid, rows);
  } else if (final_o) {
    const ScreenRect sum_grid = DrawNumberGrid(
        "dec-merge-sum", ui, Rect(area.min.x, y, half, o_h), rows, d, &mg.o, ColorScale::Symmetric(FiniteAbsMax(mg.o)),
        nullptr, "",
        [&](int r, int e) {
          Explanation x;
          x.available = true;
          x.value = mg.o[static_cast<std::size_t>(r) * d + e];
          x.title = Sprintf("Σ α_s O_s[%s, %d] = %s", DecodeRowName(p, g, r).c_str(), e, Num(x.value, 5).c_str());
          x.lines.push_back(Sprintf("every split added; divided by ℓ = %s it is O", Num(mg.l[r], 6).c_str()));
          return x;
        },
        nullptr, "", v * 8 + 8, hovered, -1);
    DrawRowLabels(p, g, sum_grid, rows);
  }
  const std::vector<double>& o = final_o ? s.o_final : mg.o;
  const ScreenRect o_grid = DrawNumberGrid(
      "dec-merge-o", ui, Rect(pair ? area.min.x + half + gap : area.min.x, y, pair ? half : area.width(), o_h), rows, d,
      &o, ColorScale::Symmetric(FiniteAbsMax(o)), nullptr, "",
      [&](int r, int e) { return ExplainDecodeMergeOutput(m, r, e); }, nullptr, "", v * 8 + 4, hovered, -1);
  if (!pair) DrawRowLabels(p, g, o_grid, rows);
}

// The done step: O of every query head as the write_o steps left it, against the float64 result.
void DrawDoneTiles(const Model& m, UiState& ui, const ScreenRect& whole, Hovered& hovered) {
  const DecodeProblem& p = m.decode_problem();
  const std::vector<double>& o = m.decode_output();
  const std::vector<double>& exact = m.decode_reference();
  double worst = 0;
  for (std::size_t k = 0; k < o.size(); ++k) worst = std::max(worst, std::abs(o[k] - exact[k]));
  const int rows = p.shape.heads * p.shape.q_rows, d = p.d();
  ImGui::SetCursorScreenPos(whole.min);
  SectionTitle(FittingTitle(Sprintf("O of all %d query heads, as written (max |O − exact| = %s)", p.shape.heads,
                                    Num(worst, 2).c_str())
                                .c_str(),
                            "O, every head", whole.width()),
               "Every query head's O after its KV head's write_o, against the softmax over all keys computed in "
               "float64 at once (the hover gives both).");
  const float title_h = ImGui::GetTextLineHeightWithSpacing() + 2;
  const ScreenRect area = LessRowLabels(p, ScreenRect{ImVec2(whole.min.x, whole.min.y + title_h), whole.max});
  const ScreenRect grid = DrawNumberGrid(
      "dec-done-o", ui, Rect(area.min.x, area.min.y, area.width(), area.height() * 0.6f), rows, d, &o,
      ColorScale::Symmetric(FiniteAbsMax(o)), nullptr, "",
      [&](int r, int e) {
        const std::size_t at = static_cast<std::size_t>(r) * d + e;
        Explanation x;
        x.available = true;
        x.value = o[at];
        const int h = r / p.shape.q_rows;
        x.title = Sprintf("O[head %d%s, %d] = %s", h,
                          p.shape.q_rows == 1 ? "" : Sprintf(", row %d", r % p.shape.q_rows).c_str(), e,
                          Num(o[at], 6).c_str());
        x.lines.push_back(Sprintf("exact (float64, all %d keys at once): %s, error %s", p.kv_len(),
                                  Num(exact[at], 6).c_str(), Num(std::abs(o[at] - exact[at]), 2).c_str()));
        return x;
      },
      nullptr, "", m.step_version() * 8 + 9, hovered, -1);
  // Rows by head, across every group.
  for (int g = 0; g < p.shape.kv_heads; ++g) {
    const float cell = grid.height() / static_cast<float>(std::max(rows, 1));
    DrawRowLabels(p, g,
                  ScreenRect{ImVec2(grid.min.x, grid.min.y + cell * static_cast<float>(g * p.rows())),
                             ImVec2(grid.max.x, grid.min.y + cell * static_cast<float>((g + 1) * p.rows()))},
                  p.rows());
  }
  ImGui::SetCursorScreenPos(ImVec2(whole.min.x, grid.max.y + 8));
  ImGui::PushTextWrapPos(whole.max.x - ImGui::GetWindowPos().x);
  MathText(NarrateDecode(m).c_str());
  ImGui::PopTextWrapPos();
}

}  // namespace

void DrawDecodeStepPanel(const Model& model, UiState& ui) {
  const StepViewAreas areas = SplitStepView(
      ui, [](float avail_x) { return avail_x * 0.34f; }, 0.36f);
  const ScreenRect& left = areas.left;
  const ScreenRect& right = areas.right;
  const DecodeProblem& p = model.decode_problem();
  const DecodeState& s = model.decode_state();
  Hovered hovered;

  // Left: the pool, the block table, the heads, each as tall as its content (the pool's blocks at most 64 px).
  const float title_h = ImGui::GetTextLineHeightWithSpacing() + 2;
  const float heads_h = std::floor(
      std::clamp(left.height() * 0.16f, ImGui::GetTextLineHeight() * 2.6f, ImGui::GetTextLineHeight() * 4.0f));
  const float room = left.height() - 3 * title_h - heads_h - 8;
  float y = left.min.y;
  ImGui::SetCursorScreenPos(ImVec2(left.min.x, y));
  SectionTitle(FittingTitle(Sprintf("KV cache: %d blocks of P = %d keys, in pool order", p.pages(), p.page).c_str(),
                            "KV cache pool", left.width()),
               "The paged cache: fixed-size blocks in a pool, in no particular order. Each block holds one page (P "
               "consecutive keys and their values) of every KV head, one band per head (KV head 0 on top); pN is "
               "the page it holds. Colours: the splits; the framed blocks are the current split's; faded bands "
               "have been read.");
  y += title_h;
  y += DrawPool(model, Rect(left.min.x, y, left.width(), std::floor(room * 0.62f)), 64.0f * ui.appearance.ui_scale,
                hovered) +
       4;
  ImGui::SetCursorScreenPos(ImVec2(left.min.x, y));
  SectionTitle("Block table: page → block",
               "The sequence's logical pages in order and the pool block holding each. A split reads its pages' "
               "entries, then the blocks they name: the keys are contiguous only within a block.");
  y += title_h;
  y += DrawBlockTable(model, Rect(left.min.x, y, left.width(), left.max.y - heads_h - title_h - 4 - y), hovered) + 4;
  ImGui::SetCursorScreenPos(ImVec2(left.min.x, y));
  SectionTitle(FittingTitle(Sprintf("%d query heads over %d KV heads", p.shape.heads, p.shape.kv_heads).c_str(),
                            "Heads", left.width()),
               "Grouped-query attention: consecutive query heads share a KV head. A split loads its K/V chunk once for "
               "the whole group, so the cache is read once per KV head, not once per query head.");
  y += title_h;
  DrawHeads(model, Rect(left.min.x, y, left.width(), heads_h), hovered);

  if (s.info.phase == DecodePhase::kDone) {
    DrawDoneTiles(model, ui, right, hovered);
  } else if (!s.merge.m.empty()) {
    DrawMergeTiles(model, ui, right, hovered);
  } else {
    DrawSplitTiles(model, ui, right, hovered);
  }
  FinishStepView(areas, hovered);
}

namespace {

// A tensor's name in the table, in the view's notation.
const char* TensorLabel(HbmTensor tensor) {
  switch (tensor) {
    case HbmTensor::kBlockTable:
      return "block table";
    case HbmTensor::kOPartial:
      return "O_s (partials)";
    case HbmTensor::kStatsPartial:
      return "m_s, ℓ_s (partials)";
    default: {
      static std::string names[kHbmTensorCount];
      std::string& name = names[static_cast<int>(tensor)];
      if (name.empty()) name = std::string(HbmTensorName(tensor));
      return name.c_str();
    }
  }
}

}  // namespace

void DrawDecodeTrafficPanel(const Model& model, UiState& ui) {
  (void)ui;
  const DecodeProblem& p = model.decode_problem();
  const DecodeState& s = model.decode_state();
  const Ledger& now = s.ledger;
  const Ledger& total = model.decode_final_ledger();
  const Ledger& naive = model.decode_naive_ledger();
  const Palette& pal = GetPalette();
  const auto bytes = [](std::int64_t b) { return HumanBytes(static_cast<double>(b)); };

  SectionTitle("This step", "What the step moved between HBM and SRAM, counted where the schedule loads or stores.");
  std::string moved;
  for (int t = 0; t < kHbmTensorCount; ++t) {
    const Traffic& d = s.delta.hbm[t];
    const std::string name(HbmTensorName(static_cast<HbmTensor>(t)));
    if (d.read_bytes)
      moved += Sprintf("%s%s read %s", moved.empty() ? "" : ", ", name.c_str(), bytes(d.read_bytes).c_str());
    if (d.write_bytes)
      moved += Sprintf("%s%s written %s", moved.empty() ? "" : ", ", name.c_str(), bytes(d.write_bytes).c_str());
  }
  MathText(!moved.empty()                       ? moved.c_str()
           : s.info.phase == DecodePhase::kDone ? "done: nothing moves"
                                                : "no HBM traffic: arithmetic on chip");

  ImGui::Spacing();
  SectionTitle("Reads of the KV cache",
               "K and V bytes read over the cache's size (K and V of every KV head). Flash-decoding loads each chunk "
               "once for all the query heads of its group: one read in all. decode_naive (one block per query head) "
               "reads the cache H/G times.");
  const float bar_w = ImGui::GetContentRegionAvail().x;
  const double naive_reads = KvCacheReads(p, naive);
  const auto bar = [&](const char* label, double value, double full, ImU32 color) {
    const ImVec2 at = ImGui::GetCursorScreenPos();
    const float h = ImGui::GetTextLineHeight();
    ImDrawList* dl = ImGui::GetWindowDrawList();
    const float w = bar_w * 0.55f;
    dl->AddRectFilled(ImVec2(at.x + bar_w * 0.4f, at.y), ImVec2(at.x + bar_w * 0.4f + w, at.y + h), pal.plot_bg);
    dl->AddRectFilled(ImVec2(at.x + bar_w * 0.4f, at.y),
                      ImVec2(at.x + bar_w * 0.4f + w * static_cast<float>(std::min(value / full, 1.0)), at.y + h),
                      color);
    MathText(Sprintf("%s %.3g×", label, value).c_str());
  };
  bar("flash-decode so far", KvCacheReads(p, now), std::max(naive_reads, 1.0), pal.flash);
  bar("flash-decode in all", KvCacheReads(p, total), std::max(naive_reads, 1.0), pal.flash);
  bar("decode_naive", naive_reads, std::max(naive_reads, 1.0), pal.standard);
  MathTextColored(pal.dim, Sprintf("the cache: %s (K and V, %d KV heads × %d keys × d = %d, 4-byte values)",
                                   bytes(KvCacheBytes(p)).c_str(), p.shape.kv_heads, p.kv_len(), p.d())
                               .c_str());

  ImGui::Spacing();
  const std::int64_t partials = total[HbmTensor::kOPartial].read_bytes + total[HbmTensor::kOPartial].write_bytes +
                                total[HbmTensor::kStatsPartial].read_bytes +
                                total[HbmTensor::kStatsPartial].write_bytes;
  SectionTitle("The price of splitting",
               "Every split writes (m_s, ℓ_s, O_s) for the group's rows and the merge reads them back: 2·S·H·R·(d + 2) "
               "floats. Small next to the cache as long as the splits are long.");
  MathText(Sprintf("partials: %s written and read back, %.2f%% of flash-decode's %s; Q is read once per split: %s",
                   bytes(partials).c_str(),
                   100.0 * static_cast<double>(partials) / std::max<double>(1.0, static_cast<double>(total.HbmBytes())),
                   bytes(total.HbmBytes()).c_str(), bytes(total[HbmTensor::kQ].read_bytes).c_str())
               .c_str());

  ImGui::Spacing();
  SectionTitle("HBM bytes per tensor (read + written)",
               "Flash-decoding so far and in all, against decode_naive in all. The partials are written and read back: "
               "both count.");
  if (ImGui::BeginTable("##decode-tensors", 4, ImGuiTableFlags_BordersInnerH | ImGuiTableFlags_SizingStretchProp)) {
    ImGui::TableSetupColumn("HBM");
    ImGui::TableSetupColumn("so far");
    ImGui::TableSetupColumn("flash-decode");
    ImGui::TableSetupColumn("decode_naive (a block per query head, no split)");
    ImGui::TableHeadersRow();
    for (int t = 0; t < kHbmTensorCount; ++t) {
      const auto tensor = static_cast<HbmTensor>(t);
      const Traffic& f = total[tensor];
      const Traffic& n = naive[tensor];
      if (f.read_bytes + f.write_bytes + n.read_bytes + n.write_bytes == 0) continue;
      ImGui::TableNextRow();
      ImGui::TableNextColumn();
      MathText(TensorLabel(tensor));
      for (const std::int64_t value : {now[tensor].read_bytes + now[tensor].write_bytes, f.read_bytes + f.write_bytes,
                                       n.read_bytes + n.write_bytes}) {
        ImGui::TableNextColumn();
        if (value)
          ImGui::TextUnformatted(bytes(value).c_str());
        else
          ImGui::TextDisabled("–");
      }
    }
    ImGui::TableNextRow();
    ImGui::TableNextColumn();
    ImGui::TextUnformatted("total");
    for (const std::int64_t value : {now.HbmBytes(), total.HbmBytes(), naive.HbmBytes()}) {
      ImGui::TableNextColumn();
      ImGui::TextUnformatted(bytes(value).c_str());
    }
    ImGui::EndTable();
  }

  ImGui::Spacing();
  SectionTitle("SRAM",
               "What is on chip after this step, against M: the split's K and V chunks, the group's query "
               "rows, the scores, O_s and the statistics (merge: every split's m_s, ℓ_s, α_s and O).");
  std::string tiles;
  for (int t = 0; t < kDecodeSramTileCount; ++t)
    if (s.sram_tiles & (1u << t))
      tiles += (tiles.empty() ? "" : ", ") + std::string(DecodeSramTileName(static_cast<DecodeSramTile>(t)));
  MathText(Sprintf("%s of M = %s%s (peak %s)", bytes(now.sram_bytes).c_str(), bytes(p.sram_bytes).c_str(),
                   tiles.empty() ? "" : (": " + tiles).c_str(), bytes(total.sram_peak_bytes).c_str())
               .c_str());
  if (total.sram_peak_bytes > p.sram_bytes)
    MathTextColored(pal.warn, "the splits given are longer than M holds: with splits from M, every split fits");
}

}  // namespace flashviz
