// Run-time dispatch of the block kernels (block_quantize-inl.h).
#include <cstdint>
#include <string>

#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "block_quantize-inl.h"
#include "hwy/foreach_target.h"  // IWYU pragma: keep

#include "block_quantize-inl.h"
#include "hwy/highway.h"

#if HWY_ONCE
#include <cstring>
#include <iterator>

#include "block_job.h"
#include "decode_tables.h"
#include "encode_plan.h"
#include "lowbit/simd/simd.h"

namespace lowbit::simd {
HWY_EXPORT(QuantizeMx);
HWY_EXPORT(QuantizeNvfp4);
HWY_EXPORT(DequantizeMx);
HWY_EXPORT(PackNibblesLowFirst);
HWY_EXPORT(DequantizeNvfp4);

namespace {

struct BlockTargetKernels {
  std::int64_t target;
  void (*quantize_mx)(const MxJob&);
  void (*quantize_nvfp4)(const Nvfp4Job&);
  void (*dequantize_mx)(const MxDequantizeJob&);
  void (*pack_nibbles)(const PackJob&);
  void (*dequantize_nvfp4)(const Nvfp4DequantizeJob&);
};

#define LOWBIT_SIMD_BLOCK_ROW(ns, bit) \
  {bit, &ns::QuantizeMx, &ns::QuantizeNvfp4, &ns::DequantizeMx, &ns::PackNibblesLowFirst, \
   &ns::DequantizeNvfp4},
constexpr BlockTargetKernels kBlockTargets[] = {
#if HWY_TARGETS & HWY_AVX3_DL
    LOWBIT_SIMD_BLOCK_ROW(N_AVX3_DL, HWY_AVX3_DL)
#endif
#if HWY_TARGETS & HWY_AVX3
    LOWBIT_SIMD_BLOCK_ROW(N_AVX3, HWY_AVX3)
#endif
#if HWY_TARGETS & HWY_AVX2
    LOWBIT_SIMD_BLOCK_ROW(N_AVX2, HWY_AVX2)
#endif
#if HWY_TARGETS & HWY_SSE4
    LOWBIT_SIMD_BLOCK_ROW(N_SSE4, HWY_SSE4)
#endif
};
#undef LOWBIT_SIMD_BLOCK_ROW

void DynamicQuantizeMx(const MxJob& job) { HWY_DYNAMIC_DISPATCH(QuantizeMx)(job); }
void DynamicQuantizeNvfp4(const Nvfp4Job& job) { HWY_DYNAMIC_DISPATCH(QuantizeNvfp4)(job); }
void DynamicDequantizeMx(const MxDequantizeJob& job) { HWY_DYNAMIC_DISPATCH(DequantizeMx)(job); }
void DynamicPackNibbles(const PackJob& job) { HWY_DYNAMIC_DISPATCH(PackNibblesLowFirst)(job); }
void DynamicDequantizeNvfp4(const Nvfp4DequantizeJob& job) {
  HWY_DYNAMIC_DISPATCH(DequantizeNvfp4)(job);
}
constexpr BlockTargetKernels kDynamicBlock{0,
                                           &DynamicQuantizeMx,
                                           &DynamicQuantizeNvfp4,
                                           &DynamicDequantizeMx,
                                           &DynamicPackNibbles,
                                           &DynamicDequantizeNvfp4};

// The row for `target` (0: dynamic dispatch), or null.
const BlockTargetKernels* FindBlockTarget(std::int64_t target) {
  if (target == 0) return &kDynamicBlock;
  for (const BlockTargetKernels& row : kBlockTargets) {
    if (row.target == target && TargetAvailable(target)) return &row;
  }
  return nullptr;
}

registry::Status NoTarget(std::int64_t target) {
  return registry::Status::Error(std::string("simd: target ") + TargetName(target) +
                                 " is not compiled in or not supported here");
}

// MX element decode tables with MXINT8's implied 2^-6 folded in (exact: a
// power of two times an integer below 2^8), built once per spec.
const std::int32_t* MxElementTable(const block::BlockSpec& spec) {
  struct Tables {
    std::int32_t t[std::size(block::kAllBlockSpecs)][kDecodeTableSize];
    Tables() {
      for (std::size_t s = 0; s < std::size(block::kAllBlockSpecs); ++s) {
        for (int c = 0; c < kDecodeTableSize; ++c) {
          t[s][c] = static_cast<std::int32_t>(block::F32Bits(block::DecodeMxElement(
              *block::kAllBlockSpecs[s], static_cast<std::uint8_t>(c & spec_mask(s)))));
        }
      }
    }
    static int spec_mask(std::size_t s) {
      return static_cast<int>(block::kAllBlockSpecs[s]->element->CodeMask());
    }
  };
  static const Tables* const kTables = new Tables();
  for (std::size_t s = 0; s < std::size(block::kAllBlockSpecs); ++s) {
    if (std::strcmp(block::kAllBlockSpecs[s]->name, spec.name) == 0) return kTables->t[s];
  }
  return nullptr;
}

}  // namespace

registry::Status QuantizeMx(std::int64_t target, const block::BlockSpec& spec,
                            const block::MxRecipe& recipe, const float* x, std::size_t count,
                            std::uint8_t* codes, std::uint8_t* scales) {
  void (*kernel)(const MxJob&) = target == 0 ? &DynamicQuantizeMx : nullptr;
  for (const BlockTargetKernels& row : kBlockTargets) {
    if (row.target == target && TargetAvailable(target)) kernel = row.quantize_mx;
  }
  if (kernel == nullptr) {
    return registry::Status::Error(std::string("simd: target ") + TargetName(target) +
                                   " is not compiled in or not supported here");
  }
  if (spec.has_tensor_scale) {
    return registry::Status::Error(std::string("simd: ") + spec.name +
                                   " is not an MX format (use the NVFP4 recipes)");
  }
  if (recipe.element.rounding == RoundingMode::kStochastic) {
    return registry::Status::Error("simd: stochastic element rounding needs random bits, which "
                                   "the MX recipes do not take");
  }
  if (count == 0) return registry::Status::Ok();
  if (x == nullptr) return registry::Status::Error("null input with count " + std::to_string(count));
  if (codes == nullptr || scales == nullptr) {
    return registry::Status::Error("null codes or scales with count " + std::to_string(count));
  }
  const EncodePlan plan = MakeEncodePlan(*spec.element, recipe.element);
  kernel(MxJob{&spec, &recipe, &plan, x, count, codes, scales});
  return registry::Status::Ok();
}

registry::Status QuantizeNvfp4(std::int64_t target, block::Nvfp4Recipe recipe, const float* x,
                               std::size_t count, std::uint8_t* codes, std::uint8_t* scales,
                               block::Nvfp4TensorScale* tensor_scale) {
  void (*kernel)(const Nvfp4Job&) = target == 0 ? &DynamicQuantizeNvfp4 : nullptr;
  for (const BlockTargetKernels& row : kBlockTargets) {
    if (row.target == target && TargetAvailable(target)) kernel = row.quantize_nvfp4;
  }
  if (kernel == nullptr) {
    return registry::Status::Error(std::string("simd: target ") + TargetName(target) +
                                   " is not compiled in or not supported here");
  }
  if (tensor_scale == nullptr) return registry::Status::Error("null tensor_scale");
  if (count == 0) {
    *tensor_scale = block::Nvfp4TensorScaleFromAmax(recipe, 0.0f);
    return registry::Status::Ok();
  }
  if (x == nullptr) return registry::Status::Error("null input with count " + std::to_string(count));
  if (codes == nullptr || scales == nullptr) {
    return registry::Status::Error("null codes or scales with count " + std::to_string(count));
  }
  const EncodePlan plan = MakeEncodePlan(kE2m1, block::detail::Nvfp4ElementOptions());
  kernel(Nvfp4Job{recipe, &plan, x, count, codes, scales, tensor_scale});
  return registry::Status::Ok();
}

registry::Status DequantizeMx(std::int64_t target, const block::BlockSpec& spec,
                              const std::uint8_t* codes, const std::uint8_t* scales,
                              std::size_t count, float* out) {
  const BlockTargetKernels* row = FindBlockTarget(target);
  if (row == nullptr) return NoTarget(target);
  const std::int32_t* table = MxElementTable(spec);
  if (table == nullptr || spec.has_tensor_scale) {
    return registry::Status::Error(std::string("simd: ") + spec.name + " is not an MX format");
  }
  if (count == 0) return registry::Status::Ok();
  if (codes == nullptr || scales == nullptr || out == nullptr) {
    return registry::Status::Error("null codes, scales or output with count " +
                                   std::to_string(count));
  }
  row->dequantize_mx(MxDequantizeJob{&spec, table, codes, scales, count, out});
  return registry::Status::Ok();
}

registry::Status DequantizeNvfp4(std::int64_t target, block::Nvfp4Recipe recipe,
                                 const block::Nvfp4TensorScale& tensor_scale,
                                 const std::uint8_t* codes, const std::uint8_t* scales,
                                 std::size_t count, float* out) {
  const BlockTargetKernels* row = FindBlockTarget(target);
  if (row == nullptr) return NoTarget(target);
  if (count == 0) return registry::Status::Ok();
  if (codes == nullptr || scales == nullptr || out == nullptr) {
    return registry::Status::Error("null codes, scales or output with count " +
                                   std::to_string(count));
  }
  row->dequantize_nvfp4(Nvfp4DequantizeJob{recipe, tensor_scale,
                                           DecodeTable(FormatId::kE2m1, false, DecodeOptions{}),
                                           codes, scales, count, out});
  return registry::Status::Ok();
}

registry::Status PackNibbles(std::int64_t target, const std::uint8_t* codes, std::size_t count,
                             std::uint8_t* packed) {
  const BlockTargetKernels* row = FindBlockTarget(target);
  if (row == nullptr) return NoTarget(target);
  if (count == 0) return registry::Status::Ok();
  if (codes == nullptr || packed == nullptr) {
    return registry::Status::Error("null codes or output with count " + std::to_string(count));
  }
  row->pack_nibbles(PackJob{codes, count, packed});
  return registry::Status::Ok();
}

}  // namespace lowbit::simd
#endif  // HWY_ONCE
