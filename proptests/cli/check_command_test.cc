// `lowbit check` end to end: runs the built binary (LOWBIT_CLI_PATH) on .npy
// and raw files written here, byte for byte as NumPy and ml_dtypes 0.6 write
// them ('<f4', '|u1', and ml_dtypes' opaque '<V2' / '<V1'), and once on
// files written by the venv's ml_dtypes itself. Checks the exit status (0
// match, 1 mismatch, 2 bad usage or file), the report, the diagnosis line
// and the JSON. Expected codes are worked out by hand from the formats'
// layouts (docs/formats-reference.md), not by the model.
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <string>
#include <vector>

#include "cli_files.h"
#include "run_cli.h"

namespace {

using lowbit::testing::CliResult;
using lowbit::testing::RunCliWith;

class CheckCommandTest : public lowbit::testing::CliFilesTest {
 protected:
  CliResult Lowbit(const std::vector<std::string>& args) { return RunCliWith(args, {}); }
};

// FP32 inputs and their E4M3 codes under ml_dtypes (non-saturating: 500 and
// Inf give NaN 0x7F, -NaN 0xFF) and under NVIDIA's satfinite cast (448 =
// 0x7E, every NaN 0x7F): 1 = 0x38 (exponent 7, bias 7), 2.5 = 0x42
// (2^1 * 1.25), 448 = 0x7E, 0.001953125 = 2^-9 = 0x01 (the smallest
// subnormal), -0 = 0x80.
const std::vector<float> kInputs = {1.0f, 2.5f, 448.0f, 500.0f, 0.001953125f, -0.0f, -2.5f};
const std::vector<std::uint8_t> kMlDtypesCodes = {0x38, 0x42, 0x7E, 0x7F, 0x01, 0x80, 0xC2};
const std::vector<std::uint8_t> kNvidiaCodes = {0x38, 0x42, 0x7E, 0x7E, 0x01, 0x80, 0xC2};

TEST_F(CheckCommandTest, MatchingOutputsExitZero) {
  const std::string x = WriteNpy("x.npy", "<f4", "(7,)", kInputs.data(), kInputs.size() * 4);
  // ml_dtypes writes float8_e4m3fn arrays as '<V1'.
  const std::string y = WriteNpy("y.npy", "<V1", "(7,)", kMlDtypesCodes.data(), kMlDtypesCodes.size());
  const CliResult r = Lowbit({"check", "e4m3:ml_dtypes", "--input", x, "--output", y});
  EXPECT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_NE(r.out.find("7 outputs checked, 0 mismatches: MATCH"), std::string::npos) << r.out;
  // The same codes as uint8, and the profile as an option.
  const std::string y8 = WriteNpy("y8.npy", "|u1", "(7,)", kMlDtypesCodes.data(), kMlDtypesCodes.size());
  EXPECT_EQ(Lowbit({"check", "e4m3", "--profile", "ml_dtypes", "--input", x, "--output", y8}).exit_code, 0);
}

TEST_F(CheckCommandTest, MismatchExitsOneWithTheDiagnosis) {
  const std::string x = WriteNpy("x.npy", "<f4", "(7,)", kInputs.data(), kInputs.size() * 4);
  const std::string y = WriteNpy("y.npy", "|u1", "(7,)", kNvidiaCodes.data(), kNvidiaCodes.size());
  const CliResult r = Lowbit({"check", "e4m3:ml_dtypes", "--input", x, "--output", y});
  EXPECT_EQ(r.exit_code, 1) << r.out << r.err;
  EXPECT_NE(r.out.find("1 mismatch: MISMATCH"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("element 3 input 0x43fa0000 (fp32 500): expected 0x7f (e4m3 nan), kernel 0x7e (e4m3 448)"),
            std::string::npos)
      << r.out;
  // Seven inputs leave several conventions indistinguishable: the profiles
  // come first (NVIDIA satfinite and PyTorch 2.15's saturating CPU cast agree
  // on them: no negative NaN among them), the line names three and counts
  // the rest.
  EXPECT_NE(r.out.find("diagnosis: matches profile nvidia, profile pytorch-cpu-2.15, saturation and 11 more on all "
                       "7 inputs; differs from e4m3:ml_dtypes on the 1 input beyond the largest finite value "
                       "(expected 0x7f, got 0x7e)"),
            std::string::npos)
      << r.out;
  // Against nvidia the same file matches.
  EXPECT_EQ(Lowbit({"check", "e4m3:nvidia", "--input", x, "--output", y}).exit_code, 0);
}

TEST_F(CheckCommandTest, JsonForCi) {
  const std::string x = WriteNpy("x.npy", "<f4", "(7,)", kInputs.data(), kInputs.size() * 4);
  const std::string y = WriteNpy("y.npy", "|u1", "(7,)", kNvidiaCodes.data(), kNvidiaCodes.size());
  const CliResult r = Lowbit({"check", "e4m3:ml_dtypes", "--input", x, "--output", y, "--json"});
  EXPECT_EQ(r.exit_code, 1) << r.err;
  ASSERT_FALSE(r.out.empty());
  EXPECT_EQ(r.out.front(), '{');
  EXPECT_EQ(r.out.substr(r.out.size() - 2), "}\n");
  for (const char* field : {"\"passed\": false", "\"mismatches\": 1", "\"expected\": 127", "\"actual\": 126",
                            "\"name\": \"profile nvidia\"", "\"full_match\": true", "\"matches_some\": true"}) {
    EXPECT_NE(r.out.find(field), std::string::npos) << field << "\n" << r.out;
  }
}

TEST_F(CheckCommandTest, RawFilesNeedTheirType) {
  const std::string x = WriteRaw("x.bin", kInputs.data(), kInputs.size() * 4);
  const std::string y = WriteRaw("y.bin", kMlDtypesCodes.data(), kMlDtypesCodes.size());
  CliResult r = Lowbit({"check", "e4m3:ml_dtypes", "--input", x, "--output", y, "--dtype", "fp32"});
  EXPECT_EQ(r.exit_code, 0) << r.out << r.err;
  r = Lowbit({"check", "e4m3:ml_dtypes", "--input", x, "--output", y});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("a raw file; say its type with --dtype"), std::string::npos) << r.err;
  // 28 bytes read as fp64 are not whole values.
  r = Lowbit({"check", "e4m3", "--input", x, "--output", y, "--dtype", "fp64"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("28 bytes is not a whole number of fp64 values"), std::string::npos) << r.err;
}

TEST_F(CheckCommandTest, BadFilesAreNamed) {
  const std::string x = WriteNpy("x.npy", "<f4", "(7,)", kInputs.data(), kInputs.size() * 4);
  const std::string y = WriteNpy("y.npy", "|u1", "(7,)", kMlDtypesCodes.data(), kMlDtypesCodes.size());
  struct Case {
    std::vector<std::string> args;
    const char* message;
  };
  const std::string cut = WriteNpy("cut.npy", "<f4", "(8,)", kInputs.data(), kInputs.size() * 4);
  const std::string structured = Path("structured.npy");
  {
    std::string header = "{'descr': [('a', '<f4')], 'fortran_order': False, 'shape': (1,), }";
    while ((10 + header.size() + 1) % 64 != 0) header += ' ';
    header += '\n';
    std::string file = std::string("\x93NUMPY\x01\x00", 8) + static_cast<char>(header.size()) + '\0' + header + "abcd";
    std::ofstream(structured, std::ios::binary) << file;
  }
  const std::string wide = WriteNpy("wide.npy", "<f4", "(7,)", kInputs.data(), kInputs.size() * 4);
  const std::string six = WriteNpy("six.npy", "|u1", "(6,)", kMlDtypesCodes.data(), 6);
  const Case cases[] = {
      {{"check", "e4m3", "--input", dir_ + "/missing.npy", "--output", y}, "cannot open"},
      {{"check", "e4m3", "--input", dir_, "--output", y}, "is a directory"},
      {{"check", "e4m3", "--input", cut, "--output", y}, "the header says shape (8,) of <f4 (32 bytes), the file holds 28"},
      {{"check", "e4m3", "--input", structured, "--output", y}, "expected a quoted string"},
      {{"check", "e4m3", "--input", x, "--output", wide}, "dtype <f4 has 4-byte items; e4m3 codes are 1 byte each"},
      {{"check", "e4m3", "--input", x, "--output", six}, "6 codes for 7 inputs"},
      {{"check", "e4m3", "--input", y, "--output", y}, "dtype |u1 is not an input type"},
      {{"check", "e4m3", "--input", x, "--output", y, "--dtype", "bf16"}, "the file holds fp32 (<f4), --dtype says bf16"},
      {{"check", "e4m3", "--input", x, "--output", y, "--scales", y}, "apply to recipes"},
      {{"check", "e4m4", "--input", x, "--output", y}, "did you mean"},
      {{"check", "e4m3", "--input", x, "--output", y, "--layout", "g32"}, "a layout applies to recipes"},
      {{"check", "e4m3", "--input", x, "--output", y, "--round", "stochastic"}, "stochastic rounding cannot be checked"},
  };
  for (const Case& c : cases) {
    const CliResult r = Lowbit(c.args);
    EXPECT_EQ(r.exit_code, 2) << c.message << "\n" << r.out << r.err;
    EXPECT_NE(r.err.find("lowbit: error: "), std::string::npos) << r.err;
    EXPECT_NE(r.err.find(c.message), std::string::npos) << c.message << "\n" << r.err;
  }
}

// A Fortran-order 2x3 array means the same tensor: its items are read into
// C order before they are compared.
TEST_F(CheckCommandTest, FortranOrderIsReadAsTheSameTensor) {
  // C order [[1, 2.5, 448], [-0, -2.5, 0.001953125]]; Fortran order writes
  // the columns: 1, -0, 2.5, -2.5, 448, 0.001953125.
  const float fortran[6] = {1.0f, -0.0f, 2.5f, -2.5f, 448.0f, 0.001953125f};
  const std::uint8_t c_codes[6] = {0x38, 0x42, 0x7E, 0x80, 0xC2, 0x01};
  const std::string x = WriteNpy("x.npy", "<f4", "(2, 3)", fortran, sizeof fortran, /*fortran=*/true);
  const std::string y = WriteNpy("y.npy", "|u1", "(2, 3)", c_codes, sizeof c_codes);
  const CliResult r = Lowbit({"check", "e4m3", "--input", x, "--output", y});
  EXPECT_EQ(r.exit_code, 0) << r.out << r.err;
}

// MXFP8 (E4M3) with the OCP floor rule: a block of 32 ones has amax 1 =
// 2^0, scale exponent 0 - emax 8 = -8 (E8M0 code 127 - 8 = 0x77), and each
// element 1 / 2^-8 = 256 = 2^8 is E4M3 0x78 (exponent field 15).
TEST_F(CheckCommandTest, MxRecipeWithScales) {
  const std::vector<float> ones(32, 1.0f);
  const std::vector<std::uint8_t> codes(32, 0x78);
  const std::uint8_t scale = 0x77;
  const std::string x = WriteNpy("x.npy", "<f4", "(32,)", ones.data(), 128);
  const std::string y = WriteNpy("y.npy", "|u1", "(32,)", codes.data(), 32);
  const std::string s = WriteNpy("s.npy", "<V1", "(1,)", &scale, 1);  // ml_dtypes float8_e8m0fnu
  CliResult r = Lowbit({"check", "mxfp8_e4m3", "--input", x, "--output", y, "--scales", s});
  EXPECT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_NE(r.out.find("33 outputs checked, 0 mismatches: MATCH"), std::string::npos) << r.out;
  // A kernel that forgot to subtract the element's emax: scale 2^0 (0x7f),
  // elements 1 (0x38).
  const std::vector<std::uint8_t> ones_codes(32, 0x38);
  const std::uint8_t unit_scale = 0x7F;
  const std::string y2 = WriteNpy("y2.npy", "|u1", "(32,)", ones_codes.data(), 32);
  const std::string s2 = WriteNpy("s2.npy", "|u1", "(1,)", &unit_scale, 1);
  r = Lowbit({"check", "mxfp8_e4m3", "--input", x, "--output", y2, "--scales", s2});
  EXPECT_EQ(r.exit_code, 1) << r.out << r.err;
  EXPECT_NE(r.out.find("block 0: amax 1, scale expected 0x77 (0.00390625), kernel 0x7f (1)"), std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("diagnosis: matches element emax not subtracted"), std::string::npos) << r.out;
  // Scales of the wrong count or type.
  const std::uint8_t two[2] = {0x77, 0x77};
  const std::string s3 = WriteNpy("s3.npy", "|u1", "(2,)", two, 2);
  r = Lowbit({"check", "mxfp8_e4m3", "--input", x, "--output", y, "--scales", s3});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("scale codes: got 2, the layout makes 1 group (one each)"), std::string::npos) << r.err;
}

// A scaled recipe per row: FP32 scales amax / 127 = 1 for rows whose amax is
// 127, codes the integers themselves.
TEST_F(CheckCommandTest, ScaledRecipePerRow) {
  const float x[2][4] = {{127, 1, -2, 3}, {-127, 0, 5, 64}};
  const std::int8_t q[2][4] = {{127, 1, -2, 3}, {-127, 0, 5, 64}};
  const float scales[2] = {1.0f, 1.0f};
  const std::string xs = WriteNpy("x.npy", "<f4", "(2, 4)", x, sizeof x);
  const std::string ys = WriteNpy("y.npy", "|i1", "(2, 4)", q, sizeof q);
  const std::string ss = WriteNpy("s.npy", "<f4", "(2,)", scales, sizeof scales);
  CliResult r = Lowbit({"check", "int8:common", "--layout", "row", "--input", xs, "--output", ys, "--scales", ss});
  EXPECT_EQ(r.exit_code, 0) << r.out << r.err;
  // Per tensor the same numbers need one scale, not two.
  r = Lowbit({"check", "int8:common", "--input", xs, "--output", ys, "--scales", ss});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("scales: got 2, the layout makes 1 group (one each)"), std::string::npos) << r.err;
  // Raw input with --shape.
  const std::string xr = WriteRaw("x.bin", x, sizeof x);
  r = Lowbit({"check", "int8:common/row", "--input", xr, "--dtype", "fp32", "--shape", "2x4", "--output", ys,
              "--scales", ss});
  EXPECT_EQ(r.exit_code, 0) << r.out << r.err;
  r = Lowbit({"check", "int8:common/row", "--input", xr, "--dtype", "fp32", "--shape", "3x4", "--output", ys});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("--shape '3x4' does not hold the 8 values"), std::string::npos) << r.err;
}

// NVFP4 (TE) with the tensor scale. Tensor amax 2688 gives S_enc = S_dec =
// 1. Block 0 (amax 6): 6 * fp32(1/6) rounds to 1 = UE4M3 0x38; E2M1 codes of
// 6 -3 0.75 0.25 5 1.75 are 0x7 0xd 0x2 0x0 0x6 0x4 (ties to the even
// code). Block 1 (amax 2688): 2688 / 6 = 448 = 0x7e, and 2688 / 448 = 6 is
// 0x7. Two codes per byte, element 0 in the low nibble.
TEST_F(CheckCommandTest, Nvfp4WithTheTensorScale) {
  std::vector<float> x = {6, -3, 0.75f, 0.25f, 5, 1.75f};
  x.resize(31, 0.0f);
  x.push_back(2688.0f);
  const std::uint8_t packed[16] = {0xd7, 0x02, 0x46, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0x70};
  const std::uint8_t scales[2] = {0x38, 0x7e};
  const float one = 1.0f;
  const std::string xs = WriteNpy("x.npy", "<f4", "(32,)", x.data(), x.size() * 4);
  const std::string ys = WriteNpy("y.npy", "|u1", "(16,)", packed, sizeof packed);
  const std::string ss = WriteNpy("s.npy", "<V1", "(2,)", scales, sizeof scales);
  const std::string ts = WriteNpy("t.npy", "<f4", "()", &one, 4);
  CliResult r = Lowbit({"check", "nvfp4:te", "--input", xs, "--output", ys, "--scales", ss, "--tensor-scale", "1"});
  EXPECT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_NE(r.out.find("35 outputs checked"), std::string::npos) << r.out;  // 32 codes, 2 scales, the tensor scale
  r = Lowbit({"check", "nvfp4", "--input", xs, "--output", ys, "--scales", ss, "--tensor-scale", ts});
  EXPECT_EQ(r.exit_code, 0) << r.out << r.err;
  r = Lowbit({"check", "nvfp4:te", "--input", xs, "--output", ys, "--tensor-scale", "0.5"});
  EXPECT_EQ(r.exit_code, 1) << r.out << r.err;
  EXPECT_NE(r.out.find("tensor scale: expected 0x3f800000 (fp32 1), kernel 0x3f000000 (fp32 0.5)"), std::string::npos)
      << r.out;
  // Read as element 0 in the high nibble, the same bytes are wrong, and the
  // diagnosis says they are in the other order.
  r = Lowbit({"check", "nvfp4:te", "--input", xs, "--output", ys, "--packing", "high-first"});
  EXPECT_EQ(r.exit_code, 1) << r.out << r.err;
  EXPECT_NE(r.out.find("diagnosis: matches packing nibbles low first on all 32 outputs"), std::string::npos) << r.out;
  r = Lowbit({"check", "nvfp4:te", "--input", xs, "--output", ys, "--tensor-scale", "1.5x"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("is not a number either"), std::string::npos) << r.err;
}

// Files written by ml_dtypes itself (the venv scripts/setup.sh makes):
// bfloat16 inputs ('<V2') and float8_e4m3fn outputs ('<V1').
TEST_F(CheckCommandTest, FilesWrittenByMlDtypes) {
  const std::string python = std::string(LOWBIT_SOURCE_DIR) + "/.venv/bin/python";
  ASSERT_EQ(access(python.c_str(), X_OK), 0) << python << " is missing: run scripts/setup.sh";
  const std::string x = Path("x.npy");
  const std::string y = Path("y.npy");
  const std::string script =
      "import sys, numpy as np, ml_dtypes\n"
      "x = np.array([1, 2.5, 448, 500, -0.0, 1e-3, float('nan'), -3.75], dtype=np.float32).astype(ml_dtypes.bfloat16)\n"
      "np.save(sys.argv[1], x)\n"
      "np.save(sys.argv[2], x.astype(ml_dtypes.float8_e4m3fn))\n";
  const std::string command = "'" + python + "' -c \"$SCRIPT\" '" + x + "' '" + y + "'";
  ASSERT_EQ(setenv("SCRIPT", script.c_str(), 1), 0);
  ASSERT_EQ(std::system(command.c_str()), 0) << command;
  const CliResult r = Lowbit({"check", "e4m3:ml_dtypes", "--input", x, "--output", y});
  EXPECT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_NE(r.out.find("8 outputs checked, 0 mismatches: MATCH"), std::string::npos) << r.out;
}

}  // namespace
