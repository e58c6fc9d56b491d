// The unsigned maximum of each of 16 AVX-512 vectors into one lane each
// (TransposedMax16), shared by the block quantizers (block_quantize-inl.h,
// one lane per MX / NVFP4 block amax) and the group quantizers
// (int_group_quantize-inl.h, one lane per group amax): 15 two-source
// permute pairs and maxima instead of 16 horizontal reductions.

#if defined(LOWBIT_SIMD_TRANSPOSED_MAX_INL_H_) == defined(HWY_TARGET_TOGGLE)
#ifdef LOWBIT_SIMD_TRANSPOSED_MAX_INL_H_
#undef LOWBIT_SIMD_TRANSPOSED_MAX_INL_H_
#else
#define LOWBIT_SIMD_TRANSPOSED_MAX_INL_H_
#endif

#include <cstdint>

#include "hwy/highway.h"

HWY_BEFORE_NAMESPACE();
namespace lowbit::simd {
namespace HWY_NAMESPACE {

#if HWY_TARGET <= HWY_AVX3
// One level of a transposed reduction: x and y hold blocks of 2w lanes each
// (consecutive blocks, in order); the result holds x's blocks, then y's,
// each reduced to w lanes by `op` of its two halves (Intel SDM VPERMT2D
// takes lane indices 0-15 from x and 16-31 from y).
template <int kWidth, class Op>
HWY_INLINE __m512i ReduceHalves(__m512i x, __m512i y, Op op) {
  alignas(64) static constexpr std::uint32_t kLow[16] = {
      0 / kWidth * 2 * kWidth + 0 % kWidth,   1 / kWidth * 2 * kWidth + 1 % kWidth,
      2 / kWidth * 2 * kWidth + 2 % kWidth,   3 / kWidth * 2 * kWidth + 3 % kWidth,
      4 / kWidth * 2 * kWidth + 4 % kWidth,   5 / kWidth * 2 * kWidth + 5 % kWidth,
      6 / kWidth * 2 * kWidth + 6 % kWidth,   7 / kWidth * 2 * kWidth + 7 % kWidth,
      8 / kWidth * 2 * kWidth + 8 % kWidth,   9 / kWidth * 2 * kWidth + 9 % kWidth,
      10 / kWidth * 2 * kWidth + 10 % kWidth, 11 / kWidth * 2 * kWidth + 11 % kWidth,
      12 / kWidth * 2 * kWidth + 12 % kWidth, 13 / kWidth * 2 * kWidth + 13 % kWidth,
      14 / kWidth * 2 * kWidth + 14 % kWidth, 15 / kWidth * 2 * kWidth + 15 % kWidth};
  const __m512i low = _mm512_load_si512(kLow);
  const __m512i high = _mm512_add_epi32(low, _mm512_set1_epi32(kWidth));
  return op(_mm512_permutex2var_epi32(x, low, y), _mm512_permutex2var_epi32(x, high, y));
}

// `op` over the lanes of each of 16 vectors, into one lane each (lane b: of
// vectors[b]); op is associative and commutative on the lanes' values.
template <class Op>
HWY_INLINE __m512i TransposedReduce16(__m512i (&v)[16], Op op) {
  for (int k = 0; k < 8; ++k) v[k] = ReduceHalves<8>(v[2 * k], v[2 * k + 1], op);
  for (int k = 0; k < 4; ++k) v[k] = ReduceHalves<4>(v[2 * k], v[2 * k + 1], op);
  for (int k = 0; k < 2; ++k) v[k] = ReduceHalves<2>(v[2 * k], v[2 * k + 1], op);
  return ReduceHalves<1>(v[0], v[1], op);
}

// The unsigned maximum of each of 16 vectors in one lane each.
HWY_INLINE __m512i TransposedMax16(__m512i (&v)[16]) {
  return TransposedReduce16(v, [](__m512i a, __m512i b) { return _mm512_max_epu32(a, b); });
}
#endif

}  // namespace HWY_NAMESPACE
}  // namespace lowbit::simd
HWY_AFTER_NAMESPACE();

#endif  // LOWBIT_SIMD_TRANSPOSED_MAX_INL_H_
