// Quantize / dequantize a row-major [rows, cols] FP32 matrix with a scaled
// recipe (int_quant_recipe.h) over a layout (int_quant_layout.h). Codes are
// one per byte in the low bits: INT8 and INT4 two's complement, UINT4 0..15,
// FP8 the format's byte. params has one entry per group (GroupGrid::Count()).
//
// Element step, per scheme (docs/formats-reference.md §7, §8.2):
//   TE FP8   y = x * scale;            code = cvt.rn.satfinite(y)   (NaN -> 0x7F)
//   AO       y = x * fp32(1 / scale);  q = clamp(round(y) + zp, qmin, qmax)
//   GPTQ     y = x / scale;            q = clamp(round(y) + zero, 0, maxq)
//   common   y = x / scale;            q = clamp(round(y), -qmax, qmax)
// clamp(round(y) + zp, lo, hi) is computed as round(clamp(y, lo - zp,
// hi - zp)) + zp: rounding is monotone and the bounds are integers, so the
// two agree, and the rounded value stays small. A NaN y gives 0 (torch's CPU
// cast of the NaN that round and clamp pass through, docs/formats-reference.md §8.1).
// Dequantize: TE fp8(code) * scale_inv; integers fp32(q - zp) * scale.
#pragma once

#include <cstdint>

#include "lowbit/formats/block/fp32_bits.h"
#include "lowbit/formats/block/int_quant_layout.h"
#include "lowbit/formats/block/int_quant_params.h"
#include "lowbit/formats/block/int_quant_recipe.h"
#include "lowbit/formats/config.h"
#include "lowbit/formats/convert.h"

namespace lowbit::block {

// [TE] static_cast<fp8>(float): __nv_cvt_float_to_fp8(x, __NV_SATFINITE, ...)
// = cvt.rn.satfinite: overflow and +-Inf -> +-max, NaN -> +0x7F (docs/formats-reference.md §4.1).
LOWBIT_HD_CONSTEXPR EncodeOptions TeFp8ElementOptions() {
  EncodeOptions o;
  o.overflow = Overflow::kSaturate;
  o.nan_sign = NanSign::kPositive;
  o.nan_payload = NanPayload::kAllOnes;
  return o;
}

// The FP32 value handed to the element conversion (before rounding).
LOWBIT_HD_CONSTEXPR float ScaledElement(const IntQuantRecipe& r, const QuantParams& p, float x) {
  switch (r.scheme) {
    case QuantScheme::kTeFp8:
    case QuantScheme::kAoSymmetric:
    case QuantScheme::kAoAsymmetric:
      return x * p.encode;
    case QuantScheme::kGptqSymmetric:
    case QuantScheme::kGptqAsymmetric:
    case QuantScheme::kAmaxOverQmax:
      return x / p.encode;
  }
  return x;
}

// The integer q (with zero point) of a scaled value.
LOWBIT_HD_CONSTEXPR std::int32_t IntegerOfScaled(const IntQuantRecipe& r, const QuantParams& p, float y) {
  if (F32IsNan(F32Bits(y))) return 0;
  const float lo = static_cast<float>(r.qmin - p.zero_point);
  const float hi = static_cast<float>(r.qmax - p.zero_point);
  const float c = y < lo ? lo : (y > hi ? hi : y);
  return static_cast<std::int32_t>(RoundToIntegerF32(c, r.rounding)) + p.zero_point;
}

LOWBIT_HD_CONSTEXPR std::uint8_t QuantizeElement(const IntQuantRecipe& r, const QuantParams& p, float x) {
  const float y = ScaledElement(r, p, x);
  if (r.scheme == QuantScheme::kTeFp8) {
    return static_cast<std::uint8_t>(EncodeF32(*r.element, y, TeFp8ElementOptions()).code);
  }
  const std::int32_t q = IntegerOfScaled(r, p, y);
  return static_cast<std::uint8_t>(static_cast<std::uint32_t>(q) & r.element->CodeMask());
}

// The integer a code stands for (sign-extended for INT8 / INT4).
LOWBIT_HD_CONSTEXPR std::int32_t IntegerOfCode(const FormatSpec& element, std::uint8_t code) {
  const std::int32_t v = static_cast<std::int32_t>(code & element.CodeMask());
  if (!element.has_sign) return v;
  const std::int32_t half = std::int32_t{1} << (element.total_bits - 1);
  return v >= half ? v - 2 * half : v;
}

LOWBIT_HD_CONSTEXPR float DequantizeElement(const IntQuantRecipe& r, const QuantParams& p, std::uint8_t code) {
  if (r.scheme == QuantScheme::kTeFp8) {
    // A NaN scale wins over a NaN code, quieted: IEEE 754 §6.2 leaves the
    // choice between two NaN operands open and compilers may commute the
    // multiply, so the model pins it (the SIMD kernel does the same).
    if (F32IsNan(F32Bits(p.decode))) return F32FromBits(F32Bits(p.decode) | 0x00400000u);
    return DecodeToF32(*r.element, code) * p.decode;
  }
  return static_cast<float>(IntegerOfCode(*r.element, code) - p.zero_point) * p.decode;
}

// Statistics of group g (elements in row-major order within the group).
LOWBIT_HD_CONSTEXPR GroupStats StatsOfGroup(const IntQuantRecipe& r, const GroupGrid& grid, const float* x, long cols,
                                           long g) {
  const long r0 = (g / grid.grid_cols) * grid.group_rows;
  const long c0 = (g % grid.grid_cols) * grid.group_cols;
  GroupStats s;
  s.min = x[r0 * cols + c0];
  s.max = s.min;
  s.amax = 0.0f;
  for (long i = r0; i < r0 + grid.group_rows; ++i) {
    for (long j = c0; j < c0 + grid.group_cols; ++j) {
      const float v = x[i * cols + j];
      s.min = detail::TorchMin(s.min, v);
      s.max = detail::TorchMax(s.max, v);
      s.amax = r.amax_nan == AmaxNan::kIgnore ? MaxIgnoringNan(s.amax, F32Abs(v)) : MaxPropagatingNan(s.amax, F32Abs(v));
    }
  }
  return s;
}

// Dynamic quantization: parameters from the data itself.
LOWBIT_HD_CONSTEXPR QuantStatus ChooseQuantParams(const IntQuantRecipe& r, const QuantLayout& layout, const float* x,
                                                  long rows, long cols, QuantParams* params) {
  GroupGrid grid;
  const QuantStatus st = MakeGroupGrid(layout, rows, cols, &grid);
  if (st != QuantStatus::kOk) return st;
  for (long g = 0; g < grid.Count(); ++g) params[g] = QuantParamsFromStats(r, StatsOfGroup(r, grid, x, cols, g));
  return QuantStatus::kOk;
}

// Static or dynamic: codes from given parameters (static: from a calibrated
// range through QuantParamsFromStats(r, StatsOfRange(lo, hi))).
LOWBIT_HD_CONSTEXPR QuantStatus QuantizeWithParams(const IntQuantRecipe& r, const QuantLayout& layout, const float* x,
                                                   long rows, long cols, const QuantParams* params,
                                                   std::uint8_t* codes) {
  GroupGrid grid;
  const QuantStatus st = MakeGroupGrid(layout, rows, cols, &grid);
  if (st != QuantStatus::kOk) return st;
  for (long i = 0; i < rows; ++i) {
    for (long j = 0; j < cols; ++j) codes[i * cols + j] = QuantizeElement(r, params[GroupOf(grid, i, j)], x[i * cols + j]);
  }
  return QuantStatus::kOk;
}

LOWBIT_HD_CONSTEXPR QuantStatus QuantizeMatrix(const IntQuantRecipe& r, const QuantLayout& layout, const float* x,
                                               long rows, long cols, std::uint8_t* codes, QuantParams* params) {
  const QuantStatus st = ChooseQuantParams(r, layout, x, rows, cols, params);
  if (st != QuantStatus::kOk) return st;
  return QuantizeWithParams(r, layout, x, rows, cols, params, codes);
}

LOWBIT_HD_CONSTEXPR QuantStatus DequantizeMatrix(const IntQuantRecipe& r, const QuantLayout& layout,
                                                 const std::uint8_t* codes, long rows, long cols,
                                                 const QuantParams* params, float* out) {
  GroupGrid grid;
  const QuantStatus st = MakeGroupGrid(layout, rows, cols, &grid);
  if (st != QuantStatus::kOk) return st;
  for (long i = 0; i < rows; ++i) {
    for (long j = 0; j < cols; ++j) {
      out[i * cols + j] = DequantizeElement(r, params[GroupOf(grid, i, j)], codes[i * cols + j]);
    }
  }
  return QuantStatus::kOk;
}

}  // namespace lowbit::block
