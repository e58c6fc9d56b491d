// Argument checks shared by every backend (registry.h ValidateConvertArgs):
// one message per problem, naming it, so a caller sees the same error whether
// the scalar, SIMD or CUDA kernel rejected the call.
#include <string>

#include "lowbit/registry/registry.h"

namespace lowbit::registry {

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
  if (args.count == 0) return Status::Ok();
  const std::string count = std::to_string(args.count);
  if (args.input == nullptr) return Status::Error("null input with count " + count);
  if (args.output == nullptr) return Status::Error("null output with count " + count);
  const bool is_encode = info->encode;
  if (is_encode && args.encode.rounding == RoundingMode::kStochastic &&
      args.random_bits == nullptr) {
    return Status::Error("stochastic rounding needs random_bits (one word per element), got null");
  }
  if (is_encode && (args.encode.random_bit_count < 0 || args.encode.random_bit_count > 32)) {
    return Status::Error("random_bit_count " + std::to_string(args.encode.random_bit_count) +
                         " outside 0..32");
  }
  return Status::Ok();
}

}  // namespace lowbit::registry
