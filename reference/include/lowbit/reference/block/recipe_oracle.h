// The recipe oracle: every recipe of lowbit/formats/recipe/catalog.h (MX,
// NVFP4, scaled INT / FP8) over a row-major [rows, cols] tensor, re-stated
// from the specifications and the implementations' source text
// (docs/formats-reference.md §5 MX, §6 NVFP4, §7 TE FP8, §8.2 scaled INT) in
// exact arithmetic: each FP32 operation a source performs is one exact
// operation plus one round-to-nearest-even (fp32_arith.h), element codes come
// from the element oracle (OracleEncode), values from ExactValue.
//
// It reads a recipe::Recipe as DATA only (element and scale formats, encode
// policy, layout, scale rule, element step, quirks, tensor scale, dequantize
// order, zero point, packing, qmin / qmax, eps, ...) and links the data-only
// target lowbit::spec, not the model's algorithms (steps.h, tensor.h,
// convert.h), so the build itself keeps the two apart (docs/design.md "Three
// roles, kept apart"). Its maxima, smallest normals and E8M0 bounds are read
// off the formats' value lists, never retyped.
#pragma once

#include <cstdint>
#include <vector>

#include "lowbit/formats/recipe/recipe.h"

namespace lowbit::reference::block {

// Why a tensor cannot be quantized with a layout; the same conditions, in the
// same order, as the model's recipe::TensorStatus (docs/formats-reference.md
// §5.1 for the short last 1-D block, §8.2 for whole groups).
enum class OracleStatus : std::uint8_t {
  kOk,
  kEmpty,                   // rows or cols < 1
  kLayoutNotForRecipe,      // MX / NVFP4: only blocks or groups of the recipe's size;
                            // scaled: anything but a flattened 1-D block
  kSizeOverflow,            // rows * cols does not fit a long
  kBadGroup,                // a group or tile size < 1
  kColsNotMultipleOfGroup,  // groups and tiles must tile the rows
  kRowsNotMultipleOfTile,
};

// The scale of one block or group.
struct OracleScale {
  std::uint8_t code = 0;          // MX: the E8M0 byte; NVFP4: the UE4M3 byte; scaled: 0
  std::uint32_t factor_bits = 0;  // FP32 bits the element step multiplies or divides by
  std::uint32_t decode_bits = 0;  // FP32 bits of the scale dequantization multiplies by
  std::int32_t zero_point = 0;    // scaled integer recipes (0 where there is none)
};

// The tensor-level scale (Recipe::tensor_scale != kNone; NVFP4).
struct OracleTensorScale {
  std::uint32_t encode_bits = 0x3F800000u;  // TE's S_enc (0 for amax / range)
  std::uint32_t decode_bits = 0x3F800000u;  // the stored FP32 tensor scale
};

struct OracleQuantized {
  OracleStatus status = OracleStatus::kOk;
  std::vector<std::uint8_t> codes;   // one element code per element, row-major
  std::vector<std::uint8_t> packed;  // the same codes stored per Recipe::packing
  std::vector<OracleScale> scales;   // one per group, groups numbered row-major
  OracleTensorScale tensor_scale;    // meaningful when the recipe has one
};

// Dynamic quantization: the tensor scale, then each group's scale from its
// own values, then the codes.
OracleQuantized OracleQuantizeTensor(const recipe::Recipe& recipe, const recipe::Layout& layout,
                                     const std::vector<float>& x, long rows, long cols);

// Static quantization: the scale a calibrated range [lo, hi] gives (its
// statistics are min lo, max hi, amax max(|lo|, |hi|), a NaN winning), and
// the codes of x under given scales (one per group).
OracleScale OracleScaleFromRange(const recipe::Recipe& recipe, float lo, float hi,
                                 const OracleTensorScale& tensor_scale = {});
OracleQuantized OracleQuantizeWithScales(const recipe::Recipe& recipe, const recipe::Layout& layout,
                                         const std::vector<float>& x, long rows, long cols,
                                         const std::vector<OracleScale>& scales,
                                         const OracleTensorScale& tensor_scale = {});

// FP32 bits of the dequantized tensor, from the codes as stored (`packed`, in
// the recipe's packing), the scales and the tensor scale. Empty when the
// layout does not apply.
std::vector<std::uint32_t> OracleDequantizeTensor(const recipe::Recipe& recipe, const recipe::Layout& layout,
                                                  const std::vector<std::uint8_t>& packed,
                                                  const std::vector<OracleScale>& scales,
                                                  const OracleTensorScale& tensor_scale, long rows, long cols);

// FP16 bits of the dequantized tensor for the recipes whose kernels
// dequantize in FP16 (GPTQ / AWQ with FP16 scales: (q - z) * s rounded once
// to FP16); empty for any other recipe or a layout that does not apply.
std::vector<std::uint16_t> OracleDequantizeTensorToF16(const recipe::Recipe& recipe, const recipe::Layout& layout,
                                                       const std::vector<std::uint8_t>& packed,
                                                       const std::vector<OracleScale>& scales, long rows, long cols);

// Codes (one per element) into bytes, per the packing's description in
// recipe.h: two nibbles per byte, element 0 low or high; an odd last nibble
// leaves its partner 0.
std::vector<std::uint8_t> OraclePack(recipe::Packing packing, const std::vector<std::uint8_t>& codes);

}  // namespace lowbit::reference::block
