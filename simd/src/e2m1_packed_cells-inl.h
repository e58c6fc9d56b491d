// E2M1 codes of four vectors of FP32 values straight to 32 packed bytes
// (formats/block/packing.h PackNibbles, NibbleOrder::kLowFirst) on
// AVX3_DL, by the cell table of the element's encode plan (encode_plan.h
// cell_code, convert-inl.h CellTable): the NVFP4 block quantizer's element
// step (block_quantize-inl.h QuantizeNvfp4WholeGroups), with fewer
// instructions a vector than GroupEncoder::FourCodes followed by
// packed_nibbles-inl.h StorePackedFour, and the same bytes:
//
//   - VRANGEPS with imm8 0b0011 (the larger magnitude, with src1's sign)
//     gives +-max(|y|, 2^-3) in one instruction: the clamp of CellMagnitude
//     with y's sign kept;
//   - an arithmetic shift by 21 leaves the cell index in the low word and
//     the sign, repeated, in the high word (0xFFFF or 0), which the cell
//     lookup keeps (VPERMI2W merge-masked to the low words: Intel SDM,
//     VPERMI2W, elements not selected by the mask keep the index operand);
//   - one byte gather (VPERMT2B) per two vectors takes each lane's code byte
//     and its sign byte at once, and one ternary OR puts every sign at bit 3
//     of its code byte (E2M1's sign_code);
//   - VPMADDUBSW forms c_even + 16 c_odd for each byte pair (at most 255:
//     no saturation) and VPMOVWB keeps the low byte.
//
// A quiet NaN operand of VRANGEPS gives the other operand (measured on this
// project's AVX-512 machine: VRANGEPS(qNaN, 2^-3) is 2^-3), so Four needs
// NaN-free lanes; its caller knows them from the block amaxes and factors.
// simd_block_test's NVFP4 properties compare the quantizer that uses it
// with the model bit for bit.

#if defined(LOWBIT_SIMD_E2M1_PACKED_CELLS_INL_H_) == defined(HWY_TARGET_TOGGLE)
#ifdef LOWBIT_SIMD_E2M1_PACKED_CELLS_INL_H_
#undef LOWBIT_SIMD_E2M1_PACKED_CELLS_INL_H_
#else
#define LOWBIT_SIMD_E2M1_PACKED_CELLS_INL_H_
#endif

#include <cstdint>

#include "convert-inl.h"
#include "encode_plan.h"
#include "hwy/highway.h"

HWY_BEFORE_NAMESPACE();
namespace lowbit::simd {
namespace HWY_NAMESPACE {

#if HWY_TARGET == HWY_AVX3_DL
// Built once per kernel call from an E2M1 plan with cell codes whose sign
// code is 0x08 (GroupEncoder::HasCellPath's condition, which the caller
// checks).
class PackedE2m1Cells {
 public:
  explicit PackedE2m1Cells(const EncodePlan& plan) : table_(plan.cell_code) {}

  // The codes of y0, y1, y2, y3 (in that element order, no lane a NaN) as
  // 32 packed bytes at out; false, with nothing stored, when a lane's
  // magnitude is 2^4 or more (Inf included), which the cell table does not
  // cover.
  HWY_INLINE bool Four(V y0, V y1, V y2, V y3, std::uint8_t* out) const {
    const __m512 low = _mm512_castsi512_ps(_mm512_set1_epi32(static_cast<int>(kCellLow)));
    const __m512 c0 = _mm512_range_ps(_mm512_castsi512_ps(y0.raw), low, 0x03);
    const __m512 c1 = _mm512_range_ps(_mm512_castsi512_ps(y1.raw), low, 0x03);
    const __m512 c2 = _mm512_range_ps(_mm512_castsi512_ps(y2.raw), low, 0x03);
    const __m512 c3 = _mm512_range_ps(_mm512_castsi512_ps(y3.raw), low, 0x03);
    // The largest magnitude of the four (imm8 0b1011: the larger
    // magnitude, sign cleared), compared as bits.
    const __m512 largest = _mm512_range_ps(_mm512_range_ps(c0, c1, 0x0B), _mm512_range_ps(c2, c3, 0x0B), 0x0B);
    if (HWY_UNLIKELY(_mm512_cmpge_epu32_mask(_mm512_castps_si512(largest),
                                             _mm512_set1_epi32(static_cast<int>(kCellHigh))) != 0)) {
      return false;
    }
    const __m512i d0 = CodeAndSign(_mm512_castps_si512(c0));
    const __m512i d1 = CodeAndSign(_mm512_castps_si512(c1));
    const __m512i d2 = CodeAndSign(_mm512_castps_si512(c2));
    const __m512i d3 = CodeAndSign(_mm512_castps_si512(c3));
    // Bytes 0-31: byte 0 (the code) of each lane of the first vector, then
    // of the second; bytes 32-63: byte 2 (the sign) of the same lanes.
    alignas(64) static constexpr std::uint8_t kCodeThenSignBytes[64] = {
        0,  4,  8,  12, 16, 20, 24, 28, 32, 36, 40,  44,  48,  52,  56,  60,
        64, 68, 72, 76, 80, 84, 88, 92, 96, 100, 104, 108, 112, 116, 120, 124,
        2,  6,  10, 14, 18, 22, 26, 30, 34, 38, 42,  46,  50,  54,  58,  62,
        66, 70, 74, 78, 82, 86, 90, 94, 98, 102, 106, 110, 114, 118, 122, 126};
    const __m512i order = _mm512_load_si512(kCodeThenSignBytes);
    const __m512i bytes01 = _mm512_permutex2var_epi8(d0, order, d1);
    const __m512i bytes23 = _mm512_permutex2var_epi8(d2, order, d3);
    // The 64 codes in element order, and their 64 sign bytes.
    const __m512i magnitudes = _mm512_inserti64x4(bytes01, _mm512_castsi512_si256(bytes23), 1);
    const __m512i signs = _mm512_shuffle_i64x2(bytes01, bytes23, _MM_SHUFFLE(3, 2, 3, 2));
    // magnitude | (sign & 0x08): truth table 0xF8 over (A, B, C).
    const __m512i codes = _mm512_ternarylogic_epi32(magnitudes, signs, _mm512_set1_epi8(0x08), 0xF8);
    const __m512i pairs = _mm512_maddubs_epi16(codes, _mm512_set1_epi16(0x1001));
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(out), _mm512_cvtepi16_epi8(pairs));
    return true;
  }

 private:
  // c = +-max(|y|, 2^-3), below 2^4: the magnitude code in the low word of
  // each lane (CellMagnitude's index: bits 21-26 of |c|, bit 5 flipped at a
  // quarter binade's start itself), c's sign repeated in the high word.
  HWY_INLINE __m512i CodeAndSign(__m512i c) const {
    const __m512i shifted = _mm512_srai_epi32(c, kCellShift);
    const __mmask16 at_start = _mm512_testn_epi32_mask(c, _mm512_set1_epi32((1 << kCellShift) - 1));
    const __m512i index = _mm512_mask_xor_epi32(shifted, at_start, shifted, _mm512_set1_epi32(32));
    return _mm512_mask2_permutex2var_epi16(table_.low, index, 0x55555555u, table_.high);
  }

  CellTable table_;
};
#endif

}  // namespace HWY_NAMESPACE
}  // namespace lowbit::simd
HWY_AFTER_NAMESPACE();

#endif  // LOWBIT_SIMD_E2M1_PACKED_CELLS_INL_H_
