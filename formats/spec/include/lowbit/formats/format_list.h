// The single list of element formats. Every other list (typed tests, CLI
// names, registry rows and coverage, decode tables, profile tables, the
// ml_dtypes profile test, Python names) is derived from LOWBIT_FORMATS;
// proptests/backends/format_coverage_test.cc proves it for each format listed here.
// docs/adding-a-format.md is the checklist for adding one.
//
// Field values are the layouts of docs/formats-reference.md §1; sources:
// IEEE 754-2019 §3.6 (FP64/FP32/FP16), the BF16 definition in the PTX ISA
// §5.2.3, OCP 8-bit FP spec (E4M3/E5M2), OCP MX v1.0 §5.3.3 Table 5 (FP6/FP4)
// and §5.4.1 Table 7 (E8M0), PTX ISA §5.2.3 (UE4M3), ml_dtypes 0.6
// include/float8.h (FNUZ: bias 8 / 16; float8_e3m4: bias 3; float8_e4m3:
// bias 7, IEEE-style Inf/NaN). The literal value tables in proptests/ pin
// each row independently.
#pragma once

#include <cstdint>
#include <string_view>

#include "lowbit/formats/format_spec.h"

namespace lowbit {

// Canonical names never collide with another format's spelling: OCP's E4M3
// ("FN", no Inf, max 448) is `e4m3`, as CUDA, PTX and most papers call it;
// ml_dtypes' IEEE-style float8_e4m3 (Inf 0x78, max 240) is `e4m3ieee`. The
// ml_dtypes spelling of each is an alias (last column), so `float8_e4m3fn`
// names `e4m3` and `float8_e4m3` names `e4m3ieee`.
//                 name        kind                  bits sign exp man bias  subn  specials            ml_dtypes type
inline constexpr FormatSpec kFp64{"fp64", FormatKind::kFloat, 64, true, 11, 52, 1023, true, SpecialCodes::kIeee, nullptr};
inline constexpr FormatSpec kFp32{"fp32", FormatKind::kFloat, 32, true, 8, 23, 127, true, SpecialCodes::kIeee, nullptr};
inline constexpr FormatSpec kBf16{"bf16", FormatKind::kFloat, 16, true, 8, 7, 127, true, SpecialCodes::kIeee, "bfloat16"};
inline constexpr FormatSpec kFp16{"fp16", FormatKind::kFloat, 16, true, 5, 10, 15, true, SpecialCodes::kIeee, nullptr};
inline constexpr FormatSpec kE4m3{"e4m3", FormatKind::kFloat, 8, true, 4, 3, 7, true, SpecialCodes::kAllOnesIsNan, "float8_e4m3fn"};
inline constexpr FormatSpec kE4m3Fnuz{"e4m3fnuz", FormatKind::kFloat, 8, true, 4, 3, 8, true, SpecialCodes::kNegativeZeroIsNan, "float8_e4m3fnuz"};
inline constexpr FormatSpec kE5m2{"e5m2", FormatKind::kFloat, 8, true, 5, 2, 15, true, SpecialCodes::kIeee, "float8_e5m2"};
inline constexpr FormatSpec kE5m2Fnuz{"e5m2fnuz", FormatKind::kFloat, 8, true, 5, 2, 16, true, SpecialCodes::kNegativeZeroIsNan, "float8_e5m2fnuz"};
inline constexpr FormatSpec kE4m3Ieee{"e4m3ieee", FormatKind::kFloat, 8, true, 4, 3, 7, true, SpecialCodes::kIeee, "float8_e4m3"};
inline constexpr FormatSpec kE3m4{"e3m4", FormatKind::kFloat, 8, true, 3, 4, 3, true, SpecialCodes::kIeee, "float8_e3m4"};
inline constexpr FormatSpec kE3m2{"e3m2", FormatKind::kFloat, 6, true, 3, 2, 3, true, SpecialCodes::kNone, "float6_e3m2fn"};
inline constexpr FormatSpec kE2m3{"e2m3", FormatKind::kFloat, 6, true, 2, 3, 1, true, SpecialCodes::kNone, "float6_e2m3fn"};
inline constexpr FormatSpec kE2m1{"e2m1", FormatKind::kFloat, 4, true, 2, 1, 1, true, SpecialCodes::kNone, "float4_e2m1fn"};
inline constexpr FormatSpec kE8m0{"e8m0", FormatKind::kFloat, 8, false, 8, 0, 127, false, SpecialCodes::kAllOnesIsNan, "float8_e8m0fnu"};
inline constexpr FormatSpec kUe4m3{"ue4m3", FormatKind::kFloat, 7, false, 4, 3, 7, true, SpecialCodes::kAllOnesIsNan, nullptr};
inline constexpr FormatSpec kInt8{"int8", FormatKind::kInteger, 8, true, 0, 0, 0, true, SpecialCodes::kNone, nullptr};
inline constexpr FormatSpec kInt4{"int4", FormatKind::kInteger, 4, true, 0, 0, 0, true, SpecialCodes::kNone, "int4"};
inline constexpr FormatSpec kUint4{"uint4", FormatKind::kInteger, 4, false, 0, 0, 0, true, SpecialCodes::kNone, "uint4"};

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
  X(E4m3Ieee, kE4m3Ieee)  \
  X(E3m4, kE3m4)          \
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

// Looks a format up by its canonical name, its ml_dtypes type name, or one
// of the other spellings users type (numpy / PyTorch / CUDA names); false if
// unknown. Case-sensitive: the CLI lower-cases first.
constexpr bool FindFormat(std::string_view name, FormatId* out) {
  struct Alias {
    std::string_view name;
    FormatId id;
  };
  // Spellings that are neither a canonical name nor an ml_dtypes type name.
  // The CUDA 13.0 types __nv_fp8_e4m3, __nv_fp8_e5m2, __nv_fp8_e8m0,
  // __nv_fp6_e2m3, __nv_fp6_e3m2 and __nv_fp4_e2m1 (cuda_fp8.h, cuda_fp6.h,
  // cuda_fp4.h) are the OCP formats: CUDA's fp8_e4m3 is `e4m3` (no Inf, max
  // 448), not ml_dtypes' float8_e4m3 (`e4m3ieee`).
  constexpr Alias kAliases[] = {
      {"float64", FormatId::kFp64},  {"f64", FormatId::kFp64},      {"float32", FormatId::kFp32},
      {"f32", FormatId::kFp32},      {"float16", FormatId::kFp16},  {"f16", FormatId::kFp16},
      {"half", FormatId::kFp16},     {"e4m3fn", FormatId::kE4m3},   {"fp8_e4m3", FormatId::kE4m3},
      {"fp8_e5m2", FormatId::kE5m2}, {"fp6_e2m3", FormatId::kE2m3}, {"fp6_e3m2", FormatId::kE3m2},
      {"fp4_e2m1", FormatId::kE2m1}, {"fp4", FormatId::kE2m1},      {"fp8_e8m0", FormatId::kE8m0},
      {"e8m0fnu", FormatId::kE8m0},  {"ue8m0", FormatId::kE8m0},
  };
  for (FormatId id : kAllFormats) {
    const FormatSpec& spec = Spec(id);
    if (name == spec.name || (spec.ml_dtypes_name != nullptr && name == spec.ml_dtypes_name)) {
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
