// The benchmark's plot (viz/bench_plot.h, shared by the GUI panel and `flashviz bench --png`) and the benchmark
// panel drawn headless, with no GPU needed.
#include <gtest/gtest.h>
#include <stb_image.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <chrono>
#include <string>
#include <thread>

#include "tests/viz/headless.h"
#include "viz/bench_plot.h"
#include "viz/embedded_files.h"
#include "viz/panels/benchmark_panel.h"
#include "viz/panels/panels.h"

namespace flashviz {
namespace {

cuda::BenchRow Row(const std::string& kernel, const std::string& dtype, int n, int d, double ms,
                   const std::string& status = "ok") {
  cuda::BenchRow row;
  row.kernel = kernel;
  row.dtype = dtype;
  row.batch = 1;
  row.heads = 16;
  row.n = n;
  row.d = d;
  row.ms_median = ms;
  row.tflops = 4.0 * 16 * n * static_cast<double>(n) * d / (ms * 1e-3) * 1e-12;
  row.status = status;
  return row;
}

TEST(BenchPlot, OneSeriesPerKernelSortedByNPeersDashed) {
  const std::vector<cuda::BenchRow> rows = {
      Row("flash2_warp", "fp32", 4096, 64, 7.7), Row("flash2_warp", "fp32", 1024, 64, 0.5),
      Row("naive", "fp32", 1024, 64, 20.6),       Row("torch_math", "fp32", 1024, 64, 0.9),
      Row("flash2_wmma", "fp32", 1024, 64, NAN, "not applicable: fp32: flash2_wmma runs fp16, bf16 only"),
  };
  const PlotSpec spec = BenchPlotSpec(rows, {"t", false});
  ASSERT_EQ(spec.series.size(), 3u);  // the not-applicable row draws nothing
  EXPECT_EQ(spec.series[0].label, "flash2_warp");  // one dtype and one d: the kernel names alone
  EXPECT_EQ(spec.series[0].x, (std::vector<double>{1024, 4096}));
  EXPECT_EQ(spec.series[0].y, (std::vector<double>{0.5, 7.7}));
  EXPECT_FALSE(spec.series[0].dashed);
  EXPECT_TRUE(spec.series[2].dashed);  // torch_math
  EXPECT_TRUE(spec.x.log && spec.y.log);
  EXPECT_NE(spec.series[0].color, spec.series[1].color);
}

TEST(BenchPlot, LabelsSayWhatDiffers) {
  const std::vector<cuda::BenchRow> rows = {Row("math", "fp32", 1024, 64, 12.8), Row("math", "fp16", 1024, 128, 7.1)};
  const PlotSpec spec = BenchPlotSpec(rows, {"t", true});
  ASSERT_EQ(spec.series.size(), 2u);
  EXPECT_EQ(spec.series[0].label, "math fp32 d=64");
  EXPECT_EQ(spec.series[1].label, "math fp16 d=128");
  EXPECT_NE(spec.series[0].color, spec.series[1].color);  // the kernel's hue, in another shade
  EXPECT_EQ(spec.y.label, "TFLOP/s");
}

TEST(BenchPlot, RendersAPngWithoutGl) {
  const std::string path = (std::filesystem::temp_directory_path() / "flashviz_bench_plot_test.png").string();
  std::string error;
  const std::vector<cuda::BenchRow> rows = {Row("naive", "fp32", 512, 64, 83.7), Row("naive", "fp32", 1024, 64, 331.7),
                                            Row("flash2_warp", "fp32", 512, 64, 1.94),
                                            Row("flash2_warp", "fp32", 1024, 64, 7.55)};
  ASSERT_TRUE(RenderBenchPng(rows, {"Runtime against N", false}, path, &error, 640, 400)) << error;
  int w = 0, h = 0, channels = 0;
  unsigned char* pixels = stbi_load(path.c_str(), &w, &h, &channels, 4);
  ASSERT_NE(pixels, nullptr);
  EXPECT_EQ(w, 640);
  EXPECT_EQ(h, 400);
  // The first series' colour (230, 75, 60) appears: the line was drawn, not only the axes.
  int coloured = 0;
  for (int i = 0; i < w * h; ++i)
    coloured += std::abs(pixels[4 * i] - 230) < 20 && std::abs(pixels[4 * i + 1] - 75) < 20 &&
                std::abs(pixels[4 * i + 2] - 60) < 20;
  EXPECT_GT(coloured, 50);
  stbi_image_free(pixels);
  std::filesystem::remove(path);
  EXPECT_FALSE(RenderBenchPng(rows, {}, "/nonexistent-dir/x.png", &error, 64, 64));
  EXPECT_FALSE(error.empty());
}

TEST(BenchmarkPanel, DrawsManyFramesWithoutAGpuOrData) {
  // The panel must draw (and say why sweeps are off) with no device and no CSV; sizes down to nothing.
  testing::HeadlessImGui imgui(ImVec2(1280, 720));
  Model model;
  UiState ui;
  BenchmarkState(ui).peers_path = "/nonexistent/peers.csv";
  for (const ImVec2 size : {ImVec2(1200, 700), ImVec2(300, 200), ImVec2(40, 30)})
    for (int frame = 0; frame < 20; ++frame) {
      ImGui::NewFrame();
      ImGui::SetNextWindowSize(size);
      ImGui::Begin("benchmark");
      DrawBenchmarkPanel(model, ui);
      ImGui::End();
      ImGui::Render();
    }
  EXPECT_EQ(BenchmarkState(ui).d, 64);  // drawing alone changes nothing
}

// Without a GPU and from any working directory, the panel starts with the measurements that ship inside the
// binary (its default paths used to be relative to the repository root, so it only worked started there).
TEST(BenchmarkPanel, StartsWithTheShippedMeasurementsFromAnyDirectory) {
  ASSERT_EQ(EmbeddedSampleResults().size(), 5u);
  for (const EmbeddedFile& file : EmbeddedSampleResults())
    EXPECT_GE(cuda::ParseBenchCsv(file.text, std::string(file.name)).size(), 3u) << file.name;
  const std::filesystem::path before = std::filesystem::current_path();
  std::filesystem::current_path(std::filesystem::temp_directory_path());
  testing::HeadlessImGui imgui(ImVec2(1280, 720));
  Model model;
  UiState ui;
  ImGui::NewFrame();
  ImGui::SetNextWindowSize(ImVec2(1200, 700));
  ImGui::Begin("benchmark");
  DrawBenchmarkPanel(model, ui);
  ImGui::End();
  ImGui::Render();
  std::filesystem::current_path(before);
  EXPECT_NE(BenchmarkState(ui).message.find("shipped"), std::string::npos) << BenchmarkState(ui).message;
  EXPECT_GT(CurrentBenchmarkProgress().measured, 0u);
}

// The backward pass: the switch lists the backward registry and puts its shipped measurements on the plot (ours:
// flash2_bwd_mma at d = 64; PyTorch's backward on each backend), and switching back restores the forward ones.
TEST(BenchmarkPanel, TheBackwardSwitchShowsTheBackwardMeasurements) {
  testing::HeadlessImGui imgui(ImVec2(1280, 720));
  Model model;
  UiState ui;
  const auto frame = [&] {
    ImGui::NewFrame();
    ImGui::SetNextWindowSize(ImVec2(1200, 700));
    ImGui::Begin("benchmark");
    DrawBenchmarkPanel(model, ui);
    ImGui::End();
    ImGui::Render();
  };
  frame();
  const std::size_t forward_rows = CurrentBenchmarkProgress().measured;
  BenchmarkState(ui).backward = true;
  frame();
  EXPECT_NE(BenchmarkState(ui).message.find("h100-backward"), std::string::npos) << BenchmarkState(ui).message;
  EXPECT_EQ(CurrentBenchmarkProgress().measured, 3u);  // flash2_bwd_mma at N = 1024, 4096, 16384, d = 64
  BenchmarkState(ui).backward = false;
  frame();
  EXPECT_EQ(CurrentBenchmarkProgress().measured, forward_rows);
}

TEST(BenchmarkPanel, ASweepRunsInTheBackgroundWhileFramesGoOn) {
  // Needs a GPU (SKIPPED without one): a tiny sweep through the panel's own request, frames drawn meanwhile.
  testing::HeadlessImGui imgui(ImVec2(1280, 720));
  Model model;
  UiState ui;
  BenchmarkState(ui).kernels = {{"naive", false}, {"tiled", false}, {"flash1", false}, {"flash2_row", false},
                          {"flash2_wmma", false}, {"math", false}, {"flash2_warp", true}};
  BenchmarkState(ui).n_min_log2 = 7;
  BenchmarkState(ui).n_max_log2 = 8;
  BenchmarkState(ui).auto_heads = false;
  BenchmarkState(ui).batch = 1;
  BenchmarkState(ui).heads = 2;
  BenchmarkState(ui).run_requested = true;
  const auto frame = [&] {
    ImGui::NewFrame();
    ImGui::SetNextWindowSize(ImVec2(1200, 700));
    ImGui::Begin("benchmark");
    DrawBenchmarkPanel(model, ui);
    ImGui::End();
    ImGui::Render();
  };
  frame();
  if (!CurrentBenchmarkProgress().running && CurrentBenchmarkProgress().total == 0)
    GTEST_SKIP() << "no sweep started: " << BenchmarkState(ui).message;
  int frames = 1;
  for (; CurrentBenchmarkProgress().running && frames < 6000; ++frames) {
    frame();  // the UI keeps drawing while the points are measured
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  frame();
  const BenchmarkProgress progress = CurrentBenchmarkProgress();
  EXPECT_FALSE(progress.running);
  EXPECT_EQ(progress.total, 2u);
  EXPECT_EQ(progress.done, 2u);
  EXPECT_EQ(progress.measured, 2u) << BenchmarkState(ui).message;
  EXPECT_LT(frames, 6000) << "the sweep did not finish";
}

}  // namespace
}  // namespace flashviz
