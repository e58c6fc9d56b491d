// `lowbit decode FORMAT CODE --profile P` (docs/profiles.md): which FP32 bits an
// implementation returns for a code, NaN sign and payload included. The
// expected bits are typed from docs/formats-reference.md §4.1 (E4M3 decode:
// NVIDIA's headers go through FP16 and `cvt.f32.f16`, so NaN -> 0x7FFFFFFF;
// torch -> 0x7FF00000 / 0xFFF00000; ml_dtypes -> 0x7FC00000 / 0xFFC00000) and
// §4.3 (FNUZ: torch's CPU cast gives 0x7F800001 for the NaN code 0x80), and
// were measured with torch 2.15 and ml_dtypes 0.6 (tests/peers checks every
// code of every torch dtype against the pytorch-cpu profile).
#include <gtest/gtest.h>

#include <string>

#include "run_cli.h"

namespace lowbit::testing {
namespace {

class CliDecodeProfile : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!CliBuilt()) GTEST_SKIP() << "the lowbit CLI is not built (LOWBIT_BUILD_TOOLS=OFF)";
  }
};

TEST_F(CliDecodeProfile, E4m3NanBitsOfEachImplementation) {
  EXPECT_EQ(RunCli({"decode", "e4m3", "0x7f", "--profile", "pytorch-cpu"}).out,
            "nan fp32=0x7ff00000 profile=pytorch-cpu\n");
  // The value column is the code's own (0xff is -NaN); fp32= is what the
  // implementation returns.
  EXPECT_EQ(RunCli({"decode", "e4m3", "0xff", "--profile", "pytorch-cpu"}).out,
            "-nan fp32=0xfff00000 profile=pytorch-cpu\n");
  EXPECT_EQ(RunCli({"decode", "e4m3", "0x7f", "--profile", "ml_dtypes"}).out,
            "nan fp32=0x7fc00000 profile=ml_dtypes\n");
  EXPECT_EQ(RunCli({"decode", "e4m3", "0xff", "--profile", "ml_dtypes"}).out,
            "-nan fp32=0xffc00000 profile=ml_dtypes\n");
  EXPECT_EQ(RunCli({"decode", "e4m3", "0xff", "--profile", "nvidia"}).out,
            "-nan fp32=0x7fffffff profile=nvidia\n");  // sign dropped
}

TEST_F(CliDecodeProfile, FnuzNanOfPytorch) {
  EXPECT_EQ(RunCli({"decode", "e4m3fnuz", "0x80", "--profile", "pytorch-cpu"}).out,
            "nan fp32=0x7f800001 profile=pytorch-cpu\n");
}

TEST_F(CliDecodeProfile, FiniteCodesAreTheExactValueEverywhere) {
  EXPECT_EQ(RunCli({"decode", "e4m3", "0x7e", "--profile", "nvidia"}).out, "448 fp32=0x43e00000 profile=nvidia\n");
  const CliResult all = RunCli({"decode", "e4m3", "0x7e", "--profile", "all"});
  EXPECT_EQ(all.exit_code, 0);
  // One line per profile that has E4M3, each with 448's bits.
  for (const char* profile :
       {"ocp", "nvidia", "nvidia-nosat", "ml_dtypes", "pytorch-cpu", "pytorch-cuda", "pytorch-cpu-2.15"}) {
    EXPECT_NE(all.out.find(std::string("448 fp32=0x43e00000 profile=") + profile + "\n"), std::string::npos)
        << profile << ":\n" << all.out;
  }
}

TEST_F(CliDecodeProfile, AllListsTheDisagreement) {
  const std::string out = RunCli({"decode", "e4m3", "0xff", "--profile", "all"}).out;
  EXPECT_NE(out.find("fp32=0xfff00000 profile=pytorch-cpu"), std::string::npos) << out;
  EXPECT_NE(out.find("fp32=0xffc00000 profile=ml_dtypes"), std::string::npos) << out;
  EXPECT_NE(out.find("fp32=0x7fffffff profile=nvidia\n"), std::string::npos) << out;
}

TEST_F(CliDecodeProfile, WithoutProfileTheOutputIsUnchanged) {
  EXPECT_EQ(RunCli({"decode", "e4m3", "0x7e"}).out, "448 fp32=0x43e00000 fp64=0x1.cp+8\n");
}

TEST_F(CliDecodeProfile, BadProfilesAreUsageErrors) {
  const CliResult unknown = RunCli({"decode", "e4m3", "0x7f", "--profile", "tensorflow"});
  EXPECT_EQ(unknown.exit_code, 2);
  EXPECT_NE(unknown.err.find("tensorflow"), std::string::npos) << unknown.err;
  EXPECT_TRUE(unknown.out.empty());
  // A profile without the format names the way to find one that has it.
  const CliResult missing = RunCli({"decode", "int4", "0x8", "--profile", "nvidia"});
  EXPECT_EQ(missing.exit_code, 2);
  EXPECT_NE(missing.err.find("profile nvidia has no int4"), std::string::npos) << missing.err;
  EXPECT_NE(missing.err.find("--profile all"), std::string::npos) << missing.err;
}

}  // namespace
}  // namespace lowbit::testing
