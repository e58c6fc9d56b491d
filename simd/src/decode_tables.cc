#include "decode_tables.h"

#include <array>

#include "lowbit/formats/convert.h"

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

struct AllTables {
  // [format][to_bf16][nan_sign][nan_payload]
  Table tables[kFormatCount][2][kNanSigns][kNanPayloads];
  Narrow narrow[kFormatCount][2][kNanSigns][kNanPayloads];

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

}  // namespace lowbit::simd
