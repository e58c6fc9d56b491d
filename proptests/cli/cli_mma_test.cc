// `lowbit mma` as a process: one output of a tensor-core instruction explained
// step by step (docs/tensor-cores.md "One fused step"), `--list`, `--json`,
// and bad input as one error line with exit status 2. Every expected number
// below is worked by hand from the spec's seven steps (the comments show the
// arithmetic); none comes from the model.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "lowbit/formats/tensor_core.h"
#include "run_cli.h"

namespace lowbit::testing {
namespace {

class CliMma : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!CliBuilt()) GTEST_SKIP() << "the lowbit CLI is not built (LOWBIT_BUILD_TOOLS=OFF)";
  }
};

// `values` followed by zeros up to k entries, comma-separated.
std::string Padded(const std::vector<std::string>& values, int k) {
  std::string out;
  for (int i = 0; i < k; ++i) {
    out += (i == 0 ? "" : ",") + (i < static_cast<int>(values.size()) ? values[static_cast<std::size_t>(i)] : "0");
  }
  return out;
}

void ExpectLine(const CliResult& r, const std::string& line) {
  EXPECT_NE(r.out.find(line + "\n"), std::string::npos) << "missing line:\n" << line << "\nin:\n" << r.out;
}

// One error line on stderr, nothing on stdout, exit status 2.
void ExpectError(const CliResult& r, const std::string& message) {
  EXPECT_EQ(r.exit_code, 2) << r.out << r.err;
  EXPECT_EQ(r.out, "");
  EXPECT_EQ(r.err, "lowbit: error: " + message + "\n");
}

// The same for messages whose wording belongs to the shared parsers
// (tools/parse.cc, value_parse.cc): one line naming each of `parts`.
void ExpectErrorNaming(const CliResult& r, const std::vector<std::string>& parts) {
  EXPECT_EQ(r.exit_code, 2) << r.out << r.err;
  EXPECT_EQ(r.out, "");
  EXPECT_EQ(r.err.rfind("lowbit: error: ", 0), 0u) << r.err;
  EXPECT_EQ(r.err.find('\n'), r.err.size() - 1) << r.err;
  for (const std::string& part : parts) EXPECT_NE(r.err.find(part), std::string::npos) << part << " in " << r.err;
}

// BF16 x BF16 -> FP32, F = 25: products 1 (e = 0), 1.5 * 2^-23 (e = -23) and
// 1.5 * 2^-26 (e = -26). e_max = 0, grid 2^-25: the second product is 6
// units exactly, the third (3 * 2^-27) is below the grid and dropped whole.
// Sum 2^25 + 6 units = 1 + 2^-23 + 2^-24 (26 significant bits), truncated to
// 24: 1 + 2^-23 (0x3f800001), where round to nearest even would give
// 1 + 2^-22.
TEST_F(CliMma, Bf16ProductsAreAlignedTruncatedAndTheSumTruncated) {
  const CliResult r = RunCli({"mma", "mma.m16n8k16.f32.bf16.bf16", "--a", Padded({"1", "1.5", "1"}, 16), "--b",
                              Padded({"1", "0x1p-23", "0x1.8p-26"}, 16)});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.err, "");
  ExpectLine(r, "C = fp32 0x0 (0)");
  ExpectLine(r, "step 1 of 1 (k = 0..15), accumulator in = 0x0 (0)");
  ExpectLine(r, "    k=0   a 0x3f80 (1) * b 0x3f80 (1) = 1  e=0");
  ExpectLine(r, "    k=1   a 0x3fc0 (1.5) * b 0x3400 (0.00000011920928955078125 (2^-23)) = "
                "0.000000178813934326171875  e=-23");
  ExpectLine(r, "    k=2   a 0x3f80 (1) * b 0x32c0 (0.000000022351741790771484375) = "
                "0.000000022351741790771484375  e=-26");
  ExpectLine(r, "    k=3   a 0x0 (0) * b 0x0 (0) = 0  e=-133");
  ExpectLine(r, "    C     0x0 (0)  e=-133");
  ExpectLine(r, "  3. e_max = 0; grid 2^(e_max - F) = 2^(0 - 25) = 2^-25");
  ExpectLine(r, "    k=0    1 = 33554432 units, dropped 0");
  ExpectLine(r, "    k=1    0.000000178813934326171875 = 6 units, dropped 0");
  ExpectLine(r, "    k=2    0 = 0 units, dropped 0.000000022351741790771484375");
  ExpectLine(r, "  5. exact sum = 33554438 units = 1.000000178813934326171875");
  ExpectLine(r, "  6. truncated toward zero to 24 significant bits of fp32: 0x3f800001 (1.00000011920928955078125), "
                "D - sum = -0.000000059604644775390625 (-2^-24)");
  ExpectLine(r, "D = fp32 0x3f800001 (1.00000011920928955078125)");
}

// wgmma E4M3 -> FP32, F = 13, 14 significant bits kept: products 1.5 * 2 = 3
// (e = 1), 1.5 * 1 (e = 0), 2^-6 * 2^-6 = 2^-12 (e = -12). e_max = 1, grid
// 2^-12: 12288 + 6144 + 1 units = 4.5 + 2^-12, 15 significant bits (2^2 down
// to 2^-12). Truncated to 14: 4.5 = 0x40900000, where FP32 holds
// 4.5 + 2^-12 = 0x40900200: the cut bit is bit 9 of the code.
TEST_F(CliMma, Fp8SumLosesTheLowTenBitsOfTheFp32Code) {
  const CliResult r = RunCli({"mma", "wgmma.m64nNk32.f32.e4m3.e4m3", "--a", Padded({"1.5", "1.5", "0.015625"}, 32),
                              "--b", Padded({"2", "1", "0.015625"}, 32)});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  ExpectLine(r, "datapath hopper-fp8-fp32-accumulate: 1 step of L = 32 products, F = 13 fraction bits below e_max, "
                "truncated toward zero to 14 significant bits of fp32 (the low 10 bits of the fp32 code are zero)");
  ExpectLine(r, "    k=0   a 0x3c (1.5) * b 0x40 (2) = 3  e=1");
  ExpectLine(r, "    k=1   a 0x3c (1.5) * b 0x38 (1) = 1.5  e=0");
  ExpectLine(r, "    k=2   a 0x8 (0.015625) * b 0x8 (0.015625) = 0.000244140625 (2^-12)  e=-12");
  ExpectLine(r, "  3. e_max = 1; grid 2^(e_max - F) = 2^(1 - 13) = 2^-12");
  ExpectLine(r, "    k=0    3 = 12288 units, dropped 0");
  ExpectLine(r, "    k=2    0.000244140625 (2^-12) = 1 units, dropped 0");
  ExpectLine(r, "  5. exact sum = 18433 units = 4.500244140625");
  ExpectLine(r, "  6. truncated toward zero to 14 significant bits of fp32 (the low 10 bits of the fp32 code are zero): "
                "0x40900000 (4.5), D - sum = -0.000244140625 (-2^-12)");
  ExpectLine(r, "D = fp32 0x40900000 (4.5)");
}

// FP16 accumulate: products 1 and 1 * 3 * 2^-12 (FP16 0x1200); the exact
// sum 1 + 3 * 2^-12 is 0.75 of FP16's unit 2^-10 above 1, so nearest even
// gives 1 + 2^-10 (0x3c01) where truncation would give 1. Zero terms sit at
// 2^-21 with an FP16 accumulator.
TEST_F(CliMma, Fp16AccumulateRoundsToNearestEven) {
  const CliResult r =
      RunCli({"mma", "mma.m16n8k16.f16.f16.f16", "--a", Padded({"1", "1"}, 16), "--b", Padded({"1", "0.000732421875"}, 16)});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  ExpectLine(r, "    k=1   a 0x3c00 (1) * b 0x1200 (0.000732421875) = 0.000732421875  e=-11");
  ExpectLine(r, "    C     0x0 (0)  e=-21");
  ExpectLine(r, "    k=1    0.000732421875 = 24576 units, dropped 0");
  ExpectLine(r, "  5. exact sum = 33579008 units = 1.000732421875");
  ExpectLine(r, "  6. rounded to nearest even to 11 significant bits of fp16: 0x3c01 (1.0009765625), "
                "D - sum = 0.000244140625 (2^-12)");
  ExpectLine(r, "D = fp16 0x3c01 (1.0009765625)");
}

// INT8: 127 * 127 + (-128) * (-128) + 2147483647 = 2147516160, which wraps
// modulo 2^32 to -2147451136 = 0x80007f00.
TEST_F(CliMma, Int8SumWrapsModulo2To32) {
  const CliResult r = RunCli({"mma", "mma.m16n8k32.s32.s8.s8", "--a", Padded({"127", "-128"}, 32), "--b",
                              Padded({"127", "-128"}, 32), "--c", "2147483647"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  ExpectLine(r, "    k=0   a 0x7f (127) * b 0x7f (127) = 16129");
  ExpectLine(r, "    k=1   a 0x80 (-128) * b 0x80 (-128) = 16384");
  ExpectLine(r, "    C     2147483647");
  ExpectLine(r, "  exact sum = 2147516160");
  ExpectLine(r, "D = int32 0x80007f00 (-2147451136)");
}

// A NaN operand, or 0 * Inf, gives the datapath's one NaN, 0x7fffffff.
TEST_F(CliMma, NanAndZeroTimesInfGiveTheDatapathNan) {
  for (const auto& [a0, b0] : {std::pair<std::string, std::string>{"nan", "1"}, {"inf", "0"}}) {
    const CliResult r =
        RunCli({"mma", "mma.m16n8k16.f32.bf16.bf16", "--a", Padded({a0, "1"}, 16), "--b", Padded({b0, "1"}, 16)});
    ASSERT_EQ(r.exit_code, 0) << r.err;
    EXPECT_NE(r.out.find("7. a NaN or an infinity decides"), std::string::npos) << r.out;
    ExpectLine(r, "D = fp32 0x7fffffff (nan)");
  }
  // One infinity: D is that infinity (-inf * 2, the list written --a=-inf,... as --help says).
  const CliResult inf =
      RunCli({"mma", "mma.m16n8k16.f32.bf16.bf16", "--a=" + Padded({"-inf"}, 16), "--b", Padded({"2"}, 16)});
  ASSERT_EQ(inf.exit_code, 0) << inf.err;
  ExpectLine(inf, "D = fp32 0xff800000 (-inf)");
}

// FP8 mma.sync on sm_90: two FP16 steps, the first over k mod 4 in {0, 1},
// C added after them. Step 1: 1 + 2^-9 (E4M3 0x01, a subnormal) =
// 1.001953125; step 2 adds the other 2^-9: 1.00390625; + 2^-30 in FP32
// nearest even stays 1.00390625 (2^-30 is below half of the unit 2^-23).
TEST_F(CliMma, Fp8MmaSyncRunsTwoStepsAndAddsCAfter) {
  const CliResult r = RunCli({"mma", "mma.m16n8k32.f32.e4m3.e4m3", "--a", Padded({"1", "1", "1"}, 32), "--b",
                              Padded({"1", "0x1p-9", "0x1p-9"}, 32), "--c", "0x1p-30"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  ExpectLine(r, "step 1 of 2 (k = 0..1,4..5,8..9,12..13,16..17,20..21,24..25,28..29), accumulator in = 0x0 (0)");
  ExpectLine(r, "step 2 of 2 (k = 2..3,6..7,10..11,14..15,18..19,22..23,26..27,30..31), "
                "accumulator in = 0x3f804000 (1.001953125)");
  ExpectLine(r, "C added after the steps: one fp32 addition, nearest even: 0x3f808000 (1.00390625) + 0x30800000 "
                "(0.000000000931322574615478515625 (2^-30)) = 0x3f808000 (1.00390625)");
  ExpectLine(r, "D = fp32 0x3f808000 (1.00390625)");
}

// TF32 operands are FP32 codes whose low 13 bits the datapath does not read:
// 0x3f801fff is read as 0x3f800000 = 1, so 1 * 1 = 1.
TEST_F(CliMma, Tf32CodesLoseTheirLow13Bits) {
  const CliResult r = RunCli({"mma", "wgmma.m64nNk8.f32.tf32.tf32", "--codes", "--a", Padded({"0x3f801fff"}, 8), "--b",
                              Padded({"0x3f800000"}, 8)});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  ExpectLine(r, "a: tf32 codes, the low 13 bits of each are not read");
  ExpectLine(r, "    k=0   a 0x3f801fff (read as 1: the low 13 bits are not read) * b 0x3f800000 (1) = 1  e=0");
  ExpectLine(r, "D = fp32 0x3f800000 (1)");
  const CliResult json = RunCli({"mma", "wgmma.m64nNk8.f32.tf32.tf32", "--codes", "--json", "--a",
                                 Padded({"0x3f801fff"}, 8), "--b", Padded({"0x3f800000"}, 8)});
  EXPECT_NE(json.out.find("\"a\": [{\"code\": \"0x3f801fff\", \"value\": \"1\", \"low_bits_not_read\": true}"),
            std::string::npos)
      << json.out;
}

TEST_F(CliMma, CodesAndJson) {
  // The FP8 case of Fp8SumLosesTheLowTenBitsOfTheFp32Code given as codes.
  const CliResult r = RunCli({"mma", "wgmma.m64nNk32.f32.e4m3.e4m3", "--codes", "--json", "--a",
                              Padded({"0x3c", "0x3c", "0x08"}, 32), "--b", Padded({"0x40", "0x38", "0x08"}, 32)});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out.rfind("{\"instruction\": \"wgmma.m64nNk32.f32.e4m3.e4m3\"", 0), 0u) << r.out;
  for (const char* field :
       {"\"e_max\": 1, \"grid_exponent\": -12",
        "{\"k\": 2, \"value\": \"0.000244140625 (2^-12)\", \"e\": -12, \"aligned_units\": 1, \"aligned\": "
        "\"0.000244140625 (2^-12)\", \"dropped\": \"0\", \"truncated\": false}",
        "\"sum\": \"4.500244140625\", \"sum_units\": 18433", "\"d\": {\"code\": \"0x40900000\", \"value\": \"4.5\"}}\n"}) {
    EXPECT_NE(r.out.find(field), std::string::npos) << field << "\n" << r.out;
  }
  EXPECT_EQ(r.out.find('\n'), r.out.size() - 1) << "one line";
}

TEST_F(CliMma, ListNamesEveryInstructionWithItsParameters) {
  const CliResult r = RunCli({"mma", "--list"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  for (const TensorCoreInstruction& inst : kTensorCoreInstructions) {
    EXPECT_NE(r.out.find(std::string(inst.name) + "\n  ptx          " + inst.ptx + "\n"), std::string::npos)
        << inst.name;
  }
  EXPECT_NE(r.out.find("wgmma.m64nNk32.f32.e4m3.e4m3\n  ptx          wgmma.mma_async.sync.aligned.m64nNk32.f32.e4m3.e4m3\n"
                       "  shape        m 64, n 8..256 step 8, k 32\n"),
            std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("L = 32 products per step, F = 13, zero terms at 2^-133, truncated toward zero to 14 "
                       "significant bits of fp32"),
            std::string::npos);
  EXPECT_NE(r.out.find("  steps        2, runs of 2 consecutive k per step, from +0; C added after them"),
            std::string::npos);
}

// A value between two of the type's values is rounded to nearest even, with
// a note (as `lowbit encode` notes its input rounding): 0.1 -> BF16 0x3dcd =
// 0.10009765625.
TEST_F(CliMma, InexactValueIsRoundedWithANote) {
  const CliResult r = RunCli({"mma", "mma.m16n8k16.f32.bf16.bf16", "--a", Padded({"0.1"}, 16), "--b", Padded({"1"}, 16)});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.err, "note: a[0] = '0.1' is not exactly a bf16 value; using the nearest (ties to even), 0x3dcd "
                   "(0.10009765625)\n");
  ExpectLine(r, "    k=0   a 0x3dcd (0.10009765625) * b 0x3f80 (1) = 0.10009765625  e=-4");
}

TEST_F(CliMma, BadInputIsOneErrorLine) {
  const std::string fp8 = "wgmma.m64nNk32.f32.e4m3.e4m3";
  ExpectError(RunCli({"mma", "no.such", "--a", "1", "--b", "1"}),
              "unknown instruction 'no.such' (known: mma.m16n8k16.f32.bf16.bf16, mma.m16n8k16.f32.f16.f16, "
              "mma.m16n8k16.f16.f16.f16, mma.m16n8k8.f32.tf32.tf32, mma.m16n8k32.f32.e4m3.e4m3, "
              "mma.m16n8k32.f32.e4m3.e5m2, mma.m16n8k32.f32.e5m2.e4m3, mma.m16n8k32.f32.e5m2.e5m2, "
              "mma.m16n8k32.f16.e4m3.e4m3, mma.m16n8k32.f16.e4m3.e5m2, mma.m16n8k32.f16.e5m2.e4m3, "
              "mma.m16n8k32.f16.e5m2.e5m2, mma.m16n8k32.s32.s8.s8, wgmma.m64nNk16.f32.bf16.bf16, "
              "wgmma.m64nNk16.f32.f16.f16, wgmma.m64nNk16.f16.f16.f16, wgmma.m64nNk8.f32.tf32.tf32, "
              "wgmma.m64nNk32.f32.e4m3.e4m3, wgmma.m64nNk32.f32.e4m3.e5m2, wgmma.m64nNk32.f32.e5m2.e4m3, "
              "wgmma.m64nNk32.f32.e5m2.e5m2, wgmma.m64nNk32.f16.e4m3.e4m3, wgmma.m64nNk32.f16.e4m3.e5m2, "
              "wgmma.m64nNk32.f16.e5m2.e4m3, wgmma.m64nNk32.f16.e5m2.e5m2; lowbit mma --list shows their "
              "parameters)");
  // A type combination the shape lacks.
  ExpectError(RunCli({"mma", "mma.m16n8k16.f32.e4m3.e4m3", "--a", "1", "--b", "1"}),
              "instruction mma.m16n8k16 has no types 'f32.e4m3.e4m3' (it has: f32.bf16.bf16, f32.f16.f16, "
              "f16.f16.f16)");
  // A user word with a newline is echoed escaped, on one line.
  ExpectError(RunCli({"mma", "mma.m16n8k16.x\ny", "--a", "1", "--b", "1"}),
              "instruction mma.m16n8k16 has no types 'x\\x0ay' (it has: f32.bf16.bf16, f32.f16.f16, f16.f16.f16)");
  ExpectError(RunCli({"mma", fp8, "--a", "1,2,3", "--b", Padded({}, 32)}),
              "--a has 3 values; wgmma.m64nNk32.f32.e4m3.e4m3 takes k = 32 e4m3 values");
  ExpectError(RunCli({"mma", fp8, "--a", Padded({}, 32), "--b", Padded({}, 33)}),
              "--b has 33 values; wgmma.m64nNk32.f32.e4m3.e4m3 takes k = 32 e4m3 values");
  ExpectError(RunCli({"mma", fp8, "--a", Padded({"1000"}, 32), "--b", Padded({}, 32)}),
              "a[0] = '1000' is out of range for e4m3 (largest finite value 448)");
  ExpectError(RunCli({"mma", fp8, "--a", Padded({}, 32), "--b", Padded({"0", "inf"}, 32)}),
              "b[1] = 'inf': e4m3 has no code for it");
  ExpectError(RunCli({"mma", "mma.m16n8k32.s32.s8.s8", "--a", Padded({"nan"}, 32), "--b", Padded({}, 32)}),
              "a[0] = 'nan': s8 has no code for it");
  ExpectErrorNaming(RunCli({"mma", fp8, "--codes", "--a", Padded({"0x100"}, 32), "--b", Padded({}, 32)}),
                    {"a[0]: code ", "0x100", "out of range for e4m3"});
  ExpectErrorNaming(RunCli({"mma", fp8, "--a", Padded({}, 32), "--b", Padded({}, 32), "--c", ""}), {"c", "empty"});
  ExpectError(RunCli({"mma", fp8, "--a", "1,,2", "--b", Padded({}, 32)}), "--a: value 1 is empty in '1,,2'");
  ExpectError(RunCli({"mma", fp8, "--a", Padded({}, 32)}),
              "give --b: wgmma.m64nNk32.f32.e4m3.e4m3 takes k = 32 values each for --a and --b");
  ExpectError(RunCli({"mma"}), "name an instruction (lowbit mma --list shows them)");
  ExpectError(RunCli({"mma", fp8, "--list"}), "--list takes no instruction");
}

}  // namespace
}  // namespace lowbit::testing
