// flashviz trace [problem options] --out FILE.jsonl [--o-out O.bin] [--summary]
// flashviz trace --pass backward [--dout dO.bin] [--out FILE.jsonl] [--grads-out GRADS.bin] [--summary]
// flashviz trace --decode [decode options] [--out FILE.jsonl] [--o-out O.bin] [--inputs-out QKV.bin] [--summary]
// flashviz trace --ring P [--zigzag] [problem options] [--out FILE.jsonl] [--o-out O.bin] [--inputs-out QKV.bin]
//                [--summary]
#include <CLI/CLI.hpp>
#include <cstdio>
#include <memory>

#include "app/cli/commands.h"
#include "app/cli/problem_options.h"
#include "app/cli/progress.h"
#include "app/io/decode_trace.h"
#include "app/io/hw4_file.h"
#include "app/io/ring_trace.h"
#include "app/io/trace_writer.h"
#include "kernels/common/files.h"
#include "kernels/common/format.h"
#ifdef FLASHVIZ_HAVE_CUDA
#include "kernels/cuda/probe/backward_probe.h"
#include "kernels/cuda/probe/cross_check.h"
#endif

namespace flashviz {
namespace {

struct TraceCommandOptions {
  ProblemOptions problem;
  std::string out;
  std::string o_out;
  std::string grads_out;
  std::string inputs_out;
  bool summary = false;
  bool gpu = false;
  int probe_tile = 0, probe_row = 0;
};

// What --gpu adds to the trace: the device in the config line, the GPU's m_i and ℓ_i next to the model's at
// the end of every tile iteration, and the comparison on the done line.
struct GpuTraceFields {
  Json config = Json::object();
  TraceExtraFields per_step;
  std::string verdict;  // one line for stderr
  bool agrees = true;
};

#ifdef FLASHVIZ_HAVE_CUDA
// The backward pass: the instrumented flash2_bwd records dK_j and dV_j after every tile iteration; each grad_k line
// (the end of a tile iteration) gets their difference from the model's, the done line the verdict.
GpuTraceFields RunBackwardOnGpu(const Stepper& stepper) {
  const AttentionProblem& p = stepper.problem();
  auto result = std::make_shared<cuda::BackwardProbeResult>(
      cuda::RunBackwardProbe(p, *stepper.inputs(), *stepper.saved()));
  auto check = std::make_shared<cuda::BackwardCrossCheck>(cuda::CompareBackwardWithModel(stepper, *result));
  GpuTraceFields fields;
  fields.config = {
      {"gpu",
       {{"device", cuda::CudaDeviceDescription()}, {"kernel", result->kernel}, {"kernel_ms", result->kernel_ms}}}};
  fields.per_step = [result, check, p](const StepView& view) {
    const StepInfo& info = view.info();
    if (info.phase == Phase::kDone)
      return Json{{"gpu_max_dk_error", check->max_dk_error},
                  {"gpu_max_dv_error", check->max_dv_error},
                  {"gpu_max_grad_error", check->max_grad_error},
                  {"gpu_agrees", check->agrees}};
    if (info.phase != Phase::kGradK) return Json(nullptr);
    return Json{{"gpu_dk_error", cuda::BackwardTileError(p, *result, view.grad().dk, true, info.i, info.j)},
                {"gpu_dv_error", cuda::BackwardTileError(p, *result, view.grad().dv, false, info.i, info.j)}};
  };
  fields.verdict = check->summary;
  fields.agrees = check->agrees;
  return fields;
}
#endif

GpuTraceFields RunOnGpu([[maybe_unused]] const Stepper& stepper, [[maybe_unused]] const TraceCommandOptions& o) {
#ifndef FLASHVIZ_HAVE_CUDA
  throw InputError("--gpu: this flashviz was built without CUDA");
#else
  if (stepper.problem().backward()) return RunBackwardOnGpu(stepper);
  const AttentionProblem& p = stepper.problem();
  auto result = std::make_shared<cuda::TileProbeResult>(
      cuda::RunTileProbe(p, *stepper.inputs(), o.probe_tile, o.probe_row));
  auto check = std::make_shared<cuda::CrossCheck>(cuda::CompareWithModel(stepper, *result));
  GpuTraceFields fields;
  fields.config = {
      {"gpu",
       {{"device", cuda::CudaDeviceDescription()}, {"kernel", result->kernel}, {"kernel_ms", result->kernel_ms}}}};
  const Phase iteration_end = TileIterationPhases(p).back();
  fields.per_step = [result, check, iteration_end, p](const StepView& view) {
    const StepInfo& info = view.info();
    if (info.phase == Phase::kDone)
      return Json{{"gpu_max_m_error", check->max_m_error},
                  {"gpu_max_l_rel_error", check->max_l_rel_error},
                  {"gpu_max_o_error", check->max_o_error},
                  {"gpu_agrees", check->agrees}};
    if (info.phase != iteration_end) return Json(nullptr);
    std::vector<double> m, l;
    for (int r = 0; r < p.RowsInTile(info.i); ++r) {
      m.push_back(result->m(info.i, info.j, r));
      l.push_back(result->l(info.i, info.j, r));
    }
    return Json{{"gpu_m", JsonNumbers(m)}, {"gpu_l", JsonNumbers(l)}};
  };
  fields.verdict = check->summary;
  fields.agrees = check->agrees;
  return fields;
#endif
}

// What a trace of this problem would take on disk, judged from its first lines: refused up front when the
// output's file system has clearly less room (rather than failing after minutes of work), announced when large.
class TraceSizeCheck {
 public:
  TraceSizeCheck(const OutputFile& out, std::int64_t steps) : out_(out), steps_(steps) {}

  void Line(std::int64_t step) {
    if (checked_ || (step + 1 < kSample && step + 1 < steps_)) return;
    checked_ = true;
    const double per_step = static_cast<double>(out_.bytes_written()) / static_cast<double>(step + 2);
    const double estimate = per_step * static_cast<double>(steps_ + 1);
    const std::int64_t room = out_.AvailableBytes();
    if (room >= 0 && estimate > 1.1 * static_cast<double>(room) + static_cast<double>(out_.bytes_written()))
      throw InputError(
          Sprintf("%s: the trace of %lld steps takes about %s, and its file system has %s free "
                  "(--summary counts without writing a trace)",
                  out_.path().c_str(), static_cast<long long>(steps_), HumanBytes(estimate).c_str(),
                  HumanBytes(static_cast<double>(room)).c_str()));
    if (room >= 0 && estimate > 256.0 * (1 << 20))  // a file that grows large (not a device or a pipe)
      std::fprintf(stderr, "trace: %lld steps, about %s of JSON to %s\n", static_cast<long long>(steps_),
                   HumanBytes(estimate).c_str(), out_.path().c_str());
  }

 private:
  static constexpr std::int64_t kSample = 2000;
  const OutputFile& out_;
  std::int64_t steps_;
  bool checked_ = false;
};

// --decode: the decode stepper's walk (kernels/cpu/decode.h).
int RunDecodeTrace(const TraceCommandOptions& o) {
  if (o.out.empty() && o.o_out.empty() && o.inputs_out.empty() && !o.summary)
    throw UsageError("trace --decode needs --out FILE.jsonl, --o-out FILE, --inputs-out FILE or --summary");
  if (!o.grads_out.empty()) throw UsageError("--grads-out writes the backward pass's gradients: not with --decode");
  if (o.gpu) throw UsageError("--gpu is not available with --decode (flashviz bench --decode runs the decode kernels)");
  const bool needs_numbers = !o.out.empty() || !o.o_out.empty() || !o.inputs_out.empty();
  const LoadedDecodeProblem loaded = LoadDecodeProblem(o.problem, needs_numbers);
  const DecodeStepper stepper(loaded.problem, loaded.inputs.get());
  CommandFiles files;
  OutputFile* trace_file = o.out.empty() ? nullptr : &files.AddOutput(o.out);
  OutputFile* o_file = o.o_out.empty() ? nullptr : &files.AddOutput(o.o_out);
  OutputFile* inputs_file = o.inputs_out.empty() ? nullptr : &files.AddOutput(o.inputs_out);
  std::vector<double> output;
  Ledger flash;
  {
    ProgressLine progress("trace", "steps", stepper.step_count());
    std::unique_ptr<TraceSizeCheck> size_check;
    if (trace_file) size_check = std::make_unique<TraceSizeCheck>(*trace_file, stepper.step_count());
    const auto write_line = [&](std::string_view line, std::int64_t step) {
      if (step >= 0) progress.Update(step + 1);
      if (!trace_file) return;
      trace_file->Write(line);
      size_check->Line(step);
    };
    if (trace_file) {
      output = WriteDecodeTrace(stepper, o.problem.seed, write_line);
      flash = stepper.FinalLedger();
    } else if (o_file) {
      output = stepper.Walk([&](const DecodeState& state) {
        progress.Update(state.info.step + 1);
        return true;
      });
      flash = stepper.FinalLedger();
    } else {
      flash = stepper.FinalLedger();  // count-only
    }
    progress.Finish();
  }
  if (o_file) {
    const std::vector<float> o32(output.begin(), output.end());
    o_file->Write(o32.data(), o32.size() * sizeof(float));
  }
  if (inputs_file) {  // Q (H·R·d), then K and V (G·N·d each): everything needed to recompute O independently
    for (const std::vector<float>* tensor : {&loaded.inputs->q, &loaded.inputs->k, &loaded.inputs->v})
      inputs_file->Write(tensor->data(), tensor->size() * sizeof(float));
  }
  files.Commit();
  if (o.summary) std::fputs(DecodeTraceSummary(loaded.problem, flash).c_str(), stdout);
  return 0;
}

// --ring P: the ring stepper's walk (kernels/cpu/ring.h).
int RunRingTrace(const TraceCommandOptions& o) {
  if (o.out.empty() && o.o_out.empty() && o.inputs_out.empty() && !o.summary)
    throw UsageError("trace --ring needs --out FILE.jsonl, --o-out FILE, --inputs-out FILE or --summary");
  if (!o.grads_out.empty()) throw UsageError("--grads-out writes the backward pass's gradients: not with --ring");
  if (o.gpu) throw UsageError("--gpu is not available with --ring (flashviz bench --ring runs ring attention on GPUs)");
  const bool needs_numbers = !o.out.empty() || !o.o_out.empty() || !o.inputs_out.empty();
  const LoadedRingProblem loaded = LoadRingProblem(o.problem, needs_numbers);
  const RingStepper stepper(loaded.problem, loaded.inputs.get());
  CommandFiles files;
  if (!o.problem.input.empty()) files.AddInput(o.problem.input);
  OutputFile* trace_file = o.out.empty() ? nullptr : &files.AddOutput(o.out);
  OutputFile* o_file = o.o_out.empty() ? nullptr : &files.AddOutput(o.o_out);
  OutputFile* inputs_file = o.inputs_out.empty() ? nullptr : &files.AddOutput(o.inputs_out);
  std::vector<double> output;
  RingState final_state;
  {
    ProgressLine progress("trace", "steps", stepper.step_count());
    const auto keep_last = [&](const RingState& state) {
      progress.Update(state.info.step + 1);
      if (state.info.phase == RingPhase::kDone) final_state = state;
      return true;
    };
    if (trace_file) {
      TraceSizeCheck size_check(*trace_file, stepper.step_count());
      output = WriteRingTrace(
          stepper, o.problem.seed,
          [&](std::string_view line, std::int64_t step) {
            if (step >= 0) progress.Update(step + 1);
            trace_file->Write(line);
            size_check.Line(step);
          },
          &final_state);
    } else {
      output = stepper.Walk(keep_last);  // count-only when no numbers are asked for
    }
    progress.Finish();
  }
  if (o_file) {
    const std::vector<float> o32(output.begin(), output.end());
    o_file->Write(o32.data(), o32.size() * sizeof(float));
  }
  if (inputs_file) {  // Q, then K, then V (N·d each, row-major): everything needed to recompute O independently
    for (const std::vector<float>* tensor : {&loaded.inputs->q, &loaded.inputs->k, &loaded.inputs->v})
      inputs_file->Write(tensor->data(), tensor->size() * sizeof(float));
  }
  files.Commit();
  if (o.summary) std::fputs(RingTraceSummary(stepper, final_state).c_str(), stdout);
  return 0;
}

int RunTrace(const TraceCommandOptions& o) {
  if (o.problem.ring) return RunRingTrace(o);
  if (o.problem.decode) return RunDecodeTrace(o);
  if (!o.inputs_out.empty())
    throw UsageError("--inputs-out writes the Q, K, V of a decoding step or a ring: add --decode or --ring P");
  const bool backward = o.problem.pass == "backward";
  if (o.out.empty() && o.o_out.empty() && o.grads_out.empty() && !o.summary)
    throw UsageError(backward ? "trace needs --out FILE.jsonl, --grads-out FILE, --o-out FILE or --summary"
                              : "trace needs --out FILE.jsonl, --o-out FILE or --summary");
  if (!o.grads_out.empty() && !backward)
    throw UsageError("--grads-out writes the backward pass's dQ, dK, dV: add --pass backward");
  if (o.gpu && o.out.empty()) throw UsageError("--gpu writes the GPU's values into the trace: give --out FILE.jsonl");
  const bool needs_numbers = !o.out.empty() || !o.o_out.empty() || !o.grads_out.empty();
  const LoadedProblem loaded = LoadProblem(o.problem, needs_numbers);
  const Stepper stepper(loaded.problem, loaded.inputs.get());
  // Open the outputs first: an unwritable or aliased path is reported before the work, and nothing partial
  // is left. Both are committed together once everything is computed.
  CommandFiles files;
  if (!o.problem.input.empty()) files.AddInput(o.problem.input);
  OutputFile* trace_file = o.out.empty() ? nullptr : &files.AddOutput(o.out);
  OutputFile* o_file = o.o_out.empty() ? nullptr : &files.AddOutput(o.o_out);
  OutputFile* grads_file = o.grads_out.empty() ? nullptr : &files.AddOutput(o.grads_out);

  GpuTraceFields gpu;
  if (o.gpu) gpu = RunOnGpu(stepper, o);
  std::vector<double> output;
  Ledger flash;
  {
    ProgressLine progress("trace", "steps", stepper.step_count());
    if (trace_file) {
      TraceOptions options{o.problem.seed, o.problem.input, o.problem.batch};
      TraceSizeCheck size_check(*trace_file, stepper.step_count());
      const auto write_line = [&](std::string_view line, std::int64_t step) {
        trace_file->Write(line);  // a full disk stops the trace at once
        size_check.Line(step);
        progress.Update(step + 1);
      };
      const auto per_step = [&](const StepView& view) {
        if (view.info().phase == Phase::kDone) flash = view.ledger();
        return gpu.per_step ? gpu.per_step(view) : Json(nullptr);
      };
      output = WriteTrace(stepper, options, write_line, gpu.config, per_step);
    } else {
      // The O output and the summary from one walk; count-only when no O is asked for.
      output = stepper.Replay([&](const StepView& view) {
        progress.Update(view.info().step + 1);
        if (view.info().phase == Phase::kDone) flash = view.ledger();
        return true;
      });
    }
    progress.Finish();
  }
  // The backward pass's walk returns dQ, dK, dV; its O is the one the forward pass saved.
  const std::vector<double>& o_values = backward && stepper.saved() ? stepper.saved()->o : output;
  if (o_file) {
    const std::vector<float> o32(o_values.begin(), o_values.end());
    o_file->Write(o32.data(), o32.size() * sizeof(float));
  }
  if (grads_file) {
    const std::vector<float> grads32(output.begin(), output.end());
    grads_file->Write(grads32.data(), grads32.size() * sizeof(float));
  }
  files.Commit();
  if (o.summary) {
    const AttentionProblem& p = loaded.problem;
    if (backward) {
      const Ledger forward = stepper.ForwardLedger();
      std::fputs(TraceSummary(p, flash, StandardAttentionBackwardLedger(p.n, p.d), &forward).c_str(), stdout);
    } else {
      std::fputs(TraceSummary(p, flash, StandardAttentionLedger(p.n, p.d)).c_str(), stdout);
    }
  }
  if (o.gpu) {
    // A disagreement is loud: on stderr and in the exit status (the trace is still written, it is the evidence).
    std::fprintf(stderr, "%s%s\n", gpu.agrees ? "" : "flashviz: ", gpu.verdict.c_str());
    if (!gpu.agrees) return 1;
  }
  return 0;
}

}  // namespace

void AddTraceCommand(CLI::App& app, CommandList& commands) {
  auto options = std::make_shared<TraceCommandOptions>();
  CLI::App* cmd = app.add_subcommand("trace", "Write the stepper's state after every phase as JSON Lines");
  AddProblemOptions(*cmd, options->problem);
  cmd->add_option("--out", options->out, "the trace, one JSON object per step (first line: the config)");
  cmd->add_option(
      "--o-out", options->o_out,
      "the final O as raw float32 (N·d values, the sequence's row order; with --pass backward the O its forward pass "
      "saved; with --decode H·R·d values, head-major)");
  cmd->add_option("--inputs-out", options->inputs_out,
                  "with --decode: the Q, K, V used as raw float32: Q (H·R·d), then K and V (G·N·d each), head-major; "
                  "with --ring: Q, K, V (N·d each)");
  cmd->add_option("--grads-out", options->grads_out,
                  "with --pass backward: dQ, dK and dV as raw float32, 3·N·d values in that order");
  cmd->add_flag("--summary", options->summary,
                "print the HBM/SRAM totals (flash and standard attention; with --pass backward also the forward pass "
                "and forward + backward)");
  cmd->add_flag("--gpu", options->gpu,
                "also run the instrumented CUDA kernel (flash1 for kv, flash2_row for q, flash2_bwd for --pass "
                "backward) on the same tiles and write its m_i, l_i (backward: its dK_j, dV_j errors) beside the "
                "model's (exit status 1 when they disagree beyond fp32 rounding)");
  cmd->add_option("--probe-tile", options->probe_tile, "with --gpu: the Q tile whose O_i row is recorded (default 0)");
  cmd->add_option("--probe-row", options->probe_row, "with --gpu: the row within that tile (default 0)");
  commands.push_back({cmd, [options] { return RunTrace(*options); }});
}

}  // namespace flashviz
