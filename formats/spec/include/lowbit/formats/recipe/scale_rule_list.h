// The single list of scale rules: how the scale of a block or group is chosen
// from its statistics. Each row states the rule's family (what its scale is
// stored as), which statistics it reads, the name every tool prints (the CLI,
// the harness's diagnosis, Python's Recipe.scale_rule) and the formula
// `lowbit explain` shows. Nothing is read off a rule's position in the list.
// The arithmetic of each rule is in recipe/choose_scale.h and the file of its
// family it includes (mx_scale.h, ...); docs/adding-a-recipe.md
// lists every file a new rule touches.
//
// Spec data only (docs/design.md "Three roles, kept apart").
#pragma once

#include <cstdint>
#include <string_view>

namespace lowbit::recipe {

// What a scale is stored as; every scale rule belongs to exactly one family.
// X(Id, name, description).
#define LOWBIT_RECIPE_FAMILIES(X)                                      \
  X(Mx, "mx", "one E8M0 byte per block")                               \
  X(Nvfp4, "nvfp4", "one UE4M3 byte per block and one FP32 tensor scale") \
  X(Scaled, "scaled", "one FP32 scale (and maybe an integer zero point) per group")

enum class Family : std::uint8_t {
#define LOWBIT_FAMILY_ENUM_ENTRY(Id, name, description) k##Id,
  LOWBIT_RECIPE_FAMILIES(LOWBIT_FAMILY_ENUM_ENTRY)
#undef LOWBIT_FAMILY_ENUM_ENTRY
};

// Which statistics of a block or group a rule's scale depends on; a kernel
// may keep only the amax for kAmax and kNothing (recipe/scale.h
// ScaleReadsOnlyAmax; proptests/model/scale_reads_only_amax_test.cc checks
// every catalog recipe against its row both ways).
enum class ScaleReads : std::uint8_t {
  kAmax,     // the amax alone (and, for NVFP4, the tensor scale)
  kMinMax,   // the minimum and the maximum
  kNothing,  // no statistic: a static scale
};

// X(Id, family, reads, name, formula) for every scale rule. The comment
// above a row cites the implementation it reproduces
// (docs/formats-reference.md §5.3 MX, §6 NVFP4, §7 and §8.2 scaled).
// Comments inside the macro are /* */ so that the line continuations hold.
#define LOWBIT_SCALE_RULES(X)                                                                                     \
  /* [OCP-MX §6.3] largest power of two <= amax over 2^emax_elem, read from the FP32 exponent bits (never a  */ \
  /* float log2).                                                                                             */ \
  X(MxFloor, kMx, kAmax, "mx-floor", "e = floor(log2 amax) - emax, from the FP32 exponent bits")                 \
  /* torchao CEIL: the exponent field plus one when the mantissa is not 0.                                    */ \
  X(MxCeil, kMx, kAmax, "mx-ceil", "e = exponent(amax) + (mantissa != 0) - emax")                                \
  /* torchao EVEN: amax's significand rounded half-up to the element's mantissa width first, then as floor.  */ \
  X(MxEven, kMx, kAmax, "mx-even", "round amax to the element's mantissa width, then floor")                      \
  /* NVIDIA RCEIL: the E8M0 round-up conversion of amax * fp32(1/max_elem).                                   */ \
  X(MxRceil, kMx, kAmax, "mx-rceil", "X = round_up_pow2(fp32(amax * fp32(1/max_elem)))")                         \
  /* The E8M0 round-to-nearest (ties up) conversion of the same product.                                      */ \
  X(MxNearest, kMx, kAmax, "mx-nearest", "X = nearest_pow2(fp32(amax * fp32(1/max_elem))), 1.5*2^k ties up")     \
  /* torchao 0.18 _to_mx_rceil's eager (CPU, and CUDA without torch.compile on sm_100) fallback: descale =   */ \
  /* amax / max_elem, e = clamp(ceil(log2(descale)) in FP32, -127, 127); NaN -> 0xFF, Inf -> 0xFE; the       */ \
  /* element factor of code 0 is 1.0, not 2^127. FP32 log2 of a descale a few ulps above 2^k rounds to k, so */ \
  /* it picks the smaller scale there (docs/formats-reference.md §5.3).                                       */ \
  X(MxRceilEager, kMx, kAmax, "mx-rceil-eager",                                                                  \
    "torchao 0.18 CPU: descale = fp32(amax / max_elem), e = clamp(ceil(log2f(descale)), -127, 127) in FP32 "     \
    "(a few ulps above 2^k gives k); NaN -> 0xff, Inf -> 0xfe; code 0 scales by 1")                              \
  /* TransformerEngine: block_amax * (S_enc * fp32(1/6)), cvt.rn.satfinite.                                   */ \
  X(Nvfp4Te, kNvfp4, kAmax, "nvfp4-te",                                                                          \
    "block scale = E4M3 satfinite(block amax * (S_enc * fp32(1/6))), S_enc from the tensor amax "                \
    "(2688 / amax); x * fminf(1 / (block scale * S_dec), FLT_MAX)")                                              \
  /* torchao: clamp((amax / 6) / per_tensor_scale, 2^-6, 448), then E4M3.                                     */ \
  X(Nvfp4Torchao, kNvfp4, kAmax, "nvfp4-torchao",                                                                \
    "block scale = E4M3(clamp((block amax / 6) / per_tensor_scale, 2^-6, 448)); "                                \
    "x / (per_tensor_scale * block scale)")                                                                      \
  /* ModelOpt: amax / (6 * wsf2); 0 -> 1; at least 2^-9; then E4M3.                                           */ \
  X(Nvfp4ModelOpt, kNvfp4, kAmax, "nvfp4-modelopt",                                                              \
    "block scale = E4M3(max(block amax / (6 * wsf2), 2^-9)), 0 -> 1; x / (block scale * wsf2)")                  \
  /* torchao 0.18.0 nvfp4_quantize: the scale as nvfp4-torchao, the element step x * ((1 / pts) / fp8_scale) */ \
  /* ("to match the MSLK triton kernel").                                                                     */ \
  X(Nvfp4Torchao018, kNvfp4, kAmax, "nvfp4-torchao-0.18",                                                        \
    "block scale as nvfp4-torchao; x * fp32(fp32(1 / per_tensor_scale) / block scale)")                          \
  /* nvidia-modelopt 0.47.0 _cast_per_block_scale_to_fp8: as nvfp4-modelopt, and the block scale clamped to  */ \
  /* at most 448 too (0x7E, never NaN).                                                                       */ \
  X(Nvfp4ModelOpt047, kNvfp4, kAmax, "nvfp4-modelopt-0.47",                                                      \
    "block scale = E4M3(clamp(block amax / (6 * wsf2), 2^-9, 448)), 0 -> 1; x / (block scale * wsf2)")           \
  /* TE current scaling: scale = max_fp8 / amax (recipe_common.cuh).                                          */ \
  X(TeFp8, kScaled, kAmax, "te-fp8",                                                                             \
    "scale = max_fp8 / max(amax, eps) (amax 0/Inf/NaN -> 1, Inf -> FLT_MAX); y = x * scale; satfinite cvt")      \
  /* torchao MappingType.SYMMETRIC / ASYMMETRIC (_choose_qparams_affine).                                     */ \
  X(AoSymmetric, kScaled, kMinMax, "ao-symmetric",                                                               \
    "scale = max(amax / ((qmax - qmin) / 2), eps); y = x * fp32(1 / scale); q = clamp(round(y) + zp)")           \
  X(AoAsymmetric, kScaled, kMinMax, "ao-asymmetric",                                                             \
    "scale = max((max+ - min-) / (qmax - qmin), eps); zp = clamp(qmin - round(min- / scale)); "                  \
    "y = x * fp32(1 / scale)")                                                                                   \
  /* GPTQ Quantizer.find_params(sym=True / False).                                                            */ \
  X(GptqSymmetric, kScaled, kMinMax, "gptq-symmetric",                                                           \
    "xmin = -xmax if any x < 0; scale = (xmax - xmin) / maxq; zero = (maxq + 1) / 2; y = x / scale")             \
  X(GptqAsymmetric, kScaled, kMinMax, "gptq-asymmetric",                                                         \
    "scale = (xmax - xmin) / maxq; zero = round(-xmin / scale); y = x / scale")                                  \
  /* The common kernel: scale = amax / qmax, an all-zero group gets scale 1.                                  */ \
  X(AmaxOverQmax, kScaled, kAmax, "amax-over-qmax",                                                              \
    "scale = amax / qmax (0 -> 1); y = x / scale; q = clamp(round(y), -qmax, qmax)")                             \
  /* vLLM FP8, per tensor (dynamic_scaled_fp8_quant): scale = amax / 448 (fmaxf amax, no floor), stored as   */ \
  /* the dequant scale; y = x * (1.0f / scale); fmaxf(-448, fminf(y, 448)) (NaN -> +448); E4M3 RNE.          */ \
  X(VllmFp8PerTensor, kScaled, kAmax, "vllm-fp8-per-tensor",                                                     \
    "scale = amax / 448 (stored, no floor; or the given scale); y = x * fp32(1 / scale); "                       \
    "fmaxf(-448, fminf(y, 448)) (NaN -> +448); E4M3 RNE")                                                        \
  /* vLLM FP8, per token (dynamic_per_token_scaled_fp8_quant): scale = fmaxf(amax / 448, 1 / (448 * 512));   */ \
  /* y = x / scale; the same clamp.                                                                           */ \
  X(VllmFp8PerToken, kScaled, kAmax, "vllm-fp8-per-token",                                                       \
    "scale = fmaxf(amax / 448, 1 / (448 * 512)) (or the given scale); y = x / scale; "                           \
    "fmaxf(-448, fminf(y, 448)); E4M3 RNE")                                                                      \
  /* INT8 per-channel symmetric, the common PyTorch formulation: scale = amax / qmax clamped to >= eps       */ \
  /* (1e-10); q = clamp(round(x / scale), qmin, qmax) over the element's full range [-128, 127].             */ \
  X(AmaxOverQmaxFloored, kScaled, kAmax, "amax-clamp-over-qmax",                                                 \
    "scale = max(amax, 1e-10) / 127; q = clamp(round(x / scale), -128, 127) (half even)")                       \
  /* vLLM FP8 KV cache (reshape_and_cache, scaled_convert): a static scale, 1.0 unless one is given (vLLM's  */ \
  /* k_scale / v_scale default); y = x / scale; __nv_cvt_float_to_fp8(y, __NV_SATFINITE) (NaN -> 0x7F,      */ \
  /* +-Inf -> +-448). Per tensor, or per head: groups of head_size along a row (gN).                          */ \
  X(VllmFp8KvCache, kScaled, kNothing, "vllm-fp8-kv-cache",                                                      \
    "a static scale (1.0, or the given k_scale / v_scale, per tensor or per head); "                             \
    "y = x / scale; __nv_cvt_float_to_fp8(y, __NV_SATFINITE) (NaN -> 0x7f, +-Inf -> +-448)")                     \
  /* AutoAWQ pseudo_quantize_tensor(zero_point=True) (casper-hansen/AutoAWQ @0222940                          */ \
  /* awq/quantize/quantizer.py) on the layer cast to FP16 (_apply_quant: .half()), every operation rounded   */ \
  /* to FP16: max = amax(w), min = amin(w) (no clamp to 0, unlike GPTQ), scale = (max -                       */ \
  /* min).clamp(min=1e-5) / maxq, zero = clamp(-round(min / scale), 0, maxq); q = clamp(round(w / scale) +  */ \
  /* zero, 0, maxq) (recipe/element_encode.h EncodeAwqElement).                                                      */ \
  X(AwqAsymmetric, kScaled, kMinMax, "awq-asymmetric",                                                           \
    "every step in FP16: scale = max(max - min, 1e-5) / maxq; zero = clamp(-round(min / scale), 0, maxq); "     \
    "q = clamp(round(x / scale) + zero, 0, maxq)")                                                               \
  /* vLLM's KV-scale calibration (vllm-project/vllm @004a5da0 vllm/attention/layer.py                         */ \
  /* Attention.calc_kv_scales, run once when calculate_kv_scales is set): scale = torch.abs(x).max() /       */ \
  /* range, where range is a CPU float32 tensor of the integer Recipe::amax_divisor (K_SCALE_CONSTANT 200   */ \
  /* for keys, V_SCALE_CONSTANT 100 for values). The amax is a CUDA tensor, so ATen's div_true_kernel_cuda  */ \
  /* sees a CPU scalar divisor and computes amax * fp32(1 / range), not amax / range                          */ \
  /* (Recipe::scalar_divisor_as_reciprocal); torch.max lets a NaN win. The scale is then the KV cache's      */ \
  /* static one (vllm-fp8-kv-cache): y = x / scale, __NV_SATFINITE.                                           */ \
  X(VllmFp8KvCalculated, kScaled, kAmax, "vllm-fp8-kv-calculated",                                               \
    "scale = amax * fp32(1 / range) (torch on CUDA: abs(x).max() / the CPU range tensor, NaN wins, no floor); "  \
    "y = x / scale; __nv_cvt_float_to_fp8(y, __NV_SATFINITE)")

enum class ScaleRule : std::uint8_t {
#define LOWBIT_SCALE_RULE_ENUM_ENTRY(Id, family, reads, name, formula) k##Id,
  LOWBIT_SCALE_RULES(LOWBIT_SCALE_RULE_ENUM_ENTRY)
#undef LOWBIT_SCALE_RULE_ENUM_ENTRY
};

inline constexpr ScaleRule kAllScaleRules[] = {
#define LOWBIT_SCALE_RULE_ID_ENTRY(Id, family, reads, name, formula) ScaleRule::k##Id,
    LOWBIT_SCALE_RULES(LOWBIT_SCALE_RULE_ID_ENTRY)
#undef LOWBIT_SCALE_RULE_ID_ENTRY
};
inline constexpr int kScaleRuleCount = sizeof(kAllScaleRules) / sizeof(kAllScaleRules[0]);

// A rule's family and what it reads: switches over the list, so that device
// code (which cannot index a host array at run time) can call them.
constexpr Family FamilyOf(ScaleRule rule) {
  switch (rule) {
#define LOWBIT_SCALE_RULE_FAMILY_CASE(Id, family, reads, name, formula) \
  case ScaleRule::k##Id:                                                \
    return Family::family;
    LOWBIT_SCALE_RULES(LOWBIT_SCALE_RULE_FAMILY_CASE)
#undef LOWBIT_SCALE_RULE_FAMILY_CASE
  }
  return Family::kScaled;  // unreachable for valid rules
}

constexpr ScaleReads ReadsOf(ScaleRule rule) {
  switch (rule) {
#define LOWBIT_SCALE_RULE_READS_CASE(Id, family, reads, name, formula) \
  case ScaleRule::k##Id:                                               \
    return ScaleReads::reads;
    LOWBIT_SCALE_RULES(LOWBIT_SCALE_RULE_READS_CASE)
#undef LOWBIT_SCALE_RULE_READS_CASE
  }
  return ScaleReads::kMinMax;  // unreachable; the safe answer for a kernel
}

// Host only (names and formulas are for printing).
constexpr const char* ScaleRuleName(ScaleRule rule) {
  switch (rule) {
#define LOWBIT_SCALE_RULE_NAME_CASE(Id, family, reads, name, formula) \
  case ScaleRule::k##Id:                                              \
    return name;
    LOWBIT_SCALE_RULES(LOWBIT_SCALE_RULE_NAME_CASE)
#undef LOWBIT_SCALE_RULE_NAME_CASE
  }
  return "?";
}

constexpr const char* ScaleRuleFormula(ScaleRule rule) {
  switch (rule) {
#define LOWBIT_SCALE_RULE_FORMULA_CASE(Id, family, reads, name, formula) \
  case ScaleRule::k##Id:                                                 \
    return formula;
    LOWBIT_SCALE_RULES(LOWBIT_SCALE_RULE_FORMULA_CASE)
#undef LOWBIT_SCALE_RULE_FORMULA_CASE
  }
  return "";
}

constexpr const char* FamilyName(Family family) {
  switch (family) {
#define LOWBIT_FAMILY_NAME_CASE(Id, name, description) \
  case Family::k##Id:                                  \
    return name;
    LOWBIT_RECIPE_FAMILIES(LOWBIT_FAMILY_NAME_CASE)
#undef LOWBIT_FAMILY_NAME_CASE
  }
  return "?";
}

constexpr const char* FamilyDescription(Family family) {
  switch (family) {
#define LOWBIT_FAMILY_DESCRIPTION_CASE(Id, name, description) \
  case Family::k##Id:                                         \
    return description;
    LOWBIT_RECIPE_FAMILIES(LOWBIT_FAMILY_DESCRIPTION_CASE)
#undef LOWBIT_FAMILY_DESCRIPTION_CASE
  }
  return "";
}

// Looks a rule up by its name; false if unknown.
constexpr bool FindScaleRule(std::string_view name, ScaleRule* out) {
  for (ScaleRule rule : kAllScaleRules) {
    if (name == ScaleRuleName(rule)) {
      *out = rule;
      return true;
    }
  }
  return false;
}

}  // namespace lowbit::recipe
