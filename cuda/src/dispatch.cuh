// Maps a run-time (backend, operation, format, options) to the compile-time
// element functor of element_ops.cuh and hands it to a visitor. The array
// API (convert.cu) and the verification sweep (verify.cu) share this table,
// so what is verified is what runs.
#pragma once

#include <cstdint>

#include "element_ops.cuh"
#include "lowbit/cuda/convert.h"

namespace lowbit::cuda::detail {

// BF16 holds every value of the format exactly (a decode to BF16 is defined).
template <FormatId kId>
constexpr bool BfloatHolds() {
  constexpr FormatSpec s = SpecValue<kId>();
  if (!s.IsFloat()) return s.total_bits <= 9;  // INT8 / INT4 / UINT4: |v| <= 256
  return s.mantissa_bits <= 7 && s.exponent_bits <= 8 &&
         (s.exponent_bits < 8 || s.total_bits == 16 || !s.has_subnormals);
}

// The model: visits ModelConvert for `op`. False when the operation does not
// apply (decode to BF16 of a format BF16 cannot hold).
template <typename Visitor>
bool VisitSoftware(ElementOp op, FormatId format, const EncodeOptions& encode,
                   const DecodeOptions& decode, const std::uint32_t* random_bits,
                   Visitor&& visit) {
  const RuntimeOptions enc{encode};
  const RuntimeOptions dec{ToDecodeEncodeOptions(decode)};
  switch (format) {
#define LOWBIT_SW_CASE(Id, spec)                                                      \
  case FormatId::k##Id:                                                               \
    switch (op) {                                                                     \
      case ElementOp::kEncodeF32:                                                     \
        visit(ModelConvert<FormatId::kFp32, FormatId::k##Id>{enc, random_bits});      \
        return true;                                                                  \
      case ElementOp::kEncodeBf16:                                                    \
        visit(ModelConvert<FormatId::kBf16, FormatId::k##Id>{enc, random_bits});      \
        return true;                                                                  \
      case ElementOp::kEncodeF16:                                                     \
        visit(ModelConvert<FormatId::kFp16, FormatId::k##Id>{enc, random_bits});      \
        return true;                                                                  \
      case ElementOp::kDecodeToF32:                                                   \
        visit(ModelConvert<FormatId::k##Id, FormatId::kFp32>{dec, nullptr});          \
        return true;                                                                  \
      case ElementOp::kDecodeToBf16:                                                  \
        if constexpr (BfloatHolds<FormatId::k##Id>()) {                               \
          visit(ModelConvert<FormatId::k##Id, FormatId::kBf16>{dec, nullptr});        \
          return true;                                                                \
        }                                                                             \
        return false;                                                                 \
    }                                                                                 \
    return false;
    LOWBIT_FORMATS(LOWBIT_SW_CASE)
#undef LOWBIT_SW_CASE
  }
  return false;
}

// The hardware instruction for (op, format, rounding, satfinite), if any.
// `blackwell`: whether sm_100a-class instructions may be used.
template <typename Visitor>
bool VisitHardware(ElementOp op, FormatId format, RoundingMode rounding, bool satfinite,
                   bool blackwell, Visitor&& visit) {
  const bool rn = rounding == RoundingMode::kNearestEven;
  switch (op) {
    case ElementOp::kEncodeF32:
      switch (format) {
        case FormatId::kE4m3:
          if (!rn || !satfinite) return false;
          visit(HwEncodeF32Fp8<FormatId::kE4m3>{});
          return true;
        case FormatId::kE5m2:
          if (!rn || !satfinite) return false;
          visit(HwEncodeF32Fp8<FormatId::kE5m2>{});
          return true;
        case FormatId::kBf16:
          if (rn && satfinite) visit(HwEncodeF32Half<FormatId::kBf16, HwRound::kRnSatfinite>{});
          else if (satfinite) return false;
          else if (rn) visit(HwEncodeF32Half<FormatId::kBf16, HwRound::kRn>{});
          else if (rounding == RoundingMode::kTowardZero) visit(HwEncodeF32Half<FormatId::kBf16, HwRound::kRz>{});
          else if (rounding == RoundingMode::kDown) visit(HwEncodeF32Half<FormatId::kBf16, HwRound::kRm>{});
          else if (rounding == RoundingMode::kUp) visit(HwEncodeF32Half<FormatId::kBf16, HwRound::kRp>{});
          else return false;
          return true;
        case FormatId::kFp16:
          if (rn && satfinite) visit(HwEncodeF32Half<FormatId::kFp16, HwRound::kRnSatfinite>{});
          else if (satfinite) return false;
          else if (rn) visit(HwEncodeF32Half<FormatId::kFp16, HwRound::kRn>{});
          else if (rounding == RoundingMode::kTowardZero) visit(HwEncodeF32Half<FormatId::kFp16, HwRound::kRz>{});
          else return false;
          return true;
        case FormatId::kE2m1:
          if (!blackwell || !rn) return false;
          visit(HwEncodeF32Narrow<FormatId::kE2m1>{});
          return true;
        case FormatId::kE2m3:
          if (!blackwell || !rn) return false;
          visit(HwEncodeF32Narrow<FormatId::kE2m3>{});
          return true;
        case FormatId::kE3m2:
          if (!blackwell || !rn) return false;
          visit(HwEncodeF32Narrow<FormatId::kE3m2>{});
          return true;
        case FormatId::kE8m0:
          if (!blackwell || !satfinite) return false;
          if (rounding == RoundingMode::kTowardZero) visit(HwEncodeF32Narrow<FormatId::kE8m0, HwRound::kRz>{});
          else if (rounding == RoundingMode::kUp) visit(HwEncodeF32Narrow<FormatId::kE8m0, HwRound::kRp>{});
          else return false;
          return true;
        default:
          return false;
      }
    case ElementOp::kEncodeBf16:
    case ElementOp::kEncodeF16:
      if (!rn || !satfinite) return false;
      if (format == FormatId::kE4m3) {
        if (op == ElementOp::kEncodeBf16) visit(HwEncodeBf16Fp8<FormatId::kE4m3>{});
        else visit(HwEncodeF16Fp8<FormatId::kE4m3>{});
        return true;
      }
      if (format == FormatId::kE5m2) {
        if (op == ElementOp::kEncodeBf16) visit(HwEncodeBf16Fp8<FormatId::kE5m2>{});
        else visit(HwEncodeF16Fp8<FormatId::kE5m2>{});
        return true;
      }
      return false;
    case ElementOp::kDecodeToF32:
      switch (format) {
        case FormatId::kE4m3: visit(HwDecodeFp8<FormatId::kE4m3, false>{}); return true;
        case FormatId::kE5m2: visit(HwDecodeFp8<FormatId::kE5m2, false>{}); return true;
        case FormatId::kFp16: visit(HwDecodeF16ToF32{}); return true;
        case FormatId::kE2m1: if (!blackwell) return false; visit(HwDecodeNarrow<FormatId::kE2m1, false>{}); return true;
        case FormatId::kE2m3: if (!blackwell) return false; visit(HwDecodeNarrow<FormatId::kE2m3, false>{}); return true;
        case FormatId::kE3m2: if (!blackwell) return false; visit(HwDecodeNarrow<FormatId::kE3m2, false>{}); return true;
        default: return false;
      }
    case ElementOp::kDecodeToBf16:
      switch (format) {
        case FormatId::kE4m3: visit(HwDecodeFp8<FormatId::kE4m3, true>{}); return true;
        case FormatId::kE5m2: visit(HwDecodeFp8<FormatId::kE5m2, true>{}); return true;
        case FormatId::kE2m1: if (!blackwell) return false; visit(HwDecodeNarrow<FormatId::kE2m1, true>{}); return true;
        case FormatId::kE2m3: if (!blackwell) return false; visit(HwDecodeNarrow<FormatId::kE2m3, true>{}); return true;
        case FormatId::kE3m2: if (!blackwell) return false; visit(HwDecodeNarrow<FormatId::kE3m2, true>{}); return true;
        case FormatId::kE8m0: if (!blackwell) return false; visit(HwDecodeNarrow<FormatId::kE8m0, true>{}); return true;
        default: return false;
      }
  }
  return false;
}

}  // namespace lowbit::cuda::detail
