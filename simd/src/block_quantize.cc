// Run-time dispatch (target_dispatch.h) and argument checks of the block
// kernels (block_quantize-inl.h).
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
#include <mutex>

#include "block_entry.h"
#include "block_job.h"
#include "decode_tables.h"
#include "encode_plan.h"
#include "lowbit/simd/block_scale.h"
#include "lowbit/simd/simd.h"
#include "entry_checks.h"
#include "lowbit/formats/alternatives/mx_block.h"
#include "lowbit/formats/recipe/same_semantics.h"
#include "target_dispatch.h"

namespace lowbit::simd {
HWY_EXPORT(QuantizeMx);
HWY_EXPORT(QuantizeNvfp4);
HWY_EXPORT(ArrayAmax);
HWY_EXPORT(DequantizeMx);
HWY_EXPORT(PackNibblesLowFirst);
HWY_EXPORT(DequantizeNvfp4);
HWY_EXPORT(Lanes32);
HWY_EXPORT(MxScaleCodesArray);
HWY_EXPORT(Nvfp4ScalesArray);

namespace {

// The block kernels step through a block a whole vector at a time, so the
// vector's FP32 lanes must divide the block size: true on every x86 target
// (4, 8 or 16 lanes) and on Arm up to 512-bit SVE (blocks of 16 and 32); a
// wider SVE vector is reported, not overrun. kBestTarget asks the target
// that dynamic dispatch picks.
registry::Status CheckLanes(std::int64_t target, const recipe::Recipe& r) {
  const std::size_t lanes = LOWBIT_SIMD_KERNEL(Lanes32, target)();
  const std::size_t block_size = static_cast<std::size_t>(r.layout.size);
  if (block_size % lanes == 0) return registry::Status::Ok();
  const std::string name = target == kBestTarget ? "the best target" : TargetName(target);
  return registry::Status::Error("simd: " + std::to_string(lanes) + "-lane vectors of " + name +
                                 " do not divide " + r.name + " blocks of " +
                                 std::to_string(block_size));
}

// MX element decode tables: the model's value of every element code with a
// unit scale (recipe::DecodeElement: MXINT8's implied 2^-6 folded in, exact),
// built once per (element format, implied exponent); null for an element
// outside the format list or wider than a byte.
const std::int32_t* MxElementTable(const recipe::Recipe& r) {
  struct Slot {
    std::once_flag built;
    std::int32_t t[kDecodeTableSize];
  };
  constexpr int kExponents = 16;  // implied exponents -15 .. 0 (MXINT8: -6)
  static Slot slots[kFormatCount][kExponents];
  FormatId id{};
  if (!FindFormat(r.element.name, &id) || r.element.total_bits > 8) return nullptr;
  const int implied = r.element.IsFloat() ? 0 : -r.element_implied_exponent;
  if (implied < 0 || implied >= kExponents) return nullptr;
  Slot& slot = slots[static_cast<int>(id)][implied];
  std::call_once(slot.built, [&] {
    recipe::BlockScale unit;
    unit.decode = 1.0f;
    for (int c = 0; c < kDecodeTableSize; ++c) {
      const auto code = static_cast<std::uint8_t>(c & static_cast<int>(r.element.CodeMask()));
      slot.t[c] = static_cast<std::int32_t>(F32Bits(recipe::DecodeElement(r, unit, {}, code)));
    }
  });
  return slot.t;
}

// The model's decode of every stored scale byte (recipe/steps.h StoredScale)
// of a block recipe, built once per scale format: the value depends on the
// recipe only through its scale format (the byte's decode), so a per-block
// lookup replaces decoding a format spec per block. Null for a scale format
// outside the format list.
const float* ScaleTable(const recipe::Recipe& r) {
  constexpr int kBytes = 256;
  struct Table {
    std::once_flag built;
    float value[kBytes];
  };
  static Table tables[kFormatCount];
  FormatId id{};
  if (r.family() == recipe::Family::kScaled || !FindFormat(r.scale_format.name, &id)) return nullptr;
  Table& t = tables[static_cast<int>(id)];
  std::call_once(t.built, [&] {
    for (int code = 0; code < kBytes; ++code) {
      t.value[code] = recipe::StoredScale(r, static_cast<std::uint8_t>(code), 0.0f, 0).decode;
    }
  });
  return t.value;
}

// The element factor and NaN-ness of every E8M0 code of an MX recipe, from
// the model (recipe/steps.h ChooseScale: decode = DecodeToF32(scale_format,
// c), factor = MxElementFactor(r, c, decode)), built once per (scale format,
// eager-RCEIL rule, element step): the only recipe fields the two read.
struct MxScaleTables {
  float factor[256];
  std::uint8_t is_nan[256];
};
const MxScaleTables* MxScaleTablesOf(const recipe::Recipe& r) {
  struct Slot {
    std::once_flag built;
    MxScaleTables t;
  };
  static Slot slots[kFormatCount][2][2];
  FormatId id{};
  if (!FindFormat(r.scale_format.name, &id)) return nullptr;
  const bool eager = r.scale_rule == recipe::ScaleRule::kMxRceilEager;
  const bool divide = r.element_step == recipe::ElementStep::kDivide;
  Slot& slot = slots[static_cast<int>(id)][eager][divide];
  std::call_once(slot.built, [&] {
    for (int c = 0; c < 256; ++c) {
      const std::uint8_t code = static_cast<std::uint8_t>(c);
      const float decode = DecodeToF32(r.scale_format, code);
      // The multiplying form of the element step for every MX recipe
      // (alternatives/mx_block.h MxScaleByReciprocal): x / 2^e and x * 2^-e
      // are one correctly rounded value, and an FP32 division costs the
      // dividing recipes' quantizers about 10 cycles a vector (vdivps).
      slot.t.factor[c] = alternatives::MxScaleByReciprocal(r, code).factor;
      slot.t.is_nan[c] = F32IsNan(F32Bits(decode)) ? 1 : 0;
    }
  });
  return &slot.t;
}

// The NVFP4 kernels are compiled per scale rule with the catalog's recipe of
// that rule (block_scale-inl.h kNvfp4Recipe): a recipe with other semantics
// would be computed as that one, so it is refused.
registry::Status CheckNvfp4(const recipe::Recipe& r) {
  bool listed = false;
  for (const recipe::Nvfp4Profile& p : recipe::kNvfp4Profiles) listed = listed || p.rule == r.scale_rule;
  if (r.family() == recipe::Family::kNvfp4 && listed &&
      recipe::SameSemantics(r, recipe::MakeNvfp4Recipe(r.name, r.profile, r.scale_rule))) {
    return registry::Status::Ok();
  }
  return registry::Status::Error("simd: " + recipe::RecipeName(r) +
                                 " is not an NVFP4 recipe of the catalog's semantics (no kernel for it)");
}

// The model's UE4M3 conversion of an NVFP4 block scale as an encode plan
// (recipe/steps.h ChooseNvfp4Scale's EncodeF32(r.scale_format, value,
// Nvfp4ScaleOptions(r))). block_scale-inl.h VectorNvfp4Scale runs it as a
// round-to-nearest-even float plan, which every catalog NVFP4 recipe gives
// (a UE4M3 scale, RNE); anything else is reported, not miscomputed.
registry::Status Nvfp4ScalePlan(const recipe::Recipe& r, EncodePlan* plan) {
  *plan = MakeEncodePlan(r.scale_format, recipe::detail::Nvfp4ScaleOptions(r));
  if (plan->kind == PlanKind::kFloat && plan->rounding == RoundingMode::kNearestEven) return registry::Status::Ok();
  return registry::Status::Error(std::string("simd: the ") + r.scale_format.name + " scale conversion of " + r.name +
                                 ":" + r.profile + " is not a round-to-nearest-even float plan");
}

// Nvfp4ScalePlan of each NVFP4 recipe, built once per recipe and kept:
// MakeEncodePlan remembers only the last plan of a thread, so asking it for
// the scale plan beside the element plan on every call would rebuild the
// E2M1 element thresholds (hundreds of model calls, as much as the kernel
// itself for 4096 elements under callgrind) on every call.
registry::Status Nvfp4ScalePlanOf(const recipe::Recipe& r, const EncodePlan** plan) {
  struct Slot {
    std::once_flag built;
    EncodePlan plan;
    registry::Status status;
  };
  static Slot slots[std::size(recipe::kNvfp4Profiles)];
  std::size_t index = 0;
  while (index < std::size(slots) && recipe::kNvfp4Profiles[index].rule != r.scale_rule) ++index;
  if (index >= std::size(slots)) return CheckNvfp4(r);
  Slot& slot = slots[index];
  std::call_once(slot.built, [&] { slot.status = Nvfp4ScalePlan(r, &slot.plan); });
  *plan = &slot.plan;
  return slot.status;
}

registry::Status NoScaleTable(const recipe::Recipe& r) {
  return registry::Status::Error(std::string("simd: no scale decode table for ") + r.name + " (" +
                                 r.scale_format.name + ")");
}

}  // namespace

namespace detail {

registry::Status QuantizeMxArray(std::int64_t target, const recipe::Recipe& r, const float* x, std::size_t count,
                                 std::uint8_t* codes, std::uint8_t* scales) {
  const auto kernel = LOWBIT_SIMD_KERNEL(QuantizeMx, target);
  if (kernel == nullptr) return detail::TargetError(target);
  if (r.family() != recipe::Family::kMx || r.layout.size < 1 || r.layout.size > block::kMaxBlockSize) {
    return registry::Status::Error("simd: " + recipe::RecipeName(r) + " is not an MX recipe with blocks of 1 to " +
                                   std::to_string(block::kMaxBlockSize));
  }
  if (registry::Status s = registry::ValidateEncodeOptions(r.element_encode); !s.ok) {
    return registry::Status::Error("simd: MX element options: " + s.message);
  }
  if (r.element_encode.rounding == RoundingMode::kStochastic) {
    return registry::Status::Error("simd: stochastic element rounding needs random bits, which "
                                   "the MX recipes do not take");
  }
  if (count == 0) return registry::Status::Ok();
  if (x == nullptr) return registry::Status::Error("null input with count " + std::to_string(count));
  if (codes == nullptr || scales == nullptr) {
    return registry::Status::Error("null codes or scales with count " + std::to_string(count));
  }
  std::size_t x_bytes = 0;
  if (registry::Status s = detail::CheckedBytes(count, sizeof(float), &x_bytes); !s.ok) return s;
  const std::size_t blocks = CeilDiv(count, static_cast<std::size_t>(r.layout.size));
  if (registry::Status s = registry::CheckNoOverlap("simd: QuantizeMx", {{x, x_bytes, "x"}},
                                                    {{codes, count, "codes"}, {scales, blocks, "scales"}});
      !s.ok) {
    return s;
  }
  const registry::Status lanes = CheckLanes(target, r);
  if (!lanes.ok) return lanes;
  const EncodePlan plan = MakeEncodePlan(r.element, r.element_encode);
  const MxScaleTables* tables = MxScaleTablesOf(r);
  if (tables == nullptr) return NoScaleTable(r);
  // The block scale whose decode is NaN (E8M0 0xFF): ScaledElement gives one
  // NaN for every element.
  recipe::BlockScale nan_scale;
  nan_scale.code = recipe::kE8m0NanCode;
  nan_scale.decode = DecodeToF32(r.scale_format, nan_scale.code);
  nan_scale.factor = tables->factor[nan_scale.code];
  const float nan_element = recipe::ScaledElement(r, nan_scale, 0.0f);
  kernel(MxJob{&r, &plan, x, count, codes, scales, tables->factor, tables->is_nan, nan_element});
  return registry::Status::Ok();
}

registry::Status Nvfp4TensorScaleOfArray(std::int64_t target, const recipe::Recipe& r, const float* x,
                                         std::size_t count, recipe::TensorScale* tensor_scale) {
  const auto kernel = LOWBIT_SIMD_KERNEL(ArrayAmax, target);
  if (kernel == nullptr) return detail::TargetError(target);
  if (registry::Status s = CheckNvfp4(r); !s.ok) return s;
  if (tensor_scale == nullptr) return registry::Status::Error("null tensor_scale");
  if (count != 0 && x == nullptr) return registry::Status::Error("null input with count " + std::to_string(count));
  float amax = 0.0f;
  if (count != 0) kernel(ArrayAmaxJob{x, count, r.amax_nan, &amax});
  *tensor_scale = recipe::ChooseTensorScale(r, amax);
  return registry::Status::Ok();
}

namespace {

// QuantizeNvfp4Array and QuantizeNvfp4PackedArray: the codes `count` bytes
// one per byte, or packed (count + 1) / 2 bytes.
registry::Status QuantizeNvfp4Codes(std::int64_t target, const recipe::Recipe& r, const float* x, std::size_t count,
                                    bool packed, std::uint8_t* codes, std::uint8_t* scales,
                                    recipe::TensorScale* tensor_scale, const recipe::TensorScale* given) {
  const auto kernel = LOWBIT_SIMD_KERNEL(QuantizeNvfp4, target);
  if (kernel == nullptr) return detail::TargetError(target);
  if (registry::Status s = CheckNvfp4(r); !s.ok) return s;
  if (tensor_scale == nullptr) return registry::Status::Error("null tensor_scale");
  if (count == 0) {
    *tensor_scale = given != nullptr ? *given : recipe::ChooseTensorScale(r, 0.0f);
    return registry::Status::Ok();
  }
  if (x == nullptr) return registry::Status::Error("null input with count " + std::to_string(count));
  if (codes == nullptr || scales == nullptr) {
    return registry::Status::Error("null codes or scales with count " + std::to_string(count));
  }
  std::size_t x_bytes = 0;
  if (registry::Status s = detail::CheckedBytes(count, sizeof(float), &x_bytes); !s.ok) return s;
  if (registry::Status s = registry::CheckNoOverlap(
          "simd: QuantizeNvfp4", {{x, x_bytes, "x"}},
          {{codes, packed ? CeilDiv(count, 2) : count, "codes"}, {scales, CeilDiv(count, 16), "scales"},
           {tensor_scale, sizeof(*tensor_scale), "tensor_scale"}});
      !s.ok) {
    return s;
  }
  const registry::Status lanes = CheckLanes(target, r);
  if (!lanes.ok) return lanes;
  const EncodePlan plan = MakeEncodePlan(r.element, r.element_encode);
  const EncodePlan* scale_plan = nullptr;
  if (registry::Status s = Nvfp4ScalePlanOf(r, &scale_plan); !s.ok) return s;
  const float* scale_decode = ScaleTable(r);
  if (scale_decode == nullptr) return NoScaleTable(r);
  kernel(Nvfp4Job{&r, &plan, scale_plan, scale_decode, x, count, packed, codes, scales, tensor_scale, given});
  return registry::Status::Ok();
}

}  // namespace

registry::Status QuantizeNvfp4Array(std::int64_t target, const recipe::Recipe& r, const float* x,
                                    std::size_t count, std::uint8_t* codes, std::uint8_t* scales,
                                    recipe::TensorScale* tensor_scale, const recipe::TensorScale* given) {
  return QuantizeNvfp4Codes(target, r, x, count, false, codes, scales, tensor_scale, given);
}

registry::Status QuantizeNvfp4PackedArray(std::int64_t target, const recipe::Recipe& r, const float* x,
                                          std::size_t count, std::uint8_t* packed, std::uint8_t* scales,
                                          recipe::TensorScale* tensor_scale) {
  return QuantizeNvfp4Codes(target, r, x, count, true, packed, scales, tensor_scale, nullptr);
}

registry::Status DequantizeMxArray(std::int64_t target, const recipe::Recipe& r, const std::uint8_t* codes,
                                   const std::uint8_t* scales, std::size_t count, float* out) {
  const auto kernel = LOWBIT_SIMD_KERNEL(DequantizeMx, target);
  if (kernel == nullptr) return detail::TargetError(target);
  const std::int32_t* table = MxElementTable(r);
  if (table == nullptr || r.family() != recipe::Family::kMx || r.layout.size < 1 ||
      r.layout.size > block::kMaxBlockSize) {
    return registry::Status::Error("simd: " + recipe::RecipeName(r) + " is not an MX recipe with a decode table");
  }
  if (count == 0) return registry::Status::Ok();
  if (codes == nullptr || scales == nullptr || out == nullptr) {
    return registry::Status::Error("null codes, scales or output with count " +
                                   std::to_string(count));
  }
  std::size_t out_bytes = 0;
  if (registry::Status s = detail::CheckedBytes(count, sizeof(float), &out_bytes); !s.ok) return s;
  if (registry::Status s = registry::CheckNoOverlap(
          "simd: DequantizeMx",
          {{codes, count, "codes"}, {scales, CeilDiv(count, static_cast<std::size_t>(r.layout.size)), "scales"}},
          {{out, out_bytes, "out"}});
      !s.ok) {
    return s;
  }
  const registry::Status lanes = CheckLanes(target, r);
  if (!lanes.ok) return lanes;
  const float* scale_table = ScaleTable(r);
  if (scale_table == nullptr) return NoScaleTable(r);
  kernel(MxDequantizeJob{&r, scale_table, table, codes, scales, count, out});
  return registry::Status::Ok();
}

registry::Status DequantizeNvfp4Array(std::int64_t target, const recipe::Recipe& r,
                                      const recipe::TensorScale& tensor_scale, const std::uint8_t* codes,
                                      const std::uint8_t* scales, std::size_t count, float* out) {
  const auto kernel = LOWBIT_SIMD_KERNEL(DequantizeNvfp4, target);
  if (kernel == nullptr) return detail::TargetError(target);
  if (registry::Status s = CheckNvfp4(r); !s.ok) return s;
  if (count == 0) return registry::Status::Ok();
  if (codes == nullptr || scales == nullptr || out == nullptr) {
    return registry::Status::Error("null codes, scales or output with count " +
                                   std::to_string(count));
  }
  std::size_t out_bytes = 0;
  if (registry::Status s = detail::CheckedBytes(count, sizeof(float), &out_bytes); !s.ok) return s;
  if (registry::Status s = registry::CheckNoOverlap(
          "simd: DequantizeNvfp4", {{codes, count, "codes"}, {scales, CeilDiv(count, 16), "scales"}},
          {{out, out_bytes, "out"}});
      !s.ok) {
    return s;
  }
  const registry::Status lanes = CheckLanes(target, r);
  if (!lanes.ok) return lanes;
  FormatId element{};
  if (!FindFormat(r.element.name, &element) || r.element.total_bits > 4) {
    return registry::Status::Error(std::string("simd: no 4-bit element table for ") + r.element.name);
  }
  const float* scale_table = ScaleTable(r);
  if (scale_table == nullptr) return NoScaleTable(r);
  kernel(Nvfp4DequantizeJob{&r, scale_table, tensor_scale,
                            DecodeTable(element, false, DecodeOptions{}), codes, scales, count, out});
  return registry::Status::Ok();
}

}  // namespace detail

bool HasVectorMxScale(const recipe::Recipe& r) { return VectorMxScaleRule(r); }

registry::Status MxScaleCodesOnTarget(std::int64_t target, const recipe::Recipe& r,
                                      const std::uint32_t* amax_bits, std::size_t count,
                                      std::uint8_t* codes) {
  const auto kernel = LOWBIT_SIMD_KERNEL(MxScaleCodesArray, target);
  if (kernel == nullptr) return detail::TargetError(target);
  if (!HasVectorMxScale(r)) {
    return registry::Status::Error(std::string("simd: ") + r.name + " has no vector MX scale rule");
  }
  if (count == 0) return registry::Status::Ok();
  if (amax_bits == nullptr || codes == nullptr) {
    return registry::Status::Error("null amax or codes with count " + std::to_string(count));
  }
  kernel(r, amax_bits, count, codes);
  return registry::Status::Ok();
}

registry::Status Nvfp4ScalesOnTarget(std::int64_t target, const recipe::Recipe& r,
                                     const recipe::TensorScale& tensor, const std::uint32_t* amax_bits,
                                     std::size_t count, std::uint8_t* codes, std::uint32_t* factor_bits) {
  const auto kernel = LOWBIT_SIMD_KERNEL(Nvfp4ScalesArray, target);
  if (kernel == nullptr) return detail::TargetError(target);
  if (registry::Status s = CheckNvfp4(r); !s.ok) return s;
  if (count == 0) return registry::Status::Ok();
  if (amax_bits == nullptr || codes == nullptr || factor_bits == nullptr) {
    return registry::Status::Error("null amax, codes or factors with count " + std::to_string(count));
  }
  const EncodePlan* scale_plan = nullptr;
  if (registry::Status s = Nvfp4ScalePlanOf(r, &scale_plan); !s.ok) return s;
  const float* scale_decode = ScaleTable(r);
  if (scale_decode == nullptr) return NoScaleTable(r);
  kernel(Nvfp4ScaleArrayJob{&r, scale_plan, scale_decode, tensor, amax_bits, count, codes, factor_bits});
  return registry::Status::Ok();
}

registry::Status PackNibbles(std::int64_t target, const std::uint8_t* codes, std::size_t count,
                             std::uint8_t* packed) {
  const auto kernel = LOWBIT_SIMD_KERNEL(PackNibblesLowFirst, target);
  if (kernel == nullptr) return detail::TargetError(target);
  if (count == 0) return registry::Status::Ok();
  if (codes == nullptr || packed == nullptr) {
    return registry::Status::Error("null codes or output with count " + std::to_string(count));
  }
  std::size_t bytes = 0;
  if (registry::Status s = detail::CheckedBytes(count, 1, &bytes); !s.ok) return s;
  if (registry::Status s = registry::CheckNoOverlap("simd: PackNibbles", {{codes, count, "codes"}},
                                                    {{packed, CeilDiv(count, 2), "packed"}});
      !s.ok) {
    return s;
  }
  kernel(PackJob{codes, count, packed});
  return registry::Status::Ok();
}

}  // namespace lowbit::simd
#endif  // HWY_ONCE
