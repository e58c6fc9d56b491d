// `lowbit verify` as a process: the command runs the harness library
// (check/) and prints its table, filters narrow it, and bad arguments are
// usage errors. The kernels themselves are checked row by row through the
// library in check_registry_rows_test.cc, not here.
#include <gtest/gtest.h>

#include <regex>
#include <string>

#include "run_cli.h"

namespace lowbit::testing {
namespace {

class CliVerify : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!CliBuilt()) GTEST_SKIP() << "the lowbit CLI is not built (LOWBIT_BUILD_TOOLS=OFF)";
  }
};

TEST_F(CliVerify, SmokeLevelPassesAndPrintsTheTable) {
  const CliResult r = RunCli({"verify", "--level", "smoke", "--quiet"});
  EXPECT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_TRUE(std::regex_search(r.out, std::regex("backend +operation +format +inputs +mismatches +status")))
      << r.out;
  // A checked row: scalar FP32 -> E4M3 ran on inputs and matched.
  EXPECT_TRUE(std::regex_search(r.out, std::regex(R"(\nscalar +encode-f32 +e4m3 +[1-9][0-9]* +0 +ok)")))
      << r.out;
  // 256 codes x 9 decode option sets: 3 NaN sets and one per profile (6).
  EXPECT_TRUE(std::regex_search(r.out, std::regex(R"(\nscalar +decode-to-bf16 +e8m0 +2304 +0 +ok)")))
      << r.out;
  EXPECT_TRUE(std::regex_search(r.out, std::regex(R"(\nmodel-vs-oracle +decode-exact +e5m2 +256 +0 +ok)")))
      << r.out;
  EXPECT_EQ(r.out.find("MISMATCH"), std::string::npos) << r.out;
  EXPECT_TRUE(std::regex_search(r.out, std::regex(R"(\nverify smoke: [0-9]+ rows, [0-9]+ inputs checked, 0 mismatches, [0-9]+ skipped, [0-9.]+ s\n$)")))
      << r.out;
}

TEST_F(CliVerify, FiltersSelectRows) {
  const CliResult r =
      RunCli({"verify", "--level", "smoke", "--quiet", "--format", "e2m1", "--backend", "scalar"});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  // encode-f32, encode-bf16, encode-f16, decode-to-f32, decode-to-bf16.
  EXPECT_NE(r.out.find("verify smoke: 5 rows"), std::string::npos) << r.out;
  EXPECT_EQ(r.out.find("e4m3"), std::string::npos) << r.out;
  EXPECT_EQ(r.out.find("oracle"), std::string::npos) << r.out;
}

TEST_F(CliVerify, BadArgumentsAreUsageErrors) {
  CliResult r = RunCli({"verify", "--level", "smoke", "--backend", "no-such-backend"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("no kernel matches"), std::string::npos) << r.err;
  r = RunCli({"verify", "--level", "quick"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("unknown level 'quick' (known: smoke, ci, full)"), std::string::npos) << r.err;
  r = RunCli({"verify", "--threads", "0"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("--threads must be at least 1"), std::string::npos) << r.err;
}

}  // namespace
}  // namespace lowbit::testing
