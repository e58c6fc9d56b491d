// Matmul rows (registry matmul_entry.h): every non-scalar GEMV row against
// the scalar GEMV row of the same (weight, activation, output) bit for bit
// (a NaN equals any NaN: payloads are not part of the contract, gemv_order.h),
// every non-scalar GEMM row within its own documented error bound
// (MatmulEntry::error_bound, formats/matmul/gemm_bound.h) of the exact mode
// (formats/matmul/exact.h), NaN where the exact value is NaN and the same
// infinity where it is infinite. Inputs are random packed buffers (every
// bit pattern of a code buffer is a valid code) over shapes that do not tile:
// K not a multiple of the block or group, odd N, M = 1, 3, 16 (GEMV) and 128
// (GEMM), L = 2. GEMV problems carry NaN / Inf / zero scales and activations;
// GEMM problems are finite (the bound does not cover specials). y rows have
// guard elements between them; a row that writes one is a mismatch.
//
// A row that declares its accumulation schedule (MatmulEntry::schedule) is
// checked bit for bit against QuantizedMatmulModel under that schedule
// (formats/matmul/quantized_matmul.h), NaN codes included, on the GEMV shapes
// (GEMM rows: those, M = 17 and the GEMM shapes), every other problem with
// NaN / Inf / zero scales and activations. A schedule the model cannot run
// for the problem (QuantizedScheduleProblem), one that writes another output
// type than the row, or one that changes with M (batch invariance) fails the
// row with one line saying so (docs/matmul.md "Rows that declare a schedule").
#include <cmath>
#include <cstdint>
#include <cstring>
#include <string>
#include <utility>
#include <vector>

#include "describe.h"
#include "lowbit/check/check.h"
#include "lowbit/check/progress.h"
#include "lowbit/formats/convert.h"
#include "lowbit/formats/matmul/dequantize.h"
#include "lowbit/formats/matmul/exact.h"
#include "lowbit/formats/matmul/quantized_matmul.h"
#include "lowbit/registry/registry.h"
#include "scalar_row_harness.h"

namespace lowbit::check {
namespace {

using registry::MatmulArgs;
using registry::MatmulEntry;
using registry::MatmulOperation;
using registry::MatmulWeightKind;

constexpr std::int64_t kGuardPerRow = 3;
constexpr std::uint32_t kGuard32 = 0xA5A5A5A5u;
constexpr std::uint16_t kGuard16 = 0xA5A5u;

using Rng = internal::SplitMix64;

struct Shape {
  std::int64_t m, n, k, batch;
  matmul::ScaleGeometry geometry;
  std::int64_t block;
};

std::string ShapeText(const Shape& s) {
  const char* geometry = s.geometry == matmul::ScaleGeometry::kFlatBlocks  ? "flat"
                         : s.geometry == matmul::ScaleGeometry::kRowGroups ? "row-blocks"
                                                                           : "per-row";
  return "M=" + std::to_string(s.m) + " N=" + std::to_string(s.n) + " K=" + std::to_string(s.k) +
         " L=" + std::to_string(s.batch) + " " + geometry + (s.block > 0 ? "/" + std::to_string(s.block) : "");
}

// The shapes a row is tried on: K not a multiple of the block, odd N where
// the packing allows (GPTQ / AWQ need N % 8 == 0, GPTQ K % 8 == 0), odd K
// where the codes allow it. Which of them a row takes is the row's to say
// (MatmulEntry::takes_flat_blocks / takes_row_groups, refuses): the harness
// does not re-derive a kernel's layout rule.
std::vector<Shape> Shapes(const MatmulEntry& entry, const MatmulWeightKind& kind, Level level) {
  const bool words = kind.packing != matmul::WeightPacking::kLowbit;
  const bool per_row = kind.format == matmul::WeightFormat::kFp8E4m3PerChannel;
  const std::int64_t block = per_row ? 0 : kind.block;
  std::vector<Shape> base;
  if (entry.operation == MatmulOperation::kGemv || entry.schedule) {
    // (Words: one K of 128s, which the tensor-core GEMV's UINT4 rows need.)
    base = {{1, words ? 16 : 7, words ? 256 : 264, 1, {}, block},
            {3, words ? 8 : 33, words ? 136 : 130, 2, {}, block},
            {16, words ? 24 : 5, words ? 512 : 530, 1, {}, block}};
    if (level != Level::kSmoke) {
      base.push_back({1, words ? 64 : 61, 1032, 1, {}, block});
      base.push_back({2, words ? 8 : 1, 8, 1, {}, block});
      // Odd K (GPTQ: its words need K % 8 == 0): a GEMV that takes only
      // 4-bit rows starting on a byte refuses it for lowbit-packed FP4.
      if (kind.packing != matmul::WeightPacking::kGptq) base.push_back({3, words ? 8 : 9, 263, 1, {}, block});
    }
  }
  if (entry.operation == MatmulOperation::kGemm && entry.schedule) {
    // Past the GEMV's largest M, then the GEMM shapes below.
    base.push_back({17, words ? 8 : 11, words ? 136 : 150, 2, {}, block});
  }
  if (entry.operation == MatmulOperation::kGemm) {
    base.push_back({128, words ? 32 : 29, 264, 1, {}, block});
    if (level != Level::kSmoke) {
      base.push_back({130, words ? 16 : 19, words ? 520 : 515, 2, {}, block});
      base.push_back({1, 8, 256, 1, {}, block});
    }
  }
  std::vector<Shape> shapes;
  for (Shape s : base) {
    if (per_row) {
      s.geometry = matmul::ScaleGeometry::kPerRow;
      shapes.push_back(s);
      continue;
    }
    if (words || entry.takes_row_groups) {
      s.geometry = matmul::ScaleGeometry::kRowGroups;
      shapes.push_back(s);
    }
    if (!words && entry.takes_flat_blocks) {
      s.geometry = matmul::ScaleGeometry::kFlatBlocks;
      shapes.push_back(s);
    }
  }
  return shapes;
}

// Scale bits: moderate (a factor within 2^-4 .. 2^4), or at `special_percent`
// a zero, NaN, Inf or extreme one.
std::uint32_t ScaleBits(Rng& r, matmul::ScaleType t, int special_percent) {
  const bool special = special_percent > 0 && r.Chance(special_percent);
  switch (t) {
    case matmul::ScaleType::kE8m0:
      if (special) return static_cast<std::uint32_t>(r.Chance(50) ? 0xFF : r.Int(0, 1) * 254);
      return static_cast<std::uint32_t>(r.Int(123, 131));
    case matmul::ScaleType::kUe4m3:
      if (special) return static_cast<std::uint32_t>(r.Chance(50) ? 0x7F : r.Int(0, 1) * 0x7E);
      return static_cast<std::uint32_t>(r.Int(0x18, 0x48));
    case matmul::ScaleType::kFp16:
      if (special) return r.Chance(50) ? 0x7E00u : r.Chance(50) ? 0x7C00u : 0u;
      return static_cast<std::uint32_t>((r.Int(11, 19) << 10) | (r.Next() & 0x3FF));
    case matmul::ScaleType::kBf16:
      if (special) return r.Chance(50) ? 0x7FC0u : r.Chance(50) ? 0x7F80u : 0u;
      return static_cast<std::uint32_t>((r.Int(123, 131) << 7) | (r.Next() & 0x7F));
    case matmul::ScaleType::kFp32:
      if (special) return r.Chance(50) ? 0x7FC00000u : r.Chance(50) ? 0x7F800000u : 0u;
      return static_cast<std::uint32_t>((r.Int(123, 131) << 23) | (r.Next() & 0x7FFFFF));
  }
  return 0;
}

std::uint16_t ActivationBits(Rng& r, matmul::ActivationType t, int special_percent) {
  const bool bf16 = t == matmul::ActivationType::kBf16;
  if (special_percent > 0 && r.Chance(special_percent)) {
    const std::uint16_t specials_bf16[] = {0x0000, 0x8000, 0x0001, 0x7F80, 0xFF80, 0x7FC0};
    const std::uint16_t specials_fp16[] = {0x0000, 0x8000, 0x0001, 0x7C00, 0xFC00, 0x7E00};
    return (bf16 ? specials_bf16 : specials_fp16)[r.Next() % 6];
  }
  const std::uint16_t sign = static_cast<std::uint16_t>((r.Next() & 1) << 15);
  if (bf16) return sign | static_cast<std::uint16_t>((r.Int(120, 134) << 7) | (r.Next() & 0x7F));
  return sign | static_cast<std::uint16_t>((r.Int(8, 22) << 10) | (r.Next() & 0x3FF));
}

// The buffers of one problem, and its view.
struct Buffers {
  std::vector<std::uint8_t> code_bytes;
  std::vector<std::uint32_t> code_words;
  std::vector<std::uint8_t> scale_bytes;
  std::vector<std::uint16_t> scale_halves;
  std::vector<std::uint32_t> scale_words;  // FP32 bits
  std::vector<std::int32_t> zero_ints;
  std::vector<std::uint32_t> zero_words;
  std::vector<recipe::TensorScale> tensor_scales;
  std::vector<std::uint16_t> x;
  MatmulArgs args;
};

void MakeProblem(const MatmulEntry& entry, const MatmulWeightKind& kind, const Shape& s, std::uint64_t seed,
                 Buffers* b) {
  Rng r{seed};
  // GEMM rows checked within a bound get finite inputs (the bound does not
  // cover specials); GEMV rows get specials. Rows with a declared schedule
  // get them in every other problem: at 3 % of x a row of K = 264 holds a
  // NaN or Inf almost surely, and the finite problems are the ones that
  // tell chunk orders and scale placements apart.
  const int special = entry.schedule ? (seed % 2 == 0 ? 3 : 0) : entry.operation == MatmulOperation::kGemv ? 3 : 0;
  const bool words = kind.packing != matmul::WeightPacking::kLowbit;
  matmul::WeightView w;
  w.format = kind.format;
  w.packing = kind.packing;
  w.geometry = s.geometry;
  w.scale_type = kind.scale_type;
  w.n = s.n;
  w.k = s.k;
  w.block = s.block;
  w.batch = s.batch;
  const bool integers = matmul::IsIntegerFormat(kind.format);
  const bool with_zeros = integers && (seed % 2 == 0 || kind.format == matmul::WeightFormat::kUint4);
  w.zeros = with_zeros ? &b->zero_ints : nullptr;  // non-null marker for the size rule; replaced below
  const matmul::WeightBufferSizes per = matmul::PerBatchSizes(w);
  if (words) {
    b->code_words.resize(static_cast<std::size_t>(per.codes * s.batch));
    for (auto& v : b->code_words) v = static_cast<std::uint32_t>(r.Next());
  } else {
    b->code_bytes.resize(static_cast<std::size_t>(per.codes * s.batch));
    for (auto& v : b->code_bytes) {
      v = static_cast<std::uint8_t>(r.Next());
      // E4M3 NaN codes only where specials are wanted.
      if (!matmul::IsFourBit(kind.format) && (v & 0x7F) == 0x7F && !(special > 0 && r.Chance(special))) v &= 0xFE;
    }
  }
  const std::size_t scales = static_cast<std::size_t>(per.scales * s.batch);
  for (std::size_t i = 0; i < scales; ++i) {
    const std::uint32_t bits = ScaleBits(r, kind.scale_type, special);
    switch (matmul::ScaleBytes(kind.scale_type)) {
      case 1: b->scale_bytes.push_back(static_cast<std::uint8_t>(bits)); break;
      case 2: b->scale_halves.push_back(static_cast<std::uint16_t>(bits)); break;
      default: b->scale_words.push_back(bits); break;
    }
  }
  if (with_zeros) {
    const std::size_t zeros = static_cast<std::size_t>(per.zeros * s.batch);
    if (words) {
      for (std::size_t i = 0; i < zeros; ++i) b->zero_words.push_back(static_cast<std::uint32_t>(r.Next()));
    } else {
      for (std::size_t i = 0; i < zeros; ++i) b->zero_ints.push_back(static_cast<std::int32_t>(r.Int(0, 15)));
    }
  }
  if (kind.format == matmul::WeightFormat::kNvfp4) {
    for (std::int64_t l = 0; l < s.batch; ++l) {
      const float t = std::ldexp(static_cast<float>(r.Int(1, 1 << 20)), static_cast<int>(r.Int(-26, -18)));
      b->tensor_scales.push_back({1.0f / t, t});
    }
  }
  b->x.resize(static_cast<std::size_t>(s.batch * s.m * s.k));
  for (auto& v : b->x) v = ActivationBits(r, entry.activation, special);

  const void* codes = words ? static_cast<const void*>(b->code_words.data()) : b->code_bytes.data();
  const void* scale_ptr = !b->scale_bytes.empty()    ? static_cast<const void*>(b->scale_bytes.data())
                          : !b->scale_halves.empty() ? static_cast<const void*>(b->scale_halves.data())
                                                     : static_cast<const void*>(b->scale_words.data());
  const void* zeros = !with_zeros ? nullptr
                      : words     ? static_cast<const void*>(b->zero_words.data())
                                  : static_cast<const void*>(b->zero_ints.data());
  b->args.w = matmul::DenseWeights(kind.format, kind.packing, s.geometry, kind.scale_type, s.n, s.k, s.block, s.batch,
                                   codes, scale_ptr, zeros,
                                   b->tensor_scales.empty() ? nullptr : b->tensor_scales.data());
  b->args.m = s.m;
  b->args.x.type = entry.activation;
  b->args.x.data = b->x.data();
  b->args.x.count = static_cast<std::int64_t>(b->x.size());
  b->args.x.row_stride = s.k;
  b->args.x.batch_stride = s.m * s.k;
}

// y with kGuardPerRow guard elements after each row, the last included (the
// buffer is kGuardPerRow longer than y.count, what the shape needs).
struct Output {
  std::vector<std::uint32_t> words;
  std::vector<std::uint16_t> halves;
  void Attach(MatmulArgs* a, matmul::OutputType type) {
    const std::int64_t stride = a->w.n + kGuardPerRow;
    const std::int64_t count = (a->w.batch - 1) * a->m * stride + (a->m - 1) * stride + a->w.n;
    a->y.type = type;
    a->y.row_stride = stride;
    a->y.batch_stride = a->m * stride;
    a->y.count = count;
    const std::size_t size = static_cast<std::size_t>(count + kGuardPerRow);
    if (type == matmul::OutputType::kFp32) {
      words.assign(size, kGuard32);
      a->y.data = words.data();
    } else {
      halves.assign(size, kGuard16);
      a->y.data = halves.data();
    }
  }
  std::uint32_t At(std::int64_t i) const {
    return words.empty() ? halves[static_cast<std::size_t>(i)] : words[static_cast<std::size_t>(i)];
  }
  std::uint32_t Guard() const { return words.empty() ? kGuard16 : kGuard32; }
  std::int64_t Size() const { return static_cast<std::int64_t>(words.empty() ? halves.size() : words.size()); }
};

bool IsNan(matmul::OutputType t, std::uint32_t code) {
  return std::isnan(DecodeToF64(matmul::OutputFormatOf(t), code));
}

void AddOutputMismatch(const std::string& shape, const std::string& where, matmul::OutputType type,
                       std::uint32_t expected, std::uint32_t actual, std::string note, Row* row) {
  Mismatch m;
  m.combo = shape;
  m.where = where;
  m.output_format = matmul::OutputTypeName(type);
  m.expected = expected;
  m.actual = actual;
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.17g", DecodeToF64(matmul::OutputFormatOf(type), expected));
  m.expected_value = buf;
  std::snprintf(buf, sizeof buf, "%.17g", DecodeToF64(matmul::OutputFormatOf(type), actual));
  m.actual_value = buf;
  m.note = std::move(note);
  internal::AddMismatch(row, std::move(m));
}

std::string Where(std::int64_t l, std::int64_t m, std::int64_t n) {
  return "y[" + std::to_string(l) + "][" + std::to_string(m) + "][" + std::to_string(n) + "]";
}

// Guard elements between and after rows must be untouched.
void CheckGuards(const MatmulArgs& a, const Output& out, const std::string& shape, Row* row) {
  for (std::int64_t l = 0; l < a.w.batch; ++l) {
    for (std::int64_t m = 0; m < a.m; ++m) {
      const std::int64_t start = l * a.y.batch_stride + m * a.y.row_stride + a.w.n;
      for (std::int64_t g = 0; g < kGuardPerRow && start + g < out.Size(); ++g) {
        ++row->checked;
        if (out.At(start + g) != out.Guard()) {
          AddOutputMismatch(shape, "guard " + std::to_string(g) + " after " + Where(l, m, a.w.n - 1), a.y.type,
                            out.Guard(), out.At(start + g), "written past the row", row);
        }
      }
    }
  }
}

void CheckGemvShape(const MatmulEntry& entry, const MatmulEntry& scalar, const MatmulWeightKind& kind,
                    const Shape& s, std::uint64_t seed, Row* row) {
  Buffers b;
  MakeProblem(entry, kind, s, seed, &b);
  const std::string shape = ShapeText(s);
  if (entry.refuses && !entry.refuses(b.args).empty()) return;  // left to another row
  Output want, have;
  MatmulArgs a = b.args;
  want.Attach(&a, entry.output);
  if (registry::Status st = scalar.run(a); !st.ok) {
    row->skipped = "scalar (" + shape + "): " + st.message;
    return;
  }
  MatmulArgs h = b.args;
  have.Attach(&h, entry.output);
  const std::uint64_t outputs = static_cast<std::uint64_t>(s.batch * s.m * s.n);
  if (registry::Status st = entry.run(h); !st.ok) {
    row->checked += outputs;
    return internal::AddKernelError(shape, st, outputs, row);
  }
  for (std::int64_t l = 0; l < s.batch; ++l) {
    for (std::int64_t m = 0; m < s.m; ++m) {
      for (std::int64_t n = 0; n < s.n; ++n) {
        const std::int64_t i = l * a.y.batch_stride + m * a.y.row_stride + n;
        const std::uint32_t w = want.At(i), g = have.At(i);
        ++row->checked;
        const bool same = w == g || (IsNan(entry.output, w) && IsNan(entry.output, g));
        if (!same) AddOutputMismatch(shape, Where(l, m, n), entry.output, w, g, "", row);
      }
    }
  }
  CheckGuards(h, have, shape, row);
}

void CheckGemmShape(const MatmulEntry& entry, const MatmulWeightKind& kind, const Shape& s, std::uint64_t seed,
                    Row* row) {
  Buffers b;
  MakeProblem(entry, kind, s, seed, &b);
  const std::string shape = ShapeText(s);
  if (entry.refuses && !entry.refuses(b.args).empty()) return;  // left to another row
  MatmulArgs a = b.args;
  Output have;
  have.Attach(&a, entry.output);
  const matmul::ExactMatmulResult exact = matmul::ExactMatmul(a);
  if (!exact.status.ok) {
    row->skipped = "exact mode (" + shape + "): " + exact.status.error;
    return;
  }
  const std::uint64_t outputs = static_cast<std::uint64_t>(s.batch * s.m * s.n);
  if (registry::Status st = entry.run(a); !st.ok) {
    row->checked += outputs;
    return internal::AddKernelError(shape, st, outputs, row);
  }
  const FormatSpec out_format = matmul::OutputFormatOf(entry.output);
  std::size_t e = 0;
  for (std::int64_t l = 0; l < s.batch; ++l) {
    for (std::int64_t m = 0; m < s.m; ++m) {
      for (std::int64_t n = 0; n < s.n; ++n, ++e) {
        const std::uint32_t got = have.At(l * a.y.batch_stride + m * a.y.row_stride + n);
        const double y = DecodeToF64(out_format, got);
        const double want = exact.nearest[e];
        ++row->checked;
        if (std::isnan(want) || std::isinf(want)) {
          const bool ok = std::isnan(want) ? std::isnan(y) : y == want;
          if (!ok) AddOutputMismatch(shape, Where(l, m, n), entry.output, exact.codes[e], got, "special differs", row);
          continue;
        }
        registry::MatmulMagnitudes mag;
        mag.k = s.k;
        mag.abs_scale = std::fabs(matmul::OuterScaleValue(a.w, l, n));
        for (std::int64_t k = 0; k < s.k; ++k) {
          const double x = std::fabs(matmul::ActivationValue(a, l, m, k));
          mag.sum_abs_x += x;
          mag.sum_abs_xw += x * std::fabs(matmul::ExactInnerWeightValue(a.w, l, n, k));
        }
        const double bound = entry.error_bound(a, mag);
        const double error = std::fabs(y - want);
        if (got == exact.codes[e]) continue;  // the exact product's own rounding
        if (std::isinf(y)) {
          // Past the output format's largest finite value an output is Inf:
          // acceptable when a result within the bound of the exact one can
          // round there (same sign, |exact| + bound beyond the largest finite).
          const std::uint32_t inf_code = static_cast<std::uint32_t>(EncodeF64(out_format, INFINITY).code);
          const double largest_finite = DecodeToF64(out_format, inf_code - 1);
          if ((y > 0) == (want > 0) && std::fabs(want) + bound >= largest_finite) continue;
        }
        if (!(error <= bound)) {
          char note[160];
          std::snprintf(note, sizeof note, "|y - exact| = %.6g > bound %.6g (sum |x||w| = %.6g, K = %lld)", error,
                        bound, mag.sum_abs_xw, static_cast<long long>(s.k));
          AddOutputMismatch(shape, Where(l, m, n), entry.output, exact.codes[e], got, note, row);
        }
      }
    }
  }
  CheckGuards(a, have, shape, row);
}

bool SameSchedule(const matmul::AccumulationSchedule& a, const matmul::AccumulationSchedule& b) {
  return a.instruction == b.instruction && a.promotion_interval == b.promotion_interval && a.split_k == b.split_k &&
         a.split_reduction == b.split_reduction && a.output == b.output &&
         F32Bits(a.alpha) == F32Bits(b.alpha) && a.scale_per_column == b.scale_per_column;
}

// The split-K counts a scheduled row took over its shapes, for its listing.
struct SplitRange {
  int low = 0, high = 0;
  matmul::AccumulationSchedule first;
  bool refused = false;  // the row failed with one line: no further shapes
  void Add(const matmul::AccumulationSchedule& s) {
    if (high == 0) first = s;
    low = high == 0 || s.split_k < low ? s.split_k : low;
    high = s.split_k > high ? s.split_k : high;
  }
};

// The row fails with one line (this shape's outputs counted as differing);
// its further shapes are not run.
void RefuseSchedule(const std::string& shape, std::string why, std::uint64_t outputs, SplitRange* splits, Row* row) {
  splits->refused = true;
  Mismatch m;
  m.combo = shape;
  m.note = "declared schedule: " + std::move(why);
  internal::AddMismatch(row, std::move(m));
  if (outputs > 1) row->mismatches += outputs - 1;
  row->checked += outputs;
}

void CheckScheduledShape(const MatmulEntry& entry, const MatmulWeightKind& kind, const Shape& s, std::uint64_t seed,
                         SplitRange* splits, Row* row) {
  Buffers b;
  MakeProblem(entry, kind, s, seed, &b);
  const std::string shape = ShapeText(s);
  if (entry.refuses && !entry.refuses(b.args).empty()) return;  // left to another row
  MatmulArgs a = b.args;
  Output have;
  have.Attach(&a, entry.output);
  const std::uint64_t outputs = static_cast<std::uint64_t>(s.batch * s.m * s.n);
  const matmul::AccumulationSchedule schedule = entry.schedule(a);
  // Batch invariance: the same problem at other M must declare the same
  // schedule (only M differs; y's extent is not what a schedule reads).
  for (const std::int64_t other_m : {std::int64_t{1}, s.m + 1}) {
    MatmulArgs other = a;
    other.m = other_m;
    if (!SameSchedule(entry.schedule(other), schedule)) {
      return RefuseSchedule(shape,
                            "it changes with M (M=" + std::to_string(s.m) + " and M=" + std::to_string(other_m) +
                                " differ), so a row of y would not have the same bits whatever M the call had",
                            outputs, splits, row);
    }
  }
  if (const char* why = matmul::QuantizedScheduleProblem(a.w, entry.activation, schedule)) {
    return RefuseSchedule(shape, why, outputs, splits, row);
  }
  if (std::strcmp(Spec(schedule.output).name, matmul::OutputFormatOf(entry.output).name) != 0) {
    return RefuseSchedule(shape,
                          std::string("it converts to ") + Spec(schedule.output).name + ", the row writes " +
                              matmul::OutputTypeName(entry.output),
                          outputs, splits, row);
  }
  splits->Add(schedule);
  const matmul::QuantizedMatmulResult model =
      matmul::QuantizedMatmulModel(a.w, b.x.data(), entry.activation, s.m, schedule);
  if (!model.error.empty()) {
    row->skipped = "model (" + shape + "): " + model.error;
    return;
  }
  if (registry::Status st = entry.run(a); !st.ok) {
    row->checked += outputs;
    return internal::AddKernelError(shape, st, outputs, row);
  }
  std::size_t e = 0;
  for (std::int64_t l = 0; l < s.batch; ++l) {
    for (std::int64_t m = 0; m < s.m; ++m) {
      for (std::int64_t n = 0; n < s.n; ++n, ++e) {
        const std::uint32_t want = model.y[e];
        const std::uint32_t got = have.At(l * a.y.batch_stride + m * a.y.row_stride + n);
        ++row->checked;
        if (got != want) AddOutputMismatch(shape, Where(l, m, n), entry.output, want, got, "", row);
      }
    }
  }
  CheckGuards(a, have, shape, row);
}

}  // namespace

Row CheckMatmul(const MatmulEntry& entry, const MatmulEntry* scalar, Level level) {
  Row row;
  row.kind = RowKind::kMatmul;
  row.backend = entry.backend;
  row.operation = registry::MatmulOperationName(entry.operation);
  row.format = entry.weight + " " + matmul::ActivationTypeName(entry.activation) + "->" +
               matmul::OutputTypeName(entry.output);
  const MatmulWeightKind* kind = registry::FindMatmulWeightKind(entry.weight);
  if (kind == nullptr) {
    row.skipped = "unknown weight kind '" + entry.weight + "'";
  } else if (entry.schedule) {
    if (!entry.available || !entry.available()) {
      row.skipped = "backend not available here";
    } else {
      SplitRange splits;
      internal::CheckShapesInTurn(Shapes(entry, *kind, level), &row, [&](const Shape& shape, std::uint64_t seed) {
        if (!splits.refused) CheckScheduledShape(entry, *kind, shape, seed, &splits, &row);
      });
      row.format += splits.high == 0 ? " [declares a schedule]"
                                     : " [" + registry::MatmulScheduleWords(splits.first, splits.low, splits.high) +
                                           "]";
    }
  } else if (entry.operation == MatmulOperation::kGemv && scalar == nullptr) {
    row.skipped = "no scalar row to compare with";
  } else if (entry.operation == MatmulOperation::kGemm && !entry.error_bound) {
    row.skipped = "the row states no error bound (MatmulEntry::error_bound)";
  } else if (!entry.available || !entry.available()) {
    row.skipped = "backend not available here";
  } else {
    internal::CheckShapesInTurn(Shapes(entry, *kind, level), &row, [&](const Shape& shape, std::uint64_t seed) {
      if (entry.operation == MatmulOperation::kGemv) {
        CheckGemvShape(entry, *scalar, *kind, shape, seed, &row);
      } else {
        CheckGemmShape(entry, *kind, shape, seed, &row);
      }
    });
  }
  return row;
}

std::vector<Row> CheckMatmuls(const registry::Registry& registry, Level level, const Filter& filter,
                              Progress* progress) {
  // A format filter names an element format; matmul rows are selected
  // without one.
  return internal::CheckNonScalarRows(
      registry.MatmulEntries(), filter.format.empty(), filter, "matmul vs model", progress,
      [&](const MatmulEntry& entry) {
        return CheckMatmul(
            entry, registry.FindMatmul(entry.operation, entry.weight, entry.activation, entry.output, "scalar"), level);
      });
}

}  // namespace lowbit::check
