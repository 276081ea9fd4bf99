// flashviz gen --b B --n N --d D [--seed S] --out INPUT [--ref OUTPUT] [--dout DOUT]
#include <CLI/CLI.hpp>
#include <cmath>
#include <cstdio>
#include <memory>

#include "app/cli/commands.h"
#include "app/cli/problem_options.h"
#include "app/io/hw4_file.h"
#include "kernels/common/files.h"
#include "kernels/common/format.h"
#include "kernels/common/random.h"
#include "kernels/cpu/reference.h"
#include "kernels/cpu/stepper.h"

namespace flashviz {
namespace {

struct GenOptions {
  int b = 0, n = 0, d = 0;
  std::uint64_t seed = 0;
  std::string out, ref, dout;
};

int RunGen(const GenOptions& o) {
  if (o.b < 1 || o.n < 1 || o.d < 1)
    throw UsageError(Sprintf("--b %d --n %d --d %d: B, N and d must be positive", o.b, o.n, o.d));
  if (o.n > kMaxSequenceLength || o.d > kMaxHeadDim)
    throw UsageError(Sprintf("N ≤ %d and d ≤ %d, please", kMaxSequenceLength, kMaxHeadDim));
  const double floats = 3.0 * o.b * o.n * o.d;
  if (floats * 4 > 64.0 * (1ull << 30))
    throw UsageError(Sprintf("B·N·d = %.0f: the file would exceed 64 GiB", floats / 3));
  CommandFiles files;  // --out and --ref may not be one file, and land together
  OutputFile& input_file = files.AddOutput(o.out);
  OutputFile* ref_file = o.ref.empty() ? nullptr : &files.AddOutput(o.ref);
  OutputFile* dout_file = o.dout.empty() ? nullptr : &files.AddOutput(o.dout);

  Hw4Input in;
  in.b = o.b;
  in.n = o.n;
  in.d = o.d;
  in.qkv.resize(static_cast<std::size_t>(floats));
  FillUniform(in.qkv, o.seed, -3.0f, 3.0f);
  const std::vector<std::uint8_t> bytes = SerializeHw4(in);
  input_file.Write(bytes.data(), bytes.size());

  if (dout_file) {
    // One upstream gradient per batch, B·N·d values (`trace --pass backward --input F --dout D --batch K`).
    const std::vector<float> dout = MakeRandomUpstreamGradient(std::int64_t{o.b} * o.n, o.d, o.seed);
    dout_file->Write(dout.data(), dout.size() * sizeof(float));
  }
  if (ref_file) {
    std::fprintf(stderr, "computing the float64 reference (%d × N = %d, d = %d)...\n", o.b, o.n, o.d);
    const std::vector<double> ref =
        ReferenceAttentionBatched(in.qkv.data(), o.b, o.n, o.d, 1.0 / std::sqrt(static_cast<double>(o.d)), false);
    const std::vector<float> ref32(ref.begin(), ref.end());
    ref_file->Write(ref32.data(), ref32.size() * sizeof(float));
  }
  files.Commit();
  return 0;
}

}  // namespace

void AddGenCommand(CLI::App& app, CommandList& commands) {
  auto options = std::make_shared<GenOptions>();
  CLI::App* cmd = app.add_subcommand("gen", "Generate an HW4 input file (values uniform in [-3, 3])");
  cmd->add_option("--b", options->b, "batch size B")->required();
  cmd->add_option("--n", options->n, "sequence length N")->required();
  cmd->add_option("--d", options->d, "head dimension d")->required();
  AddSeedOption(*cmd, options->seed, "random seed (default 0)");
  cmd->add_option("--out", options->out, "the HW4 input file to write")->required();
  cmd->add_option("--ref", options->ref, "also write the float64 reference output (as float32), scale 1/sqrt(d)");
  cmd->add_option("--dout", options->dout,
                  "also write an upstream gradient dO for the backward pass: B·N·d float32, uniform in [-1, 1]");
  commands.push_back({cmd, [options] { return RunGen(*options); }});
}

}  // namespace flashviz
