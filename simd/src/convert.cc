// Run-time dispatch of the array kernels (convert-inl.h) over Highway
// targets (target_dispatch.h), and the mapping from registry operations to
// encode plans and decode tables.
#include <cstdint>
#include <string>
#include <vector>

#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "convert-inl.h"
#include "hwy/foreach_target.h"  // IWYU pragma: keep

#include "convert-inl.h"
#include "hwy/highway.h"

#if HWY_ONCE
#include "decode_tables.h"
#include "encode_plan.h"
#include "kernel_args.h"
#include "lowbit/formats/convert.h"
#include "lowbit/formats/format_list.h"
#include "lowbit/simd/simd.h"
#include "target_dispatch.h"

namespace lowbit::simd {
HWY_EXPORT(Encode);
HWY_EXPORT(DecodeTable);

namespace {

using registry::ConvertArgs;
using registry::Operation;
using registry::Status;

Status Run(std::int64_t target, const ConvertArgs& args) {
  const auto encode = LOWBIT_SIMD_KERNEL(Encode, target);
  const auto decode_table = LOWBIT_SIMD_KERNEL(DecodeTable, target);
  if (encode == nullptr || decode_table == nullptr) return detail::TargetError(target);
  Status status = registry::ValidateConvertArgs(args);
  if (!status.ok || args.count == 0) return status;
  if (!Supports(args)) {
    return Status::Error("simd: random_bit_count " + std::to_string(args.encode.random_bit_count) +
                         " is not supported (at most 31)");
  }
  const FormatSpec& spec = Spec(args.format);
  const int code_bytes = static_cast<int>(registry::CodeBytes(spec));
  switch (args.operation) {
    case Operation::kEncodeF32:
    case Operation::kEncodeBf16:
    case Operation::kEncodeF16: {
      const EncodePlan plan = MakeEncodePlan(spec, args.encode);
      const InputKind kind = args.operation == Operation::kEncodeF32    ? InputKind::kF32
                             : args.operation == Operation::kEncodeBf16 ? InputKind::kBf16
                                                                        : InputKind::kF16;
      encode(EncodeJob{&plan, kind, args.input, args.output, code_bytes, args.count,
                       args.random_bits});
      return status;
    }
    case Operation::kDecodeToF32:
    case Operation::kDecodeToBf16: {
      const bool to_bf16 = args.operation == Operation::kDecodeToBf16;
      if (spec.total_bits <= 8) {
        const NarrowDecodeTable narrow = DecodeTableNarrow(args.format, to_bf16, args.decode);
        decode_table(DecodeJob{DecodeTable(args.format, to_bf16, args.decode),
                               narrow.low, narrow.high, narrow.planes, narrow.low_zero,
                               static_cast<const std::uint8_t*>(args.input), spec.total_bits,
                               args.output, to_bf16 ? 2 : 4, args.count,
                               to_bf16 ? nullptr : DecodeArithmetic(args.format, args.decode)});
        return status;
      }
      // 16- and 32-bit sources: a decode is the model's Convert(spec ->
      // FP32/BF16) with the decode's NaN policy, i.e. an encode of the
      // exactly widened bits (convert.h ToDecodeEncodeOptions).
      const EncodePlan plan =
          MakeEncodePlan(to_bf16 ? kBf16 : kFp32, ToDecodeEncodeOptions(args.decode));
      const InputKind kind = spec.total_bits == 32      ? InputKind::kF32
                             : args.format == FormatId::kBf16 ? InputKind::kBf16
                                                              : InputKind::kF16;
      encode(EncodeJob{&plan, kind, args.input, args.output, to_bf16 ? 2 : 4, args.count,
                       nullptr});
      return status;
    }
  }
  return Status::Error("simd: unknown operation");
}

}  // namespace

bool Supports(const ConvertArgs& args) {
  return args.encode.rounding != RoundingMode::kStochastic || args.encode.random_bit_count < 32;
}

Status Convert(const ConvertArgs& args) { return Run(kBestTarget, args); }

Status ConvertOnTarget(std::int64_t target, const ConvertArgs& args) {
  // 0 would mean the best target here too; a caller naming a target means one.
  if (target == kBestTarget) return detail::TargetError(target);
  return Run(target, args);
}

}  // namespace lowbit::simd
#endif  // HWY_ONCE
