// The tensor-core instructions of Hopper (sm_90) as data: what each
// instruction takes, and the parameters of the fused dot-product arithmetic
// that produces its output bits. The model (matmul/tensor_core.h) is one
// algorithm over these parameters; the probes (cuda/src/tensor_core_probe.cu)
// run the real instructions; the oracle bound (reference/) reads the same
// parameters to say how far a result may be from the exact sum. Nothing here
// is retyped anywhere else (docs/tensor-cores.md "The parameters").
//
// The arithmetic, for one output element and one step of L products
// (docs/tensor-cores.md "One fused step"):
//   1. every operand is unpacked to (sign, significand s, exponent e) with
//      1 <= s < 2 for normals and s < 1, e = the format's smallest normal
//      exponent for subnormals; a product's e is e_a + e_b, its s = s_a * s_b
//      (exact, 0 <= s < 4); C is unpacked the same way in the output format;
//   2. a term that is zero gets the exponent `zero_term_exponent`;
//   3. e_max is the largest e among the L products and C;
//   4. every term is truncated toward zero to a multiple of
//      2^(e_max - aligned_fraction_bits) (no guard, round or sticky bit);
//   5. the truncated terms are added exactly;
//   6. the sum is rounded once into the output format by `rounding`, keeping
//      `kept_significand_bits` (FP32: 24; FP8 products' FP32 output: 14,
//      so the low 10 bits of the FP32 code are zero);
//   7. a zero result is +0 (an exact zero sum, and a negative sum rounded to
//      zero); a NaN operand, 0 * Inf or Inf - Inf gives `nan_code`;
//      a magnitude of 2^(emax+1) or more after step 6 gives Inf.
// This is the scheme of MMA-Sim (Xie et al., arXiv 2511.10909; mmasim 2.1.1,
// mmasim/arithmetic/fdpa.py `t_fdpa`), of Khattak & Mikaitis (arXiv
// 2512.07004) and of the DeepSeek-V3 report (arXiv 2412.19437 §3.3) for FP8;
// docs/tensor-cores.md records what the hardware showed for each parameter.
#pragma once

#include <cstdint>
#include <string_view>

#include "lowbit/formats/config.h"
#include "lowbit/formats/format_list.h"
#include "lowbit/formats/format_spec.h"

namespace lowbit {

// How the exact sum of the aligned terms becomes the output code (step 6).
enum class FusedSumRounding : std::uint8_t {
  kTruncate,     // toward zero, to kept_significand_bits; FP32 outputs
  kNearestEven,  // IEEE round to nearest even; FP16 outputs
  kWrapInteger,  // integer MMAs: the exact sum modulo 2^32 (PTX ISA 9.0
                 // §9.7.14.5.14, mma without .satfinite)
};

// One datapath: the arithmetic of a family of instructions.
struct TensorCoreArithmetic {
  const char* name;
  int products_per_step;      // L: products added in one fused step
  int aligned_fraction_bits;  // F: bits kept below e_max in step 4
  int zero_term_exponent;     // step 2
  FusedSumRounding rounding;
  int kept_significand_bits;  // step 6, including the leading bit
  FormatSpec accumulator;     // the format of C and D
  std::uint32_t nan_code;     // the one NaN the datapath writes
};

// How a multiplicand code reaches the datapath.
struct TensorCoreOperand {
  FormatSpec code_format;   // what the caller passes (FP32 for TF32)
  int ignored_low_bits;     // TF32: the low 13 bits of the FP32 code are not read
  bool widened_to_fp16;     // converted (exactly) to FP16 first: FP8 mma.sync on sm_90
};

// How the instruction runs its steps, where that is not one native fused
// step per products_per_step consecutive k.
struct TensorCoreLowering {
  // Consecutive k values that go to the same step: k belongs to step
  // (k / step_k_run) % Steps(). 0: products_per_step (step s takes the s-th
  // block of consecutive k).
  int step_k_run;
  // false: C enters the first step. true: the steps start from +0 and C is
  // added to their result by one IEEE addition in the accumulator format,
  // rounded to nearest even (the NaN result is the datapath's nan_code).
  bool c_added_after_steps;
};

enum class TensorCoreInstructionKind : std::uint8_t {
  kMmaSync,  // warp-level mma.sync.aligned (PTX ISA 9.0 §9.7.14)
  kWgmma,    // warpgroup-level wgmma.mma_async (PTX ISA 9.0 §9.7.15)
};

struct TensorCoreInstruction {
  const char* name;  // lowbit's name: "<kind>.<shape>.<dtype>.<atype>.<btype>"
  const char* ptx;   // the PTX instruction the probe issues
  TensorCoreInstructionKind kind;
  int m, n, k;       // wgmma: n is the smallest N; every multiple of 8 up to 256 exists
  TensorCoreOperand a, b;
  TensorCoreArithmetic arithmetic;
  TensorCoreLowering lowering;
  // Steps of `arithmetic.products_per_step` products in one instruction,
  // chained: D = step(S-1, ..., step(0, C)) (or from +0, see lowering).
  LOWBIT_HD_CONSTEXPR int Steps() const { return k / arithmetic.products_per_step; }
  LOWBIT_HD_CONSTEXPR int StepKRun() const {
    return lowering.step_k_run == 0 ? arithmetic.products_per_step : lowering.step_k_run;
  }
  // The k (within one instruction) of the i-th product of step s.
  LOWBIT_HD_CONSTEXPR int KOfStepProduct(int s, int i) const {
    const int run = StepKRun();
    return (i / run) * (run * Steps()) + s * run + i % run;
  }
};

namespace tensor_core {

// FP32 outputs of 16-bit and TF32 products: F = 25 on Hopper (MMA-Sim's
// `_mma_F_bits["Hopper"]`), truncation, zero terms at 2^-133.
inline constexpr TensorCoreArithmetic kFp32Of16Bit{
    "hopper-fp32-accumulate", 16, 25, -133, FusedSumRounding::kTruncate, 24, kFp32, 0x7FFFFFFFu};
inline constexpr TensorCoreArithmetic kFp32OfTf32{
    "hopper-fp32-accumulate-k8", 8, 25, -133, FusedSumRounding::kTruncate, 24, kFp32, 0x7FFFFFFFu};
// FP16 outputs: the same alignment, rounded to nearest even into FP16.
inline constexpr TensorCoreArithmetic kFp16Of16Bit{
    "hopper-fp16-accumulate", 16, 25, -21, FusedSumRounding::kNearestEven, 11, kFp16, 0x7FFFu};
// wgmma FP8: 32 products, 13 fraction bits, FP32 output truncated to 13
// mantissa bits (DeepSeek-V3 §3.3.2: "around 14 bits"; MMA-Sim "RZ-E8M13").
inline constexpr TensorCoreArithmetic kFp32OfFp8{
    "hopper-fp8-fp32-accumulate", 32, 13, -133, FusedSumRounding::kTruncate, 14, kFp32, 0x7FFFFFFFu};
inline constexpr TensorCoreArithmetic kFp16OfFp8{
    "hopper-fp8-fp16-accumulate", 32, 13, -21, FusedSumRounding::kNearestEven, 11, kFp16, 0x7FFFu};
// INT8 x INT8 -> INT32: exact, wrapping.
inline constexpr FormatSpec kInt32{"int32", FormatKind::kInteger, 32, true, 0, 0, 0, true, SpecialCodes::kNone, nullptr};
inline constexpr TensorCoreArithmetic kInt32OfInt8{
    "int32-accumulate", 32, 0, 0, FusedSumRounding::kWrapInteger, 32, kInt32, 0u};

inline constexpr TensorCoreOperand kBf16Operand{kBf16, 0, false};
inline constexpr TensorCoreOperand kFp16Operand{kFp16, 0, false};
inline constexpr TensorCoreOperand kTf32Operand{kFp32, 13, false};
inline constexpr TensorCoreOperand kE4m3Operand{kE4m3, 0, false};
inline constexpr TensorCoreOperand kE5m2Operand{kE5m2, 0, false};
inline constexpr TensorCoreOperand kInt8Operand{kInt8, 0, false};
// mma.sync FP8 on sm_90 is not a native instruction: ptxas converts the
// operands to FP16 and issues FP16 MMAs of k = 16 (docs/tensor-cores.md
// "FP8 mma.sync on sm_90 is three instructions", with NVIDIA's statement and
// the SASS). CUDA 13.0's ptxas converts the low and the high two bytes of each operand register
// separately (F2FP.F16.E4M3.UNPACK_B), so the first HMMA.16816 takes the k
// with k mod 4 in {0, 1} and the second those in {2, 3}; the first starts
// from +0 (RZ), and C is added to the second's result by FADD (HADD2 for an
// FP16 accumulator).
inline constexpr TensorCoreOperand kE4m3ViaFp16{kE4m3, 0, true};
inline constexpr TensorCoreOperand kE5m2ViaFp16{kE5m2, 0, true};
inline constexpr TensorCoreLowering kNative{0, false};
inline constexpr TensorCoreLowering kSm90Fp8MmaSync{2, true};

}  // namespace tensor_core

// X(Id, name, ptx, kind, rows, cols, depth, a, b, arithmetic, lowering) for every instruction
// lowbit models.
#define LOWBIT_TENSOR_CORE_INSTRUCTIONS(X)                                                                                                  \
  X(MmaBf16F32, "mma.m16n8k16.f32.bf16.bf16", "mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32", kMmaSync, 16, 8, 16, kBf16Operand, kBf16Operand, kFp32Of16Bit, kNative) \
  X(MmaF16F32, "mma.m16n8k16.f32.f16.f16", "mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32", kMmaSync, 16, 8, 16, kFp16Operand, kFp16Operand, kFp32Of16Bit, kNative)      \
  X(MmaF16F16, "mma.m16n8k16.f16.f16.f16", "mma.sync.aligned.m16n8k16.row.col.f16.f16.f16.f16", kMmaSync, 16, 8, 16, kFp16Operand, kFp16Operand, kFp16Of16Bit, kNative)      \
  X(MmaTf32F32, "mma.m16n8k8.f32.tf32.tf32", "mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32", kMmaSync, 16, 8, 8, kTf32Operand, kTf32Operand, kFp32OfTf32, kNative)      \
  X(MmaE4m3E4m3F32, "mma.m16n8k32.f32.e4m3.e4m3", "mma.sync.aligned.m16n8k32.row.col.f32.e4m3.e4m3.f32", kMmaSync, 16, 8, 32, kE4m3ViaFp16, kE4m3ViaFp16, kFp32Of16Bit, kSm90Fp8MmaSync) \
  X(MmaE4m3E5m2F32, "mma.m16n8k32.f32.e4m3.e5m2", "mma.sync.aligned.m16n8k32.row.col.f32.e4m3.e5m2.f32", kMmaSync, 16, 8, 32, kE4m3ViaFp16, kE5m2ViaFp16, kFp32Of16Bit, kSm90Fp8MmaSync) \
  X(MmaE5m2E4m3F32, "mma.m16n8k32.f32.e5m2.e4m3", "mma.sync.aligned.m16n8k32.row.col.f32.e5m2.e4m3.f32", kMmaSync, 16, 8, 32, kE5m2ViaFp16, kE4m3ViaFp16, kFp32Of16Bit, kSm90Fp8MmaSync) \
  X(MmaE5m2E5m2F32, "mma.m16n8k32.f32.e5m2.e5m2", "mma.sync.aligned.m16n8k32.row.col.f32.e5m2.e5m2.f32", kMmaSync, 16, 8, 32, kE5m2ViaFp16, kE5m2ViaFp16, kFp32Of16Bit, kSm90Fp8MmaSync) \
  X(MmaE4m3E4m3F16, "mma.m16n8k32.f16.e4m3.e4m3", "mma.sync.aligned.m16n8k32.row.col.f16.e4m3.e4m3.f16", kMmaSync, 16, 8, 32, kE4m3ViaFp16, kE4m3ViaFp16, kFp16Of16Bit, kSm90Fp8MmaSync) \
  X(MmaE4m3E5m2F16, "mma.m16n8k32.f16.e4m3.e5m2", "mma.sync.aligned.m16n8k32.row.col.f16.e4m3.e5m2.f16", kMmaSync, 16, 8, 32, kE4m3ViaFp16, kE5m2ViaFp16, kFp16Of16Bit, kSm90Fp8MmaSync) \
  X(MmaE5m2E4m3F16, "mma.m16n8k32.f16.e5m2.e4m3", "mma.sync.aligned.m16n8k32.row.col.f16.e5m2.e4m3.f16", kMmaSync, 16, 8, 32, kE5m2ViaFp16, kE4m3ViaFp16, kFp16Of16Bit, kSm90Fp8MmaSync) \
  X(MmaE5m2E5m2F16, "mma.m16n8k32.f16.e5m2.e5m2", "mma.sync.aligned.m16n8k32.row.col.f16.e5m2.e5m2.f16", kMmaSync, 16, 8, 32, kE5m2ViaFp16, kE5m2ViaFp16, kFp16Of16Bit, kSm90Fp8MmaSync) \
  X(MmaS8S32, "mma.m16n8k32.s32.s8.s8", "mma.sync.aligned.m16n8k32.row.col.s32.s8.s8.s32", kMmaSync, 16, 8, 32, kInt8Operand, kInt8Operand, kInt32OfInt8, kNative)            \
  X(WgmmaBf16F32, "wgmma.m64nNk16.f32.bf16.bf16", "wgmma.mma_async.sync.aligned.m64nNk16.f32.bf16.bf16", kWgmma, 64, 8, 16, kBf16Operand, kBf16Operand, kFp32Of16Bit, kNative) \
  X(WgmmaF16F32, "wgmma.m64nNk16.f32.f16.f16", "wgmma.mma_async.sync.aligned.m64nNk16.f32.f16.f16", kWgmma, 64, 8, 16, kFp16Operand, kFp16Operand, kFp32Of16Bit, kNative)      \
  X(WgmmaF16F16, "wgmma.m64nNk16.f16.f16.f16", "wgmma.mma_async.sync.aligned.m64nNk16.f16.f16.f16", kWgmma, 64, 8, 16, kFp16Operand, kFp16Operand, kFp16Of16Bit, kNative)      \
  X(WgmmaTf32F32, "wgmma.m64nNk8.f32.tf32.tf32", "wgmma.mma_async.sync.aligned.m64nNk8.f32.tf32.tf32", kWgmma, 64, 8, 8, kTf32Operand, kTf32Operand, kFp32OfTf32, kNative)      \
  X(WgmmaE4m3E4m3F32, "wgmma.m64nNk32.f32.e4m3.e4m3", "wgmma.mma_async.sync.aligned.m64nNk32.f32.e4m3.e4m3", kWgmma, 64, 8, 32, kE4m3Operand, kE4m3Operand, kFp32OfFp8, kNative) \
  X(WgmmaE4m3E5m2F32, "wgmma.m64nNk32.f32.e4m3.e5m2", "wgmma.mma_async.sync.aligned.m64nNk32.f32.e4m3.e5m2", kWgmma, 64, 8, 32, kE4m3Operand, kE5m2Operand, kFp32OfFp8, kNative) \
  X(WgmmaE5m2E4m3F32, "wgmma.m64nNk32.f32.e5m2.e4m3", "wgmma.mma_async.sync.aligned.m64nNk32.f32.e5m2.e4m3", kWgmma, 64, 8, 32, kE5m2Operand, kE4m3Operand, kFp32OfFp8, kNative) \
  X(WgmmaE5m2E5m2F32, "wgmma.m64nNk32.f32.e5m2.e5m2", "wgmma.mma_async.sync.aligned.m64nNk32.f32.e5m2.e5m2", kWgmma, 64, 8, 32, kE5m2Operand, kE5m2Operand, kFp32OfFp8, kNative) \
  X(WgmmaE4m3E4m3F16, "wgmma.m64nNk32.f16.e4m3.e4m3", "wgmma.mma_async.sync.aligned.m64nNk32.f16.e4m3.e4m3", kWgmma, 64, 8, 32, kE4m3Operand, kE4m3Operand, kFp16OfFp8, kNative) \
  X(WgmmaE4m3E5m2F16, "wgmma.m64nNk32.f16.e4m3.e5m2", "wgmma.mma_async.sync.aligned.m64nNk32.f16.e4m3.e5m2", kWgmma, 64, 8, 32, kE4m3Operand, kE5m2Operand, kFp16OfFp8, kNative) \
  X(WgmmaE5m2E4m3F16, "wgmma.m64nNk32.f16.e5m2.e4m3", "wgmma.mma_async.sync.aligned.m64nNk32.f16.e5m2.e4m3", kWgmma, 64, 8, 32, kE5m2Operand, kE4m3Operand, kFp16OfFp8, kNative) \
  X(WgmmaE5m2E5m2F16, "wgmma.m64nNk32.f16.e5m2.e5m2", "wgmma.mma_async.sync.aligned.m64nNk32.f16.e5m2.e5m2", kWgmma, 64, 8, 32, kE5m2Operand, kE5m2Operand, kFp16OfFp8, kNative)

enum class TensorCoreId : std::uint8_t {
#define LOWBIT_TC_ENUM(Id, name, ptx, kind, rows, cols, depth, a, b, arith, lowering) k##Id,
  LOWBIT_TENSOR_CORE_INSTRUCTIONS(LOWBIT_TC_ENUM)
#undef LOWBIT_TC_ENUM
};

inline constexpr TensorCoreInstruction kTensorCoreInstructions[] = {
#define LOWBIT_TC_ENTRY(Id, name, ptx, kind, rows, cols, depth, a, b, arith, lowering) \
  {name, ptx, TensorCoreInstructionKind::kind, rows, cols, depth, tensor_core::a, tensor_core::b, tensor_core::arith, tensor_core::lowering},
    LOWBIT_TENSOR_CORE_INSTRUCTIONS(LOWBIT_TC_ENTRY)
#undef LOWBIT_TC_ENTRY
};
inline constexpr int kTensorCoreInstructionCount =
    sizeof(kTensorCoreInstructions) / sizeof(kTensorCoreInstructions[0]);

// Host and constant expressions (device code takes a compile-time copy, as
// with Spec(FormatId)).
constexpr const TensorCoreInstruction& Instruction(TensorCoreId id) {
  return kTensorCoreInstructions[static_cast<int>(id)];
}

// A copy of an instruction's description that host and device code can hold
// at run time: device code cannot refer to the namespace-scope table, so each
// id's copy is made in a constant expression (as format_list.h's Spec notes).
template <TensorCoreId Id>
LOWBIT_HD_CONSTEXPR TensorCoreInstruction InstructionCopy() {
  constexpr TensorCoreInstruction kCopy = Instruction(Id);
  return kCopy;
}

LOWBIT_HD_CONSTEXPR TensorCoreInstruction InstructionCopy(TensorCoreId id) {
  switch (id) {
#define LOWBIT_TC_COPY(Id, name, ptx, kind, rows, cols, depth, a, b, arith, lowering) \
  case TensorCoreId::k##Id:                                               \
    return InstructionCopy<TensorCoreId::k##Id>();
    LOWBIT_TENSOR_CORE_INSTRUCTIONS(LOWBIT_TC_COPY)
#undef LOWBIT_TC_COPY
  }
  return InstructionCopy<TensorCoreId::kMmaBf16F32>();  // unreachable for valid ids
}

// By lowbit's name ("wgmma.m64nNk32.f32.e4m3.e4m3"); false if unknown.
constexpr bool FindTensorCoreInstruction(std::string_view name, TensorCoreId* out) {
  for (int i = 0; i < kTensorCoreInstructionCount; ++i) {
    if (name == kTensorCoreInstructions[i].name) {
      *out = static_cast<TensorCoreId>(i);
      return true;
    }
  }
  return false;
}

}  // namespace lowbit
