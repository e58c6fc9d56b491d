// `lowbit verify` as a process: the command runs the harness library
// (check/) and prints a summary per (backend, operation) by default, every
// row with --rows, JSON with --json; --strict fails on a row that could not
// run; filters narrow it, and bad arguments are usage errors. The kernels themselves are checked row by row through the
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

TEST_F(CliVerify, SmokeLevelPassesAndPrintsEveryRowWithRows) {
  const CliResult r = RunCli({"verify", "--level", "smoke", "--quiet", "--rows"});
  EXPECT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_TRUE(std::regex_search(r.out, std::regex("backend +operation +format +inputs +mismatches +status")))
      << r.out;
  // A checked row: scalar FP32 -> E4M3 ran on inputs and matched.
  EXPECT_TRUE(std::regex_search(r.out, std::regex(R"(\nscalar +encode-f32 +e4m3 +[1-9][0-9]* +0 +ok)")))
      << r.out;
  // 256 codes x 11 decode option sets: 3 NaN sets and one per profile (8,
  // numpy included).
  EXPECT_TRUE(std::regex_search(r.out, std::regex(R"(\nscalar +decode-to-bf16 +e8m0 +2816 +0 +ok)")))
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

TEST_F(CliVerify, DefaultOutputIsOneLinePerBackendAndOperation) {
  const CliResult r = RunCli({"verify", "--level", "smoke", "--quiet", "--format", "e2m1", "--backend", "scalar"});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_TRUE(std::regex_search(r.out, std::regex("^backend +operation +rows +inputs +mismatches +status\n"))) << r.out;
  // The five scalar operations of E2M1, one row each (FiltersSelectRows).
  for (const char* op : {"encode-f32", "encode-bf16", "encode-f16", "decode-to-f32", "decode-to-bf16"}) {
    EXPECT_TRUE(std::regex_search(r.out, std::regex(std::string("\nscalar +") + op + " +1 +[1-9][0-9]* +0 +ok\n")))
        << op << "\n" << r.out;
  }
  EXPECT_EQ(r.out.find("e2m1"), std::string::npos) << "formats are --rows' business: " << r.out;
  // Many formats fold into one line per operation.
  const CliResult all = RunCli({"verify", "--level", "smoke", "--quiet", "--backend", "scalar"});
  EXPECT_EQ(all.exit_code, 0) << all.err;
  EXPECT_TRUE(std::regex_search(all.out, std::regex(R"(\nscalar +encode-f32 +[0-9]{2,} +[1-9][0-9]* +0 +ok\n)")))
      << all.out;
}

TEST_F(CliVerify, JsonHasEveryRowAndTheSummary) {
  const CliResult r =
      RunCli({"verify", "--level", "smoke", "--json", "--format", "e2m1", "--backend", "scalar"});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out.rfind("{\n  \"level\": \"smoke\",\n  \"rows\": [\n", 0), 0u) << r.out;
  EXPECT_TRUE(std::regex_search(
      r.out, std::regex(R"(\{"kind": "kernel", "backend": "scalar", "operation": "encode-f32", "format": "e2m1", "inputs": [1-9][0-9]*, "mismatches": 0, "status": "ok", "skipped": "", )")))
      << r.out;
  EXPECT_TRUE(std::regex_search(
      r.out, std::regex(R"("summary": \{"rows": 5, "inputs": [1-9][0-9]*, "mismatches": 0, "skipped": 0, "seconds": [0-9.]+, "strict": false, "passed": true\}\n\}\n$)")))
      << r.out;
  EXPECT_TRUE(r.err.empty()) << "no progress with --json: " << r.err;
}

TEST_F(CliVerify, StrictFailsWhenABackendThatShouldRunIsSkipped) {
  // A backend row SKIPPED because its backend cannot run here: the cuda rows
  // without a GPU. Without --strict that passes (exit 0); with it, it fails
  // and says which row. Model-vs-oracle rows are no backend (the oracle's
  // value grid stops at 16 bits by design), and a kernel that supports no
  // option set is no missing backend: neither counts.
  const CliResult plain = RunCli({"verify", "--level", "smoke", "--quiet", "--rows"});
  const bool some_skipped = std::regex_search(
      plain.out, std::regex(R"((^|\n)(?!model-vs-oracle)[^\n]*SKIPPED \((?!no option set supported))"));
  const CliResult strict = RunCli({"verify", "--level", "smoke", "--quiet", "--strict"});
  if (some_skipped) {
    EXPECT_EQ(plain.exit_code, 0) << plain.err;
    EXPECT_EQ(strict.exit_code, 1) << strict.err;
    EXPECT_TRUE(std::regex_search(strict.err, std::regex(R"(^lowbit: error: --strict: [0-9]+ backend rows? did not run \(first: .+\)\n$)")))
        << strict.err;
  } else {
    EXPECT_EQ(strict.exit_code, 0) << strict.err;
  }
  // Rows that all run pass under --strict too, and so do the oracle rows
  // with their deliberate skip (FP32 is past the oracle's value grid).
  const CliResult scalar = RunCli({"verify", "--level", "smoke", "--quiet", "--strict", "--backend", "scalar"});
  EXPECT_EQ(scalar.exit_code, 0) << scalar.err;
  const CliResult oracle =
      RunCli({"verify", "--level", "smoke", "--quiet", "--strict", "--rows", "--backend", "oracle"});
  EXPECT_EQ(oracle.exit_code, 0) << oracle.err;
}

TEST_F(CliVerify, BadArgumentsAreUsageErrors) {
  CliResult r = RunCli({"verify", "--level", "smoke", "--backend", "no-such-backend"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("no kernel matches"), std::string::npos) << r.err;
  r = RunCli({"verify", "--level", "quick"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("--level: unknown level 'quick' (smoke, ci, full)"), std::string::npos) << r.err;
  r = RunCli({"verify", "--threads", "0"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("--threads: Value 0 not in range 1 to 256"), std::string::npos) << r.err;
}

}  // namespace
}  // namespace lowbit::testing
