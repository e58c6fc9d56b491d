// The single list of element formats. Every other list (typed tests, CLI
// names, registry coverage, Python names) is derived from LOWBIT_FORMATS.
//
// Field values are the layouts of FORMAT-FACTS §1; sources: IEEE 754-2019
// §3.6 (FP64/FP32/FP16), the BF16 definition in the PTX ISA §5.2.3, OCP 8-bit
// FP spec (E4M3/E5M2), OCP MX v1.0 §5.3.3 Table 5 (FP6/FP4) and §5.4.1 Table 7
// (E8M0), PTX ISA §5.2.3 (UE4M3), ml_dtypes float8.h (FNUZ: bias 8 / 16).
// The literal value tables in proptests/ pin each row independently.
#pragma once

#include <cstdint>
#include <string_view>

#include "lowbit/formats/format_spec.h"

namespace lowbit {

//                 name        kind                  bits sign exp man bias  subn  specials
inline constexpr FormatSpec kFp64{"fp64", FormatKind::kFloat, 64, true, 11, 52, 1023, true, SpecialCodes::kIeee};
inline constexpr FormatSpec kFp32{"fp32", FormatKind::kFloat, 32, true, 8, 23, 127, true, SpecialCodes::kIeee};
inline constexpr FormatSpec kBf16{"bf16", FormatKind::kFloat, 16, true, 8, 7, 127, true, SpecialCodes::kIeee};
inline constexpr FormatSpec kFp16{"fp16", FormatKind::kFloat, 16, true, 5, 10, 15, true, SpecialCodes::kIeee};
inline constexpr FormatSpec kE4m3{"e4m3", FormatKind::kFloat, 8, true, 4, 3, 7, true, SpecialCodes::kAllOnesIsNan};
inline constexpr FormatSpec kE4m3Fnuz{"e4m3fnuz", FormatKind::kFloat, 8, true, 4, 3, 8, true, SpecialCodes::kNegativeZeroIsNan};
inline constexpr FormatSpec kE5m2{"e5m2", FormatKind::kFloat, 8, true, 5, 2, 15, true, SpecialCodes::kIeee};
inline constexpr FormatSpec kE5m2Fnuz{"e5m2fnuz", FormatKind::kFloat, 8, true, 5, 2, 16, true, SpecialCodes::kNegativeZeroIsNan};
inline constexpr FormatSpec kE3m2{"e3m2", FormatKind::kFloat, 6, true, 3, 2, 3, true, SpecialCodes::kNone};
inline constexpr FormatSpec kE2m3{"e2m3", FormatKind::kFloat, 6, true, 2, 3, 1, true, SpecialCodes::kNone};
inline constexpr FormatSpec kE2m1{"e2m1", FormatKind::kFloat, 4, true, 2, 1, 1, true, SpecialCodes::kNone};
inline constexpr FormatSpec kE8m0{"e8m0", FormatKind::kFloat, 8, false, 8, 0, 127, false, SpecialCodes::kAllOnesIsNan};
inline constexpr FormatSpec kUe4m3{"ue4m3", FormatKind::kFloat, 7, false, 4, 3, 7, true, SpecialCodes::kAllOnesIsNan};
inline constexpr FormatSpec kInt8{"int8", FormatKind::kInteger, 8, true, 0, 0, 0, true, SpecialCodes::kNone};
inline constexpr FormatSpec kInt4{"int4", FormatKind::kInteger, 4, true, 0, 0, 0, true, SpecialCodes::kNone};
inline constexpr FormatSpec kUint4{"uint4", FormatKind::kInteger, 4, false, 0, 0, 0, true, SpecialCodes::kNone};

// X(Id, spec) for every element format, widest first.
#define LOWBIT_FORMATS(X) \
  X(Fp64, kFp64)          \
  X(Fp32, kFp32)          \
  X(Bf16, kBf16)          \
  X(Fp16, kFp16)          \
  X(E4m3, kE4m3)          \
  X(E4m3Fnuz, kE4m3Fnuz)  \
  X(E5m2, kE5m2)          \
  X(E5m2Fnuz, kE5m2Fnuz)  \
  X(E3m2, kE3m2)          \
  X(E2m3, kE2m3)          \
  X(E2m1, kE2m1)          \
  X(E8m0, kE8m0)          \
  X(Ue4m3, kUe4m3)        \
  X(Int8, kInt8)          \
  X(Int4, kInt4)          \
  X(Uint4, kUint4)

enum class FormatId : std::uint8_t {
#define LOWBIT_ENUM_ENTRY(Id, spec) k##Id,
  LOWBIT_FORMATS(LOWBIT_ENUM_ENTRY)
#undef LOWBIT_ENUM_ENTRY
};

inline constexpr FormatId kAllFormats[] = {
#define LOWBIT_ID_ENTRY(Id, spec) FormatId::k##Id,
    LOWBIT_FORMATS(LOWBIT_ID_ENTRY)
#undef LOWBIT_ID_ENTRY
};
inline constexpr int kFormatCount = sizeof(kAllFormats) / sizeof(kAllFormats[0]);

// Tag types carry a spec through templates and gtest typed tests.
#define LOWBIT_TAG_ENTRY(Id, spec)                               \
  struct Id##Tag {                                               \
    static constexpr const FormatSpec& kSpec = spec;             \
    static constexpr FormatId kId = FormatId::k##Id;             \
  };
LOWBIT_FORMATS(LOWBIT_TAG_ENTRY)
#undef LOWBIT_TAG_ENTRY

// Host (and constant-expression) only: it returns a reference to a
// namespace-scope spec, which device code cannot name at run time, and nvcc
// compiles the device body of a __host__ __device__ function once the host
// uses it. Device code takes its spec as a compile-time copy instead.
constexpr const FormatSpec& Spec(FormatId id) {
  switch (id) {
#define LOWBIT_CASE_ENTRY(Id, spec) \
  case FormatId::k##Id:             \
    return spec;
    LOWBIT_FORMATS(LOWBIT_CASE_ENTRY)
#undef LOWBIT_CASE_ENTRY
  }
  return kFp32;  // unreachable for valid ids
}

// Looks a format up by its canonical name or a common alias; false if unknown.
// Aliases are the names the profiled libraries use (ml_dtypes / PyTorch).
constexpr bool FindFormat(std::string_view name, FormatId* out) {
  struct Alias {
    std::string_view name;
    FormatId id;
  };
  constexpr Alias kAliases[] = {
      {"float64", FormatId::kFp64},       {"f64", FormatId::kFp64},
      {"float32", FormatId::kFp32},       {"f32", FormatId::kFp32},
      {"bfloat16", FormatId::kBf16},      {"float16", FormatId::kFp16},
      {"f16", FormatId::kFp16},           {"half", FormatId::kFp16},
      {"e4m3fn", FormatId::kE4m3},        {"float8_e4m3fn", FormatId::kE4m3},
      {"float8_e4m3fnuz", FormatId::kE4m3Fnuz},
      {"float8_e5m2", FormatId::kE5m2},   {"float8_e5m2fnuz", FormatId::kE5m2Fnuz},
      {"float6_e3m2fn", FormatId::kE3m2}, {"float6_e2m3fn", FormatId::kE2m3},
      {"float4_e2m1fn", FormatId::kE2m1}, {"fp4", FormatId::kE2m1},
      {"ue8m0", FormatId::kE8m0},         {"float8_e8m0fnu", FormatId::kE8m0},
  };
  for (FormatId id : kAllFormats) {
    if (name == Spec(id).name) {
      *out = id;
      return true;
    }
  }
  for (const Alias& alias : kAliases) {
    if (name == alias.name) {
      *out = alias.id;
      return true;
    }
  }
  return false;
}

}  // namespace lowbit
