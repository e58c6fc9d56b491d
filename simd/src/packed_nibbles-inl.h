// Four-bit codes held one per 32-bit lane, stored as packed nibble pairs
// (formats/block/packing.h PackNibbles, NibbleOrder::kLowFirst: element 0 in
// the low nibble) straight from the vectors that computed them, shared by the
// group quantizers (int_group_quantize-inl.h) and the NVFP4 block quantizer
// (block_quantize-inl.h), so that no codes cross memory one per byte.

#if defined(LOWBIT_SIMD_PACKED_NIBBLES_INL_H_) == defined(HWY_TARGET_TOGGLE)
#ifdef LOWBIT_SIMD_PACKED_NIBBLES_INL_H_
#undef LOWBIT_SIMD_PACKED_NIBBLES_INL_H_
#else
#define LOWBIT_SIMD_PACKED_NIBBLES_INL_H_
#endif

#include <cstddef>
#include <cstdint>

#include "convert-inl.h"
#include "hwy/highway.h"

HWY_BEFORE_NAMESPACE();
namespace lowbit::simd {
namespace HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

// packing.h PackNibbles(kLowFirst) of one vector of codes (each < 16) into
// Lanes / 2 bytes: in a 64-bit lane the pair is c0 | c1 << 32, and v | v >>
// 28 holds c0 | c1 << 4 in its low byte, which TruncateTo keeps.
HWY_INLINE void StorePackedPairs(D32 d, V codes, std::uint8_t* out) {
  const hn::Repartition<std::uint64_t, D32> d64;
  const hn::Rebind<std::uint8_t, decltype(d64)> d8;
  const auto pairs = hn::BitCast(d64, codes);
  hn::StoreU(hn::TruncateTo(d8, hn::Or(pairs, hn::ShiftRight<28>(pairs))), d8, out);
}

// packing.h PackNibbles(kLowFirst) of four vectors of codes, element order
// c0, c1, c2, c3, into 2 * Lanes bytes; each code lane is a 4-bit code in
// its low bits with anything above them (the mask is applied here).
HWY_INLINE void StorePackedFour(D32 d, V c0, V c1, V c2, V c3, V code_mask, std::uint8_t* out) {
#if HWY_TARGET == HWY_AVX3_DL
  (void)d;
  (void)code_mask;
  // VPERMT2B (AVX512-VBMI) gathers each lane's low byte, c0 and c1's into
  // the low 32 bytes, c2 and c3's into another vector's; the two halves
  // joined, a byte pair read as a 16-bit lane is b0 | b1 << 8 and its packed
  // byte (b0 & 0x0F) | (b1 << 4 & 0xF0) = select(0x0F, w, w >> 4) in the low
  // byte, which VPMOVWB keeps (the bits above the nibbles fall away there).
  alignas(64) static constexpr std::uint8_t kLowBytes[64] = {
      0,   4,   8,   12,  16,  20,  24,  28,  32,  36,  40,  44,  48,  52,  56,  60,
      64,  68,  72,  76,  80,  84,  88,  92,  96,  100, 104, 108, 112, 116, 120, 124,
      0,   4,   8,   12,  16,  20,  24,  28,  32,  36,  40,  44,  48,  52,  56,  60,
      64,  68,  72,  76,  80,  84,  88,  92,  96,  100, 104, 108, 112, 116, 120, 124};
  const __m512i index = _mm512_load_si512(kLowBytes);
  const __m512i low01 = _mm512_permutex2var_epi8(c0.raw, index, c1.raw);
  const __m512i low23 = _mm512_permutex2var_epi8(c2.raw, index, c3.raw);
  const __m512i bytes = _mm512_inserti64x4(low01, _mm512_castsi512_si256(low23), 1);
  // Ternary logic 0xE4: C ? A : B bit by bit, with A = w, B = w >> 4, C = 0x0F.
  const __m512i pairs = _mm512_ternarylogic_epi32(bytes, _mm512_srli_epi16(bytes, 4), _mm512_set1_epi16(0x000F), 0xE4);
  _mm256_storeu_si256(reinterpret_cast<__m256i*>(out), _mm512_cvtepi16_epi8(pairs));
#else
  const std::size_t half = hn::Lanes(d) / 2;
  StorePackedPairs(d, hn::And(c0, code_mask), out);
  StorePackedPairs(d, hn::And(c1, code_mask), out + half);
  StorePackedPairs(d, hn::And(c2, code_mask), out + 2 * half);
  StorePackedPairs(d, hn::And(c3, code_mask), out + 3 * half);
#endif
}

}  // namespace HWY_NAMESPACE
}  // namespace lowbit::simd
HWY_AFTER_NAMESPACE();

#endif  // LOWBIT_SIMD_PACKED_NIBBLES_INL_H_
