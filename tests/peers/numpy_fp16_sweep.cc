// lowbit_numpy_fp16_sweep: compares NumPy's FP32 -> FP16 codes, read from
// stdin, with profile `numpy` of the model (profiles/numpy.h).
// tests/peers/test_numpy_profile.py writes them from x.astype(np.float16)
// one FP32 exponent group (sign, exponent: 2^23 inputs) at a time, so NumPy
// and the model run at once. Each record (little-endian):
//   uint32 top    the group's sign and exponent bits, (sign << 31) | (e << 23)
//   uint32 count  2^23: the whole group, then 2^23 uint16 codes in mantissa
//                 order; fewer: count uint32 mantissas, then count uint16 codes
// The model is asked once per rounding class, not per input
// (proptests/support/rounding_classes.h: the premise holds because off NaN
// the profile is RoundPack with round-to-nearest-even, and the exponent-255
// groups, where NumPy's NaN rule lives, are asked per input).
// Prints "checked N inputs in G groups (W whole), M mismatches" and the first
// mismatches; exits 0 only when the input was well formed and all match.
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <vector>

#include "lowbit/formats/format_list.h"
#include "lowbit/formats/profiles/profiles.h"
#include "rounding_classes.h"

namespace {

bool Read(void* out, std::size_t bytes) { return std::fread(out, 1, bytes, stdin) == bytes; }

}  // namespace

int main() {
  using namespace lowbit;
  constexpr std::uint32_t kGroup = testing::kFp32GroupSize;
  const auto model = [](std::uint32_t x) -> std::uint64_t {
    EncodeResult r;
    if (!ProfileEncode(ProfileId::kNumpy, kFp32, x, kFp16, RoundingMode::kNearestEven, &r)) return 0x10000;
    return r.code;
  };
  std::vector<std::uint8_t> expected(std::size_t{kGroup} * 2);
  std::vector<std::uint16_t> codes(kGroup);
  std::vector<std::uint32_t> mantissas(kGroup);
  std::uint64_t checked = 0, mismatches = 0, groups = 0, whole = 0;
  for (;;) {
    std::uint32_t header[2];
    const std::size_t got = std::fread(header, 1, sizeof header, stdin);
    if (got == 0 && std::feof(stdin)) break;
    const std::uint32_t top = header[0], count = header[1];
    if (got != sizeof header || (top & (kGroup - 1)) != 0 || count == 0 || count > kGroup) {
      std::printf("malformed record after %llu groups\n", static_cast<unsigned long long>(groups));
      return 1;
    }
    const bool all = count == kGroup;
    if (!all && !Read(mantissas.data(), std::size_t{count} * 4)) {
      std::printf("input ended in a record\n");
      return 1;
    }
    if (!Read(codes.data(), std::size_t{count} * 2)) {
      std::printf("input ended in a record\n");
      return 1;
    }
    testing::ExpectedGroupByClasses(kFp16, top >> 31, (top >> 23) & 0xFF, 2, expected.data(), model);
    for (std::uint32_t i = 0; i < count; ++i) {
      const std::uint32_t m = all ? i : mantissas[i];
      if (m >= kGroup) {
        std::printf("mantissa 0x%x out of range\n", m);
        return 1;
      }
      std::uint16_t want;
      std::memcpy(&want, &expected[std::size_t{m} * 2], 2);
      if (want == codes[i]) continue;
      if (++mismatches <= 10) {
        std::printf("fp32 0x%08x: numpy 0x%04x, profile numpy 0x%04x\n", top | m, codes[i], want);
      }
    }
    checked += count;
    ++groups;
    whole += all ? 1 : 0;
  }
  std::printf("checked %llu inputs in %llu groups (%llu whole), %llu mismatches\n",
              static_cast<unsigned long long>(checked), static_cast<unsigned long long>(groups),
              static_cast<unsigned long long>(whole), static_cast<unsigned long long>(mismatches));
  return mismatches == 0 && checked > 0 ? 0 : 1;
}
