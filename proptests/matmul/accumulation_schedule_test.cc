// The accumulation schedule (lowbit/formats/matmul/accumulation_schedule.h)
// recomputed here from its written description with plain C++ float
// arithmetic over the model's per-instruction results: K padded with zero
// codes, split-K parts of ceil(chunks / split_k) chunks, each part a chain of
// TensorCoreDot from +0 (restarted every promotion interval and added into an
// FP32 sum), the parts added in order or as a pairwise tree, then column
// scale, alpha and one rounding to the output format (FP16 accumulators pass
// through untouched when nothing else happens). ModelMatmul must give the
// same codes; this checks the composition, TensorCoreDot itself is checked
// against the oracle in tensor_core_bound_test. Also: ScheduleProblem's
// errors.
#include <bit>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <rapidcheck.h>

#include "fp16_by_f16c.h"
#include "generators_at_level.h"
#include "lowbit/formats/matmul/accumulation_schedule.h"
#include "lowbit/formats/matmul/tensor_core.h"
#include "lowbit/formats/matmul/tensor_core_matrix.h"
#include "lowbit/formats/tensor_core.h"
#include "tensor_core_step_cases.h"

namespace lowbit {
namespace {

using matmul::AccumulationSchedule;
using matmul::SplitReduction;

constexpr testing::LevelCounts kSchedules = {100, 2000, 50000};

// An accumulator code as a float: FP32 bits as they are, FP16 decoded from
// its fields (exact; a NaN stays a NaN).
float AccumulatorAsFloat(const FormatSpec& acc, std::uint32_t code) {
  if (acc.total_bits == 32) return std::bit_cast<float>(code);
  const bool negative = (code & 0x8000u) != 0;
  const int field = static_cast<int>((code >> 10) & 0x1F);
  const int mantissa = static_cast<int>(code & 0x3FF);
  float magnitude = 0;
  if (field == 0x1F) {
    magnitude = mantissa != 0 ? NAN : INFINITY;
  } else if (field == 0) {
    magnitude = std::ldexp(static_cast<float>(mantissa), -24);
  } else {
    magnitude = std::ldexp(static_cast<float>(1024 + mantissa), field - 25);
  }
  return negative ? -magnitude : magnitude;
}

// float -> BF16 / FP16, round to nearest even (NaNs: any NaN code).
std::uint32_t Bf16Of(float v) {
  const std::uint32_t bits = std::bit_cast<std::uint32_t>(v);
  if (std::isnan(v)) return 0x7FC0u;
  return (bits + 0x7FFFu + ((bits >> 16) & 1u)) >> 16;
}
std::uint32_t Fp16Of(float v) { return lowbit::testing::Fp16ByCpu(v); }

bool IsNanCode(FormatId out, std::uint32_t code) {
  switch (out) {
    case FormatId::kBf16: return (code & 0x7F80u) == 0x7F80u && (code & 0x7Fu) != 0;
    case FormatId::kFp16: return (code & 0x7C00u) == 0x7C00u && (code & 0x3FFu) != 0;
    default: return (code & 0x7F800000u) == 0x7F800000u && (code & 0x7FFFFFu) != 0;
  }
}

// The schedule's output for one row pair, recomputed.
std::uint32_t Recomputed(const AccumulationSchedule& s, const std::uint32_t* x, const std::uint32_t* w, std::int64_t k,
                         float column_scale) {
  const TensorCoreInstruction& inst = Instruction(s.instruction);
  const std::int64_t chunks = (k + inst.k - 1) / inst.k;
  std::vector<std::uint32_t> xs(static_cast<std::size_t>(chunks * inst.k), 0u), ws(xs.size(), 0u);
  std::copy(x, x + k, xs.begin());
  std::copy(w, w + k, ws.begin());
  auto chain = [&](std::int64_t first, std::int64_t last) {
    std::uint32_t d = 0;
    for (std::int64_t c = first; c < last; ++c) d = matmul::TensorCoreDot(inst, &xs[c * inst.k], &ws[c * inst.k], d);
    return d;
  };
  const FormatSpec& acc = inst.arithmetic.accumulator;
  if (!acc.IsFloat()) return chain(0, chunks);
  if (acc.total_bits == 16 && s.promotion_interval == 0 && s.split_k == 1 && s.output == FormatId::kFp16 &&
      !s.scale_per_column && s.alpha == 1.0f) {
    return chain(0, chunks);  // FP16 accumulator straight out
  }
  const std::int64_t per_part = (chunks + s.split_k - 1) / s.split_k;
  std::vector<float> parts;
  for (int p = 0; p < s.split_k; ++p) {
    const std::int64_t first = std::min<std::int64_t>(p * per_part, chunks);
    const std::int64_t last = std::min<std::int64_t>(first + per_part, chunks);
    if (s.promotion_interval == 0) {
      parts.push_back(AccumulatorAsFloat(acc, chain(first, last)));
      continue;
    }
    const std::int64_t every = s.promotion_interval / inst.k;
    float sum = 0.0f;
    for (std::int64_t begin = first; begin < last; begin += every) {
      sum = sum + AccumulatorAsFloat(acc, chain(begin, std::min(begin + every, last)));
    }
    parts.push_back(sum);
  }
  float value = 0;
  if (s.split_reduction == SplitReduction::kInOrder) {
    value = parts[0];
    for (std::size_t p = 1; p < parts.size(); ++p) value = value + parts[p];
  } else {
    while (parts.size() > 1) {  // one level of the tree: pairs, an odd last one passes up
      std::vector<float> up;
      for (std::size_t p = 0; p < parts.size(); p += 2) up.push_back(p + 1 < parts.size() ? parts[p] + parts[p + 1] : parts[p]);
      parts = up;
    }
    value = parts[0];
  }
  if (s.scale_per_column) value = value * column_scale;
  if (s.alpha != 1.0f) value = value * s.alpha;
  switch (s.output) {
    case FormatId::kBf16: return Bf16Of(value);
    case FormatId::kFp16: return Fp16Of(value);
    default: return std::bit_cast<std::uint32_t>(value);
  }
}

TEST(AccumulationSchedule, ModelMatmulIsTheWrittenComposition) {
  int with_split = 0, with_promotion = 0, with_padding = 0, pairwise = 0, narrow_output = 0, fp16_through = 0;
  testing::CheckAtLevel(kSchedules, [&] {
    testing::RapidCheckSource src;
    const int id = static_cast<int>(src.Uniform(0, kTensorCoreInstructionCount - 1));
    AccumulationSchedule s;
    s.instruction = static_cast<TensorCoreId>(id);
    const TensorCoreInstruction& inst = Instruction(s.instruction);
    const std::int64_t k = src.Uniform(0, 3) == 0 ? inst.k * src.Uniform(1, 6) : src.Uniform(1, 7 * inst.k);
    const int m = static_cast<int>(src.Uniform(1, 2)), n = static_cast<int>(src.Uniform(1, 3));
    if (inst.arithmetic.accumulator.IsFloat()) {
      static constexpr int kSplits[] = {1, 1, 2, 3, 4, 5, 7, 64};
      s.split_k = kSplits[src.Uniform(0, 7)];
      s.split_reduction = src.Uniform(0, 1) ? SplitReduction::kPairwiseTree : SplitReduction::kInOrder;
      s.promotion_interval = src.Uniform(0, 1) ? 0 : inst.k * static_cast<int>(src.Uniform(1, 4));
      static constexpr FormatId kOutputs[] = {FormatId::kFp32, FormatId::kBf16, FormatId::kFp16};
      s.output = kOutputs[src.Uniform(0, 2)];
      static constexpr float kAlphas[] = {1.0f, 1.0f, 0.5f, 3.0f, 1e-3f, -2.0f, 1e30f};
      s.alpha = kAlphas[src.Uniform(0, 6)];
      s.scale_per_column = src.Uniform(0, 1) == 1;
      if (src.Uniform(0, 3) == 0) {  // a plain schedule: what an FP16 accumulator passes through
        s.split_k = 1;
        s.promotion_interval = 0;
        s.alpha = 1.0f;
        s.scale_per_column = false;
      }
    }
    RC_ASSERT(matmul::ScheduleProblem(s, k) == nullptr);
    // Rows drawn by the step families (one family per row), scales any
    // finite float of a moderate range.
    std::vector<std::uint32_t> x, w;
    for (int i = 0; i < m; ++i) {
      const testing::StepCase row = testing::DrawStepCase(inst, static_cast<int>(k), src);
      x.insert(x.end(), row.a.begin(), row.a.end());
    }
    for (int j = 0; j < n; ++j) {
      const testing::StepCase row = testing::DrawStepCase(inst, static_cast<int>(k), src);
      w.insert(w.end(), row.b.begin(), row.b.end());
    }
    std::vector<float> scales(static_cast<std::size_t>(n));
    for (float& v : scales) v = std::ldexp(static_cast<float>(src.Uniform(-1000, 1000)), static_cast<int>(src.Uniform(-20, 10)));
    std::vector<std::uint32_t> y(static_cast<std::size_t>(m * n));
    matmul::ModelMatmul(s, x.data(), w.data(), m, n, k, scales.data(), y.data(), static_cast<int>(src.Uniform(1, 2)));
    for (int i = 0; i < m; ++i) {
      for (int j = 0; j < n; ++j) {
        const std::uint32_t expected = Recomputed(s, &x[i * k], &w[j * k], k, scales[j]);
        const std::uint32_t got = y[i * n + j];
        RC_LOG() << inst.name << " K=" << k << " split=" << s.split_k << " P=" << s.promotion_interval
                 << " pairwise=" << (s.split_reduction == SplitReduction::kPairwiseTree) << " out=" << Spec(s.output).name
                 << " alpha=" << s.alpha << " scale=" << s.scale_per_column << " (" << i << "," << j << ") model 0x"
                 << std::hex << got << " recomputed 0x" << expected << std::dec << "\n";
        if (IsNanCode(s.output, expected)) {
          RC_ASSERT(IsNanCode(s.output, got));  // which NaN a float sum carries is not the schedule's business
        } else {
          RC_ASSERT(got == expected);
        }
      }
    }
    with_split += s.split_k > 1;
    with_promotion += s.promotion_interval > 0;
    with_padding += k % inst.k != 0;
    pairwise += s.split_k > 2 && s.split_reduction == SplitReduction::kPairwiseTree;
    narrow_output += s.output != FormatId::kFp32;
    fp16_through += inst.arithmetic.accumulator.total_bits == 16 && s.output == FormatId::kFp16 &&
                    s.promotion_interval == 0 && s.split_k == 1 && !s.scale_per_column && s.alpha == 1.0f;
  });
  // Every part of the schedule was exercised.
  EXPECT_GT(with_split, 0);
  EXPECT_GT(with_promotion, 0);
  EXPECT_GT(with_padding, 0);
  EXPECT_GT(pairwise, 0);
  EXPECT_GT(narrow_output, 0);
  EXPECT_GT(fp16_through, 0);
}

TEST(AccumulationSchedule, Fp16AccumulatorPassesThroughItsOwnNan) {
  // One FP16 instruction whose D is its NaN 0x7FFF (Inf * 0): with nothing
  // but an FP16 output the code comes out as the instruction wrote it.
  const TensorCoreInstruction& inst = Instruction(TensorCoreId::kWgmmaF16F16);
  std::vector<std::uint32_t> x(inst.k, 0x3C00u), w(inst.k, 0u);
  x[0] = 0x7C00u;  // +Inf * 0
  AccumulationSchedule s;
  s.instruction = TensorCoreId::kWgmmaF16F16;
  s.output = FormatId::kFp16;
  std::uint32_t y = 0;
  matmul::ModelMatmul(s, x.data(), w.data(), 1, 1, inst.k, nullptr, &y);
  EXPECT_EQ(y, 0x7FFFu);
}

TEST(AccumulationSchedule, ProblemsAreNamed) {
  struct Case {
    AccumulationSchedule schedule;
    std::int64_t k;
    const char* names;  // a word the error must contain
  };
  AccumulationSchedule bf16;
  bf16.instruction = TensorCoreId::kWgmmaBf16F32;
  AccumulationSchedule int8;
  int8.instruction = TensorCoreId::kMmaS8S32;
  auto with = [](AccumulationSchedule s, auto change) {
    change(s);
    return s;
  };
  const Case cases[] = {
      {bf16, 0, "K"},
      {bf16, -5, "K"},
      {with(bf16, [](auto& s) { s.split_k = 0; }), 16, "split_k"},
      {with(bf16, [](auto& s) { s.split_k = 65; }), 16, "split_k"},
      {with(bf16, [](auto& s) { s.promotion_interval = -16; }), 16, "promotion"},
      {with(bf16, [](auto& s) { s.promotion_interval = 24; }), 64, "multiple"},
      {with(bf16, [](auto& s) { s.output = FormatId::kE4m3; }), 16, "output"},
      {with(int8, [](auto& s) { s.split_k = 2; }), 64, "integer"},
      {with(int8, [](auto& s) { s.promotion_interval = 32; }), 64, "integer"},
      {with(int8, [](auto& s) { s.output = FormatId::kBf16; }), 64, "integer"},
      {with(int8, [](auto& s) { s.alpha = 2.0f; }), 64, "integer"},
      {with(int8, [](auto& s) { s.scale_per_column = true; }), 64, "integer"},
  };
  for (const Case& c : cases) {
    const char* problem = matmul::ScheduleProblem(c.schedule, c.k);
    ASSERT_NE(problem, nullptr) << "split " << c.schedule.split_k << " P " << c.schedule.promotion_interval;
    EXPECT_NE(std::string(problem).find(c.names), std::string::npos) << problem;
  }
  // And what may run: K = 1 (padded), split 64, a promotion of 4 instructions.
  EXPECT_EQ(matmul::ScheduleProblem(bf16, 1), nullptr);
  EXPECT_EQ(matmul::ScheduleProblem(with(bf16, [](auto& s) { s.split_k = 64; s.promotion_interval = 64; }), 5), nullptr);
  EXPECT_EQ(matmul::ScheduleProblem(int8, 33), nullptr);
}

// +Inf and -Inf from two split-K parts: their FP32 sum is NaN, written as
// the GPU's canonical 0x7FFFFFFF (the host's default NaN is 0xFFC00000, which
// would become the BF16 code 0xFFC0): what a kernel's FADD gives, and what
// the schedule's device run gives, on every host.
TEST(AccumulationSchedule, FloatOperationsWriteTheCanonicalNan) {
  matmul::AccumulationSchedule s;
  s.instruction = TensorCoreId::kWgmmaF16F16;
  s.split_k = 2;
  std::vector<std::uint32_t> x(32, 0), w(32, 0);
  x[0] = 0x7BFF;   // 65504 * 2 overflows the FP16 step: +Inf
  x[16] = 0xFBFF;  // -65504 * 2: -Inf
  w[0] = w[16] = 0x4000;
  std::uint32_t y = 0;
  for (FormatId out : {FormatId::kFp32, FormatId::kBf16, FormatId::kFp16}) {
    s.output = out;
    matmul::ModelMatmul(s, x.data(), w.data(), 1, 1, 32, nullptr, &y);
    EXPECT_EQ(y, out == FormatId::kFp32 ? 0x7FFFFFFFu : 0x7FFFu) << static_cast<int>(out);
  }
  // Through the tree and the epilogue's multiplications too.
  s.output = FormatId::kFp32;
  s.split_reduction = matmul::SplitReduction::kPairwiseTree;
  s.alpha = 3.0f;
  matmul::ModelMatmul(s, x.data(), w.data(), 1, 1, 32, nullptr, &y);
  EXPECT_EQ(y, 0x7FFFFFFFu);
}

}  // namespace
}  // namespace lowbit
