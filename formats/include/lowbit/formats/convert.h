// Entry points: encode a value of any input type into any format, decode any
// code exactly to FP32 / FP64. All of them are Unpack + RoundPack.
#pragma once

#include <cstdint>

#include "lowbit/formats/config.h"
#include "lowbit/formats/format_list.h"
#include "lowbit/formats/policy.h"
#include "lowbit/formats/round_pack.h"
#include "lowbit/formats/unpacked.h"

namespace lowbit {

template <typename To, typename From>
LOWBIT_HD_CONSTEXPR To BitCast(const From& from) {
  static_assert(sizeof(To) == sizeof(From));
  return __builtin_bit_cast(To, from);
}

// Device code may not refer to a namespace-scope constexpr object such as
// kFp32 at run time (CUDA C++ Programming Guide, "constexpr variables"); a
// local constexpr copy is a compile-time value that nvcc accepts in
// __host__ __device__ code. The wrappers below use such copies.

// Converts the code `src_code` of format `src` to format `dst`.
LOWBIT_HD_CONSTEXPR EncodeResult Convert(const FormatSpec& src, std::uint64_t src_code,
                                         const FormatSpec& dst,
                                         const EncodeOptions& options = {}) {
  return RoundPack(dst, Unpack(src, src_code), options);
}

LOWBIT_HD_CONSTEXPR EncodeResult EncodeF32(const FormatSpec& dst, float x,
                                           const EncodeOptions& options = {}) {
  constexpr FormatSpec kSrc = kFp32;
  return Convert(kSrc, BitCast<std::uint32_t>(x), dst, options);
}
LOWBIT_HD_CONSTEXPR EncodeResult EncodeF32Bits(const FormatSpec& dst, std::uint32_t bits,
                                               const EncodeOptions& options = {}) {
  constexpr FormatSpec kSrc = kFp32;
  return Convert(kSrc, bits, dst, options);
}
LOWBIT_HD_CONSTEXPR EncodeResult EncodeF64(const FormatSpec& dst, double x,
                                           const EncodeOptions& options = {}) {
  constexpr FormatSpec kSrc = kFp64;
  return Convert(kSrc, BitCast<std::uint64_t>(x), dst, options);
}
LOWBIT_HD_CONSTEXPR EncodeResult EncodeF16Bits(const FormatSpec& dst, std::uint16_t bits,
                                               const EncodeOptions& options = {}) {
  constexpr FormatSpec kSrc = kFp16;
  return Convert(kSrc, bits, dst, options);
}
LOWBIT_HD_CONSTEXPR EncodeResult EncodeBf16Bits(const FormatSpec& dst, std::uint16_t bits,
                                                const EncodeOptions& options = {}) {
  constexpr FormatSpec kSrc = kBf16;
  return Convert(kSrc, bits, dst, options);
}

LOWBIT_HD_CONSTEXPR EncodeOptions ToDecodeEncodeOptions(const DecodeOptions& d) {
  EncodeOptions o;
  o.nan_sign = d.nan_sign;
  o.nan_payload = d.nan_payload;
  return o;
}

// Exact for every format except FP64 (whose values FP32 cannot all hold: those
// are rounded to nearest even, with IEEE overflow to Inf).
LOWBIT_HD_CONSTEXPR std::uint32_t DecodeToF32Bits(const FormatSpec& src, std::uint64_t code,
                                                  const DecodeOptions& options = {}) {
  constexpr FormatSpec kDst = kFp32;
  return static_cast<std::uint32_t>(Convert(src, code, kDst, ToDecodeEncodeOptions(options)).code);
}
LOWBIT_HD_CONSTEXPR float DecodeToF32(const FormatSpec& src, std::uint64_t code,
                                      const DecodeOptions& options = {}) {
  return BitCast<float>(DecodeToF32Bits(src, code, options));
}
// Exact for every format.
LOWBIT_HD_CONSTEXPR std::uint64_t DecodeToF64Bits(const FormatSpec& src, std::uint64_t code,
                                                  const DecodeOptions& options = {}) {
  constexpr FormatSpec kDst = kFp64;
  return Convert(src, code, kDst, ToDecodeEncodeOptions(options)).code;
}
LOWBIT_HD_CONSTEXPR double DecodeToF64(const FormatSpec& src, std::uint64_t code,
                                       const DecodeOptions& options = {}) {
  return BitCast<double>(DecodeToF64Bits(src, code, options));
}

}  // namespace lowbit
