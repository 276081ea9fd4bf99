// Output files that appear whole or not at all (DESIGN.md principle 8): data goes to a temporary file beside
// the destination, which is renamed over it only on Commit(). An existing file is untouched until then, and
// a failure anywhere (an exception, an early return) removes the temporary file.
#pragma once

#include <cstddef>
#include <cstdio>
#include <string>

namespace flashviz {

class AtomicFileWriter {
 public:
  // Creates the temporary file now, so an unwritable destination is reported before any long computation.
  // Throws InputError with a one-line reason.
  explicit AtomicFileWriter(std::string path);
  ~AtomicFileWriter();
  AtomicFileWriter(const AtomicFileWriter&) = delete;
  AtomicFileWriter& operator=(const AtomicFileWriter&) = delete;

  void Write(const void* data, std::size_t bytes);
  void Write(const std::string& text) { Write(text.data(), text.size()); }
  std::FILE* stream() { return file_; }  // for formatted writers; errors surface at Commit()
  void Commit();  // flushes, closes and renames over the destination; throws InputError on failure

  const std::string& path() const { return path_; }

 private:
  void Discard();
  std::string path_;
  std::string temp_path_;
  std::FILE* file_ = nullptr;
};

// Reads a whole file; throws InputError("cannot open PATH: reason").
std::string ReadWholeFile(const std::string& path);

}  // namespace flashviz
