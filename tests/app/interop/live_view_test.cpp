// The live GPU view rendered headless: with the "gpu" tab up, a frame runs the instrumented kernel
// on the step view's tiles and the registry's naive kernel, draws O, |O − O_ref|, S and P through CUDA-GL
// interop (GL on the NVIDIA GPU) or the host copy (any other GL), and the cross-check agrees with the model.
// Skipped without a CUDA device or without any GL context.
#include <gtest/gtest.h>

#include <set>

#include "app/gui/gui_app.h"
#include "kernels/cuda/probe/tile_probe.h"

namespace flashviz {
namespace {

GuiOptions LiveViewOptions(const char* order, bool causal, const char* pass = "forward") {
  GuiOptions o;
  o.problem.n = 200;
  o.problem.d = 32;
  o.problem.br = 16;
  o.problem.bc = 48;
  o.problem.order = order;
  o.problem.causal = causal;
  o.problem.pass = pass;
  o.problem.seed = 3;
  o.problem_given = true;
  o.panel = "gpu";
  o.width = 1600;
  o.height = 900;
  return o;
}

TEST(LiveGpuView, HeadlessFrameDrawsTheKernelsAndTheCrossCheckAgrees) {
  if (const std::string why = cuda::CudaDeviceUnavailableReason(); !why.empty()) GTEST_SKIP() << why;
  for (const char* order : {"kv", "q"}) {
    for (bool causal : {false, true}) {
      OffscreenFrame frame;
      try {
        frame = RenderOffscreenFrame(LiveViewOptions(order, causal), GlBackend::kAuto);
      } catch (const InputError& e) {
        // Only a missing GL context is a reason to skip; any other error is a failure.
        if (std::string(e.what()).starts_with("no offscreen OpenGL context")) GTEST_SKIP() << e.what();
        FAIL() << e.what();
      }
      SCOPED_TRACE(std::string("order ") + order + (causal ? ", causal" : "") + ", " + frame.renderer);
      EXPECT_NE(frame.live_gpu.find("agrees with the model"), std::string::npos) << frame.live_gpu;
      const bool gl_on_nvidia = frame.renderer.find("NVIDIA") != std::string::npos;
      EXPECT_NE(frame.live_gpu.find(gl_on_nvidia ? "CUDA-GL interop" : "copied through the host"), std::string::npos)
          << frame.live_gpu;
      // Four colour-mapped images make a frame of many colours; an empty tab has few.
      std::set<ImU32> colours(frame.image.pixels.begin(), frame.image.pixels.end());
      EXPECT_GT(colours.size(), 400u);
    }
  }
}

// The backward pass: the instrumented flash2_bwd's dK_j, dV_j agree with the model's, and flash2_bwd's dQ, its error,
// dK and dV are drawn.
TEST(LiveGpuView, TheBackwardPassRunsItsKernelsAndItsCrossCheckAgrees) {
  if (const std::string why = cuda::CudaDeviceUnavailableReason(); !why.empty()) GTEST_SKIP() << why;
  for (bool causal : {false, true}) {
    GuiOptions options = LiveViewOptions("kv", causal, "backward");
    options.step = 300;  // inside a tile pair of the second K/V tile, so the table has rows
    OffscreenFrame frame;
    try {
      frame = RenderOffscreenFrame(options, GlBackend::kAuto);
    } catch (const InputError& e) {
      if (std::string(e.what()).starts_with("no offscreen OpenGL context")) GTEST_SKIP() << e.what();
      FAIL() << e.what();
    }
    SCOPED_TRACE(std::string("backward") + (causal ? ", causal" : "") + ", " + frame.renderer);
    EXPECT_NE(frame.live_gpu.find("flash2_bwd (instrumented): agrees with the model"), std::string::npos)
        << frame.live_gpu;
    std::set<ImU32> colours(frame.image.pixels.begin(), frame.image.pixels.end());
    EXPECT_GT(colours.size(), 400u);
  }
}

}  // namespace
}  // namespace flashviz
