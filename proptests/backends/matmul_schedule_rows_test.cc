// Matmul rows that declare their accumulation schedule (registry
// matmul_entry.h MatmulEntry::schedule, check/src/matmul_check.cc): the
// harness checks them bit for bit against QuantizedMatmulModel under the
// declared schedule. The row under test here is built independently of that
// model: it runs the host tensor-core instruction (formats/matmul/tensor_core.h
// TensorCoreMma) one m16n8k16 tile at a time, as a warp would, chains the
// tiles of each split-K part through C, adds the parts and applies the
// epilogue by hand. The faithful row passes; each wrong one (K chunks in
// another order, split-K parts added in reverse, the tensor scale applied
// before the reduction, a schedule that depends on M, a schedule the model
// rejects for the weights, the FP32-FFMA defined order) fails and is named.
#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "lowbit/check/check.h"
#include "lowbit/formats/convert.h"
#include "lowbit/formats/matmul/accumulation_schedule.h"
#include "lowbit/formats/matmul/dequantize.h"
#include "lowbit/formats/matmul/tensor_core.h"
#include "lowbit/formats/matmul/weight_operand.h"
#include "lowbit/registry/registry.h"

namespace lowbit::matmul_test {
namespace {

using matmul::AccumulationSchedule;
using registry::MatmulArgs;
using registry::MatmulEntry;
using registry::MatmulOperation;

enum class Fault {
  kNone,
  kChunksDescending,   // each split-K part walks its K chunks from the last
  kPartsReversed,      // the parts are added p(S-1) + ... + p0
  kScaleBeforeSum,     // each part is multiplied by the column scale, then added
  kScheduleOfM,        // split-K chosen from M (computed faithfully under it)
  kNoScaleInSchedule,  // declares no column scale for weights that have one
};

// A function of N and K only (three parts where K has at least nine chunks,
// so that a reversed sum of parts is not just a commuted one).
AccumulationSchedule ScheduleOf(const MatmulArgs& a, matmul::OutputType output, Fault fault) {
  AccumulationSchedule s;
  s.instruction = TensorCoreId::kMmaBf16F32;
  s.split_k = a.w.k > 128 ? 3 : 2;
  if (fault == Fault::kScheduleOfM) s.split_k = a.m > 1 ? 3 : 2;
  s.split_reduction = matmul::SplitReduction::kInOrder;
  s.output = output == matmul::OutputType::kFp32 ? FormatId::kFp32 : FormatId::kBf16;
  s.scale_per_column = matmul::HasOuterScale(a.w.format) && fault != Fault::kNoScaleInSchedule;
  return s;
}

float CanonicalNan(float v) {
  const std::uint32_t nan = 0x7FFFFFFFu;
  float canonical;
  std::memcpy(&canonical, &nan, sizeof canonical);
  return v != v ? canonical : v;
}

// y = x * W^T through m16n8k16 tiles of the host instruction model.
registry::Status TileByTile(const MatmulArgs& a, const AccumulationSchedule& s, Fault fault) {
  const TensorCoreInstruction& inst = Instruction(s.instruction);
  const std::int64_t chunks = (a.w.k + inst.k - 1) / inst.k;
  const std::int64_t per_part = (chunks + s.split_k - 1) / s.split_k;
  const auto* x = static_cast<const std::uint16_t*>(a.x.data);
  EncodeOptions nearest;
  for (std::int64_t l = 0; l < a.w.batch; ++l) {
    // W as BF16 operands (the inner weight is exact in BF16 for these kinds,
    // or rounds once), zero past K and past N.
    const std::int64_t n_tiles = (a.w.n + inst.n - 1) / inst.n;
    const std::int64_t m_tiles = (a.m + inst.m - 1) / inst.m;
    const std::int64_t k_padded = chunks * inst.k;
    std::vector<std::uint32_t> w(static_cast<std::size_t>(n_tiles * inst.n * k_padded), 0);
    for (std::int64_t n = 0; n < a.w.n; ++n) {
      for (std::int64_t k = 0; k < a.w.k; ++k) {
        w[static_cast<std::size_t>(n * k_padded + k)] = static_cast<std::uint32_t>(
            EncodeF64(kBf16, matmul::ExactInnerWeightValue(a.w, l, n, k), nearest).code);
      }
    }
    for (std::int64_t mt = 0; mt < m_tiles; ++mt) {
      for (std::int64_t nt = 0; nt < n_tiles; ++nt) {
        // parts[p][i * 8 + j]: the FP32 value of part p for tile element (i, j).
        std::vector<std::vector<float>> parts(static_cast<std::size_t>(s.split_k),
                                              std::vector<float>(static_cast<std::size_t>(inst.m * inst.n), 0.0f));
        for (int p = 0; p < s.split_k; ++p) {
          const std::int64_t first = std::min(p * per_part, chunks);
          const std::int64_t last = std::min(first + per_part, chunks);
          std::vector<std::uint32_t> c(static_cast<std::size_t>(inst.m * inst.n), 0), d(c.size());
          for (std::int64_t step = 0; step < last - first; ++step) {
            const std::int64_t chunk = fault == Fault::kChunksDescending ? last - 1 - step : first + step;
            std::vector<std::uint32_t> at(static_cast<std::size_t>(inst.m * inst.k), 0);
            std::vector<std::uint32_t> bt(static_cast<std::size_t>(inst.n * inst.k), 0);
            for (int i = 0; i < inst.m; ++i) {
              const std::int64_t m = mt * inst.m + i;
              for (int kk = 0; kk < inst.k; ++kk) {
                const std::int64_t k = chunk * inst.k + kk;
                if (m < a.m && k < a.w.k) at[static_cast<std::size_t>(i * inst.k + kk)] =
                    x[l * a.x.batch_stride + m * a.x.row_stride + k];
              }
            }
            for (int j = 0; j < inst.n; ++j) {
              for (int kk = 0; kk < inst.k; ++kk) {
                bt[static_cast<std::size_t>(j * inst.k + kk)] =
                    w[static_cast<std::size_t>((nt * inst.n + j) * k_padded + chunk * inst.k + kk)];
              }
            }
            matmul::TensorCoreMma(inst, inst.n, at.data(), bt.data(), c.data(), d.data());
            c = d;
          }
          for (std::size_t e = 0; e < c.size(); ++e) {
            float v;
            std::memcpy(&v, &c[e], sizeof v);
            parts[static_cast<std::size_t>(p)][e] = v;
          }
        }
        for (int i = 0; i < inst.m; ++i) {
          const std::int64_t m = mt * inst.m + i;
          for (int j = 0; j < inst.n; ++j) {
            const std::int64_t n = nt * inst.n + j;
            if (m >= a.m || n >= a.w.n) continue;
            const float scale = static_cast<float>(matmul::OuterScaleValue(a.w, l, n));
            const std::size_t e = static_cast<std::size_t>(i * inst.n + j);
            float value = 0.0f;
            for (int q = 0; q < s.split_k; ++q) {
              const int p = fault == Fault::kPartsReversed ? s.split_k - 1 - q : q;
              float part = parts[static_cast<std::size_t>(p)][e];
              if (fault == Fault::kScaleBeforeSum) part = CanonicalNan(part * scale);
              value = q == 0 ? part : CanonicalNan(value + part);
            }
            if (s.scale_per_column && fault != Fault::kScaleBeforeSum) value = CanonicalNan(value * scale);
            const std::int64_t at = l * a.y.batch_stride + m * a.y.row_stride + n;
            if (s.output == FormatId::kFp32) {
              std::memcpy(static_cast<float*>(a.y.data) + at, &value, sizeof value);
            } else {
              static_cast<std::uint16_t*>(a.y.data)[at] =
                  static_cast<std::uint16_t>(EncodeF32(kBf16, value, nearest).code);
            }
          }
        }
      }
    }
  }
  return registry::Status::Ok();
}

MatmulEntry TileRow(MatmulOperation op, const char* weight, matmul::OutputType output, Fault fault) {
  MatmulEntry e;
  e.operation = op;
  e.weight = weight;
  e.activation = matmul::ActivationType::kBf16;
  e.output = output;
  e.backend = "test-tiles";
  e.available = [] { return true; };
  e.schedule = [output, fault](const MatmulArgs& a) { return ScheduleOf(a, output, fault); };
  e.run = [op, weight, output, fault](const MatmulArgs& a) {
    MatmulEntry self;
    self.operation = op;
    self.weight = weight;
    self.output = output;
    if (registry::Status st = registry::ValidateMatmulArgs(self, a); !st.ok) return st;
    return TileByTile(a, ScheduleOf(a, output, fault), fault);
  };
  return e;
}

check::Row Check(const MatmulEntry& e, check::Level level = check::Level::kSmoke) {
  return check::CheckMatmul(e, nullptr, level);
}

bool HasOutputMismatch(const check::Row& row) {
  if (row.first_mismatches.empty()) return false;
  const check::Mismatch& m = row.first_mismatches[0];
  return m.where.rfind("y[", 0) == 0 && m.expected != m.actual && !m.expected_value.empty();
}

TEST(MatmulScheduleRows, TileByTileRowPassesAndListsItsSchedule) {
  // GEMV at the ci shapes (M = 1, 2, 3, 16; K = 8 .. 1032, odd K; L = 2;
  // NaN / Inf / zero scales), NVFP4 with its tensor scale in the epilogue.
  const check::Row gemv = Check(TileRow(MatmulOperation::kGemv, "nvfp4", matmul::OutputType::kFp32, Fault::kNone),
                                check::Level::kCi);
  EXPECT_EQ(gemv.outcome(), check::Row::Outcome::kPassed) << gemv.skipped;
  EXPECT_GT(gemv.checked, 0u);
  if (!gemv.first_mismatches.empty()) {
    ADD_FAILURE() << gemv.first_mismatches[0].where << " " << gemv.first_mismatches[0].note;
  }
  EXPECT_EQ(gemv.format,
            "nvfp4 bf16->fp32 [mma.m16n8k16.f32.bf16.bf16, K ascending, split-K 2-3 in order, column scale after the "
            "sum, to fp32]");
  // GEMM (M = 1, 3, 16, 17, 128), MXFP4 to BF16: no column scale.
  const check::Row gemm = Check(TileRow(MatmulOperation::kGemm, "mxfp4", matmul::OutputType::kBf16, Fault::kNone));
  EXPECT_EQ(gemm.outcome(), check::Row::Outcome::kPassed) << gemm.skipped;
  EXPECT_GT(gemm.checked, 0u);
  EXPECT_EQ(gemm.format, "mxfp4 bf16->bf16 [mma.m16n8k16.f32.bf16.bf16, K ascending, split-K 3 in order, to bf16]");
}

TEST(MatmulScheduleRows, GemmRowsAreTriedAtGemvSizesAndPastThem) {
  // A scheduled GEMM row runs M = 1, 3, 16 and 17 besides M = 128: a row that
  // takes only one M is still checked.
  for (const std::int64_t only_m : {1, 3, 16, 17, 128}) {
    MatmulEntry e = TileRow(MatmulOperation::kGemm, "nvfp4", matmul::OutputType::kFp32, Fault::kNone);
    e.refuses = [only_m](const MatmulArgs& a) { return a.m == only_m ? std::string() : std::string("not mine"); };
    const check::Row row = Check(e);
    EXPECT_EQ(row.outcome(), check::Row::Outcome::kPassed) << "M=" << only_m << " " << row.skipped;
    EXPECT_GT(row.checked, 0u) << "M=" << only_m;
  }
}

TEST(MatmulScheduleRows, ChunksInAnotherOrderFail) {
  const check::Row row =
      Check(TileRow(MatmulOperation::kGemv, "nvfp4", matmul::OutputType::kFp32, Fault::kChunksDescending));
  EXPECT_EQ(row.outcome(), check::Row::Outcome::kFailed);
  EXPECT_TRUE(HasOutputMismatch(row));
}

TEST(MatmulScheduleRows, SplitPartsAddedInReverseFail) {
  const check::Row row =
      Check(TileRow(MatmulOperation::kGemm, "mxfp4", matmul::OutputType::kFp32, Fault::kPartsReversed));
  EXPECT_EQ(row.outcome(), check::Row::Outcome::kFailed);
  EXPECT_TRUE(HasOutputMismatch(row));
}

TEST(MatmulScheduleRows, TensorScaleBeforeTheReductionFails) {
  const check::Row row =
      Check(TileRow(MatmulOperation::kGemv, "nvfp4", matmul::OutputType::kFp32, Fault::kScaleBeforeSum));
  EXPECT_EQ(row.outcome(), check::Row::Outcome::kFailed);
  EXPECT_TRUE(HasOutputMismatch(row));
}

TEST(MatmulScheduleRows, AScheduleThatDependsOnMFails) {
  const check::Row row =
      Check(TileRow(MatmulOperation::kGemv, "nvfp4", matmul::OutputType::kFp32, Fault::kScheduleOfM));
  EXPECT_EQ(row.outcome(), check::Row::Outcome::kFailed);
  ASSERT_FALSE(row.first_mismatches.empty());
  EXPECT_NE(row.first_mismatches[0].note.find("declared schedule: it changes with M"), std::string::npos)
      << row.first_mismatches[0].note;
  EXPECT_EQ(row.first_mismatches.size(), 1u);
}

TEST(MatmulScheduleRows, AScheduleTheModelRejectsIsRefusedWithOneLine) {
  const check::Row row =
      Check(TileRow(MatmulOperation::kGemv, "nvfp4", matmul::OutputType::kFp32, Fault::kNoScaleInSchedule));
  EXPECT_EQ(row.outcome(), check::Row::Outcome::kFailed);
  EXPECT_EQ(row.checked, row.mismatches);  // nothing passes
  ASSERT_FALSE(row.first_mismatches.empty());
  const std::string& note = row.first_mismatches[0].note;
  EXPECT_EQ(note.rfind("declared schedule: these weights carry an FP32 tensor or channel scale", 0), 0u) << note;
  EXPECT_EQ(note.find('\n'), std::string::npos);
  EXPECT_EQ(row.first_mismatches.size(), 1u);  // one line, not one per shape
  // Another output type than the row's: refused the same way.
  MatmulEntry e = TileRow(MatmulOperation::kGemv, "mxfp4", matmul::OutputType::kFp32, Fault::kNone);
  e.schedule = [](const MatmulArgs& a) { return ScheduleOf(a, matmul::OutputType::kBf16, Fault::kNone); };
  const check::Row other = Check(e);
  EXPECT_EQ(other.outcome(), check::Row::Outcome::kFailed);
  ASSERT_FALSE(other.first_mismatches.empty());
  EXPECT_EQ(other.first_mismatches[0].note, "declared schedule: it converts to bf16, the row writes fp32");
}

TEST(MatmulScheduleRows, TheFfmaDefinedOrderDoesNotPassAsAScheduledRow) {
  // The scalar GEMV row computes the FP32-FFMA defined order; declaring a
  // tensor-core schedule for it must not make the harness compare against
  // the scalar row.
  registry::Registry reg;
  registry::RegisterScalarMatmul(reg);
  MatmulEntry e = *reg.FindMatmul(MatmulOperation::kGemv, "mxfp4", matmul::ActivationType::kBf16,
                                  matmul::OutputType::kFp32, "scalar");
  e.backend = "test-ffma";
  e.schedule = [](const MatmulArgs& a) { return ScheduleOf(a, matmul::OutputType::kFp32, Fault::kNone); };
  const check::Row row = check::CheckMatmul(
      e, reg.FindMatmul(e.operation, e.weight, e.activation, e.output, "scalar"), check::Level::kSmoke);
  EXPECT_EQ(row.outcome(), check::Row::Outcome::kFailed);
  EXPECT_TRUE(HasOutputMismatch(row));
}

TEST(MatmulScheduleRows, AnUnavailableScheduledRowIsSkipped) {
  MatmulEntry e = TileRow(MatmulOperation::kGemv, "nvfp4", matmul::OutputType::kFp32, Fault::kNone);
  e.available = [] { return false; };
  const check::Row row = Check(e);
  EXPECT_EQ(row.outcome(), check::Row::Outcome::kSkipped);
  EXPECT_EQ(row.checked, 0u);
}

}  // namespace
}  // namespace lowbit::matmul_test
