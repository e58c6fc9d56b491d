// Run-time dispatch of the array kernels (convert-inl.h) over Highway
// targets, and the mapping from registry operations to encode plans and
// decode tables.
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

namespace lowbit::simd {
HWY_EXPORT(Encode);
HWY_EXPORT(DecodeTable);

namespace {

using registry::ConvertArgs;
using registry::Operation;
using registry::Status;

struct TargetKernels {
  std::int64_t target;
  void (*encode)(const EncodeJob&);
  void (*decode_table)(const DecodeJob&);
};

// One row per compiled target, best first (Highway target bits are smaller
// for better targets).
#define LOWBIT_SIMD_TARGET_ROW(ns, bit) {bit, &ns::Encode, &ns::DecodeTable},
constexpr TargetKernels kTargets[] = {
#if HWY_TARGETS & HWY_AVX3_DL
    LOWBIT_SIMD_TARGET_ROW(N_AVX3_DL, HWY_AVX3_DL)
#endif
#if HWY_TARGETS & HWY_AVX3
    LOWBIT_SIMD_TARGET_ROW(N_AVX3, HWY_AVX3)
#endif
#if HWY_TARGETS & HWY_AVX2
    LOWBIT_SIMD_TARGET_ROW(N_AVX2, HWY_AVX2)
#endif
#if HWY_TARGETS & HWY_SSE4
    LOWBIT_SIMD_TARGET_ROW(N_SSE4, HWY_SSE4)
#endif
};
#undef LOWBIT_SIMD_TARGET_ROW

// The best target hwy::GetChosenTarget() allows: HWY_DYNAMIC_DISPATCH reads
// one atomic (and honours hwy::SetSupportedTargetsForTest).
void DynamicEncode(const EncodeJob& job) { HWY_DYNAMIC_DISPATCH(Encode)(job); }
void DynamicDecodeTable(const DecodeJob& job) { HWY_DYNAMIC_DISPATCH(DecodeTable)(job); }
constexpr TargetKernels kDynamic{0, &DynamicEncode, &DynamicDecodeTable};

// The CPU's own targets, asked once: hwy::SupportedTargets() runs CPUID on
// every call in Highway 1.0.3, which cost more than a 4096-element kernel.
std::int64_t CpuTargets() {
  static const std::int64_t kCpu = hwy::SupportedTargets();
  return kCpu;
}

const TargetKernels* FindTarget(std::int64_t target) {
  for (const TargetKernels& row : kTargets) {
    if (row.target == target) return &row;
  }
  return nullptr;
}

Status Run(const TargetKernels& kernels, const ConvertArgs& args) {
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
      kernels.encode(EncodeJob{&plan, kind, args.input, args.output, code_bytes, args.count,
                               args.random_bits});
      return status;
    }
    case Operation::kDecodeToF32:
    case Operation::kDecodeToBf16: {
      const bool to_bf16 = args.operation == Operation::kDecodeToBf16;
      if (spec.total_bits <= 8) {
        kernels.decode_table(DecodeJob{DecodeTable(args.format, to_bf16, args.decode),
                                       static_cast<const std::uint8_t*>(args.input),
                                       spec.total_bits, args.output,
                                       to_bf16 ? 2 : 4, args.count});
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
      kernels.encode(EncodeJob{&plan, kind, args.input, args.output, to_bf16 ? 2 : 4,
                               args.count, nullptr});
      return status;
    }
  }
  return Status::Error("simd: unknown operation");
}

}  // namespace

std::vector<std::int64_t> CompiledTargets() {
  std::vector<std::int64_t> targets;
  for (const TargetKernels& row : kTargets) targets.push_back(row.target);
  return targets;
}

const char* TargetName(std::int64_t target) { return hwy::TargetName(target); }

bool TargetAvailable(std::int64_t target) {
  return FindTarget(target) != nullptr && (CpuTargets() & target) != 0;
}

bool Supports(const ConvertArgs& args) {
  return args.encode.rounding != RoundingMode::kStochastic || args.encode.random_bit_count < 32;
}

Status Convert(const ConvertArgs& args) { return Run(kDynamic, args); }

Status ConvertOnTarget(std::int64_t target, const ConvertArgs& args) {
  const TargetKernels* row = FindTarget(target);
  if (row == nullptr) {
    return Status::Error(std::string("simd: target ") + TargetName(target) + " is not compiled in");
  }
  if (!TargetAvailable(target)) {
    return Status::Error(std::string("simd: this CPU does not support ") + TargetName(target));
  }
  return Run(*row, args);
}

}  // namespace lowbit::simd
#endif  // HWY_ONCE
