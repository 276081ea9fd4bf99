// The CPU rasterizer against hand-computed pixels, and PNG output.
#include <gtest/gtest.h>
#include <stb_image.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>

#include "tests/viz/headless.h"
#include "viz/raster.h"

namespace flashviz {
namespace {

int Channel(ImU32 c, int shift) { return static_cast<int>((c >> shift) & 0xFF); }

// One frame of `draw` (into the foreground draw list, covering everything) rasterized over black.
RgbaImage Draw(testing::HeadlessImGui& imgui, const std::function<void(ImDrawList*)>& draw, int w = 64, int h = 48) {
  ImGui::GetIO().DisplaySize = ImVec2(static_cast<float>(w), static_cast<float>(h));
  ImGui::NewFrame();
  draw(ImGui::GetForegroundDrawList());
  ImGui::Render();
  RgbaImage image;
  image.Resize(w, h, IM_COL32(0, 0, 0, 255));
  RasterizeDrawData(*ImGui::GetDrawData(), imgui.textures(), image);
  return image;
}

TEST(Raster, FilledRectCoversExactlyItsPixels) {
  testing::HeadlessImGui imgui;
  const RgbaImage image =
      Draw(imgui, [](ImDrawList* dl) { dl->AddRectFilled(ImVec2(10, 5), ImVec2(20, 15), IM_COL32(255, 0, 0, 255)); });
  for (int y = 0; y < image.height; ++y)
    for (int x = 0; x < image.width; ++x) {
      const bool inside = x >= 10 && x < 20 && y >= 5 && y < 15;
      ASSERT_EQ(image.at(x, y), inside ? IM_COL32(255, 0, 0, 255) : IM_COL32(0, 0, 0, 255)) << x << "," << y;
    }
}

TEST(Raster, TranslucentQuadBlendsOnceAcrossItsDiagonal) {
  // Two triangles share the quad's diagonal: the top-left rule must not blend those pixels twice.
  testing::HeadlessImGui imgui;
  const RgbaImage image = Draw(
      imgui, [](ImDrawList* dl) { dl->AddRectFilled(ImVec2(0, 0), ImVec2(40, 40), IM_COL32(255, 255, 255, 128)); });
  for (int y = 0; y < 40; ++y)
    for (int x = 0; x < 40; ++x) ASSERT_NEAR(Channel(image.at(x, y), IM_COL32_R_SHIFT), 128, 1) << x << "," << y;
}

TEST(Raster, ClipRectsAreHonoured) {
  testing::HeadlessImGui imgui;
  const RgbaImage image = Draw(imgui, [](ImDrawList* dl) {
    dl->PushClipRect(ImVec2(0, 0), ImVec2(8, 8), false);
    dl->AddRectFilled(ImVec2(0, 0), ImVec2(30, 30), IM_COL32(0, 255, 0, 255));
    dl->PopClipRect();
  });
  EXPECT_EQ(image.at(7, 7), IM_COL32(0, 255, 0, 255));
  EXPECT_EQ(image.at(8, 7), IM_COL32(0, 0, 0, 255));
  EXPECT_EQ(image.at(20, 20), IM_COL32(0, 0, 0, 255));
}

TEST(Raster, TexturesAreSampledNearest) {
  testing::HeadlessImGui imgui;
  RgbaImage checker;
  checker.Resize(2, 1);
  checker.at(0, 0) = IM_COL32(255, 0, 0, 255);
  checker.at(1, 0) = IM_COL32(0, 0, 255, 255);
  const ImTextureID id = imgui.textures().Create(checker);
  const RgbaImage image = Draw(imgui, [&](ImDrawList* dl) { dl->AddImage(id, ImVec2(0, 0), ImVec2(20, 10)); });
  EXPECT_EQ(image.at(2, 5), IM_COL32(255, 0, 0, 255));
  EXPECT_EQ(image.at(9, 5), IM_COL32(255, 0, 0, 255));
  EXPECT_EQ(image.at(10, 5), IM_COL32(0, 0, 255, 255));
  EXPECT_EQ(image.at(19, 5), IM_COL32(0, 0, 255, 255));
  EXPECT_EQ(image.at(25, 5), IM_COL32(0, 0, 0, 255));
}

TEST(Raster, TextLeavesInkInItsBox) {
  testing::HeadlessImGui imgui;
  const RgbaImage image = Draw(
      imgui, [](ImDrawList* dl) { dl->AddText(ImVec2(2, 2), IM_COL32(255, 255, 255, 255), "Sij"); }, 64, 32);
  int lit = 0;
  for (int y = 0; y < image.height; ++y)
    for (int x = 0; x < image.width; ++x) lit += Channel(image.at(x, y), IM_COL32_G_SHIFT) > 128;
  EXPECT_GT(lit, 20);
  EXPECT_EQ(image.at(60, 30), IM_COL32(0, 0, 0, 255));
}

TEST(Png, RoundTripsAndFailsCleanly) {
  RgbaImage image;
  image.Resize(5, 3, IM_COL32(10, 20, 30, 255));
  image.at(4, 2) = IM_COL32(200, 100, 50, 255);
  const std::string path = (std::filesystem::temp_directory_path() / "flashviz_raster_test.png").string();
  std::string error;
  ASSERT_TRUE(WritePng(image, path, &error)) << error;
  int w = 0, h = 0, n = 0;
  unsigned char* pixels = stbi_load(path.c_str(), &w, &h, &n, 4);
  ASSERT_NE(pixels, nullptr);
  EXPECT_EQ(w, 5);
  EXPECT_EQ(h, 3);
  const unsigned char* last = pixels + 4 * (2 * 5 + 4);
  EXPECT_EQ(last[0], 200);
  EXPECT_EQ(last[1], 100);
  EXPECT_EQ(last[2], 50);
  stbi_image_free(pixels);
  std::filesystem::remove(path);

  const std::string bad = "/nonexistent-dir/flashviz.png";
  EXPECT_FALSE(WritePng(image, bad, &error));
  EXPECT_NE(error.find("/nonexistent-dir/flashviz.png"), std::string::npos);
  EXPECT_FALSE(std::filesystem::exists(bad + ".tmp"));
}

// The PNG writer once used a fixed "PATH.tmp": an existing file of that name was deleted, and a symbolic link of
// that name was written through. Screenshots now go through kernels/common/files.h like every output.
TEST(Png, NeverTouchesAFileNamedLikeItsTemporary) {
  namespace fs = std::filesystem;
  const fs::path dir = fs::temp_directory_path() / "flashviz_raster_tmp_test";
  fs::remove_all(dir);
  fs::create_directories(dir);
  const std::string path = (dir / "s.png").string();
  { std::ofstream(dir / "victim") << "untouched"; }
  fs::create_symlink("victim", path + ".tmp");
  { std::ofstream(dir / "v.png.tmp") << "someone's file"; }
  RgbaImage image;
  image.Resize(4, 4, IM_COL32(1, 2, 3, 255));
  std::string error;
  ASSERT_TRUE(WritePng(image, path, &error)) << error;
  ASSERT_TRUE(WritePng(image, (dir / "v.png").string(), &error)) << error;
  const auto read = [](const fs::path& p) {
    std::ifstream in(p);
    return std::string(std::istreambuf_iterator<char>(in), {});
  };
  EXPECT_EQ(read(dir / "victim"), "untouched");
  EXPECT_EQ(read(dir / "v.png.tmp"), "someone's file");
  EXPECT_TRUE(fs::is_symlink(path + ".tmp"));
  int files = 0;
  for ([[maybe_unused]] const auto& entry : fs::directory_iterator(dir)) ++files;
  EXPECT_EQ(files, 5) << "s.png, v.png, the link, its target and v.png.tmp; no temporary file";
  fs::remove_all(dir);
}

TEST(Png, RenderToPngDrawsWithoutAnyGlContext) {
  const std::string path = (std::filesystem::temp_directory_path() / "flashviz_render_test.png").string();
  std::string error;
  ASSERT_TRUE(RenderToPng(
      200, 100,
      [] { ImGui::GetWindowDrawList()->AddRectFilled(ImVec2(0, 0), ImVec2(50, 50), IM_COL32(255, 0, 255, 255)); }, path,
      &error))
      << error;
  int w = 0, h = 0, n = 0;
  unsigned char* pixels = stbi_load(path.c_str(), &w, &h, &n, 4);
  ASSERT_NE(pixels, nullptr);
  EXPECT_EQ(w, 200);
  EXPECT_EQ(h, 100);
  EXPECT_EQ(pixels[4 * (10 * 200 + 10)], 255);      // inside the magenta square: red
  EXPECT_EQ(pixels[4 * (10 * 200 + 10) + 1], 0);    // and no green
  stbi_image_free(pixels);
  std::filesystem::remove(path);
  EXPECT_EQ(ImGui::GetCurrentContext(), nullptr);  // the caller's (absent) context is restored
  EXPECT_FALSE(RenderToPng(0, 10, [] {}, path, &error));
}

}  // namespace
}  // namespace flashviz
