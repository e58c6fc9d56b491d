// Fuzzes the CLI's number reader, tools/value_parse.h ParseExactValue, with a
// differential check: every text it accepts that C's strtod/strtof also read
// whole must round to FP64 and FP32 (round_pack.h RoundPack, nearest even) as
// glibc's correctly rounded strtod/strtof do. A rejected text must throw
// CommandError with a message; anything else (a crash, a sanitizer report,
// another exception) is a finding.
#include <cerrno>
#include <clocale>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

#include "commands.h"
#include "lowbit/formats/format_list.h"
#include "lowbit/formats/round_pack.h"
#include "value_parse.h"

namespace {

// strtod reads "0x1p3", "1e5", "inf", "nan"; ParseExactValue reads those too
// but not strtod's "nan(...)" forms or leading newlines; only texts both read
// whole are compared.
bool ReadWhole(const std::string& text, double* d, float* f) {
  if (text.empty() || text.find('\0') != std::string::npos) return false;
  char* end = nullptr;
  errno = 0;
  *d = std::strtod(text.c_str(), &end);
  if (end != text.c_str() + text.size()) return false;
  *f = std::strtof(text.c_str(), &end);
  return end == text.c_str() + text.size();
}

void Trap(const char* what) {
  std::fprintf(stderr, "value_parse_fuzzer: %s\n", what);
  __builtin_trap();
}

}  // namespace

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  std::setlocale(LC_NUMERIC, "C");  // strtod's decimal point is '.'
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace lowbit;
  const std::string text(reinterpret_cast<const char*>(data), size);
  Unpacked exact;
  try {
    exact = tools::ParseExactValue(text);
  } catch (const tools::CommandError& e) {
    if (std::strlen(e.what()) == 0) Trap("CommandError without a message");
    return 0;
  }
  double d = 0;
  float f = 0;
  if (!ReadWhole(text, &d, &f)) return 0;
  const EncodeResult r64 = RoundPack(Spec(FormatId::kFp64), exact, EncodeOptions{});
  const EncodeResult r32 = RoundPack(Spec(FormatId::kFp32), exact, EncodeOptions{});
  std::uint64_t d_bits = 0;
  std::uint32_t f_bits = 0;
  std::memcpy(&d_bits, &d, sizeof(d));
  std::memcpy(&f_bits, &f, sizeof(f));
  if (d != d) {  // NaN: payloads differ by design; the class must agree
    if (exact.value_class != ValueClass::kNan) Trap("strtod read a NaN, ParseExactValue did not");
    return 0;
  }
  if (r64.code != d_bits) {
    std::fprintf(stderr, "'%s': FP64 0x%016llx, strtod 0x%016llx\n", text.c_str(),
                 static_cast<unsigned long long>(r64.code), static_cast<unsigned long long>(d_bits));
    Trap("FP64 rounding differs from strtod");
  }
  if (r32.code != f_bits) {
    std::fprintf(stderr, "'%s': FP32 0x%08x, strtof 0x%08x\n", text.c_str(),
                 static_cast<unsigned>(r32.code), f_bits);
    Trap("FP32 rounding differs from strtof");
  }
  return 0;
}
