// Every file flashviz reads or writes goes through this module: the command line, the GUI's exports, sessions
// and screenshots. The rules (README, "Files"):
//
// Inputs are opened without blocking (a FIFO cannot hang the program) and must be regular files, read within
// a size bound given by the caller.
//
// Outputs:
//   - a regular file (or a path that does not exist yet) is written to a unique temporary file in the same
//     directory and renamed over the target at the end, keeping the target's mode and owner; a target with
//     other hard links is rewritten in place at the end instead, so that every link sees the new content;
//   - anything else (a device, a FIFO, /dev/stdout) is written through directly: it cannot be replaced;
//   - symbolic links are followed to their target, which is what gets written;
//   - an output that is the same file as an input or as another output of the same command is refused
//     before anything is written (device and inode compared, not names);
//   - the outputs of one command are committed together or not at all (CommandFiles);
//   - SIGINT, SIGTERM, SIGHUP and SIGPIPE remove the temporary files, then end the process with the signal's
//     conventional status.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "kernels/common/input_error.h"

namespace flashviz {

// ---------------------------------------------------------------------------------------------------------
// Inputs
// ---------------------------------------------------------------------------------------------------------

class InputFile {
 public:
  // Throws InputError: "cannot open PATH: reason", "cannot read PATH: it is a directory / not a regular file
  // (a FIFO)".
  explicit InputFile(std::string path);
  ~InputFile();
  InputFile(const InputFile&) = delete;
  InputFile& operator=(const InputFile&) = delete;

  const std::string& path() const { return path_; }
  std::int64_t size() const { return size_; }
  // Reads exactly `bytes` from `offset` (safe from several threads at once); throws InputError when the file
  // has become shorter than that or the read fails.
  void ReadAt(void* dst, std::size_t bytes, std::int64_t offset) const;
  // The whole file. `what` names it in the error for a file over `max_bytes` ("a session", "a benchmark CSV").
  std::string ReadAll(std::int64_t max_bytes, const char* what) const;
  int fd() const { return fd_; }

 private:
  std::string path_;
  int fd_ = -1;
  std::int64_t size_ = 0;
};

// InputFile(path).ReadAll(max_bytes, what).
std::string ReadWholeFile(const std::string& path, std::int64_t max_bytes, const char* what);

// ---------------------------------------------------------------------------------------------------------
// Outputs
// ---------------------------------------------------------------------------------------------------------

class OutputFile {
 public:
  // Resolves the target and opens the temporary file (or the target itself, when it is written through) now,
  // so an unwritable destination is reported before any long computation. Throws InputError with one line.
  explicit OutputFile(std::string path);
  ~OutputFile();  // not committed: the temporary file is removed and the target is untouched
  OutputFile(const OutputFile&) = delete;
  OutputFile& operator=(const OutputFile&) = delete;

  // Buffered; a failed write (disk full, file too large, a closed pipe) throws InputError at once.
  void Write(const void* data, std::size_t bytes);
  void Write(std::string_view text) { Write(text.data(), text.size()); }
  // Commits this output alone: for several outputs of one command use CommandFiles::Commit.
  void Commit();

  const std::string& path() const { return path_; }  // as the user gave it, for messages
  bool writes_through() const { return mode_ == Mode::kWriteThrough; }
  std::int64_t bytes_written() const { return bytes_written_; }
  // Free bytes on the file system the output goes to, or −1 when it is written through (a device, a pipe).
  std::int64_t AvailableBytes() const;

 private:
  friend class CommandFiles;
  enum class Mode { kReplace, kRewriteInPlace, kWriteThrough };

  void Open();
  void Flush();
  void Finish();     // the data on disk, the temporary file closed: every write error surfaces here
  void Publish();         // the temporary file moved over the target, the old content kept as the undo copy
  void PublishInPlace();  // kRewriteInPlace: the target rewritten, its old content copied aside first
  // Puts the target back as it was before Publish; when it cannot, the old content is kept and its path returned.
  std::string Unpublish();
  void Settle();          // after a successful commit: the temporary file and the undo copy removed
  std::string LinkUndoCopy();
  int CreateUndoFile();
  void CopyUndo();
  void DropUndoCopy();
  void Discard();
  [[noreturn]] void Fail(const char* action, int error);

  std::string path_;         // as given
  std::string target_;       // after following symbolic links
  std::string identity_;     // device and inode of the target, or of its directory and its name when new
  std::string temp_path_;    // kReplace, kRewriteInPlace
  std::string undo_path_;    // while committing: the old content, where it is not under temp_path_
  int undo_slot_ = -1;
  Mode mode_ = Mode::kReplace;
  bool target_existed_ = false;
  bool character_device_ = false;  // /dev/null, a terminal: two outputs to one lose nothing
  bool published_ = false;
  bool exchanged_ = false;   // published by swapping with the old target: temp_path_ now holds the old file
  int fd_ = -1;
  int temp_slot_ = -1;       // the temporary file's entry in the signal handler's list
  std::vector<char> buffer_;
  std::int64_t bytes_written_ = 0;
};

// The files of one command: the inputs it reads and the outputs it writes. An output that is the same file as
// one of the inputs or as an earlier output is refused when it is added, before anything is written, and
// Commit publishes every output or none.
class CommandFiles {
 public:
  // Remembers what `path` is (device, inode) when it exists; a missing input is the reader's to report.
  void AddInput(const std::string& path);
  // Adds and opens an output; throws InputError ("OUT is the same file as the input IN: ...").
  OutputFile& AddOutput(const std::string& path);
  // Publishes every output; when one cannot be, those already published are put back and InputError is thrown.
  // Signals that arrive meanwhile wait until the outputs are in a consistent state.
  void Commit();

 private:
  struct Input {
    std::string path, identity;
  };
  std::vector<Input> inputs_;
  std::vector<std::unique_ptr<OutputFile>> outputs_;
};

// WriteWholeFile(path, bytes): one output, written and committed (sessions, screenshots, exports).
void WriteWholeFile(const std::string& path, std::string_view bytes);

// Installs the handlers for SIGINT, SIGTERM, SIGHUP and SIGPIPE that remove temporary files (done by the first
// OutputFile as well; main calls it first thing). A signal the process inherited as ignored stays ignored.
void InstallOutputCleanupHandlers();

// Checks that standard output took everything written to it (flushed): false when it did not (a full device, a
// closed descriptor), with errno set when the failing write was this last flush and 0 when it came earlier.
bool FlushStandardOutput();

// Opens /dev/null in place of a closed standard descriptor (0, 1, 2), for reading where the descriptor is for
// writing: writes to a closed stdout then fail as they should, instead of landing in the first file opened.
void GuardStandardDescriptors();

}  // namespace flashviz
