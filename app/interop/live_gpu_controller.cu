// [SECTION] device helpers: buffers, |O − O_ref|, value ranges
// [SECTION] colour tables from viz's colour scales
// [SECTION] LiveGpuController: availability, the run (cross-check, the variant, the images)
#include "app/interop/live_gpu_controller.h"

#include <cuda_runtime.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <vector>

#include "app/interop/cuda_gl_texture.h"
#include "kernels/common/format.h"
#include "kernels/cuda/backward/backward_variants.h"
#include "kernels/cuda/probe/backward_probe.h"
#include "kernels/cuda/probe/cross_check.h"
#include "kernels/cuda/variants.h"
#include "viz/colormap.h"
#include "viz/live_gpu.h"
#include "viz/panels/panel_table.h"
#include "viz/theme.h"

namespace flashviz::interop {
namespace {

// ---------------------------------------------------------------------------------------------------------
// [SECTION] device helpers
// ---------------------------------------------------------------------------------------------------------

void Check(cudaError_t status, const char* what) {
  if (status != cudaSuccess) throw InputError(Sprintf("CUDA error %s: %s", what, cudaGetErrorString(status)));
}

// A device allocation that frees itself.
class DeviceBuffer {
 public:
  explicit DeviceBuffer(std::size_t bytes) {
    Check(cudaMalloc(&data_, std::max<std::size_t>(bytes, 16)), "allocating");
  }
  ~DeviceBuffer() { cudaFree(data_); }
  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;
  template <class T>
  T* as() const { return static_cast<T*>(data_); }

 private:
  void* data_ = nullptr;
};

std::unique_ptr<DeviceBuffer> Upload(const std::vector<float>& host) {
  auto buffer = std::make_unique<DeviceBuffer>(host.size() * sizeof(float));
  Check(cudaMemcpy(buffer->as<float>(), host.data(), host.size() * sizeof(float), cudaMemcpyHostToDevice), "uploading");
  return buffer;
}

__global__ void AbsoluteDifference(const float* a, const float* b, float* out, long long count) {
  for (long long k = blockIdx.x * static_cast<long long>(blockDim.x) + threadIdx.x; k < count;
       k += static_cast<long long>(gridDim.x) * blockDim.x)
    out[k] = fabsf(a[k] - b[k]);
}

// The largest finite |value| (masked −∞ and NaN left out); non-negative floats order like their bits.
__global__ void MaxFiniteMagnitude(const float* values, long long count, unsigned* result) {
  unsigned best = 0;
  for (long long k = blockIdx.x * static_cast<long long>(blockDim.x) + threadIdx.x; k < count;
       k += static_cast<long long>(gridDim.x) * blockDim.x) {
    const float v = fabsf(values[k]);
    if (v <= 3.0e38f) best = max(best, __float_as_uint(v));
  }
  atomicMax(result, best);
}

float MaxFiniteMagnitudeOf(const float* device_values, long long count) {
  DeviceBuffer result(sizeof(unsigned));
  Check(cudaMemset(result.as<unsigned>(), 0, sizeof(unsigned)), "clearing");
  MaxFiniteMagnitude<<<std::min<long long>((count + 255) / 256, 1024), 256>>>(device_values, count,
                                                                              result.as<unsigned>());
  Check(cudaGetLastError(), "finding the value range");
  unsigned bits = 0;
  Check(cudaMemcpy(&bits, result.as<unsigned>(), sizeof bits, cudaMemcpyDeviceToHost), "reading the value range");
  float value;
  std::memcpy(&value, &bits, sizeof value);
  return value;
}

// ---------------------------------------------------------------------------------------------------------
// [SECTION] colour tables: the same colour scales as the step view's heatmaps
// ---------------------------------------------------------------------------------------------------------

ColorLut DivergingLut() {
  ColorLut lut;
  for (int k = 0; k < 256; ++k) lut[static_cast<std::size_t>(k)] = DivergingColor(-1.0 + 2.0 * k / 255.0);
  return lut;
}
ColorLut SequentialLut() {
  ColorLut lut;
  for (int k = 0; k < 256; ++k) lut[static_cast<std::size_t>(k)] = SequentialColor(k / 255.0);
  return lut;
}

// A texture side for a matrix side: one texel per cell up to 1024, pooled beyond.
int TextureSide(int cells) { return std::clamp(cells, 1, 1024); }

// The variants whose workspace is S then P in fp32, B·H·N² each (the registry row describes its workspace so).
bool WorkspaceHoldsScoresThenProbabilities(const cuda::VariantInfo& info) {
  return std::string_view(info.workspace).starts_with("S and P: 2·B·H·N² fp32");
}

// The problem as one head of the registry's shape.
cuda::AttentionShape OneHead(const AttentionProblem& p) {
  cuda::AttentionShape shape;
  shape.n = p.n;
  shape.d = p.d;
  shape.scale = static_cast<float>(p.scale);
  shape.causal = p.causal;
  return shape;
}

// `launch` once to warm up, then `repeats` times between CUDA events: the view's median and minimum.
template <class Launch>
void TimeVariant(const Launch& launch, int repeats, LiveGpuView& view) {
  Check(launch(), "launching the kernel (warm-up)");
  Check(cudaDeviceSynchronize(), "running the kernel");
  cudaEvent_t start, stop;
  Check(cudaEventCreate(&start), "creating an event");
  Check(cudaEventCreate(&stop), "creating an event");
  std::vector<float> ms;
  for (int run = 0; run < std::max(1, repeats); ++run) {
    Check(cudaEventRecord(start), "recording an event");
    Check(launch(), "launching the kernel");
    Check(cudaEventRecord(stop), "recording an event");
    Check(cudaEventSynchronize(stop), "running the kernel");
    float elapsed = 0;
    Check(cudaEventElapsedTime(&elapsed, start, stop), "reading the timer");
    ms.push_back(elapsed);
  }
  cudaEventDestroy(start);
  cudaEventDestroy(stop);
  std::sort(ms.begin(), ms.end());
  view.variant_ms_median = ms[ms.size() / 2];
  view.variant_ms_min = ms.front();
  view.variant_repeats = static_cast<int>(ms.size());
}

}  // namespace

// ---------------------------------------------------------------------------------------------------------
// [SECTION] LiveGpuController
// ---------------------------------------------------------------------------------------------------------

LiveGpuController::LiveGpuController() = default;
LiveGpuController::~LiveGpuController() = default;

CudaGlTexture& LiveGpuController::Texture(int slot, int width, int height, bool force_host_copy) {
  auto& texture = textures_[slot];
  const bool wanted_host_copy = force_host_copy;
  const bool has_host_copy = texture && texture->path() == CudaGlTexture::Path::kHostCopy &&
                             texture->host_copy_reason() == "host copy chosen (comparison mode)";
  if (!texture || texture->width() != width || texture->height() != height || wanted_host_copy != has_host_copy)
    texture = std::make_unique<CudaGlTexture>(width, height, force_host_copy);
  return *texture;
}

void LiveGpuController::Service(Model& model, UiState& ui) {
  LiveGpuView& view = model.mutable_live_gpu();
  if (!checked_) {
    checked_ = true;
    view.built_with_cuda = true;
    view.unavailable_reason = cuda::CudaDeviceUnavailableReason();
    view.device = cuda::CudaDeviceDescription();
  }
  if (!view.unavailable_reason.empty() || !model.has_problem()) return;
  LiveGpuRequest& request = LiveGpuState(ui);
  const PanelInfo* panel = FindPanel("gpu");
  const bool open = panel && IsPanelOpen(ui, *panel);
  const bool stale = view.has_result && view.problem_version != model.problem_version();
  const bool first_look = open && !view.has_result && ui.active_tab == "gpu";  // the tab was just brought up
  if (request.run || first_look || (open && request.rerun_on_change && stale)) {
    request.run = false;
    Run(model, request);
  }
}

void LiveGpuController::Run(Model& model, const LiveGpuRequest& request) {
  LiveGpuView& view = model.mutable_live_gpu();
  const AttentionProblem& p = model.problem();
  const AttentionInputs& in = model.inputs();
  view.has_result = true;
  view.problem_version = model.problem_version();
  view.error.clear();
  view.images.clear();
  view.draw_ms = 0;
  view.backward = p.backward();
  view.gpu_m_after.clear();
  view.gpu_dk_after.clear();
  try {
    model.WaitIdle();  // the float64 reference is computed in the background
    const Reference* reference = model.reference();
    if (!reference) throw InputError("the float64 reference is not available");
    if (p.backward()) return RunBackward(model, request, *reference);

    // 1. The instrumented kernel on the model's tiles, and the cross-check.
    view.probe_note = cuda::TileProbeNotApplicable(p);
    if (view.probe_note.empty()) {
      const int probe_tile = std::max(0, model.state().info.i);
      const cuda::TileProbeResult probe = cuda::RunTileProbe(p, in, probe_tile, 0);
      const cuda::CrossCheck check = cuda::CompareWithModel(model.stepper(), probe);
      view.probe_kernel = probe.kernel;
      view.probe_ms = probe.kernel_ms;
      view.tr = probe.tr;
      view.tc = probe.tc;
      view.br = probe.br;
      view.d = probe.d;
      view.probe_tile = probe.probe_tile;
      view.probe_row = probe.probe_row;
      view.gpu_m_after = probe.m_after;
      view.gpu_l_after = probe.l_after;
      view.gpu_o_row_after = probe.o_row_after;
      view.model_m_after = check.model_m_after;
      view.model_l_after = check.model_l_after;
      view.model_o_row_after = check.model_o_row_after;
      view.agrees = check.agrees;
      view.summary = check.summary;
      view.max_m_error = check.max_m_error;
      view.max_l_rel_error = check.max_l_rel_error;
      view.max_o_error = check.max_o_error;
      view.worst_i = check.worst_i;
      view.worst_j = check.worst_j;
      view.worst_row = check.worst_row;
    } else {
      view.probe_note = "No cross-check: " + view.probe_note;
    }

    // 2. The chosen registry variant, timed, its output kept on the device for drawing.
    const cuda::AttentionShape shape = OneHead(p);
    const cuda::Variant* variant = cuda::FindVariant(request.variant);
    view.variant_id = request.variant;
    view.variant_repeats = 0;
    view.variant_note.clear();
    if (!variant) throw InputError("no kernel \"" + request.variant + "\" in the registry");
    view.variant_name = variant->info->name;
    if (const auto why = cuda::NotApplicable(*variant, shape, cuda::DType::kFp32)) {
      view.variant_note = std::string(variant->info->name) + " cannot run this problem: " + *why;
      return;
    }
    const std::size_t nd = static_cast<std::size_t>(p.n) * p.d;
    auto q = Upload(in.q), k = Upload(in.k), v = Upload(in.v);
    DeviceBuffer o(nd * sizeof(float));
    const std::size_t workspace_bytes =
        variant->workspace_bytes ? variant->workspace_bytes(shape, cuda::DType::kFp32) : 0;
    DeviceBuffer workspace(workspace_bytes);
    cuda::AttentionArgs args;
    args.shape = shape;
    args.dtype = cuda::DType::kFp32;
    args.q = q->as<float>();
    args.k = k->as<float>();
    args.v = v->as<float>();
    args.o = o.as<float>();
    args.workspace = workspace_bytes ? workspace.as<void>() : nullptr;
    args.workspace_bytes = workspace_bytes;
    TimeVariant([&] { return variant->launch(args); }, request.repeats, view);

    // 3. The images, coloured on the device: O, |O − O_ref|, and S, P where the workspace holds them.
    std::vector<float> reference_o(reference->o.begin(), reference->o.end());
    auto reference_device = Upload(reference_o);
    DeviceBuffer error(nd * sizeof(float));
    AbsoluteDifference<<<std::min<std::size_t>((nd + 255) / 256, 1024), 256>>>(
        o.as<float>(), reference_device->as<float>(), error.as<float>(), static_cast<long long>(nd));
    Check(cudaGetLastError(), "computing |O - O_ref|");
    view.variant_max_error = MaxFiniteMagnitudeOf(error.as<float>(), static_cast<long long>(nd));
    auto draw = [&](int slot, const char* title, const float* values, int rows, int cols, double lo, double hi,
                    bool diverging, double max_value) {
      Draw(view, request, slot, title, values, rows, cols, lo, hi, diverging, max_value);
    };
    const double o_max =
        std::max(1e-30, static_cast<double>(MaxFiniteMagnitudeOf(o.as<float>(), static_cast<long long>(nd))));
    draw(0, "O (GPU)", o.as<float>(), p.n, p.d, -o_max, o_max, true, 0);
    draw(1, "|O − O_ref|", error.as<float>(), p.n, p.d, 0.0, std::max(1e-30, view.variant_max_error), false,
         view.variant_max_error);
    if (WorkspaceHoldsScoresThenProbabilities(*variant->info)) {
      const long long cells = static_cast<long long>(p.n) * p.n;
      const float* s = workspace.as<float>();
      const float* prob = s + cells;
      const double s_max = std::max(1e-30, static_cast<double>(MaxFiniteMagnitudeOf(s, cells)));
      const double p_max = std::max(1e-30, static_cast<double>(MaxFiniteMagnitudeOf(prob, cells)));
      draw(2, "S = scale·QKᵀ (in HBM)", s, p.n, p.n, -s_max, s_max, true, 0);
      draw(3, "P = softmax(S) (in HBM)", prob, p.n, p.n, 0.0, p_max, false, p_max);
    } else {
      view.variant_note = std::string(variant->info->name) +
                          " never writes S or P to device memory: choose naive or tiled to see them";
    }
  } catch (const std::exception& e) {
    view.error = e.what();
  }
}

void LiveGpuController::Draw(LiveGpuView& view, const LiveGpuRequest& request, int slot, const char* title,
                             const float* values, int rows, int cols, double lo, double hi, bool diverging,
                             double max_value) {
  CudaGlTexture& texture = Texture(slot, TextureSide(cols), TextureSide(rows), request.force_host_copy);
  ColormapRange range{static_cast<float>(lo), static_cast<float>(hi), GetPalette().masked};
  view.draw_ms += texture.Draw(values, rows, cols, range, diverging ? DivergingLut() : SequentialLut());
  view.interop = texture.path() == CudaGlTexture::Path::kInterop;
  view.path_note = view.interop ? "CUDA-GL interop: the colormap kernel writes straight into the GL textures"
                                : texture.host_copy_reason();
  view.images.push_back({title, texture.gl_texture(), texture.width(), texture.height(), rows, cols, lo, hi,
                         diverging, max_value});
}

// The backward pass: the instrumented flash2_bwd on the model's tiles (dK_j, dV_j after every tile iteration
// against the stepper's), then the chosen backward variant timed (fp32, one head) on the O and L the model's
// forward pass saved, its dQ, |dQ − dQ_ref|, dK and dV drawn.
void LiveGpuController::RunBackward(Model& model, const LiveGpuRequest& request, const Reference& reference) {
  LiveGpuView& view = model.mutable_live_gpu();
  const AttentionProblem& p = model.problem();
  const AttentionInputs& in = model.inputs();
  const ForwardSaved& saved = *model.stepper().saved();

  // 1. The instrumented backward kernel and the cross-check.
  view.probe_note = cuda::BackwardProbeNotApplicable(p);
  if (view.probe_note.empty()) {
    const cuda::BackwardProbeResult probe = cuda::RunBackwardProbe(p, in, saved);
    const cuda::BackwardCrossCheck check = cuda::CompareBackwardWithModel(model.stepper(), probe);
    view.probe_kernel = probe.kernel;
    view.probe_ms = probe.kernel_ms;
    view.tr = probe.tr;
    view.tc = probe.tc;
    view.bc = probe.bc;
    view.br = p.br;
    view.d = probe.d;
    view.gpu_dk_after = probe.dk_after;
    view.gpu_dv_after = probe.dv_after;
    view.model_dk_after = check.model_dk_after;
    view.model_dv_after = check.model_dv_after;
    view.agrees = check.agrees;
    view.summary = check.summary;
    view.max_dk_error = check.max_dk_error;
    view.max_dv_error = check.max_dv_error;
    view.max_grad_error = check.max_grad_error;
    view.worst_i = check.worst_i;
    view.worst_j = check.worst_j;
  } else {
    view.probe_note = "No cross-check: " + view.probe_note;
  }

  // 2. The chosen backward variant, timed.
  const cuda::AttentionShape shape = OneHead(p);
  const cuda::BackwardVariant* variant = cuda::FindBackwardVariant(request.backward_variant);
  view.variant_id = request.backward_variant;
  view.variant_repeats = 0;
  view.variant_note.clear();
  if (!variant) throw InputError("no backward kernel \"" + request.backward_variant + "\" in the registry");
  view.variant_name = variant->info->name;
  if (const auto why = cuda::BackwardNotApplicable(*variant, shape, cuda::DType::kFp32)) {
    view.variant_note = std::string(variant->info->name) + " cannot run this problem: " + *why;
    return;
  }
  const std::size_t nd = static_cast<std::size_t>(p.n) * p.d;
  const std::vector<float> o32(saved.o.begin(), saved.o.end()), lse32(saved.lse.begin(), saved.lse.end());
  auto q = Upload(in.q), k = Upload(in.k), v = Upload(in.v), o = Upload(o32), dout = Upload(in.dout),
       lse = Upload(lse32);
  DeviceBuffer dq(nd * sizeof(float)), dk(nd * sizeof(float)), dv(nd * sizeof(float));
  const std::size_t workspace_bytes =
      variant->workspace_bytes ? variant->workspace_bytes(shape, cuda::DType::kFp32) : 0;
  DeviceBuffer workspace(workspace_bytes);
  cuda::BackwardArgs args;
  args.shape = shape;
  args.dtype = cuda::DType::kFp32;
  args.q = q->as<float>();
  args.k = k->as<float>();
  args.v = v->as<float>();
  args.o = o->as<float>();
  args.dout = dout->as<float>();
  args.lse = lse->as<float>();
  args.dq = dq.as<float>();
  args.dk = dk.as<float>();
  args.dv = dv.as<float>();
  args.workspace = workspace_bytes ? workspace.as<void>() : nullptr;
  args.workspace_bytes = workspace_bytes;
  TimeVariant([&] { return variant->launch(args); }, request.repeats, view);

  // 3. The images: dQ and its error against the float64 reference (Reference::o holds dQ in the backward pass),
  // dK and dV.
  const std::vector<float> reference_dq(reference.o.begin(), reference.o.end());
  auto reference_device = Upload(reference_dq);
  DeviceBuffer error(nd * sizeof(float));
  AbsoluteDifference<<<std::min<std::size_t>((nd + 255) / 256, 1024), 256>>>(
      dq.as<float>(), reference_device->as<float>(), error.as<float>(), static_cast<long long>(nd));
  Check(cudaGetLastError(), "computing |dQ - dQ_ref|");
  view.variant_max_error = MaxFiniteMagnitudeOf(error.as<float>(), static_cast<long long>(nd));
  const auto range = [&](const DeviceBuffer& b) {
    return std::max(1e-30, static_cast<double>(MaxFiniteMagnitudeOf(b.as<float>(), static_cast<long long>(nd))));
  };
  const double dq_max = range(dq), dk_max = range(dk), dv_max = range(dv);
  Draw(view, request, 0, "dQ (GPU)", dq.as<float>(), p.n, p.d, -dq_max, dq_max, true, 0);
  Draw(view, request, 1, "|dQ − dQ_ref|", error.as<float>(), p.n, p.d, 0.0, std::max(1e-30, view.variant_max_error),
       false, view.variant_max_error);
  Draw(view, request, 2, "dK (GPU)", dk.as<float>(), p.n, p.d, -dk_max, dk_max, true, 0);
  Draw(view, request, 3, "dV (GPU)", dv.as<float>(), p.n, p.d, -dv_max, dv_max, true, 0);
}

}  // namespace flashviz::interop
