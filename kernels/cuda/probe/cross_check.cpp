#include "kernels/cuda/probe/cross_check.h"

#include <cmath>
#include <limits>

#include "kernels/common/format.h"

namespace flashviz::cuda {

CrossCheck CompareWithModel(const Stepper& model, const TileProbeResult& gpu) {
  const AttentionProblem& p = model.problem();
  const double nan = std::numeric_limits<double>::quiet_NaN();
  CrossCheck check;
  check.model_m_after.assign(gpu.m_after.size(), nan);
  check.model_l_after.assign(gpu.l_after.size(), nan);
  check.model_o_row_after.assign(gpu.o_row_after.size(), nan);
  const Phase iteration_end = TileIterationPhases(p.order).back();
  bool within = true;
  auto note = [&](double error, double magnitude, int i, int j, int r, double& worst) {
    const double relative = error / std::max(1.0, magnitude);
    if (!(relative <= kCrossCheckTolerance)) within = false;  // NaN fails too
    if (!(error <= worst)) {
      worst = error;
      check.worst_i = i;
      check.worst_j = j;
      check.worst_row = r;
    }
  };
  const std::vector<double> o = model.Replay([&](const StepView& view) {
    const StepInfo& info = view.info();
    if (info.phase != iteration_end) return true;
    const TileNumerics& tile = view.tile();
    for (int r = 0; r < p.RowsInTile(info.i); ++r) {
      const std::size_t at = (static_cast<std::size_t>(info.i) * p.tc() + info.j) * p.br + r;
      check.model_m_after[at] = tile.m[r];
      check.model_l_after[at] = tile.l[r];
      const double m_gpu = gpu.m_after[at], l_gpu = gpu.l_after[at];
      ++check.compared;
      if (std::isinf(tile.m[r]) && m_gpu == tile.m[r]) {
        note(0, 0, info.i, info.j, r, check.max_m_error);
      } else {
        note(std::fabs(m_gpu - tile.m[r]), std::fabs(tile.m[r]), info.i, info.j, r, check.max_m_error);
      }
      const double l_error = std::fabs(l_gpu - tile.l[r]) / std::max(tile.l[r], std::numeric_limits<double>::min());
      note(tile.l[r] == 0 ? std::fabs(l_gpu) : l_error, 0, info.i, info.j, r, check.max_l_rel_error);
    }
    if (info.i == gpu.probe_tile) {
      for (int e = 0; e < p.d; ++e) {
        const double model_o = tile.o[static_cast<std::size_t>(gpu.probe_row) * p.d + e];
        const std::size_t at = static_cast<std::size_t>(info.j) * p.d + e;
        check.model_o_row_after[at] = model_o;
        const double error = std::fabs(gpu.o_row_after[at] - model_o);
        if (!(error / std::max(1.0, std::fabs(model_o)) <= kCrossCheckTolerance)) within = false;
        if (!(error <= check.max_o_error)) check.max_o_error = error;
      }
    }
    return true;
  });
  for (std::size_t at = 0; at < o.size() && at < gpu.o.size(); ++at) {
    const double error = std::fabs(gpu.o[at] - o[at]);
    if (!(error / std::max(1.0, std::fabs(o[at])) <= kCrossCheckTolerance)) within = false;
    if (!(error <= check.max_o_error)) check.max_o_error = error;
  }
  check.agrees = within && check.compared > 0;
  check.summary = Sprintf("%s: %s the model over %d (i, j, row) entries: max |Δm| = %.3g, max |Δℓ|/ℓ = %.3g, "
                          "max |ΔO| = %.3g (tolerance %.0e relative)",
                          gpu.kernel.c_str(), check.agrees ? "agrees with" : "DISAGREES with", check.compared,
                          check.max_m_error, check.max_l_rel_error, check.max_o_error, kCrossCheckTolerance);
  if (!check.agrees && check.worst_i >= 0)
    check.summary += Sprintf("; largest difference at tile i = %d, j = %d, row %d", check.worst_i, check.worst_j,
                             check.worst_row);
  return check;
}

}  // namespace flashviz::cuda
