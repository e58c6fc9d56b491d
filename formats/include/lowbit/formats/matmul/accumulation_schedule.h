// An accumulation schedule: how a kernel computes y = x * W^T as a sequence
// of tensor-core instructions along K, so that model(x, W, schedule) is its
// output bit for bit (docs/tensor-cores.md "Accumulation schedules").
//
// For one output (m, n), with x[m] and W[n] the K codes of the row:
//   1. K is padded with zero codes to a multiple of the instruction's k (a
//      kernel's zero-filled tile tail; zeros take part in the alignment).
//   2. Split-K: the padded K is cut into `split_k` parts of
//      ceil(chunks / split_k) instruction chunks each (the last may be
//      shorter or empty; an empty part is +0).
//   3. In each part, chunk after chunk in increasing K: D = MMA(chunk, D),
//      starting from C = +0. With `promotion_interval` P > 0 (a multiple of
//      k), every P elements of K the chain restarts from +0 and its result is
//      added into an FP32 accumulator, acc = acc + D (one FP32 addition,
//      round to nearest even), as DeepSeek-V3 §3.3.2 and DeepGEMM promote the
//      FP8 accumulator into CUDA-core registers every 128 of K; the part's
//      value is acc. With P = 0 the part's value is the chain's D (widened
//      exactly to FP32 when the accumulator is FP16).
//   4. The parts are added in FP32 with round to nearest even, in order
//      (p0 + p1, then + p2, ...) or as a pairwise tree ((p0 + p1) + (p2 + p3)
//      ...; at each level an odd last part passes up unchanged).
//   5. Epilogue: if `scale_per_column` the FP32 value is multiplied by the
//      column's scale, then by `alpha` when alpha != 1 (each one FP32
//      multiplication, round to nearest even); then converted once, to
//      nearest even, to the output format (FP32, BF16 or FP16). With an FP16
//      accumulator, no promotion, no split and FP16 output, D is the output.
// Host and device; FP32 arithmetic is spelled as single + and * operations,
// which are correctly rounded on both (no contraction of a lone operation),
// and a NaN result of any of them is the canonical 0x7FFFFFFF that NVIDIA's
// FP32 units write (docs/formats-reference.md §3.3): the host's x87/SSE NaN
// would keep an operand's payload and sign, the GPU's does not.
#pragma once

#include <cstdint>

#include "lowbit/formats/config.h"
#include "lowbit/formats/convert.h"
#include "lowbit/formats/format_list.h"
#include "lowbit/formats/fp32_bits.h"
#include "lowbit/formats/matmul/tensor_core.h"
#include "lowbit/formats/tensor_core.h"

namespace lowbit::matmul {

inline constexpr int kMaxSplitK = 64;

enum class SplitReduction : std::uint8_t {
  kInOrder,       // p0 + p1, then + p2, ...
  kPairwiseTree,  // (p0 + p1) + (p2 + p3), ...
};

struct AccumulationSchedule {
  TensorCoreId instruction = TensorCoreId::kMmaBf16F32;
  int promotion_interval = 0;  // elements of K; 0: never promote
  int split_k = 1;
  SplitReduction split_reduction = SplitReduction::kInOrder;
  FormatId output = FormatId::kFp32;  // kFp32, kBf16 or kFp16
  float alpha = 1.0f;
  bool scale_per_column = false;  // multiply by the caller's column scale
};

// Why a schedule cannot run on a K; nullptr when it can.
constexpr const char* ScheduleProblem(const AccumulationSchedule& s, std::int64_t k) {
  const TensorCoreInstruction& inst = Instruction(s.instruction);
  if (k <= 0) return "K must be at least 1";
  if (s.split_k < 1 || s.split_k > kMaxSplitK) return "split_k must be between 1 and 64";
  if (s.promotion_interval < 0) return "the promotion interval must not be negative";
  if (s.promotion_interval % inst.k != 0) {
    return "the promotion interval must be a multiple of the instruction's k";
  }
  if (s.output != FormatId::kFp32 && s.output != FormatId::kBf16 && s.output != FormatId::kFp16) {
    return "the output format must be fp32, bf16 or fp16";
  }
  if (inst.arithmetic.rounding == FusedSumRounding::kWrapInteger &&
      (s.promotion_interval != 0 || s.split_k != 1 || s.output != FormatId::kFp32 || s.alpha != 1.0f ||
       s.scale_per_column)) {
    return "an integer instruction's schedule has no promotion, split, scale or conversion";
  }
  return nullptr;
}

// Two decoded rows as FusedDotStep reads them: Step runs the fused step of
// products [at, at + products_per_step) on the accumulator code d. Rows hold
// each instruction chunk's terms in step order (StepOrderedK), so a step's
// products are contiguous. The host matrix path (tensor_core_matrix.h)
// supplies another row pair with the same Step, so both run the one
// schedule below.
struct TermRowPair {
  const TensorCoreTerm* x;
  const TensorCoreTerm* w;
  LOWBIT_HD_CONSTEXPR std::uint32_t Step(const TensorCoreInstruction& inst, int fa, int fb, std::int64_t at,
                                         std::uint32_t d) const {
    return FusedDotStep(inst.arithmetic, fa, fb, x + at, w + at, inst.arithmetic.products_per_step, d);
  }
};

namespace detail {

// One FP32 operation's result as the GPU writes it: NaN canonical.
LOWBIT_HD_CONSTEXPR float CanonicalNan(float v) {
  return v != v ? F32FromBits(0x7FFFFFFFu) : v;
}

LOWBIT_HD_CONSTEXPR float AccumulatorToF32(const TensorCoreArithmetic& arith, std::uint32_t d) {
  return F32FromBits(DecodeToF32Bits(arith.accumulator, d));
}

// One chain of instruction chunks [first, last) from C = +0, each chunk one
// instruction as its lowering runs it (tensor_core.h TensorCoreDot).
template <typename Rows>
LOWBIT_HD_CONSTEXPR std::uint32_t ChainOfChunks(const TensorCoreInstruction& inst, int fa, int fb, const Rows& rows,
                                                std::int64_t first, std::int64_t last) {
  const int step = inst.arithmetic.products_per_step;
  std::uint32_t d = 0;
  for (std::int64_t chunk = first; chunk < last; ++chunk) {
    if (inst.lowering.c_added_after_steps) {
      std::uint32_t t = 0;
      for (int s = 0; s < inst.Steps(); ++s) t = rows.Step(inst, fa, fb, chunk * inst.k + s * step, t);
      d = AddRoundedNearest(inst.arithmetic, t, d);
    } else {
      for (int s = 0; s < inst.Steps(); ++s) d = rows.Step(inst, fa, fb, chunk * inst.k + s * step, d);
    }
  }
  return d;
}

// Step 3 for chunks [first, last): the part's FP32 value.
template <typename Rows>
LOWBIT_HD_CONSTEXPR float PartValue(const TensorCoreInstruction& inst, int fa, int fb,
                                    const AccumulationSchedule& s, const Rows& rows, std::int64_t first,
                                    std::int64_t last) {
  if (s.promotion_interval == 0) {
    return AccumulatorToF32(inst.arithmetic, ChainOfChunks(inst, fa, fb, rows, first, last));
  }
  const std::int64_t chunks_per_promotion = s.promotion_interval / inst.k;
  float acc = 0.0f;
  for (std::int64_t begin = first; begin < last; begin += chunks_per_promotion) {
    const std::int64_t end = begin + chunks_per_promotion < last ? begin + chunks_per_promotion : last;
    acc = CanonicalNan(acc + AccumulatorToF32(inst.arithmetic, ChainOfChunks(inst, fa, fb, rows, begin, end)));
  }
  return acc;
}

}  // namespace detail

// The K index whose term sits at position `at` of a decoded row, rows being
// stored chunk by chunk in step order: position p of chunk c holds the
// (p % L)-th product of step p / L.
LOWBIT_HD_CONSTEXPR std::int64_t StepOrderedK(const TensorCoreInstruction& inst, std::int64_t at) {
  const std::int64_t chunk = at / inst.k;
  const int p = static_cast<int>(at % inst.k);
  const int step = inst.arithmetic.products_per_step;
  return chunk * inst.k + inst.KOfStepProduct(p / step, p % step);
}

// Chunks of the instruction's k in a K (step 1).
LOWBIT_HD_CONSTEXPR std::int64_t ChunkCount(const TensorCoreInstruction& inst, std::int64_t k) {
  return (k + inst.k - 1) / inst.k;
}

// One output code from a row pair holding ChunkCount * inst.k terms each (the
// tail zero); `column_scale` is read only with scale_per_column. Integer
// instructions return the INT32 sum's bits.
template <typename Rows>
LOWBIT_HD_CONSTEXPR std::uint32_t ScheduledDot(const AccumulationSchedule& s, const Rows& rows, std::int64_t k,
                                               float column_scale) {
  const TensorCoreInstruction inst = InstructionCopy(s.instruction);
  const int fa = DatapathFormat(inst.a).mantissa_bits;
  const int fb = DatapathFormat(inst.b).mantissa_bits;
  const std::int64_t chunks = ChunkCount(inst, k);
  if (inst.arithmetic.rounding == FusedSumRounding::kWrapInteger) {
    return detail::ChainOfChunks(inst, fa, fb, rows, 0, chunks);
  }
  constexpr FormatSpec kHalf = kFp16;
  constexpr FormatSpec kBfloat = kBf16;
  const bool fp16_through = inst.arithmetic.accumulator.mantissa_bits == kHalf.mantissa_bits &&
                            s.promotion_interval == 0 && s.split_k == 1 &&
                            s.output == FormatId::kFp16 && !s.scale_per_column && s.alpha == 1.0f;
  if (fp16_through) return detail::ChainOfChunks(inst, fa, fb, rows, 0, chunks);

  const std::int64_t per_part = (chunks + s.split_k - 1) / s.split_k;
  float parts[kMaxSplitK] = {};
  const int part_count = s.split_k < kMaxSplitK ? s.split_k : kMaxSplitK;
  for (int p = 0; p < part_count; ++p) {
    const std::int64_t first = p * per_part < chunks ? p * per_part : chunks;
    const std::int64_t last = first + per_part < chunks ? first + per_part : chunks;
    parts[p] = detail::PartValue(inst, fa, fb, s, rows, first, last);
  }
  float value = parts[0];
  if (s.split_reduction == SplitReduction::kInOrder) {
    for (int p = 1; p < part_count; ++p) value = detail::CanonicalNan(value + parts[p]);
  } else {
    for (int width = 1; width < part_count; width *= 2) {
      for (int p = 0; p + width < part_count; p += 2 * width) {
        parts[p] = detail::CanonicalNan(parts[p] + parts[p + width]);
      }
    }
    value = parts[0];
  }
  if (s.scale_per_column) value = detail::CanonicalNan(value * column_scale);
  if (s.alpha != 1.0f) value = detail::CanonicalNan(value * s.alpha);
  if (s.output == FormatId::kFp32) return F32Bits(value);
  const FormatSpec out = s.output == FormatId::kBf16 ? kBfloat : kHalf;
  EncodeOptions nearest;
  return static_cast<std::uint32_t>(EncodeF32(out, value, nearest).code);
}

// The same for two rows of decoded terms.
LOWBIT_HD_CONSTEXPR std::uint32_t ScheduledDot(const AccumulationSchedule& s, const TensorCoreTerm* x,
                                               const TensorCoreTerm* w, std::int64_t k, float column_scale) {
  return ScheduledDot(s, TermRowPair{x, w}, k, column_scale);
}

}  // namespace lowbit::matmul
