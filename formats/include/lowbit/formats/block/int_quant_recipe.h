// Scaled quantization recipes (docs/formats-reference.md §7, §8.2): INT8 / INT4 / UINT4
// and FP8 elements with one FP32 scale (and, for asymmetric schemes, one
// integer zero point) per tensor, row, group or 2-D block. A recipe is the
// data of one implementation's formula; the formulas themselves, as explicit
// FP32 operations in each source's order, are in int_quant_params.h (scale
// and zero point) and int_quant.h (elements). Where the elements are grouped
// is a layout (int_quant_layout.h), orthogonal to the recipe.
#pragma once

#include <cstdint>
#include <string_view>

#include "lowbit/formats/block/fp32_bits.h"
#include "lowbit/formats/config.h"
#include "lowbit/formats/format_list.h"
#include "lowbit/formats/policy.h"

namespace lowbit::block {

enum class QuantScheme : std::uint8_t {
  // [TE] compute_scale_from_amax: scale = max_fp8 / amax (RN), x * scale,
  // satfinite cvt; the stored scale_inv = 1 / scale is what dequantizes.
  kTeFp8,
  // [AO] MappingType.SYMMETRIC: scale = amax / ((qmax - qmin) / 2), floored
  // at eps; q = clamp(round(x * (1 / scale)) + zp, qmin, qmax), zp = 0.
  kAoSymmetric,
  // [AO] MappingType.ASYMMETRIC: scale = (max(max, 0) - min(min, 0)) /
  // (qmax - qmin), floored; zp = clamp(qmin - round(min_neg / scale)).
  kAoAsymmetric,
  // [GPTQ] Quantizer.find_params(sym=True) + quantize: scale =
  // (xmax - xmin) / maxq with xmin = -xmax only when the row has a negative
  // value; zero = (maxq + 1) / 2; q = clamp(round(x / scale) + zero, 0, maxq).
  kGptqSymmetric,
  // [GPTQ] sym=False: scale = (xmax - xmin) / maxq, zero = round(-xmin / scale).
  kGptqAsymmetric,
  // The common kernel of docs/formats-reference.md §8.2 ("LLM.int8/TensorRT-style"): scale =
  // amax / qmax (FP32 division), q = clamp(round(x / scale), -qmax, qmax).
  // An all-zero group gets scale 1 (docs/formats-reference.md §8.2: "not examined").
  kAmaxOverQmax,
};

struct IntQuantRecipe {
  const char* name;          // profile as the CLI spells it after "FORMAT:"
  const char* source;        // docs/formats-reference.md §0 key and the function reproduced
  QuantScheme scheme;
  const FormatSpec* element;  // kInt8, kInt4, kUint4, kE4m3 or kE5m2
  // Integer code range [qmin, qmax] (FP8: unused, the cvt saturates to max).
  int qmin;
  int qmax;
  // torch.round / rint are half-even; C roundf is half-away (docs/formats-reference.md §8.1).
  RoundingMode rounding;
  // The scale floor: [AO] clamp(scale, min=eps), [TE] amax = max(amax, eps).
  float eps;
  // [TE] force_pow_2_scales: keep only sign and exponent bits of the scale.
  bool pow2_scale;
  AmaxNan amax_nan;
  // torch on CUDA divides an FP32 tensor by a Python float as a multiply by
  // fp32(1 / d): ATen div_true_kernel_cuda, "if the second operand is a CPU
  // scalar, compute a * reciprocal(b)"; CPU divides. [AO]'s
  // `max_val_pos / (float(quant_max - quant_min) / 2)` therefore gives
  // other scale bits on CUDA for most amax values (measured on the GPU
  // machine with torch 2.11; quant_profiles_test pins amax 3). GPTQ's
  // divisor maxq is a tensor, so it divides on both.
  bool scalar_divisor_as_reciprocal = false;
};

// torch.finfo(torch.float32).eps = 2^-23: the default eps of [AO]
// _choose_qparams_affine for FP32 input ("if eps is None: eps =
// torch.finfo(input.dtype).eps"). docs/formats-reference.md §8.2 names finfo.smallest_normal
// instead; the source text read here says eps, so eps it is.
inline constexpr float kF32Epsilon = 1.1920928955078125e-7f;
static_assert(kF32Epsilon == F32Pow2(-23));

// [TE] Float8CurrentScaling: amax_epsilon defaults to 0; fmaxf amax.
inline constexpr IntQuantRecipe kTeFp8E4m3{"te", "[TE] recipe_common.cuh compute_scale_from_amax, current scaling",
                                           QuantScheme::kTeFp8, &kE4m3, 0, 0, RoundingMode::kNearestEven, 0.0f,
                                           false, AmaxNan::kIgnore};
inline constexpr IntQuantRecipe kTeFp8E4m3Pow2{"te-pow2", "[TE] compute_scale_from_amax, force_pow_2_scales",
                                               QuantScheme::kTeFp8, &kE4m3, 0, 0, RoundingMode::kNearestEven,
                                               0.0f, true, AmaxNan::kIgnore};
inline constexpr IntQuantRecipe kTeFp8E5m2{"te", "[TE] recipe_common.cuh compute_scale_from_amax, current scaling",
                                           QuantScheme::kTeFp8, &kE5m2, 0, 0, RoundingMode::kNearestEven, 0.0f,
                                           false, AmaxNan::kIgnore};
inline constexpr IntQuantRecipe kTeFp8E5m2Pow2{"te-pow2", "[TE] compute_scale_from_amax, force_pow_2_scales",
                                               QuantScheme::kTeFp8, &kE5m2, 0, 0, RoundingMode::kNearestEven,
                                               0.0f, true, AmaxNan::kIgnore};

inline constexpr IntQuantRecipe kAoSymInt8{"ao-sym", "[AO] quant_primitives _choose_qparams_affine SYMMETRIC",
                                           QuantScheme::kAoSymmetric, &kInt8, -128, 127,
                                           RoundingMode::kNearestEven, kF32Epsilon, false, AmaxNan::kPropagate};
inline constexpr IntQuantRecipe kAoSymInt4{"ao-sym", "[AO] quant_primitives _choose_qparams_affine SYMMETRIC",
                                           QuantScheme::kAoSymmetric, &kInt4, -8, 7, RoundingMode::kNearestEven,
                                           kF32Epsilon, false, AmaxNan::kPropagate};
inline constexpr IntQuantRecipe kAoAsymInt8{"ao-asym", "[AO] quant_primitives _choose_qparams_affine ASYMMETRIC",
                                            QuantScheme::kAoAsymmetric, &kInt8, -128, 127,
                                            RoundingMode::kNearestEven, kF32Epsilon, false, AmaxNan::kPropagate};
inline constexpr IntQuantRecipe kAoAsymUint4{"ao-asym", "[AO] quant_primitives _choose_qparams_affine ASYMMETRIC",
                                             QuantScheme::kAoAsymmetric, &kUint4, 0, 15,
                                             RoundingMode::kNearestEven, kF32Epsilon, false, AmaxNan::kPropagate};
inline constexpr IntQuantRecipe kAoSymCudaInt8{"ao-sym-cuda", "[AO] SYMMETRIC with torch CUDA scalar division (x * fp32(1/d))",
                                               QuantScheme::kAoSymmetric, &kInt8, -128, 127,
                                               RoundingMode::kNearestEven, kF32Epsilon, false, AmaxNan::kPropagate, true};
inline constexpr IntQuantRecipe kAoSymCudaInt4{"ao-sym-cuda", "[AO] SYMMETRIC with torch CUDA scalar division (x * fp32(1/d))",
                                               QuantScheme::kAoSymmetric, &kInt4, -8, 7, RoundingMode::kNearestEven,
                                               kF32Epsilon, false, AmaxNan::kPropagate, true};
inline constexpr IntQuantRecipe kAoAsymCudaInt8{"ao-asym-cuda", "[AO] ASYMMETRIC with torch CUDA scalar division (x * fp32(1/d))",
                                                QuantScheme::kAoAsymmetric, &kInt8, -128, 127,
                                                RoundingMode::kNearestEven, kF32Epsilon, false, AmaxNan::kPropagate, true};
inline constexpr IntQuantRecipe kAoAsymCudaUint4{"ao-asym-cuda", "[AO] ASYMMETRIC with torch CUDA scalar division (x * fp32(1/d))",
                                                 QuantScheme::kAoAsymmetric, &kUint4, 0, 15,
                                                 RoundingMode::kNearestEven, kF32Epsilon, false, AmaxNan::kPropagate, true};
inline constexpr IntQuantRecipe kGptqSymUint4{"gptq-sym", "[GPTQ] quantizer.py Quantizer.find_params(sym=True), quantize",
                                              QuantScheme::kGptqSymmetric, &kUint4, 0, 15,
                                              RoundingMode::kNearestEven, 0.0f, false, AmaxNan::kPropagate};
inline constexpr IntQuantRecipe kGptqAsymUint4{"gptq-asym", "[GPTQ] quantizer.py Quantizer.find_params(sym=False), quantize",
                                               QuantScheme::kGptqAsymmetric, &kUint4, 0, 15,
                                               RoundingMode::kNearestEven, 0.0f, false, AmaxNan::kPropagate};
inline constexpr IntQuantRecipe kCommonInt8{"common", "docs/formats-reference.md §8.2 common kernel: amax/127, [-127,127], half-even",
                                            QuantScheme::kAmaxOverQmax, &kInt8, -127, 127,
                                            RoundingMode::kNearestEven, 0.0f, false, AmaxNan::kPropagate};
inline constexpr IntQuantRecipe kCommonAwayInt8{"common-away", "docs/formats-reference.md §8.2 common kernel with C roundf (half-away, §8.1)",
                                                QuantScheme::kAmaxOverQmax, &kInt8, -127, 127,
                                                RoundingMode::kNearestAway, 0.0f, false, AmaxNan::kPropagate};
inline constexpr IntQuantRecipe kCommonInt4{"common", "docs/formats-reference.md §8.2 common kernel: amax/7, [-7,7], half-even",
                                            QuantScheme::kAmaxOverQmax, &kInt4, -7, 7, RoundingMode::kNearestEven,
                                            0.0f, false, AmaxNan::kPropagate};
inline constexpr IntQuantRecipe kCommonAwayInt4{"common-away", "docs/formats-reference.md §8.2 common kernel with C roundf (half-away, §8.1)",
                                                QuantScheme::kAmaxOverQmax, &kInt4, -7, 7,
                                                RoundingMode::kNearestAway, 0.0f, false, AmaxNan::kPropagate};

inline constexpr const IntQuantRecipe* kAllIntQuantRecipes[] = {
    &kTeFp8E4m3, &kTeFp8E4m3Pow2, &kTeFp8E5m2, &kTeFp8E5m2Pow2, &kAoSymInt8,   &kAoSymInt4,      &kAoAsymInt8,
    &kAoAsymUint4, &kAoSymCudaInt8, &kAoSymCudaInt4, &kAoAsymCudaInt8, &kAoAsymCudaUint4, &kGptqSymUint4, &kGptqAsymUint4, &kCommonInt8, &kCommonAwayInt8, &kCommonInt4, &kCommonAwayInt4,
};

}  // namespace lowbit::block
