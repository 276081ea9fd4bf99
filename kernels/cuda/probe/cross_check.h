// The GPU's recorded m_i, ℓ_i and O_i row laid against the stepper's, value by value. A mismatch is reported
// with where it is and by how much; it is never rounded away.
#pragma once

#include <string>
#include <vector>

#include "kernels/cpu/stepper.h"
#include "kernels/cuda/probe/tile_probe.h"

namespace flashviz::cuda {

struct CrossCheck {
  // The model's values in the layout of TileProbeResult (NaN where the GPU has none), for overlays.
  std::vector<double> model_m_after, model_l_after, model_o_row_after;
  double max_m_error = 0;      // max |m_gpu − m_model|
  double max_l_rel_error = 0;  // max |ℓ_gpu − ℓ_model| / ℓ_model
  double max_o_error = 0;      // max |O_gpu − O_model| over the probed row's history and the final O
  int worst_i = -1, worst_j = -1, worst_row = -1;  // where the largest m or ℓ difference is
  int compared = 0;            // (i, j, row) entries compared
  bool agrees = false;         // every difference within fp32 rounding (see tolerance)
  std::string summary;         // one line for the UI / stderr
};

// fp32 rounding of a d-term dot product and a B_c-term sum, relative to the values' magnitude.
inline constexpr double kCrossCheckTolerance = 2e-5;

// `model` must have inputs (the same ones the GPU ran on).
CrossCheck CompareWithModel(const Stepper& model, const TileProbeResult& gpu);

}  // namespace flashviz::cuda
