// The benchmark's data (kernels/cuda/bench_results.h): the sweep's points and the CSV that `flashviz bench`,
// scripts/peers.py and the GUI share. Plain C++: every build.
#include "kernels/cuda/bench_results.h"

#include <gtest/gtest.h>

#include <cmath>
#include <string>

#include "kernels/cpu/problem.h"

namespace flashviz::cuda {
namespace {

TEST(BenchResults, AutoHeadsFollowsPeersShapes) {
  EXPECT_EQ(AutoHeads(512), 1024);
  EXPECT_EQ(AutoHeads(2048), 1024);
  EXPECT_EQ(AutoHeads(4096), 256);
  EXPECT_EQ(AutoHeads(8192), 64);
  EXPECT_EQ(AutoHeads(16384), 16);
  EXPECT_EQ(AutoHeads(1 << 20), 1);
}

TEST(BenchResults, SweepPointsAreNOuterKernelsInner) {
  SweepSpec spec;
  spec.kernels = {"naive", "flash2_warp"};
  spec.n_values = {1024, 16384};
  spec.d = 64;
  const std::vector<SweepPoint> points = SweepPoints(spec);
  ASSERT_EQ(points.size(), 4u);
  EXPECT_STREQ(points[0].variant->id, "naive");
  EXPECT_STREQ(points[1].variant->id, "flash2_warp");
  EXPECT_EQ(points[0].shape.Heads(), 1024);  // B = 64, H = 16
  EXPECT_EQ(points[2].shape.n, 16384);
  EXPECT_EQ(points[2].shape.batch, 1);
  EXPECT_FLOAT_EQ(points[0].shape.scale, 0.125f);
  spec.batch = 3;
  spec.heads = 5;
  EXPECT_EQ(SweepPoints(spec)[3].shape.Heads(), 15);
}

TEST(BenchResults, SweepPointsRejectWhatCannotRun) {
  SweepSpec spec;
  spec.kernels = {"flash3"};
  spec.n_values = {1024};
  try {
    SweepPoints(spec);
    FAIL() << "unknown kernel accepted";
  } catch (const InputError& e) {
    EXPECT_EQ(std::string(e.what()).rfind("unknown kernel 'flash3' (known: naive, tiled,", 0), 0u) << e.what();
  }
  spec.kernels = {"naive"};
  spec.repeats = 5;
  EXPECT_THROW(SweepPoints(spec), InputError);  // medians of fewer than 20 are not reported
  spec.repeats = 20;
  spec.n_values = {0};
  EXPECT_THROW(SweepPoints(spec), InputError);
  spec.n_values = {};
  EXPECT_THROW(SweepPoints(spec), InputError);
}

TEST(BenchResults, CsvRoundTrip) {
  BenchRow ok;
  ok.kernel = "flash2_warp";
  ok.dtype = "fp32";
  ok.batch = 4;
  ok.heads = 16;
  ok.n = 4096;
  ok.d = 64;
  ok.ms_median = 7.671;
  ok.ms_min = 7.6688;
  ok.tflops = 35.83;
  ok.max_abs_error = 7.1e-8;
  ok.hbm_bytes = 2.68435e8;
  ok.gpu = "NVIDIA H200";
  ok.status = "ok";
  BenchRow skipped = ok;
  skipped.kernel = "flash2_wmma";
  skipped.causal = true;
  skipped.ms_median = skipped.ms_min = skipped.tflops = skipped.max_abs_error = NAN;
  skipped.status = "not applicable: fp32: flash2_wmma runs fp16, bf16 only";  // a comma: quoted
  const std::string text = BenchCsvHeader() + BenchCsvLine(ok) + BenchCsvLine(skipped);
  EXPECT_EQ(BenchCsvHeader(),
            "kernel,dtype,B,H,N,d,causal,ms_median,ms_min,tflops,max_abs_error,hbm_bytes,gpu,status\n");
  EXPECT_NE(text.find("\"not applicable: fp32: flash2_wmma runs fp16, bf16 only\""), std::string::npos);
  const std::vector<BenchRow> rows = ParseBenchCsv(text, "t.csv");
  ASSERT_EQ(rows.size(), 2u);
  EXPECT_EQ(rows[0].kernel, "flash2_warp");
  EXPECT_DOUBLE_EQ(rows[0].ms_median, 7.671);
  EXPECT_TRUE(rows[0].Ok());
  EXPECT_EQ(rows[1].status, skipped.status);
  EXPECT_TRUE(rows[1].causal);
  EXPECT_TRUE(std::isnan(rows[1].ms_median));
  EXPECT_FALSE(rows[1].Ok());
}

TEST(BenchResults, CsvErrorsNameTheLine) {
  const auto message = [](const std::string& text) {
    try {
      ParseBenchCsv(text, "x.csv");
    } catch (const InputError& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  EXPECT_EQ(message(""), "x.csv: empty file");
  EXPECT_EQ(message("kernel,dtype,B,H,N,d\n"), "x.csv: the header has no 'ms_median' column");
  EXPECT_EQ(message("kernel,dtype,B,H,N,d,ms_median\nnaive,fp32,1,1,abc,64,1.0\n"),
            "x.csv: line 2: N = 'abc' is not a count");
  EXPECT_EQ(message("kernel,dtype,B,H,N,d,ms_median\nnaive,fp32,1,1,64,64,fast\n"),
            "x.csv: line 2: ms_median = 'fast' is not a non-negative number");
  // A time is measured or absent: negative or infinite times are refused, and a row marked ok must have one.
  EXPECT_EQ(message("kernel,dtype,B,H,N,d,ms_median\nnaive,fp32,1,1,64,64,-2\n"),
            "x.csv: line 2: ms_median = '-2' is not a non-negative number");
  EXPECT_EQ(message("kernel,dtype,B,H,N,d,ms_median\nnaive,fp32,1,1,64,64,inf\n"),
            "x.csv: line 2: ms_median = 'inf' is not a non-negative number");
  EXPECT_EQ(message("kernel,dtype,B,H,N,d,ms_median,status\nnaive,fp32,1,1,64,64,nan,ok\n"),
            "x.csv: line 2: naive is marked ok but has no positive ms_median");
  EXPECT_EQ(ParseBenchCsv("kernel,dtype,B,H,N,d,ms_median\nnaive,fp32,1,1,64,64,nan\n", "x.csv").at(0).status, "")
      << "an unmeasured row (NaN, as our CSV writes it) is read, not plotted";
  EXPECT_EQ(message("kernel,dtype,B,H,N,d,ms_median\n\"naive,fp32,1,1,64,64,1\n"), "x.csv: line 2: unterminated quote");
  // Columns in another order, extra ones ignored, no status column: a row with a time is taken as measured.
  const auto rows = ParseBenchCsv("N,extra,kernel,d,dtype,H,B,ms_median\n1024,?,torch_math,64,fp16,16,64,16.75\n", "p");
  ASSERT_EQ(rows.size(), 1u);
  EXPECT_EQ(rows[0].n, 1024);
  EXPECT_TRUE(rows[0].Ok());
}

}  // namespace
}  // namespace flashviz::cuda
