// [SECTION] limits and the sweep
// [SECTION] problem and step
// [SECTION] tile status
// [SECTION] background work
#include "viz/model.h"

#include "kernels/cpu/backward_reference.h"
#include "kernels/cpu/decode_reference.h"

#include <algorithm>
#include <cmath>

#include "kernels/common/format.h"

namespace flashviz {
namespace {

double AbsMax(const std::vector<float>& values) {
  double m = 0;
  for (float v : values) m = std::max(m, std::abs(static_cast<double>(v)));
  return m > 0 ? m : 1.0;
}

// Work below this many multiply-adds runs on the frame thread: it is done before anyone could notice.
constexpr double kInlineWork = 4.0e6;
// The sweep counts schedules up to this many steps (~0.3 s for the largest on this class of machine).
constexpr std::int64_t kSweepMaxSteps = std::int64_t{40} << 20;

}  // namespace

// ---------------------------------------------------------------------------------------------------------
// [SECTION] limits and the sweep
// ---------------------------------------------------------------------------------------------------------

std::optional<std::string> GuiProblemError(const AttentionProblem& p) {
  const std::int64_t values = std::int64_t{p.n} * p.d;
  if (values > kGuiMaxValuesPerMatrix)
    return Sprintf("N·d = %lld is more than the step view holds (%lld values per matrix); "
                   "`flashviz trace --summary` counts any size",
                   static_cast<long long>(values), static_cast<long long>(kGuiMaxValuesPerMatrix));
  const std::int64_t steps = Schedule(p).step_count();
  if (steps > kGuiMaxSteps)
    return Sprintf("%lld steps (T_r = %d × T_c = %d tile pairs) is more than the step view replays quickly "
                   "(%lld); use larger tiles (B_r, B_c or SRAM M) or a smaller N",
                   static_cast<long long>(steps), p.tr(), p.tc(), static_cast<long long>(kGuiMaxSteps));
  return std::nullopt;
}

std::optional<std::string> DecodeGuiProblemError(const DecodeProblem& p) {
  const std::int64_t values = std::int64_t{p.shape.kv_heads} * p.kv_len() * p.d();
  if (values > kGuiMaxValuesPerMatrix)
    return Sprintf(
        "G·N·d = %lld is more than the decode view holds (%lld values); `flashviz trace --decode "
        "--summary` counts any size",
        static_cast<long long>(values), static_cast<long long>(kGuiMaxValuesPerMatrix));
  const std::int64_t steps = DecodeStepper(p, nullptr).step_count();
  if (steps > kGuiMaxSteps / 64)
    return Sprintf("%lld steps (%d KV heads × %d splits) is more than the decode view replays quickly (%lld)",
                   static_cast<long long>(steps), p.shape.kv_heads, p.splits,
                   static_cast<long long>(kGuiMaxSteps / 64));
  return std::nullopt;
}

std::optional<std::string> RingGuiProblemError(const RingProblem& p) {
  const std::int64_t values = std::int64_t{p.n} * p.d;
  if (values > kGuiMaxValuesPerMatrix)
    return Sprintf("N·d = %lld is more than the ring view holds (%lld values); `flashviz trace --ring --summary` "
                   "counts any size",
                   static_cast<long long>(values), static_cast<long long>(kGuiMaxValuesPerMatrix));
  // Every device's block (its rows × the held keys) is drawn with its numbers at every step.
  int rows = 0;
  for (int dev = 0; dev < p.devices; ++dev) rows = std::max(rows, p.DeviceRows(dev));
  if (static_cast<std::int64_t>(rows) * rows > kRingGuiMaxBlock)
    return Sprintf("a device's block is %d × %d: more than the ring view draws (%lld entries); take fewer rows "
                   "(N) or more devices (P)",
                   rows, rows, static_cast<long long>(kRingGuiMaxBlock));
  return std::nullopt;
}

std::vector<std::int64_t> RingUnitStarts(const RingStepper& stepper) {
  std::vector<std::int64_t> starts;
  for (int s = 0; s < stepper.problem().devices; ++s) starts.push_back(stepper.FirstStepOfRingStep(s));
  return starts;
}

std::vector<int> SweepSizes(int current_n) {
  std::vector<int> sizes;
  for (int n = 16; n <= 32768; n *= 2) sizes.push_back(n);
  if (std::find(sizes.begin(), sizes.end(), current_n) == sizes.end()) sizes.push_back(current_n);
  std::sort(sizes.begin(), sizes.end());
  return sizes;
}

Sweep ComputeSweep(const AttentionProblem& problem, std::int64_t max_steps, const std::atomic<bool>& cancel) {
  Sweep sweep;
  int skipped_from = 0;
  for (int n : SweepSizes(problem.n)) {
    if (cancel.load()) break;
    AttentionProblem at = problem;
    at.n = n;  // tile sizes come from M and d (or were given): they do not depend on N
    const Stepper counter(at, nullptr);
    if (counter.step_count() > max_steps) {
      if (!skipped_from) skipped_from = n;
      continue;
    }
    const Ledger flash = counter.FinalLedger();
    const Ledger standard = at.backward() ? StandardAttentionBackwardLedger(n, at.d) : StandardAttentionLedger(n, at.d);
    sweep.points.push_back({n, flash.HbmBytes(), standard.HbmBytes(), counter.step_count()});
  }
  if (skipped_from)
    sweep.note = Sprintf("N ≥ %d left out: over %lld steps to count with these tiles", skipped_from,
                         static_cast<long long>(max_steps));
  return sweep;
}

// ---------------------------------------------------------------------------------------------------------
// [SECTION] problem and step
// ---------------------------------------------------------------------------------------------------------

Model::Model() = default;
Model::~Model() = default;

void Model::SetProblem(const AttentionProblem& problem, std::shared_ptr<const AttentionInputs> inputs,
                       ProblemOrigin origin) {
  // Build everything first so a throw (bad input sizes) leaves the old problem in place.
  auto stepper = std::make_unique<Stepper>(problem, inputs.get());
  decode_.reset();
  ring_.reset();
  const Ledger final_ledger = stepper->FinalLedger();
  problem_ = problem;
  inputs_ = std::move(inputs);
  origin_ = std::move(origin);
  stepper_ = std::move(stepper);
  final_ledger_ = final_ledger;
  standard_ledger_ = problem.backward() ? StandardAttentionBackwardLedger(problem.n, problem.d)
                                       : StandardAttentionLedger(problem.n, problem.d);
  forward_ledger_ = problem.backward() ? stepper_->ForwardLedger() : final_ledger;
  standard_forward_ledger_ = StandardAttentionLedger(problem.n, problem.d);
  q_abs_max_ = AbsMax(inputs_->q);
  k_abs_max_ = AbsMax(inputs_->k);
  v_abs_max_ = AbsMax(inputs_->v);
  ++problem_version_;
  reference_.Reset();
  hbm_output_.Reset();
  sweep_.Reset();
  output_undo_.clear();
  step_ = 0;
  RefreshStep(-1);
  // The exact result, once per problem.
  const auto in = inputs_;
  const AttentionProblem rp = problem_;
  reference_.Request(
      problem_version_,
      [in, rp](const std::atomic<bool>&) {
        Reference r;
        r.o.resize(static_cast<std::size_t>(rp.n) * rp.d);
        r.stats.resize(static_cast<std::size_t>(rp.n));
        ReferenceAttentionRows(in->q.data(), in->k.data(), in->v.data(), rp.n, rp.d, rp.scale, rp.causal, 0, rp.n,
                               r.o.data(), r.stats.data());
        if (rp.backward()) {
          ReferenceGradients g = ReferenceBackward(in->q.data(), in->k.data(), in->v.data(), in->dout.data(), rp.n,
                                                   rp.d, rp.scale, rp.causal, 1);
          r.o = std::move(g.dq);  // what the output view shows in the backward pass: dQ
          r.dk = std::move(g.dk);
          r.dv = std::move(g.dv);
          // The stepper's own dK, dV: what the step view shows in HBM once each K/V tile has written them.
          const std::vector<double> walked = Stepper(rp, in.get()).Replay([](const StepView&) { return true; });
          const auto nd = static_cast<std::ptrdiff_t>(static_cast<std::size_t>(rp.n) * rp.d);
          r.model_dk.assign(walked.begin() + nd, walked.begin() + 2 * nd);
          r.model_dv.assign(walked.begin() + 2 * nd, walked.end());
        }
        std::vector<double> magnitude(r.o.size());
        for (std::size_t k = 0; k < r.o.size(); ++k) magnitude[k] = std::abs(r.o[k]);
        const auto at = magnitude.begin() + static_cast<std::ptrdiff_t>(magnitude.size() * 99 / 100);
        std::nth_element(magnitude.begin(), at, magnitude.end());
        r.abs_p99 = *at > 0 ? *at : 1.0;
        return r;
      },
      static_cast<double>(rp.n) * rp.n * rp.d < kInlineWork);
  // The sweep is wanted as soon as the traffic view opens; start it now, it only counts.
  const AttentionProblem p = problem_;
  sweep_.Request(
      problem_version_, [p](const std::atomic<bool>& cancel) { return ComputeSweep(p, kSweepMaxSteps, cancel); },
      false);
}

void Model::SetDecodeProblem(const DecodeProblem& problem, std::shared_ptr<const DecodeInputs> inputs) {
  if (!stepper_) throw std::logic_error("Model::SetDecodeProblem: set a forward problem first");
  auto decode = std::make_unique<Decode>(problem, std::move(inputs));
  ring_.reset();
  // Small by construction (the GUI's limits): the reference and both ledgers on the frame thread.
  decode->reference =
      ReferenceDecode(problem.shape, decode->inputs->q.data(), decode->inputs->k.data(), decode->inputs->v.data(), 1);
  decode->output = decode->stepper.Walk([](const DecodeState&) { return true; });
  decode->final_ledger = decode->stepper.FinalLedger();
  decode->naive_ledger = DecodeNaiveLedger(problem);
  decode->abs_max = std::max({AbsMax(decode->inputs->q), AbsMax(decode->inputs->k), AbsMax(decode->inputs->v)});
  decode_ = std::move(decode);
  ++problem_version_;
  step_ = 0;
  RefreshDecodeStep(-1);
}

void Model::SetRingProblem(const RingProblem& problem, std::shared_ptr<const AttentionInputs> inputs) {
  if (!stepper_) throw std::logic_error("Model::SetRingProblem: set a forward problem first");
  auto ring = std::make_unique<Ring>(problem, std::move(inputs));
  // Small by construction (the GUI's limits): the reference, the walk and the counts on the frame thread.
  const AttentionInputs& in = *ring->inputs;
  ring->reference.resize(static_cast<std::size_t>(problem.n) * problem.d);
  ring->reference_stats.resize(static_cast<std::size_t>(problem.n));
  ReferenceAttentionRows(in.q.data(), in.k.data(), in.v.data(), problem.n, problem.d, problem.scale, problem.causal,
                         0, problem.n, ring->reference.data(), ring->reference_stats.data());
  ring->output = ring->stepper.Walk([&](const RingState& s) {
    if (s.info.phase == RingPhase::kDone) ring->final_state = s;
    return true;
  });
  ring->work = ring->stepper.WorkTable();
  ring->timeline = ComputeRingTimeline(problem, ring->work);
  ring->single_device_ledger = Stepper(RingSingleDeviceProblem(problem), nullptr).FinalLedger();
  ring->abs_max = std::max({AbsMax(in.q), AbsMax(in.k), AbsMax(in.v)});
  decode_.reset();
  ring_ = std::move(ring);
  ++problem_version_;
  step_ = 0;
  RefreshRingStep(-1);
}

void Model::RefreshRingStep(std::int64_t old_step) {
  Ring& r = *ring_;
  if (old_step >= 0 && step_ == old_step + 1) {
    r.previous = std::move(r.state);
    r.state = r.stepper.StateAt(step_, RingStateDetail::kBlocks);
  } else if (old_step >= 0 && step_ == old_step - 1) {
    r.state = std::move(r.previous);
    if (step_ > 0) r.previous = r.stepper.StateAt(step_ - 1, RingStateDetail::kBlocks);
  } else {
    r.state = r.stepper.StateAt(step_, RingStateDetail::kBlocks);
    if (step_ > 0) r.previous = r.stepper.StateAt(step_ - 1, RingStateDetail::kBlocks);
  }
  ++step_version_;
}

void Model::RefreshDecodeStep(std::int64_t old_step) {
  Decode& d = *decode_;
  if (old_step >= 0 && step_ == old_step + 1) {
    d.previous = std::move(d.state);
    d.state = d.stepper.StateAt(step_);
  } else if (old_step >= 0 && step_ == old_step - 1) {
    d.state = std::move(d.previous);
    if (step_ > 0) d.previous = d.stepper.StateAt(step_ - 1);
  } else {
    d.state = d.stepper.StateAt(step_);
    if (step_ > 0) d.previous = d.stepper.StateAt(step_ - 1);
  }
  ++step_version_;
}

void Model::SetStep(std::int64_t step) {
  if (!stepper_) return;
  step = std::clamp<std::int64_t>(step, 0, step_count() - 1);
  if (step == step_) return;
  const std::int64_t old = step_;
  step_ = step;
  if (ring_)
    RefreshRingStep(old);
  else if (decode_)
    RefreshDecodeStep(old);
  else
    RefreshStep(old);
}

void Model::RefreshStep(std::int64_t old_step) {
  // One step forward: the old state is the new previous one (playback replays once per step).
  if (old_step >= 0 && step_ == old_step + 1) {
    previous_ = std::move(state_);
    state_ = stepper_->StateAt(step_);
  } else if (old_step >= 0 && step_ == old_step - 1) {
    state_ = std::move(previous_);
    if (step_ > 0) previous_ = stepper_->StateAt(step_ - 1);
  } else {
    state_ = stepper_->StateAt(step_);
    if (step_ > 0) previous_ = stepper_->StateAt(step_ - 1);
  }
  ++step_version_;

  // Which tile iteration the cursor is in.
  const Schedule& s = schedule();
  const std::int64_t count = s.tile_iteration_count();
  const std::int64_t per = phases_per_iteration();
  std::int64_t lo = 0, hi = count;  // first t whose start is > step
  while (lo < hi) {
    const std::int64_t mid = lo + (hi - lo) / 2;
    if (s.TileIterationStart(mid) <= step_) lo = mid + 1;
    else hi = mid;
  }
  const std::int64_t t = lo - 1;
  tile_iteration_ = (t >= 0 && step_ < s.TileIterationStart(t) + per) ? t : -1;
  tile_iterations_done_ = t < 0 ? 0 : (step_ >= s.TileIterationStart(t) + per - 1 ? t + 1 : t);
  RequestBackgroundWork(old_step);
}

int Model::phases_per_iteration() const {
  return static_cast<int>(TileIterationPhases(problem_).size());
}

std::vector<std::int64_t> DecodeUnitStarts(const DecodeStepper& stepper) {
  const DecodeProblem& p = stepper.problem();
  std::vector<std::int64_t> starts;
  for (int g = 0; g < p.shape.kv_heads; ++g)
    for (int s = 0; s < p.splits; ++s) starts.push_back(stepper.FirstStepOfSplit(g, s));
  if (p.splits > 1)
    for (int g = 0; g < p.shape.kv_heads; ++g) starts.push_back(stepper.FirstStepOfMerge(g));
  return starts;
}

std::int64_t Model::NextTileIterationStep() const {
  if (ring_) {
    for (const std::int64_t start : RingUnitStarts(ring_->stepper))
      if (start > step_) return start;
    return step_count() - 1;
  }
  if (decode_) {
    for (const std::int64_t start : DecodeUnitStarts(decode_->stepper))
      if (start > step_) return start;
    return step_count() - 1;
  }
  const Schedule& s = schedule();
  std::int64_t lo = 0, hi = s.tile_iteration_count();
  while (lo < hi) {
    const std::int64_t mid = lo + (hi - lo) / 2;
    if (s.TileIterationStart(mid) <= step_) lo = mid + 1;
    else hi = mid;
  }
  return lo < s.tile_iteration_count() ? s.TileIterationStart(lo) : step_count() - 1;
}

std::int64_t Model::PreviousTileIterationStep() const {
  if (ring_) {
    std::int64_t before = 0;
    for (const std::int64_t start : RingUnitStarts(ring_->stepper))
      if (start < step_) before = start;
    return before;
  }
  if (decode_) {
    std::int64_t before = 0;
    for (const std::int64_t start : DecodeUnitStarts(decode_->stepper))
      if (start < step_) before = start;
    return before;
  }
  const Schedule& s = schedule();
  std::int64_t lo = 0, hi = s.tile_iteration_count();  // first t whose start is ≥ step
  while (lo < hi) {
    const std::int64_t mid = lo + (hi - lo) / 2;
    if (s.TileIterationStart(mid) < step_) lo = mid + 1;
    else hi = mid;
  }
  return lo > 0 ? s.TileIterationStart(lo - 1) : 0;
}

// ---------------------------------------------------------------------------------------------------------
// [SECTION] tile status
// ---------------------------------------------------------------------------------------------------------

TileStatus Model::PairStatus(int i, int j) const {
  const std::optional<std::int64_t> first = schedule().FirstStepOfPair(i, j);
  if (!first) return TileStatus::kMasked;
  if (state_.info.i == i && state_.info.j == j) return TileStatus::kCurrent;
  return *first < step_ ? TileStatus::kDone : TileStatus::kPending;
}

namespace {
// The last K/V tile that row tile i works with (causal masking ends the row early).
int LastActiveColumn(const AttentionProblem& p, int i) {
  if (!p.causal) return p.tc() - 1;
  const int last_row = p.RowBegin(i) + p.RowsInTile(i) - 1;
  return std::min(p.tc() - 1, last_row / p.bc);
}
}  // namespace

TileStatus Model::QTileStatus(int i) const {
  if (state_.info.i == i) return TileStatus::kCurrent;
  const std::optional<std::int64_t> first = schedule().FirstStepOfPair(i, LastActiveColumn(problem_, i));
  if (!first) return TileStatus::kPending;
  // kv: the pair ends with write_back; q: the row tile ends with finalize and write_back after its last pair.
  const std::int64_t last = *first + phases_per_iteration() - 1 + (problem_.KvOuterLoop() ? 0 : 2);
  return last < step_ ? TileStatus::kDone : TileStatus::kPending;
}

TileStatus Model::KvTileStatus(int j) const {
  if (state_.info.j == j) return TileStatus::kCurrent;
  // In both orders the last row tile to visit column j is T_r − 1 (causal keeps a suffix of rows per column).
  const std::optional<std::int64_t> first = schedule().FirstStepOfPair(problem_.tr() - 1, j);
  if (!first) return TileStatus::kPending;
  return *first + phases_per_iteration() - 1 < step_ ? TileStatus::kDone : TileStatus::kPending;
}

bool Model::OutputTileWritten(int i) const {
  if (problem_.KvOuterLoop()) return true;  // kv: init wrote O; backward: init wrote dQ = 0
  const TileStatus status = QTileStatus(i);
  return status == TileStatus::kDone ||
         (status == TileStatus::kCurrent && state_.info.phase == Phase::kWriteBack);
}

// ---------------------------------------------------------------------------------------------------------
// [SECTION] background work
// ---------------------------------------------------------------------------------------------------------

namespace {

// The tensor the output view shows as it stands in HBM: O, or dQ in the backward pass.
HbmTensor OutputTensor(const AttentionProblem& p) { return p.backward() ? HbmTensor::kDQ : HbmTensor::kO; }

// The rows of the output tensor that `state`'s step wrote (O_i at write_back; dQ_i at grad_q), or null.
const std::vector<double>* RowsWritten(const AttentionProblem& p, const StepState& state) {
  if (p.backward()) return state.info.phase == Phase::kGradQ && !state.grad.dq.empty() ? &state.grad.dq : nullptr;
  return state.info.phase == Phase::kWriteBack && !state.tile.o.empty() ? &state.tile.o : nullptr;
}

}  // namespace

// O (dQ) in HBM after a one-step move across a write_back (grad_q): the step wrote exactly O_i (dQ_i), so the
// image is patched (forward) or restored from the undo list (backward) instead of being recomputed (O(N²d)).
bool Model::PatchHbmOutput(std::int64_t old_step) {
  HbmOutput* out = hbm_output_.mutable_get();
  if (!out || !hbm_output_.current() || old_step < 0) return false;
  const HbmTensor tensor = OutputTensor(problem_);
  const std::uint64_t key = static_cast<std::uint64_t>(state_.ledger[tensor].write_bytes) + 1;
  const std::size_t d = static_cast<std::size_t>(problem_.d);
  if (step_ == old_step + 1) {
    if (state_.delta[tensor].write_bytes == 0) return hbm_output_.key() == key;
    const std::vector<double>* rows = RowsWritten(problem_, state_);
    if (!rows) return false;
    const std::size_t begin = static_cast<std::size_t>(state_.row_begin) * d;
    const std::size_t count = static_cast<std::size_t>(state_.rows) * d;
    output_undo_.push_back({step_, hbm_output_.key(), state_.row_begin,
                            std::vector<double>(out->values.begin() + static_cast<std::ptrdiff_t>(begin),
                                                out->values.begin() + static_cast<std::ptrdiff_t>(begin + count))});
    if (output_undo_.size() > 64) output_undo_.erase(output_undo_.begin());
    std::copy(rows->begin(), rows->begin() + static_cast<std::ptrdiff_t>(count),
              out->values.begin() + static_cast<std::ptrdiff_t>(begin));
    out->step = step_;
    hbm_output_.Rekey(key);
    return true;
  }
  if (step_ == old_step - 1) {
    if (hbm_output_.key() == key) return true;  // the step undone wrote no O
    if (output_undo_.empty() || output_undo_.back().step != old_step) return false;
    const OutputUndo& undo = output_undo_.back();
    std::copy(undo.old_rows.begin(), undo.old_rows.end(),
              out->values.begin() + static_cast<std::ptrdiff_t>(static_cast<std::size_t>(undo.row_begin) * d));
    out->step = step_;
    hbm_output_.Rekey(undo.old_key);
    output_undo_.pop_back();
    return hbm_output_.key() == key;
  }
  return false;
}

void Model::RequestBackgroundWork(std::int64_t old_step) {
  const auto inputs = inputs_;
  const AttentionProblem p = problem_;
  const double n = p.n, d = p.d;
  if (PatchHbmOutput(old_step)) return;
  if (std::abs(step_ - old_step) != 1) output_undo_.clear();

  // O (dQ) in HBM changes only when it is written: key it by the bytes written so far.
  const std::int64_t o_written = state_.ledger[OutputTensor(p)].write_bytes;
  const std::int64_t step = step_;
  const double done_fraction = static_cast<double>(step + 1) / static_cast<double>(step_count());
  hbm_output_.Request(
      static_cast<std::uint64_t>(o_written) + 1,
      [inputs, p, step](const std::atomic<bool>&) {
        const Stepper stepper(p, inputs.get());
        return HbmOutput{stepper.HbmOutputAt(step), step};
      },
      n * n * d * done_fraction < kInlineWork);
}

void Model::Update() {
  reference_.Poll();
  hbm_output_.Poll();
  sweep_.Poll();
}

void Model::WaitIdle() {
  reference_.Wait();
  hbm_output_.Wait();
  sweep_.Wait();
}

bool Model::busy() const { return reference_.busy() || hbm_output_.busy() || sweep_.busy(); }


const vortex::Report* Model::VortexReport(const vortex::Request& request, std::string* error) const {
  if (!vortex_ || !(vortex_->request == request)) {
    vortex_.emplace();
    vortex_->request = request;
    if (const auto why = vortex::RequestError(request)) {
      vortex_->error = *why;
    } else {
      vortex_->report = std::make_unique<vortex::Report>(vortex::BuildReport(request));
    }
  }
  if (error) *error = vortex_->error;
  return vortex_->report.get();
}

const vortex::PhaseView& Model::VortexView(const vortex::Request& request) const {
  const vortex::Report* report = VortexReport(request, nullptr);
  if (!vortex_->view || vortex_->view_step_version != step_version_) {
    // The Vortex programs are the forward pass: in the backward pass they stand at their start.
    AttentionProblem forward = problem_;
    forward.pass = Pass::kForward;
    const StepInfo at = problem_.backward() ? StepInfo{} : state_.info;
    vortex_->view = report ? vortex::ViewAtMainStep(*report, forward, at) : vortex::PhaseView{};
    vortex_->view_step_version = step_version_;
  }
  return *vortex_->view;
}

}  // namespace flashviz
