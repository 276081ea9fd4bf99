#include "app/cli/progress.h"

#include <unistd.h>

#include <cstdio>

#include "kernels/common/format.h"

namespace flashviz {

std::string HumanDuration(double seconds) {
  if (seconds < 60) return Sprintf("%.0f s", seconds);
  if (seconds < 3600) return Sprintf("%.0f min", seconds / 60);
  if (seconds < 172800) return Sprintf("%.1f h", seconds / 3600);
  return Sprintf("%.0f days", seconds / 86400);
}

ProgressLine::ProgressLine(std::string what, std::string unit, std::int64_t total)
    : what_(std::move(what)),
      unit_(std::move(unit)),
      total_(total > 0 ? total : 1),
      start_(std::chrono::steady_clock::now()),
      terminal_(::isatty(STDERR_FILENO) != 0) {}

ProgressLine::~ProgressLine() {
  if (printed_ && terminal_) std::fputc('\n', stderr);
}

void ProgressLine::Report(std::int64_t done) {
  const auto now = std::chrono::steady_clock::now();
  const double elapsed = std::chrono::duration<double>(now - start_).count();
  if (elapsed < 1.0 && done < total_) return;  // quick work stays quiet
  if ((!printed_ || finished_) && done >= total_) return;  // quiet work stays quiet; the last line once
  const double fraction = static_cast<double>(done) / static_cast<double>(total_);
  const int tenth = static_cast<int>(fraction * 10);
  if (terminal_) {
    if (printed_ && now - last_print_ < std::chrono::milliseconds(200) && done < total_) return;
  } else if (printed_ && tenth <= last_tenth_ && now - last_print_ < std::chrono::seconds(30) && done < total_) {
    return;  // a log gets a line per tenth of the work, and one at least every 30 s for very long work
  }
  std::string line = fraction < 0.01 && done < total_ ? Sprintf("%s: %.2f%%", what_.c_str(), 100.0 * fraction)
                                                       : Sprintf("%s: %3.0f%%", what_.c_str(), 100.0 * fraction);
  if (!unit_.empty())
    line += Sprintf(" (%lld of %lld %s)", static_cast<long long>(done), static_cast<long long>(total_), unit_.c_str());
  if (done > 0 && done < total_) line += ", about " + HumanDuration(elapsed / fraction - elapsed) + " left";
  if (terminal_) std::fprintf(stderr, "\r%s\033[K", line.c_str());
  else std::fprintf(stderr, "%s\n", line.c_str());
  std::fflush(stderr);
  printed_ = true;
  finished_ = done >= total_;
  last_tenth_ = tenth;
  last_print_ = now;
}

void ProgressLine::Finish() {
  if (printed_) Report(total_);
}

}  // namespace flashviz
