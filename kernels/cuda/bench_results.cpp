#include "kernels/cuda/bench_results.h"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <map>

#include "kernels/common/files.h"
#include "kernels/common/format.h"
#include "kernels/cpu/problem.h"

namespace flashviz::cuda {
namespace {

const char* const kColumns[] = {"kernel", "dtype",         "B",         "H",   "N",      "d",     "causal",
                                "ms_median", "ms_min",     "tflops", "max_abs_error", "hbm_bytes", "gpu", "status"};

std::string Quoted(const std::string& field) {
  if (field.find_first_of(",\"\n") == std::string::npos) return field;
  std::string out = "\"";
  for (char c : field) out += c == '"' ? std::string("\"\"") : std::string(1, c);
  return out + "\"";
}

std::string Number(double value, const char* format) { return std::isfinite(value) ? Sprintf(format, value) : ""; }

// Splits one CSV line into fields (RFC 4180 quoting, no newlines inside fields).
std::vector<std::string> SplitCsvLine(std::string_view line, bool& ok) {
  std::vector<std::string> fields(1);
  bool quoted = false;
  ok = true;
  for (std::size_t i = 0; i < line.size(); ++i) {
    const char c = line[i];
    if (quoted) {
      if (c == '"' && i + 1 < line.size() && line[i + 1] == '"') {
        fields.back() += '"';
        ++i;
      } else if (c == '"') {
        quoted = false;
      } else {
        fields.back() += c;
      }
    } else if (c == '"' && fields.back().empty()) {
      quoted = true;
    } else if (c == ',') {
      fields.emplace_back();
    } else if (c != '\r') {
      fields.back() += c;
    }
  }
  ok = !quoted;
  return fields;
}

}  // namespace

std::int64_t AutoHeads(int n) {
  const double target = 4294967296.0 / (static_cast<double>(n) * n);  // 2³² / N²
  return std::max<std::int64_t>(1, std::min<std::int64_t>(1024, static_cast<std::int64_t>(target)));
}

std::vector<SweepPoint> SweepPoints(const SweepSpec& spec) {
  if (spec.kernels.empty()) throw InputError("no kernels to run");
  if (spec.n_values.empty()) throw InputError("no sequence lengths to run");
  if (spec.d < 1 || spec.d > kMaxHeadDim) throw InputError(Sprintf("d = %d: 1 ≤ d ≤ %d", spec.d, kMaxHeadDim));
  if (spec.heads < 1 || spec.batch < 0)
    throw InputError(Sprintf("B = %d, H = %d: both must be positive", spec.batch, spec.heads));
  if (spec.repeats < 20)
    throw InputError(Sprintf("--repeats %d: at least 20 (figures are medians of 20 or more)", spec.repeats));
  if (spec.warmup < 0) throw InputError("--warmup must be 0 or more");
  std::vector<const VariantInfo*> variants;
  for (const std::string& id : spec.kernels) {
    const VariantInfo* variant = FindVariantInfo(id);
    if (!variant) {
      std::string known;
      for (const VariantInfo& v : Catalogue()) {
        if (!known.empty()) known += ", ";
        known += v.id;
      }
      throw InputError(Sprintf("unknown kernel '%s' (known: %s)", id.c_str(), known.c_str()));
    }
    variants.push_back(variant);
  }
  std::vector<SweepPoint> points;
  for (int n : spec.n_values) {
    if (n < 1 || n > kMaxSequenceLength) throw InputError(Sprintf("N = %d: 1 ≤ N ≤ %d", n, kMaxSequenceLength));
    AttentionShape shape;
    shape.heads = spec.heads;
    shape.batch = spec.batch > 0 ? spec.batch
                                 : static_cast<int>(std::max<std::int64_t>(1, AutoHeads(n) / spec.heads));
    shape.n = n;
    shape.d = spec.d;
    shape.scale = static_cast<float>(1.0 / std::sqrt(static_cast<double>(spec.d)));
    shape.causal = spec.causal;
    for (const VariantInfo* variant : variants) points.push_back({variant, shape});
  }
  return points;
}

std::string BenchCsvHeader() {
  std::string header;
  for (const char* column : kColumns) {
    if (!header.empty()) header += ',';
    header += column;
  }
  header += '\n';
  return header;
}

std::string BenchCsvLine(const BenchRow& r) {
  const std::string fields[] = {Quoted(r.kernel), Quoted(r.dtype), std::to_string(r.batch), std::to_string(r.heads),
                                std::to_string(r.n), std::to_string(r.d), r.causal ? "1" : "0",
                                Number(r.ms_median, "%.6g"), Number(r.ms_min, "%.6g"), Number(r.tflops, "%.5g"),
                                Number(r.max_abs_error, "%.3g"), Number(r.hbm_bytes, "%.6g"), Quoted(r.gpu),
                                Quoted(r.status)};
  std::string line;
  for (const std::string& field : fields) {
    if (!line.empty()) line += ',';
    line += field;
  }
  line += '\n';
  return line;
}

std::vector<BenchRow> ParseBenchCsv(std::string_view text, const std::string& source) {
  std::vector<BenchRow> rows;
  std::map<std::string, std::size_t> column;
  std::size_t line_number = 0;
  while (!text.empty()) {
    const std::size_t end = text.find('\n');
    const std::string_view line = text.substr(0, end);
    text = end == std::string_view::npos ? std::string_view() : text.substr(end + 1);
    ++line_number;
    if (line.empty() || line == "\r") continue;
    bool ok = true;
    const std::vector<std::string> fields = SplitCsvLine(line, ok);
    if (!ok) throw InputError(Sprintf("%s: line %zu: unterminated quote", source.c_str(), line_number));
    if (column.empty()) {
      for (std::size_t i = 0; i < fields.size(); ++i) column[fields[i]] = i;
      for (const char* required : {"kernel", "dtype", "B", "H", "N", "d", "ms_median"})
        if (!column.count(required))
          throw InputError(Sprintf("%s: the header has no '%s' column", source.c_str(), required));
      continue;
    }
    const auto field = [&](const char* name) -> std::string {
      const auto it = column.find(name);
      return it == column.end() || it->second >= fields.size() ? std::string() : fields[it->second];
    };
    const auto integer = [&](const char* name) {
      const std::string value = field(name);
      char* rest = nullptr;
      const long parsed = std::strtol(value.c_str(), &rest, 10);
      if (value.empty() || *rest != '\0' || parsed < 0 || parsed > (1l << 30))
        throw InputError(Sprintf("%s: line %zu: %s = '%s' is not a count", source.c_str(), line_number, name,
                                 value.c_str()));
      return static_cast<int>(parsed);
    };
    const auto real = [&](const char* name) -> double {
      const std::string value = field(name);
      if (value.empty() || value == "nan" || value == "NaN") return NAN;  // not measured (as written by us)
      char* rest = nullptr;
      const double parsed = std::strtod(value.c_str(), &rest);
      if (*rest != '\0' || !std::isfinite(parsed) || parsed < 0)
        throw InputError(Sprintf("%s: line %zu: %s = '%s' is not a non-negative number", source.c_str(), line_number,
                                 name, value.c_str()));
      return parsed;
    };
    BenchRow row;
    row.kernel = field("kernel");
    row.dtype = field("dtype");
    if (row.kernel.empty()) throw InputError(Sprintf("%s: line %zu: no kernel name", source.c_str(), line_number));
    row.batch = integer("B");
    row.heads = integer("H");
    row.n = integer("N");
    row.d = integer("d");
    row.causal = field("causal") == "1" || field("causal") == "true" || field("causal") == "True";
    row.ms_median = real("ms_median");
    row.ms_min = real("ms_min");
    row.tflops = real("tflops");
    row.max_abs_error = real("max_abs_error");
    row.hbm_bytes = real("hbm_bytes");
    row.gpu = field("gpu");
    row.status = column.count("status") ? field("status") : (std::isfinite(row.ms_median) ? "ok" : "");
    if (row.Ok() && !(row.ms_median > 0))
      throw InputError(Sprintf("%s: line %zu: %s is marked ok but has no positive ms_median", source.c_str(),
                               line_number, row.kernel.c_str()));
    rows.push_back(std::move(row));
  }
  if (column.empty()) throw InputError(Sprintf("%s: empty file", source.c_str()));
  return rows;
}

std::vector<BenchRow> ReadBenchCsv(const std::string& path) {
  constexpr std::int64_t kMaxBenchCsvBytes = std::int64_t{64} << 20;
  return ParseBenchCsv(ReadWholeFile(path, kMaxBenchCsvBytes, "a benchmark CSV"), path);
}

std::string DescribeSweep(const SweepSpec& spec, std::size_t points) {
  const auto [low, high] = std::minmax_element(spec.n_values.begin(), spec.n_values.end());
  const std::string n_range = *low == *high ? std::to_string(*low) : Sprintf("%d to %d", *low, *high);
  const std::string heads = spec.batch > 0 ? Sprintf("B = %d, H = %d", spec.batch, spec.heads)
                                           : Sprintf("H = %d, B·H = min(1024, 2³²/N²)", spec.heads);
  return Sprintf("%zu points: %zu kernel%s × N = %s, d = %d, %s, %s%s", points, spec.kernels.size(),
                 spec.kernels.size() == 1 ? "" : "s", n_range.c_str(), spec.d,
                 std::string(DTypeName(spec.dtype)).c_str(), heads.c_str(),
                 spec.causal ? ", causal (FLOPs halved)" : "");
}

}  // namespace flashviz::cuda
