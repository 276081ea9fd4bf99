// libFuzzer target for the HW4 input parser (app/io/hw4_file.cpp): every byte string is either accepted as a
// well-formed file — whose header, size, values and round trip are then checked — or refused with one
// InputError line. A crash, a sanitizer report (ASan/UBSan), a second exception type or a multi-line message
// is a finding. The same bytes also go through the file path (ReadHw4Header + ReadHw4File on a memfd), which
// checks the header against the file's size before allocating.
//
// Build and run: README.md, "hw4 on the GPU" → "Fuzzing the parser".
#include <sys/mman.h>
#include <unistd.h>

#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <span>
#include <string>
#include <string_view>

#include "app/io/hw4_file.h"
#include "kernels/cpu/problem.h"

namespace {

[[noreturn]] void Finding(const char* what) {
  std::fprintf(stderr, "hw4_parser_fuzz: %s\n", what);
  std::abort();
}

void CheckAccepted(const flashviz::Hw4Input& in, std::span<const std::uint8_t> bytes) {
  if (in.b < 1 || in.n < 1 || in.d < 1 || in.n > flashviz::kMaxSequenceLength || in.d > flashviz::kMaxHeadDim)
    Finding("accepted a header outside the limits");
  if (in.qkv.size() != 3ull * static_cast<std::size_t>(in.b) * in.head_floats()) Finding("size does not match B, N, d");
  for (float x : in.qkv)
    if (!std::isfinite(x)) Finding("accepted a non-finite value");
  const std::vector<std::uint8_t> again = flashviz::SerializeHw4(in);
  if (again.size() != bytes.size() || std::memcmp(again.data(), bytes.data(), bytes.size()) != 0)
    Finding("the accepted file does not serialize back to the same bytes");
}

void CheckRefusal(const flashviz::InputError& e) {
  const std::string_view what = e.what();
  if (what.empty() || what.find('\n') != std::string_view::npos) Finding("an error message that is not one line");
}

int MemFd() {
  static const int fd = ::memfd_create("hw4_parser_fuzz", 0);
  if (fd < 0) Finding("memfd_create failed");
  return fd;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::span<const std::uint8_t> bytes(data, size);
  bool accepted = false;
  try {
    CheckAccepted(flashviz::ParseHw4(bytes, "fuzz"), bytes);
    accepted = true;
  } catch (const flashviz::InputError& e) {
    CheckRefusal(e);
  }

  // The file path must agree with the in-memory parser.
  const int fd = MemFd();
  if (::ftruncate(fd, 0) != 0 || (size > 0 && ::pwrite(fd, data, size, 0) != static_cast<ssize_t>(size)))
    Finding("cannot write the memfd");
  const std::string path = "/proc/self/fd/" + std::to_string(fd);
  bool file_accepted = false;
  try {
    const flashviz::Hw4Input header = flashviz::ReadHw4Header(path);
    const flashviz::Hw4Input in = flashviz::ReadHw4File(path);
    if (header.b != in.b || header.n != in.n || header.d != in.d) Finding("header and file disagree");
    CheckAccepted(in, bytes);
    file_accepted = true;
  } catch (const flashviz::InputError& e) {
    CheckRefusal(e);
  }
  if (accepted != file_accepted) Finding("ParseHw4 and ReadHw4File disagree on the same bytes");
  return 0;
}
