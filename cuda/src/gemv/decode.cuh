// Exact in-register decodes of packed weight codes and scales to FP32, for
// the GEMV (gemv.cu). Each one is tested equal to the model (formats/,
// DecodeToF32) on every code in cuda/tests/gemv_test.cu; the names are
// stable.
//
// Hopper has a PTX cvt for FP8 -> FP16 (cvt.rn.f16x2.e4m3x2, sm_89+), none
// for FP4 (cvt.rn.f16x2.e2m1x2 is sm_100a), so E2M1 and INT4 use bit tricks:
//   E2M1 s.ee.m: put ee.m in FP32 bits 24..22 and s in bit 31. Every code's
//     bit pattern is then its value times 2^-126, the subnormal codes (ee = 0)
//     included, because the FP32 subnormal step 2^-149 * 2^22 = 2^-127 is
//     E2M1's 0.5 * 2^-126 (docs/formats-reference.md §4.5); one multiply by
//     2^126 (exact, a power of two) gives the value.
//   INT4 q - z: the FP32 with bits 0x4B000000 | q is 2^23 + q exactly, and
//     (2^23 + q) - (2^23 + z) is the exact integer q - z (one FADD); a signed
//     code q = (u ^ 8) - 8 folds the 8 into the subtrahend.
#pragma once

#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <cstdint>

#include "lowbit/formats/convert.h"
#include "lowbit/formats/format_list.h"

namespace lowbit::cuda::gemv {

// Nibble i (bits 4i..4i+3) of `word` as E2M1, in FP32. i must be a
// compile-time constant in 0..7 for the shifts to fold.
__device__ __forceinline__ float E2m1NibbleToF32(std::uint32_t word, int i) {
  const std::uint32_t sign = (word << (28 - 4 * i)) & 0x80000000u;
  const std::uint32_t em = (i <= 5 ? (word << (22 - 4 * i)) : (word >> (4 * i - 22))) & 0x01C00000u;
  return __uint_as_float(sign | em) * 0x1p126f;
}

// The high byte of the FP16 value of E2M1 magnitude code c (0..7), from the
// model: every E2M1 value is an FP16 value whose low byte is 0 (two
// significant bits, exponents -1..2), so one byte per code is the whole
// value. Bytes c of the two words below, for PRMT's 8-entry byte lookup.
constexpr std::uint32_t E2m1HalfHighByte(std::uint32_t c) {
  constexpr FormatSpec kElement = kE2m1;
  constexpr FormatSpec kHalf = kFp16;
  return (static_cast<std::uint32_t>(EncodeF32(kHalf, DecodeToF32(kElement, c)).code) >> 8) & 0xFFu;
}
constexpr std::uint32_t E2m1HalfTableWord(int first) {
  return E2m1HalfHighByte(first) | E2m1HalfHighByte(first + 1) << 8 | E2m1HalfHighByte(first + 2) << 16 |
         E2m1HalfHighByte(first + 3) << 24;
}
constexpr bool E2m1HalvesHaveZeroLowByte() {
  constexpr FormatSpec kElement = kE2m1;
  constexpr FormatSpec kHalf = kFp16;
  for (std::uint32_t c = 0; c < 8; ++c) {
    if ((EncodeF32(kHalf, DecodeToF32(kElement, c)).code & 0xFFu) != 0 || E2m1HalfHighByte(c) >= 0x80u) return false;
  }
  return true;
}
static_assert(E2m1HalvesHaveZeroLowByte(), "each E2M1 magnitude is one FP16 high byte below 0x80");

__device__ __forceinline__ std::uint32_t Prmt(std::uint32_t a, std::uint32_t b, std::uint32_t sel) {
  std::uint32_t r;
  asm("prmt.b32 %0, %1, %2, %3;" : "=r"(r) : "r"(a), "r"(b), "r"(sel));
  return r;
}

// All 8 nibbles of `word` (nibble i = bits 4i..4i+3) as E2M1, in FP32, with
// about a third of E2m1NibbleToF32's instructions per element (no FP4 cvt
// before sm_100a): one PRMT looks up the FP16 high bytes of four magnitudes
// (E2m1HalfTableWord, selectors = the nibbles with the sign masked), a PRMT
// per pair places two of them as an FP16x2 (bytes 1 and 3, zero bytes by
// PRMT's sign-replicate of a byte below 0x80), one LOP3 per pair ORs in the
// signs (nibble bit 3 -> FP16 bit 15 / 31), and cvt.f32.f16 widens each half
// (exact). -0 (code 8) gives -0.
__device__ __forceinline__ void E2m1x8ToF32(std::uint32_t word, float (&v)[8]) {
  constexpr std::uint32_t kT0 = E2m1HalfTableWord(0), kT1 = E2m1HalfTableWord(4);
  const std::uint32_t mag_lo = Prmt(kT0, kT1, word & 0x7777u);          // bytes: |nibble 0..3|
  const std::uint32_t mag_hi = Prmt(kT0, kT1, (word >> 16) & 0x7777u);  // bytes: |nibble 4..7|
  const std::uint32_t signs = word & 0x88888888u;
  // Pair (i, i + 4): result bytes [0, mag i, 0, mag i + 4]; its signs are
  // nibble bits 4i + 3 and 4i + 19, shifted to 15 and 31.
  std::uint32_t h[4];
  h[0] = Prmt(mag_lo, mag_hi, 0x4808u) | ((signs << 12) & 0x80008000u);
  h[1] = Prmt(mag_lo, mag_hi, 0x5919u) | ((signs << 8) & 0x80008000u);
  h[2] = Prmt(mag_lo, mag_hi, 0x6A2Au) | ((signs << 4) & 0x80008000u);
  h[3] = Prmt(mag_lo, mag_hi, 0x7B3Bu) | (signs & 0x80008000u);
#pragma unroll
  for (int i = 0; i < 4; ++i) {
    const __half2 p = *reinterpret_cast<const __half2*>(&h[i]);
    v[i] = __low2float(p);
    v[i + 4] = __high2float(p);
  }
}

// Two E4M3 bytes (low byte first) to two FP32 through cvt.rn.f16x2.e4m3x2
// (exact: every E4M3 value is an FP16 value; 0x7F / 0xFF give a NaN).
__device__ __forceinline__ float2 E4m3x2ToF32x2(std::uint32_t two_bytes) {
  std::uint32_t h2;
  const unsigned short in = static_cast<unsigned short>(two_bytes & 0xFFFFu);
  asm("cvt.rn.f16x2.e4m3x2 %0, %1;" : "=r"(h2) : "h"(in));
  __half2 h = *reinterpret_cast<__half2*>(&h2);
  return __half22float2(h);
}
__device__ __forceinline__ float E4m3ToF32(std::uint32_t byte) { return E4m3x2ToF32x2(byte & 0xFFu).x; }

// UE4M3 (NVFP4 block scale): 7 bits, the byte's MSB ignored as the model's
// Unpack masks it (docs/formats-reference.md §4.8), 0x7F NaN.
__device__ __forceinline__ float Ue4m3ToF32(std::uint32_t byte) { return E4m3ToF32(byte & 0x7Fu); }

// E8M0 (MX block scale): 2^(b - 127); b = 0 is 2^-127, the FP32 subnormal
// 0x00400000; 0xFF NaN (docs/formats-reference.md §3.1).
__device__ __forceinline__ float E8m0ToF32(std::uint32_t byte) {
  const std::uint32_t b = byte & 0xFFu;
  const std::uint32_t bits = b == 0 ? 0x00400000u : (b == 0xFFu ? 0x7FFFFFFFu : b << 23);
  return __uint_as_float(bits);
}

__device__ __forceinline__ float Bf16BitsToF32(std::uint32_t bits16) { return __uint_as_float(bits16 << 16); }
__device__ __forceinline__ float Fp16BitsToF32(std::uint32_t bits16) {
  return __half2float(__ushort_as_half(static_cast<unsigned short>(bits16 & 0xFFFFu)));
}

// 2^23 + z as FP32 (exact for |z| < 2^23): the subtrahend of Int4MinusZero.
// A signed code's bias 8 is added here.
__device__ __forceinline__ float Int4ZeroMagic(int zero, bool signed_codes) {
  return 8388608.0f + static_cast<float>(zero + (signed_codes ? 8 : 0));
}
// Nibble i of `word` minus the zero point, exact. For signed codes the word
// must already be XORed with 0x88888888 (Int4SignFlip).
__device__ __forceinline__ float Int4NibbleMinusZero(std::uint32_t word, int i, float zero_magic) {
  return __uint_as_float(0x4B000000u | ((word >> (4 * i)) & 0xFu)) - zero_magic;
}
__device__ __forceinline__ std::uint32_t Int4SignFlip(std::uint32_t word, bool signed_codes) {
  return signed_codes ? word ^ 0x88888888u : word;
}

}  // namespace lowbit::cuda::gemv
