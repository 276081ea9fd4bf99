#include "kernels/vortex/report.h"

#include "kernels/common/format.h"
#include "kernels/vortex/inputs.h"

namespace flashviz::vortex {
namespace {

// The numerics cost N²·d per program, emulated one Vortex thread per host task: N = 4096 at d = 64 takes a few
// seconds; beyond these bounds the report has the mapping and the counts only.
constexpr int kMaxNumericsN = 4096;
constexpr double kMaxNumericsMultiplyAdds = 2.2e9;

}  // namespace

Report BuildReport(const Request& request, Numerics numerics) {
  Mapping mapping = MapToVortex(request);
  Schedule schedule(ScheduleProblem(mapping));
  Report r{request, std::move(mapping), std::move(schedule), {}, {}, std::nullopt, {}};
  r.counts = CountAllPrograms(request.machine, request.n, request.d);
  r.ratios = CompareWithPublished(r.counts);
  if (numerics == Numerics::kSkip) return r;
  // The SIMT program's arithmetic needs whole K/V tiles (B_c ≤ N); the TCU part of RunNumerics needs d = 8.
  const ProgramCounts& simt = r.counts[static_cast<int>(Program::kSimtFlash)];
  const double multiply_adds = 2.0 * static_cast<double>(request.n) * request.n * request.d;  // Q·Kᵀ and P·V
  if (request.n > kMaxNumericsN) {
    r.numerics_note = Sprintf("numerics skipped: N = %d > %d", request.n, kMaxNumericsN);
  } else if (multiply_adds > kMaxNumericsMultiplyAdds) {
    r.numerics_note = Sprintf("numerics skipped: 2·N²·d = %.3g multiply-adds per program, more than the %.3g "
                              "run here (a smaller N or d runs them)",
                              multiply_adds, kMaxNumericsMultiplyAdds);
  } else if (!simt.applicable) {
    r.numerics_note = "numerics skipped: " + simt.not_applicable_reason;
  } else {
    r.numerics = RunNumerics(ReportInputs(request.n, request.d), simt.bc);
    r.numerics_note = "the report's inputs: srand(50), Q, K, V uniform in [-5, 5]; no 1/sqrt(d) scaling";
  }
  return r;
}

PhaseView ViewAtMainStep(const Report& report, const AttentionProblem& main, const StepInfo& step) {
  const std::optional<std::int64_t> vstep = VortexStepFor(report.schedule, main, step);
  return ViewAt(report.mapping, vstep ? report.schedule.Info(*vstep) : StepInfo{0, Phase::kDone, -1, -1});
}

}  // namespace flashviz::vortex
