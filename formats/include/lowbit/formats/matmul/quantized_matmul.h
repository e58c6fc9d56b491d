// The semantics of a matrix product on quantized weights, as one host model:
//
//   y[l][m][n] = ScheduledDot(schedule, x[l][m][*], Wop[l][n][*], K, t[l][n])
//
// where Wop is W dequantized into the instruction's 16-bit operand type
// (weight_operand.h: element times block or group scale, rounded once, exact
// for NVFP4 and for MX within the stated scale ranges), x is the activation's
// own BF16 / FP16 codes, and t is W's outer FP32 scale (NVFP4 tensor scale,
// FP8 channel scale), applied by the schedule's epilogue after the whole K
// reduction, split-K sum included (accumulation_schedule.h step 5). The
// schedule declares everything else: the instruction, the K chunk order
// (increasing K, zero-padded to the instruction's k), split-K and the order
// its parts are added in, promotion into FP32, alpha and the output type
// (docs/matmul.md "One semantics"). A kernel that declares a schedule must
// give these bits.
//
// Batch invariance: every output is a function of its own row of x, its row
// of W and the schedule, never of M or of the other rows, so a row of y has
// the same bits whatever M the call had (proptests/matmul/quantized_matmul_test.cc
// checks M = 1, 3, 16, 17, 128).
//
// Host only (the device twin of ScheduledDot exists: cuda/include/lowbit/cuda/
// tensor_core.h ModelMatmulOnDevice takes the operand codes this builds).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "lowbit/formats/format_list.h"
#include "lowbit/formats/matmul/accumulation_schedule.h"
#include "lowbit/formats/matmul/tensor_core_matrix.h"
#include "lowbit/formats/matmul/weight_operand.h"
#include "lowbit/formats/matmul/weights.h"
#include "lowbit/formats/tensor_core.h"

namespace lowbit::matmul {

// Why `schedule` cannot run a product of these weights and activations
// (nullptr when it can). The instruction must take 16-bit float operands of
// the activation's type on both sides; the epilogue must apply W's outer
// scale exactly when W has one.
inline const char* QuantizedScheduleProblem(const WeightView& w, ActivationType activation,
                                            const AccumulationSchedule& schedule) {
  if (const char* why = ScheduleProblem(schedule, w.k)) return why;
  const TensorCoreInstruction& inst = Instruction(schedule.instruction);
  const FormatSpec act = ActivationFormatOf(activation);
  if (!IsWeightOperandFormat(inst.b.code_format) || inst.b.widened_to_fp16 || inst.b.ignored_low_bits != 0) {
    return "quantized weights are dequantized into BF16 or FP16 operands: the instruction must take bf16 or f16";
  }
  if (inst.a.code_format.exponent_bits != act.exponent_bits || inst.a.code_format.mantissa_bits != act.mantissa_bits ||
      inst.b.code_format.exponent_bits != act.exponent_bits || inst.b.code_format.mantissa_bits != act.mantissa_bits) {
    return "the instruction's operand type is not the activation's (bf16 x takes a bf16 instruction, fp16 x an f16 one)";
  }
  if (HasOuterScale(w.format) && !schedule.scale_per_column) {
    return "these weights carry an FP32 tensor or channel scale: the schedule's epilogue must apply it "
           "(scale_per_column)";
  }
  if (!HasOuterScale(w.format) && schedule.scale_per_column) {
    return "these weights have no tensor or channel scale for the epilogue (scale_per_column must be off)";
  }
  return nullptr;
}

struct QuantizedMatmulResult {
  std::string error;                // empty when the product ran
  std::vector<std::uint32_t> y;     // [batch][m][n] codes of schedule.output
  std::int64_t inexact_weights = 0;  // operand weights the one rounding changed
};

// The model over a whole problem. x: activation bits [batch][m][K], dense.
// `threads` splits the rows of y (tensor_core_matrix.h ModelMatmul).
inline QuantizedMatmulResult QuantizedMatmulModel(const WeightView& w, const std::uint16_t* x,
                                                  ActivationType activation, std::int64_t m,
                                                  const AccumulationSchedule& schedule, int threads = 1) {
  QuantizedMatmulResult r;
  const ValidationResult valid = ValidateWeights(w);
  if (!valid.ok) {
    r.error = valid.error;
    return r;
  }
  if (m < 1) {
    r.error = "M = " + std::to_string(m) + " is not positive";
    return r;
  }
  if (x == nullptr) {
    r.error = "x is null";
    return r;
  }
  if (const char* why = QuantizedScheduleProblem(w, activation, schedule)) {
    r.error = why;
    return r;
  }
  const TensorCoreInstruction& inst = Instruction(schedule.instruction);
  r.y.resize(static_cast<std::size_t>(w.batch * m * w.n));
  std::vector<std::uint32_t> xs(static_cast<std::size_t>(m * w.k));
  std::vector<float> column_scales(static_cast<std::size_t>(w.n), 1.0f);
  for (std::int64_t l = 0; l < w.batch; ++l) {
    const OperandWeights wop = DequantizeToOperand(w, l, inst.b.code_format);
    r.inexact_weights += wop.inexact;
    for (std::size_t i = 0; i < xs.size(); ++i) xs[i] = x[static_cast<std::size_t>(l * m * w.k) + i];
    for (std::int64_t n = 0; n < w.n; ++n) column_scales[static_cast<std::size_t>(n)] = OuterScaleOf(w, l, n);
    ModelMatmul(schedule, xs.data(), wop.codes.data(), m, w.n, w.k, column_scales.data(),
                r.y.data() + l * m * w.n, threads);
  }
  return r;
}

}  // namespace lowbit::matmul
