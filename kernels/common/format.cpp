#include "kernels/common/format.h"

#include <charconv>
#include <cmath>
#include <cstdarg>
#include <cstdio>

namespace flashviz {

std::string Sprintf(const char* format, ...) {
  va_list args;
  va_start(args, format);
  va_list measure;
  va_copy(measure, args);
  const int size = std::vsnprintf(nullptr, 0, format, measure);
  va_end(measure);
  std::string text(size > 0 ? static_cast<std::size_t>(size) : 0, '\0');
  if (size > 0) std::vsnprintf(text.data(), text.size() + 1, format, args);
  va_end(args);
  return text;
}

std::string ShortestDecimal(double value) {
  if (std::isnan(value)) return "nan";
  if (std::isinf(value)) return value > 0 ? "inf" : "-inf";
  char buffer[32];
  const auto result = std::to_chars(buffer, buffer + sizeof buffer, value);
  return std::string(buffer, result.ptr);
}

std::string HumanBytes(double bytes) {
  static constexpr const char* kUnits[] = {"B", "KiB", "MiB", "GiB", "TiB", "PiB"};
  int unit = 0;
  while (std::fabs(bytes) >= 1024.0 && unit < 5) {
    bytes /= 1024.0;
    ++unit;
  }
  if (unit == 0) return Sprintf("%.0f B", bytes);
  return Sprintf(std::fabs(bytes) < 10 ? "%.2f %s" : (std::fabs(bytes) < 100 ? "%.1f %s" : "%.0f %s"), bytes,
                 kUnits[unit]);
}

std::string HumanSeconds(double seconds) {
  static constexpr const char* kUnits[] = {"ps", "ns", "µs", "ms", "s"};
  static constexpr double kScales[] = {1e12, 1e9, 1e6, 1e3, 1};
  int unit = 4;  // the largest unit in which the value is at least 1
  while (unit > 0 && std::fabs(seconds) * kScales[unit] < 1.0) --unit;
  const double v = seconds * kScales[unit];
  return Sprintf(std::fabs(v) < 10 ? "%.2f %s" : (std::fabs(v) < 100 ? "%.1f %s" : "%.0f %s"), v, kUnits[unit]);
}

std::string JsonErrorReason(const std::string& what) {
  const std::size_t end = what.find("] ");
  return what.rfind("[json.exception.", 0) == 0 && end != std::string::npos ? what.substr(end + 2) : what;
}

}  // namespace flashviz
