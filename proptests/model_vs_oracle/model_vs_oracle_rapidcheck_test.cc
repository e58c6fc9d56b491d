// Model == oracle, code AND flags, for FP32 and FP64 inputs drawn by the
// boundary-biased generators (ties +-1 ulp, binade edges, overflow threshold,
// half the smallest subnormal, NaN payloads, +-0, +-Inf, subnormals, random
// bits) into every destination of at most 16 bits, under every rounding mode,
// overflow policy and policy bundle for each drawn input.
#include <cstdint>
#include <sstream>
#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <rapidcheck.h>

#include "boundary_generators.h"
#include "generators_at_level.h"
#include "lowbit/formats/convert.h"
#include "lowbit/reference/exact_value.h"
#include "lowbit/reference/oracle_encode.h"
#include "option_generators.h"

namespace lowbit {
namespace {

using reference::Exact;
using reference::ExactClass;
using reference::Location;

// Counts per property (smoke / ci / full); each draw checks ~60-90 option sets.
constexpr testing::LevelCounts kDraws = {100, 5000, 1000000};

// The first option set under which model and oracle differ, described; empty
// when they agree on all of them.
std::string FirstMismatch(const FormatSpec& src, std::uint64_t bits, const FormatSpec& dst,
                          std::uint32_t random_word, int random_count) {
  const Exact x = reference::ExactValue(src, bits);
  Location loc;
  if (x.value_class == ExactClass::kFinite) loc = reference::Locate(dst, x.magnitude);
  for (const testing::OptionSet& set : testing::OptionSetsFor(dst)) {
    EncodeOptions o = set.options;
    o.random_bits = random_word;
    o.random_bit_count = random_count;
    const EncodeResult model = Convert(src, bits, dst, o);
    const EncodeResult oracle = reference::Decide(dst, x, loc, o);
    if (model.code != oracle.code || model.flags != oracle.flags) {
      std::ostringstream m;
      m << src.name << " 0x" << std::hex << bits << " -> " << dst.name << " [" << set.bundle
        << " " << testing::Describe(o) << "]: model 0x" << model.code << " flags "
        << int(model.flags) << ", oracle 0x" << oracle.code << " flags " << int(oracle.flags);
      return m.str();
    }
  }
  return "";
}

void CompareEveryOption(const FormatSpec& src, std::uint64_t bits, const FormatSpec& dst,
                        std::uint32_t random_word, int random_count) {
  const std::string mismatch = FirstMismatch(src, bits, dst, random_word, random_count);
  if (!mismatch.empty()) RC_FAIL(mismatch);
}

const std::vector<FormatId> kDestinations = testing::OracleDestinations();
const std::vector<int> kRandomCounts = {0, 0, 0, 1, 3, 8, 13, 16, 32};

TEST(ModelVsOracleRapidCheck, Fp32BoundaryInputs) {
  testing::CheckAtLevel(kDraws, [] {
    const FormatSpec& dst = Spec(*rc::gen::elementOf(kDestinations));
    const std::uint32_t bits = *testing::BoundaryF32Bits(dst);
    const std::uint32_t word = *rc::gen::arbitrary<std::uint32_t>();
    const int count = *rc::gen::elementOf(kRandomCounts);
    CompareEveryOption(kFp32, bits, dst, word, count);
  });
}

TEST(ModelVsOracleRapidCheck, Fp64BoundaryInputs) {
  testing::CheckAtLevel(kDraws, [] {
    const FormatSpec& dst = Spec(*rc::gen::elementOf(kDestinations));
    const std::uint64_t bits = *testing::BoundaryF64Bits(dst);
    const std::uint32_t word = *rc::gen::arbitrary<std::uint32_t>();
    const int count = *rc::gen::elementOf(kRandomCounts);
    CompareEveryOption(kFp64, bits, dst, word, count);
  });
}

// Named docs/formats-reference.md §9 boundary vectors (FP32 bits) into every destination:
// fixed inputs that every run checks, whatever RapidCheck draws.
TEST(ModelVsOracleRapidCheck, FormatFactsBoundaryVectors) {
  const std::uint32_t vectors[] = {
      0x80000000, 0x00000001, 0x3A800000, 0x3A800001, 0x37000000, 0x37000001, 0x43E00000,
      0x43E7FFFF, 0x43E80000, 0x43E80001, 0x43F00000, 0x47600000, 0x476FFFFF, 0x47700000,
      0x477FE000, 0x477FEFFF, 0x477FF000, 0x7F7FFFFF, 0x7F800000, 0xFF800000, 0x7FC00000,
      0xFFC00000, 0x7F800001, 0xFF800001, 0x7FFFFFFF, 0x3E800000, 0x3F400000, 0x3FA00000,
      0x3FE00000, 0x40200000, 0x40600000, 0x40A00000, 0x40C00001, 0x00400000, 0x00400001,
      0x00C00000, 0x7F000000, 0x7F000001, 0x7F400000, 0x42FF0000, 0xC3008000, 0x40200000,
      0xC0200000, 0x40F00000, 0xC1080000};
  for (FormatId id : kDestinations) {
    for (std::uint32_t bits : vectors) {
      for (std::uint32_t word : {0u, 0xFFFFFFFFu, 0x80808080u}) {
        EXPECT_EQ(FirstMismatch(kFp32, bits, Spec(id), word, 0), "");
      }
    }
  }
}

}  // namespace
}  // namespace lowbit
