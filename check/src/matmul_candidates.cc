// The accumulation candidates of a product check (matmul_candidates.h). The
// plain FP32 orders are written once here, each as the single fmaf / + / *
// operations it is (correctly rounded, no contraction); the tensor-core
// candidates are the model's (formats/.../matmul/tensor_core_matrix.h
// ModelMatmul) and the exact one is formats/.../matmul/exact.h ExactSum.
#include "matmul_candidates.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <functional>
#include <string>
#include <thread>
#include <vector>

#include "lowbit/formats/convert.h"
#include "lowbit/formats/fp32_bits.h"
#include "lowbit/formats/matmul/exact.h"
#include "lowbit/formats/matmul/tensor_core_matrix.h"
#include "lowbit/formats/tensor_core.h"

namespace lowbit::check::internal {
namespace {

using matmul::AccumulationSchedule;
using matmul::SplitReduction;

void ParallelFor(long count, int threads, const std::function<void(long, long)>& body) {
  if (threads <= 1 || count < 2) {
    body(0, count);
    return;
  }
  const long parts = std::min<long>(threads, count);
  const long per = (count + parts - 1) / parts;
  std::vector<std::thread> pool;
  for (long t = 0; t < parts; ++t) {
    const long first = t * per, last = std::min(count, first + per);
    if (first < last) pool.emplace_back([&body, first, last] { body(first, last); });
  }
  for (std::thread& th : pool) th.join();
}

float BlockScale(const std::vector<float>& scales, int block, long k_total, long row, long k) {
  if (block == 0) return 1.0f;
  const long blocks = (k_total + block - 1) / block;
  return scales[static_cast<std::size_t>(row * blocks + k / block)];
}

// An element's FP32 value with its block scale (one FP32 multiplication; exact
// for E2M1 x UE4M3 and for E2M1 / E4M3 x E8M0 inside FP32's range).
float ScaledA(const MatmulOperands& o, long i, long k) {
  const float v = o.a_values[static_cast<std::size_t>(i * o.k + k)];
  return o.a_block == 0 ? v : v * BlockScale(o.a_block_scales, o.a_block, o.k, i, k);
}
float ScaledW(const MatmulOperands& o, long j, long k) {
  const float v = o.w_values[static_cast<std::size_t>(j * o.k + k)];
  return o.w_block == 0 ? v : v * BlockScale(o.w_block_scales, o.w_block, o.k, j, k);
}

// The pairwise tree: v[i] = v[2i] + v[2i + 1] level after level, an odd last
// value passing up unchanged.
float PairwiseSum(std::vector<float> v) {
  if (v.empty()) return 0.0f;
  while (v.size() > 1) {
    std::size_t out = 0;
    for (std::size_t i = 0; i + 1 < v.size(); i += 2) v[out++] = v[i] + v[i + 1];
    if (v.size() % 2 == 1) v[out++] = v.back();
    v.resize(out);
  }
  return v[0];
}

// Parts added as the model adds split-K parts (accumulation_schedule.h step 4).
float CombineParts(std::vector<float> parts, bool tree) {
  const int count = static_cast<int>(parts.size());
  if (!tree) {
    float value = parts[0];
    for (int p = 1; p < count; ++p) value = value + parts[static_cast<std::size_t>(p)];
    return value;
  }
  for (int width = 1; width < count; width *= 2) {
    for (int p = 0; p + width < count; p += 2 * width) {
      parts[static_cast<std::size_t>(p)] = parts[static_cast<std::size_t>(p)] + parts[static_cast<std::size_t>(p + width)];
    }
  }
  return parts[0];
}

struct OperandScale {
  float a = 1.0f, w = 1.0f;  // Epilogue::kIntoOperands: the factors each operand takes
};

float FmaRange(const MatmulOperands& o, long i, long j, long first, long last, float acc, OperandScale s) {
  for (long k = first; k < last; ++k) {
    float a = ScaledA(o, i, k), w = ScaledW(o, j, k);
    if (s.a != 1.0f) a = a * s.a;
    if (s.w != 1.0f) w = w * s.w;
    acc = std::fmaf(a, w, acc);
  }
  return acc;
}

float Fp32Accumulator(const CandidateSpec& c, const MatmulOperands& o, long i, long j) {
  OperandScale s;
  if (c.epilogue == Epilogue::kIntoOperands) {
    s.a = (o.has_a_tensor ? o.a_tensor : 1.0f) * (o.row_scales.empty() ? 1.0f : o.row_scales[static_cast<std::size_t>(i)]);
    s.w = (o.has_b_tensor ? o.b_tensor : 1.0f) *
          (o.column_scales.empty() ? 1.0f : o.column_scales[static_cast<std::size_t>(j)]);
  }
  switch (c.accumulation) {
    case Accumulation::kFmaKOrder: {
      if (c.split <= 1) {
        const float start = c.c_first ? o.c[static_cast<std::size_t>(i * o.n + j)] : 0.0f;
        return FmaRange(o, i, j, 0, o.k, start, s);
      }
      const long per = (o.k + c.split - 1) / c.split;
      std::vector<float> parts(static_cast<std::size_t>(c.split), 0.0f);
      for (int p = 0; p < c.split; ++p) {
        const long first = std::min(o.k, p * per), last = std::min(o.k, first + per);
        parts[static_cast<std::size_t>(p)] = FmaRange(o, i, j, first, last, 0.0f, s);
      }
      return CombineParts(std::move(parts), c.split_tree);
    }
    case Accumulation::kPairwise: {
      std::vector<float> products(static_cast<std::size_t>(o.k));
      for (long k = 0; k < o.k; ++k) products[static_cast<std::size_t>(k)] = ScaledA(o, i, k) * ScaledW(o, j, k);
      return PairwiseSum(std::move(products));
    }
    case Accumulation::kBlocks: {
      float acc = 0.0f;
      for (long first = 0; first < o.k; first += c.block) {
        acc = acc + FmaRange(o, i, j, first, std::min(o.k, first + c.block), 0.0f, s);
      }
      return acc;
    }
    case Accumulation::kScaleBlocks: {
      const int block = o.a_block != 0 ? o.a_block : o.w_block;
      const int lanes = c.block;
      const int per_chunk = lanes > 1 && block == 16 ? 2 : 1;  // gemv_order.h GemvOrderOf
      std::vector<float> lane(static_cast<std::size_t>(lanes), 0.0f);
      for (long b = 0; b * block < o.k; ++b) {
        float partial = 0.0f;
        const long first = b * block, last = std::min(o.k, first + block);
        for (long k = first; k < last; ++k) {
          partial = std::fmaf(o.a_values[static_cast<std::size_t>(i * o.k + k)],
                              o.w_values[static_cast<std::size_t>(j * o.k + k)], partial);
        }
        float scale = 1.0f;
        if (o.a_block != 0 && o.w_block != 0) {
          scale = BlockScale(o.a_block_scales, o.a_block, o.k, i, first) *
                  BlockScale(o.w_block_scales, o.w_block, o.k, j, first);
        } else if (o.a_block != 0) {
          scale = BlockScale(o.a_block_scales, o.a_block, o.k, i, first);
        } else {
          scale = BlockScale(o.w_block_scales, o.w_block, o.k, j, first);
        }
        float& acc = lane[static_cast<std::size_t>((b / per_chunk) % lanes)];
        acc = std::fmaf(partial, scale, acc);
      }
      for (int h = lanes / 2; h >= 1; h /= 2) {
        for (int t = 0; t < h; ++t) lane[static_cast<std::size_t>(t)] = lane[static_cast<std::size_t>(t)] + lane[static_cast<std::size_t>(t + h)];
      }
      return lane[0];
    }
    default: return 0.0f;
  }
}

FormatSpec OutputSpec(FormatId type) { return Spec(type); }

std::uint32_t ConvertOut(FormatId type, float v) {
  if (type == FormatId::kFp32) return F32Bits(v);
  EncodeOptions nearest;
  return static_cast<std::uint32_t>(EncodeF32(OutputSpec(type), v, nearest).code);
}

float DecodeOut(FormatId type, std::uint32_t code) {
  return static_cast<float>(DecodeToF64(OutputSpec(type), code));
}

std::uint32_t ApplyEpilogue(const CandidateSpec& c, const MatmulOperands& o, long i, long j, float acc) {
  const float row = o.row_scales.empty() ? 1.0f : o.row_scales[static_cast<std::size_t>(i)];
  const float column = o.column_scales.empty() ? 1.0f : o.column_scales[static_cast<std::size_t>(j)];
  const bool has_c = !o.c.empty() && !c.c_first;
  const float cv = has_c ? o.c[static_cast<std::size_t>(i * o.n + j)] : 0.0f;
  float v = acc;
  switch (c.epilogue) {
    case Epilogue::kIntoOperands: break;  // the scales went into the operands
    case Epilogue::kSequential:
      if (!o.row_scales.empty()) v = v * row;
      if (!o.column_scales.empty()) v = v * column;
      if (o.has_alpha) v = v * o.alpha;
      break;
    case Epilogue::kColumnFirst:
      v = (v * column) * row;
      if (o.has_alpha) v = v * o.alpha;
      break;
    case Epilogue::kCombined: {
      float s = row * column;
      if (o.has_alpha) s = s * o.alpha;
      v = v * s;
      break;
    }
    case Epilogue::kAfterConversion: {
      float s = row * column;
      if (o.has_alpha) s = s * o.alpha;
      v = DecodeOut(o.d_type, ConvertOut(o.d_type, v)) * s;
      break;
    }
  }
  if (has_c) v = v + cv;
  return ConvertOut(o.d_type, v);
}

std::uint32_t ExactOutput(const MatmulOperands& o, long i, long j) {
  matmul::ExactSum sum;
  for (long k = 0; k < o.k; ++k) {
    // Each factor is exact in binary64 (an FP32 element value times an FP32
    // block scale: at most 48 significant bits); AddProduct adds their
    // product exactly.
    double a = o.a_values[static_cast<std::size_t>(i * o.k + k)];
    double w = o.w_values[static_cast<std::size_t>(j * o.k + k)];
    if (o.a_block != 0) a *= BlockScale(o.a_block_scales, o.a_block, o.k, i, k);
    if (o.w_block != 0) w *= BlockScale(o.w_block_scales, o.w_block, o.k, j, k);
    sum.AddProduct(a, w);
  }
  // Unreachable for the operand formats of matmul_diagnosis.h: each factor
  // is an FP32 value times an FP32 block scale, so a product lies between
  // 2^-298 (two FP32 subnormals) and 2^272 (448 * 2^127, squared), inside
  // exact.h's 2^-352 .. 2^350; a NaN code, never a wrong finite sum, if not.
  if (sum.out_of_range()) return o.d_type == FormatId::kFp32 ? 0x7FC00000u : 0x7E00u;
  if (!o.HasOuterScales() && o.c.empty()) {
    return static_cast<std::uint32_t>(EncodeF64(OutputSpec(o.d_type), sum.RoundToOdd()).code);
  }
  // Outer scales and C: applied in binary64 to the exact sum rounded to odd
  // (docs/check-your-kernel.md says this is the one candidate not rounded
  // exactly once when they are present).
  double v = sum.RoundToOdd();
  if (!o.row_scales.empty()) v *= o.row_scales[static_cast<std::size_t>(i)];
  if (!o.column_scales.empty()) v *= o.column_scales[static_cast<std::size_t>(j)];
  if (o.has_alpha) v *= static_cast<double>(o.a_tensor) * static_cast<double>(o.b_tensor);
  if (!o.c.empty()) v += o.c[static_cast<std::size_t>(i * o.n + j)];
  return static_cast<std::uint32_t>(EncodeF64(OutputSpec(o.d_type), v).code);
}

std::vector<float> TensorCoreAccumulators(const CandidateSpec& c, const MatmulOperands& o, const OutputGrid& grid,
                                          int threads) {
  const long rows = static_cast<long>(grid.rows.size()), cols = static_cast<long>(grid.columns.size());
  std::vector<std::uint32_t> x(static_cast<std::size_t>(rows * o.k)), w(static_cast<std::size_t>(cols * o.k));
  for (long r = 0; r < rows; ++r) {
    std::copy_n(o.a_codes.begin() + grid.rows[static_cast<std::size_t>(r)] * o.k, o.k, x.begin() + r * o.k);
  }
  for (long q = 0; q < cols; ++q) {
    std::copy_n(o.w_codes.begin() + grid.columns[static_cast<std::size_t>(q)] * o.k, o.k, w.begin() + q * o.k);
  }
  std::vector<std::uint32_t> y(static_cast<std::size_t>(rows * cols));
  matmul::ModelMatmul(c.schedule, x.data(), w.data(), rows, cols, o.k, nullptr, y.data(), threads);
  // The schedule's output is FP32 (an FP16 accumulator widened exactly):
  // the epilogue is applied here, once for every epilogue candidate.
  std::vector<float> acc(y.size());
  for (std::size_t t = 0; t < y.size(); ++t) acc[t] = F32FromBits(y[t]);
  return acc;
}

// The operands a bug reads instead.
MatmulOperands BuggedOperands(const MatmulOperands& o, Bug bug, int tile) {
  MatmulOperands b = o;
  switch (bug) {
    case Bug::kNone: break;
    case Bug::kDroppedTail: {
      const long k2 = o.k - o.k % tile;
      auto cut = [&](const auto& v, long rows, auto* out) {
        out->clear();
        for (long r = 0; r < rows; ++r) out->insert(out->end(), v.begin() + r * o.k, v.begin() + r * o.k + k2);
      };
      cut(o.a_codes, o.m, &b.a_codes);
      cut(o.w_codes, o.n, &b.w_codes);
      cut(o.a_values, o.m, &b.a_values);
      cut(o.w_values, o.n, &b.w_values);
      b.k = k2;
      // Block scales keep their [row][block] layout: a dropped tail of whole
      // tiles (tile a multiple of the block) drops whole blocks.
      auto cut_scales = [&](const std::vector<float>& v, int block, long rows, std::vector<float>* out) {
        if (block == 0) return;
        const long before = (o.k + block - 1) / block, after = (k2 + block - 1) / block;
        out->clear();
        for (long r = 0; r < rows; ++r) out->insert(out->end(), v.begin() + r * before, v.begin() + r * before + after);
      };
      cut_scales(o.a_block_scales, o.a_block, o.m, &b.a_block_scales);
      cut_scales(o.w_block_scales, o.w_block, o.n, &b.w_block_scales);
      break;
    }
    case Bug::kTransposedB:
      for (long j = 0; j < o.n; ++j) {
        for (long k = 0; k < o.k; ++k) {
          b.w_codes[static_cast<std::size_t>(j * o.k + k)] = o.w_codes[static_cast<std::size_t>(k * o.n + j)];
          b.w_values[static_cast<std::size_t>(j * o.k + k)] = o.w_values[static_cast<std::size_t>(k * o.n + j)];
        }
      }
      break;
    case Bug::kTransposedScales: {
      const long blocks = (o.k + o.w_block - 1) / o.w_block;
      for (long j = 0; j < o.n; ++j) {
        for (long kb = 0; kb < blocks; ++kb) {
          b.w_block_scales[static_cast<std::size_t>(j * blocks + kb)] =
              o.w_block_scales[static_cast<std::size_t>(kb * o.n + j)];
        }
      }
      break;
    }
  }
  return b;
}

std::string SplitName(int split, bool tree) {
  return ", split-K " + std::to_string(split) + (tree ? " tree" : " in order");
}

bool FindInstruction(const std::string& name, TensorCoreId* id) { return FindTensorCoreInstruction(name, id); }

const char* ElementName(FormatId f) { return Spec(f).name; }

}  // namespace

std::vector<std::uint32_t> RunCandidate(const CandidateSpec& spec, const MatmulOperands& original,
                                        const OutputGrid& grid, int threads) {
  const MatmulOperands bugged = spec.bug == Bug::kNone ? MatmulOperands{} : BuggedOperands(original, spec.bug, spec.tile);
  const MatmulOperands& o = spec.bug == Bug::kNone ? original : bugged;
  const long cols = static_cast<long>(grid.columns.size());
  std::vector<std::uint32_t> out(grid.Size());
  if (spec.accumulation == Accumulation::kTensorCore) {
    const std::vector<float> acc = TensorCoreAccumulators(spec, o, grid, threads);
    for (std::size_t r = 0; r < grid.rows.size(); ++r) {
      for (long q = 0; q < cols; ++q) {
        const std::size_t t = r * static_cast<std::size_t>(cols) + static_cast<std::size_t>(q);
        out[t] = ApplyEpilogue(spec, o, grid.rows[r], grid.columns[static_cast<std::size_t>(q)], acc[t]);
      }
    }
    return out;
  }
  ParallelFor(static_cast<long>(grid.rows.size()), threads, [&](long first, long last) {
    for (long r = first; r < last; ++r) {
      const long i = grid.rows[static_cast<std::size_t>(r)];
      for (long q = 0; q < cols; ++q) {
        const long j = grid.columns[static_cast<std::size_t>(q)];
        const std::size_t t = static_cast<std::size_t>(r * cols + q);
        out[t] = spec.accumulation == Accumulation::kExact ? ExactOutput(o, i, j)
                                                           : ApplyEpilogue(spec, o, i, j, Fp32Accumulator(spec, o, i, j));
      }
    }
  });
  return out;
}

std::vector<CandidateSpec> MatmulCandidateList(const MatmulOperands& o) {
  std::vector<CandidateSpec> list;
  const bool scaled = o.HasOuterScales();
  // The epilogues a candidate is tried with: one when there is no outer
  // scale; with scales, one after another, combined, and (for a 16-bit D)
  // after the conversion.
  std::vector<std::pair<Epilogue, std::string>> epilogues;
  if (!scaled) {
    epilogues.push_back({Epilogue::kSequential, ""});
  } else {
    epilogues.push_back({Epilogue::kSequential, ", scales one after another"});
    if (!o.row_scales.empty() && !o.column_scales.empty()) {
      epilogues.push_back({Epilogue::kColumnFirst, ", column scale before row scale"});
    }
    epilogues.push_back({Epilogue::kCombined, ", one combined scale"});
    if (o.d_type != FormatId::kFp32) epilogues.push_back({Epilogue::kAfterConversion, ", scale after the conversion"});
  }
  const auto add = [&](CandidateSpec c, bool with_epilogues = true) {
    if (!with_epilogues) {
      list.push_back(std::move(c));
      return;
    }
    for (const auto& [epilogue, suffix] : epilogues) {
      CandidateSpec e = c;
      e.epilogue = epilogue;
      e.name += suffix;
      list.push_back(std::move(e));
    }
  };

  CandidateSpec exact;
  exact.accumulation = Accumulation::kExact;
  exact.name = "exact product rounded once";
  exact.kind = "exact";
  exact.detail = "the exact sum of the products, rounded once to D's type (an INT32 or wider accumulator)";
  add(exact, false);

  CandidateSpec fma;
  fma.accumulation = Accumulation::kFmaKOrder;
  fma.name = "fp32 fma, K order";
  fma.kind = "fp32 order";
  fma.detail = "acc = fmaf(a[k], b[k], acc) for k = 0, 1, ... from +0";
  add(fma);
  if (!o.c.empty() && !scaled) {
    CandidateSpec from_c = fma;
    from_c.c_first = true;
    from_c.name = "fp32 fma from C, K order";
    from_c.detail = "acc = fmaf(a[k], b[k], acc) for k = 0, 1, ... starting from C";
    add(from_c);
  }
  if (scaled) {
    CandidateSpec into = fma;
    into.epilogue = Epilogue::kIntoOperands;
    into.name = "fp32 fma, K order, scales on the operands";
    into.detail = "each element times its tensor and row / column scale in FP32 first, then fmaf in K order";
    add(into, false);
  }
  CandidateSpec tree;
  tree.accumulation = Accumulation::kPairwise;
  tree.name = "fp32 pairwise tree of products";
  tree.kind = "fp32 order";
  tree.detail = "products rounded to FP32, then summed pairwise level by level";
  add(tree);
  for (int block : {16, 32, 64, 128, 256}) {
    if (block >= o.k) break;
    CandidateSpec b;
    b.accumulation = Accumulation::kBlocks;
    b.block = block;
    b.name = "fp32 fma in blocks of " + std::to_string(block);
    b.kind = "fp32 order";
    b.detail = "fmaf in K order within each block of " + std::to_string(block) + " from +0, block sums added in order";
    add(b);
  }
  const bool block_scaled = o.a_block != 0 || o.w_block != 0;
  const bool one_block = !(o.a_block != 0 && o.w_block != 0 && o.a_block != o.w_block);
  if (block_scaled && one_block) {
    for (int lanes : {1, 32}) {
      CandidateSpec b;
      b.accumulation = Accumulation::kScaleBlocks;
      b.block = lanes;
      b.name = lanes == 1 ? "fp32 scale blocks, one accumulator" : "fp32 scale blocks, 32 lanes and a tree";
      b.kind = "fp32 order";
      b.detail = "per scale block an fmaf sum of the element values, then acc = fmaf(partial, block scale, acc)" +
                 std::string(lanes == 1 ? "" : " on 32 lanes summed by a tree (gemv_order.h)");
      add(b);
    }
  }

  // Tensor-core schedules: the instructions that take these operand formats.
  std::vector<CandidateSpec> tensor_core;
  if (!block_scaled && o.a_element == o.w_element && (o.a_element == FormatId::kBf16 || o.a_element == FormatId::kFp16 ||
                                                      o.a_element == FormatId::kFp32)) {
    std::vector<std::string> names;
    if (o.a_element == FormatId::kBf16) names = {"mma.m16n8k16.f32.bf16.bf16"};
    if (o.a_element == FormatId::kFp16) {
      names = {"mma.m16n8k16.f32.f16.f16"};
      if (o.d_type == FormatId::kFp16) names.push_back("mma.m16n8k16.f16.f16.f16");
    }
    if (o.a_element == FormatId::kFp32) names = {"mma.m16n8k8.f32.tf32.tf32"};
    for (const std::string& name : names) {
      CandidateSpec c;
      c.accumulation = Accumulation::kTensorCore;
      if (!FindInstruction(name, &c.schedule.instruction)) continue;
      c.name = name;
      c.kind = "tensor core";
      c.detail = "the model's chain of " + name + " along K (wgmma of the same k takes the same arithmetic)";
      tensor_core.push_back(c);
    }
  }
  const auto fp8 = [](FormatId f) { return f == FormatId::kE4m3 || f == FormatId::kE5m2; };
  if (!block_scaled && fp8(o.a_element) && fp8(o.w_element)) {
    const std::string pair = std::string(ElementName(o.a_element)) + "." + ElementName(o.w_element);
    for (const char* acc : {"f32", "f16"}) {
      if (std::string(acc) == "f16" && o.d_type != FormatId::kFp16) continue;
      const std::string wgmma = std::string("wgmma.m64nNk32.") + acc + "." + pair;
      for (int promotion : {0, 128, 256, 512}) {
        if (promotion != 0 && (std::string(acc) == "f16" || promotion >= o.k)) continue;
        CandidateSpec c;
        c.accumulation = Accumulation::kTensorCore;
        if (!FindInstruction(wgmma, &c.schedule.instruction)) continue;
        c.schedule.promotion_interval = promotion;
        c.name = wgmma + (promotion == 0 ? ", no promotion" : ", promotion every " + std::to_string(promotion));
        c.kind = "tensor core";
        c.detail = promotion == 0 ? "one wgmma chain over K (13-bit aligned sums, truncated)"
                                  : "wgmma chains of " + std::to_string(promotion) +
                                        " of K, each added into an FP32 accumulator (DeepSeek-V3 3.3.2)";
        tensor_core.push_back(c);
      }
      const std::string mma = std::string("mma.m16n8k32.") + acc + "." + pair;
      CandidateSpec c;
      c.accumulation = Accumulation::kTensorCore;
      c.name = mma;
      c.kind = "tensor core";
      c.detail = "mma.sync FP8 as sm_90 runs it: operands widened to FP16, two FP16 MMAs of k = 16";
      if (FindInstruction(mma, &c.schedule.instruction)) tensor_core.push_back(c);
    }
  }
  for (const CandidateSpec& c : tensor_core) {
    if (matmul::ScheduleProblem(c.schedule, o.k) == nullptr) add(c);
  }
  // Split-K: tensor-core schedules, then the FP32 K order.
  for (int split = 2; split <= 16; ++split) {
    for (bool tree_parts : {false, true}) {
      for (const CandidateSpec& base : tensor_core) {
        CandidateSpec c = base;
        c.schedule.split_k = split;
        c.schedule.split_reduction = tree_parts ? SplitReduction::kPairwiseTree : SplitReduction::kInOrder;
        c.name += SplitName(split, tree_parts);
        c.detail += "; K cut into " + std::to_string(split) + " parts of whole instructions, added in FP32 " +
                    (tree_parts ? "as a pairwise tree" : "in order");
        if (matmul::ScheduleProblem(c.schedule, o.k) == nullptr) add(c);
      }
      CandidateSpec c = fma;
      c.split = split;
      c.split_tree = tree_parts;
      c.name += SplitName(split, tree_parts);
      c.detail = "K cut into " + std::to_string(split) + " parts of ceil(K / " + std::to_string(split) +
                 ") elements, each fmaf in K order from +0, the parts added in FP32 " +
                 (tree_parts ? "as a pairwise tree" : "in order");
      if (split <= o.k) add(c);
    }
  }

  // Bugs, each under the exact sum, the FP32 K order and the first
  // tensor-core schedules.
  std::vector<CandidateSpec> bases = {exact, fma};
  for (std::size_t t = 0; t < tensor_core.size() && t < 2; ++t) bases.push_back(tensor_core[t]);
  const auto add_bug = [&](Bug bug, int tile, const std::string& what, const std::string& detail) {
    for (const CandidateSpec& base : bases) {
      CandidateSpec c = base;
      c.bug = bug;
      c.tile = tile;
      c.kind = "bug";
      c.name = what + ", " + base.name;
      c.detail = detail;
      if (c.accumulation == Accumulation::kTensorCore && matmul::ScheduleProblem(c.schedule, o.k) != nullptr) continue;
      add(c, c.accumulation != Accumulation::kExact);
    }
  };
  for (int tile : {16, 32, 64, 128, 256}) {
    if (o.k > tile && o.k % tile != 0 && (o.a_block == 0 || tile % o.a_block == 0) &&
        (o.w_block == 0 || tile % o.w_block == 0)) {
      add_bug(Bug::kDroppedTail, tile, "K tail dropped after " + std::to_string(o.k - o.k % tile) + " (tile " + std::to_string(tile) + ")",
              "the last " + std::to_string(o.k % tile) + " elements of K (after the last whole tile of " +
                  std::to_string(tile) + ") left out");
    }
  }
  if (o.k == o.n && o.k > 1) {
    add_bug(Bug::kTransposedB, 0, "B read transposed", "B's elements read as B^T (the kernel took K x N for N x K)");
  }
  if (o.w_block != 0) {
    const long blocks = (o.k + o.w_block - 1) / o.w_block;
    if (blocks > 1 && o.n > 1) {
      bases = {exact, fma};
      for (const CandidateSpec& b : list) {
        if (b.accumulation == Accumulation::kScaleBlocks && b.bug == Bug::kNone && b.epilogue == epilogues[0].first) {
          bases.push_back(b);
          break;
        }
      }
      add_bug(Bug::kTransposedScales, 0, "B's block scales read transposed",
              "B's block scale of (n, block kb) read from [kb][n] instead of [n][kb]");
    }
  }
  return list;
}

bool SameOutput(FormatId type, std::uint32_t a, std::uint32_t b) {
  if (a == b) return true;
  const FormatSpec& s = Spec(type);
  return std::isnan(DecodeToF64(s, a)) && std::isnan(DecodeToF64(s, b));
}

std::uint64_t UlpDistance(FormatId type, std::uint32_t a, std::uint32_t b) {
  if (SameOutput(type, a, b)) return 0;
  const FormatSpec& s = Spec(type);
  if (std::isnan(DecodeToF64(s, a)) || std::isnan(DecodeToF64(s, b))) return UINT64_MAX;
  const int bits = s.total_bits;
  const std::uint32_t sign = std::uint32_t{1} << (bits - 1);
  const auto key = [&](std::uint32_t c) {
    const std::int64_t magnitude = static_cast<std::int64_t>(c & (sign - 1));
    return (c & sign) != 0 ? -magnitude : magnitude;
  };
  const std::int64_t d = key(a) - key(b);
  return static_cast<std::uint64_t>(d < 0 ? -d : d);
}

}  // namespace lowbit::check::internal
