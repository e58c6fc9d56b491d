// The array API of convert.h: argument checks (checks.h), then one element
// map launch (map_kernel.cuh) with the functor that dispatch.cuh picks, in
// the layout the caller's policy names (layout.cuh); cuda-sw maps of narrow
// sources as a table of that same functor (table_map.cuh), FP32 encodes
// into at most 8 bits as a table of its thresholds (threshold_map.cuh), and
// FP32 <-> BF16 / FP16 through proven integer alternatives of the model
// (element_ops.cuh HalfFloatAlternative).
#include "lowbit/cuda/convert.h"

#include <cuda_runtime.h>

#include <string>

#include "checks.h"
#include "dispatch.cuh"
#include "hardware_rule.h"
#include "layout.cuh"
#include "layout_variants.h"
#include "lowbit/cuda/device.h"
#include "map_kernel.cuh"
#include "options_match.h"
#include "table_map.cuh"
#include "threshold_map.cuh"

namespace lowbit::cuda {

const char* BackendName(Backend backend) {
  return backend == Backend::kHardware ? "cuda-hw" : "cuda-sw";
}

const char* ElementOpName(ElementOp op) {
  switch (op) {
    case ElementOp::kEncodeF32: return "encode-f32";
    case ElementOp::kEncodeBf16: return "encode-bf16";
    case ElementOp::kEncodeF16: return "encode-f16";
    case ElementOp::kDecodeToF32: return "decode-to-f32";
    case ElementOp::kDecodeToBf16: return "decode-to-bf16";
  }
  return "unknown";
}

bool IsEncode(ElementOp op) {
  return op == ElementOp::kEncodeF32 || op == ElementOp::kEncodeBf16 || op == ElementOp::kEncodeF16;
}

namespace {

bool KnownFormat(FormatId format) {
  return static_cast<int>(format) >= 0 && static_cast<int>(format) < kFormatCount;
}

// The width codes of `spec` are stored in (registry.h CodeBytes).
std::size_t CodeBytesOf(const FormatSpec& spec) {
  return spec.total_bits <= 8 ? 1 : spec.total_bits <= 16 ? 2 : spec.total_bits <= 32 ? 4 : 8;
}

bool KnownOp(ElementOp op) { return static_cast<int>(op) <= static_cast<int>(ElementOp::kDecodeToBf16); }

std::string Describe(const ConvertRequest& r) {
  return std::string(BackendName(r.backend)) + " " + ElementOpName(r.op) + " " + Spec(r.format).name;
}

// Whether cuda-hw has an instruction for (op, format, rounding, satfinite)
// on this build and device (dispatch.cuh, the same table that launches).
bool HasInstruction(ElementOp op, FormatId format, RoundingMode rounding, bool satfinite) {
  return detail::VisitHardware(op, format, rounding, satfinite, HardwareHasBlackwellCvt(), [](auto&&) {});
}

template <typename Layout>
Status ConvertWith(const ConvertRequest& r) {
  if (!KnownFormat(r.format)) return Status::Error("unknown format id");
  if (!KnownOp(r.op)) return Status::Error("unknown operation");
  // Enum arguments past their last value would fall through the dispatch to
  // some other rule: named here (registry.h ValidateEncodeOptions has the
  // same rule for the registry rows).
  if (static_cast<int>(r.encode.rounding) > static_cast<int>(RoundingMode::kStochastic)) {
    return Status::Error("rounding " + std::to_string(static_cast<int>(r.encode.rounding)) +
                         " is not a valid RoundingMode (0.." +
                         std::to_string(static_cast<int>(RoundingMode::kStochastic)) + ")");
  }
  if (static_cast<int>(r.encode.overflow) > static_cast<int>(Overflow::kWrap)) {
    return Status::Error("overflow " + std::to_string(static_cast<int>(r.encode.overflow)) +
                         " is not a valid Overflow (0..2)");
  }
  if (static_cast<int>(r.backend) > static_cast<int>(Backend::kSoftware)) {
    return Status::Error("backend " + std::to_string(static_cast<int>(r.backend)) + " is not a valid cuda::Backend");
  }
  if (r.count == 0) return Status::Ok();
  const std::string what = Describe(r);
  if (r.input == nullptr || r.output == nullptr) {
    return Status::Error(what + ": null input or output with count > 0");
  }
  // Elements are at most 8 bytes (FP64 codes); the random bits 4.
  Status status = detail::CheckSize(what.c_str(), 1, r.count, 8);
  if (!status.ok) return status;
  const std::size_t in_bytes = r.count * (IsEncode(r.op) ? (r.op == ElementOp::kEncodeF32 ? 4 : 2)
                                                          : CodeBytesOf(Spec(r.format)));
  const std::size_t out_bytes = r.count * (IsEncode(r.op) ? CodeBytesOf(Spec(r.format))
                                                           : (r.op == ElementOp::kDecodeToF32 ? 4 : 2));
  status = detail::CheckNoOverlap(what.c_str(), {{r.input, in_bytes, "input"}, {r.output, out_bytes, "output"}});
  if (!status.ok) return status;
  status = detail::CheckDeviceBuffers(what.c_str(), {r.input, r.output});
  if (!status.ok) return status;
  const bool stochastic = IsEncode(r.op) && r.encode.rounding == RoundingMode::kStochastic;
  if (stochastic) {
    if (r.random_bits == nullptr || !detail::IsDevicePointer(r.random_bits)) {
      return Status::Error(what + ": stochastic rounding needs device random_bits");
    }
    if (r.encode.random_bit_count < 0 || r.encode.random_bit_count > 32) {
      return Status::Error(what + ": random_bit_count must be in 0..32");
    }
  }
  if (!Supports(r.backend, r.op, r.format, r.encode, r.decode)) {
    if (r.backend == Backend::kSoftware) {
      return Status::Error(what + ": the operation does not apply to this format");
    }
    return Status::Error(what +
                         ": no hardware instruction implements these options on this device "
                         "(cuda-hw: the nvidia profile's options for the cvt forms this GPU has, "
                         "HardwareEncodeOptions); use cuda-sw");
  }
  cudaError_t error = cudaSuccess;
  auto launch = [&](auto functor) {
    error = detail::LaunchMap<Layout>(r.input, r.output, r.count, functor, r.stream);
  };
  if (r.backend == Backend::kSoftware) {
    // The model per element, or, for sources of at most 16 bits, the model
    // over every source code and the array through that table
    // (table_map.cuh): byte sources always (they are decodes, which take no
    // random word), 16-bit sources from 2^16 elements and not under
    // stochastic rounding, whose result also depends on the element's word.
    auto model = [&](auto functor) {
      using F = decltype(functor);
      // FP32 <-> BF16 / FP16 under the options their integer alternatives
      // are proven for (element_ops.cuh HalfFloatAlternative): a few
      // instructions an element instead of the model's RoundPack.
      if constexpr (detail::HasHalfFloatAlternative<F>()) {
        if (detail::TakesHalfFloatAlternative<Layout>(functor)) {
          launch(detail::HalfFloatAlternative<F::kSource, F::kDestination>{});
          return;
        }
      }
      if constexpr (!Layout::kTableMaps) {
        launch(functor);
      } else if constexpr (detail::ByteTable<F>()) {
        error = detail::LaunchTableMap(r.input, r.output, r.count, functor, r.stream);
      } else if constexpr (detail::TableShape<F>::kApplies) {
        if (!stochastic && detail::StagedTablePays<F>(r.count)) {
          error = detail::LaunchTableMap(r.input, r.output, r.count, functor, r.stream);
        } else {
          launch(functor);
        }
      } else if constexpr (detail::ThresholdShapeApplies<F>()) {
        // FP32 into at most 8 bits: the model's thresholds (threshold_map.cuh),
        // where proven; stochastic rounding is not among those options.
        if (detail::ThresholdOptionsProven(Spec(r.format), r.encode)) {
          error = detail::LaunchThresholdMap(r.input, r.output, r.count, functor, r.stream);
        } else {
          launch(functor);
        }
      } else {
        launch(functor);
      }
    };
    detail::VisitSoftware(r.op, r.format, r.encode, r.decode, stochastic ? r.random_bits : nullptr, model);
  } else {
    detail::VisitHardware(r.op, r.format, r.encode.rounding,
                          r.encode.overflow == Overflow::kSaturate || !IsEncode(r.op),
                          HardwareHasBlackwellCvt(), launch);
  }
  if (error != cudaSuccess) return Status::Error(what + ": launch failed: " + cudaGetErrorString(error));
  return Status::Ok();
}

}  // namespace

bool HardwareEncodeOptions(ElementOp op, FormatId format, RoundingMode rounding, bool satfinite,
                           EncodeOptions* options) {
  if (!KnownFormat(format) || !KnownOp(op) || !IsEncode(op)) return false;
  if (!HasInstruction(op, format, rounding, satfinite)) return false;
  const detail::HardwareRule rule = detail::HardwareEncodeRule(format, rounding, satfinite);
  // Every functor of dispatch.cuh static_asserts its rule exists, so an
  // instruction without one cannot be built; this keeps the host honest too.
  if (!rule.exists) return false;
  *options = rule.options;
  return true;
}

DecodeOptions HardwareDecodeOptions(FormatId format) { return detail::HardwareDecodeRule(format); }

// Every format cuda-hw decodes (FP8, FP16, FP4/FP6, E8M0) has the same rule:
// NaN -> the positive all-ones NaN.
DecodeOptions HardwareDecodeOptions() { return detail::HardwareDecodeRule(FormatId::kFp16); }

bool Supports(Backend backend, ElementOp op, FormatId format, const EncodeOptions& encode,
              const DecodeOptions& decode) {
  if (!KnownFormat(format) || !KnownOp(op)) return false;
  if (backend == Backend::kSoftware) {
    return detail::VisitSoftware(op, format, encode, decode, nullptr, [](auto&&) {});
  }
  if (IsEncode(op)) {
    EncodeOptions h;
    if (!HardwareEncodeOptions(op, format, encode.rounding, encode.overflow == Overflow::kSaturate, &h)) {
      return false;
    }
    return detail::SameEncodeSemantics(Spec(format), encode, h);
  }
  if (!HasInstruction(op, format, RoundingMode::kNearestEven, true)) return false;
  if (!Spec(format).HasNan()) return true;
  const DecodeOptions h = HardwareDecodeOptions(format);
  return decode.nan_sign == h.nan_sign && decode.nan_payload == h.nan_payload;
}

Status Convert(const ConvertRequest& request, LayoutVariant variant) {
  return detail::WithLayout(variant, [&](auto layout) { return ConvertWith<decltype(layout)>(request); });
}

Status Convert(const ConvertRequest& request) { return ConvertWith<detail::CurrentLayout>(request); }

const char* LayoutVariantName(LayoutVariant variant) {
  switch (variant) {
    case LayoutVariant::kCurrent: return "current";
    case LayoutVariant::kReplaced: return "replaced";
    case LayoutVariant::kStreamingHints: return "hints";
  }
  return "unknown";
}

}  // namespace lowbit::cuda
