// flashviz trace [problem options] --out FILE.jsonl [--o-out O.bin] [--summary]
#include <CLI/CLI.hpp>
#include <cstdio>
#include <memory>

#include "app/cli/commands.h"
#include "app/cli/problem_options.h"
#include "app/io/atomic_file.h"
#include "app/io/hw4_file.h"
#include "app/io/trace_writer.h"

namespace flashviz {
namespace {

struct TraceCommandOptions {
  ProblemOptions problem;
  std::string out;
  std::string o_out;
  bool summary = false;
};

int RunTrace(const TraceCommandOptions& o) {
  if (o.out.empty() && o.o_out.empty() && !o.summary)
    throw InputError("trace needs --out FILE.jsonl, --o-out FILE or --summary");
  const bool needs_numbers = !o.out.empty() || !o.o_out.empty();
  const LoadedProblem loaded = LoadProblem(o.problem, needs_numbers);
  const Stepper stepper(loaded.problem, loaded.inputs.get());
  // Open the outputs first: an unwritable path is reported before the work, and nothing partial is left.
  std::unique_ptr<AtomicFileWriter> trace_file, o_file;
  if (!o.out.empty()) trace_file = std::make_unique<AtomicFileWriter>(o.out);
  if (!o.o_out.empty()) o_file = std::make_unique<AtomicFileWriter>(o.o_out);

  std::vector<double> output;
  if (trace_file) {
    TraceOptions options{o.problem.seed, o.problem.input, o.problem.batch};
    output = WriteTrace(stepper, options, trace_file->stream());
  } else if (o_file) {
    output = stepper.Replay([](const StepView&) { return true; });
  }
  if (o_file) {
    const std::vector<float> o32(output.begin(), output.end());
    o_file->Write(o32.data(), o32.size() * sizeof(float));
  }
  // Commit both only once everything is computed.
  if (trace_file) trace_file->Commit();
  if (o_file) o_file->Commit();
  if (o.summary) {
    const Ledger flash = stepper.FinalLedger();
    std::fputs(TraceSummary(loaded.problem, flash, StandardAttentionLedger(loaded.problem.n, loaded.problem.d)).c_str(),
               stdout);
  }
  return 0;
}

}  // namespace

void AddTraceCommand(CLI::App& app, CommandList& commands) {
  auto options = std::make_shared<TraceCommandOptions>();
  CLI::App* cmd = app.add_subcommand("trace", "Write the stepper's state after every phase as JSON Lines");
  AddProblemOptions(*cmd, options->problem);
  cmd->add_option("--out", options->out, "the trace, one JSON object per step (first line: the config)");
  cmd->add_option("--o-out", options->o_out, "the final O as raw float32 (N·d values)");
  cmd->add_flag("--summary", options->summary, "print the HBM/SRAM totals (flash and standard attention)");
  commands.push_back({cmd, [options] { return RunTrace(*options); }});
}

}  // namespace flashviz
