// The "scalar" backend: the model (formats/convert.h) applied element by
// element. It is the row every other backend is compared with, so it does
// nothing but Convert in a loop; codes are stored CodeBytes() wide.
#include <cstdint>
#include <cstring>

#include "lowbit/formats/convert.h"
#include "lowbit/registry/registry.h"

namespace lowbit::registry {
namespace {

template <typename In, typename Out>
void ConvertArray(const FormatSpec& src, const In* input, const FormatSpec& dst, Out* output,
                  std::size_t count, EncodeOptions options, const std::uint32_t* random_bits) {
  const bool stochastic = options.rounding == RoundingMode::kStochastic;
  for (std::size_t i = 0; i < count; ++i) {
    if (stochastic) options.random_bits = random_bits[i];
    output[i] = static_cast<Out>(Convert(src, input[i], dst, options).code);
  }
}

// Dispatches on the width of the code side (CodeBytes of `codes`).
template <typename In>
void EncodeInto(const FormatSpec& src, const In* input, const FormatSpec& codes, void* output,
                const ConvertArgs& args) {
  switch (CodeBytes(codes)) {
    case 1:
      return ConvertArray(src, input, codes, static_cast<std::uint8_t*>(output), args.count,
                          args.encode, args.random_bits);
    case 2:
      return ConvertArray(src, input, codes, static_cast<std::uint16_t*>(output), args.count,
                          args.encode, args.random_bits);
    case 4:
      return ConvertArray(src, input, codes, static_cast<std::uint32_t*>(output), args.count,
                          args.encode, args.random_bits);
    default:
      return ConvertArray(src, input, codes, static_cast<std::uint64_t*>(output), args.count,
                          args.encode, args.random_bits);
  }
}

template <typename Out>
void DecodeFrom(const FormatSpec& codes, const void* input, const FormatSpec& dst, Out* output,
                const ConvertArgs& args) {
  const EncodeOptions options = ToDecodeEncodeOptions(args.decode);
  switch (CodeBytes(codes)) {
    case 1:
      return ConvertArray(codes, static_cast<const std::uint8_t*>(input), dst, output,
                          args.count, options, nullptr);
    case 2:
      return ConvertArray(codes, static_cast<const std::uint16_t*>(input), dst, output,
                          args.count, options, nullptr);
    case 4:
      return ConvertArray(codes, static_cast<const std::uint32_t*>(input), dst, output,
                          args.count, options, nullptr);
    default:
      return ConvertArray(codes, static_cast<const std::uint64_t*>(input), dst, output,
                          args.count, options, nullptr);
  }
}

Status RunScalar(const ConvertArgs& args) {
  Status status = ValidateConvertArgs(args);
  if (!status.ok || args.count == 0) return status;
  const FormatSpec& spec = Spec(args.format);
  switch (args.operation) {
    case Operation::kEncodeF32:
      // float[] is read as its bits: Convert takes FP32 codes.
      EncodeInto(kFp32, static_cast<const std::uint32_t*>(args.input), spec, args.output, args);
      break;
    case Operation::kEncodeBf16:
      EncodeInto(kBf16, static_cast<const std::uint16_t*>(args.input), spec, args.output, args);
      break;
    case Operation::kEncodeF16:
      EncodeInto(kFp16, static_cast<const std::uint16_t*>(args.input), spec, args.output, args);
      break;
    case Operation::kDecodeToF32:
      DecodeFrom(spec, args.input, kFp32, static_cast<std::uint32_t*>(args.output), args);
      break;
    case Operation::kDecodeToBf16:
      DecodeFrom(spec, args.input, kBf16, static_cast<std::uint16_t*>(args.output), args);
      break;
  }
  return status;
}

}  // namespace

void RegisterScalarBackend(Registry& registry) {
  for (Operation operation : kAllOperations) {
    for (FormatId format : kAllFormats) {
      if (!OperationApplies(operation, format)) continue;
      registry.Add(KernelEntry{
          .operation = operation,
          .format = format,
          .backend = "scalar",
          .supports = [](const ConvertArgs&) { return true; },  // the model takes every option
          .available = [] { return true; },
          .run = RunScalar,
      });
    }
  }
  RegisterScalarRecipes(registry);
  RegisterScalarPacking(registry);
}

}  // namespace lowbit::registry
