#include "kernels/common/files.h"

#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <iostream>

#include "kernels/common/format.h"

namespace flashviz {
namespace {

// ---------------------------------------------------------------------------------------------------------
// [SECTION] temporary files the signal handler removes
// ---------------------------------------------------------------------------------------------------------

// A fixed table the handler can walk without allocating or locking: a slot is claimed (1), filled, then
// published (2); the handler only reads published slots.
constexpr int kTemporarySlots = 64;
struct TemporarySlot {
  std::atomic<int> state{0};
  char path[PATH_MAX];
};
TemporarySlot g_temporaries[kTemporarySlots];
// While outputs are being published, a signal waits: the handler records it and the commit acts on it once
// every target is consistent again. One word holds the number of commits under way and a "dying" bit, so that
// a handler on any thread and a commit starting on another agree on which comes first: once the process is
// dying no commit starts (it waits for the end), and while a commit runs nobody starts dying.
constexpr int kDying = 1 << 30;
std::atomic<int> g_commit_state{0};
std::atomic<int> g_pending_signal{0};
constexpr int kCleanupSignals[] = {SIGINT, SIGTERM, SIGHUP, SIGPIPE};

int RegisterTemporary(const std::string& path) {
  if (path.size() >= PATH_MAX) throw InputError("cannot write " + path + ": the path is too long");
  for (int k = 0; k < kTemporarySlots; ++k) {
    int expected = 0;
    if (!g_temporaries[k].state.compare_exchange_strong(expected, 1)) continue;
    std::memcpy(g_temporaries[k].path, path.c_str(), path.size() + 1);
    g_temporaries[k].state.store(2, std::memory_order_release);
    return k;
  }
  throw InputError(Sprintf("cannot write %s: more than %d outputs open at once", path.c_str(), kTemporarySlots));
}

void UnregisterTemporary(int& slot) {
  if (slot >= 0) g_temporaries[slot].state.store(0, std::memory_order_release);
  slot = -1;
}

void RemoveTemporaries() {  // async-signal-safe
  for (TemporarySlot& slot : g_temporaries)
    if (slot.state.load(std::memory_order_acquire) == 2) ::unlink(slot.path);
}

// Removes the temporary files and ends the process by `signal_number` the conventional way (status 128 + its
// number in a shell): the default action restored, the signal raised; it is blocked while a handler runs and is
// delivered as the handler returns. Async-signal-safe.
void DieOfSignal(int signal_number) {
  RemoveTemporaries();
  struct sigaction default_action {};
  default_action.sa_handler = SIG_DFL;
  sigemptyset(&default_action.sa_mask);
  ::sigaction(signal_number, &default_action, nullptr);
  ::raise(signal_number);
}

// Claims the right to end the process: true for exactly one caller, and only while no commit runs.
bool StartDying() {
  int state = g_commit_state.load();
  while (state == 0)
    if (g_commit_state.compare_exchange_weak(state, kDying)) return true;
  return false;
}

extern "C" void OnCleanupSignal(int signal_number) {
  if (StartDying()) DieOfSignal(signal_number);
  if (g_commit_state.load() & kDying) return;  // another thread is ending the process
  // A commit runs: the signal waits for it. If it ended meanwhile without seeing the signal, whoever takes the
  // signal back from g_pending_signal first acts on it, so it is neither lost nor acted on twice.
  g_pending_signal.store(signal_number);
  if (g_commit_state.load() == 0 && g_pending_signal.exchange(0) != 0 && StartDying()) DieOfSignal(signal_number);
}

// Signals wait while outputs are published (renamed, swapped back, copied in place); the last one out acts on
// what arrived meanwhile. Writes that can wait on another process (a FIFO's reader) finish before a section.
class CommitSection {
 public:
  CommitSection() {
    int state = g_commit_state.load();
    for (;;) {
      if (state & kDying) {
        for (;;) ::pause();  // a signal handler is removing the temporary files and ending the process
      }
      if (g_commit_state.compare_exchange_weak(state, state + 1)) return;
    }
  }
  ~CommitSection() {
    if (g_commit_state.fetch_sub(1) == 1)
      if (const int signal_number = g_pending_signal.exchange(0))
        if (StartDying()) DieOfSignal(signal_number);
  }
  CommitSection(const CommitSection&) = delete;
  CommitSection& operator=(const CommitSection&) = delete;
};

// ---------------------------------------------------------------------------------------------------------
// [SECTION] paths
// ---------------------------------------------------------------------------------------------------------

std::string DirectoryOf(const std::string& path) {
  const std::size_t slash = path.find_last_of('/');
  if (slash == std::string::npos) return ".";
  if (slash == 0) return "/";
  return path.substr(0, slash);
}

std::string NameOf(const std::string& path) {
  const std::size_t slash = path.find_last_of('/');
  return slash == std::string::npos ? path : path.substr(slash + 1);
}

std::string Identity(const struct stat& info) {
  return Sprintf("%llu:%llu", static_cast<unsigned long long>(info.st_dev),
                 static_cast<unsigned long long>(info.st_ino));
}

const char* KindOf(mode_t mode) {
  if (S_ISFIFO(mode)) return "a FIFO";
  if (S_ISCHR(mode)) return "a character device";
  if (S_ISBLK(mode)) return "a block device";
  if (S_ISSOCK(mode)) return "a socket";
  if (S_ISDIR(mode)) return "a directory";
  return "not a regular file";
}

// A process's own descriptors under /proc (where /dev/stdout, /dev/fd/N lead): the descriptor's number, else -1.
int ProcessDescriptor(const std::string& path) {
  const std::string own = Sprintf("/proc/%d/fd/", static_cast<int>(::getpid()));
  for (const std::string& prefix : {std::string("/proc/self/fd/"), std::string("/dev/fd/"), own}) {
    if (path.rfind(prefix, 0) != 0) continue;
    const std::string number = path.substr(prefix.size());
    if (number.empty() || number.size() > 9 || number.find_first_not_of("0123456789") != std::string::npos) return -1;
    return std::atoi(number.c_str());
  }
  return -1;
}

// Follows symbolic links to the path that is written; stops at a process's descriptors (/proc/…/fd/N, /dev/fd/N),
// whose links name open files, not paths.
std::string FollowSymlinks(const std::string& path) {
  std::string current = path;
  for (int hop = 0; hop < 40; ++hop) {
    struct stat info {};
    if (current.rfind("/proc/", 0) == 0 || ProcessDescriptor(current) >= 0 || ::lstat(current.c_str(), &info) != 0 ||
        !S_ISLNK(info.st_mode))
      return current;
    std::string link(PATH_MAX, '\0');
    const ssize_t length = ::readlink(current.c_str(), link.data(), link.size());
    if (length < 0) return current;
    link.resize(static_cast<std::size_t>(length));
    current = link.front() == '/' ? link : DirectoryOf(current) + "/" + link;
  }
  throw InputError("cannot write " + path + ": too many levels of symbolic links");
}

// The process's umask without changing it (umask(2) can only read it by setting it, which would race with other
// threads creating files): from /proc/self/status, else the usual 022.
mode_t CurrentUmask() {
  std::FILE* status = std::fopen("/proc/self/status", "re");
  unsigned mask = 022;
  if (status) {
    char line[256];
    while (std::fgets(line, sizeof line, status))
      if (std::sscanf(line, "Umask: %o", &mask) == 1) break;
    std::fclose(status);
  }
  return static_cast<mode_t>(mask);
}

void WriteAll(int fd, const char* data, std::size_t bytes, int* error) {
  while (bytes > 0) {
    const ssize_t wrote = ::write(fd, data, bytes);
    if (wrote < 0 && errno == EINTR) continue;
    if (wrote <= 0) {
      *error = wrote < 0 ? errno : EIO;
      return;
    }
    data += wrote;
    bytes -= static_cast<std::size_t>(wrote);
  }
}

// Copies the whole of `from` over `to` (truncated first); 0 or the error.
int CopyContents(int from, int to) {
  if (::ftruncate(to, 0) != 0 || ::lseek(to, 0, SEEK_SET) < 0 || ::lseek(from, 0, SEEK_SET) < 0) return errno;
  std::vector<char> chunk(1 << 20);
  for (;;) {
    const ssize_t got = ::read(from, chunk.data(), chunk.size());
    if (got < 0 && errno == EINTR) continue;
    if (got < 0) return errno;
    if (got == 0) return 0;
    int error = 0;
    WriteAll(to, chunk.data(), static_cast<std::size_t>(got), &error);
    if (error) return error;
  }
}

constexpr std::size_t kOutputBuffer = 1 << 18;

}  // namespace

// ---------------------------------------------------------------------------------------------------------
// [SECTION] InputFile
// ---------------------------------------------------------------------------------------------------------

InputFile::InputFile(std::string path) : path_(std::move(path)) {
  // O_NONBLOCK: opening a FIFO for reading would otherwise wait for a writer, forever if none comes.
  fd_ = ::open(path_.c_str(), O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
  if (fd_ < 0) throw InputError(Sprintf("cannot open %s: %s", path_.c_str(), std::strerror(errno)));
  struct stat info {};
  if (::fstat(fd_, &info) != 0 || !S_ISREG(info.st_mode)) {
    const int error = errno;
    const mode_t mode = info.st_mode;
    ::close(fd_);
    if (mode == 0) throw InputError(Sprintf("cannot open %s: %s", path_.c_str(), std::strerror(error)));
    throw InputError(Sprintf("cannot read %s: it is %s; flashviz reads its inputs from regular files", path_.c_str(),
                             KindOf(mode)));
  }
  ::fcntl(fd_, F_SETFL, ::fcntl(fd_, F_GETFL) & ~O_NONBLOCK);
  size_ = static_cast<std::int64_t>(info.st_size);
}

InputFile::~InputFile() {
  if (fd_ >= 0) ::close(fd_);
}

void InputFile::ReadAt(void* dst, std::size_t bytes, std::int64_t offset) const {
  char* at = static_cast<char*>(dst);
  while (bytes > 0) {
    const ssize_t got = ::pread(fd_, at, bytes, offset);
    if (got < 0 && errno == EINTR) continue;
    if (got <= 0)
      throw InputError(Sprintf("%s: read failed at byte %lld: %s", path_.c_str(), static_cast<long long>(offset),
                               got < 0 ? std::strerror(errno) : "the file became shorter while it was read"));
    at += got;
    bytes -= static_cast<std::size_t>(got);
    offset += got;
  }
}

std::string InputFile::ReadAll(std::int64_t max_bytes, const char* what) const {
  if (size_ > max_bytes)
    throw InputError(Sprintf("%s: %s, more than %s may be (%s)", path_.c_str(),
                             HumanBytes(static_cast<double>(size_)).c_str(), what,
                             HumanBytes(static_cast<double>(max_bytes)).c_str()));
  std::string bytes(static_cast<std::size_t>(size_), '\0');
  ReadAt(bytes.data(), bytes.size(), 0);
  return bytes;
}

std::string ReadWholeFile(const std::string& path, std::int64_t max_bytes, const char* what) {
  return InputFile(path).ReadAll(max_bytes, what);
}

// ---------------------------------------------------------------------------------------------------------
// [SECTION] OutputFile
// ---------------------------------------------------------------------------------------------------------

OutputFile::OutputFile(std::string path) : path_(std::move(path)) {
  InstallOutputCleanupHandlers();
  if (path_.empty()) throw InputError("cannot write an output with an empty name");
  Open();
  buffer_.reserve(kOutputBuffer);
}

OutputFile::~OutputFile() { Discard(); }

void OutputFile::Fail(const char* action, int error) {
  Discard();
  throw InputError(Sprintf("cannot %s %s: %s", action, path_.c_str(), std::strerror(error)));
}

void OutputFile::Open() {
  target_ = FollowSymlinks(path_);
  // Our own descriptors (/dev/stdout, /dev/fd/N): written through a duplicate, at the shared offset, as the
  // shell's redirection would.
  if (const int descriptor = ProcessDescriptor(target_); descriptor >= 0) {
    mode_ = Mode::kWriteThrough;
    fd_ = ::fcntl(descriptor, F_DUPFD_CLOEXEC, 3);
    struct stat info {};
    if (fd_ < 0 || ::fstat(fd_, &info) != 0) Fail("write", errno);
    if ((::fcntl(fd_, F_GETFL) & O_ACCMODE) == O_RDONLY) Fail("write", EBADF);
    identity_ = Identity(info);
    character_device_ = S_ISCHR(info.st_mode);
    return;
  }
  struct stat info {};
  if (::stat(target_.c_str(), &info) == 0) {
    target_existed_ = true;
    identity_ = Identity(info);
    if (S_ISDIR(info.st_mode)) throw InputError(Sprintf("cannot write %s: it is a directory", path_.c_str()));
    if (!S_ISREG(info.st_mode)) {
      // A device or a FIFO cannot be replaced: written through. O_NONBLOCK: a FIFO with no reader is an error
      // now rather than a wait without end.
      mode_ = Mode::kWriteThrough;
      character_device_ = S_ISCHR(info.st_mode);
      fd_ = ::open(target_.c_str(), O_WRONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
      if (fd_ < 0 && errno == ENXIO && S_ISFIFO(info.st_mode))
        throw InputError(Sprintf("cannot write %s: a FIFO with no reader (start the reader first)", path_.c_str()));
      if (fd_ < 0) Fail("write", errno);
      ::fcntl(fd_, F_SETFL, ::fcntl(fd_, F_GETFL) & ~O_NONBLOCK);
      return;
    }
    if (::access(target_.c_str(), W_OK) != 0) Fail("write", errno);
    mode_ = info.st_nlink > 1 ? Mode::kRewriteInPlace : Mode::kReplace;
  } else {
    if (errno != ENOENT) Fail("write", errno);
    struct stat directory {};
    if (::stat(DirectoryOf(target_).c_str(), &directory) != 0) Fail("write", errno);
    if (!S_ISDIR(directory.st_mode)) Fail("write", ENOTDIR);
    identity_ = Identity(directory) + "/" + NameOf(target_);
  }
  // The temporary file beside the target (same file system: the rename is atomic), with a unique name.
  temp_path_ = target_ + ".partial-XXXXXX";
  fd_ = ::mkostemp(temp_path_.data(), O_CLOEXEC);
  if (fd_ < 0 && errno == ENAMETOOLONG) {
    temp_path_ = DirectoryOf(target_) + "/flashviz.partial-XXXXXX";
    fd_ = ::mkostemp(temp_path_.data(), O_CLOEXEC);
  }
  if (fd_ < 0) Fail("write", errno);
  try {
    temp_slot_ = RegisterTemporary(temp_path_);
  } catch (...) {
    ::close(fd_);
    ::unlink(temp_path_.c_str());
    fd_ = -1;
    throw;
  }
  // mkostemp creates 0600: the result gets the target's mode and owner, or the usual mode of a new file.
  if (target_existed_) {
    ::fchmod(fd_, info.st_mode & 07777);
    if (info.st_uid != ::geteuid() || info.st_gid != ::getegid())
      if (::fchown(fd_, info.st_uid, info.st_gid) == 0) ::fchmod(fd_, info.st_mode & 07777);
  } else {
    ::fchmod(fd_, 0666 & ~CurrentUmask());
  }
}

void OutputFile::Write(const void* data, std::size_t bytes) {
  if (fd_ < 0) throw InputError("cannot write " + path_ + ": the output is closed");
  const char* at = static_cast<const char*>(data);
  if (buffer_.size() + bytes > kOutputBuffer) Flush();
  if (bytes >= kOutputBuffer) {
    int error = 0;
    WriteAll(fd_, at, bytes, &error);
    if (error) Fail("write", error);
  } else {
    buffer_.insert(buffer_.end(), at, at + bytes);
  }
  bytes_written_ += static_cast<std::int64_t>(bytes);
}

std::int64_t OutputFile::AvailableBytes() const {
  struct statvfs info {};
  if (mode_ == Mode::kWriteThrough || fd_ < 0 || ::fstatvfs(fd_, &info) != 0) return -1;
  return static_cast<std::int64_t>(info.f_bavail) * static_cast<std::int64_t>(info.f_frsize);
}

void OutputFile::Flush() {
  if (buffer_.empty()) return;
  int error = 0;
  WriteAll(fd_, buffer_.data(), buffer_.size(), &error);
  buffer_.clear();
  if (error) Fail("write", error);
}

void OutputFile::Finish() {
  if (fd_ < 0) throw InputError("cannot write " + path_ + ": the output is closed");
  Flush();
  if (mode_ == Mode::kWriteThrough) {
    ::close(fd_);
    fd_ = -1;
    return;
  }
  // No fsync: the outputs need not survive a power cut, and hw4's large outputs would pay for it in time. A
  // full disk shows in write(), or in close() on file systems that allocate late (NFS).
  const int closed = ::close(fd_);
  fd_ = -1;
  if (closed != 0 && errno != EINTR) Fail("write", errno);
}

// A name beside the target for a hard link to its old content (the undo copy): unique, never an existing file.
// Short, so that it fits beside a target whose own name is near the length limit.
std::string OutputFile::LinkUndoCopy() {
  static std::atomic<unsigned> counter{0};
  for (int attempt = 0; attempt < 100; ++attempt) {
    const std::string undo = Sprintf("%s/flashviz.previous-%d-%u", DirectoryOf(target_).c_str(),
                                     static_cast<int>(::getpid()), counter++);
    if (::link(target_.c_str(), undo.c_str()) == 0) return undo;
    if (errno != EEXIST) break;  // a file system without hard links: the caller copies instead
  }
  return {};
}

// A new, empty undo file beside the target (its name, or a short one when the target's is too long to extend);
// the descriptor, or −1 with errno set.
int OutputFile::CreateUndoFile() {
  std::string undo = target_ + ".previous-XXXXXX";
  int fd = ::mkostemp(undo.data(), O_CLOEXEC);
  if (fd < 0 && errno == ENAMETOOLONG) {
    undo = DirectoryOf(target_) + "/flashviz.previous-XXXXXX";
    fd = ::mkostemp(undo.data(), O_CLOEXEC);
  }
  if (fd >= 0) undo_path_ = undo;
  return fd;
}

// The target's old content copied into a new undo file (where no hard link can keep it); throws, leaving the
// target untouched, when that cannot be done.
void OutputFile::CopyUndo() {
  const int target = ::open(target_.c_str(), O_RDONLY | O_CLOEXEC | O_NOCTTY);
  const int undo = target >= 0 ? CreateUndoFile() : -1;
  int error = target < 0 || undo < 0 ? errno : 0;
  struct stat info {};
  if (!error && ::fstat(target, &info) == 0) ::fchmod(undo, info.st_mode & 07777);  // restored as it was
  if (!error) {
    try {
      undo_slot_ = RegisterTemporary(undo_path_);
    } catch (...) {
      error = EMFILE;
    }
  }
  if (!error) error = CopyContents(target, undo);
  for (const int fd : {target, undo})
    if (fd >= 0) ::close(fd);
  if (error) {
    DropUndoCopy();
    throw InputError(Sprintf("cannot write %s: its old content could not be kept for the undo: %s", path_.c_str(),
                             std::strerror(error)));
  }
}

void OutputFile::Publish() {
  if (mode_ == Mode::kWriteThrough) return;
  if (mode_ == Mode::kRewriteInPlace) return PublishInPlace();
  if (target_existed_) {
    // Swapped, not overwritten: until Settle the old file lives on under the temporary name.
    if (::renameat2(AT_FDCWD, temp_path_.c_str(), AT_FDCWD, target_.c_str(), RENAME_EXCHANGE) == 0) {
      exchanged_ = true;
      published_ = true;
      return;
    }
    if (errno != EINVAL && errno != ENOSYS && errno != ENOTSUP)
      throw InputError(Sprintf("cannot write %s: %s", path_.c_str(), std::strerror(errno)));
    // No exchange on this file system: a hard link keeps the old content for Unpublish, or else a copy.
    undo_path_ = LinkUndoCopy();
    if (!undo_path_.empty()) undo_slot_ = RegisterTemporary(undo_path_);
    else CopyUndo();
    if (::rename(temp_path_.c_str(), target_.c_str()) != 0) {
      const int error = errno;
      DropUndoCopy();
      throw InputError(Sprintf("cannot write %s: %s", path_.c_str(), std::strerror(error)));
    }
  } else if (::renameat2(AT_FDCWD, temp_path_.c_str(), AT_FDCWD, target_.c_str(), RENAME_NOREPLACE) != 0) {
    if (errno == EEXIST) {  // the target appeared while we wrote: replace it like one that was there
      struct stat appeared {};
      if (::lstat(target_.c_str(), &appeared) != 0 || !S_ISREG(appeared.st_mode))
        throw InputError(Sprintf("cannot write %s: something other than a file appeared there", path_.c_str()));
      target_existed_ = true;
      return Publish();
    }
    // Without RENAME_NOREPLACE (some file systems), a plain rename.
    if ((errno != EINVAL && errno != ENOSYS && errno != ENOTSUP) || ::rename(temp_path_.c_str(), target_.c_str()) != 0)
      throw InputError(Sprintf("cannot write %s: %s", path_.c_str(), std::strerror(errno)));
  }
  UnregisterTemporary(temp_slot_);
  temp_path_.clear();
  published_ = true;
}

void OutputFile::PublishInPlace() {
  // The other hard links must see the new content: the target is rewritten, after its old content was copied
  // aside (the undo copy) so that a failure here or in another output can put it back.
  struct Fd {
    int fd;
    ~Fd() {
      if (fd >= 0) ::close(fd);
    }
  };
  const Fd target{::open(target_.c_str(), O_RDWR | O_CLOEXEC | O_NOCTTY)};
  if (target.fd < 0) Fail("write", errno);
  const Fd temp{::open(temp_path_.c_str(), O_RDONLY | O_CLOEXEC)};
  if (temp.fd < 0) Fail("write", errno);
  const Fd old_copy{CreateUndoFile()};
  if (old_copy.fd < 0) Fail("write", errno);
  try {
    undo_slot_ = RegisterTemporary(undo_path_);
  } catch (...) {
    DropUndoCopy();
    throw;
  }
  if (const int error = CopyContents(target.fd, old_copy.fd)) {  // the target is untouched so far
    DropUndoCopy();
    throw InputError(Sprintf("cannot write %s: %s", path_.c_str(), std::strerror(error)));
  }
  if (const int error = CopyContents(temp.fd, target.fd)) {
    if (CopyContents(old_copy.fd, target.fd) != 0) {
      // Neither the new content nor the old one could be written back: the old one stays in the undo copy.
      const std::string kept = undo_path_;
      UnregisterTemporary(undo_slot_);
      undo_path_.clear();
      throw InputError(Sprintf("cannot write %s: %s; its previous content is in %s", path_.c_str(),
                               std::strerror(error), kept.c_str()));
    }
    DropUndoCopy();
    throw InputError(Sprintf("cannot write %s: %s", path_.c_str(), std::strerror(error)));
  }
  published_ = true;
}

void OutputFile::DropUndoCopy() {
  if (!undo_path_.empty()) ::unlink(undo_path_.c_str());
  undo_path_.clear();
  UnregisterTemporary(undo_slot_);
}

std::string OutputFile::Unpublish() {
  if (!published_) return {};
  published_ = false;
  bool restored = true;
  std::string kept;  // where the old content stays when it cannot be put back
  if (mode_ == Mode::kRewriteInPlace) {
    const int target = ::open(target_.c_str(), O_WRONLY | O_CLOEXEC | O_NOCTTY);
    const int old_copy = ::open(undo_path_.c_str(), O_RDONLY | O_CLOEXEC);
    restored = target >= 0 && old_copy >= 0 && CopyContents(old_copy, target) == 0;
    for (const int fd : {target, old_copy})
      if (fd >= 0) ::close(fd);
  } else if (exchanged_) {
    restored = ::renameat2(AT_FDCWD, temp_path_.c_str(), AT_FDCWD, target_.c_str(), RENAME_EXCHANGE) == 0;
    if (!restored) {
      // The old content is under the temporary name: kept there, not discarded with the output.
      kept = temp_path_;
      UnregisterTemporary(temp_slot_);
      temp_path_.clear();
    }
  } else if (!undo_path_.empty()) {
    restored = ::rename(undo_path_.c_str(), target_.c_str()) == 0;
    if (restored) undo_path_.clear();
  } else if (!target_existed_) {
    ::unlink(target_.c_str());
  }
  exchanged_ = false;
  if (restored) {
    DropUndoCopy();
    return {};
  }
  if (kept.empty()) kept = undo_path_;
  UnregisterTemporary(undo_slot_);  // the undo copy stays where it is: it holds the old content
  undo_path_.clear();
  return kept;
}

void OutputFile::Settle() {
  if (!temp_path_.empty()) ::unlink(temp_path_.c_str());
  UnregisterTemporary(temp_slot_);
  temp_path_.clear();
  DropUndoCopy();
  exchanged_ = false;
}

void OutputFile::Discard() {
  if (fd_ >= 0) ::close(fd_);
  fd_ = -1;
  buffer_.clear();
  if (!temp_path_.empty()) ::unlink(temp_path_.c_str());
  temp_path_.clear();
  UnregisterTemporary(temp_slot_);
  DropUndoCopy();
}

void OutputFile::Commit() {
  Finish();  // may block (a FIFO, a paused terminal): outside the section, where signals act at once
  CommitSection section;
  try {
    Publish();
  } catch (...) {
    Discard();  // the target is as it was; the temporary file goes at once
    throw;
  }
  Settle();
}

// ---------------------------------------------------------------------------------------------------------
// [SECTION] CommandFiles
// ---------------------------------------------------------------------------------------------------------

void CommandFiles::AddInput(const std::string& path) {
  struct stat info {};
  if (::stat(path.c_str(), &info) == 0) inputs_.push_back({path, Identity(info)});
}

OutputFile& CommandFiles::AddOutput(const std::string& path) {
  // Compared before the output opens, from what the path names now; the output's own resolution follows.
  auto output = std::make_unique<OutputFile>(path);
  for (const Input& input : inputs_)
    if (input.identity == output->identity_)
      throw InputError(Sprintf("%s is the same file as the input %s: refusing to write over an input", path.c_str(),
                               input.path.c_str()));
  for (const auto& other : outputs_)
    if (other->identity_ == output->identity_ && !output->character_device_)
      throw InputError(Sprintf("%s and %s are the same file: give each output its own", other->path().c_str(),
                               path.c_str()));
  outputs_.push_back(std::move(output));
  return *outputs_.back();
}

void CommandFiles::Commit() {
  // Every write error before anything is published; writing may block (a FIFO), so signals act at once here.
  for (auto& output : outputs_) output->Finish();
  CommitSection section;
  std::size_t published = 0;
  try {
    for (; published < outputs_.size(); ++published) outputs_[published]->Publish();
  } catch (const InputError& e) {
    // Put back what was published; an old content that cannot be put back is kept, and the message says where.
    std::string message = e.what();
    while (published > 0) {
      OutputFile& output = *outputs_[--published];
      if (const std::string kept = output.Unpublish(); !kept.empty())
        message += Sprintf("; %s could not be put back: its previous content is in %s", output.path().c_str(),
                           kept.c_str());
    }
    throw InputError(message);
  }
  for (auto& output : outputs_) output->Settle();
}

void WriteWholeFile(const std::string& path, std::string_view bytes) {
  OutputFile out(path);
  out.Write(bytes);
  out.Commit();
}

// ---------------------------------------------------------------------------------------------------------
// [SECTION] process set-up
// ---------------------------------------------------------------------------------------------------------

void InstallOutputCleanupHandlers() {
  // Idempotent rather than once: a disposition set back to the default (a forked child) gets the handler again.
  for (const int signal_number : kCleanupSignals) {
    struct sigaction current {};
    if (::sigaction(signal_number, nullptr, &current) != 0) continue;
    // Ignored (nohup, a shell's background job) stays ignored; a handler someone else installed is theirs.
    if (current.sa_handler != SIG_DFL || (current.sa_flags & SA_SIGINFO)) continue;
    struct sigaction action {};
    action.sa_handler = OnCleanupSignal;
    action.sa_flags = SA_RESTART;  // other threads' system calls go on while a signal waits for a commit
    sigemptyset(&action.sa_mask);
    ::sigaction(signal_number, &action, nullptr);
  }
}

bool FlushStandardOutput() {
  errno = 0;
  std::cout.flush();
  bool ok = !std::cout.fail();
  if (std::fflush(stdout) != 0) ok = false;
  if (std::ferror(stdout)) ok = false;
  if (ok) errno = 0;
  return ok;
}

void GuardStandardDescriptors() {
  for (int fd = 0; fd <= 2; ++fd) {
    if (::fcntl(fd, F_GETFD) >= 0 || errno != EBADF) continue;
    // The opposite direction: reading from a closed stdin or writing to a closed stdout still fails.
    const int opened = ::open("/dev/null", fd == 0 ? O_WRONLY : O_RDONLY);
    if (opened >= 0 && opened != fd) {
      ::dup2(opened, fd);
      ::close(opened);
    }
  }
}

}  // namespace flashviz
