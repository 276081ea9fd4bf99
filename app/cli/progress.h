// Progress of long command-line work on stderr, with the time left: on a terminal one line rewritten in place,
// elsewhere (a log, a pipe) one line per tenth of the work and at least one every 30 s; nothing at all for work
// that ends within a second.
#pragma once

#include <chrono>
#include <cstdint>
#include <string>

namespace flashviz {

class ProgressLine {
 public:
  // `what` starts every line ("trace", "hw4"); `unit` names what is counted ("steps"), empty for none.
  ProgressLine(std::string what, std::string unit, std::int64_t total);
  ~ProgressLine();  // ends the terminal's line
  ProgressLine(const ProgressLine&) = delete;
  ProgressLine& operator=(const ProgressLine&) = delete;

  // Cheap enough to call for every unit of work: the clock is read once per 4096 calls.
  void Update(std::int64_t done) {
    if ((++calls_ & 4095) == 0 || done >= total_) Report(done);
  }
  void UpdateFraction(double fraction) { Report(static_cast<std::int64_t>(fraction * static_cast<double>(total_))); }
  void Finish();  // the last line, if any was printed

 private:
  void Report(std::int64_t done);

  std::string what_, unit_;
  std::int64_t total_;
  std::uint64_t calls_ = 0;
  std::chrono::steady_clock::time_point start_;
  bool terminal_;
  bool printed_ = false;
  bool finished_ = false;
  int last_tenth_ = 0;
  std::chrono::steady_clock::time_point last_print_{};
};

// "12.3 s", "4 min", "2.1 h".
std::string HumanDuration(double seconds);

}  // namespace flashviz
