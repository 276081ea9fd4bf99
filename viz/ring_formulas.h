// Ring attention's words and numbers: the hover explanation of every value the ring view shows (each device's
// scores, probabilities, the block's m̃ and ℓ̃, the merge's α and β, the running m, ℓ and O) with the numbers
// substituted, the devices and links, and the narration line. Each is computed from the ring stepper's state
// (Model::ring_state, and ring_previous for what the merge started from) and the inputs; the tests recompute them
// from Q, K and V with the plain definitions.
#pragma once

#include <string>

#include "viz/formulas.h"
#include "viz/model.h"

namespace flashviz {

// "row 17" (a row of the sequence), for row r of device p's slice.
std::string RingRowName(const RingProblem& problem, int device, int r);
// The rows of device p's chunks: "rows 0-3, 28-31".
std::string RingSliceName(const RingProblem& problem, int device);

// Device p's block at this ring step, row r < its rows, column c < the keys it holds.
Explanation ExplainRingScore(const Model& model, int device, int r, int c);        // S = scale·q·k, or masked
Explanation ExplainRingProbability(const Model& model, int device, int r, int c);  // P~ = exp(S − m~)
Explanation ExplainRingBlockMax(const Model& model, int device, int r);            // m~ = max_c S
Explanation ExplainRingBlockSum(const Model& model, int device, int r);            // ℓ~ = Σ_c P~
// The running state after the step, and the merge's factors.
Explanation ExplainRingRunningMax(const Model& model, int device, int r);     // m (merge: max(m_old, m~))
Explanation ExplainRingRunningSum(const Model& model, int device, int r);     // ℓ (merge: α ℓ_old + β ℓ~)
Explanation ExplainRingAlpha(const Model& model, int device, int r);          // α = e^(m_old − m_new)
Explanation ExplainRingBeta(const Model& model, int device, int r);           // β = e^(m~ − m_new)
Explanation ExplainRingOutput(const Model& model, int device, int r, int e);  // O, running or O/ℓ once written
// A device: its slice, the K/V it holds, its bytes so far; a link bar of the timeline (ring step s, device p).
Explanation ExplainRingDevice(const Model& model, int device);
Explanation ExplainRingStepWork(const Model& model, int ring_step, int device, bool link);

// The narration line of the current ring step.
std::string NarrateRing(const Model& model);

}  // namespace flashviz
