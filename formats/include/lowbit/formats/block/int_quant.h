// Quantize / dequantize a row-major [rows, cols] FP32 matrix with a scaled
// recipe (recipe/recipe.h, Family::kScaled) over a layout
// (int_quant_layout.h), one QuantParams per group. Codes are
// one per byte in the low bits: INT8 and INT4 two's complement, UINT4 0..15,
// FP8 the format's byte. params has one entry per group (GroupGrid::Count()).
//
// Element step, per scale rule (docs/formats-reference.md §7, §8.2):
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

#include "lowbit/formats/block/int_quant_layout.h"
#include "lowbit/formats/block/int_quant_params.h"
#include "lowbit/formats/config.h"
#include "lowbit/formats/convert.h"
#include "lowbit/formats/fp32_bits.h"
#include "lowbit/formats/recipe/recipe.h"
#include "lowbit/formats/recipe/steps.h"

namespace lowbit::block {

// [TE] static_cast<fp8>(float): cvt.rn.satfinite (recipe::SatfiniteElements).
LOWBIT_HD_CONSTEXPR EncodeOptions TeFp8ElementOptions() { return recipe::SatfiniteElements(); }

// The FP32 value handed to the element conversion (before rounding).
LOWBIT_HD_CONSTEXPR float ScaledElement(const recipe::Recipe& r, const QuantParams& p, float x) {
  return recipe::ScaledElement(r, ToBlockScale(p), x);
}

// The integer q (with zero point) of a scaled value.
LOWBIT_HD_CONSTEXPR std::int32_t IntegerOfScaled(const recipe::Recipe& r, const QuantParams& p, float y) {
  return recipe::IntegerOfScaled(r, p.zero_point, y);
}

LOWBIT_HD_CONSTEXPR std::uint8_t QuantizeElement(const recipe::Recipe& r, const QuantParams& p, float x) {
  return recipe::EncodeElement(r, ToBlockScale(p), x);
}

using recipe::IntegerOfCode;

LOWBIT_HD_CONSTEXPR float DequantizeElement(const recipe::Recipe& r, const QuantParams& p, std::uint8_t code) {
  return recipe::DecodeElement(r, ToBlockScale(p), {}, code);
}

// Statistics of group g (elements in row-major order within the group).
LOWBIT_HD_CONSTEXPR GroupStats StatsOfGroup(const recipe::Recipe& r, const GroupGrid& grid, const float* x, long cols,
                                           long g) {
  const long r0 = (g / grid.grid_cols) * grid.group_rows;
  const long c0 = (g % grid.grid_cols) * grid.group_cols;
  GroupStats s = recipe::EmptyStats();
  for (long i = r0; i < r0 + grid.group_rows; ++i) {
    for (long j = c0; j < c0 + grid.group_cols; ++j) s = recipe::Accumulate(r, s, x[i * cols + j]);
  }
  return s;
}

// Dynamic quantization: parameters from the data itself.
LOWBIT_HD_CONSTEXPR QuantStatus ChooseQuantParams(const recipe::Recipe& r, const QuantLayout& layout, const float* x,
                                                  long rows, long cols, QuantParams* params) {
  GroupGrid grid;
  const QuantStatus st = MakeGroupGrid(layout, rows, cols, &grid);
  if (st != QuantStatus::kOk) return st;
  for (long g = 0; g < grid.Count(); ++g) params[g] = QuantParamsFromStats(r, StatsOfGroup(r, grid, x, cols, g));
  return QuantStatus::kOk;
}

// Static or dynamic: codes from given parameters (static: from a calibrated
// range through QuantParamsFromStats(r, StatsOfRange(lo, hi))).
LOWBIT_HD_CONSTEXPR QuantStatus QuantizeWithParams(const recipe::Recipe& r, const QuantLayout& layout, const float* x,
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

LOWBIT_HD_CONSTEXPR QuantStatus QuantizeMatrix(const recipe::Recipe& r, const QuantLayout& layout, const float* x,
                                               long rows, long cols, std::uint8_t* codes, QuantParams* params) {
  const QuantStatus st = ChooseQuantParams(r, layout, x, rows, cols, params);
  if (st != QuantStatus::kOk) return st;
  return QuantizeWithParams(r, layout, x, rows, cols, params, codes);
}

LOWBIT_HD_CONSTEXPR QuantStatus DequantizeMatrix(const recipe::Recipe& r, const QuantLayout& layout,
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
