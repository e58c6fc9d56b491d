// The array API of convert.h: argument checks, then one MapKernel launch with
// the functor that dispatch.cuh picks.
#include "lowbit/cuda/convert.h"
#include "lowbit/cuda/tuning.h"

#include <cuda_runtime.h>

#include <string>

#include "dispatch.cuh"
#include "lowbit/cuda/device.h"
#include "map_kernel.cuh"
#include "options_match.h"

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

namespace {

bool IsEncode(ElementOp op) {
  return op == ElementOp::kEncodeF32 || op == ElementOp::kEncodeBf16 ||
         op == ElementOp::kEncodeF16;
}

bool KnownFormat(FormatId format) {
  return static_cast<int>(format) >= 0 && static_cast<int>(format) < kFormatCount;
}

bool KnownOp(ElementOp op) { return static_cast<int>(op) <= static_cast<int>(ElementOp::kDecodeToBf16); }

// Device (or managed) memory; host pointers are an argument error.
bool IsDevicePointer(const void* p) {
  cudaPointerAttributes attributes{};
  if (cudaPointerGetAttributes(&attributes, p) != cudaSuccess) {
    cudaGetLastError();  // clear the sticky-free error state of this query
    return false;
  }
  return attributes.type == cudaMemoryTypeDevice || attributes.type == cudaMemoryTypeManaged;
}

std::string Describe(const ConvertRequest& r) {
  return std::string(BackendName(r.backend)) + " " + ElementOpName(r.op) + " " +
         Spec(r.format).name;
}

}  // namespace

bool HardwareEncodeOptions(ElementOp op, FormatId format, RoundingMode rounding, bool satfinite,
                           EncodeOptions* options) {
  if (!KnownFormat(format) || !KnownOp(op) || !IsEncode(op)) return false;
  const bool exists = detail::VisitHardware(op, format, rounding, satfinite,
                                            HardwareHasBlackwellCvt(), [](auto&&) {});
  if (!exists) return false;
  EncodeOptions o;
  o.rounding = rounding;
  o.overflow = satfinite ? Overflow::kSaturate : Overflow::kFormatDefault;
  o.inf_input = InfInput::kLikeOverflow;       // .satfinite: +-Inf -> +-max
                                               // (docs/formats-reference.md §4.1)
  o.nan_sign = NanSign::kPositive;             // every NaN -> positive
                                               // (docs/formats-reference.md §9.2)
  o.nan_payload = NanPayload::kAllOnes;        // 0x7F / 0x7FFF
                                               // (docs/formats-reference.md §4.2, §3.2)
  o.nan_into_no_nan = NanIntoNoNan::kPositiveMax;  // FP4/FP6 (docs/formats-reference.md §4.5)
  o.keep_negative_zero = true;
  o.zero_into_no_zero = ZeroIntoNoZero::kMinPositive;           // E8M0
                                                                // (docs/formats-reference.md §4.7)
  o.negative_into_unsigned = NegativeIntoUnsigned::kMagnitude;  // E8M0 uses |x|
  *options = o;
  return true;
}

DecodeOptions HardwareDecodeOptions() {
  DecodeOptions d;
  d.nan_sign = NanSign::kPositive;
  d.nan_payload = NanPayload::kAllOnes;
  return d;
}

bool Supports(Backend backend, ElementOp op, FormatId format, const EncodeOptions& encode,
              const DecodeOptions& decode) {
  if (!KnownFormat(format) || !KnownOp(op)) return false;
  if (backend == Backend::kSoftware) {
    return detail::VisitSoftware(op, format, encode, decode, nullptr, [](auto&&) {});
  }
  if (IsEncode(op)) {
    EncodeOptions h;
    if (!HardwareEncodeOptions(op, format, encode.rounding,
                               encode.overflow == Overflow::kSaturate, &h)) {
      return false;
    }
    return detail::SameEncodeSemantics(Spec(format), encode, h);
  }
  if (!detail::VisitHardware(op, format, RoundingMode::kNearestEven, true,
                             HardwareHasBlackwellCvt(), [](auto&&) {})) {
    return false;
  }
  if (!Spec(format).HasNan()) return true;
  const DecodeOptions h = HardwareDecodeOptions();
  return decode.nan_sign == h.nan_sign && decode.nan_payload == h.nan_payload;
}

Status Convert(const ConvertRequest& r) {
  if (!KnownFormat(r.format)) return Status::Error("unknown format id");
  if (!KnownOp(r.op)) return Status::Error("unknown operation");
  if (r.count == 0) return Status::Ok();
  if (r.input == nullptr || r.output == nullptr) {
    return Status::Error(Describe(r) + ": null input or output with count > 0");
  }
  if (DeviceCount() == 0) return Status::Error(Describe(r) + ": no CUDA device");
  if (!IsDevicePointer(r.input) || !IsDevicePointer(r.output)) {
    return Status::Error(Describe(r) + ": input and output must be device memory");
  }
  const bool stochastic = IsEncode(r.op) && r.encode.rounding == RoundingMode::kStochastic;
  if (stochastic) {
    if (r.random_bits == nullptr || !IsDevicePointer(r.random_bits)) {
      return Status::Error(Describe(r) + ": stochastic rounding needs device random_bits");
    }
    if (r.encode.random_bit_count < 0 || r.encode.random_bit_count > 32) {
      return Status::Error(Describe(r) + ": random_bit_count must be in 0..32");
    }
  }
  if (!Supports(r.backend, r.op, r.format, r.encode, r.decode)) {
    if (r.backend == Backend::kSoftware) {
      return Status::Error(Describe(r) + ": the operation does not apply to this format");
    }
    return Status::Error(Describe(r) +
                         ": no hardware instruction implements these options on this device "
                         "(cuda-hw: FP8 RNE satfinite with NaN -> +NaN, BF16/FP16 "
                         "RN/RZ(/RM/RP), HardwareEncodeOptions); use cuda-sw");
  }
  cudaError_t error = cudaSuccess;
  auto launch = [&](auto functor) { error = detail::LaunchMap(r.input, r.output, r.count, functor, r.stream, LayoutVariant()); };
  if (r.backend == Backend::kSoftware) {
    detail::VisitSoftware(r.op, r.format, r.encode, r.decode, stochastic ? r.random_bits : nullptr,
                          launch);
  } else {
    detail::VisitHardware(r.op, r.format, r.encode.rounding,
                          r.encode.overflow == Overflow::kSaturate || !IsEncode(r.op),
                          HardwareHasBlackwellCvt(), launch);
  }
  if (error != cudaSuccess) {
    return Status::Error(Describe(r) + ": launch failed: " + cudaGetErrorString(error));
  }
  return Status::Ok();
}

}  // namespace lowbit::cuda
