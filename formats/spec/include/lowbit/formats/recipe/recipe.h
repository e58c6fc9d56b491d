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

#include "lowbit/formats/format_list.h"
#include "lowbit/formats/format_spec.h"
#include "lowbit/formats/policy.h"

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

// How the scale of a block or group is chosen from its statistics. The first
// six give an E8M0 power of two (docs/formats-reference.md §5.3), the next
// five NVFP4's UE4M3 block scale in each implementation's FP32 order (§6),
// the rest an FP32 scale (and zero point) per group (§7, §8.2). FamilyOf
// reads the family off this order: keep each family's rules together.
enum class ScaleRule : std::uint8_t {
  // [OCP-MX §6.3] largest power of two <= amax over 2^emax_elem, read from
  // the FP32 exponent bits (never a float log2).
  kMxFloor,
  // torchao CEIL: the exponent field plus one when the mantissa is not 0.
  kMxCeil,
  // torchao EVEN: amax's significand rounded half-up to the element's
  // mantissa width first, then as kMxFloor.
  kMxEven,
  // NVIDIA RCEIL: the E8M0 round-up conversion of amax * fp32(1/max_elem).
  kMxRceil,
  // The E8M0 round-to-nearest (ties up) conversion of the same product.
  kMxNearest,
  // torchao 0.18 _to_mx_rceil's eager (CPU, and CUDA without torch.compile on
  // sm_100) fallback: descale = amax / max_elem, e = clamp(ceil(log2(descale))
  // in FP32, -127, 127); NaN -> 0xFF, Inf -> 0xFE; the element factor of
  // code 0 is 1.0, not 2^127. FP32 log2 of a descale a few ulps above 2^k
  // rounds to k, so it picks the smaller scale there (docs/profiles.md, the MX table).
  kMxRceilEager,
  // TransformerEngine: block_amax * (S_enc * fp32(1/6)), cvt.rn.satfinite.
  kNvfp4Te,
  // torchao: clamp((amax / 6) / per_tensor_scale, 2^-6, 448), then E4M3.
  kNvfp4Torchao,
  // ModelOpt: amax / (6 * wsf2); 0 -> 1; at least 2^-9; then E4M3.
  kNvfp4ModelOpt,
  // torchao 0.18.0 nvfp4_quantize: the scale as kNvfp4Torchao, the element
  // step x * ((1 / pts) / fp8_scale) ("to match the MSLK triton kernel").
  kNvfp4Torchao018,
  // nvidia-modelopt 0.47.0 _cast_per_block_scale_to_fp8: as kNvfp4ModelOpt,
  // and the block scale clamped to at most 448 too (0x7E, never NaN).
  kNvfp4ModelOpt047,
  // TE current scaling: scale = max_fp8 / amax (recipe_common.cuh).
  kTeFp8,
  // torchao MappingType.SYMMETRIC / ASYMMETRIC (_choose_qparams_affine).
  kAoSymmetric,
  kAoAsymmetric,
  // GPTQ Quantizer.find_params(sym=True / False).
  kGptqSymmetric,
  kGptqAsymmetric,
  // The common kernel: scale = amax / qmax, an all-zero group gets scale 1.
  kAmaxOverQmax,
  // vLLM FP8, per tensor (dynamic_scaled_fp8_quant): scale = amax / 448
  // (fmaxf amax, no floor), stored as the dequant scale; y = x * (1.0f /
  // scale); fmaxf(-448, fminf(y, 448)) (NaN -> +448); E4M3 RNE.
  kVllmFp8PerTensor,
  // vLLM FP8, per token (dynamic_per_token_scaled_fp8_quant): scale =
  // fmaxf(amax / 448, 1 / (448 * 512)); y = x / scale; the same clamp.
  kVllmFp8PerToken,
  // INT8 per-channel symmetric, the common PyTorch formulation: scale =
  // amax / qmax clamped to >= eps (1e-10); q = clamp(round(x / scale), qmin,
  // qmax) over the element's full range [-128, 127].
  kAmaxOverQmaxFloored,
  // vLLM FP8 KV cache (reshape_and_cache, scaled_convert): a static scale,
  // 1.0 unless one is given (vLLM's k_scale / v_scale default); y = x /
  // scale; __nv_cvt_float_to_fp8(y, __NV_SATFINITE) (NaN -> 0x7F, +-Inf ->
  // +-448). Per tensor, or per head: groups of head_size along a row (gN).
  kVllmFp8KvCache,
  // AutoAWQ pseudo_quantize_tensor(zero_point=True) (casper-hansen/AutoAWQ
  // @0222940 awq/quantize/quantizer.py) on the layer cast to FP16
  // (_apply_quant: .half()), every operation rounded to FP16: max =
  // amax(w), min = amin(w) (no clamp to 0, unlike GPTQ), scale = (max -
  // min).clamp(min=1e-5) / maxq, zero = clamp(-round(min / scale), 0, maxq);
  // q = clamp(round(w / scale) + zero, 0, maxq) (steps.h
  // EncodeAwqElement).
  kAwqAsymmetric,
  // vLLM's KV-scale calibration (vllm-project/vllm @004a5da0
  // vllm/attention/layer.py Attention.calc_kv_scales, run once when
  // calculate_kv_scales is set): scale = torch.abs(x).max() / range, where
  // range is a CPU float32 tensor of the integer Recipe::amax_divisor
  // (K_SCALE_CONSTANT 200 for keys, V_SCALE_CONSTANT 100 for values). The
  // amax is a CUDA tensor, so ATen's div_true_kernel_cuda sees a CPU scalar
  // divisor and computes amax * fp32(1 / range), not amax / range
  // (Recipe::scalar_divisor_as_reciprocal); torch.max lets a NaN win. The
  // scale is then the KV cache's static one (kVllmFp8KvCache): y = x /
  // scale, __NV_SATFINITE.
  kVllmFp8KvCalculated,
};

// The three families differ in what a scale is stored as; each rule belongs
// to exactly one.
enum class Family : std::uint8_t {
  kMx,      // one E8M0 byte per block
  kNvfp4,   // one UE4M3 byte per block and one FP32 tensor scale
  kScaled,  // one FP32 scale (and maybe an integer zero point) per group
};

constexpr Family FamilyOf(ScaleRule rule) {
  if (rule <= ScaleRule::kMxRceilEager) return Family::kMx;
  if (rule <= ScaleRule::kNvfp4ModelOpt047) return Family::kNvfp4;
  return Family::kScaled;
}

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

// How element codes are stored.
enum class Packing : std::uint8_t {
  kOnePerByte,        // a code in the low bits of each byte
  kNibblesLowFirst,   // two 4-bit codes per byte, element 0 in bits 3..0
  kNibblesHighFirst,  // element 0 in bits 7..4 (the tinygemm int4pack input)
};

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
