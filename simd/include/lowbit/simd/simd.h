// lowbit::simd — Highway array kernels for every registry operation
// (registry.h ConvertArgs) and the block, group and packing recipes,
// dispatched at run time to the best compiled target the CPU supports, or run
// on one named target (tests and `lowbit verify` check each target against
// the scalar model).
#pragma once

#include <cstdint>
#include <vector>

#include "lowbit/formats/block/block_spec.h"
#include "lowbit/formats/recipe/catalog.h"
#include "lowbit/formats/recipe/recipe.h"
#include "lowbit/formats/recipe/same_semantics.h"
#include "lowbit/formats/recipe/tensor.h"
#include "lowbit/registry/registry.h"

namespace lowbit::simd {

// Bad input (docs/bad-input.md "SIMD"): every call below refuses, before
// touching memory and with a message naming the problem, null buffers with a
// non-zero size, sizes whose byte counts overflow (formats/checked_size.h),
// outputs that overlap an input or another output (in-place calls), enum
// values past their last enumerator; zero elements (count, rows or cols 0)
// is ok and writes nothing. Buffers take any alignment.
//
// Targets. Every kernel below takes a Highway target bit (HWY_SSE4, HWY_AVX2,
// HWY_NEON, HWY_SVE2, ...: hwy/detect_targets.h) or kBestTarget. Dispatch is
// Highway's own (HWY_EXPORT tables; simd/src/target_dispatch.h): kBestTarget
// is HWY_DYNAMIC_DISPATCH, the best compiled target the CPU supports (or the
// one hwy::SetSupportedTargetsForTest forces); a named target runs that
// target's entry of the same table, without process-wide state, so runs on
// different targets may go on in several threads at once. A named target
// that is not compiled in, or that the CPU lacks, is an error.
inline constexpr std::int64_t kBestTarget = 0;

// Highway target bits compiled into this library (HWY_TARGETS), best first.
std::vector<std::int64_t> CompiledTargets();
// "SSE4", "AVX2", "AVX3", "AVX3_DL", "NEON", "SVE2", ... (Highway's names).
const char* TargetName(std::int64_t target);
// Whether `target` is compiled in and the CPU runs it (hwy::SupportedTargets,
// asked once).
bool TargetAvailable(std::int64_t target);
// A target's rank among the registry's rows (registry/choose.h): Highway
// gives newer targets lower bits, so a lower bit ranks higher, and every
// target ranks above the scalar model (0). The best available target is the
// one kBestTarget dispatches to.
int TargetPreference(std::int64_t target);
// The target whose code a kernel call with `target` runs (HWY_TARGET inside
// the kernel), or 0 for a target it cannot run: lets the tests check the
// dispatch itself.
std::int64_t TargetThatRuns(std::int64_t target);

// Which options the SIMD kernels implement exactly: everything the model has,
// except stochastic rounding with random_bit_count 32 (a carry out of 32 bits
// does not fit a 32-bit lane).
bool Supports(const registry::ConvertArgs& args);

// Runs on kBestTarget. Any count and alignment; the same argument errors as
// the scalar backend (registry ValidateConvertArgs).
registry::Status Convert(const registry::ConvertArgs& args);
// Runs on the named `target` (not kBestTarget).
registry::Status ConvertOnTarget(std::int64_t target, const registry::ConvertArgs& args);

// Whether the SIMD kernels run recipe `r` over `layout`, read off the
// recipe's fields (never its name or profile):
//   MX: any scale rule, element step and element policy of the model but
//     stochastic rounding (the recipes take no random bits), elements of at
//     most 8 bits, blocks of at most block::kMaxBlockSize elements (the
//     kernels' block buffers), at a layout the recipe allows (recipe/tensor.h
//     LayoutApplies);
//   NVFP4: the kernels are compiled per scale rule with the catalog's recipe
//     of that rule folded in (simd/src/block_scale-inl.h kNvfp4Recipe), so
//     the recipe must have its semantics (recipe/same_semantics.h);
//   scaled: half-even or half-away rounding, an 8-bit float or an integer
//     element of at most 8 bits, one code per byte or 4-bit integers two per
//     byte low nibble first, any grid layout.
constexpr bool Runs(const recipe::Recipe& r, const recipe::Layout& layout) {
  if (!recipe::LayoutApplies(r, layout)) return false;
  const RoundingMode rounding = r.element_encode.rounding;
  switch (r.family()) {
    case recipe::Family::kMx:
      return rounding != RoundingMode::kStochastic && r.element.total_bits <= 8 && r.layout.size > 0 &&
             r.layout.size <= block::kMaxBlockSize;
    case recipe::Family::kNvfp4:
      return recipe::SameSemantics(r, recipe::MakeNvfp4Recipe(r.name, r.profile, r.scale_rule));
    case recipe::Family::kScaled: {
      const bool rounds = rounding == RoundingMode::kNearestEven || rounding == RoundingMode::kNearestAway;
      const bool integer4 = !r.element.IsFloat() && r.element.total_bits == 4;
      const bool element = r.element.IsFloat()
                               ? r.element.kind == FormatKind::kFloat && r.element.total_bits == 8
                               : r.element.kind == FormatKind::kInteger && r.element.total_bits <= 8;
      const bool packing = r.packing == recipe::Packing::kOnePerByte ||
                           (r.packing == recipe::Packing::kNibblesLowFirst && integer4);
      return rounds && element && packing;
    }
  }
  return false;
}

// One call per direction for every recipe: a row-major [rows, cols] FP32
// tensor `x` in `layout` into the typed buffers of recipe/tensor.h
// QuantizedTensor (sized by recipe::SizesOf: codes in the recipe's packing,
// scale codes or FP32 scales, zero points, the tensor scale), bit for bit
// recipe::QuantizeTensor; and back (recipe::DequantizeTensor). Every scale
// is derived from x (given, static scales run on the scalar model). The
// `target` picks the kernels' code, as a stream picks a device's queue.
// Errors: registry::ValidateRecipeArgs's (a shape the layout does not tile,
// sizes that overflow, null or misaligned buffers, overlaps), a recipe Runs
// refuses, a target not compiled in or not supported. rows or cols 0 is ok
// and writes nothing.
registry::Status Quantize(std::int64_t target, const recipe::Recipe& r, const recipe::Layout& layout,
                          const float* x, std::size_t rows, std::size_t cols, const recipe::QuantizedTensor& q);
registry::Status Dequantize(std::int64_t target, const recipe::Recipe& r, const recipe::Layout& layout,
                            const recipe::ConstQuantizedTensor& q, std::size_t rows, std::size_t cols, float* out);

// Two 4-bit codes per byte, element 0 in the low nibble (packing.h
// PackNibbles with NibbleOrder::kLowFirst: ONNX, PyTorch, CUDA __nv_fp4x2,
// TE, torchao); (count + 1) / 2 bytes, an odd last code alone in its byte.
registry::Status PackNibbles(std::int64_t target, const std::uint8_t* codes, std::size_t count,
                             std::uint8_t* packed);

// The other layouts of formats/block/packing.h, bit for bit, any size.
// Codes are masked to 4 bits as the model does. Nibble pairs in either order (kHighFirst: the tinygemm
// int4pack input), count codes <-> (count + 1) / 2 bytes.
registry::Status PackNibbles(std::int64_t target, block::NibbleOrder order, const std::uint8_t* codes,
                             std::size_t count, std::uint8_t* packed);
registry::Status UnpackNibbles(std::int64_t target, block::NibbleOrder order,
                               const std::uint8_t* packed, std::size_t count, std::uint8_t* codes);
// [GPTQ] qweight: row-major [k_rows][n_cols] codes <-> [k_rows / 8][n_cols]
// words packed along K (packing.h PackGptqQweight); k_rows % 8 == 0.
registry::Status PackGptqQweight(std::int64_t target, const std::uint8_t* q, std::size_t k_rows,
                                 std::size_t n_cols, std::uint32_t* words);
registry::Status UnpackGptqQweight(std::int64_t target, const std::uint32_t* words, std::size_t k_rows,
                                   std::size_t n_cols, std::uint8_t* q);
// [GPTQ] qzeros: [groups][n_cols] zero points <-> [groups][n_cols / 8] words
// packed along N, LSB first, storing zero - 1 (packing.h PackGptqQzeros);
// n_cols % 8 == 0. On a little-endian host these words are the low-first
// nibble stream of (zero - 1) & 0xF, so both run on PackNibbles' kernels.
registry::Status PackGptqQzeros(std::int64_t target, const std::uint8_t* zeros, std::size_t groups,
                                std::size_t n_cols, std::uint32_t* words);
registry::Status UnpackGptqQzeros(std::int64_t target, const std::uint32_t* words, std::size_t groups,
                                  std::size_t n_cols, std::uint8_t* zeros);
// [AWQ] WQLinear_GEMM: [rows][n_cols] codes <-> [rows][n_cols / 8] words
// with the order_map interleave (packing.h PackAwq; qweight and qzeros
// alike); n_cols % 8 == 0.
registry::Status PackAwq(std::int64_t target, const std::uint8_t* q, std::size_t rows, std::size_t n_cols,
                         std::uint32_t* words);
registry::Status UnpackAwq(std::int64_t target, const std::uint32_t* words, std::size_t rows,
                           std::size_t n_cols, std::uint8_t* q);

}  // namespace lowbit::simd
