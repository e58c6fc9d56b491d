// Uses the installed headers (and the installed oracle library, when the
// package has it) and checks a few results pinned by docs/formats-reference.md §1/§4.
#include <cstdint>
#include <cstdio>

#include "lowbit/formats/convert.h"
#include "lowbit/formats/format_list.h"

#ifdef LOWBIT_CONSUMER_HAS_REFERENCE
#include "lowbit/reference/exact_value.h"
#include "lowbit/reference/oracle_encode.h"
#endif

namespace {

int failures = 0;

void Check(bool ok, const char* what) {
  if (!ok) {
    std::printf("FAIL: %s\n", what);
    ++failures;
  }
}

}  // namespace

int main() {
  static_assert(lowbit::EncodeF32(lowbit::kE4m3, 448.0f).code == 0x7E);
  Check(lowbit::EncodeF32(lowbit::kE4m3, 464.0f).code == 0x7E, "e4m3(464) == 0x7E");
  Check(lowbit::EncodeF32(lowbit::kE2m1, 5.0f).code == 0x6, "e2m1(5.0) == 0x6");
  Check(lowbit::DecodeToF32Bits(lowbit::kE8m0, 0) == 0x00400000u, "e8m0 0x00 -> 2^-127");
  lowbit::FormatId id{};
  Check(lowbit::FindFormat("float8_e5m2", &id) && id == lowbit::FormatId::kE5m2,
        "FindFormat(float8_e5m2)");
#ifdef LOWBIT_CONSUMER_HAS_REFERENCE
  // The oracle and the model agree on a tie (1.0625 = 1 + 2^-4 lies halfway
  // between the E4M3 neighbours 1 and 1.125: ties to even gives 1.0 = 0x38).
  const std::uint32_t tie = 0x3F880000u;
  const auto oracle =
      lowbit::reference::OracleEncode(lowbit::kE4m3, lowbit::reference::ExactValue(lowbit::kFp32, tie));
  Check(oracle.code == 0x38 && lowbit::EncodeF32Bits(lowbit::kE4m3, tie).code == 0x38,
        "oracle and model: e4m3(1.0625) == 0x38");
  std::printf("lowbit consumer: formats + reference OK\n");
#else
  std::printf("lowbit consumer: formats OK (package has no lowbit::reference)\n");
#endif
  return failures == 0 ? 0 : 1;
}
