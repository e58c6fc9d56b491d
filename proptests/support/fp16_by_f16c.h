// FP32 -> FP16, round to nearest even, by the x86 F16C instruction
// VCVTPS2PH (Intel SDM vol. 2, "VCVTPS2PH"; imm8 = 0: round to nearest
// even, MXCSR ignored). Tests use it as a witness independent of lowbit's
// model: the CPU converts, not code in this repository. GCC 12 has
// _Float16 on x86 but Debian's clang 14 (the sanitizer build) does not;
// the instruction works under both. A CPU without F16C (none since 2012)
// fails the caller's check loudly instead of skipping it.
#pragma once

#include <cpuid.h>
#include <immintrin.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>

namespace lowbit::testing {

__attribute__((target("f16c"))) inline std::uint16_t Fp16ByF16cInstruction(float v) {
  const __m128i packed = _mm_cvtps_ph(_mm_set_ss(v), 0);
  return static_cast<std::uint16_t>(_mm_extract_epi16(packed, 0));
}

// FP32 -> FP16 round to nearest even by the CPU; aborts with one line when
// the CPU lacks F16C (a witness that cannot run must not pass).
inline std::uint16_t Fp16ByCpu(float v) {
  // CPUID leaf 1, ECX bit 29 (Intel SDM vol. 2, "CPUID"); clang 14's
  // __builtin_cpu_supports does not know "f16c".
  static const bool has_f16c = [] {
    unsigned eax = 0, ebx = 0, ecx = 0, edx = 0;
    return __get_cpuid(1, &eax, &ebx, &ecx, &edx) != 0 && (ecx & bit_F16C) != 0;
  }();
  if (!has_f16c) {
    std::fprintf(stderr, "fp16_by_f16c.h: this CPU has no F16C; the FP16 witness cannot run\n");
    std::abort();
  }
  return Fp16ByF16cInstruction(v);
}

}  // namespace lowbit::testing
