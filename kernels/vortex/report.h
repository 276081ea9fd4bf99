// One problem on one Vortex machine, built once: the mapping of the tiles onto cores, warps and threads, the
// program's own Q-outer schedule, the three programs of the report counted beside its published table, and, on
// request, the programs' numerics. The Vortex panel reads it (the GUI's model caches it per request, with the
// view of the current step) and `flashviz vortex` prints and serializes it: one computation, two views.
#pragma once

#include <array>
#include <optional>
#include <string>
#include <vector>

#include "kernels/cpu/schedule.h"
#include "kernels/vortex/counting.h"
#include "kernels/vortex/mapping.h"
#include "kernels/vortex/phase_view.h"
#include "kernels/vortex/tcu.h"

namespace flashviz::vortex {

struct Report {
  Request request;
  Mapping mapping;
  Schedule schedule;  // the program's own schedule: Schedule(ScheduleProblem(mapping))
  std::array<ProgramCounts, kProgramCount> counts;
  std::vector<ProgramRatio> ratios;  // the counts against the report's published table
  std::optional<NumericsResult> numerics;
  std::string numerics_note;  // which inputs the numerics ran on, or why they did not run
};

enum class Numerics { kSkip, kRun };

// Throws InputError when RequestError refuses the request. With Numerics::kRun the programs' arithmetic runs on
// the report's inputs unless it would take too long (2·N²·d multiply-adds over a bound) or does not apply; the
// note says which.
Report BuildReport(const Request& request, Numerics numerics = Numerics::kSkip);

// The view of the Vortex program at the main view's cursor: its step (VortexStepFor), or "done" when the
// cursor's rows lie past the Vortex N.
PhaseView ViewAtMainStep(const Report& report, const AttentionProblem& main, const StepInfo& step);

}  // namespace flashviz::vortex
