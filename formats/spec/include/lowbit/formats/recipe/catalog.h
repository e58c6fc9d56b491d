// Every named recipe as a value of recipe.h's one shape: the MX profiles over
// each MX format, the NVFP4 recipes and the scaled INT / FP8 recipes. Each
// names the implementation it reproduces (docs/formats-reference.md §0 keys:
// [OCP-MX], [MSX], [TE], [AO], [MO], [GPTQ]). Data only, like recipe.h.
//
// This is the one place recipe data is typed: the model, the oracle and
// every backend take these recipes (or ones built by the functions below)
// and nothing else.
#pragma once

#include <array>
#include <cstddef>

#include "lowbit/formats/format_list.h"
#include "lowbit/formats/policy.h"
#include "lowbit/formats/recipe/recipe.h"

namespace lowbit::recipe {

// ---- element policies shared by several recipes ---------------------------

// Round, clamp to +-max ([OCP-MX §6.3] "normal numbers that exceed the max
// normal ... should be clamped to the max normal, preserving the sign"); a
// NaN keeps its code where the format has one, else +max.
constexpr EncodeOptions SaturatingElements(RoundingMode rounding, NanSign nan_sign) {
  EncodeOptions o;
  o.rounding = rounding;
  o.overflow = Overflow::kSaturate;
  o.inf_input = InfInput::kLikeOverflow;
  o.nan_sign = nan_sign;
  o.nan_payload = NanPayload::kAllOnes;
  o.nan_into_no_nan = NanIntoNoNan::kPositiveMax;
  return o;
}

// cvt.rn.satfinite (PTX ISA §9.7.9.21): overflow and +-Inf -> +-max, NaN ->
// the positive all-ones NaN code (E4M3 0x7F), or +max where there is no NaN
// (E2M1: +6). TE's static_cast<fp8>(float) and its FP4 conversions.
constexpr EncodeOptions SatfiniteElements() {
  EncodeOptions o;
  o.overflow = Overflow::kSaturate;
  o.nan_sign = NanSign::kPositive;
  o.nan_payload = NanPayload::kAllOnes;
  o.nan_into_no_nan = NanIntoNoNan::kPositiveMax;
  return o;
}

// Rounding of integer elements (the clamp to [qmin, qmax] is the recipe's).
constexpr EncodeOptions IntegerElements(RoundingMode rounding) {
  EncodeOptions o;
  o.rounding = rounding;
  o.overflow = Overflow::kSaturate;
  return o;
}

// ---- MX: a profile (scale rule, element order and policy) over a format ----

struct MxProfile {
  const char* name;
  const char* source;
  ScaleRule rule;
  bool scale_saturate;
  bool zero_amax_as_min_normal;
  AmaxNan amax_nan;
  ElementStep step;  // kDivide: x / 2^e; kMultiply: x * fp32(2^-e)
  EncodeOptions element;
  bool integer_elements;  // applies to MXINT8 too (torchao and TE have no MXINT8)
};

inline constexpr MxProfile kMxProfiles[] = {
    // The spec: floor rule, x / X, roundTiesToEven, clamp. A NaN or Inf amax
    // gives the NaN scale (as [MSX] and [AO] do).
    {"ocp", "[OCP-MX §6.3]", ScaleRule::kMxFloor, false, false, AmaxNan::kPropagate,
     ElementStep::kDivide, SaturatingElements(RoundingMode::kNearestEven, NanSign::kKeep), true},
    // microxcaling round="nearest" is half-away (sign(A)*floor(|A|+0.5)); an
    // all-zero block takes FP32_MIN_NORMAL as amax (§5.2, §9 row 9).
    {"msx", "[MSX] mx_ops._quantize_mx round='nearest'", ScaleRule::kMxFloor, false, true,
     AmaxNan::kPropagate, ElementStep::kDivide,
     SaturatingElements(RoundingMode::kNearestAway, NanSign::kKeep), true},
    {"msx-even", "[MSX] mx_ops._quantize_mx round='even'", ScaleRule::kMxFloor, false, true,
     AmaxNan::kPropagate, ElementStep::kDivide,
     SaturatingElements(RoundingMode::kNearestEven, NanSign::kKeep), true},
    // TE MXFP8: fmaxf amax, float_to_e8m0 (RCEIL, satfinite), x * exp2f_rcp,
    // cvt.rn.satfinite (§5.3, §9 rows 8, 10).
    {"te", "[TE] quantize_mxfp8.cuh, ptx.cuh float_to_e8m0 / exp2f_rcp", ScaleRule::kMxRceil, true,
     false, AmaxNan::kIgnore, ElementStep::kMultiply,
     SaturatingElements(RoundingMode::kNearestEven, NanSign::kPositive), false},
    // torchao to_mx per ScaleCalculationMode: torch.amax, a non-finite amax
    // gives 0xFF, x * _e8m0_scale_to_reciprocal_fp32, clamp, RNE cast.
    {"ao-floor", "[AO] mx_tensor.to_mx FLOOR (@36027d8; live: torchao 0.18.0)", ScaleRule::kMxFloor, false, false,
     AmaxNan::kPropagate, ElementStep::kMultiply,
     SaturatingElements(RoundingMode::kNearestEven, NanSign::kKeep), false},
    {"ao-ceil", "[AO] mx_tensor.to_mx CEIL (@36027d8; live: torchao 0.18.0)", ScaleRule::kMxCeil, false, false,
     AmaxNan::kPropagate, ElementStep::kMultiply,
     SaturatingElements(RoundingMode::kNearestEven, NanSign::kKeep), false},
    {"ao-even", "[AO] mx_tensor.to_mx EVEN (@36027d8; live: torchao 0.18.0)", ScaleRule::kMxEven, false, false,
     AmaxNan::kPropagate, ElementStep::kMultiply,
     SaturatingElements(RoundingMode::kNearestEven, NanSign::kKeep), false},
    // RCEIL without saturation: > 2^127 and Inf -> 0xFF (_f32_to_e8m0_rceil).
    {"ao-rceil", "[AO] mx_tensor._to_mx_rceil, exact as compiled on sm_100 (@36027d8; 0.18.0 eager differs)",
     ScaleRule::kMxRceil, false, false, AmaxNan::kPropagate, ElementStep::kMultiply,
     SaturatingElements(RoundingMode::kNearestEven, NanSign::kKeep), false},
    // torchao 0.18.0's eager fallback of the same function (CPU tensors, and
    // CUDA ones outside torch.compile on sm_100): FP32 ceil(log2(amax /
    // max_pos)), so a descale a few ulps above 2^k gets 2^k; Inf -> 0xFE;
    // code 0 multiplies by 1.0 (docs/profiles.md, the MX table).
    {"ao-rceil-eager",
     "[AO] mx_tensor._to_mx_rceil eager fallback, torchao 0.18.0 (ceil(log2(descale)) in FP32; code 0 -> x * 1.0)",
     ScaleRule::kMxRceilEager, false, false, AmaxNan::kPropagate, ElementStep::kMultiply,
     SaturatingElements(RoundingMode::kNearestEven, NanSign::kKeep), false},
    // Not one implementation's profile: what casting amax / max_elem with
    // torch's .to(torch.float8_e8m0fnu) gives (round to nearest, ties up;
    // non-saturating), with the OCP element handling (§4.7).
    {"nearest", "lowbit: E8M0 round-to-nearest of amax * fp32(1/max_elem) (§4.7)",
     ScaleRule::kMxNearest, false, false, AmaxNan::kPropagate, ElementStep::kMultiply,
     SaturatingElements(RoundingMode::kNearestEven, NanSign::kKeep), false},
};

// The concrete MX formats, [OCP-MX §5.2 Table 1]: k = 32, an E8M0 scale.
struct MxFormat {
  const char* name;
  const FormatSpec& element;
  int implied_exponent;  // MXINT8: code * 2^-6 ([MSX] _get_format_params, §5.2)
};
inline constexpr MxFormat kMxFormats[] = {
    {"mxfp8_e4m3", kE4m3, 0}, {"mxfp8_e5m2", kE5m2, 0}, {"mxfp6_e2m3", kE2m3, 0},
    {"mxfp6_e3m2", kE3m2, 0}, {"mxfp4", kE2m1, 0},      {"mxint8", kInt8, -6},
};
inline constexpr int kMxBlockSize = 32;

// Exponent of the largest power of two not above the element's max finite
// value ("emax_elem", OCP MX §6.3): the top finite exponent field minus the
// bias; 0 for integer elements.
constexpr int ElementEmax(const FormatSpec& f) {
  return f.IsFloat() ? f.MaxFiniteExponentField() - f.bias : 0;
}

constexpr Recipe MakeMxRecipe(const MxFormat& format, const MxProfile& profile) {
  Recipe r{};
  r.name = format.name;
  r.profile = profile.name;
  r.source = profile.source;
  r.element = format.element;
  r.element_encode = profile.element;
  r.layout = {Geometry::kBlock1d, kMxBlockSize, 0};
  r.scale_format = kE8m0;
  r.scale_rule = profile.rule;
  r.amax_nan = profile.amax_nan;
  r.element_step = profile.step;
  r.packing = format.element.total_bits == 4 ? Packing::kNibblesLowFirst : Packing::kOnePerByte;
  r.element_emax = ElementEmax(format.element);
  r.element_implied_exponent = format.implied_exponent;
  // MXINT8 uses +-127, never -128 ([MSX], §5.2).
  r.qmin = format.element.IsFloat() ? 0 : -static_cast<int>(format.element.IntMax());
  r.qmax = format.element.IsFloat() ? 0 : static_cast<int>(format.element.IntMax());
  r.scale_saturate = profile.scale_saturate;
  r.zero_amax_as_min_normal = profile.zero_amax_as_min_normal;
  return r;
}

// ---- NVFP4: E2M1 elements, blocks of 16, UE4M3 block scale, FP32 tensor scale

inline constexpr int kNvfp4BlockSize = 16;

// The three implementations differ only in their scale rule (and what it
// implies: element step, tensor scale, dequantize order, quirks); one row
// each, read by the catalog.
struct Nvfp4Profile {
  const char* name;
  const char* source;
  ScaleRule rule;
};
inline constexpr Nvfp4Profile kNvfp4Profiles[] = {
    {"te", "[TE] core_nvfp4.cuh / quantize_transpose_nvfp4.cuh", ScaleRule::kNvfp4Te},
    {"ao", "[AO] nvfp4_quantize before 0.18.0 (@36027d8): x / (pts * scale); 0.18.0 x * ((1/pts) / scale)",
     ScaleRule::kNvfp4Torchao},
    {"modelopt", "[MO] NVFP4QTensor.quantize, scale >= 2^-9 only (nvidia-modelopt 0.47.0 also clamps to 448)",
     ScaleRule::kNvfp4ModelOpt},
    // The versions measured live (tests/peers/): torchao 0.18.0 multiplies by
    // (1 / pts) / fp8_scale (nvfp4_tensor.py nvfp4_quantize); ModelOpt 0.47.0
    // clamps the block scale to [2^-9, 448] (nvfp4_tensor.py
    // _cast_per_block_scale_to_fp8).
    {"ao-0.18", "[AO] nvfp4_tensor.nvfp4_quantize, torchao 0.18.0: x * ((1 / pts) / fp8_scale)",
     ScaleRule::kNvfp4Torchao018},
    {"modelopt-0.47", "[MO] _cast_per_block_scale_to_fp8, nvidia-modelopt 0.47.0: block scale clamped to [2^-9, 448]",
     ScaleRule::kNvfp4ModelOpt047},
};

constexpr Recipe MakeNvfp4Recipe(const char* profile, const char* source, ScaleRule rule) {
  Recipe r{};
  r.name = "nvfp4";
  r.profile = profile;
  r.source = source;
  // Local copies: device code may build this recipe at run time and cannot
  // read the namespace-scope specs there.
  constexpr FormatSpec kElement = kE2m1;
  constexpr FormatSpec kScale = kUe4m3;
  r.element = kElement;
  r.element_encode = SatfiniteElements();  // RNE; E2M1 saturates; NaN -> +6
  r.layout = {Geometry::kBlock1d, kNvfp4BlockSize, 0};
  r.scale_format = kScale;
  r.scale_rule = rule;
  r.packing = Packing::kNibblesLowFirst;
  if (rule == ScaleRule::kNvfp4Te) {
    r.amax_nan = AmaxNan::kIgnore;
    r.element_step = ElementStep::kMultiply;
    r.tensor_scale = TensorScaleRule::kTeGlobalEncode;
    r.dequantize_order = DequantizeOrder::kElementTimesScaleThenTensor;
  } else {
    r.amax_nan = AmaxNan::kPropagate;
    r.element_step = ElementStep::kDivide;
    r.tensor_scale = TensorScaleRule::kAmaxOverRange;
    r.dequantize_order = DequantizeOrder::kElementTimesScaleTensorProduct;
    const bool torchao = rule == ScaleRule::kNvfp4Torchao || rule == ScaleRule::kNvfp4Torchao018;
    r.element_quirk = torchao ? ElementQuirk::kClampToMax : ElementQuirk::kNegativeZeroAsPositive;
    // torchao 0.18 multiplies by a reciprocal; the others divide.
    if (rule == ScaleRule::kNvfp4Torchao018) r.element_step = ElementStep::kMultiply;
  }
  return r;
}

constexpr Recipe MakeNvfp4Recipe(const Nvfp4Profile& p) { return MakeNvfp4Recipe(p.name, p.source, p.rule); }

// ---- scaled INT / FP8: an FP32 scale (and zero point) per group ------------

// torch.finfo(torch.float32).eps = 2^-23: the default eps of [AO]
// _choose_qparams_affine for FP32 input ("if eps is None: eps =
// torch.finfo(input.dtype).eps"). docs/formats-reference.md §8.2 names
// finfo.smallest_normal instead; the source text read says eps, so eps it is.
inline constexpr float kF32Epsilon = 1.1920928955078125e-7f;

struct ScaledProfile {
  const char* name;
  const char* source;
  ScaleRule rule;
  RoundingMode rounding;
  float eps;
  bool pow2_scale;
  bool scalar_divisor_as_reciprocal;
  int qmin_offset;  // 0: the element's full range; 1: symmetric [-qmax, qmax]
  // The scale is stored as FP16 and the checkpoint packer recomputes the
  // integers with it (ElementQuirk::kRepackWithFp16Scale; GPTQ / AWQ).
  bool fp16_scale = false;
  // vLLM calc_kv_scales: the range the amax is divided by (Recipe::amax_divisor).
  int amax_divisor = 0;
};

constexpr Recipe MakeScaledRecipe(const FormatSpec& element, const ScaledProfile& p) {
  Recipe r{};
  r.name = element.name;
  r.profile = p.name;
  r.source = p.source;
  r.element = element;
  r.layout = {Geometry::kPerTensor, 0, 0};
  r.scale_format = kFp32;
  r.scale_rule = p.rule;
  r.eps = p.eps;
  r.pow2_scale = p.pow2_scale;
  r.scalar_divisor_as_reciprocal = p.scalar_divisor_as_reciprocal;
  r.packing = element.total_bits == 4 ? Packing::kNibblesLowFirst : Packing::kOnePerByte;
  if (p.rule == ScaleRule::kTeFp8) {
    r.element_encode = SatfiniteElements();
    r.amax_nan = AmaxNan::kIgnore;  // [TE] fmaxf
    r.element_step = ElementStep::kMultiply;
    return r;
  }
  if (p.rule == ScaleRule::kVllmFp8KvCache) {
    r.element_encode = SatfiniteElements();  // __NV_SATFINITE
    r.amax_nan = AmaxNan::kIgnore;           // (no statistic is read)
    r.element_step = ElementStep::kDivide;   // a / scale
    return r;
  }
  if (p.rule == ScaleRule::kVllmFp8KvCalculated) {
    r.element_encode = SatfiniteElements();  // the KV cache's __NV_SATFINITE
    r.amax_nan = AmaxNan::kPropagate;        // torch.abs(x).max(): a NaN wins
    r.element_step = ElementStep::kDivide;   // a / scale
    r.amax_divisor = p.amax_divisor;
    return r;
  }
  if (p.rule == ScaleRule::kVllmFp8PerTensor || p.rule == ScaleRule::kVllmFp8PerToken) {
    // static_cast<c10::Float8_e4m3fn>(r): RNE; the clamp before it leaves
    // no overflow and no NaN to convert.
    r.element_encode = SatfiniteElements();
    r.amax_nan = AmaxNan::kIgnore;  // fmaxf / cub::Max over fabsf
    r.element_quirk = ElementQuirk::kFminfFmaxfClamp;
    r.element_step = p.rule == ScaleRule::kVllmFp8PerTensor ? ElementStep::kMultiply : ElementStep::kDivide;
    return r;
  }
  r.element_encode = IntegerElements(p.rounding);
  r.amax_nan = AmaxNan::kPropagate;
  r.qmin = static_cast<int>(element.IntMin()) + p.qmin_offset;
  r.qmax = static_cast<int>(element.IntMax());
  const bool ao = p.rule == ScaleRule::kAoSymmetric || p.rule == ScaleRule::kAoAsymmetric;
  r.element_step = ao ? ElementStep::kMultiply : ElementStep::kDivide;
  r.zero_point = p.rule == ScaleRule::kAoAsymmetric || p.rule == ScaleRule::kGptqSymmetric ||
                         p.rule == ScaleRule::kGptqAsymmetric || p.rule == ScaleRule::kAwqAsymmetric
                     ? ZeroPoint::kInteger
                     : ZeroPoint::kNone;
  if (p.fp16_scale) {
    constexpr FormatSpec kScale = kFp16;  // a local copy device code can read
    r.scale_format = kScale;
    r.element_quirk = ElementQuirk::kRepackWithFp16Scale;
  }
  return r;
}

inline constexpr ScaledProfile kTeFp8Profile{
    "te", "[TE] recipe_common.cuh compute_scale_from_amax, current scaling", ScaleRule::kTeFp8,
    RoundingMode::kNearestEven, 0.0f, false, false, 0};
inline constexpr ScaledProfile kTeFp8Pow2Profile{
    "te-pow2", "[TE] compute_scale_from_amax, force_pow_2_scales", ScaleRule::kTeFp8,
    RoundingMode::kNearestEven, 0.0f, true, false, 0};
inline constexpr ScaledProfile kAoSymProfile{
    "ao-sym",
    "[AO] _choose_qparams_affine SYMMETRIC, eps 2^-23 (@36027d8; live: torchao 0.18.0)", ScaleRule::kAoSymmetric,
    RoundingMode::kNearestEven, kF32Epsilon, false, false, 0};
inline constexpr ScaledProfile kAoAsymProfile{
    "ao-asym",
    "[AO] _choose_qparams_affine ASYMMETRIC, eps 2^-23 (@36027d8; live: torchao 0.18.0)",
    ScaleRule::kAoAsymmetric,
    RoundingMode::kNearestEven, kF32Epsilon, false, false, 0};
inline constexpr ScaledProfile kAoSymCudaProfile{
    "ao-sym-cuda", "[AO] SYMMETRIC with torch CUDA scalar division (x * fp32(1/d))",
    ScaleRule::kAoSymmetric, RoundingMode::kNearestEven, kF32Epsilon, false, true, 0};
inline constexpr ScaledProfile kAoAsymCudaProfile{
    "ao-asym-cuda", "[AO] ASYMMETRIC with torch CUDA scalar division (x * fp32(1/d))",
    ScaleRule::kAoAsymmetric, RoundingMode::kNearestEven, kF32Epsilon, false, true, 0};
inline constexpr ScaledProfile kGptqSymProfile{
    "gptq-sym", "[GPTQ] quantizer.py Quantizer.find_params(sym=True), quantize",
    ScaleRule::kGptqSymmetric, RoundingMode::kNearestEven, 0.0f, false, false, 0};
inline constexpr ScaledProfile kGptqAsymProfile{
    "gptq-asym", "[GPTQ] quantizer.py Quantizer.find_params(sym=False), quantize",
    ScaleRule::kGptqAsymmetric, RoundingMode::kNearestEven, 0.0f, false, false, 0};
// The common kernel ("LLM.int8 / TensorRT style", §8.2): amax / qmax,
// [-qmax, qmax], half-even; "-away" with C roundf (half-away, §8.1).
inline constexpr ScaledProfile kCommonProfile{
    "common", "docs/formats-reference.md §8.2 common kernel: amax/qmax, [-qmax,qmax], half-even",
    ScaleRule::kAmaxOverQmax, RoundingMode::kNearestEven, 0.0f, false, false, 1};
inline constexpr ScaledProfile kCommonAwayProfile{
    "common-away", "docs/formats-reference.md §8.2 common kernel with C roundf (half-away, §8.1)",
    ScaleRule::kAmaxOverQmax, RoundingMode::kNearestAway, 0.0f, false, false, 1};

// vLLM FP8 (vllm-project/vllm @0794945f csrc/quantization/fp8/common.cu,
// @74d6737a common.cuh scaled_fp8_conversion): the scale amax / 448 is what
// is stored (the dequant scale). Per tensor: x * (1.0f / scale); per token:
// x / scale with the floor 1 / (448 * 512). The profile fixes the arithmetic,
// the layout the groups: "vllm" is listed per tensor, per row and per g128 like
// every scaled recipe; vLLM itself runs it per tensor, "vllm-token" per row.
inline constexpr ScaledProfile kVllmFp8Profile{
    "vllm",
    "[vLLM] @0794945f csrc/quantization/fp8/common.cu dynamic_scaled_fp8_quant + scaled_fp8_quant_kernel "
    "(scale = amax / 448, x * (1.0f / scale), fminf/fmaxf clamp)",
    ScaleRule::kVllmFp8PerTensor, RoundingMode::kNearestEven, 0.0f, false, false, 0};
inline constexpr ScaledProfile kVllmFp8TokenProfile{
    "vllm-token",
    "[vLLM] @0794945f csrc/quantization/fp8/common.cu dynamic_per_token_scaled_fp8_quant_kernel "
    "(scale = fmaxf(amax / 448, 1 / (448 * 512)), x / scale, fminf/fmaxf clamp)",
    ScaleRule::kVllmFp8PerToken, RoundingMode::kNearestEven, 0.0f, false, false, 0};
// vLLM's FP8 KV cache (vllm-project/vllm @2fed15b1
// csrc/quantization/fp8/nvidia/quant_utils.cuh scaled_vec_conversion<uint8_t,
// float>: __nv_cvt_float_to_fp8(a / scale, __NV_SATFINITE, E4M3)): the scale
// is static, 1.0 unless calibrated k_scale / v_scale are given (per tensor,
// or one per head with the layout gHEAD_SIZE).
inline constexpr ScaledProfile kVllmFp8KvProfile{
    "vllm-kv",
    "[vLLM] @2fed15b1 csrc/quantization/fp8/nvidia/quant_utils.cuh scaled_vec_conversion "
    "(x / scale, __NV_SATFINITE; scale 1.0 unless given)",
    ScaleRule::kVllmFp8KvCache, RoundingMode::kNearestEven, 0.0f, false, false, 0};
// vLLM's KV-scale calibration (calculate_kv_scales; vllm-project/vllm
// @004a5da0 vllm/attention/layer.py Attention.calc_kv_scales and
// @f218f9c2 vllm/envs.py K_SCALE_CONSTANT = 200, V_SCALE_CONSTANT = 100; queries use
// Q_SCALE_CONSTANT = 200, the key's rule): one scale computed from the data,
// amax * fp32(1 / range) as torch on CUDA divides by the CPU range tensor,
// then the KV cache's x / scale with __NV_SATFINITE.
inline constexpr ScaledProfile kVllmFp8KvCalcKeyProfile{
    "vllm-kv-calc-k",
    "[vLLM] @004a5da0 vllm/attention/layer.py Attention.calc_kv_scales (k_scale = abs(key).max() / 200, "
    "on CUDA amax * fp32(1 / 200)) + @2fed15b1 quant_utils.cuh scaled_vec_conversion (x / scale, __NV_SATFINITE)",
    ScaleRule::kVllmFp8KvCalculated, RoundingMode::kNearestEven, 0.0f, false, true, 0, false, 200};
inline constexpr ScaledProfile kVllmFp8KvCalcValueProfile{
    "vllm-kv-calc-v",
    "[vLLM] @004a5da0 vllm/attention/layer.py Attention.calc_kv_scales (v_scale = abs(value).max() / 100, "
    "on CUDA amax * fp32(1 / 100)) + @2fed15b1 quant_utils.cuh scaled_vec_conversion (x / scale, __NV_SATFINITE)",
    ScaleRule::kVllmFp8KvCalculated, RoundingMode::kNearestEven, 0.0f, false, true, 0, false, 100};
// INT8 per-channel symmetric as PyTorch code commonly writes it:
// scale = w.abs().amax(dim=1).clamp(min=1e-10) / 127.0; q = (w /
// scale).round().clamp(-128, 127) (e.g. vLLM's DynamicInt8LMHeadMethod
// .process_weights_after_loading). torch.round is half-even.
inline constexpr ScaledProfile kAmaxClampProfile{
    "amax-clamp",
    "PyTorch idiom amax.clamp(min=1e-10) / 127, clamp(round(w / s), -128, 127) (vLLM "
    "DynamicInt8LMHeadMethod.process_weights_after_loading)",
    ScaleRule::kAmaxOverQmaxFloored, RoundingMode::kNearestEven, 1e-10f, false, false, 0};

// GPTQ and AWQ as their checkpoints store them (docs/profiles.md
// "FP16 scales (GPTQ and AWQ checkpoints)"): the FP32 scale of
// the quantizer, stored as FP16 (`scales.clone().half()`), and the integers
// the packer recomputes from the fake-quantized weight with that FP16 scale,
// q = round((W + zeros * scales) / scales_fp16).to(int), no clamp:
//   AutoGPTQ @179776b auto_gptq/nn_modules/qlinear/qlinear_cuda_old.py
//   QuantLinear.pack (W the output of GPTQ quant.py quantize(): scale * (q -
//   zero)); AutoAWQ @030fe2a awq/modules/linear/gemm.py
//   WQLinear_GEMM.from_linear (W the output of awq/quantize/quantizer.py
//   pseudo_quantize_tensor: (q - zeros) * scales).
// For a normal FP16 scale this gives back the quantizer's own integer q0 (the
// ratio fp32 / fp16 scale is within 2^-11 of 1, so |q - q0| < 1/2 for q0 <=
// 15); where the FP16 scale is subnormal, 0 or Inf it does not, and the
// recomputed q is what the checkpoint holds (docs/profiles.md "FP16 scales").
// GPTQ: the FP32 quantizer (W in FP32, as lowbit's input is). AWQ: AutoAWQ
// casts the layer to FP16 first (@0222940 quantizer.py _apply_quant), so
// its scale, zero and both integer steps are FP16 arithmetic, and its scale
// is already FP16. Elements are UINT4 codes, the low 4 bits of q (what the
// packer ORs into its nibble).
inline constexpr ScaledProfile kGptqSymFp16Profile{
    "gptq-sym-fp16",
    "[GPTQ] quant.py Quantizer(sym=True) + AutoGPTQ @179776b qlinear_cuda_old.py QuantLinear.pack (FP16 scales)",
    ScaleRule::kGptqSymmetric, RoundingMode::kNearestEven, 0.0f, false, false, 0, true};
inline constexpr ScaledProfile kGptqAsymFp16Profile{
    "gptq-asym-fp16",
    "[GPTQ] quant.py Quantizer(sym=False) + AutoGPTQ @179776b qlinear_cuda_old.py QuantLinear.pack (FP16 scales)",
    ScaleRule::kGptqAsymmetric, RoundingMode::kNearestEven, 0.0f, false, false, 0, true};
// pseudo_quantize_tensor's clamp(min=1e-5), against the FP16 tensor:
// Half(1e-5) = 168 * 2^-24 (steps.h rounds eps to FP16).
inline constexpr ScaledProfile kAwqFp16Profile{
    "awq-fp16",
    "[AWQ] AutoAWQ @0222940 quantizer.py _apply_quant (FP16 layer) + pseudo_quantize_tensor(zero_point=True), "
    "@030fe2a gemm.py WQLinear_GEMM.from_linear (FP16 scales, FP16 arithmetic)",
    ScaleRule::kAwqAsymmetric, RoundingMode::kNearestEven, 1e-5f, false, false, 0, true};

struct ScaledPair {
  const FormatSpec& element;
  const ScaledProfile& profile;
};
// Which elements each scaled profile is listed with: TE's FP8 for E4M3 and
// E5M2; torchao's symmetric schemes for INT8 / INT4, asymmetric for INT8 /
// UINT4; GPTQ for UINT4; the common kernel for INT8 / INT4.
inline constexpr ScaledPair kScaledPairs[] = {
    {kE4m3, kTeFp8Profile},      {kE4m3, kTeFp8Pow2Profile},   {kE5m2, kTeFp8Profile},
    {kE5m2, kTeFp8Pow2Profile},  {kInt8, kAoSymProfile},       {kInt4, kAoSymProfile},
    {kInt8, kAoAsymProfile},     {kUint4, kAoAsymProfile},     {kInt8, kAoSymCudaProfile},
    {kInt4, kAoSymCudaProfile},  {kInt8, kAoAsymCudaProfile},  {kUint4, kAoAsymCudaProfile},
    {kUint4, kGptqSymProfile},   {kUint4, kGptqAsymProfile},   {kInt8, kCommonProfile},
    {kInt8, kCommonAwayProfile}, {kInt4, kCommonProfile},      {kInt4, kCommonAwayProfile},
};

// The scaled recipes of the serving libraries' profiles (vLLM FP8, INT8
// amax.clamp; docs/profiles.md, the Scaled table). Kept apart from
// kScaledPairs because the tuned GPU integer kernels were written for
// kScaledPairs' rules; the GPU runs these on the model recipe kernels (cuda/include/lowbit/cuda/
// scale_rule_kernels.h).
inline constexpr ScaledPair kServingScaledPairs[] = {
    {kE4m3, kVllmFp8Profile},
    {kE4m3, kVllmFp8TokenProfile},
    {kE4m3, kVllmFp8KvProfile},
    {kE4m3, kVllmFp8KvCalcKeyProfile},
    {kE4m3, kVllmFp8KvCalcValueProfile},
    {kInt8, kAmaxClampProfile},
    {kUint4, kGptqSymFp16Profile},
    {kUint4, kGptqAsymFp16Profile},
    {kUint4, kAwqFp16Profile},
};

// ---- the catalog -------------------------------------------------------------

namespace detail {

constexpr int CountMxRecipes() {
  int n = 0;
  for (const MxFormat& f : kMxFormats) {
    for (const MxProfile& p : kMxProfiles) n += f.element.IsFloat() || p.integer_elements;
  }
  return n;
}

inline constexpr int kRecipeCount = CountMxRecipes() + static_cast<int>(std::size(kNvfp4Profiles)) +
                                    static_cast<int>(std::size(kScaledPairs)) +
                                    static_cast<int>(std::size(kServingScaledPairs));

constexpr std::array<Recipe, kRecipeCount> BuildCatalog() {
  std::array<Recipe, kRecipeCount> all{};
  int n = 0;
  for (const MxFormat& f : kMxFormats) {
    for (const MxProfile& p : kMxProfiles) {
      if (f.element.IsFloat() || p.integer_elements) all[n++] = MakeMxRecipe(f, p);
    }
  }
  for (const Nvfp4Profile& p : kNvfp4Profiles) all[n++] = MakeNvfp4Recipe(p);
  for (const ScaledPair& s : kScaledPairs) all[n++] = MakeScaledRecipe(s.element, s.profile);
  for (const ScaledPair& s : kServingScaledPairs) all[n++] = MakeScaledRecipe(s.element, s.profile);
  return all;
}

}  // namespace detail

// Every recipe, MX first (format by format), then NVFP4, then scaled.
inline constexpr std::array<Recipe, detail::kRecipeCount> kAllRecipes = detail::BuildCatalog();

// 10 MX profiles over 5 float formats and 3 of them over MXINT8; 5 NVFP4; 18
// scaled (10 profiles over the elements each is listed with) and 9 more
// (vLLM FP8 x5, INT8 amax-clamp, GPTQ / AWQ with FP16 scales x3).
static_assert(std::size(kMxProfiles) == 10 && detail::CountMxRecipes() == 10 * 5 + 3);
static_assert(std::size(kNvfp4Profiles) == 5);
static_assert(std::size(kScaledPairs) == 18 && std::size(kServingScaledPairs) == 9);
static_assert(detail::kRecipeCount == 53 + 5 + 18 + 9);

}  // namespace lowbit::recipe
