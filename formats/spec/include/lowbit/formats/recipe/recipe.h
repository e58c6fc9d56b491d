// One shape for every quantization recipe: plain constexpr data, usable on
// the host and (copied by value) in device code. A recipe says which element
// format and encode policy, where the elements that share a scale sit
// (geometry), how the scale is chosen and stored, in which FP32 order the
// elements are scaled, whether there is a tensor-level scale or a zero point,
// and how codes are packed. The arithmetic that these fields select lives in
// steps.h; the named recipes (MX, NVFP4, scaled INT/FP8) are values in
// catalog.h; the one name grammar is names.h.
//
// This header is spec data only (no conversions, no arithmetic), so that the
// oracle can read recipes without linking the model's algorithms
// (docs/design.md "Three roles, kept apart").
#pragma once

#include <cstdint>
#include <string_view>

#include "lowbit/formats/format_list.h"
#include "lowbit/formats/format_spec.h"
#include "lowbit/formats/policy.h"
#include "lowbit/formats/recipe/scale_rule_list.h"

namespace lowbit::recipe {

// Where the elements that share one scale sit in a row-major [rows, cols]
// tensor.
enum class Geometry : std::uint8_t {
  kPerTensor,  // one scale for the whole tensor
  // One scale per row: the output channel of a weight [N, K] ("per channel")
  // or the token of an activation [M, K] ("per token"); the same arithmetic
  // under two names.
  kPerRow,
  // `size` consecutive elements of the flattened tensor; the last block may
  // be short and then behaves as if padded with zeros (docs/formats-reference.md
  // §5.1: zeros never raise a block's amax). MX and NVFP4.
  kBlock1d,
  // `size` consecutive elements along each row; cols must be a multiple of
  // `size` (torchao asserts "input_size % block_size == 0", §8.2).
  kGroup,
  // `tile_rows` x `size` tiles; rows and cols must tile exactly.
  kTile2d,
};

struct Layout {
  Geometry geometry = Geometry::kPerTensor;
  int size = 0;       // kBlock1d, kGroup, kTile2d: elements along the row
  int tile_rows = 0;  // kTile2d: rows per tile
};

// How the scale of a block or group is chosen (ScaleRule) and what the scale
// is stored as (Family): one row per rule, the family stated in the row, in
// scale_rule_list.h.

// How an element is brought into the element range once its scale is known.
enum class ElementStep : std::uint8_t {
  kDivide,    // x / factor
  kMultiply,  // x * factor
};

// The tensor-level scale (NVFP4's second level).
enum class TensorScaleRule : std::uint8_t {
  kNone,
  // TE compute_global_encode_scaling_factor_FP4: S_enc = fminf(2688 / amax,
  // FLT_MAX), 1 for amax 0 or Inf; the stored S_dec = 1 / S_enc.
  kTeGlobalEncode,
  // torchao per_tensor_amax_to_scale, ModelOpt get_weights_scaling_factor_2:
  // amax / 2688 as one FP32 division, no guard.
  kAmaxOverRange,
};

// In which order a dequantized NVFP4 element multiplies its two scales.
enum class DequantizeOrder : std::uint8_t {
  kElementTimesScaleThenTensor,  // (q * s_block) * s_tensor: TE (GEMM alpha)
  kElementTimesScaleTensorProduct,  // q * (s_block * s_tensor): torchao, ModelOpt
};

// Implementation quirks of the element step that are part of the recipe.
enum class ElementQuirk : std::uint8_t {
  kNone,
  // torchao clamps the scaled value to +-max before its cast (the
  // saturating conversion makes this invisible in codes, not in a trace).
  kClampToMax,
  // ModelOpt _cast_fp4 takes the sign from (x < 0): -0.0 gives code 0.
  kNegativeZeroAsPositive,
  // vLLM scaled_fp8_conversion: fmaxf(-max, fminf(x, max)) before the cast;
  // CUDA fminf / fmaxf return the non-NaN operand, so NaN becomes +max.
  kFminfFmaxfClamp,
  // GPTQ and AWQ checkpoints (AutoGPTQ QuantLinear.pack, AutoAWQ
  // WQLinear_GEMM.from_linear): the scale is stored as FP16 (`.half()`), and
  // the stored integer is recomputed from the fake-quantized weight with
  // that FP16 scale: q = round((s * (q0 - z) + z * s) / fp16(s)), no clamp,
  // .to(int), where q0 is the recipe's own integer under the FP32 scale s.
  // The recipe's scale_format is kFp16; BlockScale::factor is s,
  // BlockScale::decode fp16(s) (steps.h RepackedInteger).
  kRepackWithFp16Scale,
};

enum class ZeroPoint : std::uint8_t {
  kNone,     // symmetric: q = round(x / scale)
  kInteger,  // one integer per group: q = round(x / scale) + zp
};

// How element codes are stored: X(Id, name, description). The name is the
// one Python's Recipe.packing and lowbit.testing's packing= use.
#define LOWBIT_PACKINGS(X)                                                        \
  X(OnePerByte, "one-per-byte", "a code in the low bits of each byte")            \
  X(NibblesLowFirst, "nibbles-low-first", "two 4-bit codes per byte, element 0 in bits 3..0") \
  X(NibblesHighFirst, "nibbles-high-first",                                       \
    "two 4-bit codes per byte, element 0 in bits 7..4 (the tinygemm int4pack input)")

enum class Packing : std::uint8_t {
#define LOWBIT_PACKING_ENUM_ENTRY(Id, name, description) k##Id,
  LOWBIT_PACKINGS(LOWBIT_PACKING_ENUM_ENTRY)
#undef LOWBIT_PACKING_ENUM_ENTRY
};

inline constexpr Packing kAllPackings[] = {
#define LOWBIT_PACKING_ID_ENTRY(Id, name, description) Packing::k##Id,
    LOWBIT_PACKINGS(LOWBIT_PACKING_ID_ENTRY)
#undef LOWBIT_PACKING_ID_ENTRY
};

// Host only (names are for printing and parsing).
constexpr const char* PackingName(Packing packing) {
  switch (packing) {
#define LOWBIT_PACKING_NAME_CASE(Id, name, description) \
  case Packing::k##Id:                                  \
    return name;
    LOWBIT_PACKINGS(LOWBIT_PACKING_NAME_CASE)
#undef LOWBIT_PACKING_NAME_CASE
  }
  return "?";
}

// Looks a packing up by its name; false if unknown.
constexpr bool FindPacking(std::string_view name, Packing* out) {
  for (Packing p : kAllPackings) {
    if (name == PackingName(p)) {
      *out = p;
      return true;
    }
  }
  return false;
}

struct Recipe {
  // The name is "format:profile" (names.h): the block format or element
  // ("mxfp4", "nvfp4", "int4") and the implementation's profile ("ocp",
  // "te", "ao-sym").
  const char* name;
  const char* profile;
  const char* source;  // the implementation it reproduces, a file a reader can open
  FormatSpec element;            // by value: device code can read it
  EncodeOptions element_encode;  // rounding, saturation, NaN policy of the element cast
  Layout layout;                 // the default geometry (names.h can override it)
  FormatSpec scale_format;       // kE8m0 (MX), kUe4m3 (NVFP4), kFp32 (scaled)
  ScaleRule scale_rule;
  AmaxNan amax_nan;              // torch.amax (NaN wins) or fmaxf (NaN ignored)
  ElementStep element_step;
  ElementQuirk element_quirk = ElementQuirk::kNone;
  TensorScaleRule tensor_scale = TensorScaleRule::kNone;
  DequantizeOrder dequantize_order = DequantizeOrder::kElementTimesScaleThenTensor;
  ZeroPoint zero_point = ZeroPoint::kNone;
  Packing packing = Packing::kOnePerByte;

  // ---- parameters of the scale rules (unused ones stay 0 / false) ----
  // MX: exponent of the element's largest power of two (emax_elem, OCP MX
  // §6.3); MXINT8 0.
  int element_emax = 0;
  // MX integer elements: value = code * 2^implied_exponent (MXINT8: -6).
  int element_implied_exponent = 0;
  // Integer element range [qmin, qmax] (MXINT8: +-127, never -128).
  int qmin = 0;
  int qmax = 0;
  // MX RCEIL: the E8M0 conversion saturates (TE float_to_e8m0) instead of
  // giving NaN (torchao _f32_to_e8m0_rceil).
  bool scale_saturate = false;
  // microxcaling: an all-zero block takes FP32_MIN_NORMAL as its amax.
  bool zero_amax_as_min_normal = false;
  // Scaled: the floor on the scale (torchao eps, TE amax_epsilon).
  float eps = 0.0f;
  // TE force_pow_2_scales: keep only the sign and exponent bits of the scale.
  bool pow2_scale = false;
  // torch on CUDA divides a tensor by a Python float as x * fp32(1 / d).
  bool scalar_divisor_as_reciprocal = false;
  // vLLM calc_kv_scales: the integer range the amax is divided by
  // (kVllmFp8KvCalculated; vLLM reads it with int(os.getenv(...))).
  int amax_divisor = 0;

  constexpr Family family() const { return FamilyOf(scale_rule); }
};

}  // namespace lowbit::recipe
