// Every panel drawn for many frames with no window and no GL (ImGui with io.DisplaySize and a font atlas in
// memory), on every preset, at many steps, in both themes and at 1280×720 and 1920×1080: no crash (and no
// leak or UB under the ASan preset), the cursor where the report says, nothing overlapping, and at 1920×1080
// the step view fits without scrolling. One frame per preset is rasterized on the CPU to check its pixels.
#include <gtest/gtest.h>
#include <imgui_internal.h>

#include <optional>
#include <random>
#include <set>

#include "tests/viz/headless.h"
#include "viz/frame_report.h"
#include "viz/layout.h"
#include "viz/panels/panel_table.h"
#include "viz/panels/panels.h"

namespace flashviz {
namespace {

void LoadPreset(Model& model, UiState& ui, const Preset& preset) {
  ui.form = preset.form;
  const AttentionProblem p = ResolveProblem(preset.form.ToRequest());
  model.SetProblem(p, std::make_shared<AttentionInputs>(MakeRandomInputs(p, preset.form.seed)),
                   {preset.form.seed, "", 0});
  if (preset.form.ring) {
    const RingProblem ring = ResolveRingProblem(preset.form.ToRingRequest());
    model.SetRingProblem(ring, std::make_shared<AttentionInputs>(MakeRandomInputs(ring.n, ring.d, preset.form.seed)));
    return;
  }
  if (!preset.form.decode) return;
  const DecodeProblem decode = ResolveDecodeProblem(preset.form.ToDecodeRequest(), preset.form.seed);
  model.SetDecodeProblem(decode, std::make_shared<DecodeInputs>(MakeRandomDecodeInputs(decode, preset.form.seed)));
}

// One frame of the whole UI; `report` gets where its parts went.
void Frame(Model& model, UiState& ui, FrameReport* report = nullptr) {
  model.Update();
  ImGui::NewFrame();
  const ScopedFrameReport reporting(report);
  DrawUi(model, ui);
  ImGui::Render();
  if (TextureBackend* t = GetTextureBackend()) t->EndFrame();
}

bool Overlap(const ScreenRect& a, const ScreenRect& b) {
  return a.min.x < b.max.x && b.min.x < a.max.x && a.min.y < b.max.y && b.min.y < a.max.y;
}
bool Inside(const ScreenRect& a, const ScreenRect& outer) {
  return a.min.x >= outer.min.x - 0.5f && a.min.y >= outer.min.y - 0.5f && a.max.x <= outer.max.x + 0.5f &&
         a.max.y <= outer.max.y + 0.5f;
}

std::vector<std::int64_t> StepsToVisit(const Model& model, int random_count) {
  std::vector<std::int64_t> steps = {0, 1, 2, 3, model.step_count() / 3, model.step_count() / 2,
                                     model.step_count() - 2, model.step_count() - 1};
  std::mt19937 rng(42);
  for (int k = 0; k < random_count; ++k) steps.push_back(static_cast<std::int64_t>(rng() % model.step_count()));
  for (auto& s : steps) s = std::clamp<std::int64_t>(s, 0, model.step_count() - 1);
  return steps;
}

struct Screen {
  ImVec2 size;
  Theme theme;
};

// The backward step view: its eight HBM columns and its tile grids stay inside the view and apart, and the
// cursor report follows the step (Q_i and the S_ij/P_ij grid with a tile pair).
void CheckBackwardParts(const Model& model, const FrameReport& r, const std::string& where) {
  ASSERT_GE(r.tile_grids.size(), 8u + 2u) << where;
  for (std::size_t a = 0; a < r.tile_grids.size(); ++a) {
    ASSERT_TRUE(Inside(r.tile_grids[a], r.step_area)) << "part " << a << " leaves the step view: " << where;
    for (std::size_t b = a + 1; b < r.tile_grids.size(); ++b)
      ASSERT_FALSE(Overlap(r.tile_grids[a], r.tile_grids[b])) << a << " overlaps " << b << ": " << where;
  }
  const StepInfo info = model.state().info;
  ASSERT_EQ(r.s_tile_visible, info.i >= 0 && info.j >= 0) << where;
  ASSERT_EQ(r.q_tile_visible, info.i >= 0 && info.j >= 0) << where;  // Q_i is read by the tile pairs only
}

// Decoding's step view: the pool and its tile grids stay inside the view and apart.
void CheckDecodeParts(const FrameReport& r, const std::string& where) {
  ASSERT_GE(r.tile_grids.size(), 1u) << where;
  for (std::size_t a = 0; a < r.tile_grids.size(); ++a) {
    ASSERT_TRUE(Inside(r.tile_grids[a], r.step_area)) << "part " << a << " leaves the step view: " << where;
    for (std::size_t b = a + 1; b < r.tile_grids.size(); ++b)
      ASSERT_FALSE(Overlap(r.tile_grids[a], r.tile_grids[b])) << a << " overlaps " << b << ": " << where;
  }
}

class PresetPanels : public ::testing::TestWithParam<int> {};

TEST_P(PresetPanels, EveryPresetManyStepsBothThemesBothSizes) {
  const Preset& preset = Presets()[static_cast<std::size_t>(GetParam())];
  const bool big = preset.form.n >= 1024;
  for (const Screen screen : {Screen{ImVec2(1280, 720), Theme::kDark}, Screen{ImVec2(1920, 1080), Theme::kLight}}) {
    testing::HeadlessImGui imgui(screen.size, screen.theme);
    Model model;
    UiState ui;
    ui.appearance.theme = screen.theme;
    LoadPreset(model, ui, preset);
    for (const char* tab : {"step", "traffic"}) {
      ui.focus_tab = tab;
      for (std::int64_t step : StepsToVisit(model, big ? 4 : 40)) {
        model.SetStep(step);
        ui.cursor.step = step;
        FrameReport r;
        for (int frame = 0; frame < 2; ++frame) Frame(model, ui, &r);
        ASSERT_GT(ImGui::GetDrawData()->TotalVtxCount, 0);
        if (std::string(tab) != "step") continue;
        ASSERT_TRUE(r.step_view_drawn);
        if (model.decode_mode() || model.ring_mode()) {
          CheckDecodeParts(r, "step " + std::to_string(step));
          ASSERT_TRUE(r.timeline_drawn);
          ASSERT_FALSE(Overlap(r.timeline_labels, r.timeline_narration)) << "timeline labels under the narration";
          continue;
        }
        if (model.problem().backward()) {
          CheckBackwardParts(model, r, "step " + std::to_string(step));
          ASSERT_TRUE(r.timeline_drawn);
          ASSERT_FALSE(Overlap(r.timeline_labels, r.timeline_narration)) << "timeline labels under the narration";
          continue;
        }
        const ScreenRect parts[] = {r.step_q, r.step_kt, r.step_s, r.step_vt, r.step_o, r.step_zoom};
        for (int a = 0; a < 6; ++a) {
          ASSERT_TRUE(Inside(parts[a], r.step_area)) << "part " << a << " leaves the step view at step " << step;
          for (int b = a + 1; b < 6; ++b) ASSERT_FALSE(Overlap(parts[a], parts[b])) << a << " overlaps " << b;
        }
        const StepInfo info = model.state().info;
        ASSERT_EQ(r.s_tile_visible, info.i >= 0 && info.j >= 0);
        ASSERT_EQ(r.q_tile_visible, info.i >= 0);
        if (r.s_tile_visible) { ASSERT_TRUE(Inside(r.s_tile, r.step_s)); }
        // The narration once overlapped the second label line ("tile iteration k of n"), which is taller than
        // the scrubber beside the labels.
        ASSERT_TRUE(r.timeline_drawn);
        ASSERT_FALSE(Overlap(r.timeline_labels, r.timeline_narration)) << "timeline labels under the narration";
      }
    }
  }
}

// Presentation mode at the projector sizes: the step view gets the room (the side columns fold into strips), its
// parts fit without overlapping, the timeline labels stay clear of the narration, and in the first lesson the
// large S_ij and P~_ij tiles keep their numbers at 1280×720 (large font used to leave the step view 100 px wide).
TEST_P(PresetPanels, PresentationModeAtProjectorSizes) {
  const Preset& preset = Presets()[static_cast<std::size_t>(GetParam())];
  const bool big = preset.form.n >= 1024;
  for (const Screen screen : {Screen{ImVec2(1024, 768), Theme::kLight}, Screen{ImVec2(1280, 720), Theme::kDark},
                              Screen{ImVec2(1920, 1080), Theme::kLight}}) {
    testing::HeadlessImGui imgui(screen.size, screen.theme, 1.0f, /*presentation=*/true);
    Model model;
    UiState ui;
    ui.appearance.theme = screen.theme;
    ui.appearance.presentation = true;
    LoadPreset(model, ui, preset);
    for (const char* tab : {"step", "traffic", "vortex", "benchmark", "gpu"}) {
      ui.focus_tab = tab;
      for (std::int64_t step : StepsToVisit(model, big ? 2 : 12)) {
        model.SetStep(step);
        ui.cursor.step = step;
        FrameReport r;
        for (int frame = 0; frame < 2; ++frame) Frame(model, ui, &r);
        const std::string where = std::string(tab) + " at step " + std::to_string(step) + ", " +
                                  std::to_string(static_cast<int>(screen.size.x)) + " px";
        ASSERT_GE(r.centre.width(), 0.85f * screen.size.x) << where << ": the step view is not given the room";
        ASSERT_TRUE(r.timeline_drawn) << where;
        ASSERT_FALSE(Overlap(r.timeline_labels, r.timeline_narration)) << where;
        ASSERT_LE(r.timeline_narration.max.y, screen.size.y + 0.5f) << where << ": the narration is cut off";
        if (std::string(tab) != "step") continue;
        ASSERT_TRUE(r.step_view_drawn) << where;
        if (model.ring_mode()) {
          CheckDecodeParts(r, where);
          continue;
        }
        if (model.decode_mode()) {
          CheckDecodeParts(r, where);
          // The split's scores keep their numbers on a projector (16 keys of 2 rows).
          if (screen.size.x >= 1280 && model.decode_state().info.phase == DecodePhase::kScores) {
            EXPECT_TRUE(r.split_numbers_shown) << "the split's numbers were dropped: " << where;
          }
          continue;
        }
        if (model.problem().backward()) {
          CheckBackwardParts(model, r, where);
          if (screen.size.x == 1280 && model.state().info.phase == Phase::kGradS) {
            EXPECT_TRUE(r.tile_numbers_shown) << "the tiles' numbers were dropped: " << where;
          }
          continue;
        }
        const ScreenRect parts[] = {r.step_q, r.step_kt, r.step_s, r.step_vt, r.step_o, r.step_zoom};
        for (int a = 0; a < 6; ++a) {
          ASSERT_TRUE(Inside(parts[a], r.step_area)) << "part " << a << " leaves the step view: " << where;
          for (int b = a + 1; b < 6; ++b) ASSERT_FALSE(Overlap(parts[a], parts[b])) << a << " overlaps " << b;
        }
        const Phase phase = model.state().info.phase;
        if (std::string(preset.id) == "first-lesson" && screen.size.x == 1280 &&
            (phase == Phase::kScores || phase == Phase::kExp || phase == Phase::kRowMax)) {
          EXPECT_TRUE(r.tile_numbers_shown) << "the tile's numbers were dropped: " << where;
        }
      }
    }
  }
}

// Pointing at a folded column opens it over the step view until the pointer leaves; opening the columns for
// good (F2, or ≡ on a strip) gives the layout back its columns.
TEST(Layout, PresentationStripsOpenOnHover) {
  testing::HeadlessImGui imgui(ImVec2(1280, 720), Theme::kDark, 1.0f, true);
  Model model;
  UiState ui;
  ui.appearance.presentation = true;
  LoadPreset(model, ui, Presets()[0]);
  FrameReport r;
  const auto frames = [&](ImVec2 mouse) {
    ImGui::GetIO().MousePos = mouse;
    for (int frame = 0; frame < 2; ++frame) Frame(model, ui, &r);
  };
  frames(ImVec2(640, 300));
  EXPECT_EQ(ui.peek, "");
  frames(ImVec2(r.centre.min.x - 5, 300));
  EXPECT_EQ(ui.peek, "sidebar");
  frames(ImVec2(r.centre.min.x + 100, 300));  // over the opened sidebar: it stays
  EXPECT_EQ(ui.peek, "sidebar");
  frames(ImVec2(640, 300));
  EXPECT_EQ(ui.peek, "");
  frames(ImVec2(r.centre.max.x + 5, 300));
  EXPECT_EQ(ui.peek, "right");
  ui.appearance.side_columns_open = true;
  frames(ImVec2(640, 300));
  EXPECT_EQ(ui.peek, "");
  EXPECT_LT(r.centre.width(), 0.7f * 1280);
}

bool NearColor(const RgbaImage& image, float fx, float fy, ImU32 color) {
  const ImU32 c = image.at(static_cast<int>(fx), static_cast<int>(fy));
  for (int shift : {IM_COL32_R_SHIFT, IM_COL32_G_SHIFT, IM_COL32_B_SHIFT})
    if (std::abs(static_cast<int>((c >> shift) & 0xFF) - static_cast<int>((color >> shift) & 0xFF)) > 40) return false;
  return true;
}

// Decoding: at every split of the first KV head, the pool frames exactly that split's blocks, where the pixels are.
void CheckDecodeCursor(Model& model, UiState& ui, testing::HeadlessImGui& imgui) {
  const DecodeProblem& p = model.decode_problem();
  for (int split = 0; split < p.splits; ++split) {
    const std::int64_t step = model.decode_stepper().FirstStepOfSplit(0, split) + 2;  // its scores
    model.SetStep(step);
    ui.cursor.step = step;
    FrameReport report;
    for (int frame = 0; frame < 3; ++frame) Frame(model, ui, &report);
    ASSERT_EQ(static_cast<int>(report.decode_split_blocks.size()),
              p.SplitPageBegin(split + 1) - p.SplitPageBegin(split))
        << "split " << split;
    const RgbaImage image = imgui.Rasterize();
    for (const ScreenRect& b : report.decode_split_blocks) {
      EXPECT_TRUE(NearColor(image, b.min.x - 0.75f, (b.min.y + b.max.y) / 2, GetPalette().cursor)) << "split " << split;
      EXPECT_TRUE(NearColor(image, (b.min.x + b.max.x) / 2, b.max.y + 0.75f, GetPalette().cursor)) << "split " << split;
    }
  }
}

// The ring's timeline: the current ring step's column framed with the cursor at every ring step.
void CheckRingCursor(Model& model, UiState& ui, testing::HeadlessImGui& imgui) {
  for (int s = 0; s < model.ring_problem().devices; ++s) {
    const std::int64_t step = model.ring_stepper().FirstStepOfRingStep(s);
    model.SetStep(step);
    ui.cursor.step = step;
    FrameReport report;
    for (int frame = 0; frame < 3; ++frame) Frame(model, ui, &report);
    ASSERT_TRUE(report.ring_step_visible) << "ring step " << s;
    const ScreenRect& c = report.ring_step;
    const RgbaImage image = imgui.Rasterize();
    EXPECT_TRUE(NearColor(image, c.min.x - 0.75f, (c.min.y + c.max.y) / 2, GetPalette().cursor)) << "ring step " << s;
    EXPECT_TRUE(NearColor(image, c.max.x + 0.75f, (c.min.y + c.max.y) / 2, GetPalette().cursor)) << "ring step " << s;
  }
}

TEST_P(PresetPanels, TheCursorIsDrawnWhereTheReportSays) {
  const Preset& preset = Presets()[static_cast<std::size_t>(GetParam())];
  testing::HeadlessImGui imgui(ImVec2(1280, 720));
  Model model;
  UiState ui;
  LoadPreset(model, ui, preset);
  if (model.decode_mode()) return CheckDecodeCursor(model, ui, imgui);
  if (model.ring_mode()) return CheckRingCursor(model, ui, imgui);
  // The first scores step: a tile pair is current.
  std::int64_t step = 0;
  while (model.stepper().Info(step).phase != Phase::kScores) ++step;
  model.SetStep(step);
  ui.cursor.step = step;
  FrameReport report;
  for (int frame = 0; frame < 3; ++frame) Frame(model, ui, &report);
  ASSERT_TRUE(report.s_tile_visible);
  const RgbaImage image = imgui.Rasterize();
  const ImU32 cursor = GetPalette().cursor;
  auto near_cursor = [&](float fx, float fy) {
    const ImU32 c = image.at(static_cast<int>(fx), static_cast<int>(fy));
    for (int shift : {IM_COL32_R_SHIFT, IM_COL32_G_SHIFT, IM_COL32_B_SHIFT})
      if (std::abs(static_cast<int>((c >> shift) & 0xFF) - static_cast<int>((cursor >> shift) & 0xFF)) > 40)
        return false;
    return true;
  };
  // The frame is drawn just outside the tile, about 2 px wide: 0.75 px outside the edge is inside its solid core.
  const ScreenRect s = report.s_tile, q = report.q_tile;
  const float s_mid_y = (s.min.y + s.max.y) / 2, s_mid_x = (s.min.x + s.max.x) / 2;
  EXPECT_TRUE(near_cursor(s.min.x - 0.75f, s_mid_y)) << "left edge of S_ij";
  EXPECT_TRUE(near_cursor(s_mid_x, s.min.y - 0.75f)) << "top edge of S_ij";
  EXPECT_TRUE(near_cursor(s.max.x + 0.75f, s_mid_y)) << "right edge of S_ij";
  EXPECT_TRUE(near_cursor(s_mid_x, s.max.y + 0.75f)) << "bottom edge of S_ij";
  EXPECT_TRUE(near_cursor(q.min.x - 0.75f, (q.min.y + q.max.y) / 2)) << "left edge of Q_i";
  // Far from any cursor, the S view shows no cursor colour: the last tile's centre is pending. (The backward view
  // has no S view: its step_s is the current tile itself.)
  if (!model.problem().backward()) {
    EXPECT_FALSE(near_cursor(report.step_s.max.x - 3, report.step_s.max.y - 3));
  }
}

// The timeline's scrubber stays put while the step moves (its labels used to change width with the step
// number and the phase name, shifting the scrubber and its marks sideways during playback), and the jump fields
// follow the cursor to every tile pair it visits.
TEST_P(PresetPanels, TheTimelineStaysAndTheJumpFieldsFollow) {
  const Preset& preset = Presets()[static_cast<std::size_t>(GetParam())];
  testing::HeadlessImGui imgui(ImVec2(1280, 720));
  Model model;
  UiState ui;
  LoadPreset(model, ui, preset);
  std::optional<ScreenRect> first;
  for (const std::int64_t step : StepsToVisit(model, 10)) {
    model.SetStep(step);
    ui.cursor.step = step;
    FrameReport report;
    for (int frame = 0; frame < 2; ++frame) Frame(model, ui, &report);
    ASSERT_TRUE(report.timeline_drawn);
    if (!first) first = report.timeline_scrubber;
    EXPECT_EQ(report.timeline_scrubber.min.x, first->min.x) << "step " << step;
    EXPECT_EQ(report.timeline_scrubber.max.x, first->max.x) << "step " << step;
    if (model.ring_mode()) {  // one field: the ring step, counted from 1
      const int s = model.ring_state().info.ring_step;
      if (s >= 0) { EXPECT_EQ(ui.cursor.jump_i, s + 1) << "step " << step; }
      continue;
    }
    const StepInfo info = model.state().info;
    if (info.i >= 0) { EXPECT_EQ(ui.cursor.jump_i, info.i) << "step " << step; }
    if (info.j >= 0) { EXPECT_EQ(ui.cursor.jump_j, info.j) << "step " << step; }
  }
  // What was typed stays until the cursor moves.
  const int typed = ui.cursor.jump_i + 1;
  ui.cursor.jump_i = typed;
  Frame(model, ui);
  EXPECT_EQ(ui.cursor.jump_i, typed);
}

INSTANTIATE_TEST_SUITE_P(Presets, PresetPanels, ::testing::Range(0, static_cast<int>(Presets().size())));

TEST(Layout, SlotsTileTheScreenWithoutOverlap) {
  for (const ImVec2 size : {ImVec2(1280, 720), ImVec2(1920, 1080), ImVec2(800, 600)}) {
    const UiLayout L = ComputeUiLayout(size, 22, 100, 1.0f, true, true, true);
    const ScreenRect slots[] = {L.sidebar, L.centre, L.right, L.bottom};
    for (int a = 0; a < 4; ++a) {
      EXPECT_GT(slots[a].width(), 0);
      EXPECT_GT(slots[a].height(), 0);
      for (int b = a + 1; b < 4; ++b) EXPECT_FALSE(Overlap(slots[a], slots[b])) << a << " " << b;
    }
    const float area = L.sidebar.width() * L.sidebar.height() + L.centre.width() * L.centre.height() +
                       L.right.width() * L.right.height() + L.bottom.width() * L.bottom.height();
    EXPECT_FLOAT_EQ(area, size.x * (size.y - 22));
    EXPECT_GE(L.centre.width(), size.x * 0.35f);
  }
}

TEST(Layout, TheStepViewFitsWithoutScrollingAt1920x1080) {
  for (const Preset& preset : Presets()) {
    testing::HeadlessImGui imgui(ImVec2(1920, 1080));
    Model model;
    UiState ui;
    LoadPreset(model, ui, preset);
    model.SetStep(model.step_count() / 2);
    ui.cursor.step = model.step();
    for (int frame = 0; frame < 3; ++frame) Frame(model, ui);
    for (ImGuiWindow* window : ImGui::GetCurrentContext()->Windows) {
      if (!window->Active || window->Hidden) continue;
      const std::string name = window->Name;
      // The parameter sidebar may scroll; the step view may not. (The main menu bar reports a scroll range of
      // its own that no user can scroll.)
      if (name.rfind("##sidebar", 0) == 0 || name == "##MainMenuBar") continue;
      EXPECT_LE(window->ScrollMax.y, 0.0f) << preset.id << ": " << name << " scrolls";
      EXPECT_LE(window->ScrollMax.x, 0.0f) << preset.id << ": " << name << " scrolls sideways";
    }
  }
}

TEST(Panels, EachPanelAloneInASmallWindow) {
  // A panel must cope with whatever room its slot gives it, down to nothing useful.
  testing::HeadlessImGui imgui(ImVec2(640, 480));
  Model model;
  UiState ui;
  LoadPreset(model, ui, *FindPreset("causal"));
  for (const PanelInfo& panel : Panels())
    for (const ImVec2 size : {ImVec2(600, 440), ImVec2(160, 90), ImVec2(40, 30)})
      for (std::int64_t step : {std::int64_t{0}, model.step_count() / 2, model.step_count() - 1}) {
        model.SetStep(step);
        ImGui::NewFrame();
        ImGui::SetNextWindowSize(size);
        ImGui::Begin(panel.id);
        panel.draw(model, ui);
        ImGui::End();
        ImGui::Render();
      }
  SUCCEED();
}

TEST(Panels, TableIsConsistent) {
  std::set<std::string> ids;
  for (const PanelInfo& p : Panels()) {
    EXPECT_TRUE(ids.insert(p.id).second) << "duplicate panel id " << p.id;
    EXPECT_NE(p.draw, nullptr);
    EXPECT_EQ(FindPanel(p.id), &p);
  }
  UiState ui;
  EXPECT_TRUE(FocusPanel(ui, "traffic"));
  EXPECT_EQ(ui.focus_tab, "traffic");
  EXPECT_FALSE(FocusPanel(ui, "no-such-panel"));
  SetPanelOpen(ui, *FindPanel("output"), false);
  EXPECT_FALSE(IsPanelOpen(ui, *FindPanel("output")));
}

}  // namespace
}  // namespace flashviz
