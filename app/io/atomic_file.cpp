#include "app/io/atomic_file.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <sstream>

#include "kernels/common/format.h"
#include "kernels/cpu/problem.h"

namespace flashviz {

AtomicFileWriter::AtomicFileWriter(std::string path) : path_(std::move(path)) {
  struct stat info {};
  if (::stat(path_.c_str(), &info) == 0 && S_ISDIR(info.st_mode))
    throw InputError(Sprintf("cannot write %s: it is a directory", path_.c_str()));
  temp_path_ = path_ + ".partial-XXXXXX";
  const int fd = ::mkstemp(temp_path_.data());
  if (fd < 0) throw InputError(Sprintf("cannot write %s: %s", path_.c_str(), std::strerror(errno)));
  // mkstemp creates 0600; an output file should get the usual permissions.
  const mode_t mask = ::umask(0);
  ::umask(mask);
  ::fchmod(fd, 0666 & ~mask);
  file_ = ::fdopen(fd, "wb");
  if (!file_) {
    ::close(fd);
    ::unlink(temp_path_.c_str());
    throw InputError(Sprintf("cannot write %s: %s", path_.c_str(), std::strerror(errno)));
  }
}

AtomicFileWriter::~AtomicFileWriter() { Discard(); }

void AtomicFileWriter::Discard() {
  if (!file_) return;
  std::fclose(file_);
  file_ = nullptr;
  ::unlink(temp_path_.c_str());
}

void AtomicFileWriter::Write(const void* data, std::size_t bytes) {
  if (bytes == 0) return;
  if (std::fwrite(data, 1, bytes, file_) != bytes) {
    const int error = errno;
    Discard();
    throw InputError(Sprintf("cannot write %s: %s", path_.c_str(), std::strerror(error)));
  }
}

void AtomicFileWriter::Commit() {
  const bool failed = std::fflush(file_) != 0 || std::ferror(file_);
  const int error = errno;
  if (failed) {
    Discard();
    throw InputError(Sprintf("cannot write %s: %s", path_.c_str(), std::strerror(error)));
  }
  std::fclose(file_);
  file_ = nullptr;
  if (std::rename(temp_path_.c_str(), path_.c_str()) != 0) {
    const int rename_error = errno;
    ::unlink(temp_path_.c_str());
    throw InputError(Sprintf("cannot write %s: %s", path_.c_str(), std::strerror(rename_error)));
  }
}

std::string ReadWholeFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw InputError(Sprintf("cannot open %s: %s", path.c_str(), std::strerror(errno)));
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

}  // namespace flashviz
