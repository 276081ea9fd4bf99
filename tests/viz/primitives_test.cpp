// Colour maps, notation, heatmap sampling and cell lookup, plot ticks and hover, texture cache.
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <limits>
#include <set>

#include "tests/viz/headless.h"
#include "viz/colormap.h"
#include "viz/file_picker.h"
#include "viz/heatmap.h"
#include "viz/plot.h"
#include "viz/widgets.h"

namespace flashviz {
namespace {

int Red(ImU32 c) { return static_cast<int>((c >> IM_COL32_R_SHIFT) & 0xFF); }
int Blue(ImU32 c) { return static_cast<int>((c >> IM_COL32_B_SHIFT) & 0xFF); }

TEST(ColorMap, DivergingIsBlueBelowRedAboveLightAtZero) {
  EXPECT_GT(Blue(DivergingColor(-1.0)), Red(DivergingColor(-1.0)));
  EXPECT_GT(Red(DivergingColor(1.0)), Blue(DivergingColor(1.0)));
  EXPECT_EQ(DivergingColor(0.0), IM_COL32(247, 247, 247, 255));
  EXPECT_EQ(DivergingColor(-5.0), DivergingColor(-1.0));  // clamped
  EXPECT_EQ(SequentialColor(0.0), IM_COL32(68, 1, 84, 255));
  EXPECT_EQ(SequentialColor(1.0), IM_COL32(253, 231, 37, 255));
}

TEST(ColorMap, MaskedScoresAndNanGetTheMaskColour) {
  const ColorScale scale = ColorScale::Symmetric(3.0);
  EXPECT_EQ(scale(-std::numeric_limits<double>::infinity()), scale.masked);
  EXPECT_EQ(scale(std::nan("")), scale.masked);
  EXPECT_EQ(scale(3.0), DivergingColor(1.0));
  EXPECT_EQ(scale(std::numeric_limits<double>::infinity()), DivergingColor(1.0));  // +∞ is not a mask
  EXPECT_EQ(ColorScale::Symmetric(0.0).hi, 1.0);  // a zero range does not divide by zero
}

TEST(Notation, SubscriptsAndTildes) {
  EXPECT_EQ(StripTildes("S_ij"), "S\u1d62\u2c7c");
  EXPECT_EQ(StripTildes("Q_i K_jᵀ"), "Q\u1d62 K\u2c7cᵀ");
  EXPECT_EQ(StripTildes("P~_ij = exp(S_ij − m~_ij)"), "P\u1d62\u2c7c = exp(S\u1d62\u2c7c − m\u1d62\u2c7c)");
  EXPECT_EQ(StripTildes("B_c, B_r, T_c, m_new, l_new"), "B_c, B_r, T_c, m_new, l_new");  // no subscript c in Unicode
  EXPECT_EQ(StripTildes("ℓ~_ij"), "ℓ\u1d62\u2c7c");
  EXPECT_EQ(StripTildes("~/file and 3 ~ 4"), "~/file and 3 ~ 4");  // a tilde after no letter stays
  EXPECT_EQ(StripTildes("S_ij[r, c]"), "S\u1d62\u2c7c[r, c]");
  EXPECT_EQ(StripTildes("x_index"), "x_index");
}

TEST(Notation, NumbersPrintInfinityAsTheMathSymbol) {
  EXPECT_EQ(Num(-std::numeric_limits<double>::infinity()), "\u2212\u221e");
  EXPECT_EQ(Num(1.23456, 3), "1.23");
  EXPECT_EQ(CellNum(-0.5, 2), "-0.50");
  EXPECT_EQ(CellNum(-0.004, 2), "0.00");  // rounds to zero: no minus sign
  EXPECT_EQ(CellNum(-0.04, 1), "0.0");
  EXPECT_EQ(CellNum(-0.05, 1), "-0.1");
}

TEST(Heatmap, PointSamplingIsExactAtOneTexelPerCellAndSamplesCentresBelow) {
  RgbaImage image;
  const ColorScale scale = ColorScale::Symmetric(100.0);
  FillMatrixImage(4, 3, [](int r, int c) { return r * 10.0 + c; }, scale, image);
  ASSERT_EQ(image.width, 3);
  ASSERT_EQ(image.height, 4);
  for (int r = 0; r < 4; ++r)
    for (int c = 0; c < 3; ++c) EXPECT_EQ(image.at(c, r), scale(r * 10.0 + c));
  // 1000 rows into 10 texels: texel y shows row (2y+1)·1000/20, the centre of its band.
  FillMatrixImage(1000, 1, [](int r, int) { return r / 10.0; }, scale, image, 2048, 10);
  ASSERT_EQ(image.height, 10);
  for (int y = 0; y < 10; ++y) EXPECT_EQ(image.at(0, y), scale(((2 * y + 1) * 1000 / 20) / 10.0));
}

TEST(Heatmap, CellLookupAndBlocks) {
  const CellGrid grid{{ImVec2(10, 20), ImVec2(110, 220)}, 100, 50};  // cells 2 × 2 px
  int r = -1, c = -1;
  ASSERT_TRUE(grid.CellAt(ImVec2(10.5f, 20.5f), &r, &c));
  EXPECT_EQ(r, 0);
  EXPECT_EQ(c, 0);
  ASSERT_TRUE(grid.CellAt(ImVec2(109.9f, 219.9f), &r, &c));
  EXPECT_EQ(r, 99);
  EXPECT_EQ(c, 49);
  EXPECT_FALSE(grid.CellAt(ImVec2(9, 30), &r, &c));
  const ScreenRect block = grid.Cells(10, 5, 20, 10);
  EXPECT_FLOAT_EQ(block.min.x, 20);
  EXPECT_FLOAT_EQ(block.min.y, 40);
  EXPECT_FLOAT_EQ(block.max.x, 30);
  EXPECT_FLOAT_EQ(block.max.y, 60);
}

TEST(Plot, TicksLinearLogAndPowersOfTwo) {
  const std::vector<double> lin = PlotTicks(0, 10, false);
  ASSERT_FALSE(lin.empty());
  EXPECT_DOUBLE_EQ(lin.front(), 0);
  EXPECT_DOUBLE_EQ(lin.back(), 10);
  for (std::size_t k = 1; k < lin.size(); ++k) EXPECT_NEAR(lin[k] - lin[k - 1], 2.0, 1e-12);
  const std::vector<double> decades = PlotTicks(1, 1e6, true);
  EXPECT_EQ(decades, (std::vector<double>{1, 10, 100, 1e3, 1e4, 1e5, 1e6}));
  const std::vector<double> twos = PlotTicks(16, 32768, true, 2);
  ASSERT_FALSE(twos.empty());
  EXPECT_LE(twos.size(), 9u);
  for (double t : twos) EXPECT_DOUBLE_EQ(std::exp2(std::round(std::log2(t))), t);
  EXPECT_TRUE(PlotTicks(0, 10, true).empty());  // no log ticks through zero
}

TEST(Plot, DrawsSeriesAndFindsTheNearestPointUnderTheMouse) {
  testing::HeadlessImGui imgui;
  ImGui::NewFrame();
  PlotSpec spec;
  spec.x.log = spec.y.log = true;
  spec.series.push_back({"a", {16, 64, 256}, {100, 1000, 10000}, IM_COL32(255, 0, 0, 255)});
  spec.series.push_back({"bad", {0, -1, 1}, {1, 1, std::nan("")}, IM_COL32(0, 255, 0, 255)});  // nothing drawable
  spec.marks.push_back({64, 1000, "here", IM_COL32(255, 255, 0, 255)});
  ImDrawList list(ImGui::GetDrawListSharedData());
  ImDrawList* dl = &list;
  auto reset = [&] {
    list._ResetForNewFrame();
    list.PushTextureID(ImGui::GetIO().Fonts->TexID);
    list.PushClipRectFullScreen();
  };
  reset();
  const ScreenRect rect{ImVec2(0, 0), ImVec2(400, 300)};
  const PlotHover none = DrawPlotAt(dl, rect, spec, ImVec2(-FLT_MAX, -FLT_MAX));
  EXPECT_FALSE(none.active);
  // Sweep the mouse over the plot: every readout is a real data point, and every point is found somewhere.
  std::set<std::size_t> found;
  bool mark_found = false;
  for (float y = 0; y < 300; y += 4)
    for (float x = 0; x < 400; x += 4) {
      reset();
      const PlotHover h = DrawPlotAt(dl, rect, spec, ImVec2(x, y));
      if (!h.active) continue;
      if (h.series < 0) {
        mark_found = true;
        EXPECT_EQ(h.x, 64);
        EXPECT_EQ(h.y, 1000);
        continue;
      }
      ASSERT_EQ(h.series, 0) << "a point with a non-positive coordinate on a log axis was hovered";
      ASSERT_LT(h.index, 3u);
      EXPECT_EQ(h.x, spec.series[0].x[h.index]);
      EXPECT_EQ(h.y, spec.series[0].y[h.index]);
      found.insert(h.index);
    }
  EXPECT_EQ(found.size(), 2u);  // (64, 1000) lies under the mark, which is nearer
  EXPECT_TRUE(found.count(0) && found.count(2));
  EXPECT_TRUE(mark_found);
  ImGui::Render();
}

TEST(TextureCache, RebuildsOnlyWhenTheVersionChangesAndDropsIdleEntries) {
  MemoryTextureBackend textures;
  int fills = 0;
  auto fill = [&](RgbaImage& image) {
    ++fills;
    image.Resize(2, 2, IM_COL32(1, 2, 3, 255));
  };
  const ImTextureID a = textures.Cached("k", 1, fill);
  EXPECT_EQ(textures.Cached("k", 1, fill), a);
  EXPECT_EQ(fills, 1);
  EXPECT_EQ(textures.Cached("k", 2, fill), a);  // updated in place
  EXPECT_EQ(fills, 2);
  ASSERT_NE(textures.Find(a), nullptr);
  EXPECT_EQ(textures.Find(a)->at(1, 1), IM_COL32(1, 2, 3, 255));
  for (int k = 0; k < 5; ++k) textures.EndFrame(3);
  EXPECT_EQ(textures.cached_count(), 0u);
  EXPECT_EQ(textures.Find(a), nullptr);
}

}  // namespace
}  // namespace flashviz

namespace flashviz {
namespace {

// The file picker's folder listing: ".." first, then folders, then the files with the extension, each by name;
// hidden entries left out; a folder that cannot be read lists nothing.
TEST(FilePicker, ListsFoldersThenMatchingFilesByName) {
  const std::filesystem::path dir = std::filesystem::temp_directory_path() / "flashviz_picker_test";
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir / "b-runs");
  std::filesystem::create_directories(dir / "a-results");
  std::filesystem::create_directories(dir / ".hidden");
  for (const char* name : {"z.csv", "m.csv", "notes.txt", ".secret.csv", "csv"}) std::ofstream(dir / name) << "x";
  std::vector<std::string> names;
  for (const FolderEntry& e : ListFolder(dir, ".csv")) names.push_back(e.name + (e.folder ? "/" : ""));
  EXPECT_EQ(names, (std::vector<std::string>{"../", "a-results/", "b-runs/", "m.csv", "z.csv"}));
  EXPECT_EQ(ListFolder(dir, "").size(), 7u);  // .., two folders, four visible files
  EXPECT_TRUE(ListFolder(dir / "missing", ".csv").empty());
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace flashviz
