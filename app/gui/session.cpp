#include "app/gui/session.h"

#include <nlohmann/json.hpp>

#include <algorithm>

#include "app/io/atomic_file.h"
#include "kernels/common/format.h"
#include "viz/panels/panel_table.h"

namespace flashviz {
namespace {

using nlohmann::json;
constexpr int kSessionVersion = 1;

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
                  {"scale_mode", ScaleModeName(f.scale_mode)},
                  {"scale", f.scale},
                  {"causal", f.causal},
                  {"seed", f.seed},
                  {"input", f.input_path},
                  {"batch", f.batch}};
  json panels = json::object();
  for (const PanelInfo& p : Panels()) panels[p.id] = IsPanelOpen(ui, p);
  json session = {{"flashviz_session", kSessionVersion},
                  {"problem", problem},
                  {"step", step},
                  {"panels", panels},
                  {"tab", ui.active_tab},
                  {"selected_row", ui.selected_row},
                  {"theme", ThemeName(ui.theme)},
                  {"ui_scale", ui.ui_scale},
                  {"large_font", ui.large_font},
                  {"speed", ui.speed},
                  {"play_unit", ui.play_unit == StepUnit::kPhase ? "phase" : "tile"}};
  // The panels' own choices: the Vortex machine and view, the live GPU view's kernel and switches.
  const vortex::MachineConfig& machine = ui.vortex.machine;
  session["vortex"] = {{"cores", machine.cores},
                       {"warps_per_core", machine.warps_per_core},
                       {"threads_per_warp", machine.threads_per_warp},
                       {"local_memory_bytes", machine.local_memory_bytes},
                       {"fp_registers_per_thread", machine.fp_registers_per_thread},
                       {"mode", std::string(vortex::ModeName(ui.vortex.mode))},
                       {"color_lanes", ui.vortex.color_lanes},
                       {"compare_wmma", ui.vortex.compare_wmma}};
  session["live_gpu"] = {{"kernel", ui.live_gpu.variant},
                         {"rerun_on_change", ui.live_gpu.rerun_on_change},
                         {"force_host_copy", ui.live_gpu.force_host_copy}};
  return session.dump(2) + "\n";
}

std::int64_t SessionFromJson(const std::string& text, const std::string& name, UiState& ui) {
  UiState next = ui;  // nothing changes unless the whole session reads
  std::int64_t step = 0;
  try {
    const json s = json::parse(text);
    if (!s.is_object() || !s.contains("flashviz_session"))
      throw InputError(name + " is not a flashviz session (no \"flashviz_session\" field)");
    if (s.at("flashviz_session").get<int>() != kSessionVersion)
      throw InputError(Sprintf("%s: session version %d is not supported (expected %d)", name.c_str(),
                               s.at("flashviz_session").get<int>(), kSessionVersion));
    const json& p = s.at("problem");
    ProblemForm& f = next.form;
    f.n = p.value("n", f.n);
    f.d = p.value("d", f.d);
    const std::string tiles = p.value("tiles", std::string("sram"));
    if (tiles != "sram" && tiles != "explicit") throw InputError(name + ": \"tiles\" must be \"sram\" or \"explicit\"");
    f.tiles_from_sram = tiles == "sram";
    f.sram_bytes = p.value("sram_bytes", f.sram_bytes);
    f.br = p.value("br", f.br);
    f.bc = p.value("bc", f.bc);
    const auto order = ParseLoopOrder(p.value("order", std::string("kv")));
    if (!order) throw InputError(name + ": \"order\" must be \"kv\" or \"q\"");
    f.order = *order;
    const std::string scale_mode = p.value("scale_mode", std::string("default"));
    if (scale_mode == "default") f.scale_mode = ProblemForm::ScaleMode::kDefault;
    else if (scale_mode == "none") f.scale_mode = ProblemForm::ScaleMode::kNone;
    else if (scale_mode == "custom") f.scale_mode = ProblemForm::ScaleMode::kCustom;
    else throw InputError(name + ": \"scale_mode\" must be \"default\", \"none\" or \"custom\"");
    f.scale = p.value("scale", f.scale);
    f.causal = p.value("causal", f.causal);
    f.seed = p.value("seed", f.seed);
    f.input_path = p.value("input", std::string());
    f.batch = p.value("batch", 0);
    step = s.value("step", std::int64_t{0});
    if (s.contains("panels")) {
      for (const auto& [id, open] : s.at("panels").items()) {
        const PanelInfo* panel = FindPanel(id);
        if (panel) SetPanelOpen(next, *panel, open.get<bool>());  // panels of other builds are ignored
      }
    }
    next.focus_tab = s.value("tab", next.active_tab);
    next.selected_row = s.value("selected_row", -1);
    if (!ParseTheme(s.value("theme", std::string("dark")), &next.theme))
      throw InputError(name + ": \"theme\" must be \"dark\" or \"light\"");
    next.ui_scale = std::clamp(s.value("ui_scale", 1.0f), 0.5f, 4.0f);
    next.large_font = s.value("large_font", false);
    next.speed = std::clamp(s.value("speed", 4.0f), 0.25f, 240.0f);
    next.play_unit = s.value("play_unit", std::string("phase")) == "tile" ? StepUnit::kTileIteration : StepUnit::kPhase;
    if (s.contains("vortex")) {
      const json& v = s.at("vortex");
      vortex::MachineConfig& machine = next.vortex.machine;
      machine.cores = v.value("cores", machine.cores);
      machine.warps_per_core = v.value("warps_per_core", machine.warps_per_core);
      machine.threads_per_warp = v.value("threads_per_warp", machine.threads_per_warp);
      machine.local_memory_bytes = v.value("local_memory_bytes", machine.local_memory_bytes);
      machine.fp_registers_per_thread = v.value("fp_registers_per_thread", machine.fp_registers_per_thread);
      const auto mode = vortex::ParseMode(v.value("mode", std::string("simt")));
      if (!mode) throw InputError(name + ": \"vortex\".\"mode\" must be \"simt\" or \"tcu\"");
      next.vortex.mode = *mode;
      next.vortex.color_lanes = v.value("color_lanes", false);
      next.vortex.compare_wmma = v.value("compare_wmma", false);
    }
    if (s.contains("live_gpu")) {
      const json& g = s.at("live_gpu");
      next.live_gpu.variant = g.value("kernel", next.live_gpu.variant);
      next.live_gpu.rerun_on_change = g.value("rerun_on_change", next.live_gpu.rerun_on_change);
      next.live_gpu.force_host_copy = g.value("force_host_copy", next.live_gpu.force_host_copy);
    }
  } catch (const json::exception& e) {
    throw InputError(Sprintf("%s: malformed session: %s", name.c_str(), e.what()));
  }
  next.style_dirty = true;
  ui = std::move(next);
  return step;
}

void SaveSession(const std::string& path, const UiState& ui, std::int64_t step) {
  AtomicFileWriter out(path);
  out.Write(SessionToJson(ui, step));
  out.Commit();
}

std::int64_t LoadSession(const std::string& path, UiState& ui) { return SessionFromJson(ReadWholeFile(path), path, ui); }

}  // namespace flashviz
