// Lessons: parsing (nlohmann-json, every field checked with its name in the error), the stop → step mapping and
// the answers, read from the stepper's StepState and ledger.
#include "viz/lessons.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cmath>
#include <map>

#include "kernels/common/format.h"
#include "kernels/common/input_error.h"
#include "viz/embedded_files.h"
#include "viz/narration.h"
#include "viz/panels/panel_table.h"

namespace flashviz {
namespace {

using json = nlohmann::json;

const std::map<std::string, LessonQuantity, std::less<>> kQuantities = {
    {"S", LessonQuantity::kScore},          {"P", LessonQuantity::kProbability},
    {"m_tile", LessonQuantity::kTileMax},   {"l_tile", LessonQuantity::kTileSum},
    {"m", LessonQuantity::kRunningMax},     {"l", LessonQuantity::kRunningSum},
    {"alpha", LessonQuantity::kRescale},    {"O", LessonQuantity::kOutput},
    {"hbm_bytes", LessonQuantity::kHbmBytes}, {"D", LessonQuantity::kDelta},
    {"dP", LessonQuantity::kGradP},         {"dS", LessonQuantity::kGradS},
    {"dQ", LessonQuantity::kGradQ}};

// Field readers that name the lesson and the field in their errors.
struct Reader {
  std::string name;
  [[noreturn]] void Fail(const std::string& what) const { throw InputError(name + ": " + what); }
  const json& Need(const json& o, const char* key) const {
    if (!o.contains(key)) Fail(Sprintf("\"%s\" is missing", key));
    return o.at(key);
  }
  std::string String(const json& o, const char* key, std::optional<std::string> fallback = std::nullopt) const {
    if (!o.contains(key)) {
      if (fallback) return *fallback;
      Fail(Sprintf("\"%s\" is missing", key));
    }
    if (!o.at(key).is_string()) Fail(Sprintf("\"%s\" must be a string", key));
    return o.at(key).get<std::string>();
  }
  std::int64_t Integer(const json& o, const char* key, std::int64_t fallback, std::int64_t lo, std::int64_t hi) const {
    if (!o.contains(key)) return fallback;
    const json& v = o.at(key);
    if (!v.is_number_integer()) Fail(Sprintf("\"%s\" must be a whole number", key));
    const std::int64_t x = v.get<std::int64_t>();
    if (x < lo || x > hi) Fail(Sprintf("\"%s\" = %lld is out of range [%lld, %lld]", key, static_cast<long long>(x),
                                       static_cast<long long>(lo), static_cast<long long>(hi)));
    return x;
  }
  bool Bool(const json& o, const char* key, bool fallback) const {
    if (!o.contains(key)) return fallback;
    if (!o.at(key).is_boolean()) Fail(Sprintf("\"%s\" must be true or false", key));
    return o.at(key).get<bool>();
  }
};

ProblemForm ParseForm(const Reader& read, const json& p) {
  if (!p.is_object()) read.Fail("\"problem\" must be an object");
  ProblemForm f;
  f.n = static_cast<int>(read.Integer(p, "n", f.n, 1, 1 << 20));
  f.d = static_cast<int>(read.Integer(p, "d", f.d, 1, 4096));
  f.tiles_from_sram = !(p.contains("br") || p.contains("bc"));
  f.br = static_cast<int>(read.Integer(p, "br", f.br, 1, 1 << 20));
  f.bc = static_cast<int>(read.Integer(p, "bc", f.bc, 1, 1 << 20));
  f.sram_bytes = read.Integer(p, "sram_bytes", f.sram_bytes, 1, std::int64_t{1} << 40);
  const auto order = ParseLoopOrder(read.String(p, "order", "kv"));
  if (!order) read.Fail("\"order\" must be \"kv\" or \"q\"");
  f.order = *order;
  const std::string scale = read.String(p, "scale", "default");
  if (scale == "none") f.scale_mode = ProblemForm::ScaleMode::kNone;
  else if (scale != "default") read.Fail("\"scale\" must be \"default\" (1/√d) or \"none\"");
  f.causal = read.Bool(p, "causal", false);
  const auto pass = ParsePass(read.String(p, "pass", "forward"));
  if (!pass) read.Fail("\"pass\" must be \"forward\" or \"backward\"");
  f.pass = *pass;
  f.seed = static_cast<std::uint64_t>(read.Integer(p, "seed", 0, 0, INT64_MAX));
  if (const auto error = ProblemRequestError(f.ToRequest())) read.Fail("\"problem\": " + *error);
  return f;
}

LessonStop ParseStop(const Reader& read, const json& s, int index) {
  const Reader at{Sprintf("%s, stop %d", read.name.c_str(), index + 1)};
  if (!s.is_object()) at.Fail("a stop must be an object");
  LessonStop stop;
  if (s.contains("step")) {
    stop.step = at.Integer(s, "step", 0, 0, INT64_MAX);
  } else {
    const auto phase = ParsePhase(at.String(s, "phase"));
    if (!phase) at.Fail("\"phase\" must be a phase name (init, load_kv, load_q, scores, rowmax, exp, rowsum, "
                        "update_stats, update_o, write_back, finalize, done; backward: delta, probs, grad_v, grad_p, "
                        "grad_s, grad_k, grad_q, write_dk_dv)");
    stop.phase = *phase;
    stop.i = static_cast<int>(at.Integer(s, "i", -1, -1, INT32_MAX));
    stop.j = static_cast<int>(at.Integer(s, "j", -1, -1, INT32_MAX));
  }
  stop.panel = at.String(s, "panel", "step");
  if (!FindPanel(stop.panel)) at.Fail("\"panel\": no panel \"" + stop.panel + "\" (" + PanelIdList() + ")");
  stop.text = at.String(s, "text");
  if (s.contains("problem")) {
    const json& p = s.at("problem");
    if (!p.is_object()) at.Fail("\"problem\" must be an object");
    for (const auto& [key, value] : p.items())
      if (key != "order" && key != "br" && key != "bc" && key != "causal")
        at.Fail("\"problem\": a stop may change order, br, bc and causal, not \"" + key + "\"");
    if (p.contains("order")) {
      const auto order = ParseLoopOrder(at.String(p, "order"));
      if (!order) at.Fail("\"order\" must be \"kv\" or \"q\"");
      stop.order = *order;
    }
    if (p.contains("br")) stop.br = static_cast<int>(at.Integer(p, "br", 1, 1, 1 << 20));
    if (p.contains("bc")) stop.bc = static_cast<int>(at.Integer(p, "bc", 1, 1, 1 << 20));
    if (p.contains("causal")) stop.causal = at.Bool(p, "causal", false);
  }
  if (s.contains("question")) {
    const json& q = s.at("question");
    if (!q.is_object()) at.Fail("\"question\" must be an object");
    LessonQuestion question;
    question.ask = at.String(q, "ask");
    const std::string quantity = at.String(q, "quantity");
    const auto it = kQuantities.find(quantity);
    if (it == kQuantities.end()) at.Fail("\"quantity\": \"" + quantity + "\" is not one of S, P, m_tile, l_tile, m, l, "
                                         "alpha, O, hbm_bytes, D, dP, dS, dQ");
    question.quantity = it->second;
    question.row = static_cast<int>(at.Integer(q, "row", -1, -1, INT32_MAX));
    question.col = static_cast<int>(at.Integer(q, "col", -1, -1, INT32_MAX));
    const bool needs_row = question.quantity != LessonQuantity::kHbmBytes;
    const bool needs_col =
        question.quantity == LessonQuantity::kScore || question.quantity == LessonQuantity::kProbability ||
        question.quantity == LessonQuantity::kOutput || question.quantity == LessonQuantity::kGradP ||
        question.quantity == LessonQuantity::kGradS || question.quantity == LessonQuantity::kGradQ;
    if (needs_row && question.row < 0) at.Fail("the question needs a \"row\"");
    if (needs_col && question.col < 0) at.Fail("the question needs a \"col\"");
    stop.question = question;
  }
  return stop;
}

std::vector<Lesson> LoadShipped() {
  std::vector<Lesson> lessons;
  for (const EmbeddedFile& file : EmbeddedLessons()) {
    std::string id(file.name);
    if (id.size() > 5 && id.ends_with(".json")) id.resize(id.size() - 5);
    lessons.push_back(ParseLesson(std::string(file.text), "assets/lessons/" + std::string(file.name)));
    lessons.back().id = id;
  }
  std::stable_sort(lessons.begin(), lessons.end(), [](const Lesson& a, const Lesson& b) { return a.order < b.order; });
  return lessons;
}

// A local index into the current Q tile (and K/V tile, for S and P~), or −1 when the row is not in it.
int LocalRow(const StepState& s, int row) {
  return row >= s.row_begin && row < s.row_begin + s.rows ? row - s.row_begin : -1;
}

}  // namespace

Lesson ParseLesson(const std::string& json_text, const std::string& name) {
  const Reader read{name};
  json j;
  try {
    j = json::parse(json_text);
  } catch (const json::exception& e) {
    read.Fail("not valid JSON: " + JsonErrorReason(e.what()));
  }
  if (!j.is_object()) read.Fail("a lesson must be a JSON object");
  Lesson lesson;
  lesson.title = read.String(j, "title");
  lesson.summary = read.String(j, "summary", "");
  lesson.order = static_cast<int>(read.Integer(j, "order", lesson.order, 0, INT32_MAX));
  lesson.form = ParseForm(read, read.Need(j, "problem"));
  const json& stops = read.Need(j, "stops");
  if (!stops.is_array() || stops.empty()) read.Fail("\"stops\" must be a non-empty list");
  for (std::size_t k = 0; k < stops.size(); ++k) lesson.stops.push_back(ParseStop(read, stops[k], static_cast<int>(k)));
  return lesson;
}

std::span<const Lesson> ShippedLessons() {
  static const std::vector<Lesson> lessons = LoadShipped();
  return lessons;
}

const Lesson* FindLesson(std::string_view id) {
  for (const Lesson& lesson : ShippedLessons())
    if (lesson.id == id) return &lesson;
  return nullptr;
}

ProblemForm FormAtStop(const Lesson& lesson, int stop) {
  ProblemForm form = lesson.form;
  for (int k = 0; k <= stop && k < static_cast<int>(lesson.stops.size()); ++k) {
    const LessonStop& s = lesson.stops[static_cast<std::size_t>(k)];
    if (s.order) form.order = *s.order;
    if (s.br || s.bc) form.tiles_from_sram = false;
    if (s.br) form.br = *s.br;
    if (s.bc) form.bc = *s.bc;
    if (s.causal) form.causal = *s.causal;
  }
  return form;
}

std::optional<std::int64_t> StopStep(const Schedule& schedule, const LessonStop& stop) {
  if (stop.step) {
    if (*stop.step >= schedule.step_count()) return std::nullopt;
    return *stop.step;
  }
  const StepInfo like{0, stop.phase, stop.i, stop.j};
  const std::int64_t step = schedule.StepLike(like);
  if (!(schedule.Info(step) == StepInfo{step, stop.phase, stop.i, stop.j})) return std::nullopt;
  return step;
}

LessonAnswer AnswerAt(const Model& model, const LessonQuestion& q) {
  LessonAnswer a;
  const StepState& s = model.state();
  const TileNumerics& t = s.tile;
  const int r = LocalRow(s, q.row);
  const int c = q.col >= s.col_begin && q.col < s.col_begin + s.cols ? q.col - s.col_begin : -1;
  const auto row_value = [&](const std::vector<double>& v, const char* name) {
    a.name = Sprintf("%s of row %d", name, q.row);
    if (r < 0 || v.empty()) {
      a.why = Sprintf("row %d is not in the Q tile on chip, or %s is not computed at this step", q.row, name);
      return;
    }
    a.available = true;
    a.value = v[static_cast<std::size_t>(r)];
  };
  const auto cell_value = [&](const std::vector<double>& v, const char* name) {
    a.name = Sprintf("%s[%d, %d]", name, q.row, q.col);
    if (r < 0 || c < 0 || v.empty()) {
      a.why = Sprintf("%s is not in the tile on chip at this step", a.name.c_str());
      return;
    }
    a.available = true;
    a.value = v[static_cast<std::size_t>(r) * static_cast<std::size_t>(s.cols) + static_cast<std::size_t>(c)];
  };
  const bool kv = model.problem().order == LoopOrder::kKvOuter;
  const bool backward = model.problem().backward();
  const BackwardNumerics& g = s.grad;
  switch (q.quantity) {
    case LessonQuantity::kScore: cell_value(backward ? g.s : t.s, "S"); break;
    case LessonQuantity::kProbability: cell_value(backward ? g.p : t.p, backward ? "P" : "P~"); break;
    case LessonQuantity::kDelta: row_value(g.delta, "D_i"); break;
    case LessonQuantity::kGradP: cell_value(g.dp, "dP"); break;
    case LessonQuantity::kGradS: cell_value(g.ds, "dS"); break;
    case LessonQuantity::kGradQ: {
      a.name = Sprintf("dQ[%d, %d]", q.row, q.col);
      const int d = model.problem().d;
      if (r < 0 || q.col >= d || g.dq.empty()) {
        a.why = Sprintf("%s is not in the Q tile of this step", a.name.c_str());
        break;
      }
      a.available = true;
      a.value = g.dq[static_cast<std::size_t>(r) * static_cast<std::size_t>(d) + static_cast<std::size_t>(q.col)];
      break;
    }
    case LessonQuantity::kTileMax: row_value(t.m_tile, kv ? "m~_ij" : "rowmax(S_ij)"); break;
    case LessonQuantity::kTileSum: row_value(t.l_tile, kv ? "ℓ~_ij" : "rowsum(P~_ij)"); break;
    case LessonQuantity::kRunningMax: row_value(t.m, "m_i"); break;
    case LessonQuantity::kRunningSum: row_value(t.l, "ℓ_i"); break;
    case LessonQuantity::kRescale: row_value(t.alpha, "α"); break;
    case LessonQuantity::kOutput: {
      a.name = Sprintf("O[%d, %d]", q.row, q.col);
      const int d = model.problem().d;
      if (r < 0 || q.col >= d || t.o.empty()) {
        a.why = Sprintf("%s is not on chip at this step", a.name.c_str());
        break;
      }
      a.available = true;
      a.value = t.o[static_cast<std::size_t>(r) * static_cast<std::size_t>(d) + static_cast<std::size_t>(q.col)];
      break;
    }
    case LessonQuantity::kHbmBytes:
      a.name = "HBM bytes so far";
      a.available = true;
      a.value = static_cast<double>(s.ledger.HbmBytes());
      break;
  }
  return a;
}

bool AnswerMatches(const LessonQuestion& question, double typed, double answer) {
  if (!std::isfinite(answer) || question.quantity == LessonQuantity::kHbmBytes) return typed == answer;
  return std::abs(typed - answer) <= std::max(0.005, 0.005 * std::abs(answer));
}

std::string FillLessonText(const Model& model, const StepInfo& at, const std::string& text,
                           std::vector<std::string>* unknown) {
  const AttentionProblem& p = model.problem();
  const StepState& s = model.state();
  const auto value = [&](const std::string& key) -> std::optional<std::string> {
    if (key == "N") return std::to_string(p.n);
    if (key == "d") return std::to_string(p.d);
    if (key == "Br") return std::to_string(p.br);
    if (key == "Bc") return std::to_string(p.bc);
    if (key == "Tr") return std::to_string(p.tr());
    if (key == "Tc") return std::to_string(p.tc());
    if (key == "steps") return std::to_string(model.step_count());
    if (key == "scale") return Sprintf("%.4g", p.scale);
    if (key == "keys" && at.j >= 0)
      return Sprintf("keys %d–%d", p.ColBegin(at.j), p.ColBegin(at.j) + p.ColsInTile(at.j) - 1);
    if (key == "i") return std::to_string(at.i);
    if (key == "j") return std::to_string(at.j);
    if (key == "rescale") return RescaleSummary(s);
    if (key == "hbm") return HumanBytes(static_cast<double>(s.ledger.HbmBytes()));
    if (key == "hbm_total") return HumanBytes(static_cast<double>(model.final_ledger().HbmBytes()));
    if (key == "hbm_standard") return HumanBytes(static_cast<double>(model.standard_ledger().HbmBytes()));
    return std::nullopt;
  };
  std::string out;
  for (std::size_t from = 0; from < text.size();) {
    const std::size_t open = text.find('{', from);
    const std::size_t close = open == std::string::npos ? open : text.find('}', open);
    if (close == std::string::npos) {
      out += text.substr(from);
      break;
    }
    out += text.substr(from, open - from);
    const std::string key = text.substr(open + 1, close - open - 1);
    if (const auto v = value(key)) {
      out += *v;
    } else {
      out += text.substr(open, close - open + 1);
      if (unknown) unknown->push_back(key);
    }
    from = close + 1;
  }
  return out;
}

}  // namespace flashviz
