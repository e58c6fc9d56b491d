// `lowbit quantize` and `lowbit explain` end to end: runs the built binary (LOWBIT_CLI_PATH, set
// by proptests/CMakeLists.txt for every proptests/cli/ test) on an MX, an NVFP4
// and scaled INT/FP8 examples and checks the printed codes and scales. The
// expected lines are worked out by hand from the recipes' formulas.
#include <cstdio>
#include <fstream>
#include <string>

#include <sys/wait.h>

#include <gtest/gtest.h>

#include "lowbit/formats/recipe/catalog.h"
#include "lowbit/formats/recipe/names.h"

namespace {

struct CliRun {
  int exit_code = -1;
  std::string out;  // stdout and stderr
};

CliRun Lowbit(const std::string& args) {
  CliRun r;
#if defined(LOWBIT_CLI_PATH)
  const std::string command = std::string("'") + LOWBIT_CLI_PATH + "' " + args + " 2>&1";
  FILE* pipe = popen(command.c_str(), "r");
  if (pipe == nullptr) return r;
  char buffer[4096];
  std::size_t n = 0;
  while ((n = std::fread(buffer, 1, sizeof buffer, pipe)) > 0) r.out.append(buffer, n);
  const int status = pclose(pipe);
  r.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
#else
  (void)args;
#endif
  return r;
}

class CliQuantizeTest : public ::testing::Test {
 protected:
  void SetUp() override {
#if !defined(LOWBIT_CLI_PATH)
    GTEST_SKIP() << "the lowbit CLI is not built (LOWBIT_BUILD_TOOLS=OFF)";
#endif
  }
};

TEST_F(CliQuantizeTest, MxFp4OcpFloorClampsTheLargestElement) {
  // OCP floor: amax 6.06, floor(log2 6.06) = 2 = emax(E2M1) -> X = 2^0,
  // E8M0 127; 6.06 saturates to 6 (0x7), 1 -> 0x2, 0.5 -> 0x1, -3 -> 0xD.
  const CliRun r = Lowbit("quantize mxfp4:ocp 6.06 1 0.5 -3");
  EXPECT_EQ(r.exit_code, 0) << r.out;
  EXPECT_NE(r.out.find("block 0: scale 0x7f = 1 (2^0)\n  codes: 0x7 0x2 0x1 0xd\n"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("dequantized: 6 1 0.5 -3\n"), std::string::npos) << r.out;
}

TEST_F(CliQuantizeTest, Nvfp4TeUnitTensorScale) {
  // Tensor amax 2688 -> S_enc = S_dec = 1. Block 0 amax 6: 6 * fp32(1/6) =
  // 1.0000000298 -> FP32 1 -> E4M3 0x38; E2M1 6 -3 0.75 0.25 5 1.75 -> 0x7
  // 0xd 0x2 0x0 0x6 0x4 (ties to even). Block 1 amax 2688: 2688 * fp32(1/6)
  // -> E4M3 448 = 0x7e.
  const CliRun r = Lowbit("quantize nvfp4:te 6 -3 0.75 0.25 5 1.75 0 0 0 0 0 0 0 0 0 0 2688");
  EXPECT_EQ(r.exit_code, 0) << r.out;
  EXPECT_NE(r.out.find("tensor scale 1 (0x3f800000)"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("block 0: scale 0x38 = 1\n  codes: 0x7 0xd 0x2 0x0 0x6 0x4 0x0"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("block 1: scale 0x7e = 448\n"), std::string::npos) << r.out;
}

TEST_F(CliQuantizeTest, Int8AoSymmetricPerRow) {
  // Row 0 amax 127.5 -> scale 1: 127.5 -> 128 -> clamp 127, 10 -> 10.
  // Row 1 amax 255 -> scale 2, 1 / scale = 0.5: 127.5 -> 127, -20 -> -10.
  const CliRun r = Lowbit("quantize int8:ao-sym --shape 2x2 --layout row 127.5 10 255 -20");
  EXPECT_EQ(r.exit_code, 0) << r.out;
  EXPECT_NE(r.out.find("group 0: scale 1 (0x3f800000)  encode 1 (0x3f800000)  zero point 0\n  codes: 0x7f 0xa\n"),
            std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("group 1: scale 2 (0x40000000)  encode 0.5 (0x3f000000)  zero point 0\n  codes: 0x7f 0xf6\n"),
            std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("dequantized: 127 10 254 -20\n"), std::string::npos) << r.out;
}

TEST_F(CliQuantizeTest, GptqSymmetricClipsPlusAmaxAndStaticFp8Saturates) {
  // GPTQ sym: scale (7.5 + 7.5) / 15 = 1, zero 8: 7.5 -> 16 -> 15.
  const CliRun g = Lowbit("quantize uint4:gptq-sym 7.5 -7.5 1 0");
  EXPECT_EQ(g.exit_code, 0) << g.out;
  EXPECT_NE(g.out.find("zero point 8\n  codes: 0xf 0x0 0x9 0x8\n"), std::string::npos) << g.out;
  // TE static amax 1: scale 448; 2 * 448 = 896 -> satfinite 448 = 0x7e.
  const CliRun t = Lowbit("quantize e4m3:te --static -1,1 2 0.5");
  EXPECT_EQ(t.exit_code, 0) << t.out;
  EXPECT_NE(t.out.find("static scales"), std::string::npos) << t.out;
  EXPECT_NE(t.out.find("encode 448 (0x43e00000)"), std::string::npos) << t.out;
  // 0.5 * 448 = 224 -> 0x76.
  EXPECT_NE(t.out.find("codes: 0x7e 0x76\n"), std::string::npos) << t.out;
}

TEST_F(CliQuantizeTest, ShapesThatDoNotTileAreUsageErrors) {
  const CliRun r = Lowbit("quantize int8:ao-sym --layout group:3 1 2 3 4");
  EXPECT_EQ(r.exit_code, 2) << r.out;
  EXPECT_NE(r.out.find("columns are not a multiple of the group size"), std::string::npos) << r.out;
  const CliRun b = Lowbit("quantize int8:common --shape 3x2 --layout block:2x2 1 2 3 4 5 6");
  EXPECT_EQ(b.exit_code, 2) << b.out;
  EXPECT_NE(b.out.find("rows are not a multiple of the block height"), std::string::npos) << b.out;
}

TEST_F(CliQuantizeTest, ExplainComparesAoAndCommonOnMinusAmax) {
  // amax 127.5: [AO] scale 1, -127.5 -> -128 (0x80); common scale
  // fp32(127.5 / 127), -127.5 / scale = -127 (0x81).
  const CliRun r = Lowbit("explain int8:ao-sym,common 127.5 -127.5 2.5 -0.5");
  EXPECT_EQ(r.exit_code, 0) << r.out;
  EXPECT_NE(r.out.find("[1] -127.5 -> -127.5 -> code 0x80 = -128 -> -128\n"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("[1] -127.5 -> -127 -> code 0x81 = -127 -> -127.5\n"), std::string::npos) << r.out;
}

// ---- given (static) scales: --scale / --scale-file --------------------------

TEST_F(CliQuantizeTest, VllmGivenScalePerTensor) {
  // static_scaled_fp8_quant: the given scale 2 is stored, y = x * (1 / 2):
  // 1 -> 0.5 (0x30), -3 -> -1.5 (0xbc), 896 -> 448 (0x7e), 1000 -> 500 ->
  // clamp 448 (0x7e).
  const CliRun r = Lowbit("quantize e4m3:vllm --scale 2 1 -3 896 1000");
  EXPECT_EQ(r.exit_code, 0) << r.out;
  EXPECT_NE(r.out.find("given scales"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("group 0: scale 2 (0x40000000)  encode 0.5 (0x3f000000)  zero point 0\n"
                       "  codes: 0x30 0xbc 0x7e 0x7e\n"),
            std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("dequantized: 1 -3 896 896\n"), std::string::npos) << r.out;
}

TEST_F(CliQuantizeTest, VllmKvGivenScalePerHead) {
  // Two heads of size 2 (layout g2), k_scale 1 and 4; y = x / scale:
  // head 0: 1, 2 -> 0x38, 0x40; head 1: 4 / 4 = 1, 8 / 4 = 2 -> 0x38, 0x40.
  const CliRun r = Lowbit("quantize e4m3:vllm-kv/g2 --scale 1,4 1 2 4 8");
  EXPECT_EQ(r.exit_code, 0) << r.out;
  EXPECT_NE(r.out.find("group 0: scale 1 (0x3f800000)  encode 1 (0x3f800000)  zero point 0\n  codes: 0x38 0x40\n"),
            std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("group 1: scale 4 (0x40800000)  encode 4 (0x40800000)  zero point 0\n  codes: 0x38 0x40\n"),
            std::string::npos)
      << r.out;
  // The same scales from a file, and one scale for both heads.
  const std::string path = ::testing::TempDir() + "lowbit_cli_kv_scales.txt";
  std::ofstream(path) << "1\n4\n";
  const CliRun f = Lowbit("quantize e4m3:vllm-kv/g2 --scale-file '" + path + "' 1 2 4 8");
  EXPECT_EQ(f.exit_code, 0) << f.out;
  EXPECT_NE(f.out.find("group 1: scale 4 (0x40800000)"), std::string::npos) << f.out;
  const CliRun one = Lowbit("quantize e4m3:vllm-kv/g2 --scale 4 1 2 4 8");
  EXPECT_NE(one.out.find("group 0: scale 4 (0x40800000)  encode 4 (0x40800000)  zero point 0\n  codes: 0x28 0x30\n"),
            std::string::npos)
      << one.out;
}

TEST_F(CliQuantizeTest, BadGivenScalesAreUsageErrors) {
  const struct {
    const char* args;
    const char* message;
  } kCases[] = {
      {"e4m3:vllm --scale nan 1 2", "a given scale must be a finite number > 0"},
      {"e4m3:vllm --scale inf 1 2", "a given scale must be a finite number > 0"},
      {"e4m3:vllm --scale=-inf 1 2", "a given scale must be a finite number > 0"},
      {"e4m3:vllm --scale 0 1 2", "a given scale must be a finite number > 0"},
      {"e4m3:vllm --scale=-0 1 2", "a given scale must be a finite number > 0"},
      {"e4m3:vllm --scale=-2 1 2", "a given scale must be a finite number > 0"},
      {"e4m3:vllm-kv/g2 --scale 1,nan 1 2 4 8", "scale 2 is nan"},
      {"e4m3:vllm-kv/g2 --scale 1,2,3 1 2 4 8", "3 scales for 2 groups (layout g2); give 1, or one per group"},
      {"e4m3:vllm --scale 1,2 1 2 4 8", "2 scales for 1 group (layout tensor)"},
      {"e4m3:vllm --scale 1,,2 1 2", "an empty scale"},
      {"e4m3:vllm --scale abc 1 2", "--scale 'abc':"},
      {"e4m3:vllm --scale 1 --static -1,1 1 2", "give one"},
      {"e4m3:vllm --scale 1 --scale-file x.txt 1 2", "not both"},
      {"int8:ao-sym --scale 1 1 2", "int8:ao-sym takes no given scale"},
      {"e4m3:te --scale 1 1 2", "takes no given scale"},
      {"mxfp4:ocp --scale 1 1 2", "--scale and --scale-file apply to scaled recipes"},
  };
  for (const auto& c : kCases) {
    const CliRun r = Lowbit(std::string("quantize ") + c.args);
    EXPECT_EQ(r.exit_code, 2) << c.args << ": " << r.out;
    EXPECT_NE(r.out.find(c.message), std::string::npos) << c.args << ": " << r.out;
  }
}

// ---- explain: a rule line for every recipe -----------------------------------

TEST_F(CliQuantizeTest, ExplainPrintsARuleForEveryRecipe) {
  // Every catalog recipe's walk prints "scale rule: TEXT" with TEXT not empty
  // (explain_command.cc ScaleRuleText; a rule without text would print
  // "scale rule: " followed by ';' or the end of the line).
  int walked = 0;
  for (const lowbit::recipe::Recipe& recipe : lowbit::recipe::kAllRecipes) {
    const std::string name = lowbit::recipe::RecipeName(recipe);
    const CliRun r = Lowbit("explain " + name + " 1 -2 0.5 3");
    EXPECT_EQ(r.exit_code, 0) << name << ": " << r.out;
    const std::size_t at = r.out.find("scale rule: ");
    ASSERT_NE(at, std::string::npos) << name << ": " << r.out;
    const char next = r.out[at + std::string("scale rule: ").size()];
    EXPECT_TRUE(next != ';' && next != '\n' && next != ' ') << name << ": " << r.out;
    ++walked;
  }
  EXPECT_GT(walked, 20);
}

}  // namespace
