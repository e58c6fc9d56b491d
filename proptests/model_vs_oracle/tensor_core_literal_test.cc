// Tensor-core results typed by hand from the published descriptions of
// Hopper's arithmetic (docs/tensor-cores.md: MMA-Sim, arXiv 2511.10909; Khattak &
// Mikaitis, arXiv 2512.07004; DeepSeek-V3, arXiv 2412.19437 §3.3; PTX ISA 9.0
// §9.7.14.5.14 for the integer wrap; docs/tensor-cores.md "FP8 mma.sync on
// sm_90 is three instructions"), with the arithmetic in a
// comment. Each code is checked against the model (TensorCoreDot) and, for
// one-step instructions, against the oracle's bound; where no term loses bits
// the oracle must fix the same code. These pin the spec's parameters
// themselves (F, kept bits, rounding, NaN code), which the oracle reads from
// the same data as the model and so cannot question.
#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "lowbit/formats/matmul/tensor_core.h"
#include "lowbit/formats/tensor_core.h"
#include "lowbit/reference/tensor_core_bound.h"

namespace lowbit {
namespace {

// Operand codes of one instruction: k codes each, all +0 unless set.
struct Operands {
  std::vector<std::uint32_t> a, b;
};

const TensorCoreInstruction& Named(const char* name) {
  TensorCoreId id{};
  if (!FindTensorCoreInstruction(name, &id)) throw std::invalid_argument(std::string("no instruction ") + name);
  return Instruction(id);
}

Operands Zeros(const TensorCoreInstruction& inst) {
  return {std::vector<std::uint32_t>(inst.k, 0u), std::vector<std::uint32_t>(inst.k, 0u)};
}

enum class Exactness { kTermsExact, kTermsTruncated };

// D of `inst` on the operands and c must be `expected`; for a one-step
// instruction the oracle must allow it too, and fix it where no term is
// truncated (`exactness` says which the arithmetic in the comment expects).
void ExpectD(const char* name, const Operands& x, std::uint32_t c, std::uint32_t expected, Exactness exactness) {
  const TensorCoreInstruction& inst = Named(name);
  EXPECT_EQ(matmul::TensorCoreDot(inst, x.a.data(), x.b.data(), c), expected) << name;
  if (inst.Steps() != 1 || inst.lowering.c_added_after_steps) return;
  const reference::FusedStepOracle oracle(inst.arithmetic, inst.a, inst.b);
  const reference::FusedStepBound bound = oracle.Bound(x.a.data(), x.b.data(), inst.k, c);
  EXPECT_EQ(oracle.Check(bound, expected), "") << name;
  if (bound.outcome != reference::FusedStepBound::Outcome::kFinite) return;
  EXPECT_EQ(bound.exact_terms(), exactness == Exactness::kTermsExact) << name;
  if (bound.code_fixed()) EXPECT_EQ(oracle.CodeOf(bound.lowest), expected) << name;
}

constexpr std::uint32_t kFp32One = 0x3F800000u;

// ---- wgmma FP8 -> FP32: F = 13, truncation, 14 kept bits ----

TEST(TensorCoreLiteral, Fp8CIsTruncatedToTheProductsGrid) {
  // 32 x (1.0 * 1.0) + C = 2^-20: e_max = 0 (C's e is -20), u = 2^-13, and
  // 2^-20 is not a multiple of u, so C becomes 0; 32 = 0x42000000.
  const TensorCoreInstruction& inst = Named("wgmma.m64nNk32.f32.e4m3.e4m3");
  Operands x = Zeros(inst);
  for (int k = 0; k < 32; ++k) x.a[k] = x.b[k] = 0x38;  // E4M3 1.0
  ExpectD(inst.name, x, 0x35800000u, 0x42000000u, Exactness::kTermsTruncated);
}

TEST(TensorCoreLiteral, Fp8SmallProductsVanishBelowThirteenBits) {
  // 1.0 * 1.0 + 31 x (2^-7 * 2^-7): E4M3 2^-7 (0x04) is subnormal, e = -6,
  // so those products have e = -12 <= e_max = 0; each is 2^-14 < u = 2^-13
  // and truncates to 0: D = 1.0. (Without step 4, 1 + 31 * 2^-14 would keep
  // 1 + 15 * 2^-13 = 0x3F803C00 in 14 bits.)
  const TensorCoreInstruction& inst = Named("wgmma.m64nNk32.f32.e4m3.e4m3");
  Operands x = Zeros(inst);
  x.a[0] = x.b[0] = 0x38;
  for (int k = 1; k < 32; ++k) x.a[k] = x.b[k] = 0x04;
  ExpectD(inst.name, x, 0u, kFp32One, Exactness::kTermsTruncated);
}

TEST(TensorCoreLiteral, Fp8OutputKeepsFourteenBitsSoTheLowTenAreZero) {
  // 1 * 1 + 2^-6 * 2^-7 = 1 + 2^-13: every term a multiple of u = 2^-13;
  // 14 bits hold it: 0x3F800400 (bit 10, the lowest the output keeps).
  const TensorCoreInstruction& inst = Named("wgmma.m64nNk32.f32.e4m3.e4m3");
  Operands x = Zeros(inst);
  x.a[0] = x.b[0] = 0x38;
  x.a[1] = 0x08;  // 2^-6
  x.b[1] = 0x04;  // 2^-7
  ExpectD(inst.name, x, 0u, 0x3F800400u, Exactness::kTermsExact);
  // 2 * (1 * 1) + 2^-13 = 2 + 2^-13: aligned exactly, but in [2, 4) the last
  // of 14 bits is 2^-12, so truncation leaves 2.0 = 0x40000000 (FP32 would
  // hold 0x40000400).
  x.a[2] = x.b[2] = 0x38;
  ExpectD(inst.name, x, 0u, 0x40000000u, Exactness::kTermsExact);
}

// ---- BF16 -> FP32: F = 25, truncation, 24 kept bits ----

TEST(TensorCoreLiteral, Bf16KeepsTwentyFiveFractionBits) {
  // 1 * 1 + 15 x (2^-12 * 2^-13): e_max = 0, u = 2^-25, the products 2^-25
  // are kept; 1 + 15 * 2^-25 = 1 + 3.75 * 2^-23 truncates to 1 + 3 * 2^-23.
  for (const char* name : {"mma.m16n8k16.f32.bf16.bf16", "wgmma.m64nNk16.f32.bf16.bf16"}) {
    Operands x = Zeros(Named(name));
    x.a[0] = x.b[0] = 0x3F80;
    for (int k = 1; k < 16; ++k) {
      x.a[k] = 0x3980;  // 2^-12
      x.b[k] = 0x3900;  // 2^-13
    }
    ExpectD(name, x, 0u, 0x3F800003u, Exactness::kTermsExact);
    // The same, negative: truncation is toward zero.
    for (int k = 1; k < 16; ++k) x.a[k] = 0xB980;
    x.a[0] = 0xBF80;
    ExpectD(name, x, 0x80000000u, 0xBF800003u, Exactness::kTermsExact);
  }
}

TEST(TensorCoreLiteral, Bf16ProductBelowTheWindowIsDropped) {
  // 1 * 1 + 15 x (2^-13 * 2^-13): each 2^-26 < u = 2^-25 truncates to 0:
  // D = 1.0. (The exact 1 + 15 * 2^-26 would truncate to 0x3F800001.)
  Operands x = Zeros(Named("mma.m16n8k16.f32.bf16.bf16"));
  x.a[0] = x.b[0] = 0x3F80;
  for (int k = 1; k < 16; ++k) x.a[k] = x.b[k] = 0x3900;
  ExpectD("mma.m16n8k16.f32.bf16.bf16", x, 0u, kFp32One, Exactness::kTermsTruncated);
}

TEST(TensorCoreLiteral, Tf32IgnoresTheLowThirteenBits) {
  // (1 + 0x1FFF * 2^-23) as an FP32 code: TF32 reads 1.0; 1 * 1 = 1.
  Operands x = Zeros(Named("mma.m16n8k8.f32.tf32.tf32"));
  x.a[0] = 0x3F801FFFu;
  x.b[0] = kFp32One;
  ExpectD("mma.m16n8k8.f32.tf32.tf32", x, 0u, kFp32One, Exactness::kTermsExact);
  // 1 + 2^-10 is TF32's last mantissa bit and is read: 0x3F802000.
  x.a[0] = 0x3F802000u;
  ExpectD("mma.m16n8k8.f32.tf32.tf32", x, 0u, 0x3F802000u, Exactness::kTermsExact);
}

// ---- overflow ----

TEST(TensorCoreLiteral, OverflowGivesInfinity) {
  // FP16 accumulator: 256 * 256 = 65536 is past 65504 + half an ulp: +Inf.
  Operands h = Zeros(Named("mma.m16n8k16.f16.f16.f16"));
  h.a[0] = h.b[0] = 0x5C00;
  ExpectD("mma.m16n8k16.f16.f16.f16", h, 0u, 0x7C00u, Exactness::kTermsExact);
  // FP32: 2^127 * 2 = 2^128: +Inf; negative: -Inf.
  Operands f = Zeros(Named("mma.m16n8k16.f32.bf16.bf16"));
  f.a[0] = 0x7F00;
  f.b[0] = 0x4000;
  ExpectD("mma.m16n8k16.f32.bf16.bf16", f, 0u, 0x7F800000u, Exactness::kTermsExact);
  f.a[0] = 0xFF00;
  ExpectD("mma.m16n8k16.f32.bf16.bf16", f, 0u, 0xFF800000u, Exactness::kTermsExact);
}

TEST(TensorCoreLiteral, TruncationStaysFiniteWhereNearestWouldOverflow) {
  // C = FP32 max = 2^128 - 2^104, plus 2^52 * 2^51 = 2^103: e_max = 127,
  // u = 2^102, both exact; S = 2^128 - 2^103 is below 2^128, and truncating
  // to 24 bits (last place 2^104) gives the max again, 0x7F7FFFFF. (Round
  // to nearest even would tie up to 2^128: Inf.)
  Operands x = Zeros(Named("mma.m16n8k16.f32.bf16.bf16"));
  x.a[0] = 0x5980;  // 2^52
  x.b[0] = 0x5900;  // 2^51
  ExpectD("mma.m16n8k16.f32.bf16.bf16", x, 0x7F7FFFFFu, 0x7F7FFFFFu, Exactness::kTermsExact);
}

// ---- NaN, Inf and zero rules (step 7) ----

TEST(TensorCoreLiteral, NanResultsAreTheDatapathsOneNan) {
  const char* bf16 = "mma.m16n8k16.f32.bf16.bf16";
  Operands x = Zeros(Named(bf16));
  x.a[0] = 0x7FC0;  // NaN * 1
  x.b[0] = 0x3F80;
  ExpectD(bf16, x, 0u, 0x7FFFFFFFu, Exactness::kTermsExact);
  x.a[0] = 0x7F80;  // Inf * 0
  x.b[0] = 0x0000;
  ExpectD(bf16, x, 0u, 0x7FFFFFFFu, Exactness::kTermsExact);
  x.b[0] = 0x3F80;  // Inf * 1 + (Inf * -1)
  x.a[1] = 0x7F80;
  x.b[1] = 0xBF80;
  ExpectD(bf16, x, 0u, 0x7FFFFFFFu, Exactness::kTermsExact);
  x.a[1] = x.b[1] = 0;  // +Inf product + C = -Inf
  ExpectD(bf16, x, 0xFF800000u, 0x7FFFFFFFu, Exactness::kTermsExact);
  ExpectD(bf16, x, 0x3F800000u, 0x7F800000u, Exactness::kTermsExact);  // +Inf + 1
  // A NaN C, and an E4M3 NaN operand (S.1111.111) into FP32.
  ExpectD(bf16, Zeros(Named(bf16)), 0x7FC00000u, 0x7FFFFFFFu, Exactness::kTermsExact);
  Operands e = Zeros(Named("wgmma.m64nNk32.f32.e4m3.e4m3"));
  e.a[5] = 0x7F;
  e.b[5] = 0x38;
  ExpectD("wgmma.m64nNk32.f32.e4m3.e4m3", e, 0u, 0x7FFFFFFFu, Exactness::kTermsExact);
  // FP16 accumulator: 0x7FFF.
  Operands h = Zeros(Named("wgmma.m64nNk16.f16.f16.f16"));
  h.a[3] = 0x7E00;
  h.b[3] = 0x3C00;
  ExpectD("wgmma.m64nNk16.f16.f16.f16", h, 0u, 0x7FFFu, Exactness::kTermsExact);
}

TEST(TensorCoreLiteral, ZeroSumIsPositiveZeroWhateverTheSigns) {
  // (-0) * 1 sixteen times + C = -0: IEEE would give -0; the fused step
  // gives +0.
  Operands x = Zeros(Named("mma.m16n8k16.f32.bf16.bf16"));
  for (int k = 0; k < 16; ++k) {
    x.a[k] = 0x8000;
    x.b[k] = 0x3F80;
  }
  ExpectD("mma.m16n8k16.f32.bf16.bf16", x, 0x80000000u, 0u, Exactness::kTermsExact);
  // 1 * 1 + (-1) * 1 + C = -0: exactly zero, +0.
  x = Zeros(Named("mma.m16n8k16.f32.bf16.bf16"));
  x.a[0] = x.b[0] = x.b[1] = 0x3F80;
  x.a[1] = 0xBF80;
  ExpectD("mma.m16n8k16.f32.bf16.bf16", x, 0x80000000u, 0u, Exactness::kTermsExact);
  // FP16 accumulator, FP8 products: (-0) * (-0) and C = -0: +0.
  Operands h = Zeros(Named("wgmma.m64nNk32.f16.e5m2.e5m2"));
  for (int k = 0; k < 32; ++k) h.a[k] = h.b[k] = 0x80;
  ExpectD("wgmma.m64nNk32.f16.e5m2.e5m2", h, 0x8000u, 0u, Exactness::kTermsExact);
}

TEST(TensorCoreLiteral, ZeroTermsSetTheFloorOfTheGrid) {
  // BF16 -2^-133 * 2^-133 (0x8001, 0x0001: subnormals, e = -126 each, so the
  // product's e is -252) + C = +0, whose e is zero_term_exponent = -133:
  // e_max = -133, u = 2^-158, and -2^-266 truncates to 0: the sum is zero,
  // +0. (Were zero terms left out, e_max = -252 would keep the product and
  // truncation toward zero would give -0, 0x80000000.)
  Operands x = Zeros(Named("mma.m16n8k16.f32.bf16.bf16"));
  x.a[0] = 0x8001;
  x.b[0] = 0x0001;
  ExpectD("mma.m16n8k16.f32.bf16.bf16", x, 0u, 0u, Exactness::kTermsTruncated);
  // FP16 accumulator: -2^-24 * 2^-24 (e = -28) + C = +0 (e = -21): u = 2^-46,
  // -2^-48 truncates to 0: +0 (not the -0 of rounding -2^-48 to nearest).
  Operands h = Zeros(Named("mma.m16n8k16.f16.f16.f16"));
  h.a[0] = 0x8001;
  h.b[0] = 0x0001;
  ExpectD("mma.m16n8k16.f16.f16.f16", h, 0u, 0u, Exactness::kTermsTruncated);
}

TEST(TensorCoreLiteral, NegativeSumRoundingToZeroIsPositiveZero) {
  // FP16 accumulator: -2^-24 * 0.5 (0x8001, 0x3800) = -2^-25, exact on the
  // grid (e_max = -15, u = 2^-40); half the smallest subnormal, a tie that
  // rounds to the even 0: +0 (IEEE rounding would give -0, 0x8000).
  Operands h = Zeros(Named("mma.m16n8k16.f16.f16.f16"));
  h.a[0] = 0x8001;
  h.b[0] = 0x3800;
  ExpectD("mma.m16n8k16.f16.f16.f16", h, 0u, 0u, Exactness::kTermsExact);
  // FP32: -2^-133 * 2^-20 (0x8001, 0x3580) = -2^-153 (e = -146 <= e_max =
  // -133, u = 2^-158: exact); truncated to FP32's last place 2^-149 it is 0:
  // +0 (IEEE truncation would give -0, 0x80000000).
  Operands x = Zeros(Named("mma.m16n8k16.f32.bf16.bf16"));
  x.a[0] = 0x8001;
  x.b[0] = 0x3580;
  ExpectD("mma.m16n8k16.f32.bf16.bf16", x, 0u, 0u, Exactness::kTermsExact);
}

// ---- FP16 output: nearest even ----

TEST(TensorCoreLiteral, Fp16OutputRoundsToNearestEven) {
  // 1 * 1 + 2^-11 * 1 = 1 + 2^-11: half way between 1 and 1 + 2^-10; even: 1.0.
  Operands x = Zeros(Named("mma.m16n8k16.f16.f16.f16"));
  x.a[0] = x.b[0] = x.b[1] = 0x3C00;
  x.a[1] = 0x1000;  // 2^-11
  ExpectD("mma.m16n8k16.f16.f16.f16", x, 0u, 0x3C00u, Exactness::kTermsExact);
  // 1 + 3 * 2^-11 = 1 + 1.5 * 2^-10: half way; even: 1 + 2^-9 = 0x3C02.
  x.a[1] = 0x1600;
  ExpectD("mma.m16n8k16.f16.f16.f16", x, 0u, 0x3C02u, Exactness::kTermsExact);
}

// ---- integers ----

TEST(TensorCoreLiteral, IntegerSumWrapsModuloTwoToThe32) {
  // 32 x (-128 * -128) = 524288 = 0x80000; + 0x7FFFFFFF wraps to 0x8007FFFF.
  Operands x = Zeros(Named("mma.m16n8k32.s32.s8.s8"));
  for (int k = 0; k < 32; ++k) x.a[k] = x.b[k] = 0x80;
  ExpectD("mma.m16n8k32.s32.s8.s8", x, 0x7FFFFFFFu, 0x8007FFFFu, Exactness::kTermsExact);
  // 127 * -128 = -16256 = 0xFFFFC080, C = 0.
  x = Zeros(Named("mma.m16n8k32.s32.s8.s8"));
  x.a[7] = 0x7F;
  x.b[7] = 0x80;
  ExpectD("mma.m16n8k32.s32.s8.s8", x, 0u, 0xFFFFC080u, Exactness::kTermsExact);
}

// ---- FP8 mma.sync on sm_90: two FP16 steps by k mod 4, then C by FADD ----

TEST(TensorCoreLiteral, Fp8MmaSyncStepsTakeAlternatePairsOfK) {
  // E5M2 2^-13 (0x08) squared at every k with k mod 4 in {0, 1}, 1.0 at
  // k = 2. Step 0 (k mod 4 in {0, 1}, from +0): 16 x 2^-26 = 2^-22 exactly
  // (e_max = -26). Step 1 (k mod 4 in {2, 3}, C = 2^-22): e_max = 0,
  // u = 2^-25 keeps 2^-22: 1 + 2^-22 = 0x3F800002; + C = 0 by FADD.
  // (Halves of consecutive k would drop both groups of 2^-26: 0x3F800000.)
  const char* name = "mma.m16n8k32.f32.e5m2.e5m2";
  Operands x = Zeros(Named(name));
  for (int k = 0; k < 32; ++k) {
    if (k % 4 < 2) x.a[k] = x.b[k] = 0x08;
  }
  x.a[2] = x.b[2] = 0x3C;
  ExpectD(name, x, 0u, 0x3F800002u, Exactness::kTermsExact);
}

TEST(TensorCoreLiteral, Fp8MmaSyncAddsCRoundingToNearest) {
  // Steps: 1 * 1 = 1.0. Then FADD 1 + 3 * 2^-24 = 1 + 1.5 * 2^-23: a tie,
  // even: 1 + 2^-22 = 0x3F800002. (C inside a fused step would truncate to
  // 0x3F800001.) A NaN C gives the datapath's 0x7FFFFFFF.
  const char* name = "mma.m16n8k32.f32.e4m3.e4m3";
  Operands x = Zeros(Named(name));
  x.a[0] = x.b[0] = 0x38;
  ExpectD(name, x, 0x34400000u, 0x3F800002u, Exactness::kTermsExact);
  ExpectD(name, x, 0x7FC00001u, 0x7FFFFFFFu, Exactness::kTermsExact);
  // The oracle's addition agrees.
  const TensorCoreInstruction& inst = Named(name);
  const reference::FusedStepOracle oracle(inst.arithmetic, inst.a, inst.b);
  EXPECT_EQ(oracle.AddNearest(kFp32One, 0x34400000u), 0x3F800002u);
  EXPECT_EQ(oracle.AddNearest(kFp32One, 0x7FC00001u), 0x7FFFFFFFu);
  EXPECT_EQ(oracle.AddNearest(0x80000000u, 0x80000000u), 0x80000000u);  // (-0) + (-0) = -0
  EXPECT_EQ(oracle.AddNearest(kFp32One, 0xBF800000u), 0u);              // 1 + (-1) = +0
}

}  // namespace
}  // namespace lowbit
