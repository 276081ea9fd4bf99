#include "app/gui/session.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cstdint>
#include <limits>
#include <utility>

#include "kernels/common/files.h"
#include "kernels/common/format.h"
#include "viz/live_gpu.h"
#include "viz/panels/panel_table.h"
#include "viz/panels/vortex_panel.h"

namespace flashviz {
namespace {

using nlohmann::json;
constexpr int kSessionVersion = 1;
// A session is a few kilobytes of JSON; anything far larger is not one and is not read into memory.
constexpr std::int64_t kMaxSessionBytes = 1 << 20;

// Values read with their type and range checked: JSON numbers are doubles or 64-bit integers, and a value
// outside the field's range is refused by name instead of being converted (4294967360 is not an int).
class SessionReader {
 public:
  explicit SessionReader(const std::string& name) : name_(name) {}

  template <typename T>
  T Integer(const json& object, const char* key, T fallback, T low, T high) const {
    if (!object.contains(key)) return fallback;
    const json& value = object.at(key);
    bool in_range = false;
    T result{};
    if (value.is_number_unsigned()) {
      const std::uint64_t u = value.get<std::uint64_t>();
      in_range = std::cmp_greater_equal(u, low) && std::cmp_less_equal(u, high);
      result = static_cast<T>(u);
    } else if (value.is_number_integer()) {
      const std::int64_t i = value.get<std::int64_t>();
      in_range = std::cmp_greater_equal(i, low) && std::cmp_less_equal(i, high);
      result = static_cast<T>(i);
    } else {
      throw InputError(Sprintf("%s: \"%s\" must be an integer, not %s", name_.c_str(), key, Describe(value).c_str()));
    }
    if (!in_range)
      throw InputError(Sprintf("%s: \"%s\" = %s is out of range (%s to %s)", name_.c_str(), key, value.dump().c_str(),
                               std::to_string(low).c_str(), std::to_string(high).c_str()));
    return result;
  }

  double Real(const json& object, const char* key, double fallback, double low, double high) const {
    if (!object.contains(key)) return fallback;
    const json& value = object.at(key);
    if (!value.is_number())
      throw InputError(Sprintf("%s: \"%s\" must be a number, not %s", name_.c_str(), key, Describe(value).c_str()));
    const double result = value.get<double>();
    if (!(result >= low && result <= high))
      throw InputError(Sprintf("%s: \"%s\" = %s is out of range (%g to %g)", name_.c_str(), key, value.dump().c_str(),
                               low, high));
    return result;
  }

  bool Bool(const json& object, const char* key, bool fallback) const {
    if (!object.contains(key)) return fallback;
    if (!object.at(key).is_boolean())
      throw InputError(Sprintf("%s: \"%s\" must be true or false, not %s", name_.c_str(), key,
                               Describe(object.at(key)).c_str()));
    return object.at(key).get<bool>();
  }

  std::string String(const json& object, const char* key, const std::string& fallback) const {
    if (!object.contains(key)) return fallback;
    if (!object.at(key).is_string())
      throw InputError(Sprintf("%s: \"%s\" must be a string, not %s", name_.c_str(), key,
                               Describe(object.at(key)).c_str()));
    return object.at(key).get<std::string>();
  }

  const json& Object(const json& object, const char* key) const {
    if (!object.contains(key) || !object.at(key).is_object())
      throw InputError(Sprintf("%s: \"%s\" must be an object", name_.c_str(), key));
    return object.at(key);
  }

 private:
  static std::string Describe(const json& value) {
    std::string text = value.dump();
    if (text.size() > 24) text = text.substr(0, 21) + "...";
    return text;
  }
  const std::string& name_;
};

const char* ScaleModeName(ProblemForm::ScaleMode mode) {
  switch (mode) {
    case ProblemForm::ScaleMode::kNone: return "none";
    case ProblemForm::ScaleMode::kCustom: return "custom";
    default: return "default";
  }
}

}  // namespace

std::string SessionToJson(const UiState& ui, std::int64_t step) {
  const ProblemForm& f = ui.form;
  json problem = {{"n", f.n},
                  {"d", f.d},
                  {"tiles", f.tiles_from_sram ? "sram" : "explicit"},
                  {"sram_bytes", f.sram_bytes},
                  {"br", f.br},
                  {"bc", f.bc},
                  {"order", std::string(LoopOrderName(f.order))},
                  {"pass", std::string(PassName(f.pass))},
                  {"dout", f.dout_path},
                  {"scale_mode", ScaleModeName(f.scale_mode)},
                  {"scale", f.scale},
                  {"causal", f.causal},
                  {"seed", f.seed},
                  {"input", f.input_path},
                  {"batch", f.batch},
                  {"decode", f.decode},
                  {"kv_len", f.kv_len},
                  {"heads", f.heads},
                  {"kv_heads", f.kv_heads},
                  {"q_rows", f.q_rows},
                  {"page", f.page},
                  {"splits", f.splits_from_sram ? json("sram") : json(f.splits)},
                  {"ring", f.ring},
                  {"ring_devices", f.ring_devices},
                  {"zigzag", f.zigzag},
                  {"ring_tflops", f.ring_tflops},
                  {"ring_link_gbps", f.ring_link_gbps}};
  json panels = json::object();
  for (const PanelInfo& p : Panels()) panels[p.id] = IsPanelOpen(ui, p);
  json session = {{"flashviz_session", kSessionVersion},
                  {"problem", problem},
                  {"step", step},
                  {"panels", panels},
                  {"tab", ui.active_tab},
                  {"selected_row", ui.cursor.selected_row},
                  {"theme", ThemeName(ui.appearance.theme)},
                  {"ui_scale", ui.appearance.ui_scale},
                  {"presentation", ui.appearance.presentation},
                  {"animate", ui.appearance.animate},
                  {"speed", ui.cursor.speed},
                  {"play_unit", ui.cursor.play_unit == StepUnit::kPhase ? "phase" : "tile"}};
  // The panels' own choices: the Vortex machine and view, the live GPU view's kernel and switches.
  const vortex::MachineConfig& machine = VortexState(ui).machine;
  session["vortex"] = {{"cores", machine.cores},
                       {"warps_per_core", machine.warps_per_core},
                       {"threads_per_warp", machine.threads_per_warp},
                       {"local_memory_bytes", machine.local_memory_bytes},
                       {"fp_registers_per_thread", machine.fp_registers_per_thread},
                       {"mode", std::string(vortex::ModeName(VortexState(ui).mode))},
                       {"color_lanes", VortexState(ui).color_lanes},
                       {"compare_wmma", VortexState(ui).compare_wmma}};
  session["live_gpu"] = {{"kernel", LiveGpuState(ui).variant},
                         {"backward_kernel", LiveGpuState(ui).backward_variant},
                         {"rerun_on_change", LiveGpuState(ui).rerun_on_change},
                         {"force_host_copy", LiveGpuState(ui).force_host_copy}};
  return session.dump(2) + "\n";
}

std::int64_t SessionFromJson(const std::string& text, const std::string& name, UiState& ui) {
  UiState next = ui;  // nothing changes unless the whole session reads
  std::int64_t step = 0;
  try {
    const json s = json::parse(text);
    if (!s.is_object() || !s.contains("flashviz_session"))
      throw InputError(name + " is not a flashviz session (no \"flashviz_session\" field)");
    const SessionReader read(name);
    const int version = read.Integer(s, "flashviz_session", 0, 0, INT32_MAX);
    if (version != kSessionVersion)
      throw InputError(Sprintf("%s: session version %d is not supported (expected %d)", name.c_str(), version,
                               kSessionVersion));
    const json& p = read.Object(s, "problem");
    ProblemForm& f = next.form;
    // The form's own checks (the GUI explains an impossible problem in place) judge the values; here each
    // must only be what its field can hold.
    f.n = read.Integer(p, "n", f.n, 1, INT32_MAX);
    f.d = read.Integer(p, "d", f.d, 1, INT32_MAX);
    const std::string tiles = read.String(p, "tiles", "sram");
    if (tiles != "sram" && tiles != "explicit") throw InputError(name + ": \"tiles\" must be \"sram\" or \"explicit\"");
    f.tiles_from_sram = tiles == "sram";
    f.sram_bytes = read.Integer<std::int64_t>(p, "sram_bytes", f.sram_bytes, 1, INT64_MAX);
    f.br = read.Integer(p, "br", f.br, 1, INT32_MAX);
    f.bc = read.Integer(p, "bc", f.bc, 1, INT32_MAX);
    const auto order = ParseLoopOrder(read.String(p, "order", "kv"));
    if (!order) throw InputError(name + ": \"order\" must be \"kv\" or \"q\"");
    f.order = *order;
    const auto pass = ParsePass(read.String(p, "pass", "forward"));
    if (!pass) throw InputError(name + ": \"pass\" must be \"forward\" or \"backward\"");
    f.pass = *pass;
    f.dout_path = read.String(p, "dout", "");
    const std::string scale_mode = read.String(p, "scale_mode", "default");
    if (scale_mode == "default") f.scale_mode = ProblemForm::ScaleMode::kDefault;
    else if (scale_mode == "none") f.scale_mode = ProblemForm::ScaleMode::kNone;
    else if (scale_mode == "custom") f.scale_mode = ProblemForm::ScaleMode::kCustom;
    else throw InputError(name + ": \"scale_mode\" must be \"default\", \"none\" or \"custom\"");
    f.scale = read.Real(p, "scale", f.scale, -1e30, 1e30);
    f.causal = read.Bool(p, "causal", f.causal);
    f.seed = read.Integer<std::uint64_t>(p, "seed", f.seed, 0, UINT64_MAX);
    f.input_path = read.String(p, "input", std::string());
    f.batch = read.Integer(p, "batch", 0, 0, INT32_MAX);
    f.decode = read.Bool(p, "decode", false);
    f.kv_len = read.Integer(p, "kv_len", f.kv_len, 1, INT32_MAX);
    f.heads = read.Integer(p, "heads", f.heads, 1, INT32_MAX);
    f.kv_heads = read.Integer(p, "kv_heads", f.kv_heads, 1, INT32_MAX);
    f.q_rows = read.Integer(p, "q_rows", f.q_rows, 1, INT32_MAX);
    f.page = read.Integer(p, "page", f.page, 1, INT32_MAX);
    f.splits_from_sram = p.contains("splits") && p["splits"] == "sram";
    if (!f.splits_from_sram) f.splits = read.Integer(p, "splits", f.splits, 1, INT32_MAX);
    f.ring = read.Bool(p, "ring", false);
    if (f.ring && f.decode) throw InputError(name + ": \"ring\" and \"decode\" are two different problems");
    f.ring_devices = read.Integer(p, "ring_devices", f.ring_devices, 2, kMaxRingDevices);
    f.zigzag = read.Bool(p, "zigzag", f.zigzag);
    f.ring_tflops = read.Real(p, "ring_tflops", f.ring_tflops, 1e-9, 1e9);
    f.ring_link_gbps = read.Real(p, "ring_link_gbps", f.ring_link_gbps, 1e-9, 1e9);
    step = read.Integer<std::int64_t>(s, "step", 0, 0, INT64_MAX);
    if (s.contains("panels")) {
      for (const auto& [id, open] : read.Object(s, "panels").items()) {
        const PanelInfo* panel = FindPanel(id);
        if (panel) SetPanelOpen(next, *panel, read.Bool(s.at("panels"), id.c_str(), false));  // others' panels ignored
      }
    }
    next.focus_tab = read.String(s, "tab", next.active_tab);
    next.cursor.selected_row = read.Integer(s, "selected_row", -1, -1, INT32_MAX);
    if (!ParseTheme(read.String(s, "theme", "dark"), &next.appearance.theme))
      throw InputError(name + ": \"theme\" must be \"dark\" or \"light\"");
    // View settings out of their range are clamped (the session still opens); problem values are refused.
    constexpr double kAnyFinite = std::numeric_limits<double>::max();
    next.appearance.ui_scale =
        static_cast<float>(std::clamp(read.Real(s, "ui_scale", 1.0, -kAnyFinite, kAnyFinite), 0.5, 4.0));
    // "large_font" is what sessions before presentation mode called it.
    next.appearance.presentation = read.Bool(s, "presentation", read.Bool(s, "large_font", false));
    next.appearance.animate = read.Bool(s, "animate", true);
    next.cursor.speed =
        static_cast<float>(std::clamp(read.Real(s, "speed", 4.0, -kAnyFinite, kAnyFinite), 0.25, 240.0));
    const std::string play_unit = read.String(s, "play_unit", "phase");
    if (play_unit != "phase" && play_unit != "tile")
      throw InputError(name + ": \"play_unit\" must be \"phase\" or \"tile\"");
    next.cursor.play_unit = play_unit == "tile" ? StepUnit::kTileIteration : StepUnit::kPhase;
    if (s.contains("vortex")) {
      const json& v = read.Object(s, "vortex");
      vortex::MachineConfig& machine = VortexState(next).machine;
      machine.cores = read.Integer(v, "cores", machine.cores, 1, INT32_MAX);
      machine.warps_per_core = read.Integer(v, "warps_per_core", machine.warps_per_core, 1, INT32_MAX);
      machine.threads_per_warp = read.Integer(v, "threads_per_warp", machine.threads_per_warp, 1, INT32_MAX);
      machine.local_memory_bytes =
          read.Integer<std::int64_t>(v, "local_memory_bytes", machine.local_memory_bytes, 1, INT64_MAX);
      machine.fp_registers_per_thread =
          read.Integer(v, "fp_registers_per_thread", machine.fp_registers_per_thread, 1, INT32_MAX);
      const auto mode = vortex::ParseMode(read.String(v, "mode", "simt"));
      if (!mode) throw InputError(name + ": \"vortex\".\"mode\" must be \"simt\" or \"tcu\"");
      VortexState(next).mode = *mode;
      VortexState(next).color_lanes = read.Bool(v, "color_lanes", false);
      VortexState(next).compare_wmma = read.Bool(v, "compare_wmma", false);
    }
    if (s.contains("live_gpu")) {
      const json& g = read.Object(s, "live_gpu");
      LiveGpuState(next).variant = read.String(g, "kernel", LiveGpuState(next).variant);
      LiveGpuState(next).backward_variant = read.String(g, "backward_kernel", LiveGpuState(next).backward_variant);
      LiveGpuState(next).rerun_on_change = read.Bool(g, "rerun_on_change", LiveGpuState(next).rerun_on_change);
      LiveGpuState(next).force_host_copy = read.Bool(g, "force_host_copy", LiveGpuState(next).force_host_copy);
    }
  } catch (const json::exception& e) {
    throw InputError(Sprintf("%s: malformed session: %s", name.c_str(), JsonErrorReason(e.what()).c_str()));
  }
  next.requests.Push(UiRequest::kRebuildStyle);
  ui = std::move(next);
  return step;
}

void SaveSession(const std::string& path, const UiState& ui, std::int64_t step) {
  CommandFiles files;
  if (!ui.form.input_path.empty()) files.AddInput(ui.form.input_path);  // never over the HW4 file it names
  files.AddOutput(path).Write(SessionToJson(ui, step));
  files.Commit();
}

std::int64_t LoadSession(const std::string& path, UiState& ui) {
  return SessionFromJson(ReadWholeFile(path, kMaxSessionBytes, "a session"), path, ui);
}

}  // namespace flashviz
