// The "scalar" backend: the model (formats/convert.h) applied element by
// element. It is the row every other backend is compared with, so it does
// nothing but Convert in a loop; codes are stored CodeBytes() wide.
#include <cstdint>
#include <cstring>

#include "lowbit/formats/convert.h"
#include "lowbit/registry/registry.h"

namespace lowbit::registry {
namespace {

// ConvertArgs buffers are void* and may sit at any address (registry.h
// ValidateConvertArgs: "Buffers take any alignment", as the SIMD kernels'
// unaligned loads do), so elements are read and written with memcpy, never
// through a misaligned In* / Out* (undefined behaviour); compilers turn each
// into one plain load or store. The pointers arrive as bytes for that reason.
template <typename T>
T LoadAt(const unsigned char* bytes, std::size_t i) {
  T v;
  std::memcpy(&v, bytes + i * sizeof(T), sizeof(T));
  return v;
}

template <typename In, typename Out>
void ConvertArray(const FormatSpec& src, const void* input, const FormatSpec& dst, void* output,
                  std::size_t count, EncodeOptions options, const std::uint32_t* random_bits) {
  const bool stochastic = options.rounding == RoundingMode::kStochastic;
  const auto* in = static_cast<const unsigned char*>(input);
  const auto* random = reinterpret_cast<const unsigned char*>(random_bits);
  auto* out = static_cast<unsigned char*>(output);
  for (std::size_t i = 0; i < count; ++i) {
    if (stochastic) options.random_bits = LoadAt<std::uint32_t>(random, i);
    const Out code = static_cast<Out>(Convert(src, LoadAt<In>(in, i), dst, options).code);
    std::memcpy(out + i * sizeof(Out), &code, sizeof(Out));
  }
}

// Dispatches on the width of the code side (CodeBytes of `codes`).
template <typename In>
void EncodeInto(const FormatSpec& src, const void* input, const FormatSpec& codes, void* output,
                const ConvertArgs& args) {
  switch (CodeBytes(codes)) {
    case 1:
      return ConvertArray<In, std::uint8_t>(src, input, codes, output, args.count,
                          args.encode, args.random_bits);
    case 2:
      return ConvertArray<In, std::uint16_t>(src, input, codes, output, args.count,
                          args.encode, args.random_bits);
    case 4:
      return ConvertArray<In, std::uint32_t>(src, input, codes, output, args.count,
                          args.encode, args.random_bits);
    default:
      return ConvertArray<In, std::uint64_t>(src, input, codes, output, args.count,
                          args.encode, args.random_bits);
  }
}

template <typename Out>
void DecodeFrom(const FormatSpec& codes, const void* input, const FormatSpec& dst, void* output,
                const ConvertArgs& args) {
  const EncodeOptions options = ToDecodeEncodeOptions(args.decode);
  switch (CodeBytes(codes)) {
    case 1:
      return ConvertArray<std::uint8_t, Out>(codes, input, dst, output,
                          args.count, options, nullptr);
    case 2:
      return ConvertArray<std::uint16_t, Out>(codes, input, dst, output,
                          args.count, options, nullptr);
    case 4:
      return ConvertArray<std::uint32_t, Out>(codes, input, dst, output,
                          args.count, options, nullptr);
    default:
      return ConvertArray<std::uint64_t, Out>(codes, input, dst, output,
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
      EncodeInto<std::uint32_t>(kFp32, args.input, spec, args.output, args);
      break;
    case Operation::kEncodeBf16:
      EncodeInto<std::uint16_t>(kBf16, args.input, spec, args.output, args);
      break;
    case Operation::kEncodeF16:
      EncodeInto<std::uint16_t>(kFp16, args.input, spec, args.output, args);
      break;
    case Operation::kDecodeToF32:
      DecodeFrom<std::uint32_t>(spec, args.input, kFp32, args.output, args);
      break;
    case Operation::kDecodeToBf16:
      DecodeFrom<std::uint16_t>(spec, args.input, kBf16, args.output, args);
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
  RegisterScalarMatmul(registry);
}

}  // namespace lowbit::registry
