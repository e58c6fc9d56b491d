#include "decode_tables.h"

#include <array>

#include "lowbit/formats/convert.h"

namespace lowbit::simd {
namespace {

constexpr int kNanSigns = 3;     // NanSign values
constexpr int kNanPayloads = 4;  // NanPayload values
using Table = std::array<std::int32_t, kDecodeTableSize>;

struct AllTables {
  // [format][to_bf16][nan_sign][nan_payload]
  Table tables[kFormatCount][2][kNanSigns][kNanPayloads];

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
          }
        }
      }
    }
  }
};

}  // namespace

const std::int32_t* DecodeTable(FormatId format, bool to_bf16, const DecodeOptions& options) {
  static const AllTables* const kTables = new AllTables();  // never destroyed
  return kTables->tables[static_cast<int>(format)][to_bf16 ? 1 : 0]
                        [static_cast<int>(options.nan_sign)]
                        [static_cast<int>(options.nan_payload)].data();
}

}  // namespace lowbit::simd
