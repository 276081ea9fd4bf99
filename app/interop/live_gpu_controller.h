// The app side of the live GPU view: owns the CUDA buffers and the GL textures (registered with
// CUDA once per size), serves the panel's requests and publishes the results into Model::live_gpu().
// Call Service() once per frame with the GUI's GL context current, before the UI frame.
#pragma once

#include <map>
#include <memory>
#include <tuple>

#include "viz/model.h"
#include "viz/ui_state.h"

namespace flashviz::interop {

class CudaGlTexture;

class LiveGpuController {
 public:
  LiveGpuController();
  ~LiveGpuController();
  LiveGpuController(const LiveGpuController&) = delete;
  LiveGpuController& operator=(const LiveGpuController&) = delete;

  // Marks the view available (or says why not) on the first call, then runs when the panel asked for it or
  // when the problem changed and the panel wants re-runs.
  void Service(Model& model, UiState& ui);

 private:
  void Run(Model& model, const LiveGpuRequest& request);
  void RunBackward(Model& model, const LiveGpuRequest& request, const Reference& reference);
  // Colours `values` (rows × cols, on the device) into image `slot` and adds it to the view.
  void Draw(LiveGpuView& view, const LiveGpuRequest& request, int slot, const char* title, const float* values,
            int rows, int cols, double lo, double hi, bool diverging, double max_value);
  // A texture of this size for image `slot`, reused across runs while the size and path stay the same.
  CudaGlTexture& Texture(int slot, int width, int height, bool force_host_copy);

  bool checked_ = false;
  std::map<int, std::unique_ptr<CudaGlTexture>> textures_;
};

}  // namespace flashviz::interop
