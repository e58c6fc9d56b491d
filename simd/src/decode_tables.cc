#include "decode_tables.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <vector>

#include "lowbit/formats/convert.h"
#include "lowbit/formats/fp32_bits.h"

namespace lowbit::simd {
namespace {

constexpr int kNanSigns = 3;     // NanSign values
constexpr int kNanPayloads = 4;  // NanPayload values
using Table = std::array<std::int32_t, kDecodeTableSize>;

struct Narrow {
  alignas(64) std::array<std::uint16_t, kDecodeTableSize> low;
  alignas(64) std::array<std::uint16_t, kDecodeTableSize> high;
  alignas(64) std::array<std::uint8_t, 4 * kDecodeTableSize> planes;
  bool low_zero;
  bool high_zero;
};

// The arithmetic decode of `spec` into FP32 (decode_tables.h
// ArithmeticDecode) checked against the model's FP32 table `t` on every code:
// whether it is usable, in *a.
bool BuildArithmetic(const FormatSpec& spec, const Table& t, ArithmeticDecode* a) {
  if (!spec.IsFloat() || spec.total_bits > 8 || spec.total_bits <= 4 || spec.mantissa_bits > 23 ||
      spec.exponent_bits > 8) {
    return false;
  }
  a->code_mask = static_cast<std::uint32_t>(spec.CodeMask());
  a->sign_shift = spec.has_sign ? spec.total_bits - 1 : -1;
  a->magnitude_mask = spec.has_sign ? a->code_mask >> 1 : a->code_mask;
  a->mantissa_shift = kF32MantissaBits - spec.mantissa_bits;
  const int offset = kF32Bias - spec.bias;
  const int subnormal_exponent = 1 - spec.bias - spec.mantissa_bits;
  if (offset < 0 || offset > 254 || subnormal_exponent < 1 - kF32Bias) return false;
  a->exponent_offset = static_cast<std::uint32_t>(offset) << kF32MantissaBits;
  a->subnormal_limit = 1u << spec.mantissa_bits;
  a->subnormal_scale = std::ldexp(1.0f, subnormal_exponent);
  // What the kernel computes, in the same operations (the conversion of a
  // small integer and the product by a power of two are exact, so any IEEE
  // implementation gives these bits).
  auto arithmetic = [&](std::uint32_t code) {
    const std::uint32_t magnitude = code & a->magnitude_mask;
    std::uint32_t bits =
        magnitude < a->subnormal_limit
            ? F32Bits(static_cast<float>(static_cast<std::int32_t>(magnitude)) * a->subnormal_scale)
            : (magnitude << a->mantissa_shift) + a->exponent_offset;
    if (a->sign_shift >= 0) bits |= ((code >> a->sign_shift) & 1u) << 31;
    return bits;
  };
  std::vector<std::uint32_t> exceptions;
  for (std::uint32_t code = 0; code <= a->code_mask; ++code) {
    if (arithmetic(code) != static_cast<std::uint32_t>(t[code])) exceptions.push_back(code);
  }
  // The exception of smallest magnitude may be the odd code; the rest must
  // lie in the top 16 magnitudes.
  a->odd_code = 0x100;
  a->odd_value = 0;
  auto lowest = [&](const std::vector<std::uint32_t>& codes) {
    std::uint32_t m = a->magnitude_mask + 1;
    for (std::uint32_t c : codes) m = std::min(m, c & a->magnitude_mask);
    return m;
  };
  a->top_first = lowest(exceptions);
  if (a->magnitude_mask + 1 - a->top_first > 16 && !exceptions.empty()) {
    std::uint32_t odd = exceptions[0];
    for (std::uint32_t c : exceptions) {
      if ((c & a->magnitude_mask) < (odd & a->magnitude_mask)) odd = c;
    }
    std::vector<std::uint32_t> rest;
    for (std::uint32_t c : exceptions) {
      if (c != odd) rest.push_back(c);
    }
    a->odd_code = odd;
    a->odd_value = t[odd];
    a->top_first = lowest(rest);
  }
  if (a->top_first < 1 || a->magnitude_mask + 1 - a->top_first > 16) return false;
  for (int k = 0; k < 32; ++k) a->top[k] = 0;
  for (std::uint32_t m = a->top_first; m <= a->magnitude_mask; ++m) {
    a->top[m - a->top_first] = t[m];
    if (a->sign_shift >= 0) a->top[16 + m - a->top_first] = t[(1u << a->sign_shift) | m];
  }
  return true;
}

struct AllTables {
  // [format][to_bf16][nan_sign][nan_payload]
  Table tables[kFormatCount][2][kNanSigns][kNanPayloads];
  Narrow narrow[kFormatCount][2][kNanSigns][kNanPayloads];
  // [format][nan_sign][nan_payload]: FP32 output only.
  ArithmeticDecode arithmetic[kFormatCount][kNanSigns][kNanPayloads];
  bool arithmetic_usable[kFormatCount][kNanSigns][kNanPayloads] = {};

  AllTables() {
    for (FormatId id : kAllFormats) {
      const FormatSpec& spec = Spec(id);
      if (spec.total_bits > 8) continue;
      for (int bf16 = 0; bf16 < 2; ++bf16) {
        for (int s = 0; s < kNanSigns; ++s) {
          for (int pl = 0; pl < kNanPayloads; ++pl) {
            DecodeOptions options;
            options.nan_sign = static_cast<NanSign>(s);
            options.nan_payload = static_cast<NanPayload>(pl);
            const EncodeOptions as_encode = ToDecodeEncodeOptions(options);
            Table& t = tables[static_cast<int>(id)][bf16][s][pl];
            for (int code = 0; code < kDecodeTableSize; ++code) {
              const std::uint64_t masked = static_cast<std::uint64_t>(code) & spec.CodeMask();
              t[code] = static_cast<std::int32_t>(
                  Convert(spec, masked, bf16 ? kBf16 : kFp32, as_encode).code);
            }
            if (!bf16) {
              arithmetic_usable[static_cast<int>(id)][s][pl] =
                  BuildArithmetic(spec, t, &arithmetic[static_cast<int>(id)][s][pl]);
            }
            Narrow& n = narrow[static_cast<int>(id)][bf16][s][pl];
            n.low_zero = true;
            n.high_zero = true;
            for (int code = 0; code < kDecodeTableSize; ++code) {
              const auto entry = static_cast<std::uint32_t>(t[code]);
              n.low[code] = static_cast<std::uint16_t>(entry);
              n.high[code] = static_cast<std::uint16_t>(entry >> 16);
              n.low_zero = n.low_zero && n.low[code] == 0;
              n.high_zero = n.high_zero && n.high[code] == 0;
              const std::uint16_t halves[2] = {n.low[code], n.high[code]};
              for (int h = 0; h < 2; ++h) {
                n.planes[(2 * h) * kDecodeTableSize + code] = static_cast<std::uint8_t>(halves[h]);
                n.planes[(2 * h + 1) * kDecodeTableSize + code] =
                    static_cast<std::uint8_t>(halves[h] >> 8);
              }
            }
          }
        }
      }
    }
  }
};

const AllTables& Tables() {
  static const AllTables* const kTables = new AllTables();  // never destroyed
  return *kTables;
}

}  // namespace

const std::int32_t* DecodeTable(FormatId format, bool to_bf16, const DecodeOptions& options) {
  return Tables()
      .tables[static_cast<int>(format)][to_bf16 ? 1 : 0][static_cast<int>(options.nan_sign)]
             [static_cast<int>(options.nan_payload)]
      .data();
}

NarrowDecodeTable DecodeTableNarrow(FormatId format, bool to_bf16, const DecodeOptions& options) {
  const Narrow& n = Tables().narrow[static_cast<int>(format)][to_bf16 ? 1 : 0]
                                   [static_cast<int>(options.nan_sign)]
                                   [static_cast<int>(options.nan_payload)];
  return NarrowDecodeTable{n.low.data(), n.high.data(), n.planes.data(), n.low_zero, n.high_zero};
}

const ArithmeticDecode* DecodeArithmetic(FormatId format, const DecodeOptions& options) {
  const int f = static_cast<int>(format), s = static_cast<int>(options.nan_sign),
            p = static_cast<int>(options.nan_payload);
  return Tables().arithmetic_usable[f][s][p] ? &Tables().arithmetic[f][s][p] : nullptr;
}

}  // namespace lowbit::simd
