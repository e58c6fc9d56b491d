// The diagnosis of lowbit/check/user_outputs.h names the convention a wrong
// kernel follows. Each "buggy kernel" below is written here, independently
// of lowbit's model and of the diagnosis' candidates, the way a user writes
// one (a value table and a nearest search, bit tricks on FP32 words, libm's
// log2f, nearbyintf): the test checks that the diagnosis finds the one
// convention the kernel was written to follow, that a correct kernel gets
// MATCH with no diagnosis, and that a kernel following no known convention
// is told so.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "lowbit/check/user_outputs.h"
#include "lowbit/formats/fp32_bits.h"
#include "fp16_by_f16c.h"

namespace lowbit::check {
namespace {

// ---- independent reference pieces of the buggy kernels -------------------------

// E4M3 (OCP "FN") values typed from the OCP OFP8 spec's layout: 4 exponent
// bits with bias 7, 3 mantissa bits, subnormals at exponent 0.
double E4m3Magnitude(int code) {
  const int e = (code >> 3) & 15;
  const int m = code & 7;
  return e == 0 ? m / 8.0 * std::ldexp(1.0, -6) : (1 + m / 8.0) * std::ldexp(1.0, e - 7);
}

// A kernel's FP32 -> E4M3 as NVIDIA's cvt.rn.satfinite documents it: NaN
// gives 0x7F, |x| >= 448 (Inf too) gives +-448, otherwise the nearest value,
// ties to the even code. `toward_zero` drops the rounding step.
std::uint8_t E4m3ByTable(float x, bool toward_zero = false) {
  if (std::isnan(x)) return 0x7F;
  const std::uint8_t sign = std::signbit(x) ? 0x80 : 0;
  const double a = std::fabs(static_cast<double>(x));
  if (a >= 448.0) return sign | 0x7E;
  int c = 0;
  while (c < 0x7E && E4m3Magnitude(c + 1) <= a) ++c;
  if (!toward_zero && c < 0x7E) {
    const double mid = (E4m3Magnitude(c) + E4m3Magnitude(c + 1)) / 2;
    if (a > mid || (a == mid && (c & 1) != 0)) ++c;
  }
  return static_cast<std::uint8_t>(sign | c);
}

// FP32 -> BF16 with the bias trick for round-to-nearest-even, a quieted NaN.
std::uint16_t Bf16RoundEven(float x) {
  const std::uint32_t b = F32Bits(x);
  if (std::isnan(x)) return static_cast<std::uint16_t>((b >> 16) | 0x40);
  return static_cast<std::uint16_t>((b + 0x7FFF + ((b >> 16) & 1)) >> 16);
}

// FP32 inputs covering every class: a stride over all 2^32 words, plus the
// words where conventions differ (NaN payloads only in the low bits, +-Inf,
// +-0, just above and below the largest finite values, BF16 ties, FP32
// subnormals).
std::vector<float> Fp32Inputs() {
  std::vector<float> x;
  for (std::uint64_t w = 0; w < (std::uint64_t{1} << 32); w += 65537) x.push_back(F32FromBits(static_cast<std::uint32_t>(w)));
  for (std::uint32_t w : {0x7F800001u, 0xFF800001u, 0x7FC00000u, 0xFFC00000u, 0x7F800000u, 0xFF800000u, 0x0u,
                          0x80000000u, 0x7F7FFFFFu, 0xFF7FFFFFu, 0x7F7F8000u, 0x3F808000u, 0x3F818000u, 0xBF808000u,
                          0x00000001u, 0x007FFFFFu, 0x807FFFFFu, 0x00400000u, 0x43E00000u, 0x43E80000u, 0xC3F00000u}) {
    x.push_back(F32FromBits(w));
  }
  return x;
}

Report CheckBf16(const char* target_name, const std::vector<float>& x, const std::vector<std::uint16_t>& out) {
  Target t;
  std::string error;
  EXPECT_TRUE(ParseTarget(target_name, {}, &t, &error)) << error;
  return CheckElementOutputs(t, {FormatId::kFp32, x.data(), x.size()}, {out.data(), out.size(), 2});
}

Report CheckE4m3(const char* target_name, const std::vector<float>& x, const std::vector<std::uint8_t>& out) {
  Target t;
  std::string error;
  EXPECT_TRUE(ParseTarget(target_name, {}, &t, &error)) << error;
  return CheckElementOutputs(t, {FormatId::kFp32, x.data(), x.size()}, {out.data(), out.size(), 1});
}

// The report says the kernel differs from the target and names `convention`
// among the candidates that match every output.
void ExpectDiagnosis(const Report& r, const std::string& convention) {
  ASSERT_TRUE(r.error.empty()) << r.error;
  ASSERT_GT(r.mismatches, 0u) << "the buggy kernel matched the target: the test input does not show the bug";
  ASSERT_TRUE(r.diagnosis.ran);
  bool named = false;
  std::string full;
  for (const Candidate& c : r.diagnosis.candidates) {
    if (!c.FullMatch()) break;
    full += c.name + "; ";
    named |= c.name == convention;
  }
  EXPECT_TRUE(named) << "expected a full match of '" << convention << "', full matches: " << full << "\n"
                     << ReportText(r);
  // The line names the full matches (three of them, and how many more).
  EXPECT_EQ(r.diagnosis.summary.rfind("matches ", 0), 0u) << r.diagnosis.summary;
  EXPECT_NE(r.diagnosis.summary.rfind("matches no known", 0), 0u) << r.diagnosis.summary;
  EXPECT_NE(r.diagnosis.summary.find("differs from " + r.target), std::string::npos) << r.diagnosis.summary;
  EXPECT_NE(ReportText(r).find("diagnosis: " + r.diagnosis.summary), std::string::npos);
  EXPECT_NE(ReportJson(r).find("\"summary\": "), std::string::npos);
}

// ---- element conversions ----------------------------------------------------------

// Kind 1, another profile: a saturating E4M3 kernel (NVIDIA's convention)
// checked against ml_dtypes, whose overflow and -NaN give 0x7F / 0xFF.
TEST(Diagnosis, SaturatingE4m3KernelMatchesProfileNvidia) {
  const std::vector<float> x = Fp32Inputs();
  std::vector<std::uint8_t> out;
  for (float v : x) out.push_back(E4m3ByTable(v));
  const Report r = CheckE4m3("e4m3:ml_dtypes", x, out);
  ExpectDiagnosis(r, "profile nvidia");
  // The classes where it differs from ml_dtypes are named.
  bool overflow_named = false;
  for (const DifferenceClass& d : r.diagnosis.target_differences) {
    overflow_named |= d.what == "inputs beyond the largest finite value" && d.candidate_code == 0x7F &&
                      d.actual_code == 0x7E;
  }
  EXPECT_TRUE(overflow_named) << ReportText(r);
}

// Kind 2, truncation: FP32 -> BF16 as `bits >> 16`.
TEST(Diagnosis, ShiftingBf16KernelMatchesTruncation) {
  const std::vector<float> x = Fp32Inputs();
  std::vector<std::uint16_t> out;
  for (float v : x) out.push_back(static_cast<std::uint16_t>(F32Bits(v) >> 16));
  const Report r = CheckBf16("bf16", x, out);
  ExpectDiagnosis(r, "truncation (the input's top bits)");
  // The NaN whose payload sits in the low bits became an infinity: round
  // toward zero keeps it a NaN, so it does not match everywhere.
  for (const Candidate& c : r.diagnosis.candidates) {
    if (c.name == "rounding rtz") EXPECT_FALSE(c.FullMatch());
  }
}

// Kind 3, ties away from zero: `(bits + 0x8000) >> 16`.
TEST(Diagnosis, HalfAwayBf16KernelMatchesRoundingRna) {
  const std::vector<float> x = Fp32Inputs();
  std::vector<std::uint16_t> out;
  for (float v : x) {
    const std::uint32_t b = F32Bits(v);
    out.push_back(std::isnan(v) ? static_cast<std::uint16_t>((b >> 16) | 0x40)
                                : static_cast<std::uint16_t>((b + 0x8000) >> 16));
  }
  const Report r = CheckBf16("bf16", x, out);
  ExpectDiagnosis(r, "rounding rna");
  ASSERT_FALSE(r.diagnosis.target_differences.empty());
  EXPECT_EQ(r.diagnosis.target_differences.front().what, "ties") << ReportText(r);
}

// Kind 4, round toward zero: an E4M3 table search without the rounding step,
// on finite inputs below E4M3's largest value.
TEST(Diagnosis, TruncatingE4m3KernelMatchesRoundingRtz) {
  std::vector<float> x;
  for (float v : Fp32Inputs()) {
    if (std::isfinite(v) && std::fabs(v) < 448.0f) x.push_back(v);
  }
  std::vector<std::uint8_t> out;
  for (float v : x) out.push_back(E4m3ByTable(v, /*toward_zero=*/true));
  ExpectDiagnosis(CheckE4m3("e4m3", x, out), "rounding rtz");
}

// Kind 5, flush to zero: round to nearest even, then a subnormal BF16 result
// becomes a zero of its sign (what -ftz does to a kernel's arithmetic).
TEST(Diagnosis, FlushingBf16KernelMatchesSubnormalResultsFlushed) {
  const std::vector<float> x = Fp32Inputs();
  std::vector<std::uint16_t> out;
  for (float v : x) {
    std::uint16_t h = Bf16RoundEven(v);
    if ((h & 0x7F80) == 0) h &= 0x8000;
    out.push_back(h);
  }
  ExpectDiagnosis(CheckBf16("bf16", x, out), "subnormal results flushed to zero");
}

// ---- ties other than even and away, and two deviations at once -----------------------

// Finite FP32 inputs of Fp32Inputs() within +-2^16 (where a table lookup's
// distances in double are exact enough to tie only at true ties), plus the
// given extra values.
std::vector<float> ModerateInputs(const std::vector<float>& extra) {
  std::vector<float> x;
  for (float v : Fp32Inputs()) {
    if (std::isfinite(v) && std::fabs(v) <= 65536.0f) x.push_back(v);
  }
  x.insert(x.end(), extra.begin(), extra.end());
  return x;
}

Report CheckInt8(const char* target_name, const std::vector<float>& x, const std::vector<std::uint8_t>& out) {
  Target t;
  std::string error;
  EXPECT_TRUE(ParseTarget(target_name, {}, &t, &error)) << error;
  return CheckElementOutputs(t, {FormatId::kFp32, x.data(), x.size()}, {out.data(), out.size(), 1});
}

// The C idiom for round-half-up into INT8: floor(x + 0.5f), clamped.
std::uint8_t Int8ByFloorOfHalfUp(float x) {
  const float q = std::fmin(std::fmax(std::floor(x + 0.5f), -128.0f), 127.0f);
  return static_cast<std::uint8_t>(static_cast<std::int8_t>(q));
}

// Every k + 1/2 over INT8's range and past it, both signs.
std::vector<float> HalfIntegers() {
  std::vector<float> v;
  for (int k = -140; k <= 140; ++k) v.push_back(static_cast<float>(k) + 0.5f);
  return v;
}

// Kind 12, ties toward +Inf: floor(x + 0.5f). Without 0.49999997f (the one
// input the FP32 sum rounds up to 1) it is rounding rnu exactly.
TEST(Diagnosis, FloorOfHalfUpKernelMatchesRoundingRnu) {
  const std::vector<float> x = ModerateInputs(HalfIntegers());
  std::vector<std::uint8_t> out;
  for (float v : x) out.push_back(Int8ByFloorOfHalfUp(v));
  const Report r = CheckInt8("int8", x, out);
  ExpectDiagnosis(r, "rounding rnu (ties toward +Inf)");
  ExpectDiagnosis(r, "floor(x + 0.5) in the input's precision");
  ASSERT_FALSE(r.diagnosis.target_differences.empty());
  EXPECT_EQ(r.diagnosis.target_differences.front().what, "ties") << ReportText(r);
}

// With 0.49999997f among the inputs only the idiom itself matches.
TEST(Diagnosis, FloorOfHalfUpKernelIsTheIdiomNotTheTieRule) {
  std::vector<float> extra = HalfIntegers();
  extra.push_back(F32FromBits(0x3EFFFFFFu));  // 0.5 - 2^-25
  const std::vector<float> x = ModerateInputs(extra);
  std::vector<std::uint8_t> out;
  for (float v : x) out.push_back(Int8ByFloorOfHalfUp(v));
  EXPECT_EQ(out.back(), 1u);  // the FP32 sum rounds to 1.0f
  const Report r = CheckInt8("int8", x, out);
  ExpectDiagnosis(r, "floor(x + 0.5) in the input's precision");
  for (const Candidate& c : r.diagnosis.candidates) {
    if (c.name == "rounding rnu (ties toward +Inf)") EXPECT_FALSE(c.FullMatch()) << ReportText(r);
  }
}

// E4M3's finite values with one zero, sorted ascending (as np.unique
// gives them): the codes 0xFE..0x81, 0x00, 0x01..0x7E.
std::vector<std::uint8_t> E4m3AscendingCodes() {
  std::vector<std::uint8_t> codes;
  for (int c = 0x7E; c >= 1; --c) codes.push_back(static_cast<std::uint8_t>(0x80 | c));
  for (int c = 0; c <= 0x7E; ++c) codes.push_back(static_cast<std::uint8_t>(c));
  return codes;
}

double E4m3Value(std::uint8_t code) { return (code & 0x80 ? -1 : 1) * E4m3Magnitude(code & 0x7F); }

// The midpoints of neighbouring E4M3 values, both signs: the ties.
std::vector<float> E4m3Midpoints() {
  const std::vector<std::uint8_t> table = E4m3AscendingCodes();
  std::vector<float> v;
  for (std::size_t i = 0; i + 1 < table.size(); ++i) {
    v.push_back(static_cast<float>((E4m3Value(table[i]) + E4m3Value(table[i + 1])) / 2));
  }
  v.push_back(-0.0f);
  v.push_back(-1e-30f);
  return v;
}

// A nearest-value lookup: argmin |x - value| over `table` (value order given
// by `value_of`), keeping the first of equal distances, as np.argmin does.
template <typename ValueOf>
std::size_t ArgminFirst(const std::vector<std::uint8_t>& table, double x, ValueOf value_of) {
  std::size_t best = 0;
  for (std::size_t i = 1; i < table.size(); ++i) {
    if (std::fabs(x - value_of(table[i])) < std::fabs(x - value_of(table[best]))) best = i;
  }
  return best;
}

// Kind 13, ties toward -Inf: argmin over E4M3's values sorted ascending. The
// first of two equal distances is the smaller value, so a tie goes down:
// toward zero for positive x, away from zero for negative x. The table has
// one zero (+0) and ends at +-448, so the kernel also saturates and gives +0
// for -0 and tiny negatives.
TEST(Diagnosis, AscendingTableLookupMatchesRoundingRnd) {
  const std::vector<float> x = ModerateInputs(E4m3Midpoints());
  const std::vector<std::uint8_t> table = E4m3AscendingCodes();
  std::vector<std::uint8_t> out;
  for (float v : x) out.push_back(table[ArgminFirst(table, v, E4m3Value)]);
  ExpectDiagnosis(CheckE4m3("e4m3", x, out), "rounding rnd (ties toward -Inf) + saturation + -0 becomes +0");
}

// Kind 14, ties toward zero: the same lookup over the magnitudes
// 0x00..0x7E, the sign bit put back after.
TEST(Diagnosis, MagnitudeTableLookupMatchesRoundingRnz) {
  const std::vector<float> x = ModerateInputs(E4m3Midpoints());
  std::vector<std::uint8_t> magnitudes;
  for (int c = 0; c <= 0x7E; ++c) magnitudes.push_back(static_cast<std::uint8_t>(c));
  std::vector<std::uint8_t> out;
  for (float v : x) {
    const std::size_t i = ArgminFirst(magnitudes, std::fabs(static_cast<double>(v)), E4m3Value);
    out.push_back(static_cast<std::uint8_t>((std::signbit(v) ? 0x80 : 0) | magnitudes[i]));
  }
  ExpectDiagnosis(CheckE4m3("e4m3", x, out), "rounding rnz (ties toward zero) + saturation");
}

// Kind 15, two deviations at once: round toward zero (the table search
// without its rounding step) and E4M3's subnormal results flushed to zero.
TEST(Diagnosis, TruncatingFlushingE4m3KernelMatchesRtzAndFtz) {
  std::vector<float> x;
  for (float v : Fp32Inputs()) {
    if (std::isfinite(v) && std::fabs(v) < 448.0f) x.push_back(v);
  }
  for (float v : {0.001f, -0.001f, 0.005f, -0.0075f, 0.0155f, 0.0157f}) x.push_back(v);  // E4M3 subnormal range
  std::vector<std::uint8_t> out;
  for (float v : x) {
    std::uint8_t c = E4m3ByTable(v, /*toward_zero=*/true);
    if ((c & 0x78) == 0) c &= 0x80;  // exponent field 0: a zero of its sign
    out.push_back(c);
  }
  const Report r = CheckE4m3("e4m3", x, out);
  ExpectDiagnosis(r, "rounding rtz + subnormal results flushed to zero");
  for (const Candidate& c : r.diagnosis.candidates) {
    if (c.name == "rounding rtz" || c.name == "subnormal results flushed to zero") {
      EXPECT_FALSE(c.FullMatch()) << c.name << "\n" << ReportText(r);
    }
  }
}

// Kind 16, two deviations at once: FP32 -> FP16 by the CPU's own conversion
// (F16C, round to nearest even), then E5M2 as the FP16's high byte.
TEST(Diagnosis, Fp16HighByteE5m2KernelMatchesDetourThenTruncation) {
  std::vector<float> x;
  for (float v : Fp32Inputs()) {
    if (!std::isnan(v)) x.push_back(v);
  }
  std::vector<std::uint8_t> out;
  for (float v : x) {
    const std::uint16_t bits = lowbit::testing::Fp16ByCpu(v);
    out.push_back(static_cast<std::uint8_t>(bits >> 8));
  }
  Target t;
  std::string error;
  ASSERT_TRUE(ParseTarget("e5m2", {}, &t, &error)) << error;
  const Report r = CheckElementOutputs(t, {FormatId::kFp32, x.data(), x.size()}, {out.data(), out.size(), 1});
  ExpectDiagnosis(r, "converted through fp16 first, then truncated (its top bits)");
  for (const Candidate& c : r.diagnosis.candidates) {
    if (c.name == "converted through fp16 first" || c.name == "rounding rtz") {
      EXPECT_FALSE(c.FullMatch()) << c.name << "\n" << ReportText(r);
    }
  }
}

// A correct kernel: MATCH, no diagnosis.
TEST(Diagnosis, CorrectKernelMatches) {
  const std::vector<float> x = Fp32Inputs();
  std::vector<std::uint16_t> out;
  for (float v : x) out.push_back(Bf16RoundEven(v));
  const Report r = CheckBf16("bf16", x, out);
  EXPECT_TRUE(r.Passed()) << ReportText(r);
  EXPECT_EQ(r.checked, x.size());
  EXPECT_FALSE(r.diagnosis.ran);
  EXPECT_NE(ReportText(r).find(": MATCH"), std::string::npos) << ReportText(r);
  EXPECT_NE(ReportJson(r).find("\"passed\": true"), std::string::npos);
}

// A kernel that follows no known convention: every fifth finite result one
// code off.
TEST(Diagnosis, UnknownConventionIsSaidSo) {
  const std::vector<float> x = Fp32Inputs();
  std::vector<std::uint16_t> out;
  for (std::size_t i = 0; i < x.size(); ++i) {
    std::uint16_t h = Bf16RoundEven(x[i]);
    if (i % 5 == 0 && std::isfinite(x[i])) h ^= 1;
    out.push_back(h);
  }
  const Report r = CheckBf16("bf16", x, out);
  ASSERT_GT(r.mismatches, 0u);
  EXPECT_FALSE(r.diagnosis.MatchesSome()) << ReportText(r);
  EXPECT_EQ(r.diagnosis.summary.rfind("matches no known convention", 0), 0u) << r.diagnosis.summary;
  EXPECT_NE(ReportText(r).find("first mismatches:"), std::string::npos);
  EXPECT_NE(ReportJson(r).find("\"matches_some\": false"), std::string::npos);
}

// ---- MX recipes -----------------------------------------------------------------------

constexpr int kMxBlock = 32;
constexpr int kE4m3Emax = 8;  // 448 = 1.75 * 2^8

// Blocks of every magnitude, and blocks whose amax is just below a power of
// two, 2^k (1 - 2^-24), where a float log2 rounds up.
std::vector<float> MxInputs() {
  std::mt19937 rng(11);
  std::uniform_real_distribution<float> unit(-1.0f, 1.0f);
  std::vector<float> x;
  std::uniform_real_distribution<float> significand(1.0f, 2.0f);
  for (int b = 0; b < 48; ++b) {
    // amax anywhere in its binade, so that the scale rules (floor, ceil,
    // even, RCEIL) choose differently.
    const float amax = std::ldexp(significand(rng), b - 24);
    for (int i = 0; i < kMxBlock; ++i) x.push_back(i == b % kMxBlock ? amax : unit(rng) * amax);
  }
  for (int k : {3, 4, 5, 7, 10, 12, -3, -5, -9}) {
    const float amax = std::ldexp(1.0f - std::ldexp(1.0f, -24), k);
    for (int i = 0; i < kMxBlock; ++i) x.push_back(i == 7 ? -amax : unit(rng) * amax);
  }
  return x;
}

// An MXFP8 (E4M3) kernel: the scale exponent from `exponent_of(amax)`, the
// elements x / 2^e cast as NVIDIA's satfinite cast does (the OCP element
// rule for finite inputs).
template <typename ExponentOf>
Report CheckMxKernel(const std::vector<float>& x, ExponentOf exponent_of) {
  std::vector<std::uint8_t> codes(x.size());
  std::vector<std::uint8_t> scales(x.size() / kMxBlock);
  for (std::size_t b = 0; b < scales.size(); ++b) {
    float amax = 0;
    for (int i = 0; i < kMxBlock; ++i) amax = std::fmax(amax, std::fabs(x[b * kMxBlock + i]));
    int e = exponent_of(amax);
    if (e < -127) e = -127;
    scales[b] = static_cast<std::uint8_t>(e + 127);
    for (int i = 0; i < kMxBlock; ++i) codes[b * kMxBlock + i] = E4m3ByTable(std::ldexp(x[b * kMxBlock + i], -e));
  }
  Target t;
  std::string error;
  EXPECT_TRUE(ParseTarget("mxfp8_e4m3:ocp", {}, &t, &error)) << error;
  RecipeOutputs out;
  out.codes = {codes.data(), codes.size(), 1};
  out.scale_codes = scales.data();
  out.scale_code_count = scales.size();
  return CheckRecipeOutputs(t, {FormatId::kFp32, x.data(), x.size()}, 1, static_cast<long>(x.size()), out);
}

int ExponentField(float amax) { return static_cast<int>((F32Bits(amax) >> 23) & 0xFF) - 127; }

TEST(Diagnosis, CorrectMxKernelMatches) {
  const Report r = CheckMxKernel(MxInputs(), [](float amax) { return ExponentField(amax) - kE4m3Emax; });
  EXPECT_TRUE(r.Passed()) << ReportText(r);
}

// Kind 6, another scale rule: the exponent rounded up when amax is not a
// power of two (torchao's CEIL).
TEST(Diagnosis, CeilingMxKernelMatchesScaleRuleCeil) {
  const Report r = CheckMxKernel(MxInputs(), [](float amax) {
    return ExponentField(amax) + ((F32Bits(amax) & 0x7FFFFF) != 0 ? 1 : 0) - kE4m3Emax;
  });
  ExpectDiagnosis(r, "scale rule mx-ceil");
  // The first mismatch names its block, amax and both scales.
  ASSERT_FALSE(r.first_mismatches.empty());
  ASSERT_TRUE(r.first_mismatches.front().block.has_value());
  EXPECT_FALSE(r.first_mismatches.front().block->actual_scale.empty());
}

// Kind 7, a float log2 for the exponent.
TEST(Diagnosis, Log2MxKernelMatchesFloatLog2) {
  const Report r = CheckMxKernel(MxInputs(), [](float amax) {
    return static_cast<int>(std::floor(std::log2(amax))) - kE4m3Emax;
  });
  ExpectDiagnosis(r, "scale exponent from a float log2");
}

// Kind 8, the element's emax not subtracted: the scale is amax's own power
// of two, so every element lands in [1, 2).
TEST(Diagnosis, NoEmaxMxKernelMatchesEmaxNotSubtracted) {
  const Report r = CheckMxKernel(MxInputs(), [](float amax) { return ExponentField(amax); });
  ExpectDiagnosis(r, "element emax not subtracted");
}

// ---- NVFP4 ----------------------------------------------------------------------------

// E2M1 values, typed from the OCP MX spec's FP4 table; RNE with ties to the
// even code, saturating at 6 (finite inputs only).
std::uint8_t E2m1ByTable(float y) {
  static constexpr float kValues[8] = {0, 0.5f, 1, 1.5f, 2, 3, 4, 6};
  const std::uint8_t sign = std::signbit(y) ? 8 : 0;
  const float a = std::fabs(y);
  if (a >= 6.0f) return sign | 7;
  int c = 0;
  while (c < 7 && kValues[c + 1] <= a) ++c;
  if (c < 7) {
    const float mid = (kValues[c] + kValues[c + 1]) / 2;
    if (a > mid || (a == mid && (c & 1) != 0)) ++c;
  }
  return static_cast<std::uint8_t>(sign | c);
}

// A TransformerEngine-style NVFP4 kernel (blocks of 16): S_enc = 2688 /
// tensor amax, the block scale amax * (S_enc * fp32(1/6)) cast to E4M3,
// elements x * 1 / (block scale * S_dec). `with_tensor_scale` false is the
// bug: block scales from amax / 6 alone (the tensor scale still stored).
Report CheckNvfp4Kernel(const std::vector<float>& x, bool with_tensor_scale) {
  float tensor_amax = 0;
  for (float v : x) tensor_amax = std::fmax(tensor_amax, std::fabs(v));
  const float s_enc = std::fmin(448.0f * 6.0f / tensor_amax, 3.40282347e38f);
  const float s_dec = static_cast<float>(1.0 / static_cast<double>(s_enc));
  const float block_enc = with_tensor_scale ? s_enc : 1.0f;
  const float block_dec = with_tensor_scale ? s_dec : 1.0f;
  std::vector<std::uint8_t> packed(x.size() / 2, 0);
  std::vector<std::uint8_t> scales(x.size() / 16);
  for (std::size_t b = 0; b < scales.size(); ++b) {
    float amax = 0;
    for (int i = 0; i < 16; ++i) amax = std::fmax(amax, std::fabs(x[b * 16 + i]));
    scales[b] = E4m3ByTable(amax * (block_enc * (1.0f / 6.0f)));
    const float factor = std::fmin(1.0f / (static_cast<float>(E4m3Magnitude(scales[b])) * block_dec), 3.40282347e38f);
    for (int i = 0; i < 16; ++i) {
      const std::size_t k = b * 16 + i;
      packed[k / 2] |= static_cast<std::uint8_t>(E2m1ByTable(x[k] * factor) << (k % 2 == 0 ? 0 : 4));
    }
  }
  Target t;
  std::string error;
  EXPECT_TRUE(ParseTarget("nvfp4:te", {}, &t, &error)) << error;
  RecipeOutputs out;
  out.codes = {packed.data(), x.size(), 1, recipe::Packing::kNibblesLowFirst};
  out.scale_codes = scales.data();
  out.scale_code_count = scales.size();
  out.tensor_scale = s_dec;
  return CheckRecipeOutputs(t, {FormatId::kFp32, x.data(), x.size()}, 1, static_cast<long>(x.size()), out);
}

std::vector<float> Nvfp4Inputs() {
  std::mt19937 rng(5);
  std::uniform_real_distribution<float> unit(-1.0f, 1.0f);
  std::uniform_real_distribution<float> significand(1.0f, 2.0f);
  std::vector<float> x;
  for (int b = 0; b < 16; ++b) {
    const float amax = std::ldexp(significand(rng), b % 9 - 4);
    for (int i = 0; i < 16; ++i) x.push_back(i == b ? -amax : unit(rng) * amax);
  }
  return x;
}

TEST(Diagnosis, CorrectNvfp4KernelMatches) {
  const Report r = CheckNvfp4Kernel(Nvfp4Inputs(), true);
  EXPECT_TRUE(r.Passed()) << ReportText(r);
}

// Kind 11, where the tensor scale is folded in: not into the block scales.
TEST(Diagnosis, Nvfp4KernelWithoutTensorScaleInBlocksIsNamed) {
  ExpectDiagnosis(CheckNvfp4Kernel(Nvfp4Inputs(), false), "tensor scale left out of the block scales");
}

// ---- scaled INT recipes ------------------------------------------------------------------

// Rows whose elements sit at (k + 1/2) * s: halfway cases where x / scale
// and x * (1 / scale) round to different integers.
std::vector<float> IntInputs(int rows, int cols) {
  std::mt19937 rng(7);
  std::uniform_real_distribution<float> scale(0.01f, 3.0f);
  std::uniform_int_distribution<int> k(-7, 6);
  std::vector<float> x;
  for (int r = 0; r < rows; ++r) {
    const float s = scale(rng);
    for (int c = 0; c < cols; ++c) x.push_back(c == 0 ? 7.0f * s : (static_cast<float>(k(rng)) + 0.5f) * s);
  }
  return x;
}

float NearbyInt(float y) { return std::nearbyint(y); }

struct IntKernelOutputs {
  std::vector<std::uint8_t> codes;
  std::vector<float> scales;
};

// A symmetric INT kernel, amax / qmax per row, the codes in [-qmax, qmax];
// `reciprocal` multiplies by 1 / scale, `pack` is 0 (a byte each), 1 (two
// per byte, element 0 low) or 2 (element 0 high).
IntKernelOutputs IntKernel(const std::vector<float>& x, int rows, int cols, int qmax, bool reciprocal, int pack,
                           float (*round_to_integer)(float) = NearbyInt) {
  IntKernelOutputs o;
  o.codes.assign(pack == 0 ? x.size() : (x.size() + 1) / 2, 0);
  for (int r = 0; r < rows; ++r) {
    float amax = 0;
    for (int c = 0; c < cols; ++c) amax = std::fmax(amax, std::fabs(x[r * cols + c]));
    float scale = amax / static_cast<float>(qmax);
    if (scale == 0.0f) scale = 1.0f;
    o.scales.push_back(scale);
    const float inv = 1.0f / scale;
    for (int c = 0; c < cols; ++c) {
      const std::size_t k = static_cast<std::size_t>(r * cols + c);
      float q = round_to_integer(reciprocal ? x[k] * inv : x[k] / scale);
      q = std::fmin(std::fmax(q, static_cast<float>(-qmax)), static_cast<float>(qmax));
      const auto code = static_cast<std::uint8_t>(static_cast<int>(q) & (pack == 0 ? 0xFF : 0xF));
      if (pack == 0) {
        o.codes[k] = code;
      } else {
        const bool high = (k % 2 == 0) == (pack == 2);
        o.codes[k / 2] |= static_cast<std::uint8_t>(high ? code << 4 : code);
      }
    }
  }
  return o;
}

Report CheckIntKernel(const char* target_name, const std::vector<float>& x, int rows, int cols,
                      const IntKernelOutputs& o, bool packed) {
  Target t;
  std::string error;
  EXPECT_TRUE(ParseTarget(target_name, {}, &t, &error)) << error;
  RecipeOutputs out;
  out.codes = {o.codes.data(), x.size(), 1, packed ? recipe::Packing::kNibblesLowFirst : recipe::Packing::kOnePerByte};
  out.scales = o.scales.data();
  out.scale_count = o.scales.size();
  return CheckRecipeOutputs(t, {FormatId::kFp32, x.data(), x.size()}, rows, cols, out);
}

// Kind 9, operation order: x * (1 / scale) where the recipe divides.
TEST(Diagnosis, ReciprocalIntKernelMatchesMultiplyByReciprocal) {
  constexpr int kRows = 64, kCols = 32;
  const std::vector<float> x = IntInputs(kRows, kCols);
  const Report r = CheckIntKernel("int4:common/row", x, kRows, kCols,
                                  IntKernel(x, kRows, kCols, 7, /*reciprocal=*/true, 1), true);
  ExpectDiagnosis(r, "multiply by the reciprocal of the scale");
}

// Kind 10, nibble order: element 0 in the high nibble.
TEST(Diagnosis, HighFirstInt4KernelMatchesPackingHighFirst) {
  constexpr int kRows = 8, kCols = 16;
  const std::vector<float> x = IntInputs(kRows, kCols);
  const Report r = CheckIntKernel("int4:common/row", x, kRows, kCols,
                                  IntKernel(x, kRows, kCols, 7, false, /*pack=*/2), true);
  ExpectDiagnosis(r, "packing nibbles high first");
}

// Kind 17, ties toward +Inf in a recipe: q = floor(x / s + 0.5f).
TEST(Diagnosis, FloorOfHalfUpInt8RowKernelMatchesElementRoundingRnu) {
  constexpr int kRows = 64, kCols = 32;
  // Rows of (k + 1/2) * 2^-j with amax 127 * 2^-j: the scale is 2^-j and
  // every x / scale is exactly a tie.
  std::mt19937 rng(3);
  std::uniform_int_distribution<int> k(-127, 126);
  std::vector<float> x;
  for (int row = 0; row < kRows; ++row) {
    const float s = std::ldexp(1.0f, row % 20 - 10);
    for (int c = 0; c < kCols; ++c) x.push_back(c == 0 ? 127.0f * s : (static_cast<float>(k(rng)) + 0.5f) * s);
  }
  const auto floor_of_half_up = [](float y) { return std::floor(y + 0.5f); };
  const Report r = CheckIntKernel("int8:common/row", x, kRows, kCols,
                                  IntKernel(x, kRows, kCols, 127, false, 0, floor_of_half_up), false);
  ExpectDiagnosis(r, "element rounding rnu (ties toward +Inf)");
}

TEST(Diagnosis, CorrectInt4KernelMatches) {
  constexpr int kRows = 8, kCols = 16;
  const std::vector<float> x = IntInputs(kRows, kCols);
  const Report r = CheckIntKernel("int4:common/row", x, kRows, kCols, IntKernel(x, kRows, kCols, 7, false, 1), true);
  EXPECT_TRUE(r.Passed()) << ReportText(r);
  EXPECT_EQ(r.checked, x.size() + kRows);  // codes and scales
}

// ---- the API's own checks -----------------------------------------------------------------

TEST(UserOutputs, TargetsParseWithTheOneGrammar) {
  Target t;
  std::string error;
  ASSERT_TRUE(ParseTarget("float8_e4m3fn", {}, &t, &error)) << error;
  EXPECT_EQ(t.kind, Target::Kind::kFormat);
  EXPECT_EQ(t.name, "e4m3");
  ASSERT_TRUE(ParseTarget("e4m3", {"nvidia", "", false, ""}, &t, &error)) << error;
  EXPECT_EQ(t.name, "e4m3:nvidia");
  ASSERT_TRUE(ParseTarget("e4m3", {"", "rtz", true, ""}, &t, &error)) << error;
  EXPECT_EQ(t.name, "e4m3 rtz+sat");
  EXPECT_EQ(t.options.overflow, Overflow::kSaturate);
  ASSERT_TRUE(ParseTarget("int4:ao-sym/g128", {}, &t, &error)) << error;
  EXPECT_EQ(t.kind, Target::Kind::kRecipe);
  EXPECT_EQ(t.layout.size, 128);
  ASSERT_TRUE(ParseTarget("nvfp4", {}, &t, &error)) << error;
  EXPECT_EQ(t.name, "nvfp4:te");
  EXPECT_FALSE(ParseTarget("e4m3:nvidia", {"ml_dtypes", "", false, ""}, &t, &error));
  EXPECT_NE(error.find("two profiles"), std::string::npos) << error;
  EXPECT_FALSE(ParseTarget("e4m3", {"", "stochastic", false, ""}, &t, &error));
  EXPECT_FALSE(ParseTarget("e4m3", {"", "", false, "g32"}, &t, &error));
  EXPECT_FALSE(ParseTarget("nvfp4:te", {"", "rtz", false, ""}, &t, &error));
  EXPECT_FALSE(ParseTarget("e4m4", {}, &t, &error));
  EXPECT_NE(error.find("did you mean"), std::string::npos) << error;
}

TEST(UserOutputs, BadBuffersAreErrorsNotComparisons) {
  const Target t = FormatTarget(FormatId::kE4m3);
  const float in[2] = {1.0f, 2.0f};
  const std::uint8_t codes[3] = {0x38, 0x40, 0};
  EXPECT_NE(CheckElementOutputs(t, {FormatId::kFp32, in, 2}, {codes, 3, 1}).error.find("2 inputs but 3"),
            std::string::npos);
  EXPECT_NE(CheckElementOutputs(t, {FormatId::kE4m3, in, 2}, {codes, 2, 1}).error.find("not one of"),
            std::string::npos);
  EXPECT_NE(CheckElementOutputs(t, {FormatId::kFp32, in, 2}, {codes, 2, 3}).error.find("bytes per code"),
            std::string::npos);
  EXPECT_NE(CheckElementOutputs(t, {FormatId::kFp32, nullptr, 2}, {codes, 2, 1}).error.find("no data"),
            std::string::npos);
  EXPECT_NE(CheckElementOutputs(t, {FormatId::kFp32, in, 2},
                                {codes, 2, 1, recipe::Packing::kNibblesLowFirst})
                .error.find("at most 4 bits"),
            std::string::npos);
  const Report ok = CheckElementOutputs(t, {FormatId::kFp32, in, 2}, {codes, 2, 1});
  EXPECT_TRUE(ok.Passed()) << ReportText(ok);
  // A recipe: shapes and buffers that do not fit.
  Target mx;
  std::string error;
  ASSERT_TRUE(ParseTarget("mxfp8", {}, &mx, &error)) << error;
  RecipeOutputs out;
  out.codes = {codes, 2, 1};
  EXPECT_NE(CheckRecipeOutputs(mx, {FormatId::kFp32, in, 2}, 1, 3, out).error.find("needs 3 inputs"),
            std::string::npos);
  out.scales = in;
  out.scale_count = 1;
  EXPECT_NE(CheckRecipeOutputs(mx, {FormatId::kFp32, in, 2}, 1, 2, out).error.find("scale bytes"),
            std::string::npos);
  EXPECT_NE(CheckRecipeOutputs(mx, {FormatId::kFp64, in, 1}, 1, 1, RecipeOutputs{}).error.find("fp32"),
            std::string::npos);
  EXPECT_NE(CheckRecipeOutputs(t, {FormatId::kFp32, in, 2}, 1, 2, out).error.find("not a recipe"),
            std::string::npos);
}

// Dequantization: a kernel multiplying NVFP4's two scales in the other order.
TEST(Diagnosis, DequantizeOrderIsNamed) {
  Target t;
  std::string error;
  ASSERT_TRUE(ParseTarget("nvfp4:te", {}, &t, &error)) << error;
  // One block of 16 codes, block scale 0x39 (UE4M3 1.125), and a subnormal
  // FP32 tensor scale with many mantissa bits, so that the two orders of the
  // two multiplications round differently.
  std::vector<std::uint8_t> codes(8);
  for (int i = 0; i < 8; ++i) codes[i] = static_cast<std::uint8_t>(((2 * i + 1) & 0xF) | (((2 * i + 2) & 0xF) << 4));
  const std::uint8_t block_scale = 0x39;
  const float tensor_scale = F32FromBits(0x00012345u);
  // E2M1 values, typed from the OCP MX spec's table.
  const float e2m1[8] = {0, 0.5f, 1, 1.5f, 2, 3, 4, 6};
  const float scale_value = 1.125f;
  std::vector<float> values;
  for (int k = 0; k < 16; ++k) {
    const int code = k % 2 == 0 ? codes[k / 2] & 0xF : codes[k / 2] >> 4;
    const float q = (code & 8 ? -1.0f : 1.0f) * e2m1[code & 7];
    values.push_back(q * (scale_value * tensor_scale));  // nvfp4:te is (q * s) * t
  }
  RecipeOutputs quantized;
  quantized.codes = {codes.data(), 16, 1, recipe::Packing::kNibblesLowFirst};
  quantized.scale_codes = &block_scale;
  quantized.scale_code_count = 1;
  quantized.tensor_scale = tensor_scale;
  const Report r = CheckRecipeDequantized(t, quantized, 1, 16, values.data());
  ExpectDiagnosis(r, "dequantize as q * (block scale * tensor scale)");
}

}  // namespace
}  // namespace lowbit::check
