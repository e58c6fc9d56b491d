// `lowbit check gemm` end to end: runs the built binary on .npy files whose D
// is computed here by plain fmaf loops (K order, a dropped K tail), and on
// bad input (shapes that do not multiply, a K that disagrees, scales of the
// wrong count, an output of the wrong shape or type): one error line, exit 2.
#include <gtest/gtest.h>
#include <unistd.h>

#include <bit>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <fstream>
#include <random>
#include <string>
#include <vector>

#include "cli_files.h"
#include "run_cli.h"

namespace {

using lowbit::testing::CliResult;
using lowbit::testing::RunCli;

constexpr long kM = 4, kN = 3, kK = 40;

class CheckGemmCommand : public lowbit::testing::CliFilesTest {
 protected:
  void SetUp() override {
    CliFilesTest::SetUp();
    if (IsSkipped() || HasFatalFailure()) return;
    std::mt19937 rng(7);
    a_.resize(kM * kK);
    b_.resize(kK * kN);
    for (auto* v : {&a_, &b_}) {
      for (auto& c : *v) c = static_cast<std::uint16_t>(((rng() & 1u) << 15) | ((123u + rng() % 9u) << 7) | (rng() & 0x7Fu));
    }
    bt_.resize(kN * kK);
    for (long k = 0; k < kK; ++k) {
      for (long j = 0; j < kN; ++j) bt_[static_cast<std::size_t>(j * kK + k)] = b_[static_cast<std::size_t>(k * kN + j)];
    }
  }
  static float Bf16(std::uint16_t c) { return std::bit_cast<float>(static_cast<std::uint32_t>(c) << 16); }

  // D = A x B by fmaf in K order over the first `k_used` elements of K.
  std::vector<float> FmaProduct(long k_used) const {
    std::vector<float> d(kM * kN);
    for (long i = 0; i < kM; ++i) {
      for (long j = 0; j < kN; ++j) {
        float acc = 0;
        for (long k = 0; k < k_used; ++k) {
          acc = std::fmaf(Bf16(a_[static_cast<std::size_t>(i * kK + k)]), Bf16(b_[static_cast<std::size_t>(k * kN + j)]), acc);
        }
        d[static_cast<std::size_t>(i * kN + j)] = acc;
      }
    }
    return d;
  }

  std::string A() { return WriteNpy("a.npy", "<V2", "(4, 40)", a_.data(), a_.size() * 2); }
  std::string B() { return WriteNpy("b.npy", "<V2", "(40, 3)", b_.data(), b_.size() * 2); }
  std::string D(const std::vector<float>& d) { return WriteNpy("d.npy", "<f4", "(4, 3)", d.data(), d.size() * 4); }

  void ExpectError(const CliResult& r, const std::string& message) {
    EXPECT_EQ(r.exit_code, 2) << r.out << r.err;
    EXPECT_EQ(r.out, "");
    EXPECT_EQ(r.err, "lowbit: error: " + message + "\n");
  }

  std::vector<std::uint16_t> a_, b_, bt_;
};

TEST_F(CheckGemmCommand, AnFmaLoopInKOrderIsAMatch) {
  const CliResult r = RunCli({"check", "gemm", "--a", A(), "--b", B(), "--output", D(FmaProduct(kK))});
  EXPECT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_NE(r.out.find("MATCH: fp32 fma, K order gives every output bit (12 outputs)\n"), std::string::npos) << r.out;
}

TEST_F(CheckGemmCommand, BGivenNByKWithTransposeB) {
  const std::string b = WriteNpy("bt.npy", "<V2", "(3, 40)", bt_.data(), bt_.size() * 2);
  const CliResult r = RunCli({"check", "gemm", "--a", A(), "--b", b, "--transpose-b", "--output", D(FmaProduct(kK)), "--json"});
  EXPECT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_EQ(r.out.rfind("{\"error\": \"\"", 0), 0u) << r.out;
  EXPECT_NE(r.out.find("\"match\": \"fp32 fma, K order\""), std::string::npos) << r.out;
}

TEST_F(CheckGemmCommand, ADroppedKTailIsNamed) {
  const CliResult r = RunCli({"check", "gemm", "--a", A(), "--b", B(), "--output", D(FmaProduct(32))});
  EXPECT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_NE(r.out.find("MATCH: K tail dropped after 32 (tile 16), fp32 fma, K order"), std::string::npos) << r.out;
}

TEST_F(CheckGemmCommand, AnOutputNoCandidateGivesIsExitOneWithTheMismatchShown) {
  std::vector<float> d = FmaProduct(kK);
  d[5] = std::nextafter(d[5], INFINITY) ;  // d[1][2], one ulp up
  d[5] = std::nextafter(d[5], INFINITY);   // two: no candidate rounds that far
  const CliResult r = RunCli({"check", "gemm", "--a", A(), "--b", B(), "--output", D(d)});
  EXPECT_EQ(r.exit_code, 1) << r.out << r.err;
  EXPECT_NE(r.out.find("NO MATCH: matches no candidate (closest: fp32 fma, K order, 1 of 12 outputs differ"),
            std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("first at d[1][2]"), std::string::npos) << r.out;
}

TEST_F(CheckGemmCommand, BadInputIsOneLineAndExitTwo) {
  const std::string a = A(), d = D(FmaProduct(kK));
  std::vector<std::uint16_t> b41(41 * 3, 0x3f80);
  ExpectError(RunCli({"check", "gemm", "--a", a, "--b", WriteNpy("b41.npy", "<V2", "(41, 3)", b41.data(), b41.size() * 2),
                      "--output", d}),
              "A is (4, 40) and B is (41, 3) (K x N): A's K = 40 is not B's K = 41 (is B N x K? --transpose-b)");
  std::vector<std::uint16_t> flat(40, 0x3f80);
  const std::string b1 = WriteNpy("b1.npy", "<V2", "(40,)", flat.data(), flat.size() * 2);
  ExpectError(RunCli({"check", "gemm", "--a", a, "--b", b1, "--output", d}),
              "--b '" + b1 + "': a 1-dimensional array (40,); B must be a matrix");
  std::vector<float> d43(12);
  const std::string wrong_d = WriteNpy("d43.npy", "<f4", "(3, 4)", d43.data(), 48);
  ExpectError(RunCli({"check", "gemm", "--a", a, "--b", B(), "--output", wrong_d}),
              "--output '" + wrong_d + "': shape (3, 4), but A x B is M x N = 4 x 3");
  std::vector<std::uint8_t> d_bytes(12);
  const std::string byte_d = WriteNpy("d8.npy", "|u1", "(4, 3)", d_bytes.data(), 12);
  ExpectError(RunCli({"check", "gemm", "--a", a, "--b", B(), "--output", byte_d}),
              "--output '" + byte_d +
                  "': dtype '|u1' is not float32, float16 or bfloat16 (uint16 codes need --output-format bf16 or fp16)");
  std::vector<float> two = {1.0f, 2.0f};
  const std::string scales = WriteNpy("s.npy", "<f4", "(2,)", two.data(), 8);
  ExpectError(RunCli({"check", "gemm", "--a", a, "--b", B(), "--b-scales", scales, "--output", d}),
              "--b-scales '" + scales + "': 2 scales; bf16 takes one (per tensor) or N = 3 (one per column of B)");
  std::vector<std::uint8_t> codes(4 * 40);
  const std::string a8 = WriteNpy("a8.npy", "|u1", "(4, 40)", codes.data(), codes.size());
  ExpectError(RunCli({"check", "gemm", "--a", a8, "--b", B(), "--output", d}),
              "--a '" + a8 + "': dtype '|u1' does not say the format; give --a-format (e4m3, e5m2, int8, nvfp4, mxfp4, mxfp8, bf16, fp16, fp32)");
  ExpectError(RunCli({"check", "gemm", "--a", a8, "--a-format", "e4m3\n", "--b", B(), "--output", d}),
              "A: unknown format 'e4m3\\x0a' (bf16, fp16, fp32, e4m3, e5m2, int8, nvfp4, mxfp4, mxfp8)");
  ExpectError(RunCli({"check", "gemm", "--a", a8, "--a-format", "mxfp8", "--b", B(), "--output", d}),
              "A's block scales: 0 given, mxfp8 needs M x ceil(K / 32) = 4 x 2 = 8");
}

}  // namespace
