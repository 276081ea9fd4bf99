// [SECTION] state from the options
// [SECTION] ImGui on a GL context (RAII)
// [SECTION] one offscreen frame (--screenshot)
// [SECTION] the frame-time benchmark (--bench-frames)
// [SECTION] the interactive window: one turn of the main loop
#include "app/gui/gui_app.h"

#include <epoxy/gl.h>
#define GLFW_INCLUDE_NONE
#include <GLFW/glfw3.h>
#include <backends/imgui_impl_glfw.h>
#include <backends/imgui_impl_opengl3.h>

#include <algorithm>
#include <chrono>
#include <utility>
#include <cmath>
#include <cstdio>
#include <cstdint>
#include <cstdlib>
#include <deque>
#include <thread>
#include <vector>

#include "app/cli/progress.h"
#include "app/gui/controller.h"
#include "app/gui/session.h"
#include "app/io/animation.h"
#include "kernels/common/files.h"
#include "kernels/common/format.h"
#include "viz/export.h"
#include "viz/lessons.h"
#include "viz/panels/lesson_panel.h"
#include "viz/panels/panel_table.h"
#include "viz/raster.h"
#ifdef FLASHVIZ_LIVE_GPU
#include "app/interop/live_gpu_controller.h"
#endif

namespace flashviz {
namespace {

// ---------------------------------------------------------------------------------------------------------
// [SECTION] state from the options
// ---------------------------------------------------------------------------------------------------------

// --scale as the form holds it: the default 1/√d, none, or the resolved number.
void SetScaleMode(const std::string& option, double resolved, ProblemForm& f) {
  if (option.empty()) {
    f.scale_mode = ProblemForm::ScaleMode::kDefault;
  } else if (option == "none") {
    f.scale_mode = ProblemForm::ScaleMode::kNone;
  } else {
    f.scale_mode = ProblemForm::ScaleMode::kCustom;
    f.scale = resolved;
  }
}

ProblemForm FormFromOptions(const ProblemOptions& o, const AttentionProblem& resolved) {
  ProblemForm f;
  f.n = resolved.n;
  f.d = resolved.d;
  f.tiles_from_sram = !o.br && !o.bc;
  f.br = resolved.br;
  f.bc = resolved.bc;
  f.sram_bytes = resolved.sram_bytes;
  f.order = resolved.order;
  f.pass = resolved.pass;
  f.dout_path = o.dout;
  SetScaleMode(o.scale, resolved.scale, f);
  f.causal = resolved.causal;
  f.seed = o.seed;
  f.input_path = o.input;
  f.batch = o.batch;
  return f;
}

ProblemForm DecodeFormFromOptions(const ProblemOptions& o, const DecodeProblem& resolved) {
  ProblemForm f;
  f.decode = true;
  f.d = resolved.d();
  f.kv_len = resolved.kv_len();
  f.heads = resolved.shape.heads;
  f.kv_heads = resolved.shape.kv_heads;
  f.q_rows = resolved.shape.q_rows;
  f.page = resolved.page;
  f.splits_from_sram = resolved.splits_from_sram;
  f.splits = resolved.splits;
  f.sram_bytes = resolved.sram_bytes;
  SetScaleMode(o.scale, resolved.shape.scale, f);
  f.seed = o.seed;
  return f;
}

ProblemForm RingFormFromOptions(const ProblemOptions& o, const RingProblem& resolved) {
  ProblemForm f;
  f.ring = true;
  f.n = resolved.n;
  f.d = resolved.d;
  f.ring_devices = resolved.devices;
  f.zigzag = resolved.zigzag();
  f.causal = resolved.causal;
  f.tiles_from_sram = !o.br && !o.bc;
  f.br = resolved.br;
  f.bc = resolved.bc;
  f.sram_bytes = resolved.sram_bytes;
  f.order = LoopOrder::kQOuter;
  f.ring_tflops = resolved.device_tflops;
  f.ring_link_gbps = resolved.link_gbps;
  SetScaleMode(o.scale, resolved.scale, f);
  f.seed = o.seed;
  return f;
}

}  // namespace

void InitGuiState(const GuiOptions& o, Model& model, UiState& ui) {
  if (!ParseTheme(o.theme, &ui.appearance.theme)) throw UsageError("--theme " + o.theme + ": expected dark or light");
  if (o.width < 64 || o.height < 64 || o.width > 16384 || o.height > 16384)
    throw UsageError(Sprintf("--width %d --height %d: each must be between 64 and 16384", o.width, o.height));
  std::int64_t step = 0;
  const Lesson* lesson = nullptr;
  int lesson_stop = 0;
  if (!o.lesson.empty()) {
    if (!o.session.empty() || o.problem_given || o.step)
      throw UsageError("--lesson gives the problem and the step: leave out --session, --step and the problem options");
    const std::size_t colon = o.lesson.find(':');
    lesson = FindLesson(o.lesson.substr(0, colon));
    std::string ids;
    for (const Lesson& l : ShippedLessons()) ids += (ids.empty() ? "" : ", ") + l.id;
    if (!lesson) throw UsageError("--lesson " + o.lesson + ": no such lesson (one of " + ids + ")");
    if (colon != std::string::npos) {
      const std::string number = o.lesson.substr(colon + 1);
      char* end = nullptr;
      const long stop = std::strtol(number.c_str(), &end, 10);
      if (number.empty() || *end != '\0' || stop < 1 || stop > static_cast<long>(lesson->stops.size()))
        throw UsageError(Sprintf("--lesson %s: the stop must be a number from 1 to %zu", o.lesson.c_str(),
                                 lesson->stops.size()));
      lesson_stop = static_cast<int>(stop) - 1;
    }
    ui.form = FormAtStop(*lesson, lesson_stop);
  } else if (!o.session.empty()) {
    if (o.problem_given) throw UsageError("--session gives the problem: leave out the problem options, or the session");
    step = LoadSession(o.session, ui);
  } else if (o.problem_given && o.problem.ring) {
    if (!o.problem.input.empty()) throw UsageError("--input: the GUI's ring view takes random inputs from --seed");
    const LoadedRingProblem counted = LoadRingProblem(o.problem, false);
    ui.form = RingFormFromOptions(o.problem, counted.problem);
  } else if (o.problem_given && o.problem.decode) {
    const LoadedDecodeProblem counted = LoadDecodeProblem(o.problem, false);
    ui.form = DecodeFormFromOptions(o.problem, counted.problem);
  } else if (o.problem_given) {
    const LoadedProblem counted = LoadProblem(o.problem, false);
    ui.form = FormFromOptions(o.problem, counted.problem);
  } else {
    ui.form = FindPreset("first-lesson")->form;  // a bare `flashviz` opens the first lesson
  }
  if (o.present) ui.appearance.presentation = true;  // over what a session says
  if (o.ui_scale) {
    if (!(*o.ui_scale >= 0.5f && *o.ui_scale <= 4.0f))
      throw UsageError(Sprintf("--ui-scale %g: expected a factor between 0.5 and 4", static_cast<double>(*o.ui_scale)));
    ui.appearance.ui_scale = *o.ui_scale;
  }
  InspectInputFile(ui);
  if (!ApplyForm(model, ui)) {
    if (o.problem_given) throw UsageError(ui.form_status.problem_error);  // the options asked for it
    throw InputError(ui.form_status.problem_error);                      // the session did
  }
  if (o.step) {
    if (*o.step < 0 || *o.step >= model.step_count())
      throw UsageError(Sprintf("--step %lld: this problem has steps 0 to %lld", static_cast<long long>(*o.step),
                               static_cast<long long>(model.step_count() - 1)));
    step = *o.step;
  }
  ui.cursor.step = std::clamp<std::int64_t>(step, 0, model.step_count() - 1);
  model.SetStep(ui.cursor.step);
  if (lesson) {
    // The lesson panel moves the cursor and brings the stop's panel to the front on the first frame.
    StartLesson(ui, lesson->id, lesson_stop);
    if (const auto stop_step = StopStep(model.schedule(), lesson->stops[static_cast<std::size_t>(lesson_stop)]))
      model.SetStep(*stop_step);
  }
  if (!o.panel.empty() && !FocusPanel(ui, o.panel))
    throw UsageError("--panel " + o.panel + ": no such panel (one of " + PanelIdList() + ")");
  ui.requests.Push(UiRequest::kRebuildStyle);
}

namespace {

// ---------------------------------------------------------------------------------------------------------
// [SECTION] ImGui on a GL context
// ---------------------------------------------------------------------------------------------------------

// ImGui 1.86's GLFW backend records only whether a key is down when a frame starts, so a key pressed and released
// between two frames (a quick tap while the loop sleeps in glfwWaitEventsTimeout, two taps in a row, keys sent
// by another program) would be seen once or not at all. Key events are queued here and handed to the backend
// before each frame, stopping at the first event that would change a key a frame already saw change: every
// press then spans at least one frame, in order, as ImGui 1.87's input queue does.
class KeyQueue {
 public:
  void Install(GLFWwindow* window) {
    glfwSetWindowUserPointer(window, this);
    glfwSetKeyCallback(window, &KeyQueue::OnKey);  // replaces the backend's; Deliver calls it
  }
  void Deliver(GLFWwindow* window) {
    std::vector<int> changed;  // keys whose state this frame already changed
    while (!queue_.empty()) {
      const Event e = queue_.front();
      if (e.action != GLFW_REPEAT) {
        if (std::find(changed.begin(), changed.end(), e.key) != changed.end()) break;
        changed.push_back(e.key);
      }
      queue_.pop_front();
      ImGui_ImplGlfw_KeyCallback(window, e.key, e.scancode, e.action, e.mods);
    }
  }
  bool pending() const { return !queue_.empty(); }

 private:
  struct Event {
    int key, scancode, action, mods;
  };
  static void OnKey(GLFWwindow* window, int key, int scancode, int action, int mods) {
    static_cast<KeyQueue*>(glfwGetWindowUserPointer(window))->queue_.push_back({key, scancode, action, mods});
  }
  std::deque<Event> queue_;
};

class ImGuiOnGl {
 public:
  explicit ImGuiOnGl(GLFWwindow* window) : window_(window) {
    previous_context_ = ImGui::GetCurrentContext();
    context_ = ImGui::CreateContext();
    ImGui::SetCurrentContext(context_);
    ImGuiIO& io = ImGui::GetIO();
    io.IniFilename = nullptr;  // the layout is computed; sessions hold what the user set
    io.LogFilename = nullptr;
    if (window_ && !ImGui_ImplGlfw_InitForOpenGL(window_, true)) throw InputError("ImGui: the GLFW backend failed");
    if (!ImGui_ImplOpenGL3_Init("#version 330 core")) {
      if (window_) ImGui_ImplGlfw_Shutdown();
      ImGui::DestroyContext(context_);
      ImGui::SetCurrentContext(previous_context_);
      throw InputError("ImGui: the OpenGL 3 renderer failed to load its GL functions (libGL.so.1)");
    }
    if (window_) key_queue_.Install(window_);
    else InstallGlfwKeyMap(io);
    previous_textures_ = SetTextureBackend(&textures_);
  }
  ~ImGuiOnGl() {
    SetTextureBackend(previous_textures_);
    textures_.ReleaseCache();
    ImGui_ImplOpenGL3_Shutdown();
    if (window_) ImGui_ImplGlfw_Shutdown();
    ImGui::DestroyContext(context_);
    ImGui::SetCurrentContext(previous_context_);
  }
  ImGuiOnGl(const ImGuiOnGl&) = delete;
  ImGuiOnGl& operator=(const ImGuiOnGl&) = delete;

  static void UploadFonts() {
    ImGui_ImplOpenGL3_DestroyFontsTexture();
    ImGui_ImplOpenGL3_CreateFontsTexture();
  }

  // Steps 2-4 of a frame: new frame, the UI, render into the bound framebuffer. `ui_ms` (optional) receives
  // the time spent before the GL calls: the UI, the model and ImGui's draw lists.
  // `report`, when given, is filled with where this frame put its parts.
  void Frame(Model& model, UiState& ui, double dt, int fb_width, int fb_height, double* ui_ms = nullptr,
             FrameReport* report = nullptr) {
    const auto start = std::chrono::steady_clock::now();
    ApplyStyle(ui, &ImGuiOnGl::UploadFonts);
    ImGui_ImplOpenGL3_NewFrame();
    if (window_) {
      key_queue_.Deliver(window_);
      ImGui_ImplGlfw_NewFrame();
    } else {
      ImGuiIO& io = ImGui::GetIO();
      io.DisplaySize = ImVec2(static_cast<float>(fb_width), static_cast<float>(fb_height));
      io.DisplayFramebufferScale = ImVec2(1, 1);
      io.DeltaTime = static_cast<float>(std::max(dt, 1e-4));
      io.MousePos = ImVec2(-FLT_MAX, -FLT_MAX);
    }
    ImGui::NewFrame();
#ifdef FLASHVIZ_LIVE_GPU
    live_gpu_.Service(model, ui);  // CUDA draws into GL textures: needs this frame's GL context
#endif
    {
      const ScopedFrameReport reporting(report);
      RunUiFrame(model, ui, dt);
    }
    ImGui::Render();
    if (ui_ms) *ui_ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
    glViewport(0, 0, fb_width, fb_height);
    const ImVec4 bg = ImGui::GetStyle().Colors[ImGuiCol_WindowBg];
    glClearColor(bg.x, bg.y, bg.z, 1.0f);
    glClear(GL_COLOR_BUFFER_BIT);
    ImGui_ImplOpenGL3_RenderDrawData(ImGui::GetDrawData());
  }
  // Key events still queued for the next frames: the loop should not wait for new input.
  bool input_pending() const { return key_queue_.pending(); }

 private:
  GLFWwindow* window_;
  KeyQueue key_queue_;
  ImGuiContext* previous_context_ = nullptr;
  ImGuiContext* context_ = nullptr;
  GlTextureBackend textures_;
  TextureBackend* previous_textures_ = nullptr;
#ifdef FLASHVIZ_LIVE_GPU
  interop::LiveGpuController live_gpu_;
#endif
};

// ---------------------------------------------------------------------------------------------------------
// [SECTION] one offscreen frame
// ---------------------------------------------------------------------------------------------------------

// The files a headless run reads (an HW4 input, a session), so that no output of the run may be one of them.
void AddInputs(const GuiOptions& o, CommandFiles& files) {
  for (const std::string* input : {&o.problem.input, &o.session})
    if (!input->empty()) files.AddInput(*input);
}

std::unique_ptr<GlContext> OffscreenContext(GlBackend backend) {
  std::string error;
  auto context = CreateOffscreenContext(backend, &error);
  if (!context) throw InputError("no offscreen OpenGL context: " + error);
  return context;
}

GlBackend ParsedGlBackend(const GuiOptions& o) {
  GlBackend backend = GlBackend::kAuto;
  if (!ParseGlBackend(o.gl, &backend)) throw UsageError("--gl " + o.gl + ": expected auto, egl or glfw");
  return backend;
}

int RunScreenshot(const GuiOptions& o) {
  const GlBackend backend = ParsedGlBackend(o);
  // The PNG may be neither the HW4 input nor the session the frame is made from; checked before rendering.
  CommandFiles files;
  AddInputs(o, files);
  OutputFile& png = files.AddOutput(o.screenshot);
  const OffscreenFrame frame = RenderOffscreenFrame(o, backend);
  png.Write(EncodePng(frame.image));
  files.Commit();
  // The PNG itself may be standard output (--screenshot /dev/stdout): then what happened goes to stderr.
  std::FILE* say = png.writes_through() ? stderr : stdout;
  std::fprintf(say, "wrote %s (%d × %d) with %s\n", o.screenshot.c_str(), frame.image.width, frame.image.height,
               frame.renderer.c_str());
  if (!frame.live_gpu.empty()) std::fprintf(say, "%s\n", frame.live_gpu.c_str());
  return 0;
}

// ---------------------------------------------------------------------------------------------------------
// [SECTION] exports without a window: CSVs and animations
// ---------------------------------------------------------------------------------------------------------

int RunCsvExport(const GuiOptions& o) {
  CommandFiles files;
  AddInputs(o, files);
  OutputFile* tile = o.tile_csv.empty() ? nullptr : &files.AddOutput(o.tile_csv);
  OutputFile* history = o.history_csv.empty() ? nullptr : &files.AddOutput(o.history_csv);
  Model model;
  UiState ui;
  InitGuiState(o, model, ui);
  model.WaitIdle();
  model.Update();
  if (tile) tile->Write(TileCsv(model));
  if (history) history->Write(HistoryCsv(model));
  files.Commit();
  std::fprintf(stderr, "wrote the step %lld (%s) of N = %d%s%s\n", static_cast<long long>(model.step()),
               std::string(PhaseName(model.state().info.phase)).c_str(), model.problem().n,
               tile ? (": " + o.tile_csv).c_str() : "", history ? (", " + o.history_csv).c_str() : "");
  return 0;
}

// "A:B" (inclusive) within [0, count); the tile iteration around `around` when empty.
std::pair<std::int64_t, std::int64_t> StepRange(const std::string& text, const Model& model, std::int64_t around) {
  const std::int64_t last = model.step_count() - 1;
  if (text.empty()) {
    const Schedule& s = model.schedule();
    std::int64_t begin = 0, end = last;
    for (std::int64_t t = 0; t < s.tile_iteration_count(); ++t) {
      const std::int64_t start = s.TileIterationStart(t);
      if (start <= std::max<std::int64_t>(around, 0)) begin = start;
      else {
        end = start - 1;
        break;
      }
    }
    if (s.tile_iteration_count() == 0) begin = 0;
    return {begin, std::max(begin, end)};
  }
  const std::size_t colon = text.find(':');
  char* end_a = nullptr;
  char* end_b = nullptr;
  const long long a = std::strtoll(text.c_str(), &end_a, 10);
  const long long b = colon == std::string::npos ? -1 : std::strtoll(text.c_str() + colon + 1, &end_b, 10);
  if (colon == std::string::npos || end_a != text.c_str() + colon || !end_b || *end_b != '\0' || a < 0 || b < a ||
      b > last)
    throw UsageError(Sprintf("--steps %s: expected A:B with 0 ≤ A ≤ B ≤ %lld", text.c_str(), static_cast<long long>(last)));
  return {a, b};
}

int RunRecord(const GuiOptions& o) {
  const auto format = AnimationFormatFor(o.record);
  if (!format) throw UsageError("--record " + o.record + ": the file name must end in .gif or .mp4");
  if (const std::string reason = AnimationUnavailableReason(*format); !reason.empty()) throw InputError(reason);
  const GlBackend backend = ParsedGlBackend(o);
  CommandFiles files;
  AddInputs(o, files);
  OutputFile& out = files.AddOutput(o.record);
  const std::unique_ptr<GlContext> context = OffscreenContext(backend);
  Model model;
  UiState ui;
  InitGuiState(o, model, ui);
  const auto [first, last] = StepRange(o.steps, model, o.step.value_or(ui.cursor.step));
  const auto started = std::chrono::steady_clock::now();
  ImGuiOnGl imgui(nullptr);
  Framebuffer fbo(o.width, o.height);
  if (!fbo.complete()) throw InputError(Sprintf("cannot create a %d × %d framebuffer", o.width, o.height));
  fbo.Bind();
  // Each step after the first is `transition_frames` frames: the transition from the step before, as playback
  // draws it (a step by hand takes 0.3 s, so frame k of K is drawn k/K of the way through).
  const int per_step = ui.appearance.animate ? o.transition_frames : 1;
  auto encoder = OpenAnimationEncoder(*format, o.width, o.height, o.fps * per_step);
  constexpr double kStepSeconds = 0.3;
  ProgressLine progress("record", "steps", last - first + 1);
  std::int64_t frames = 0;
  for (std::int64_t step = first; step <= last; ++step) {
    ui.cursor.step = step;
    // A frame reaches the step (and starts its transition); the first step settles the layout and waits for the
    // background work (O in HBM), as a screenshot does.
    imgui.Frame(model, ui, 0.0, o.width, o.height);
    if (step == first) {
      imgui.Frame(model, ui, 0.0, o.width, o.height);
      model.WaitIdle();
      ui.cursor.transition = 1.0;
    }
    const int count = step == first ? 1 : per_step;
    for (int k = 1; k <= count; ++k) {
      imgui.Frame(model, ui, count == 1 ? kStepSeconds : kStepSeconds / count, o.width, o.height);
      glFinish();
      encoder->Add(fbo.Read());
      ++frames;
    }
    progress.Update(step - first + 1);
  }
  progress.Finish();
  const std::string bytes = encoder->Finish();
  out.Write(bytes);
  files.Commit();
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  std::fprintf(stderr, "wrote %s: steps %lld to %lld, %lld frames of %d × %d at %g fps, %s, in %.1f s (%s)\n",
               o.record.c_str(), static_cast<long long>(first), static_cast<long long>(last),
               static_cast<long long>(frames), o.width, o.height, o.fps * per_step,
               HumanBytes(static_cast<double>(bytes.size())).c_str(), seconds, context->description().c_str());
  return 0;
}

// ---------------------------------------------------------------------------------------------------------
// [SECTION] the frame-time benchmark
// ---------------------------------------------------------------------------------------------------------

double Percentile(std::vector<double> values, double q) {
  std::sort(values.begin(), values.end());
  const std::size_t k = static_cast<std::size_t>(std::min<double>(values.size() - 1, std::ceil(q * values.size()) - 1));
  return values[k];
}

int RunBenchFrames(const GuiOptions& o) {
  // A real window where there is a display (what a user sees), else an EGL context and a framebuffer.
  std::string error;
  std::unique_ptr<GlContext> context;
  const char* display = std::getenv("DISPLAY");
  if (display && *display) context = CreateWindowContext(o.width, o.height, "flashviz --bench-frames", true, &error);
  if (!context) context = CreateOffscreenContext(GlBackend::kAuto, &error);
  if (!context) throw InputError("no OpenGL context for --bench-frames: " + error);
  GLFWwindow* window = context->window();
  if (window) glfwSwapInterval(0);  // measure the frame, not the display's refresh
  Model model;
  UiState ui;
  InitGuiState(o, model, ui);
  ImGuiOnGl imgui(window);
  std::unique_ptr<Framebuffer> fbo;
  if (!window) {
    fbo = std::make_unique<Framebuffer>(o.width, o.height);
    if (!fbo->complete()) throw InputError("cannot create a framebuffer for --bench-frames");
    fbo->Bind();
  }
  // Every frame moves the cursor one phase, so each frame pays for a fresh StepState (the playback case).
  constexpr int kWarmUp = 5;
  std::vector<double> ms, ui_ms;
  int in_transition = 0;  // measured frames drawn inside a step's transition
  if (o.bench_transitions) ui.appearance.animate = true;
  ms.reserve(static_cast<std::size_t>(o.bench_frames));
  ui_ms.reserve(static_cast<std::size_t>(o.bench_frames));
  double dt = 1.0 / 60.0;
  for (int frame = 0; frame < kWarmUp + o.bench_frames; ++frame) {
    const auto t0 = std::chrono::steady_clock::now();
    int w = o.width, h = o.height;
    if (window) {
      glfwPollEvents();
      glfwGetFramebufferSize(window, &w, &h);
    }
    // Playback moves one phase a frame; --bench-transitions one every 4 frames, each drawn inside the transition
    // (a step by hand takes 0.3 s: 0.075 s a frame is a quarter of it).
    const bool next_step = !o.bench_transitions || frame % 4 == 0;
    if (next_step) ui.cursor.step = model.step() + 1 < model.step_count() ? model.step() + 1 : 0;
    double frame_ui_ms = 0;
    imgui.Frame(model, ui, o.bench_transitions ? 0.075 : dt, w, h, &frame_ui_ms);
    if (frame >= kWarmUp && InTransition(ui)) ++in_transition;
    glFinish();  // count the rasterization too (llvmpipe renders lazily)
    if (window) glfwSwapBuffers(window);
    const auto t1 = std::chrono::steady_clock::now();
    dt = std::chrono::duration<double>(t1 - t0).count();
    if (frame >= kWarmUp) {
      ms.push_back(dt * 1000.0);
      ui_ms.push_back(frame_ui_ms);
    }
  }
  const double median = Percentile(ms, 0.5), p95 = Percentile(ms, 0.95);
  std::printf("bench-frames: %d frames (after %d warm-up), %d × %d, N = %d, d = %d, B_r = %d, B_c = %d, %s order, "
              "cursor +1 phase per frame\n",
              o.bench_frames, kWarmUp, o.width, o.height, model.problem().n, model.problem().d, model.problem().br,
              model.problem().bc, std::string(LoopOrderName(model.problem().order)).c_str());
  std::printf("renderer: %s\n", context->description().c_str());
  if (o.bench_transitions) std::printf("frames inside a transition: %d of %d\n", in_transition, o.bench_frames);
  std::printf("frame time: median %.2f ms (%.1f fps), p95 %.2f ms (%.1f fps)\n", median, 1000.0 / median, p95,
              1000.0 / p95);
  std::printf("of which UI and model (before GL): median %.2f ms, p95 %.2f ms\n", Percentile(ui_ms, 0.5),
              Percentile(ui_ms, 0.95));
  return 0;
}

// ---------------------------------------------------------------------------------------------------------
// [SECTION] the interactive window
// ---------------------------------------------------------------------------------------------------------

}  // namespace

OffscreenFrame RenderOffscreenFrame(const GuiOptions& o, GlBackend backend) {
  const std::unique_ptr<GlContext> context = OffscreenContext(backend);
  Model model;
  UiState ui;
  InitGuiState(o, model, ui);
  // Offscreen even in a hidden GLFW window: the frame's size is the framebuffer's, not the window's, and no
  // input comes from it, so ImGui gets no platform backend.
  ImGuiOnGl imgui(nullptr);
  Framebuffer fbo(o.width, o.height);
  if (!fbo.complete()) throw InputError(Sprintf("cannot create a %d × %d framebuffer", o.width, o.height));
  fbo.Bind();
  // A few frames settle the layout (tab selection, sizes known after the first draw); background work
  // (O in HBM, the sweep, the exact rows) is waited for so the picture is complete.
  for (int frame = 0; frame < 3; ++frame) imgui.Frame(model, ui, 1.0 / 60.0, o.width, o.height);
  model.WaitIdle();
  OffscreenFrame out;
  for (int frame = 0; frame < 2; ++frame) imgui.Frame(model, ui, 1.0 / 60.0, o.width, o.height, nullptr, &out.report);
  glFinish();
  out.image = fbo.Read();
  out.renderer = context->description();
  if (const LiveGpuView& gpu = model.live_gpu(); gpu.has_result && !gpu.error.empty()) {
    out.live_gpu = "live GPU view failed: " + gpu.error;
  } else if (gpu.has_result) {
    out.live_gpu = Sprintf("live GPU view (%s): %s; %s", gpu.device.c_str(), gpu.path_note.c_str(),
                           gpu.summary.empty() ? gpu.probe_note.c_str() : gpu.summary.c_str());
    // The figures the tab shows, as a line of their own for the device scripts' summaries (docs/results/).
    out.live_gpu += "\nlive GPU timings:";
    if (gpu.variant_repeats > 0)
      out.live_gpu += Sprintf(" %s median %.3f ms, min %.3f ms over %d runs;", gpu.variant_id.c_str(),
                              gpu.variant_ms_median, gpu.variant_ms_min, gpu.variant_repeats);
    if (!gpu.probe_kernel.empty()) out.live_gpu += Sprintf(" %s %.3f ms;", gpu.probe_kernel.c_str(), gpu.probe_ms);
    out.live_gpu += Sprintf(" colormaps %.3f ms (%s)", gpu.draw_ms, gpu.interop ? "interop" : "host copy");
  }
  return out;
}

// ---------------------------------------------------------------------------------------------------------
// [SECTION] the interactive window
// ---------------------------------------------------------------------------------------------------------

struct InteractiveWindow::Parts {
  std::unique_ptr<GlContext> context;
  Model model;
  UiState ui;
  std::unique_ptr<ImGuiOnGl> imgui;
  FrameReport last_frame;
  std::chrono::steady_clock::time_point last = std::chrono::steady_clock::now();
};

InteractiveWindow::InteractiveWindow(const GuiOptions& o) : parts_(std::make_unique<Parts>()) {
  std::string error;
  parts_->context = CreateWindowContext(o.width, o.height, "flashviz: FlashAttention, tile by tile", true, &error);
  if (!parts_->context) throw InputError("cannot open a window (" + error + "); --screenshot works without a display");
  GLFWwindow* w = window();
  glfwSwapInterval(1);
  InitGuiState(o, parts_->model, parts_->ui);
  if (!o.ui_scale) {  // follow the monitor's scale on high-DPI screens unless asked otherwise
    float sx = 1, sy = 1;
    glfwGetWindowContentScale(w, &sx, &sy);
    if (sx > 1.2f) parts_->ui.appearance.ui_scale = std::min(sx, 3.0f);
  }
  parts_->imgui = std::make_unique<ImGuiOnGl>(w);
}

InteractiveWindow::~InteractiveWindow() = default;

GLFWwindow* InteractiveWindow::window() const { return parts_->context->window(); }
const Model& InteractiveWindow::model() const { return parts_->model; }
const UiState& InteractiveWindow::ui() const { return parts_->ui; }
const FrameReport& InteractiveWindow::last_frame() const { return parts_->last_frame; }

bool InteractiveWindow::Frame() {
  GLFWwindow* w = window();
  Parts& p = *parts_;
  if (glfwWindowShouldClose(w) || p.ui.requests.Pending(UiRequest::kQuit)) return false;
  // 1. Poll events; sleep while minimised, wait for input while nothing moves.
  if (glfwGetWindowAttrib(w, GLFW_ICONIFIED)) {
    glfwWaitEventsTimeout(0.25);
    return true;
  }
  if (p.ui.cursor.playing || p.model.busy() || p.imgui->input_pending() || InTransition(p.ui)) glfwPollEvents();
  else glfwWaitEventsTimeout(0.1);
  const auto now = std::chrono::steady_clock::now();
  const double dt = std::chrono::duration<double>(now - p.last).count();
  p.last = now;
  int fb_width = 0, fb_height = 0;
  glfwGetFramebufferSize(w, &fb_width, &fb_height);
  // 2-4. New frame, the panels, render. An export asked for in an earlier frame reads this one back: the frame
  // that asked still drew the Export dialog.
  const bool export_png = p.ui.png_export_pending;
  p.imgui->Frame(p.model, p.ui, dt, fb_width, fb_height, nullptr, &p.last_frame);
  if (export_png) {
    p.ui.png_export_pending = false;
    RgbaImage image = ReadWindowPixels(fb_width, fb_height);
    if (p.ui.export_kind == static_cast<int>(ExportKind::kCentrePng)) {
      int win_w = 1, win_h = 1;
      glfwGetWindowSize(w, &win_w, &win_h);
      image = CropImage(image, p.last_frame.centre, static_cast<float>(fb_width) / static_cast<float>(win_w),
                        static_cast<float>(fb_height) / static_cast<float>(win_h));
    }
    try {
      WriteWholeFile(p.ui.export_path, EncodePng(image));
      SetStatus(p.ui, Sprintf("wrote %s (%d × %d)", p.ui.export_path.c_str(), image.width, image.height));
    } catch (const InputError& e) {
      SetStatus(p.ui, e.what(), true);
    }
  }
  // 5. Swap.
  glfwSwapBuffers(w);
  return true;
}

int RunGui(const GuiOptions& o) {
  const int modes = !o.screenshot.empty() + (o.bench_frames > 0) + !o.record.empty() +
                    (!o.tile_csv.empty() || !o.history_csv.empty());
  if (modes > 1) throw UsageError("--screenshot, --bench-frames, --record and the CSV exports are one at a time");
  if (!o.record.empty()) return RunRecord(o);
  if (!o.tile_csv.empty() || !o.history_csv.empty()) return RunCsvExport(o);
  if (!o.screenshot.empty()) return RunScreenshot(o);
  if (o.bench_frames > 0) return RunBenchFrames(o);
  InteractiveWindow window(o);
  while (window.Frame()) {
  }
  return 0;
}

}  // namespace flashviz
