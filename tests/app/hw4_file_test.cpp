#include "app/io/hw4_file.h"

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>

#include "kernels/common/files.h"
#include "kernels/cpu/problem.h"

namespace flashviz {
namespace {

std::vector<std::uint8_t> Bytes(std::int32_t b, std::int32_t n, std::int32_t d, std::size_t floats) {
  std::vector<std::uint8_t> bytes(12 + floats * 4, 0);
  const std::int32_t header[3] = {b, n, d};
  std::memcpy(bytes.data(), header, 12);
  for (std::size_t k = 0; k < floats; ++k) {
    const float x = static_cast<float>(k % 7) - 3.0f;
    std::memcpy(bytes.data() + 12 + 4 * k, &x, 4);
  }
  return bytes;
}

std::string ParseError(const std::vector<std::uint8_t>& bytes) {
  try {
    ParseHw4(bytes, "case");
  } catch (const InputError& e) {
    return e.what();
  }
  return "";
}

TEST(Hw4File, ParsesAWellFormedFile) {
  const auto bytes = Bytes(2, 3, 4, 2 * 3 * 3 * 4);
  const Hw4Input in = ParseHw4(bytes, "ok");
  EXPECT_EQ(in.b, 2);
  EXPECT_EQ(in.n, 3);
  EXPECT_EQ(in.d, 4);
  EXPECT_EQ(in.qkv.size(), 72u);
  EXPECT_EQ(in.k(1) - in.q(0), 36 + 12);
  EXPECT_EQ(SerializeHw4(in), bytes);
}

TEST(Hw4File, EveryMalformedFileHasItsOwnReason) {
  struct BadCase {
    std::vector<std::uint8_t> bytes;
    const char* expected;
  };
  std::vector<BadCase> cases = {
      {{1, 0, 0, 0, 2, 0, 0}, "shorter than the 12-byte header"},
      {{}, "shorter than the 12-byte header"},
      {Bytes(0, 4, 4, 0), "B = 0"},
      {Bytes(2, -1, 4, 0), "N = -1"},
      {Bytes(2, 4, 0, 0), "d = 0"},
      {Bytes(2147483647, 2147483647, 2147483647, 0), "more data than any file can hold"},
      {Bytes(1, 4, 4, 47), "truncated"},
      {Bytes(1, 4, 4, 49), "4 trailing bytes"},
  };
  auto with_nan = Bytes(1, 2, 2, 12);
  const float nan = std::nanf("");
  std::memcpy(with_nan.data() + 12 + 4 * 5, &nan, 4);  // K[0][1]
  cases.push_back({with_nan, "non-finite value (nan) in batch 0, K[0][1]"});
  auto with_inf = Bytes(2, 2, 2, 24);
  const float inf = INFINITY;
  std::memcpy(with_inf.data() + 12 + 4 * 23, &inf, 4);  // batch 1, V[1][1]
  cases.push_back({with_inf, "non-finite value (inf) in batch 1, V[1][1]"});
  for (const BadCase& c : cases) {
    const std::string error = ParseError(c.bytes);
    EXPECT_NE(error.find(c.expected), std::string::npos) << "got: " << error << "\nexpected: " << c.expected;
    EXPECT_EQ(error.find('\n'), std::string::npos) << "one line: " << error;
  }
}

class TempDir : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = std::filesystem::temp_directory_path() / ("flashviz_test_" + std::to_string(::getpid()) + "_" +
                                                     ::testing::UnitTest::GetInstance()->current_test_info()->name());
    std::filesystem::create_directories(dir_);
  }
  void TearDown() override {
    ::chmod(dir_.c_str(), 0755);
    std::filesystem::remove_all(dir_);
  }
  std::string Path(const char* name) const { return (dir_ / name).string(); }
  std::filesystem::path dir_;
};

using Hw4FileOnDisk = TempDir;

TEST_F(Hw4FileOnDisk, HeaderIsCheckedAgainstTheFileSizeBeforeReading) {
  const std::string path = Path("case.bin");
  const auto bytes = Bytes(1000000, 32768, 64, 3);  // claims 8 TB, holds 12 bytes of data
  {
    std::ofstream(path, std::ios::binary)
        .write(reinterpret_cast<const char*>(bytes.data()), static_cast<std::streamsize>(bytes.size()));
  }
  try {
    ReadHw4File(path);
    FAIL() << "expected an error";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("truncated"), std::string::npos) << e.what();
  }
  EXPECT_THROW(ReadHw4File(Path("absent.bin")), InputError);
}

TEST_F(Hw4FileOnDisk, RoundTripsThroughAFile) {
  const std::string path = Path("case.bin");
  const auto bytes = Bytes(3, 5, 2, 3 * 3 * 5 * 2);
  {
    std::ofstream(path, std::ios::binary)
        .write(reinterpret_cast<const char*>(bytes.data()), static_cast<std::streamsize>(bytes.size()));
  }
  const Hw4Input in = ReadHw4File(path);
  EXPECT_EQ(SerializeHw4(in), bytes);
  const AttentionInputs batch = in.Batch(2);
  EXPECT_EQ(batch.q[0], in.q(2)[0]);
  EXPECT_EQ(batch.v.back(), in.qkv.back());
}

}  // namespace
}  // namespace flashviz

namespace flashviz {
namespace {

// trace --input and the GUI read one batch, not the whole file: the same values as the whole read, and a
// non-finite value is reported only for the batch that is read.
TEST(Hw4Batch, OneBatchIsReadAndChecked) {
  Hw4Input in;
  in.b = 3;
  in.n = 4;
  in.d = 2;
  in.qkv.resize(3 * 3 * 4 * 2);
  for (std::size_t k = 0; k < in.qkv.size(); ++k) in.qkv[k] = static_cast<float>(k) * 0.5f;
  in.qkv[3] = std::nanf("");  // batch 0, Q[1][1]
  const std::string path = (std::filesystem::temp_directory_path() / "flashviz_hw4_batch_test.bin").string();
  const std::vector<std::uint8_t> bytes = SerializeHw4(in);
  std::ofstream(path, std::ios::binary)
      .write(reinterpret_cast<const char*>(bytes.data()), static_cast<std::streamsize>(bytes.size()));
  const AttentionInputs two = ReadHw4Batch(path, 2);
  EXPECT_EQ(two.q, in.Batch(2).q);
  EXPECT_EQ(two.k, in.Batch(2).k);
  EXPECT_EQ(two.v, in.Batch(2).v);
  try {
    ReadHw4Batch(path, 0);
    ADD_FAILURE() << "the NaN of batch 0 was not reported";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("batch 0, Q[1][1]"), std::string::npos) << e.what();
  }
  EXPECT_THROW(ReadHw4Batch(path, 3), InputError);
  std::filesystem::remove(path);
}

}  // namespace
}  // namespace flashviz
