// kernels/common/files.h: what every output and input of flashviz goes through. Each test is one of the ways an
// output could destroy data or an input could hang, made on real files, links, devices and FIFOs.
#include "kernels/common/files.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <csignal>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <future>
#include <string>
#include <thread>

namespace flashviz {
namespace {

namespace fs = std::filesystem;

class Files : public ::testing::Test {
 protected:
  void SetUp() override {
    char name[] = "/tmp/flashviz-files-XXXXXX";
    ASSERT_NE(::mkdtemp(name), nullptr);
    dir_ = name;
  }
  void TearDown() override {
    ::chmod(dir_.c_str(), 0755);
    fs::remove_all(dir_);
  }
  std::string Path(const std::string& name) const { return (dir_ / name).string(); }
  static void Put(const std::string& path, const std::string& text) { std::ofstream(path, std::ios::binary) << text; }
  static std::string Get(const std::string& path) { return ReadWholeFile(path, 1 << 20, "a test file"); }
  // Names in the directory: a temporary file left behind shows here.
  std::vector<std::string> Names() const {
    std::vector<std::string> names;
    for (const auto& entry : fs::directory_iterator(dir_)) names.push_back(entry.path().filename().string());
    std::sort(names.begin(), names.end());
    return names;
  }
  fs::path dir_;
};

using NameList = std::vector<std::string>;

TEST_F(Files, AnExistingFileIsUntouchedUntilCommit) {
  const std::string path = Path("out.bin");
  Put(path, "old");
  {
    OutputFile out(path);
    out.Write("new contents");
    EXPECT_EQ(Get(path), "old");
    // Destroyed without Commit(): as if the computation failed.
  }
  EXPECT_EQ(Get(path), "old");
  EXPECT_EQ(Names(), NameList{"out.bin"}) << "no temporary file left behind";
  WriteWholeFile(path, "new");
  EXPECT_EQ(Get(path), "new");
  EXPECT_EQ(Names(), NameList{"out.bin"});
}

TEST_F(Files, UnwritablePathsAreReportedWhenTheOutputOpens) {
  EXPECT_THROW(OutputFile(Path("missing/dir/out.bin")), InputError);
  EXPECT_THROW(OutputFile(dir_.string()), InputError);  // a directory
  EXPECT_THROW(OutputFile(""), InputError);
  if (::geteuid() != 0) {  // root writes anywhere
    ::chmod(dir_.c_str(), 0555);
    EXPECT_THROW(OutputFile(Path("out.bin")), InputError);
  }
}

TEST_F(Files, ASymbolicLinkIsFollowedToItsTarget) {
  Put(Path("target.bin"), "old");
  fs::create_symlink("target.bin", Path("link.bin"));
  fs::create_symlink("new.bin", Path("dangling.bin"));
  WriteWholeFile(Path("link.bin"), "through the link");
  WriteWholeFile(Path("dangling.bin"), "created at the target");
  EXPECT_TRUE(fs::is_symlink(Path("link.bin")));
  EXPECT_TRUE(fs::is_symlink(Path("dangling.bin")));
  EXPECT_EQ(Get(Path("target.bin")), "through the link");
  EXPECT_EQ(Get(Path("new.bin")), "created at the target");
}

TEST_F(Files, TheTargetKeepsItsModeAndItsHardLinks) {
  // 0640: neither what a temporary file is created with (0600) nor what the umask gives a new file.
  const std::string path = Path("private.bin");
  Put(path, "old");
  ::chmod(path.c_str(), 0640);
  struct stat before {};
  ASSERT_EQ(::stat(path.c_str(), &before), 0);
  WriteWholeFile(path, "new");
  struct stat info {};
  ASSERT_EQ(::stat(path.c_str(), &info), 0);
  EXPECT_EQ(info.st_mode & 07777, 0640u);
  EXPECT_NE(info.st_ino, before.st_ino) << "a file with one link is replaced, not rewritten";

  Put(Path("shared.bin"), "old");
  ASSERT_EQ(::link(Path("shared.bin").c_str(), Path("other-name.bin").c_str()), 0);
  WriteWholeFile(Path("shared.bin"), "seen by every link");
  EXPECT_EQ(Get(Path("other-name.bin")), "seen by every link");
  ASSERT_EQ(::stat(Path("shared.bin").c_str(), &info), 0);
  EXPECT_EQ(info.st_nlink, 2u);
  EXPECT_EQ(Names(), (NameList{"other-name.bin", "private.bin", "shared.bin"}));
}

// A FIFO's reader or writer that a failed assertion left waiting would hang the test instead of failing it:
// opening the other end (non-blocking) on the way out releases it.
class FifoRelease {
 public:
  FifoRelease(std::string path, int flags) : path_(std::move(path)), flags_(flags) {}
  ~FifoRelease() {
    const int fd = ::open(path_.c_str(), flags_ | O_NONBLOCK);
    if (fd >= 0) ::close(fd);
  }

 private:
  std::string path_;
  int flags_;
};

TEST_F(Files, ADeviceIsWrittenThroughNotReplaced) {
  // /dev/null behind a link (anyone can make one), and a device node of our own where we may make one.
  fs::create_symlink("/dev/null", Path("null-link"));
  WriteWholeFile(Path("null-link"), "discarded");
  EXPECT_TRUE(fs::is_symlink(Path("null-link")));
  EXPECT_TRUE(fs::is_character_file("/dev/null"));
  if (::mknod(Path("devnull").c_str(), S_IFCHR | 0666, makedev(1, 3)) != 0)
    GTEST_SKIP() << "cannot make a device node here (" << std::strerror(errno) << "); the link case passed";
  WriteWholeFile(Path("devnull"), "discarded");
  EXPECT_TRUE(fs::is_character_file(Path("devnull"))) << "the device node became a regular file";
  EXPECT_EQ(Names(), (NameList{"devnull", "null-link"}));
}

TEST_F(Files, AFifoIsWrittenThroughAndOneWithoutAReaderIsAnError) {
  const std::string fifo = Path("fifo");
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  EXPECT_THROW(OutputFile{fifo}, InputError) << "no reader: refused at once instead of waiting";
  const FifoRelease release(fifo, O_RDWR);  // declared before the reader: it outlives the reader's future
  auto reader = std::async(std::launch::async, [&] {
    std::ifstream in(fifo, std::ios::binary);
    return std::string(std::istreambuf_iterator<char>(in), {});
  });
  // The reader opens asynchronously: retry until it is there.
  std::unique_ptr<OutputFile> out;
  for (int attempt = 0; attempt < 500 && !out; ++attempt) {
    try {
      out = std::make_unique<OutputFile>(fifo);
    } catch (const InputError&) {
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
  }
  ASSERT_TRUE(out) << "the FIFO never got its reader";
  EXPECT_TRUE(out->writes_through());
  out->Write("streamed");
  out->Commit();
  EXPECT_EQ(reader.get(), "streamed");
  struct stat info {};
  ASSERT_EQ(::lstat(fifo.c_str(), &info), 0);
  EXPECT_TRUE(S_ISFIFO(info.st_mode));
}

TEST_F(Files, TemporaryNamesAreUniqueAndNeverFollowALink) {
  // A fixed "PATH.tmp" would be deleted, or written through when it is a link to someone else's file.
  const std::string path = Path("v.png");
  Put(Path("v.png.tmp"), "someone's file");
  Put(Path("victim"), "untouched");
  fs::create_symlink("victim", Path("v.png.partial"));
  OutputFile first(path), second(path);  // two writers of one path at once
  first.Write("first");
  second.Write("second");
  first.Commit();
  second.Commit();
  EXPECT_EQ(Get(path), "second");
  EXPECT_EQ(Get(Path("v.png.tmp")), "someone's file");
  EXPECT_EQ(Get(Path("victim")), "untouched");
  EXPECT_EQ(Names(), (NameList{"v.png", "v.png.partial", "v.png.tmp", "victim"}));
}

TEST_F(Files, AnOutputThatIsAnInputIsRefusedBeforeAnythingIsWritten) {
  const std::string input = Path("in.bin");
  Put(input, "precious");
  ASSERT_EQ(::link(input.c_str(), Path("hard-link.bin").c_str()), 0);
  fs::create_symlink("in.bin", Path("soft-link.bin"));
  for (const std::string& output : {input, Path("./in.bin"), Path("hard-link.bin"), Path("soft-link.bin")}) {
    CommandFiles files;
    files.AddInput(input);
    EXPECT_THROW(files.AddOutput(output), InputError) << output;
  }
  EXPECT_EQ(Get(input), "precious");
  EXPECT_EQ(Names(), (NameList{"hard-link.bin", "in.bin", "soft-link.bin"}));
}

TEST_F(Files, TwoOutputsThatAreOneFileAreRefused) {
  {
    CommandFiles files;
    files.AddOutput(Path("s"));
    EXPECT_THROW(files.AddOutput(Path("./s")), InputError) << "one new file, spelled two ways";
  }
  EXPECT_EQ(Names(), NameList{});
  // Two outputs to /dev/null discard twice: nothing is lost, so that stays allowed. (Through links of our own:
  // a regression that replaced its output would replace a link here, not the system's /dev/null.)
  fs::create_symlink("/dev/null", Path("null-a"));
  fs::create_symlink("/dev/null", Path("null-b"));
  CommandFiles files;
  files.AddOutput(Path("null-a")).Write("a");
  files.AddOutput(Path("null-b")).Write("b");
  files.Commit();
  EXPECT_TRUE(fs::is_symlink(Path("null-a")) && fs::is_symlink(Path("null-b")));
}

// RLIMIT_FSIZE makes writes past a size fail (EFBIG) as a full disk would, for this process only.
class FileSizeLimit {
 public:
  explicit FileSizeLimit(rlim_t bytes) {
    ::getrlimit(RLIMIT_FSIZE, &saved_);
    previous_ = std::signal(SIGXFSZ, SIG_IGN);
    rlimit limit = saved_;
    limit.rlim_cur = bytes;
    ::setrlimit(RLIMIT_FSIZE, &limit);
  }
  ~FileSizeLimit() {
    ::setrlimit(RLIMIT_FSIZE, &saved_);
    std::signal(SIGXFSZ, previous_);
  }

 private:
  rlimit saved_{};
  void (*previous_)(int) = nullptr;
};

TEST_F(Files, OutputsAreCommittedTogetherOrNotAtAll) {
  Put(Path("first"), "old first");
  Put(Path("second"), "old second");
  {
    const FileSizeLimit limit(4096);
    CommandFiles files;
    files.AddOutput(Path("first")).Write("new first");
    OutputFile& second = files.AddOutput(Path("second"));
    // Under the buffer's size: the write is held, and fails only when the outputs are committed.
    second.Write(std::string(8192, 'x'));
    EXPECT_THROW(files.Commit(), InputError);
  }
  EXPECT_EQ(Get(Path("first")), "old first") << "the first output replaced its target though the second failed";
  EXPECT_EQ(Get(Path("second")), "old second");
  EXPECT_EQ(Names(), (NameList{"first", "second"}));
}

// A publish that fails after another output was published puts that one back: here the second output's
// directory is gone by the time the outputs are committed.
TEST_F(Files, AFailedPublishPutsTheOutputsAlreadyPublishedBack) {
  Put(Path("first"), "old first");
  Put(Path("shared"), "old shared");
  ASSERT_EQ(::link(Path("shared").c_str(), Path("shared-link").c_str()), 0);
  fs::create_directory(Path("sub"));
  {
    CommandFiles files;
    files.AddOutput(Path("first")).Write("new first");    // replaced by a swap
    files.AddOutput(Path("shared")).Write("new shared");  // hard-linked: rewritten in place
    files.AddOutput(Path("sub/second")).Write("second");
    fs::remove_all(Path("sub"));
    EXPECT_THROW(files.Commit(), InputError);
  }
  EXPECT_EQ(Get(Path("first")), "old first");
  EXPECT_EQ(Get(Path("shared")), "old shared");
  EXPECT_EQ(Get(Path("shared-link")), "old shared");
  EXPECT_EQ(Names(), (NameList{"first", "shared", "shared-link"})) << "a temporary or undo copy was left";
}

// Rewriting a hard-linked target in place first copies its old content aside; when even that copy cannot be
// made (a full disk), the target must be left as it was, not emptied.
TEST_F(Files, AHardLinkedTargetSurvivesAFailedCopyAside) {
  const std::string big(8192, 'o');
  Put(Path("linked"), big);
  ASSERT_EQ(::link(Path("linked").c_str(), Path("link2").c_str()), 0);
  {
    const FileSizeLimit limit(4096);
    OutputFile out(Path("linked"));
    out.Write("new");
    EXPECT_THROW(out.Commit(), InputError);
  }
  EXPECT_EQ(Get(Path("linked")), big);
  EXPECT_EQ(Names(), (NameList{"link2", "linked"}));
}

// A name near the file system's limit (255 bytes) leaves no room for a suffix: the temporary and undo files then
// take short names of their own, for a new target and for a hard-linked one rewritten in place.
TEST_F(Files, NamesNearTheLengthLimitStillWork) {
  const std::string name(250, 'n');
  WriteWholeFile(Path(name), "first");
  EXPECT_EQ(Get(Path(name)), "first");
  ASSERT_EQ(::link(Path(name).c_str(), Path("short-link").c_str()), 0);
  WriteWholeFile(Path(name), "second");
  EXPECT_EQ(Get(Path("short-link")), "second");
  EXPECT_EQ(Names(), (NameList{name, "short-link"}));
}

// A new output whose path is taken by something else while it is written: never swapped with a directory.
TEST_F(Files, SomethingThatAppearsAtANewTargetIsNotReplaced) {
  OutputFile out(Path("late"));
  out.Write("data");
  fs::create_directory(Path("late"));
  EXPECT_THROW(out.Commit(), InputError);
  EXPECT_TRUE(fs::is_directory(Path("late")));
  EXPECT_EQ(Names(), NameList{"late"});
}

TEST_F(Files, AFailedWriteIsReportedAtOnce) {
  const FileSizeLimit limit(1 << 20);
  OutputFile out(Path("big"));
  const std::string chunk(1 << 16, 'x');
  int writes = 0;
  EXPECT_THROW(
      for (; writes < 1000; ++writes) out.Write(chunk), InputError);
  EXPECT_LT(writes, 40) << "the write error waited for the end of the output";
  EXPECT_EQ(Names(), NameList{});
}

// A child makes an output, then waits for the signal; the parent sends it and checks what is left.
TEST_F(Files, SignalsRemoveTemporaryFilesAndEndTheProcessConventionally) {
  for (const int signal_number : {SIGINT, SIGTERM, SIGHUP}) {
    int ready[2];
    ASSERT_EQ(::pipe(ready), 0);
    const pid_t child = ::fork();
    ASSERT_GE(child, 0);
    if (child == 0) {
      ::close(ready[0]);
      // The test runner may have been started with these ignored (a shell's background job): the defaults, as
      // for a program run from a terminal.
      for (const int s : {SIGINT, SIGTERM, SIGHUP}) std::signal(s, SIG_DFL);
      try {
        OutputFile out(Path("trace.jsonl"));
        out.Write(std::string(1 << 20, 'x'));
        if (::write(ready[1], "r", 1) != 1) ::_exit(4);
        for (;;) ::pause();
      } catch (...) {
        ::_exit(3);
      }
    }
    ::close(ready[1]);
    char byte = 0;
    ASSERT_EQ(::read(ready[0], &byte, 1), 1) << "the child did not get as far as writing";
    ::close(ready[0]);
    EXPECT_EQ(Names().size(), 1u) << "the temporary file exists while the output is written";
    ::kill(child, signal_number);
    int status = 0;
    ASSERT_EQ(::waitpid(child, &status, 0), child);
    EXPECT_TRUE(WIFSIGNALED(status) && WTERMSIG(status) == signal_number)
        << "signal " << signal_number << ": status " << status;
    EXPECT_EQ(Names(), NameList{}) << "signal " << signal_number << " left a temporary file";
  }
}

TEST_F(Files, InputsMustBeRegularFilesAndAreNeverWaitedFor) {
  const std::string fifo = Path("fifo");
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  const FifoRelease release(fifo, O_RDWR);
  // Opening a FIFO for reading blocks until a writer comes: run it where a hang shows as a failure.
  auto opened = std::async(std::launch::async, [&] {
    try {
      InputFile file(fifo);
      return std::string("opened");
    } catch (const InputError& e) {
      return std::string(e.what());
    }
  });
  ASSERT_EQ(opened.wait_for(std::chrono::seconds(10)), std::future_status::ready) << "the FIFO hung the reader";
  EXPECT_NE(opened.get().find("a FIFO"), std::string::npos);
  EXPECT_THROW(InputFile{dir_.string()}, InputError);
  EXPECT_THROW(InputFile{"/dev/zero"}, InputError);
  EXPECT_THROW(InputFile{Path("absent")}, InputError);
}

TEST_F(Files, WholeFilesAreReadWithinABound) {
  Put(Path("small"), "12345");
  EXPECT_EQ(ReadWholeFile(Path("small"), 5, "a small file"), "12345");
  try {
    ReadWholeFile(Path("small"), 4, "a small file");
    FAIL() << "read past the bound";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("more than a small file may be"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace flashviz
