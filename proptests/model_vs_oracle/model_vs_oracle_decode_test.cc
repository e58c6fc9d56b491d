// Every code of every format of at most 16 bits (and a class-complete sample
// of FP32 and FP64 codes) decodes in the model (DecodeToF64 / DecodeToF32) to
// exactly the oracle's value, and round-trips: encoding the decoded value
// gives the code back with no flags (non-NaN codes), a NaN for NaN codes.
#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "lowbit/formats/convert.h"
#include "lowbit/formats/format_list.h"
#include "lowbit/reference/exact_value.h"
#include "lowbit/reference/oracle_encode.h"

namespace lowbit {
namespace {

using reference::Exact;
using reference::ExactClass;

// The codes checked for a format: all of them up to 16 bits; for FP32/FP64
// every pattern of the top 16 bits with the low bits in a set that covers
// every exponent, every mantissa prefix, the smallest and largest payloads
// and subnormals (the docs/formats-reference.md §10.1 sample).
std::vector<std::uint64_t> CodesOf(const FormatSpec& spec) {
  std::vector<std::uint64_t> codes;
  if (spec.total_bits <= 16) {
    for (std::uint64_t c = 0; c < (std::uint64_t{1} << spec.total_bits); ++c) codes.push_back(c);
    return codes;
  }
  const int low_bits = spec.total_bits - 16;
  const std::uint64_t low_mask = (std::uint64_t{1} << low_bits) - 1;
  const std::uint64_t lows[] = {0, 1, low_mask >> 1, (low_mask >> 1) + 1, (low_mask >> 1) + 2,
                                low_mask};
  for (std::uint64_t high = 0; high < (1u << 16); ++high) {
    for (std::uint64_t low : lows) codes.push_back((high << low_bits) | low);
  }
  return codes;
}

bool SameExact(const Exact& a, const Exact& b) {
  if (a.value_class != b.value_class) return false;
  if (a.value_class == ExactClass::kNan) return true;
  return a.negative == b.negative && a.magnitude == b.magnitude;
}

std::string Show(const Exact& e) {
  switch (e.value_class) {
    case ExactClass::kNan: return "NaN";
    case ExactClass::kInf: return e.negative ? "-Inf" : "+Inf";
    case ExactClass::kZero: return e.negative ? "-0" : "+0";
    case ExactClass::kFinite: return e.Signed().str();
  }
  return "?";
}

class ModelVsOracleDecode : public ::testing::TestWithParam<FormatId> {};

TEST_P(ModelVsOracleDecode, ExactValueOfEveryCode) {
  const FormatSpec& spec = Spec(GetParam());
  const std::vector<std::uint64_t> codes = CodesOf(spec);
  int failures = 0;
  for (std::uint64_t code : codes) {
    if (failures > 20) break;
    const Exact expected = reference::ExactValue(spec, code);
    const Exact via_f64 = reference::ExactValue(kFp64, DecodeToF64Bits(spec, code));
    if (!SameExact(expected, via_f64)) {
      ++failures;
      ADD_FAILURE() << spec.name << " 0x" << std::hex << code << ": DecodeToF64 "
                    << Show(via_f64) << ", oracle " << Show(expected);
    }
    if (spec.total_bits > 32) continue;  // FP64 -> FP32 rounds by design
    const Exact via_f32 = reference::ExactValue(kFp32, DecodeToF32Bits(spec, code));
    if (!SameExact(expected, via_f32)) {
      ++failures;
      ADD_FAILURE() << spec.name << " 0x" << std::hex << code << ": DecodeToF32 "
                    << Show(via_f32) << ", oracle " << Show(expected);
    }
  }
  EXPECT_GE(codes.size(), std::size_t{16});
}

// The NaN, Inf and zero codes decode to exactly the FP64/FP32 bits the
// oracle derives from the DecodeOptions (NaN sign and payload policies).
TEST_P(ModelVsOracleDecode, SpecialCodesUnderEveryDecodeOption) {
  const FormatSpec& spec = Spec(GetParam());
  int specials = 0;
  int failures = 0;
  for (std::uint64_t code : CodesOf(spec)) {
    const Exact e = reference::ExactValue(spec, code);
    if (e.value_class == ExactClass::kFinite) continue;
    ++specials;
    for (NanSign sign : {NanSign::kKeep, NanSign::kPositive, NanSign::kNegative}) {
      for (NanPayload payload : {NanPayload::kAllOnes, NanPayload::kQuietOnly,
                                 NanPayload::kTruncate, NanPayload::kPreserve}) {
        DecodeOptions d;
        d.nan_sign = sign;
        d.nan_payload = payload;
        EncodeOptions o;
        o.nan_sign = sign;
        o.nan_payload = payload;
        const std::uint64_t model64 = DecodeToF64Bits(spec, code, d);
        const std::uint64_t oracle64 = reference::OracleEncode(kFp64, e, o).code;
        const std::uint64_t model32 = DecodeToF32Bits(spec, code, d);
        const std::uint64_t oracle32 = reference::OracleEncode(kFp32, e, o).code;
        if ((model64 != oracle64 || model32 != oracle32) && failures++ < 20) {
          ADD_FAILURE() << spec.name << " 0x" << std::hex << code << " sign "
                        << int(sign) << " payload " << int(payload) << ": model 0x" << model64
                        << " / 0x" << model32 << ", oracle 0x" << oracle64 << " / 0x" << oracle32;
        }
      }
    }
  }
  // Every format has at least a zero or a NaN code.
  EXPECT_GT(specials, 0);
}

TEST_P(ModelVsOracleDecode, ModelRoundTrips) {
  const FormatSpec& spec = Spec(GetParam());
  int failures = 0;
  for (std::uint64_t code : CodesOf(spec)) {
    const bool is_nan = reference::ExactValue(spec, code).value_class == ExactClass::kNan;
    const EncodeResult back = Convert(kFp64, DecodeToF64Bits(spec, code), spec);
    const bool ok = is_nan ? reference::ExactValue(spec, back.code).value_class == ExactClass::kNan
                           : (back.code == code && back.flags == kFlagNone);
    if (!ok && failures++ < 20) {
      ADD_FAILURE() << spec.name << " 0x" << std::hex << code << " -> FP64 -> 0x" << back.code
                    << " flags " << int(back.flags);
    }
  }
}

// The oracle encodes into formats of at most 16 bits only.
class OracleRoundTrip : public ::testing::TestWithParam<FormatId> {};

TEST_P(OracleRoundTrip, EveryCode) {
  const FormatSpec& spec = Spec(GetParam());
  int failures = 0;
  for (std::uint64_t code : CodesOf(spec)) {
    const Exact e = reference::ExactValue(spec, code);
    const EncodeResult back = reference::OracleEncode(spec, e);
    const bool ok = e.value_class == ExactClass::kNan
                        ? reference::ExactValue(spec, back.code).value_class == ExactClass::kNan
                        : (back.code == code && back.flags == kFlagNone);
    if (!ok && failures++ < 20) {
      ADD_FAILURE() << spec.name << " 0x" << std::hex << code << " -> 0x" << back.code
                    << " flags " << int(back.flags);
    }
  }
}

std::string FormatName(const ::testing::TestParamInfo<FormatId>& info) {
  return Spec(info.param).name;
}

std::vector<FormatId> NarrowFormats() {
  std::vector<FormatId> v;
  for (FormatId id : kAllFormats) {
    if (Spec(id).total_bits <= 16) v.push_back(id);
  }
  return v;
}

INSTANTIATE_TEST_SUITE_P(All, ModelVsOracleDecode, ::testing::ValuesIn(kAllFormats), FormatName);
INSTANTIATE_TEST_SUITE_P(All, OracleRoundTrip, ::testing::ValuesIn(NarrowFormats()), FormatName);

}  // namespace
}  // namespace lowbit
