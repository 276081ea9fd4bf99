// Ring attention's views (DrawStepPanel, DrawTrafficPanel and the timeline hand over to them in ring mode):
//  - the step view: the P devices side by side, each with its block at this ring step (S with m~ beside, then P~
//    with ℓ~ beside, or O = O/ℓ once done) and its running state per row (m, ℓ; the merge's α and β with them);
//    under them the sequence's chunks coloured by the device that holds them, the ring with the K/V each device
//    holds (sliding on to the next device during an exchange), and the cost model's timeline: per device the
//    compute of every ring step with the exchange running beside it.
//  - the traffic: per device HBM bytes and interconnect bytes, against one device doing it all.
// Every number is the ring stepper's (Model::ring_state); hovers come from viz/ring_formulas.h.
#include <algorithm>
#include <cmath>
#include <initializer_list>
#include <optional>

#include "kernels/common/format.h"
#include "viz/colormap.h"
#include "viz/frame_report.h"
#include "viz/panels/number_grid.h"
#include "viz/panels/panels.h"
#include "viz/ring_formulas.h"
#include "viz/widgets.h"

namespace flashviz {
namespace {

// One colour per device, apart in hue however many there are; its chunks, its K/V and its lane share it. Deeper on a
// light background, where pastel bars vanish on a projector.
ImU32 DeviceColor(int device, float alpha = 1.0f) {
  const ImVec4 bg = ImGui::GetStyleColorVec4(ImGuiCol_WindowBg);
  const bool light = 0.299f * bg.x + 0.587f * bg.y + 0.114f * bg.z > 0.5f;
  const float hue = std::fmod(0.58f + 0.618034f * static_cast<float>(device), 1.0f);
  float r, g, b;
  ImGui::ColorConvertHSVtoRGB(hue, light ? 0.8f : 0.55f, light ? 0.7f : 0.85f, r, g, b);
  return ImGui::GetColorU32(ImVec4(r, g, b, alpha));
}

// The first of `forms` (longest first) that fits in `width`, or empty when none does.
std::string FitText(std::initializer_list<std::string> forms, float width) {
  for (const std::string& form : forms)
    if (CalcMathTextSize(form.c_str()).x <= width) return form;
  return {};
}

// A caption under a grid, the longest of `forms` that fits `width`.
void DrawCaption(ImDrawList* dl, ImVec2 at, float width, std::initializer_list<std::string> forms) {
  const std::string text = FitText(forms, width);
  if (!text.empty()) DrawMathText(dl, at, GetPalette().dim, text.c_str());
}

// A chip of the device's colour with `text` on it (legible on any hue: the window's colour under the text).
ScreenRect DrawChip(ImDrawList* dl, ImVec2 at, int device, const std::string& text, float alpha = 1.0f) {
  const ImVec2 size = ImGui::CalcTextSize(text.c_str());
  const ScreenRect r = Rect(at.x, at.y, size.x + 10, size.y + 2);
  dl->AddRectFilled(r.min, r.max, DeviceColor(device, alpha), 4.0f);
  dl->AddRectFilled(ImVec2(r.min.x + 3, r.min.y + 1), ImVec2(r.max.x - 3, r.max.y - 1),
                    ImGui::GetColorU32(ImGuiCol_WindowBg, 0.72f * alpha), 3.0f);
  dl->AddText(ImVec2(r.min.x + 5, r.min.y + 1), ImGui::GetColorU32(ImGuiCol_Text, alpha), text.c_str());
  return r;
}

// The running state's columns at this phase: (name, the device's per-row vector, its explainer).
struct StatColumn {
  const char* name;
  const std::vector<double> RingDeviceState::*values;
  Explanation (*explain)(const Model&, int, int);
};

std::vector<StatColumn> StatColumns(RingPhase phase) {
  std::vector<StatColumn> columns;
  if (phase == RingPhase::kMerge) {
    columns.push_back({"α", &RingDeviceState::alpha, ExplainRingAlpha});
    columns.push_back({"β", &RingDeviceState::beta, ExplainRingBeta});
  }
  columns.push_back({"m", &RingDeviceState::m, ExplainRingRunningMax});
  columns.push_back({"ℓ", &RingDeviceState::l, ExplainRingRunningSum});
  return columns;
}

// One device's column: its name and slice, the K/V it holds, its block and its running state.
// `widest_slice`: the widest device's "rows …" text, so that every column lays its header out alike.
void DrawDeviceColumn(const Model& m, UiState& ui, int device, const ScreenRect& area, float widest_slice,
                      Hovered& hovered) {
  const RingProblem& p = m.ring_problem();
  const RingState& s = m.ring_state();
  const RingDeviceState& d = s.devices[static_cast<std::size_t>(device)];
  ImDrawList* dl = ImGui::GetWindowDrawList();
  const Palette& pal = GetPalette();
  const float line = ImGui::GetTextLineHeight();
  const float w = area.width();
  const std::uint64_t v = m.step_version() * 64 + static_cast<std::uint64_t>(device) * 4;
  const bool done = s.info.phase == RingPhase::kDone;
  const bool exchange = s.info.phase == RingPhase::kExchange;
  const bool block = !d.block_m.empty();
  // Header: the device and its rows (beside it, or under it in a narrow column); the K/V it holds, in the owner's
  // colour: during an exchange the one it received and the one it sent.
  const std::string name_text = FitText({Sprintf("device %d", device), Sprintf("d%d", device)}, w - 10);
  const ScreenRect name = DrawChip(dl, area.min, device, name_text.empty() ? Sprintf("%d", device) : name_text);
  // Every column decides alike (on the widest slice's text), so that the grids of all devices stay level.
  const std::string slice = RingSliceName(p, device);
  const float widest = widest_slice;
  const float prefix = CalcMathTextSize("rows ").x;
  float y = name.max.y + 2;
  if (widest + name.width() + 6 < w) {
    dl->AddText(ImVec2(name.max.x + 4, name.min.y + 1), pal.dim, slice.c_str());
  } else if (widest - prefix <= w) {
    dl->AddText(ImVec2(area.min.x, y), pal.dim, (widest <= w ? slice : slice.substr(5)).c_str());
    y += line + 2;
  }
  const int sent = exchange ? p.KvOwner(device, s.info.ring_step) : -1;
  const std::string held =
      done       ? FitText({"all keys seen", "done"}, w - 10)
      : exchange ? FitText({Sprintf("got K/V of device %d, sent %d's", d.kv_owner, sent),
                            Sprintf("got K/V %d, sent %d", d.kv_owner, sent), Sprintf("← K/V %d", d.kv_owner)},
                           w - 10)
      : block    ? FitText({Sprintf("K/V of device %d", d.kv_owner), Sprintf("K/V %d", d.kv_owner)}, w - 10)
                 : std::string();
  ScreenRect held_chip = Rect(area.min.x, y, 0, line + 2);
  if (!held.empty()) held_chip = DrawChip(dl, ImVec2(area.min.x, y), done ? device : d.kv_owner, held);
  const ScreenRect header = Rect(area.min.x, area.min.y, w, held_chip.max.y - area.min.y);
  if (HitArea(Sprintf("ring-device-%d", device).c_str(), header)) hovered = {ExplainRingDevice(m, device), true};

  // The block (S with m~ at attend, P~ with ℓ~ at merge, O = O/ℓ when done, nothing on chip during an exchange),
  // a column per running quantity, and the running O: in a row when the column is wide (P = 2 at 1920), else the O
  // under the other two; whichever gives the larger cells.
  const float top = header.max.y + 6;
  const std::vector<StatColumn> columns = StatColumns(s.info.phase);
  const bool show_p = s.info.phase == RingPhase::kMerge && !d.p.empty();
  const int block_cols = done ? p.d : std::max(d.keys, 1);
  const float gap = std::floor(6.0f * ui.appearance.ui_scale);
  const float rows = static_cast<float>(std::max(d.rows, 1));
  const float first_cols = static_cast<float>(block_cols) + (done ? 0.3f : 2.0f);  // the block and its row bars
  const float stat_cols = static_cast<float>(columns.size()) + 0.3f;
  const float o_cols = done ? 0.0f : static_cast<float>(p.d) + 0.3f;
  const float full_h = area.max.y - top - line - 2;
  const float side_cell = std::min((w - 2 * gap) / (first_cols + stat_cols + o_cols), full_h / rows);
  const float stacked_cell =
      std::min((w - gap) / (first_cols + stat_cols), (done ? full_h : full_h / 2 - line - 4) / rows);
  const bool side_by_side = !done && side_cell > stacked_cell;
  const float cell = std::floor(side_by_side ? side_cell : stacked_cell);
  const float block_w = std::floor(cell * first_cols);
  const ScreenRect block_area = Rect(area.min.x, top, block_w, cell * rows);
  ScreenRect grid;
  if (done) {
    grid = DrawNumberGrid(
        Sprintf("ring-o-%d", device).c_str(), ui, block_area, d.rows, p.d, d.o.empty() ? nullptr : &d.o,
        ColorScale::Symmetric(m.ring_abs_max()), nullptr, "",  // ℓ is in the running state beside it
        [&](int r, int e) { return ExplainRingOutput(m, device, r, e); }, nullptr, "", v, hovered, -1);
    DrawCaption(dl, ImVec2(grid.min.x, grid.max.y + 1), block_w, {"O = O/ℓ", "O"});
  } else {
    // P~ with its masked entries as "no value" (grey, as in S), not as the zero it holds.
    std::vector<double> shown;
    if (show_p) {
      shown = d.p;
      for (std::size_t k = 0; k < shown.size(); ++k)
        if (std::isinf(d.s[k])) shown[k] = std::nan("");
    }
    const std::vector<double>* values = !block ? nullptr : show_p ? &shown : &d.s;
    const std::vector<double>* stat = !block ? nullptr : show_p ? &d.block_l : &d.block_m;
    const char* empty = exchange ? "K/V in flight" : "no work";
    grid = DrawNumberGrid(
        Sprintf("ring-block-%d", device).c_str(), ui, block_area, d.rows, block_cols, values,
        show_p ? ColorScale::Unit() : ColorScale::Symmetric(values ? FiniteAbsMax(*values) : 1.0), stat,
        show_p ? "ℓ~" : "m~",
        [&](int r, int c) {
          return show_p ? ExplainRingProbability(m, device, r, c) : ExplainRingScore(m, device, r, c);
        },
        [&](int r) { return show_p ? ExplainRingBlockSum(m, device, r) : ExplainRingBlockMax(m, device, r); }, empty,
        v + 1, hovered, -1);
    if (block) {
      // Zigzag: the line between a device's two chunks, rows and keys (each is a run of its own in the sequence).
      if (p.zigzag() && grid.width() > 0) {
        const float ry = grid.min.y + grid.height() * static_cast<float>(p.ChunkRows(p.DeviceChunk(device, 0))) / rows;
        const float cx = grid.min.x + grid.width() * static_cast<float>(p.ChunkRows(p.DeviceChunk(d.kv_owner, 0))) /
                                          static_cast<float>(block_cols);
        dl->AddLine(ImVec2(grid.min.x, ry), ImVec2(grid.max.x, ry), pal.heading, 2.0f);
        dl->AddLine(ImVec2(cx, grid.min.y), ImVec2(cx, grid.max.y), pal.heading, 2.0f);
      }
      // A block the mask leaves nothing of: said on it, at attend and at merge alike.
      if (std::all_of(d.block_m.begin(), d.block_m.end(), [](double x) { return std::isinf(x); })) {
        const std::string text = FitText({"skipped: every key after these rows", "skipped"}, grid.width() - 4);
        const ImVec2 size = CalcMathTextSize(text.c_str());
        const ImVec2 at(grid.min.x + (grid.width() - size.x) / 2, grid.min.y + (grid.height() - size.y) / 2);
        dl->AddRectFilled(ImVec2(at.x - 3, at.y - 1), ImVec2(at.x + size.x + 3, at.y + size.y + 1),
                          ImGui::GetColorU32(ImGuiCol_WindowBg, 0.85f), 3.0f);
        DrawMathText(dl, at, ImGui::GetColorU32(ImGuiCol_Text), text.c_str());
      }
      DrawCaption(dl, ImVec2(grid.min.x, grid.max.y + 1), grid.width() + 4,
                  show_p ? std::initializer_list<std::string>{"P~ = exp(S − m~)", "P~"}
                         : std::initializer_list<std::string>{"S = scale·QKᵀ", "S"});
    }
  }
  // The running state, a column per quantity, named under it.
  std::vector<double> table(static_cast<std::size_t>(d.rows) * columns.size(), std::nan(""));
  for (std::size_t c = 0; c < columns.size(); ++c) {
    const std::vector<double>& values = d.*columns[c].values;
    if (values.size() != static_cast<std::size_t>(d.rows)) continue;
    for (int r = 0; r < d.rows; ++r)
      table[static_cast<std::size_t>(r) * columns.size() + c] = values[static_cast<std::size_t>(r)];
  }
  const float stats_x = area.min.x + block_w + gap;
  const ScreenRect stats = DrawNumberGrid(
      Sprintf("ring-stats-%d", device).c_str(), ui,
      Rect(stats_x, top, cell * static_cast<float>(columns.size()), cell * rows), d.rows,
      static_cast<int>(columns.size()), &table, ColorScale::Symmetric(FiniteAbsMax(table)), nullptr, "",
      [&](int r, int c) { return columns[static_cast<std::size_t>(c)].explain(m, device, r); }, nullptr, "", v + 2,
      hovered, -1);
  const float stat_cell = stats.width() / static_cast<float>(columns.size());
  // Named when the names fit their cells (a narrow column's would run together; the hover names them).
  const bool named = stat_cell >= CalcMathTextSize("ℓ").x + 3;
  for (std::size_t c = 0; named && c < columns.size(); ++c) {
    const ImVec2 size = CalcMathTextSize(columns[c].name);
    DrawMathText(dl, ImVec2(stats.min.x + stat_cell * (static_cast<float>(c) + 0.5f) - size.x / 2, stats.max.y + 1),
                 pal.dim, columns[c].name);
  }
  if (done) return;
  const ScreenRect o_area = side_by_side
                                ? Rect(stats.max.x + gap, top, area.max.x - stats.max.x - gap, cell * rows)
                                : Rect(area.min.x, std::max(grid.max.y, stats.max.y) + line + 6, w, cell * rows);
  const ScreenRect o_grid = DrawNumberGrid(
      Sprintf("ring-running-o-%d", device).c_str(), ui, o_area, d.rows, p.d, d.o.empty() ? nullptr : &d.o,
      ColorScale::Symmetric(std::max(FiniteAbsMax(d.o), 1e-12)), nullptr, "",
      [&](int r, int e) { return ExplainRingOutput(m, device, r, e); }, nullptr, "", v + 3, hovered, -1);
  DrawCaption(dl, ImVec2(o_grid.min.x, o_grid.max.y + 1), side_by_side ? area.max.x - o_grid.min.x : w,
              s.info.phase == RingPhase::kMerge
                  ? std::initializer_list<std::string>{"O = αO + β·P~V (unnormalized)", "O = αO + β·P~V", "O"}
                  : std::initializer_list<std::string>{"O (running, unnormalized)", "O (running)", "O"});
}

// The sequence as a strip of its chunks, each in the colour of the device that holds it.
float DrawSequence(const Model& m, const ScreenRect& area, Hovered& hovered) {
  const RingProblem& p = m.ring_problem();
  ImDrawList* dl = ImGui::GetWindowDrawList();
  const float h = std::min(area.height(), ImGui::GetTextLineHeight() + 4);
  for (int c = 0; c < p.chunks(); ++c) {
    const float x0 = area.min.x + area.width() * static_cast<float>(p.ChunkBegin(c)) / static_cast<float>(p.n);
    const float x1 = area.min.x + area.width() * static_cast<float>(p.ChunkEnd(c)) / static_cast<float>(p.n);
    const int owner = p.OwnerOfRow(p.ChunkBegin(c));
    const ScreenRect r = Rect(x0, area.min.y, std::max(x1 - x0 - 1, 1.0f), h);
    dl->AddRectFilled(r.min, r.max, DeviceColor(owner, 0.8f));
    const std::string label = FitText({Sprintf("device %d", owner), Sprintf("d%d", owner)}, r.width() - 4);
    const ImVec2 size = ImGui::CalcTextSize(label.c_str());
    if (!label.empty())
      dl->AddText(ImVec2(r.min.x + (r.width() - size.x) / 2, r.min.y + 2), ContrastingText(DeviceColor(owner)),
                  label.c_str());
    if (HitArea(Sprintf("ring-chunk-%d", c).c_str(), r)) {
      Explanation x;
      x.available = true;
      x.value = owner;
      x.title = Sprintf("chunk %d of %d: rows %d-%d", c, p.chunks(), p.ChunkBegin(c), p.ChunkEnd(c) - 1);
      x.lines.push_back(p.zigzag()
                            ? Sprintf("held by device %d (zigzag: device p holds chunks p and 2P − 1 − p)", owner)
                            : Sprintf("held by device %d (contiguous: chunk p on device p)", owner));
      hovered = {x, true};
    }
  }
  return h;
}

// The ring: a box per device under its column, the K/V it holds inside, arrows to the next device. During an
// exchange the K/V slides along its arrow.
void DrawRing(const Model& m, const UiState& ui, const std::vector<ScreenRect>& columns, float y, float h) {
  const RingProblem& p = m.ring_problem();
  const RingState& s = m.ring_state();
  ImDrawList* dl = ImGui::GetWindowDrawList();
  const Palette& pal = GetPalette();
  const bool exchange = s.info.phase == RingPhase::kExchange;
  const float t = exchange ? static_cast<float>(TransitionEase(ui)) : 1.0f;
  if (s.info.phase == RingPhase::kDone) {  // nothing travels any more
    const std::string text = "every K/V has visited every device: no exchange after the last ring step";
    const float x = columns.front().min.x;
    DrawMathText(dl, ImVec2(x, y + (h - ImGui::GetTextLineHeight()) / 2), pal.dim, text.c_str());
    return;
  }
  std::vector<ImVec2> centre;
  for (int dev = 0; dev < p.devices; ++dev) {
    const ScreenRect& c = columns[static_cast<std::size_t>(dev)];
    const float w = std::min(c.width() * 0.6f, ImGui::CalcTextSize("K/V of 00").x + 12);
    const ScreenRect box = Rect(c.min.x + (c.width() - w) / 2, y, w, h);
    dl->AddRect(box.min, box.max, DeviceColor(dev), 4.0f, 0, 2.0f);
    centre.push_back(ImVec2((box.min.x + box.max.x) / 2, (box.min.y + box.max.y) / 2));
  }
  // Arrows p → p + 1, and the wrap from the last device back to the first under them.
  const float arrow_y = y + h / 2;
  for (int dev = 0; dev + 1 < p.devices; ++dev) {
    const ScreenRect& a = columns[static_cast<std::size_t>(dev)];
    const ScreenRect& b = columns[static_cast<std::size_t>(dev + 1)];
    const float x0 = (a.min.x + a.max.x) / 2 + std::min(a.width() * 0.3f, 40.0f);
    const float x1 = (b.min.x + b.max.x) / 2 - std::min(b.width() * 0.3f, 40.0f);
    if (x1 - x0 < 8) continue;
    dl->AddLine(ImVec2(x0, arrow_y), ImVec2(x1, arrow_y), exchange ? pal.cursor : pal.dim, exchange ? 2.5f : 1.5f);
    dl->AddTriangleFilled(ImVec2(x1, arrow_y), ImVec2(x1 - 7, arrow_y - 4), ImVec2(x1 - 7, arrow_y + 4),
                          exchange ? pal.cursor : pal.dim);
    if (exchange) {  // what travels on this link: the K/V device `dev` held at this ring step
      const std::string what = FitText({Sprintf("sends K/V %d", p.KvOwner(dev, s.info.ring_step)),
                                        Sprintf("K/V %d", p.KvOwner(dev, s.info.ring_step))},
                                       x1 - x0 - 12);
      const ImVec2 size = ImGui::CalcTextSize(what.c_str());
      dl->AddText(ImVec2((x0 + x1 - size.x) / 2, arrow_y - size.y - 2), pal.cursor, what.c_str());
    }
  }
  const float wrap_y = y + h + 5;
  dl->AddLine(ImVec2(centre.back().x, y + h), ImVec2(centre.back().x, wrap_y), pal.dim, 1.5f);
  dl->AddLine(ImVec2(centre.back().x, wrap_y), ImVec2(centre.front().x, wrap_y), pal.dim, 1.5f);
  dl->AddLine(ImVec2(centre.front().x, wrap_y), ImVec2(centre.front().x, y + h), pal.dim, 1.5f);
  dl->AddTriangleFilled(ImVec2(centre.front().x, y + h), ImVec2(centre.front().x - 4, y + h + 5),
                        ImVec2(centre.front().x + 4, y + h + 5), pal.dim);
  // The K/V chips: each at its device, or sliding from the previous device while the exchange plays.
  for (int dev = 0; dev < p.devices; ++dev) {
    const int owner = s.info.phase == RingPhase::kDone ? -1 : s.devices[static_cast<std::size_t>(dev)].kv_owner;
    if (owner < 0) continue;
    ImVec2 at = centre[static_cast<std::size_t>(dev)];
    if (exchange && t < 1.0f) {
      const ImVec2 from = centre[static_cast<std::size_t>((dev + p.devices - 1) % p.devices)];
      if (dev == 0)  // the wrap-around: along the bottom line
        at = ImVec2(from.x + (at.x - from.x) * t, wrap_y);
      else
        at = ImVec2(from.x + (at.x - from.x) * t, at.y);
    }
    const std::string text = Sprintf("K/V %d", owner);
    const ImVec2 size = ImGui::CalcTextSize(text.c_str());
    DrawChip(dl, ImVec2(at.x - size.x / 2 - 5, at.y - size.y / 2 - 1), owner, text);
  }
}

// The cost model's timeline: a lane per device, each ring step's compute from the step's start and its exchange
// beside it; the ring step under the cursor washed.
void DrawCostTimeline(const Model& m, const ScreenRect& area, const std::string& pace, Hovered& hovered) {
  const RingProblem& p = m.ring_problem();
  const RingTimeline& t = m.ring_timeline();
  const RingState& s = m.ring_state();
  ImDrawList* dl = ImGui::GetWindowDrawList();
  const Palette& pal = GetPalette();
  const bool short_labels = area.width() < 700 || p.devices > 6;
  const float label_w = ImGui::CalcTextSize(short_labels ? "d00 " : "device 00 ").x;
  const float axis_h = ImGui::GetTextLineHeight() + 2;
  const ScreenRect plot = Rect(area.min.x + label_w, area.min.y, area.width() - label_w, area.height() - axis_h);
  if (plot.width() < 20 || plot.height() < 6 || t.overlapped_seconds <= 0) return;
  dl->AddRectFilled(plot.min, plot.max, pal.plot_bg);
  const double end = std::max(t.overlapped_seconds, 1e-30);
  const auto x_of = [&](double seconds) { return plot.min.x + plot.width() * static_cast<float>(seconds / end); };
  const int current = s.info.ring_step;
  std::optional<ScreenRect> cursor_column;  // framed last, over the bars
  if (current >= 0) {
    const float x0 = x_of(t.step_begin[static_cast<std::size_t>(current)]);
    const float x1 = x_of(t.step_begin[static_cast<std::size_t>(current) + 1]);
    dl->AddRectFilled(ImVec2(x0, plot.min.y), ImVec2(x1, plot.max.y), pal.cursor_fill);
    const ScreenRect column = Rect(x0, plot.min.y, std::max(x1 - x0, 2.0f), plot.height());
    if (FrameReport* report = CurrentFrameReport()) {
      report->ring_step_visible = true;
      report->ring_step = column;
    }
    cursor_column = column;
  }
  const float lane = plot.height() / static_cast<float>(p.devices);
  const float bar = std::max(2.0f, std::floor(lane * 0.36f));
  for (int dev = 0; dev < p.devices; ++dev) {
    const float y = plot.min.y + lane * static_cast<float>(dev);
    dl->AddText(ImVec2(area.min.x, y + (lane - ImGui::GetTextLineHeight()) / 2), DeviceColor(dev),
                Sprintf(short_labels ? "d%d" : "device %d", dev).c_str());
    for (int step = 0; step < p.devices; ++step) {
      const RingWork& w = m.ring_work()[static_cast<std::size_t>(step) * p.devices + dev];
      const double begin = t.step_begin[static_cast<std::size_t>(step)];
      // Compute at least 3 px wide, so that a link-bound ring still shows it.
      const ScreenRect compute =
          Rect(x_of(begin), y + lane * 0.1f, std::max(x_of(begin + w.ComputeSeconds(p)) - x_of(begin) - 1, 3.0f), bar);
      const ScreenRect link =
          Rect(x_of(begin), compute.max.y + 1, std::max(x_of(begin + w.LinkSeconds(p)) - x_of(begin) - 1, 1.0f), bar);
      if (w.score_entries > 0) dl->AddRectFilled(compute.min, compute.max, DeviceColor(dev));
      if (w.link_bytes > 0) {
        dl->AddRectFilled(link.min, link.max, DeviceColor(p.KvOwner(dev, step), 0.45f));
        dl->AddRect(link.min, link.max, DeviceColor(p.KvOwner(dev, step)));
      }
      if (HitArea(Sprintf("ring-compute-%d-%d", dev, step).c_str(), compute))
        hovered = {ExplainRingStepWork(m, step, dev, false), true};
      if (HitArea(Sprintf("ring-link-%d-%d", dev, step).c_str(), link))
        hovered = {ExplainRingStepWork(m, step, dev, true), true};
    }
  }
  // Ring step boundaries, the cursor's frame over them, and the time axis.
  for (std::size_t k = 1; k + 1 < t.step_begin.size(); ++k)
    dl->AddLine(ImVec2(x_of(t.step_begin[k]), plot.min.y), ImVec2(x_of(t.step_begin[k]), plot.max.y), pal.grid);
  if (cursor_column) DrawCursorRect(dl, *cursor_column, pal.cursor, 2.0f);
  dl->AddText(ImVec2(plot.min.x, plot.max.y + 1), pal.dim, "0");
  const std::string total = HumanSeconds(t.overlapped_seconds);
  const float total_w = ImGui::CalcTextSize(total.c_str()).x;
  dl->AddText(ImVec2(plot.max.x - total_w, plot.max.y + 1), pal.dim, total.c_str());
  // Which bar sets the pace, between the axis' ends when it fits.
  const float pace_w = ImGui::CalcTextSize(pace.c_str()).x;
  if (pace_w + total_w + ImGui::CalcTextSize("0").x + 24 < plot.width())
    dl->AddText(ImVec2(plot.min.x + (plot.width() - pace_w) / 2, plot.max.y + 1), pal.heading, pace.c_str());
}

}  // namespace

void DrawRingStepPanel(const Model& model, UiState& ui) {
  StepViewAreas areas;
  const float margin = std::ceil(std::max(2.0f, 2.5f * ui.appearance.ui_scale)) + 1;
  areas.origin = ImGui::GetCursorScreenPos();
  areas.avail = ImGui::GetContentRegionAvail();
  const ScreenRect whole =
      Rect(areas.origin.x + margin, areas.origin.y + margin, areas.avail.x - 2 * margin, areas.avail.y - 2 * margin);
  const RingProblem& p = model.ring_problem();
  const RingState& s = model.ring_state();
  Hovered hovered;
  const float title_h = ImGui::GetTextLineHeightWithSpacing() + 2;
  const float line = ImGui::GetTextLineHeight();
  const float gap = 10.0f * ui.appearance.ui_scale;

  // The title: what every device does at this step.
  const std::string phase(RingPhaseName(s.info.phase));
  const std::string title =
      s.info.phase == RingPhase::kDone
          ? Sprintf("Done: %d devices, O = O/ℓ on each", p.devices)
          : Sprintf("Ring step %d of %d · %s: %s", s.info.ring_step + 1, p.devices, phase.c_str(),
                    s.info.phase == RingPhase::kAttend  ? "each device's rows against the K/V it holds"
                    : s.info.phase == RingPhase::kMerge ? "the block merged into the running m, ℓ, O"
                                                        : "every K/V on to the next device");
  ImGui::SetCursorScreenPos(whole.min);
  SectionTitle(FittingTitle(title.c_str(), Sprintf("Ring step %d · %s", s.info.ring_step + 1, phase.c_str()).c_str(),
                            whole.width()),
               "P devices side by side. Each holds its own query rows for the whole run and one K/V slice at a time; "
               "after P ring steps every slice has visited every device. The block grid is this step's scores "
               "(then P~); the small grid is the running state per row.");

  // The devices: three fifths of the height; then the sequence, the ring and the cost model's timeline.
  const float devices_top = whole.min.y + title_h;
  // The lower band: the sequence, the ring, the timeline's title and legend, and a lane of at least a text line per
  // device in the timeline.
  const float lower_h = std::floor(
      std::max(whole.height() * 0.36f, (0.85f * static_cast<float>(p.devices) + 6.5f) * line + 46 + title_h));
  const float devices_h = whole.max.y - devices_top - lower_h - gap;
  const float col_gap = std::floor(8.0f * ui.appearance.ui_scale);
  const float col_w =
      std::floor((whole.width() - col_gap * static_cast<float>(p.devices - 1)) / static_cast<float>(p.devices));
  float widest_slice = 0;
  for (int dev = 0; dev < p.devices; ++dev)
    widest_slice = std::max(widest_slice, CalcMathTextSize(RingSliceName(p, dev).c_str()).x);
  std::vector<ScreenRect> columns;
  for (int dev = 0; dev < p.devices; ++dev) {
    const ScreenRect col =
        Rect(whole.min.x + (col_w + col_gap) * static_cast<float>(dev), devices_top, col_w, devices_h);
    columns.push_back(col);
    DrawDeviceColumn(model, ui, dev, col, widest_slice, hovered);
  }

  float y = devices_top + devices_h + gap;
  const float seq_h = DrawSequence(model, Rect(whole.min.x, y, whole.width(), line + 4), hovered);
  y += seq_h + 6;
  const float ring_h = line + 8;
  DrawRing(model, ui, columns, y, ring_h);
  y += ring_h + 14;
  const RingTimeline& t = model.ring_timeline();
  // Which bar sets the pace: the links while a chunk is shorter than 2F/B rows, the compute after.
  const int chunk_rows = p.n / p.chunks();
  const std::string pace =
      chunk_rows < RingOverlapChunkRows(p)
          ? FitText({Sprintf("link-bound: chunks of %d rows; the exchange hides behind the compute from about %.0f "
                             "rows a chunk",
                             chunk_rows, RingOverlapChunkRows(p)),
                     Sprintf("link-bound: %d rows a chunk, hidden from %.0f", chunk_rows, RingOverlapChunkRows(p)),
                     std::string("link-bound")},
                    whole.width() * 0.6f)
          : FitText({Sprintf("compute-bound: chunks of %d rows hide the exchange", chunk_rows),
                     std::string("compute-bound")},
                    whole.width() * 0.6f);
  ImGui::SetCursorScreenPos(ImVec2(whole.min.x, y));
  SectionTitle(
      FittingTitle(Sprintf("Cost model: the ring %s (%s without overlap), one device %s: speed-up %.2f×",
                           HumanSeconds(t.overlapped_seconds).c_str(), HumanSeconds(t.serial_seconds).c_str(),
                           HumanSeconds(t.single_device_seconds).c_str(),
                           t.single_device_seconds / std::max(t.overlapped_seconds, 1e-300))
                       .c_str(),
                   Sprintf("Cost model: the ring %s", HumanSeconds(t.overlapped_seconds).c_str()).c_str(),
                   whole.width()),
      Sprintf("The cost model, not a measurement: a device computes 4·d FLOPs per score at %.4g TFLOP/s, a link "
              "moves %.4g GB/s one way (4-byte elements). Per device and ring step, the solid bar is the compute, "
              "the outlined bar under it the exchange of the K/V it holds, which runs at the same time; a ring "
              "step lasts as long as its longest bar. The exchange hides behind the compute once a chunk has "
              "about 2F/B = %.0f rows (no mask). flashviz bench --ring measures the real thing.",
              p.device_tflops, p.link_gbps, RingOverlapChunkRows(p))
          .c_str());
  y += title_h;
  // The legend: which bar is which.
  {
    ImDrawList* dl = ImGui::GetWindowDrawList();
    const float box = std::floor(line * 0.7f);
    float x = whole.min.x;
    dl->AddRectFilled(ImVec2(x, y + (line - box) / 2), ImVec2(x + 2 * box, y + (line + box) / 2), DeviceColor(0));
    x += 2 * box + 4;
    const char* compute = "compute (attend, merge)";
    dl->AddText(ImVec2(x, y), GetPalette().dim, compute);
    x += ImGui::CalcTextSize(compute).x + 16;
    dl->AddRectFilled(ImVec2(x, y + (line - box) / 2), ImVec2(x + 2 * box, y + (line + box) / 2),
                      DeviceColor(1, 0.45f));
    dl->AddRect(ImVec2(x, y + (line - box) / 2), ImVec2(x + 2 * box, y + (line + box) / 2), DeviceColor(1));
    x += 2 * box + 4;
    const std::string exchange_text =
        FitText({"exchange beside it, in the colour of the K/V it sends; a ring step lasts as long as its longest bar",
                 "exchange beside it, in the colour of the K/V it sends", "exchange beside it"},
                whole.max.x - x);
    dl->AddText(ImVec2(x, y), GetPalette().dim, exchange_text.c_str());
    y += line + 4;
  }
  DrawCostTimeline(model, Rect(whole.min.x, y, whole.width(), whole.max.y - y), pace, hovered);

  areas.left = Rect(whole.min.x, devices_top, whole.width(), devices_h);
  areas.right = Rect(whole.min.x, devices_top + devices_h + gap, whole.width(), lower_h);
  FinishStepView(areas, hovered);
}

namespace {

const char* TensorLabel(HbmTensor tensor) {
  switch (tensor) {
    case HbmTensor::kM:
      return "m (running)";
    case HbmTensor::kL:
      return "ℓ (running)";
    case HbmTensor::kLse:
      return "L = m + log ℓ";
    default:
      return nullptr;
  }
}

}  // namespace

void DrawRingTrafficPanel(const Model& model, UiState& ui) {
  (void)ui;
  const RingProblem& p = model.ring_problem();
  const RingState& s = model.ring_state();
  const RingState& total = model.ring_final_state();
  const Ledger& one = model.ring_single_device_ledger();
  const Palette& pal = GetPalette();
  const auto bytes = [](std::int64_t b) { return HumanBytes(static_cast<double>(b)); };

  SectionTitle("Per device",
               "HBM bytes each device has read and written so far (its own memory), and bytes over "
               "the links: each exchange sends the K and V a device holds to the next one.");
  if (ImGui::BeginTable("##ring-devices", 6, ImGuiTableFlags_BordersInnerH | ImGuiTableFlags_SizingStretchProp)) {
    for (const char* name : {"device", "rows", "HBM read", "HBM written", "link sent", "received"})
      ImGui::TableSetupColumn(name);
    ImGui::TableHeadersRow();
    for (const RingDeviceState& d : s.devices) {
      ImGui::TableNextRow();
      ImGui::TableNextColumn();
      ImGui::TextColored(ImGui::ColorConvertU32ToFloat4(DeviceColor(d.device)), "%d", d.device);
      ImGui::TableNextColumn();
      ImGui::TextUnformatted(RingSliceName(p, d.device).substr(5).c_str());
      for (const std::int64_t value :
           {d.ledger.HbmReadBytes(), d.ledger.HbmWriteBytes(), d.link.sent_bytes, d.link.received_bytes}) {
        ImGui::TableNextColumn();
        ImGui::TextUnformatted(bytes(value).c_str());
      }
    }
    ImGui::EndTable();
  }

  ImGui::Spacing();
  SectionTitle("The whole ring against one device",
               "One device running FlashAttention-2 over the whole sequence with the same tiles reads K and V once per "
               "Q tile and never exchanges anything. The ring's devices do the same reads between them, plus the "
               "running state's round trip after every ring step and the exchanges.");
  const double ratio =
      static_cast<double>(total.total.HbmBytes()) / std::max<double>(1.0, static_cast<double>(one.HbmBytes()));
  std::int64_t busiest = 0;
  for (const RingDeviceState& d : total.devices) busiest = std::max(busiest, d.ledger.HbmBytes());
  MathText(Sprintf("HBM, all devices: %s (%.3g× one device's %s); the busiest device %s (%.3g×)",
                   bytes(total.total.HbmBytes()).c_str(), ratio, bytes(one.HbmBytes()).c_str(), bytes(busiest).c_str(),
                   static_cast<double>(busiest) / std::max<double>(1.0, static_cast<double>(one.HbmBytes())))
               .c_str());
  MathText(Sprintf("links: %s in all = 8·(P − 1)·N·d: every slice's K and V travel P − 1 hops",
                   bytes(total.total_link.sent_bytes).c_str())
               .c_str());
  const RingTimeline& t = model.ring_timeline();
  MathTextColored(pal.dim, Sprintf("modelled: ring %s (exchange overlapped), %s without overlap, one device %s",
                                   HumanSeconds(t.overlapped_seconds).c_str(), HumanSeconds(t.serial_seconds).c_str(),
                                   HumanSeconds(t.single_device_seconds).c_str())
                               .c_str());

  ImGui::Spacing();
  SectionTitle("HBM bytes per tensor (read + written, every device)",
               "So far and in all, against one device. K and V count the exchanges too (the send reads them, the "
               "receive writes them); O, m and ℓ are the running state's round trips between ring steps.");
  if (ImGui::BeginTable("##ring-tensors", 4, ImGuiTableFlags_BordersInnerH | ImGuiTableFlags_SizingStretchProp)) {
    for (const char* name : {"HBM", "so far", "ring", "one device"}) ImGui::TableSetupColumn(name);
    ImGui::TableHeadersRow();
    for (int k = 0; k < kHbmTensorCount; ++k) {
      const auto tensor = static_cast<HbmTensor>(k);
      const Traffic& f = total.total[tensor];
      const Traffic& o = one[tensor];
      if (f.read_bytes + f.write_bytes + o.read_bytes + o.write_bytes == 0) continue;
      ImGui::TableNextRow();
      ImGui::TableNextColumn();
      const char* label = TensorLabel(tensor);
      MathText(label ? label : std::string(HbmTensorName(tensor)).c_str());
      for (const std::int64_t value : {s.total[tensor].read_bytes + s.total[tensor].write_bytes,
                                       f.read_bytes + f.write_bytes, o.read_bytes + o.write_bytes}) {
        ImGui::TableNextColumn();
        if (value)
          ImGui::TextUnformatted(bytes(value).c_str());
        else
          ImGui::TextDisabled("–");
      }
    }
    ImGui::EndTable();
  }
  ImGui::Spacing();
  SectionTitle("SRAM",
               "The most one device holds on chip during its local FlashAttention: Q_i, K_j, V_j, S_ij, O_i, "
               "m_i, ℓ_i of one tile pair.");
  MathText(Sprintf("peak %s of M = %s on one device", bytes(total.total.sram_peak_bytes).c_str(),
                   bytes(p.sram_bytes).c_str())
               .c_str());
}

}  // namespace flashviz
