// BlockSpec: one aggregate per block format (docs/design.md "A format is data").
// The data here is what the specifications fix; how a scale is chosen and in
// which FP32 order the elements are scaled is a recipe (recipe/recipe.h, the
// named ones in recipe/catalog.h), because real implementations differ
// exactly there.
#pragma once

#include <cstdint>

#include "lowbit/formats/config.h"
#include "lowbit/formats/convert.h"
#include "lowbit/formats/format_list.h"

namespace lowbit::block {

// Nibble order of two 4-bit codes in one byte (docs/formats-reference.md §8.3, §4.5).
enum class NibbleOrder : std::uint8_t {
  kLowFirst,   // element 0 in bits 3..0: ONNX, PyTorch Float4_e2m1fn_x2, CUDA __nv_fp4x2, TE, torchao, ModelOpt
  kHighFirst,  // element 0 in bits 7..4: the tinygemm int4pack input (CUDA path)
};

struct BlockSpec {
  const char* name;              // as the CLI spells it
  const FormatSpec* element;     // element encoding
  const FormatSpec* scale;       // block scale encoding (E8M0 or UE4M3)
  int block_size;                // elements per scale
  // Exponent of the largest power of two of the element type ("emax_elem",
  // OCP MX §6.3; microxcaling _get_format_params; torchao *_MAX_POW2).
  int element_emax;
  // MXINT8 codes carry an implied 2^-6: value = code * 2^-6 * X
  // ([MSX] _get_format_params int8: emax 0, docs/formats-reference.md §5.2); 0 for floats.
  int element_implied_exponent;
  // Largest element code magnitude used (MXINT8 uses +-127, never -128).
  std::int64_t element_int_max;
  bool has_tensor_scale;         // NVFP4: FP32 per-tensor scale
  NibbleOrder nibble_order;      // for 4-bit elements when packed
};

// Exponent of the largest power of two not above the element's max finite
// value: for floats, the top finite exponent field minus the bias.
LOWBIT_HD_CONSTEXPR int FloatElementEmax(const FormatSpec& f) {
  return f.MaxFiniteExponentField() - f.bias;
}

// OCP MX v1.0 §5.2 Table 1: k = 32 and an E8M0 scale for every concrete MX
// format. NVFP4: 16 elements, UE4M3 scale, FP32 tensor scale (docs/formats-reference.md §6).
inline constexpr BlockSpec kMxfp8E4m3{"mxfp8_e4m3", &kE4m3, &kE8m0, 32, FloatElementEmax(kE4m3), 0, 0, false, NibbleOrder::kLowFirst};
inline constexpr BlockSpec kMxfp8E5m2{"mxfp8_e5m2", &kE5m2, &kE8m0, 32, FloatElementEmax(kE5m2), 0, 0, false, NibbleOrder::kLowFirst};
inline constexpr BlockSpec kMxfp6E2m3{"mxfp6_e2m3", &kE2m3, &kE8m0, 32, FloatElementEmax(kE2m3), 0, 0, false, NibbleOrder::kLowFirst};
inline constexpr BlockSpec kMxfp6E3m2{"mxfp6_e3m2", &kE3m2, &kE8m0, 32, FloatElementEmax(kE3m2), 0, 0, false, NibbleOrder::kLowFirst};
inline constexpr BlockSpec kMxfp4{"mxfp4", &kE2m1, &kE8m0, 32, FloatElementEmax(kE2m1), 0, 0, false, NibbleOrder::kLowFirst};
inline constexpr BlockSpec kMxint8{"mxint8", &kInt8, &kE8m0, 32, 0, -6, 127, false, NibbleOrder::kLowFirst};
inline constexpr BlockSpec kNvfp4{"nvfp4", &kE2m1, &kUe4m3, 16, FloatElementEmax(kE2m1), 0, 0, true, NibbleOrder::kLowFirst};

// emax_elem per docs/formats-reference.md §5.1: E4M3 8, E5M2 15, E3M2 4, E2M3 2, E2M1 2, INT8 0.
static_assert(kMxfp8E4m3.element_emax == 8);
static_assert(kMxfp8E5m2.element_emax == 15);
static_assert(kMxfp6E3m2.element_emax == 4);
static_assert(kMxfp6E2m3.element_emax == 2);
static_assert(kMxfp4.element_emax == 2);
static_assert(kMxint8.element_emax == 0);

// Largest block any spec here uses: callers' scratch arrays can be this big.
inline constexpr int kMaxBlockSize = 32;

#define LOWBIT_BLOCK_FORMATS(X) \
  X(Mxfp8E4m3, kMxfp8E4m3)      \
  X(Mxfp8E5m2, kMxfp8E5m2)      \
  X(Mxfp6E2m3, kMxfp6E2m3)      \
  X(Mxfp6E3m2, kMxfp6E3m2)      \
  X(Mxfp4, kMxfp4)              \
  X(Mxint8, kMxint8)            \
  X(Nvfp4, kNvfp4)

inline constexpr const BlockSpec* kAllBlockSpecs[] = {
#define LOWBIT_BLOCK_PTR_ENTRY(Id, spec) &spec,
    LOWBIT_BLOCK_FORMATS(LOWBIT_BLOCK_PTR_ENTRY)
#undef LOWBIT_BLOCK_PTR_ENTRY
};

// Decoded block scale as FP32 (exact: every E8M0 and UE4M3 value is an FP32
// value; E8M0 0x00 is the FP32 subnormal 2^-127, 0xFF is NaN).
LOWBIT_HD_CONSTEXPR float DecodeScaleToF32(const BlockSpec& spec, std::uint8_t scale_code) {
  return DecodeToF32(*spec.scale, scale_code);
}

}  // namespace lowbit::block
