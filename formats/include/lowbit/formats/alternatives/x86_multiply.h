// The FP32 product as the model's host compilation returns it on x86 (SSE
// mulss), for device code that must give the host model's bits: a NaN operand
// comes back quieted (the first if both are), and an invalid product (0 x Inf)
// is x86's default NaN 0xFFC00000, the "QNaN floating-point indefinite"
// (Intel SDM Vol. 1 §4.8.3.7). NVIDIA's FMUL returns 0x7FFFFFFF for every NaN
// result instead (docs/formats-reference.md §3.3); finite and infinite
// products are the same on both. The scaled-INT dequantization of the model
// (recipe::DecodeElement, an integer times the group's scale) is a plain
// multiply, so its NaN is the host's; cuda/src/int_quantize.cu uses this to
// match it. proptests/backends/alternatives_test.cc compares it with the host's own
// multiply on x86 for every pair of a boundary set with at most one NaN.
#pragma once

#include <cstdint>

#include "lowbit/formats/config.h"
#include "lowbit/formats/fp32_bits.h"

namespace lowbit::alternatives {

// The NaN rule is the model's (block::F32WithX86Nan, fp32_bits.h), shared
// with the division and subtraction of the scale steps.
LOWBIT_HD_CONSTEXPR float F32MulAsX86(float a, float b) { return block::F32WithX86Nan(a, b, a * b); }

}  // namespace lowbit::alternatives
