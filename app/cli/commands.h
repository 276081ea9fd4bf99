// The subcommands of `flashviz`. Each Add*Command registers its options on `app` and returns what to run
// when that subcommand was chosen; main.cpp runs the one that was.
#pragma once

#include <functional>
#include <vector>

namespace CLI {
class App;
}

namespace flashviz {

struct Command {
  CLI::App* subcommand;
  std::function<int()> run;  // the exit status
};
using CommandList = std::vector<Command>;

void AddTraceCommand(CLI::App& app, CommandList& commands);
void AddHw4Command(CLI::App& app, CommandList& commands);
void AddGenCommand(CLI::App& app, CommandList& commands);
void AddGuiCommand(CLI::App& app, CommandList& commands);      // app/gui (when built with the GUI)
void AddBenchCommand(CLI::App& app, CommandList& commands);    // app/cli/cmd_bench.cpp
void AddKernelsCommand(CLI::App& app, CommandList& commands);  // app/cli/cmd_kernels.cpp
void AddVortexCommand(CLI::App& app, CommandList& commands);   // app/cli/cmd_vortex.cpp

}  // namespace flashviz
