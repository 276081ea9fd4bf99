// `flashviz vortex` as a user runs it: the JSON object's fields, the text, and invalid combinations (one line on
// stderr, non-zero exit).
#include <gtest/gtest.h>

#include <array>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <sys/wait.h>
#include <unistd.h>

namespace {

struct CommandResult {
  int status = -1;
  std::string out, err;
};

CommandResult RunFlashviz(const std::string& args) {
  char err_path[] = "/tmp/flashviz_vortex_test_XXXXXX";
  const int fd = mkstemp(err_path);
  EXPECT_GE(fd, 0);
  close(fd);
  const std::string command = std::string(FLASHVIZ_BINARY) + " " + args + " 2>" + err_path;
  CommandResult run;
  FILE* pipe = popen(command.c_str(), "r");
  EXPECT_NE(pipe, nullptr);
  std::array<char, 4096> buffer;
  std::size_t got;
  while ((got = std::fread(buffer.data(), 1, buffer.size(), pipe)) > 0) run.out.append(buffer.data(), got);
  const int raw = pclose(pipe);
  run.status = WIFEXITED(raw) ? WEXITSTATUS(raw) : -1;
  std::ifstream err(err_path);
  std::stringstream text;
  text << err.rdbuf();
  run.err = text.str();
  std::remove(err_path);
  return run;
}

TEST(CliVortex, ReportConfigurationJson) {
  const CommandResult run = RunFlashviz("vortex --json");
  ASSERT_EQ(run.status, 0) << run.err;
  const auto j = nlohmann::json::parse(run.out);
  EXPECT_EQ(j["mode"], "simt");
  EXPECT_EQ(j["br"], 16);
  EXPECT_EQ(j["bc"], 16);
  EXPECT_EQ(j["fits"], true);
  EXPECT_TRUE(j["reason"].is_string());
  ASSERT_EQ(j["rows"].size(), 64u);
  for (const auto& row : j["rows"]) {
    const int r = row["row"].get<int>(), b = row["core"].get<int>(), w = row["warp"].get<int>(),
              t = row["thread"].get<int>();
    EXPECT_EQ(r, 16 * b + 8 * w + t);
  }
  EXPECT_EQ(j["registers"]["used"], 30);
  EXPECT_EQ(j["registers"]["available"], 32);
  EXPECT_EQ(j["local_memory"]["bytes_per_core"], 1536);
  EXPECT_EQ(j["local_memory"]["capacity"], 16384);
  ASSERT_EQ(j["counts"]["programs"].size(), 3u);
  EXPECT_EQ(j["counts"]["programs"][1]["program"], "flash_simt");
  EXPECT_EQ(j["counts"]["published"]["rows"][1]["instructions"], 634145);
  EXPECT_EQ(j["counts"]["ratios"].size(), 3u);
  EXPECT_LT(j["numerics"]["max_error_simt"].get<double>(), 1e-4);
}

TEST(CliVortex, TcuJsonHasFragmentsAndTheFp16Error) {
  const CommandResult run = RunFlashviz("vortex --mode tcu --json");
  ASSERT_EQ(run.status, 0) << run.err;
  const auto j = nlohmann::json::parse(run.out);
  EXPECT_EQ(j["br"], 8);
  EXPECT_EQ(j["bc"], 8);
  EXPECT_EQ(j["fits"], true);
  EXPECT_EQ(j["rows"][9]["core"], 1);  // row 9 is in block 1
  EXPECT_EQ(j["rows"][9]["thread"], 1);
  EXPECT_EQ(j["rows"][40]["warp"], 1);  // block 5: core 1, second warp
  EXPECT_EQ(j["tcu"]["fragments"][0]["registers"], "f0-f7");
  EXPECT_EQ(j["tcu"]["fragments"][1]["registers"], "f10-f17");
  EXPECT_EQ(j["tcu"]["fragments"][2]["registers"], "f24-f31");
  EXPECT_EQ(j["tcu"]["micro_ops_on_padding"], 16);
  const double error = j["numerics"]["max_error_tcu"].get<double>();
  EXPECT_GT(error, 2e-3);
  EXPECT_LT(error, 5e-2);
}

TEST(CliVortex, ConfigurationThatDoesNotFit) {
  const CommandResult run = RunFlashviz("vortex --d 32 --json");
  ASSERT_EQ(run.status, 0) << run.err;
  const auto j = nlohmann::json::parse(run.out);
  EXPECT_EQ(j["fits"], false);
  EXPECT_EQ(j["reason"].get<std::string>().rfind("d·B_c = 512 > 128: O and S rows spill out of 32 registers", 0), 0u);
  const CommandResult text = RunFlashviz("vortex --cores 2 --warps 4 --threads 8 --lmem 4096 --d 16");
  ASSERT_EQ(text.status, 0) << text.err;
  EXPECT_NE(text.out.find("does not fit"), std::string::npos);
  EXPECT_NE(text.out.find("[FAIL] local memory"), std::string::npos);  // (32 + 64)·16·4 = 6144 B > 4096 B
}

TEST(CliVortex, TextNamesTheBudgetsAndThePublishedTable) {
  const CommandResult run = RunFlashviz("vortex");
  ASSERT_EQ(run.status, 0) << run.err;
  for (const char* expected : {"B_r = 16, B_c = 16", "block 3 -> core 3", "f8-f23", "V_j^T", "Published:", "634145",
                               "FlashAttention (TCU)"})
    EXPECT_NE(run.out.find(expected), std::string::npos) << expected;
}

TEST(CliVortex, InvalidCombinationsGetOneLineAndAFailingStatus) {
  for (const char* args : {"vortex --n 48", "vortex --cores 0", "vortex --mode gpu", "vortex --warps 3 --n 64",
                           "vortex --threads abc", "vortex --lmem -1", "vortex --mode tcu --warps 1 --threads 4",
                           "vortex --d 0"}) {
    const CommandResult run = RunFlashviz(args);
    EXPECT_NE(run.status, 0) << args;
    EXPECT_TRUE(run.out.empty()) << args;
    ASSERT_FALSE(run.err.empty()) << args;
    EXPECT_EQ(run.err.find('\n'), run.err.size() - 1) << args << ": " << run.err;
  }
}

}  // namespace
