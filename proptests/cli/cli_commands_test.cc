// The lowbit CLI's show / table / encode / decode, run as a process: the
// literal examples of the CLI's specification, values typed from
// docs/formats-reference.md, and the usage errors (one line naming the problem, exit 2).
#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <vector>

#include "run_cli.h"

namespace lowbit::testing {
namespace {

class Cli : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!CliBuilt()) GTEST_SKIP() << "the lowbit CLI is not built (LOWBIT_BUILD_TOOLS=OFF)";
  }
};

int Lines(const std::string& text) { return static_cast<int>(std::count(text.begin(), text.end(), '\n')); }

TEST_F(Cli, EncodeExamplesOfTheSpecification) {
  EXPECT_EQ(RunCli({"encode", "e4m3", "464"}).FirstToken(), "0x7e");  // ties to 448 (§4.1)
  EXPECT_EQ(RunCli({"encode", "e4m3", "465"}).FirstToken(), "0x7f");  // overflow: the NaN
  EXPECT_EQ(RunCli({"encode", "e4m3", "465", "--saturate"}).FirstToken(), "0x7e");
  EXPECT_EQ(RunCli({"encode", "e2m1", "0.25"}).FirstToken(), "0x0");  // ties to 0 (even)
}

TEST_F(Cli, EncodePrintsCodeValueAndFlags) {
  const CliResult exact = RunCli({"encode", "e4m3", "448"});
  EXPECT_EQ(exact.exit_code, 0);
  EXPECT_EQ(exact.out, "0x7e 448 flags=none\n");
  EXPECT_EQ(RunCli({"encode", "e4m3", "464"}).out, "0x7e 448 flags=inexact\n");
  EXPECT_EQ(RunCli({"encode", "e2m1", "-5"}).out, "0xe -4 flags=inexact\n");  // tie to even
  EXPECT_EQ(RunCli({"encode", "e5m2", "61440"}).out, "0x7c inf flags=inexact|overflow\n");
  EXPECT_EQ(RunCli({"encode", "e8m0", "0x1p-127"}).out, "0x0 " +
            std::string("0.0000000000000000000000000000000000000058774717541114375398436826861112283890933277838604376075437585313920862972736358642578125") +
            " (2^-127) flags=none\n");
  EXPECT_EQ(RunCli({"encode", "int8", "-128.5"}).FirstToken(), "0x80");  // -128, tie to even
  EXPECT_EQ(RunCli({"encode", "bf16", "-0"}).FirstToken(), "0x8000");
  EXPECT_EQ(RunCli({"encode", "fp16", "nan"}).FirstToken(), "0x7e00");
  EXPECT_EQ(RunCli({"encode", "e4m3", "-inf", "--saturate"}).FirstToken(), "0xfe");
}

TEST_F(Cli, EncodeRoundingModes) {
  // 1.25 into E2M1 lies between 1 (0x2) and 1.5 (0x3), a tie.
  EXPECT_EQ(RunCli({"encode", "e2m1", "1.25", "--round", "rne"}).FirstToken(), "0x2");
  EXPECT_EQ(RunCli({"encode", "e2m1", "1.25", "--round", "rna"}).FirstToken(), "0x3");
  EXPECT_EQ(RunCli({"encode", "e2m1", "1.3", "--round", "rtz"}).FirstToken(), "0x2");
  EXPECT_EQ(RunCli({"encode", "e2m1", "1.1", "--round", "up"}).FirstToken(), "0x3");
  EXPECT_EQ(RunCli({"encode", "e2m1", "-1.1", "--round", "down"}).FirstToken(), "0xb");
  EXPECT_EQ(RunCli({"encode", "e2m1", "2.1", "--round", "odd"}).FirstToken(), "0x5");  // 3
  // 1.0625 is 1/8 of a step above 1: with 8 random bits, a carry iff >= 224.
  EXPECT_EQ(RunCli({"encode", "e2m1", "1.0625", "--round", "stochastic", "--random-bits", "223"})
                .FirstToken(),
            "0x2");
  EXPECT_EQ(RunCli({"encode", "e2m1", "1.0625", "--round", "stochastic", "--random-bits", "224"})
                .FirstToken(),
            "0x3");
}

TEST_F(Cli, EncodeReadsTheValueExactlyIntoTheInputType) {
  // 1 + 2^-8 + 2^-60 is above BF16's tie 1 + 2^-8 exactly, but FP64 (the
  // default --from) rounds it to the tie itself, which then goes to even.
  const std::string above_tie = "0x1.01000000000000001p+0";
  const CliResult via_fp64 = RunCli({"encode", "bf16", above_tie});
  EXPECT_EQ(via_fp64.FirstToken(), "0x3f80");
  EXPECT_NE(via_fp64.err.find("not a fp64 value"), std::string::npos) << via_fp64.err;
  EXPECT_EQ(RunCli({"encode", "bf16", "1.00390625"}).FirstToken(), "0x3f80");
  EXPECT_EQ(RunCli({"encode", "bf16", "1.0039062500001"}).FirstToken(), "0x3f81");
  // --from fp32: 464.00001 is FP32 464 exactly (ulp 2^-15 at 464).
  EXPECT_EQ(RunCli({"encode", "e4m3", "464.000001", "--from", "fp32"}).FirstToken(), "0x7e");
  EXPECT_EQ(RunCli({"encode", "e4m3", "464.000001"}).FirstToken(), "0x7f");
  // Decimal 0.1 in FP16 is 0x2e66 (IEEE 754 RNE of 0.1).
  EXPECT_EQ(RunCli({"encode", "fp16", "0.1"}).FirstToken(), "0x2e66");
}

TEST_F(Cli, EncodeWithProfiles) {
  // docs/formats-reference.md §4.1 / §9.1: |x| > 464 -> 448 on NVIDIA satfinite, NaN in ml_dtypes.
  EXPECT_EQ(RunCli({"encode", "e4m3", "465", "--profile", "nvidia", "--from", "fp32"}).FirstToken(),
            "0x7e");
  EXPECT_EQ(RunCli({"encode", "e4m3", "465", "--profile", "ml_dtypes", "--from", "fp32"}).FirstToken(),
            "0x7f");
  // §9.2: NaN sign on FP8 encode: NVIDIA 0x7F always, ml_dtypes keeps it.
  EXPECT_EQ(RunCli({"encode", "e4m3", "-nan", "--profile", "nvidia", "--from", "fp32"}).FirstToken(),
            "0x7f");
  EXPECT_EQ(RunCli({"encode", "e4m3", "-nan", "--profile", "ml_dtypes", "--from", "fp32"}).FirstToken(),
            "0xff");
}

TEST_F(Cli, DecodeAndShow) {
  // E8M0 code 0 is 2^-127, an FP32 subnormal (docs/formats-reference.md §1).
  const CliResult decode = RunCli({"decode", "e8m0", "0x00"});
  EXPECT_EQ(decode.exit_code, 0);
  EXPECT_NE(decode.out.find("fp32=0x400000 fp64=0x1p-127"), std::string::npos) << decode.out;
  EXPECT_EQ(RunCli({"decode", "e4m3", "0x7e"}).out, "448 fp32=0x43e00000 fp64=0x1.cp+8\n");
  EXPECT_EQ(RunCli({"decode", "e2m3", "0b011111"}).out, "7.5 fp32=0x40f00000 fp64=0x1.ep+2\n");
  EXPECT_EQ(RunCli({"decode", "int4", "8"}).FirstToken(), "-8");

  const CliResult show = RunCli({"show", "e4m3", "0x7e"});
  EXPECT_EQ(show.exit_code, 0);
  for (const char* line : {"bits      0 1111 110", "class     normal", "value     448",
                           "hex       0x1.cp+8"}) {
    EXPECT_NE(show.out.find(line), std::string::npos) << line << " in\n" << show.out;
  }
  EXPECT_NE(RunCli({"show", "e4m3", "0xff"}).out.find("class     nan"), std::string::npos);
  EXPECT_NE(RunCli({"show", "e4m3fnuz", "0x80"}).out.find("class     nan"), std::string::npos);
  EXPECT_NE(RunCli({"show", "e5m2", "0x7c"}).out.find("class     inf"), std::string::npos);
  EXPECT_NE(RunCli({"show", "fp16", "0x0001"}).out.find("value     0.000000059604644775390625"),
            std::string::npos);
  EXPECT_NE(RunCli({"show", "e8m0", "0x00"}).out.find("class     normal"), std::string::npos);
}

TEST_F(Cli, TableListsEveryCode) {
  const CliResult e2m1 = RunCli({"table", "e2m1"});
  EXPECT_EQ(e2m1.exit_code, 0);
  EXPECT_EQ(Lines(e2m1.out), 16);
  EXPECT_NE(e2m1.out.find("0x7 normal 6\n"), std::string::npos);
  EXPECT_NE(e2m1.out.find("0x8 zero -0\n"), std::string::npos);
  EXPECT_NE(e2m1.out.find("0x1 subnormal 0.5\n"), std::string::npos);
  const CliResult e4m3 = RunCli({"table", "e4m3"});
  EXPECT_EQ(Lines(e4m3.out), 256);
  EXPECT_NE(e4m3.out.find("0x7f nan nan\n"), std::string::npos);
  EXPECT_EQ(Lines(RunCli({"table", "fp16"}).out), 65536);
}

struct BadCall {
  std::vector<std::string> args;
  std::string message;  // a part of the one-line error
};

TEST_F(Cli, UsageErrorsExitTwoWithOneLineNamingTheProblem) {
  const BadCall kCalls[] = {
      {{"encode", "e9m9", "1"}, "unknown format 'e9m9'"},
      {{"show", "e4m3", "0xzz"}, "malformed code '0xzz'"},
      {{"show", "e4m3", "0x100"}, "code '0x100' out of range for e4m3"},
      {{"decode", "e2m1", "16"}, "code '16' out of range for e2m1"},
      {{"encode", "e4m3", "1.2.3"}, "malformed value '1.2.3'"},
      {{"encode", "e4m3", "12abc"}, "malformed value '12abc'"},
      {{"encode", "e4m3", "1", "--round", "banana"}, "--round: unknown rounding mode 'banana' (known: rne, rna, rtz"},
      {{"encode", "e4m3", "1", "--profile", "nope"}, "unknown profile 'nope'"},
      {{"encode", "e4m3", "1", "--round", "stochastic"}, "--random-bits"},
      {{"encode", "e4m3", "1", "--from", "e5m2"}, "--from: 'e5m2' is not an input type (fp64, fp32, fp16 or bf16)"},
      {{"table", "fp32"}, "too many codes"},
      {{"verify", "--level", "banana"}, "--level: unknown level 'banana' (smoke, ci, full)"},
      {{"encode", "e4m3"}, "value is required"},
      {{"frobnicate"}, "unknown command 'frobnicate'"},
  };
  for (const BadCall& call : kCalls) {
    const CliResult r = RunCli(call.args);
    EXPECT_EQ(r.exit_code, 2) << call.message << ": " << r.err;
    EXPECT_EQ(Lines(r.err), 1) << r.err;
    EXPECT_EQ(r.err.rfind("lowbit: error: ", 0), 0u) << r.err;
    EXPECT_NE(r.err.find(call.message), std::string::npos) << "'" << r.err << "' lacks '"
                                                           << call.message << "'";
    EXPECT_TRUE(r.out.empty()) << r.out;
  }
}

}  // namespace
}  // namespace lowbit::testing
