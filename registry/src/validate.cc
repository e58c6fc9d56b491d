// Argument checks shared by every backend (registry.h ValidateConvertArgs):
// one message per problem, naming it, so a caller sees the same error whether
// the scalar, SIMD or CUDA kernel rejected the call.
#include <cstdint>
#include <string>

#include "lowbit/formats/checked_size.h"
#include "lowbit/registry/registry.h"

namespace lowbit::registry {
namespace {

// "`field` N is not a valid `type` (0..last)" when the enum's value is past its
// last enumerator (every option enum starts at 0 and is dense).
template <typename Enum>
bool EnumInRange(Enum value, Enum last, const char* field, const char* type, std::string* error) {
  const int v = static_cast<int>(value);
  if (v <= static_cast<int>(last)) return true;
  *error = std::string(field) + " " + std::to_string(v) + " is not a valid " + type + " (0.." +
           std::to_string(static_cast<int>(last)) + ")";
  return false;
}

std::uintptr_t Address(const void* p) { return reinterpret_cast<std::uintptr_t>(p); }

bool Overlap(const BufferRange& a, const BufferRange& b) {
  if (a.data == nullptr || b.data == nullptr || a.bytes == 0 || b.bytes == 0) return false;
  const std::uintptr_t a0 = Address(a.data), b0 = Address(b.data);
  // a0 < b0 + b.bytes and b0 < a0 + a.bytes, without forming an end that wraps.
  return (a0 >= b0 ? a0 - b0 < b.bytes : b0 - a0 < a.bytes);
}

}  // namespace

Status ValidateEncodeOptions(const EncodeOptions& o) {
  std::string e;
  if (!EnumInRange(o.rounding, RoundingMode::kStochastic, "rounding", "RoundingMode", &e) ||
      !EnumInRange(o.overflow, Overflow::kWrap, "overflow", "Overflow", &e) ||
      !EnumInRange(o.inf_input, InfInput::kAlwaysNonFinite, "inf_input", "InfInput", &e) ||
      !EnumInRange(o.nan_sign, NanSign::kNegative, "nan_sign", "NanSign", &e) ||
      !EnumInRange(o.nan_payload, NanPayload::kPreserve, "nan_payload", "NanPayload", &e) ||
      !EnumInRange(o.nan_into_no_nan, NanIntoNoNan::kOppositeSignZero, "nan_into_no_nan",
                   "NanIntoNoNan", &e) ||
      !EnumInRange(o.zero_into_no_zero, ZeroIntoNoZero::kNan, "zero_into_no_zero", "ZeroIntoNoZero",
                   &e) ||
      !EnumInRange(o.negative_into_unsigned, NegativeIntoUnsigned::kClampZero,
                   "negative_into_unsigned", "NegativeIntoUnsigned", &e)) {
    return Status::Error(e);
  }
  return Status::Ok();
}

Status ValidateDecodeOptions(const DecodeOptions& o) {
  std::string e;
  if (!EnumInRange(o.nan_sign, NanSign::kNegative, "nan_sign", "NanSign", &e) ||
      !EnumInRange(o.nan_payload, NanPayload::kPreserve, "nan_payload", "NanPayload", &e)) {
    return Status::Error(e);
  }
  return Status::Ok();
}

Status CheckNoOverlap(std::string_view what, std::initializer_list<BufferRange> inputs,
                      std::initializer_list<BufferRange> outputs) {
  const auto error = [what](const BufferRange& out, const BufferRange& other) {
    return Status::Error(std::string(what) + ": " + out.name + " overlaps " + other.name +
                         " (in-place and overlapping buffers are not supported)");
  };
  for (auto out = outputs.begin(); out != outputs.end(); ++out) {
    for (const BufferRange& in : inputs) {
      if (Overlap(*out, in)) return error(*out, in);
    }
    for (auto other = outputs.begin(); other != out; ++other) {
      if (Overlap(*out, *other)) return error(*out, *other);
    }
  }
  return Status::Ok();
}

Status CheckAligned(std::string_view what, const void* pointer, std::size_t alignment, const char* name) {
  if (pointer == nullptr || Address(pointer) % alignment == 0) return Status::Ok();
  return Status::Error(std::string(what) + ": " + name + " is not aligned to " + std::to_string(alignment) +
                       " bytes");
}

Status ValidateConvertArgs(const ConvertArgs& args) {
  const OperationInfo* info = FindOperationInfo(args.operation);
  if (info == nullptr) {
    return Status::Error("unknown operation " +
                         std::to_string(static_cast<int>(args.operation)));
  }
  const int format_index = static_cast<int>(args.format);
  if (format_index >= kFormatCount) {
    return Status::Error("unknown format id " + std::to_string(format_index));
  }
  if (!OperationApplies(args.operation, args.format)) {
    const std::string name = Spec(args.format).name;
    if (args.operation == Operation::kDecodeToBf16) {
      return Status::Error("decode-to-bf16 of " + name + ": BF16 cannot hold every " + name +
                           " value");
    }
    return Status::Error(std::string(info->name) + " does not apply to " +
                         name);
  }
  const bool is_encode = info->encode;
  if (Status s = is_encode ? ValidateEncodeOptions(args.encode) : ValidateDecodeOptions(args.decode); !s.ok) {
    return s;
  }
  if (args.count == 0) return Status::Ok();
  const std::string count = std::to_string(args.count);
  if (args.input == nullptr) return Status::Error("null input with count " + count);
  if (args.output == nullptr) return Status::Error("null output with count " + count);
  if (is_encode && args.encode.rounding == RoundingMode::kStochastic &&
      args.random_bits == nullptr) {
    return Status::Error("stochastic rounding needs random_bits (one word per element), got null");
  }
  if (is_encode && (args.encode.random_bit_count < 0 || args.encode.random_bit_count > 32)) {
    return Status::Error("random_bit_count " + std::to_string(args.encode.random_bit_count) +
                         " outside 0..32");
  }
  // Every buffer is count elements of at most 8 bytes: its byte size must fit.
  std::size_t in_bytes = 0, out_bytes = 0, random_bytes = 0;
  if (!CheckedMul(args.count, InputBytes(args.operation, args.format), &in_bytes) ||
      !CheckedMul(args.count, OutputBytes(args.operation, args.format), &out_bytes) ||
      !CheckedMul(args.count, sizeof(std::uint32_t), &random_bytes)) {
    return Status::Error("count " + count + " overflows the buffer size in bytes");
  }
  const bool stochastic = is_encode && args.encode.rounding == RoundingMode::kStochastic;
  return CheckNoOverlap(info->name,
                        {{args.input, in_bytes, "input"},
                         {stochastic ? args.random_bits : nullptr, random_bytes, "random_bits"}},
                        {{args.output, out_bytes, "output"}});
}

}  // namespace lowbit::registry
