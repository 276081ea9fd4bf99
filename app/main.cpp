// flashviz: see and measure how FlashAttention works.
// 1. register the subcommands (the GUI is the default when the first argument is an option or absent)
// 2. parse; 3. run the chosen one; bad input ends with one line on stderr and a non-zero status.
#include <CLI/CLI.hpp>
#include <cerrno>
#include <csignal>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "app/cli/commands.h"
#include "kernels/common/files.h"
#include "kernels/cpu/problem.h"

namespace {

// `flashviz --n 64 ...` means `flashviz gui --n 64 ...`.
std::vector<std::string> WithDefaultSubcommand(int argc, char** argv, const flashviz::CommandList& commands,
                                               const char* default_name) {
  std::vector<std::string> args(argv, argv + argc);
  if (!default_name) return args;
  const bool wants_help = argc > 1 && (std::strcmp(argv[1], "--help") == 0 || std::strcmp(argv[1], "-h") == 0 ||
                                       std::strcmp(argv[1], "--version") == 0);
  bool names_subcommand = false;
  if (argc > 1)
    for (const auto& c : commands) names_subcommand |= c.subcommand->get_name() == argv[1];
  if (!wants_help && !names_subcommand) args.insert(args.begin() + 1, default_name);
  return args;
}

// What was printed must have reached standard output: a full disk or a closed descriptor is an error, not a
// silent success.
int CheckedExit(int status) {
  if (!flashviz::FlushStandardOutput()) {
    const int error = errno;
    if (error) std::fprintf(stderr, "flashviz: cannot write standard output: %s\n", std::strerror(error));
    else std::fprintf(stderr, "flashviz: cannot write standard output: a write failed\n");
    return status == 0 ? 1 : status;
  }
  return status;
}

int Main(int argc, char** argv);

}  // namespace

int main(int argc, char** argv) {
  flashviz::GuardStandardDescriptors();
  flashviz::InstallOutputCleanupHandlers();
  // An output over the file-size limit (ulimit -f) is a write error with its message, not a core dump.
  std::signal(SIGXFSZ, SIG_IGN);
  return CheckedExit(Main(argc, argv));
}

namespace {

int Main(int argc, char** argv) {
  CLI::App app{"flashviz: step through FlashAttention tile by tile, count its HBM and SRAM traffic, map it onto "
               "Vortex, and measure real CUDA kernels"};
  app.set_version_flag("--version", "flashviz " FLASHVIZ_VERSION);
  app.require_subcommand(1);
  // Usage errors get the same one-line form as every other error.
  app.failure_message([](const CLI::App*, const CLI::Error& e) {
    return std::string("flashviz: ") + e.what() + " (see --help)\n";
  });
  flashviz::CommandList commands;
#ifdef FLASHVIZ_HAVE_GUI
  flashviz::AddGuiCommand(app, commands);
  const char* default_command = "gui";
#else
  const char* default_command = nullptr;
#endif
  flashviz::AddTraceCommand(app, commands);
  flashviz::AddHw4Command(app, commands);
  flashviz::AddGenCommand(app, commands);
  flashviz::AddVortexCommand(app, commands);
  flashviz::AddBenchCommand(app, commands);
  flashviz::AddKernelsCommand(app, commands);

  std::vector<std::string> args = WithDefaultSubcommand(argc, argv, commands, default_command);
  std::vector<char*> arg_pointers;
  for (auto& a : args) arg_pointers.push_back(a.data());
  // Exit statuses, one scheme for every subcommand: 0 success, 1 a failure while running (a file, the GPU, a
  // check that did not pass), 2 a usage error (an unknown, missing, malformed or impossible option).
  try {
    app.parse(static_cast<int>(arg_pointers.size()), arg_pointers.data());
  } catch (const CLI::ParseError& e) {
    return app.exit(e) == 0 ? 0 : 2;  // --help and --version are parse "errors" that succeed
  }
  try {
    for (const auto& c : commands)
      if (c.subcommand->parsed()) return c.run();
  } catch (const flashviz::UsageError& e) {
    std::fprintf(stderr, "flashviz: %s (see --help)\n", e.what());
    return 2;
  } catch (const flashviz::InputError& e) {
    std::fprintf(stderr, "flashviz: %s\n", e.what());
    return 1;
  } catch (const std::bad_alloc&) {
    std::fprintf(stderr, "flashviz: out of memory\n");
    return 1;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "flashviz: %s\n", e.what());
    return 1;
  }
  return 0;
}

}  // namespace
