// Every list derived from LOWBIT_FORMATS (format_list.h) covers every format
// of it. A format is added by editing format_list.h and its literal tables
// (docs/adding-a-format.md); this test fails if some list elsewhere still has
// to be written by hand: the names that parse, the tag types, the layout
// identification that every profile starts from, each profile's answer, the
// ml_dtypes profile's membership, the registry's scalar rows, the SIMD decode
// tables, and the oracle's value grid. The other derived lists are proven in
// the tests that use them: literal_tables_test (EveryFormatHasALiteralTable),
// oracle_literal_encode_test (EveryNarrowFormatHasRows), ml_dtypes_profile_test
// (every format with an ml_dtypes name, against ml_dtypes itself), and
// simd_convert_test / model_vs_oracle_*_test, which iterate kAllFormats.
#include <cstdint>
#include <cstring>
#include <map>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "lowbit/formats/convert.h"
#include "lowbit/formats/format_list.h"
#include "lowbit/formats/profiles/profiles.h"
#include "lowbit/reference/value_grid.h"
#include "lowbit/registry/registry.h"
#if LOWBIT_HAVE_SIMD
// The SIMD decode tables are internal to simd/; their header names only the
// model, so the test reads them directly rather than through a kernel.
#include "../../simd/src/decode_tables.h"
#endif

namespace lowbit {
namespace {

std::string NameOf(FormatId id) { return Spec(id).name; }

TEST(FormatList, IdsTagsAndSpecsAgree) {
  ASSERT_EQ(kFormatCount, static_cast<int>(std::size(kAllFormats)));
  for (int i = 0; i < kFormatCount; ++i) {
    EXPECT_EQ(static_cast<int>(kAllFormats[i]), i) << "kAllFormats is not in enum order";
  }
#define LOWBIT_CHECK_TAG(Id, spec)                                 \
  EXPECT_EQ(Id##Tag::kId, FormatId::k##Id) << #Id;                 \
  EXPECT_EQ(&Id##Tag::kSpec, &Spec(FormatId::k##Id)) << #Id;       \
  EXPECT_EQ(&spec, &Spec(FormatId::k##Id)) << #Id;
  LOWBIT_FORMATS(LOWBIT_CHECK_TAG)
#undef LOWBIT_CHECK_TAG
}

// The CLI (tools/parse.cc), the recipe grammar and later Python look formats
// up by these names; each must lead back to its own format and no other.
TEST(FormatNames, CanonicalAndMlDtypesNamesParseBackToTheirFormat) {
  std::map<std::string, FormatId> owner;  // each spelling belongs to one format
  const auto claim = [&owner](const char* name, FormatId id) {
    const auto [it, fresh] = owner.emplace(name, id);
    EXPECT_TRUE(fresh || it->second == id)
        << name << " names both " << NameOf(it->second) << " and " << NameOf(id);
    FormatId found{};
    ASSERT_TRUE(FindFormat(name, &found)) << name;
    EXPECT_EQ(found, id) << name << " parses to " << NameOf(found);
  };
  for (FormatId id : kAllFormats) {
    const FormatSpec& spec = Spec(id);
    ASSERT_NE(spec.name, nullptr);
    ASSERT_GT(std::strlen(spec.name), 0u);
    for (const char* c = spec.name; *c; ++c) {
      EXPECT_FALSE(*c >= 'A' && *c <= 'Z') << spec.name << ": the CLI lower-cases what it parses";
    }
    claim(spec.name, id);
    // ml_dtypes' int4 and uint4 are spelt like lowbit's own names.
    if (spec.ml_dtypes_name != nullptr) claim(spec.ml_dtypes_name, id);
  }
}

// The two E4M3s differ in every code from 0x78 up (OCP: 256..448 and NaN
// 0x7F; IEEE-style: Inf 0x78 and NaNs); their spellings must not cross.
// ml_dtypes: float8_e4m3fn is OCP's, float8_e4m3 the IEEE-style one; CUDA's
// fp8_e4m3 (__nv_fp8_e4m3) is OCP's.
TEST(FormatNames, TheTwoE4m3SpellingsDoNotCross) {
  const struct {
    const char* name;
    FormatId id;
  } kExpected[] = {
      {"e4m3", FormatId::kE4m3},           {"e4m3fn", FormatId::kE4m3},
      {"float8_e4m3fn", FormatId::kE4m3},  {"fp8_e4m3", FormatId::kE4m3},
      {"e4m3ieee", FormatId::kE4m3Ieee},   {"float8_e4m3", FormatId::kE4m3Ieee},
      {"e3m4", FormatId::kE3m4},           {"float8_e3m4", FormatId::kE3m4},
  };
  for (const auto& e : kExpected) {
    FormatId found{};
    ASSERT_TRUE(FindFormat(e.name, &found)) << e.name;
    EXPECT_EQ(found, e.id) << e.name << " parses to " << NameOf(found);
  }
  FormatId unused{};
  EXPECT_FALSE(FindFormat("float8_e4m3ieee", &unused));  // not a spelling anyone uses
  EXPECT_FALSE(FindFormat("E4M3", &unused));              // the CLI lower-cases first
}

// Every profile identifies a format by its layout (profiles/format_match.h),
// so no two listed formats may share one.
TEST(FormatLayouts, EveryFormatIsIdentifiedAsItself) {
  for (FormatId id : kAllFormats) {
    FormatId found{};
    ASSERT_TRUE(profile_detail::IdentifyFormat(Spec(id), &found)) << NameOf(id);
    EXPECT_EQ(found, id) << NameOf(id) << " has the layout of " << NameOf(found);
  }
}

// The profile tables answer for every format: a profile that has no such
// conversion says false (never a wrong default), and one that says it has
// options can convert with them.
TEST(ProfileTables, EveryProfileAnswersForEveryFormat) {
  constexpr RoundingMode kModes[] = {RoundingMode::kNearestEven, RoundingMode::kTowardZero};
  constexpr std::uint32_t kOnePointFive = 0x3FC00000;
  for (ProfileId profile : kAllProfiles) {
    for (FormatId id : kAllFormats) {
      if (id == FormatId::kFp64) continue;  // no profile encodes into FP64
      for (RoundingMode mode : kModes) {
        SCOPED_TRACE(::testing::Message() << ProfileName(profile) << " " << NameOf(id) << " mode "
                                          << static_cast<int>(mode));
        EncodeOptions options;
        const bool has = ProfileEncodeOptions(profile, Spec(id), mode, &options);
        EncodeResult result;
        const bool converts = ProfileEncode(profile, kFp32, kOnePointFive, Spec(id), mode, &result);
        if (id != FormatId::kFp32) EXPECT_EQ(has, converts);
        if (has && converts) {
          EXPECT_EQ(result.code, EncodeF32Bits(Spec(id), kOnePointFive, options).code);
        }
      }
      (void)ProfileDecodeOptions(profile, Spec(id));
    }
  }
}

// ml_dtypes' profile has exactly the formats whose row names an ml_dtypes
// type (plus FP32, where its decodes go), with astype's rounding: nearest
// even into floats, truncation into its integer types.
TEST(ProfileTables, MlDtypesHasEveryFormatWithAnMlDtypesName) {
  ProfileId ml_dtypes{};
  ASSERT_TRUE(FindProfile("ml_dtypes", &ml_dtypes));
  for (FormatId id : kAllFormats) {
    const FormatSpec& spec = Spec(id);
    const bool expected = spec.ml_dtypes_name != nullptr || id == FormatId::kFp32;
    const RoundingMode mode =
        spec.IsFloat() ? RoundingMode::kNearestEven : RoundingMode::kTowardZero;
    EncodeOptions options;
    EXPECT_EQ(ProfileEncodeOptions(ml_dtypes, spec, mode, &options), expected) << spec.name;
    std::uint32_t decoded = 0;
    EXPECT_EQ(ProfileDecodeToF32Bits(ml_dtypes, spec, 0, &decoded), expected) << spec.name;
  }
}

// Registry: every element format but FP64 has the four array conversions
// from/to FP32, BF16 and FP16, and decode-to-bf16 wherever BF16 holds every
// value; the scalar row of each exists and runs.
TEST(RegistryRows, EveryFormatHasAScalarRowForEveryOperationThatApplies) {
  registry::Registry rows;
  registry::RegisterScalarBackend(rows);
  for (FormatId id : kAllFormats) {
    for (registry::Operation op : registry::kAllOperations) {
      SCOPED_TRACE(::testing::Message() << registry::OperationName(op) << " " << NameOf(id));
      const bool applies = registry::OperationApplies(op, id);
      if (id == FormatId::kFp64) {
        EXPECT_FALSE(applies);
        continue;
      }
      if (op != registry::Operation::kDecodeToBf16) EXPECT_TRUE(applies);
      const registry::KernelEntry* entry = rows.Find(op, id, "scalar");
      ASSERT_EQ(entry != nullptr, applies);
      if (entry == nullptr) continue;
      // One element through the row: input and output buffers wide enough
      // for any operation (at most 8 bytes each).
      std::uint64_t in = 0, out = ~std::uint64_t{0};
      registry::ConvertArgs args;
      args.operation = op;
      args.format = id;
      args.input = &in;
      args.output = &out;
      args.count = 1;
      const registry::Status status = entry->run(args);
      EXPECT_TRUE(status.ok) << status.message;
    }
  }
}

#if LOWBIT_HAVE_SIMD
// Every format of at most 8 bits has a decode table, entry for entry the
// model's decode (to FP32 and, where BF16 holds it, to BF16).
TEST(SimdDecodeTables, EveryNarrowFormatHasATableEqualToTheModel) {
  int tables = 0;
  for (FormatId id : kAllFormats) {
    const FormatSpec& spec = Spec(id);
    if (spec.total_bits > 8) continue;
    ++tables;
    for (bool to_bf16 : {false, true}) {
      const std::int32_t* table = simd::DecodeTable(id, to_bf16, DecodeOptions{});
      ASSERT_NE(table, nullptr) << spec.name;
      const EncodeOptions decode = ToDecodeEncodeOptions(DecodeOptions{});
      for (std::uint64_t code = 0; code <= spec.CodeMask(); ++code) {
        const std::uint64_t want = Convert(spec, code, to_bf16 ? kBf16 : kFp32, decode).code;
        ASSERT_EQ(static_cast<std::uint32_t>(table[code]), want)
            << spec.name << " code " << code << (to_bf16 ? " to BF16" : " to FP32");
      }
    }
  }
  EXPECT_GT(tables, 0);
}
#endif

// The oracle works from FormatSpec data alone: its value grid of every
// float format of at most 16 bits ends at the model's largest finite value.
TEST(OracleGrid, EveryNarrowFloatFormatEndsAtTheModelsMax) {
  for (FormatId id : kAllFormats) {
    const FormatSpec& spec = Spec(id);
    if (!spec.IsFloat() || spec.total_bits > 16) continue;
    const reference::ValueGrid& grid = reference::GridFor(spec);
    ASSERT_FALSE(grid.points.empty()) << spec.name;
    EXPECT_EQ(grid.points.back().code, spec.MaxFiniteCode()) << spec.name;
  }
}

}  // namespace
}  // namespace lowbit
