// The GUI's model: the kernels/cpu Stepper for the current problem and its inputs, with everything the views
// read cached so that a frame costs nothing the step did not change (docs/design.md, principle 1: every view reads
// the stepper; nothing is drawn from hand-made data).
//  - the StepState of the current step and of the step before (rebuilt only when the step or problem changes;
//    stepping one forward reuses the previous state, so playback replays once per step)
//  - the exact result (float64, ReferenceAttentionRows over all rows), once per problem
//  - the final ledger and standard attention's ledger, once per problem
//  - off the frame path (background.h): O as it stands in HBM (Stepper::HbmOutputAt, O(N²d), keyed by the
//    bytes of O written so far, so it is recomputed only when O in HBM changed; stepping across one
//    write_back patches the rows that step wrote instead, from the StepState, and stepping back undoes it)
//    and the sweep of HBM bytes against N for the log-log plot (a count-only Stepper per N, never a formula)
//  - the Vortex report (kernels/vortex/report.h) for the machine the Vortex panel asks about, once per request,
//    and its program's view at the cursor, once per step: the panel's reads are memoized (the only state a
//    const Model changes, and only on the UI thread)
// Panels get it const; the app changes the problem and the step between frames.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "kernels/cpu/decode.h"
#include "kernels/cpu/ledger.h"
#include "kernels/cpu/problem.h"
#include "kernels/cpu/reference.h"
#include "kernels/cpu/ring.h"
#include "kernels/cpu/schedule.h"
#include "kernels/cpu/stepper.h"
#include "kernels/vortex/report.h"
#include "viz/background.h"
#include "viz/live_gpu.h"

namespace flashviz {

enum class TileStatus : std::uint8_t { kPending, kCurrent, kDone, kMasked };

// Where Q, K, V came from (labels, sessions).
struct ProblemOrigin {
  std::uint64_t seed = 0;
  std::string input_path;  // an HW4 file, or empty for random inputs
  int batch = 0;
};

// The GUI's limits: beyond them a step view is too slow or too large to be useful (the command line has none).
inline constexpr std::int64_t kGuiMaxValuesPerMatrix = std::int64_t{1} << 22;  // N·d
inline constexpr std::int64_t kGuiMaxSteps = std::int64_t{8} << 20;
// The ring view draws every device's block (its rows × the keys it holds) at every step.
inline constexpr std::int64_t kRingGuiMaxBlock = std::int64_t{1} << 16;
// Why the GUI will not open `problem`, or nothing.
std::optional<std::string> GuiProblemError(const AttentionProblem& problem);

struct SweepPoint {
  int n = 0;
  std::int64_t flash_hbm_bytes = 0;
  std::int64_t standard_hbm_bytes = 0;
  std::int64_t steps = 0;
};
struct Sweep {
  std::vector<SweepPoint> points;
  std::string note;  // e.g. which N were left out and why
};

struct HbmOutput {
  std::vector<double> values;  // N × d, O as it stands in HBM
  std::int64_t step = 0;       // the step it was computed for (any step with the same bytes of O written)
};

// The exact result, float64 (ReferenceAttentionRows over every row), once per problem.
struct Reference {
  std::vector<double> o;               // N × d: O, or in the backward pass dQ (what the output view shows)
  std::vector<double> dk, dv;          // the backward pass: dK and dV (N × d each), float64 reference
  std::vector<double> model_dk, model_dv;  // the backward pass: dK and dV as the stepper computes them (its walk)
  std::vector<RowSoftmaxStats> stats;  // the exact m and ℓ of each row over all keys
  double abs_p99 = 1;                  // the 99th percentile of |O|: O's colour range (a few rows near one
                                       // V row would otherwise wash out the rest)
};

class Model {
 public:
  Model();
  ~Model();
  Model(const Model&) = delete;
  Model& operator=(const Model&) = delete;

  // Replaces the problem; the cursor goes to step 0. `inputs` must match the problem's N and d.
  void SetProblem(const AttentionProblem& problem, std::shared_ptr<const AttentionInputs> inputs,
                  ProblemOrigin origin);
  // Decoding (the form's decode switch, `--decode`, the Decode preset): the cursor walks the decode stepper; the
  // forward problem stays loaded underneath (a forward problem must be set first) and returns with SetProblem.
  // Throws std::invalid_argument when `inputs` do not match.
  void SetDecodeProblem(const DecodeProblem& problem, std::shared_ptr<const DecodeInputs> inputs);
  // Ring attention (the form's ring switch, `--ring P`, the Ring preset): the cursor walks the ring stepper, the
  // forward problem stays loaded underneath as with decoding. Throws std::invalid_argument when `inputs` do not match.
  void SetRingProblem(const RingProblem& problem, std::shared_ptr<const AttentionInputs> inputs);
  void SetStep(std::int64_t step);  // clamped to [0, step_count)
  void Update();                    // takes finished background work; call once per frame before drawing
  void WaitIdle();                  // blocks until background work is done (tests, screenshots)
  bool busy() const;

  bool has_problem() const { return stepper_ != nullptr; }
  const AttentionProblem& problem() const { return problem_; }
  const AttentionInputs& inputs() const { return *inputs_; }
  const std::shared_ptr<const AttentionInputs>& inputs_ptr() const { return inputs_; }
  const ProblemOrigin& origin() const { return origin_; }
  const Stepper& stepper() const { return *stepper_; }
  const Schedule& schedule() const { return stepper_->schedule(); }
  std::int64_t step() const { return step_; }
  std::int64_t step_count() const {
    return ring_     ? ring_->stepper.step_count()
           : decode_ ? decode_->stepper.step_count()
           : stepper_ ? stepper_->step_count()
                      : 0;
  }
  int phases_per_iteration() const;
  // Change whenever the problem (resp. the step or problem) changes: keys for caches in the views.
  std::uint64_t problem_version() const { return problem_version_; }
  std::uint64_t step_version() const { return step_version_; }

  const StepState& state() const { return state_; }
  const StepState* previous() const { return step_ > 0 ? &previous_ : nullptr; }  // after step − 1

  TileStatus PairStatus(int i, int j) const;
  TileStatus QTileStatus(int i) const;   // Q_i and O_i: done once every pair of row i is done
  TileStatus KvTileStatus(int j) const;  // K_j and V_j: done once every pair of column j is done
  // q order: rows of O already written to HBM; kv: every row (init wrote zeros).
  bool OutputTileWritten(int i) const;
  // The tile iteration the cursor is in, in schedule order (−1 outside one), and the first tile iteration
  // that has not finished (for "t of T" labels).
  std::int64_t tile_iteration() const { return tile_iteration_; }
  std::int64_t tile_iterations_done() const { return tile_iterations_done_; }
  // The step that begins the tile iteration after / before the cursor's (for Shift+←/→).
  std::int64_t NextTileIterationStep() const;
  std::int64_t PreviousTileIterationStep() const;

  // Decoding. Valid only in decode mode.
  bool decode_mode() const { return decode_ != nullptr; }
  const DecodeProblem& decode_problem() const { return decode_->problem; }
  const DecodeStepper& decode_stepper() const { return decode_->stepper; }
  const DecodeInputs& decode_inputs() const { return *decode_->inputs; }
  const DecodeState& decode_state() const { return decode_->state; }
  const DecodeState* decode_previous() const { return step_ > 0 ? &decode_->previous : nullptr; }
  // O (H × R × d) of the float64 reference; decode_naive's and flash-decoding's whole ledgers.
  const std::vector<double>& decode_reference() const { return decode_->reference; }
  // O (H × R × d) as the decode stepper's write_o steps leave it.
  const std::vector<double>& decode_output() const { return decode_->output; }
  const Ledger& decode_final_ledger() const { return decode_->final_ledger; }
  const Ledger& decode_naive_ledger() const { return decode_->naive_ledger; }
  // The largest |Q|, |K|, |V| of the decode inputs (colour ranges).
  double decode_abs_max() const { return decode_->abs_max; }

  // Ring attention. Valid only in ring mode.
  bool ring_mode() const { return ring_ != nullptr; }
  // The step's state with every device's S and P~ (RingStateDetail::kBlocks), and the step before's.
  const RingProblem& ring_problem() const { return ring_->problem; }
  const RingStepper& ring_stepper() const { return ring_->stepper; }
  const AttentionInputs& ring_inputs() const { return *ring_->inputs; }
  const RingState& ring_state() const { return ring_->state; }
  const RingState* ring_previous() const { return step_ > 0 ? &ring_->previous : nullptr; }
  // O (N × d, the sequence's order) and the softmax statistics of every row, float64 reference; the ring's O as its
  // last merge writes it; each ring step's work per device; the cost model's timeline; the ring's final state (its
  // ledgers and link bytes) and one device's ledger for the same problem (FlashAttention-2, the same tiles).
  const std::vector<double>& ring_reference() const { return ring_->reference; }
  const std::vector<RowSoftmaxStats>& ring_reference_stats() const { return ring_->reference_stats; }
  const std::vector<double>& ring_output() const { return ring_->output; }
  const std::vector<RingWork>& ring_work() const { return ring_->work; }
  const RingTimeline& ring_timeline() const { return ring_->timeline; }
  const RingState& ring_final_state() const { return ring_->final_state; }
  const Ledger& ring_single_device_ledger() const { return ring_->single_device_ledger; }
  double ring_abs_max() const { return ring_->abs_max; }

  double q_abs_max() const { return q_abs_max_; }
  double k_abs_max() const { return k_abs_max_; }
  double v_abs_max() const { return v_abs_max_; }
  // O's colour range: the 99th percentile of |O| of the exact result once it is known, else max |V| (a bound:
  // O's rows are averages of V's rows).
  double o_abs_max() const {
    const Reference* ref = reference();
    return ref ? ref->abs_p99 : v_abs_max_;
  }

  // The exact result (null while it is computed).
  const Reference* reference() const { return reference_.current() ? reference_.get() : nullptr; }
  // O in HBM: the last one computed (current() says whether it matches the cursor).
  const HbmOutput* hbm_output() const { return hbm_output_.get(); }
  bool hbm_output_current() const { return hbm_output_.current(); }
  const Ledger& final_ledger() const { return final_ledger_; }
  const Ledger& standard_ledger() const { return standard_ledger_; }  // standard attention's pass of this kind
  // The forward pass of this problem (the backward pass's own in the q order) and standard attention's: the
  // traffic tab's "forward + backward" totals.
  const Ledger& forward_ledger() const { return forward_ledger_; }
  const Ledger& standard_forward_ledger() const { return standard_forward_ledger_; }
  const Sweep* sweep() const { return sweep_.get(); }
  // The live GPU view's results: filled by the app (app/interop) in CUDA builds; in others it says why
  // it is off. Panels read it; the app writes it between frames.
  const LiveGpuView& live_gpu() const { return live_gpu_; }
  LiveGpuView& mutable_live_gpu() { return live_gpu_; }
  bool sweep_current() const { return sweep_.current(); }

  // The Vortex report for `request` (its N and d are the problem's), built on first use and kept while the
  // request stays the same; null with the reason in `error` when the request cannot be mapped.
  const vortex::Report* VortexReport(const vortex::Request& request, std::string* error) const;
  // The view of the report's program at the cursor (VortexReport(request) must have succeeded).
  const vortex::PhaseView& VortexView(const vortex::Request& request) const;

 private:
  void RefreshStep(std::int64_t old_step);
  void RequestBackgroundWork(std::int64_t old_step);
  bool PatchHbmOutput(std::int64_t old_step);

  struct Decode {
    Decode(const DecodeProblem& p, std::shared_ptr<const DecodeInputs> in)
        : problem(p), inputs(std::move(in)), stepper(problem, inputs.get()) {}
    DecodeProblem problem;
    std::shared_ptr<const DecodeInputs> inputs;
    DecodeStepper stepper;
    DecodeState state, previous;
    std::vector<double> reference, output;
    Ledger final_ledger, naive_ledger;
    double abs_max = 1;
  };
  void RefreshDecodeStep(std::int64_t old_step);

  struct Ring {
    Ring(const RingProblem& p, std::shared_ptr<const AttentionInputs> in)
        : problem(p), inputs(std::move(in)), stepper(problem, inputs.get()) {}
    RingProblem problem;
    std::shared_ptr<const AttentionInputs> inputs;
    RingStepper stepper;
    RingState state, previous, final_state;
    std::vector<double> reference, output;
    std::vector<RowSoftmaxStats> reference_stats;
    std::vector<RingWork> work;
    RingTimeline timeline;
    Ledger single_device_ledger;
    double abs_max = 1;
  };
  void RefreshRingStep(std::int64_t old_step);
  std::unique_ptr<Ring> ring_;

  AttentionProblem problem_;
  std::unique_ptr<Decode> decode_;
  std::shared_ptr<const AttentionInputs> inputs_;
  ProblemOrigin origin_;
  std::unique_ptr<Stepper> stepper_;
  std::int64_t step_ = 0;
  std::uint64_t problem_version_ = 0, step_version_ = 0;
  StepState state_, previous_;
  std::int64_t tile_iteration_ = -1, tile_iterations_done_ = 0;
  Ledger final_ledger_, standard_ledger_;
  Ledger forward_ledger_, standard_forward_ledger_;
  double q_abs_max_ = 1, k_abs_max_ = 1, v_abs_max_ = 1;

  BackgroundValue<Reference> reference_;
  // Rows of O in HBM that forward patches overwrote, newest last, so that stepping back restores them.
  struct OutputUndo {
    std::int64_t step;       // the write_back step that overwrote them
    std::uint64_t old_key;   // the O-written key before it
    int row_begin;
    std::vector<double> old_rows;
  };
  std::vector<OutputUndo> output_undo_;
  BackgroundValue<HbmOutput> hbm_output_;
  BackgroundValue<Sweep> sweep_;
  LiveGpuView live_gpu_;
  // Memoized for the Vortex panel (see VortexReport): keyed by the request, and the view also by the step.
  struct VortexMemo {
    vortex::Request request;
    std::unique_ptr<vortex::Report> report;
    std::string error;
    std::uint64_t view_step_version = 0;
    std::optional<vortex::PhaseView> view;
  };
  mutable std::optional<VortexMemo> vortex_;
};

// Why the GUI will not open a decode problem (too many values or steps to step through), or nothing.
std::optional<std::string> DecodeGuiProblemError(const DecodeProblem& problem);
// Decoding's "tile iterations" for Shift+←/→ and playback by iteration: the first step of each split of each KV
// head, then of each KV head's merge.
std::vector<std::int64_t> DecodeUnitStarts(const DecodeStepper& stepper);
// Why the GUI will not open a ring problem (too many values for the side-by-side view), or nothing.
std::optional<std::string> RingGuiProblemError(const RingProblem& problem);
// The ring's "tile iterations" for Shift+←/→: the first step of each ring step.
std::vector<std::int64_t> RingUnitStarts(const RingStepper& stepper);

// The N of the log-log sweep: powers of two from 16 to 32768, plus the current N.
std::vector<int> SweepSizes(int current_n);
// Counts HBM bytes for `problem` at every N of SweepSizes (count-only Steppers), skipping N whose schedule has
// more than `max_steps` steps; stops early when `cancel` turns true.
Sweep ComputeSweep(const AttentionProblem& problem, std::int64_t max_steps, const std::atomic<bool>& cancel);

}  // namespace flashviz
