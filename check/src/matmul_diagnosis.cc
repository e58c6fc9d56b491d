// A user's matrix product against the accumulation candidates
// (lowbit/check/matmul_diagnosis.h): read the buffers, compare D with the
// exact product rounded once, run the candidates (matmul_candidates.h) on a
// sample or on the whole product, and render the report.
#include "lowbit/check/matmul_diagnosis.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

#include "lowbit/formats/convert.h"
#include "lowbit/formats/recipe/steps.h"
#include "lowbit/formats/recipe/tensor.h"
#include "lowbit/formats/user_word.h"
#include "matmul_candidates.h"

namespace lowbit::check {
namespace {

using internal::CandidateSpec;
using internal::MatmulOperands;
using internal::OutputGrid;

struct OperandFormat {
  const char* name;
  FormatId element;
  int block;         // 0: no block scales
  FormatId scale;    // the block scale's format
};

constexpr OperandFormat kOperandFormats[] = {
    {"bf16", FormatId::kBf16, 0, FormatId::kFp32},   {"fp16", FormatId::kFp16, 0, FormatId::kFp32},
    {"fp32", FormatId::kFp32, 0, FormatId::kFp32},   {"e4m3", FormatId::kE4m3, 0, FormatId::kFp32},
    {"e5m2", FormatId::kE5m2, 0, FormatId::kFp32},   {"int8", FormatId::kInt8, 0, FormatId::kFp32},
    {"nvfp4", FormatId::kE2m1, 16, FormatId::kUe4m3}, {"mxfp4", FormatId::kE2m1, 32, FormatId::kE8m0},
    {"mxfp8", FormatId::kE4m3, 32, FormatId::kE8m0},
};

const OperandFormat* FindOperandFormat(const std::string& name) {
  for (const OperandFormat& f : kOperandFormats) {
    if (name == f.name) return &f;
  }
  return nullptr;
}

std::string OperandFormatList() {
  std::string out;
  for (const OperandFormat& f : kOperandFormats) out += (out.empty() ? "" : ", ") + std::string(f.name);
  return out;
}

bool IsOutputType(FormatId t) { return t == FormatId::kFp32 || t == FormatId::kBf16 || t == FormatId::kFp16; }

std::uint64_t LoadUnsigned(const void* data, std::size_t index, int bytes) {
  const auto* p = static_cast<const unsigned char*>(data) + index * static_cast<std::size_t>(bytes);
  std::uint64_t v = 0;
  if (bytes == 1) return *p;
  if (bytes == 2) {
    std::uint16_t x;
    std::memcpy(&x, p, 2);
    return x;
  }
  if (bytes == 4) {
    std::uint32_t x;
    std::memcpy(&x, p, 4);
    return x;
  }
  std::memcpy(&v, p, 8);
  return v;
}

std::uint64_t CodeAt(const CodeBuffer& b, std::size_t i) {
  if (b.packing != recipe::Packing::kOnePerByte) {
    return recipe::LoadCode(b.packing, static_cast<const std::uint8_t*>(b.data), static_cast<long>(i));
  }
  return LoadUnsigned(b.data, i, b.code_bytes);
}

std::string Times(long a, long b) { return std::to_string(a) + " x " + std::to_string(b); }

std::string OperandProblem(const char* what, const MatmulOperand& op, long rows, long cols, const char* dims) {
  const OperandFormat* f = FindOperandFormat(op.format);
  if (op.format.empty()) return std::string(what) + ": the format is empty (" + OperandFormatList() + ")";
  if (f == nullptr) return std::string(what) + ": unknown format " + QuoteUserWord(op.format) + " (" + OperandFormatList() + ")";
  const std::size_t want = static_cast<std::size_t>(rows) * static_cast<std::size_t>(cols);
  if (op.codes.count != want) {
    return std::string(what) + " holds " + std::to_string(op.codes.count) + " codes, " + dims + " = " +
           Times(rows, cols) + " needs " + std::to_string(want);
  }
  if (op.codes.data == nullptr) return std::string(what) + ": no data";
  const FormatSpec& spec = Spec(f->element);
  if (op.codes.packing != recipe::Packing::kOnePerByte) {
    if (spec.total_bits > 4) return std::string(what) + ": two codes per byte hold 4-bit codes, " + op.format + " has " + std::to_string(spec.total_bits);
  } else if (op.codes.code_bytes != 1 && op.codes.code_bytes != 2 && op.codes.code_bytes != 4 && op.codes.code_bytes != 8) {
    return std::string(what) + ": " + std::to_string(op.codes.code_bytes) + " bytes per code (1, 2, 4 or 8)";
  } else if (op.codes.code_bytes * 8 < spec.total_bits) {
    return std::string(what) + ": " + std::to_string(op.codes.code_bytes) + "-byte items cannot hold " + op.format +
           "'s " + std::to_string(spec.total_bits) + "-bit codes";
  }
  return "";
}

std::string ScalesProblem(const char* what, const MatmulOperand& op, long rows, long k, const char* rows_name) {
  const OperandFormat* f = FindOperandFormat(op.format);
  if (f->block == 0) {
    if (op.block_scale_count > 0) return std::string(what) + ": block scales given, but " + op.format + " has none";
    return "";
  }
  const long blocks = (k + f->block - 1) / f->block;
  const std::size_t want = static_cast<std::size_t>(rows) * static_cast<std::size_t>(blocks);
  if (op.block_scale_count != want || op.block_scales == nullptr) {
    return std::string(what) + "'s block scales: " + std::to_string(op.block_scale_count) + " given, " + op.format +
           " needs " + rows_name + " x ceil(K / " + std::to_string(f->block) + ") = " + Times(rows, blocks) + " = " +
           std::to_string(want);
  }
  return "";
}

void AppendJsonString(std::string* out, const std::string& s) {
  static constexpr char kHex[] = "0123456789abcdef";
  *out += '"';
  for (const char ch : s) {
    const auto c = static_cast<unsigned char>(ch);
    if (c == '"' || c == '\\') {
      *out += '\\';
      *out += ch;
    } else if (c < 0x20) {
      *out += "\\u00";
      *out += kHex[c >> 4];
      *out += kHex[c & 0xF];
    } else {
      *out += ch;
    }
  }
  *out += '"';
}

std::string Hex(std::uint32_t code, FormatId type) {
  char buffer[16];
  std::snprintf(buffer, sizeof buffer, type == FormatId::kFp32 ? "0x%08x" : "0x%04x", code);
  return buffer;
}

std::string Number(double v) {
  char buffer[40];
  std::snprintf(buffer, sizeof buffer, "%.9g", v);
  return buffer;
}

std::string JsonNumber(double v) {
  if (std::isnan(v) || std::isinf(v)) {
    return std::isnan(v) ? "\"nan\"" : (v > 0 ? "\"inf\"" : "\"-inf\"");
  }
  return Number(v);
}

std::vector<long> Spread(long count, long want) {
  std::vector<long> out;
  if (count <= want) {
    for (long i = 0; i < count; ++i) out.push_back(i);
    return out;
  }
  for (long t = 0; t < want; ++t) out.push_back(t * (count - 1) / (want - 1));
  out.erase(std::unique(out.begin(), out.end()), out.end());
  return out;
}

OutputGrid WholeGrid(long m, long n) {
  OutputGrid g;
  g.rows = Spread(m, m);
  g.columns = Spread(n, n);
  return g;
}

// The sample a large product's candidates run on first: 16 rows and 16
// columns spread evenly over D (the first and the last included).
constexpr long kSampleSide = 16;

void Compare(const std::vector<std::uint32_t>& codes, const std::vector<std::uint32_t>& d, long n, const OutputGrid& g,
             FormatId type, MatmulCandidate* c) {
  c->checked = g.Size();
  c->matched = 0;
  c->max_ulps = 0;
  c->first_row = c->first_column = -1;
  const std::size_t cols = g.columns.size();
  for (std::size_t r = 0; r < g.rows.size(); ++r) {
    for (std::size_t q = 0; q < cols; ++q) {
      const std::uint32_t mine = codes[r * cols + q];
      const std::uint32_t theirs = d[static_cast<std::size_t>(g.rows[r] * n + g.columns[q])];
      if (internal::SameOutput(type, mine, theirs)) {
        ++c->matched;
        continue;
      }
      c->max_ulps = std::max(c->max_ulps, internal::UlpDistance(type, mine, theirs));
      if (c->first_row < 0) {
        c->first_row = g.rows[r];
        c->first_column = g.columns[q];
        c->candidate_code = mine;
        c->actual_code = theirs;
      }
    }
  }
}

// Whole-product matches first, then sample matches, then the fewest
// mismatches (as a fraction of what was checked), then the smallest max ulps;
// ties keep the list's order (simplest first).
bool Better(const MatmulCandidate& a, const MatmulCandidate& b) {
  const auto rank = [](const MatmulCandidate& c) { return c.FullMatch() ? (c.whole_product ? 0 : 1) : 2; };
  if (rank(a) != rank(b)) return rank(a) < rank(b);
  const double fa = 1.0 - static_cast<double>(a.matched) / static_cast<double>(std::max<std::uint64_t>(a.checked, 1));
  const double fb = 1.0 - static_cast<double>(b.matched) / static_cast<double>(std::max<std::uint64_t>(b.checked, 1));
  if (fa != fb) return fa < fb;
  return a.max_ulps < b.max_ulps;
}

const char* TypeName(FormatId t) { return Spec(t).name; }

std::string UlpText(std::uint64_t ulps) { return ulps == UINT64_MAX ? "NaN vs number" : std::to_string(ulps) + " ulp" + (ulps == 1 ? "" : "s"); }

}  // namespace

std::string MatmulInputsProblem(const MatmulInputs& in) {
  if (in.m < 1 || in.n < 1 || in.k < 1) {
    return "M, N and K must each be at least 1 (M=" + std::to_string(in.m) + " N=" + std::to_string(in.n) +
           " K=" + std::to_string(in.k) + ")";
  }
  std::string p = OperandProblem("A", in.a, in.m, in.k, "M x K");
  if (p.empty()) p = OperandProblem("B", in.b, in.k, in.n, in.b_transposed ? "N x K" : "K x N");
  if (p.empty()) p = ScalesProblem("A", in.a, in.m, in.k, "M");
  if (p.empty()) p = ScalesProblem("B", in.b, in.n, in.k, "N");
  if (!p.empty()) return p;
  if (!in.row_scales.empty() && in.row_scales.size() != static_cast<std::size_t>(in.m)) {
    return "row scales: " + std::to_string(in.row_scales.size()) + " given, one per row of A needs M = " + std::to_string(in.m);
  }
  if (!in.column_scales.empty() && in.column_scales.size() != static_cast<std::size_t>(in.n)) {
    return "column scales: " + std::to_string(in.column_scales.size()) + " given, one per column of B needs N = " +
           std::to_string(in.n);
  }
  const std::size_t mn = static_cast<std::size_t>(in.m) * static_cast<std::size_t>(in.n);
  if (in.c_count > 0 || in.c != nullptr) {
    if (!IsOutputType(in.c_type)) return std::string("C: type ") + TypeName(in.c_type) + " is not fp32, bf16 or fp16";
    if (in.c_count != mn || in.c == nullptr) {
      return "C holds " + std::to_string(in.c_count) + " values, M x N = " + Times(in.m, in.n) + " needs " + std::to_string(mn);
    }
  }
  if (!IsOutputType(in.d_type)) return std::string("the output D: type ") + TypeName(in.d_type) + " is not fp32, bf16 or fp16";
  if (in.d_count != mn || in.d == nullptr) {
    return "the output D holds " + std::to_string(in.d_count) + " values, M x N = " + Times(in.m, in.n) + " needs " +
           std::to_string(mn);
  }
  return "";
}

MatmulReport CheckMatmul(const MatmulInputs& in, const MatmulCheckOptions& options) {
  MatmulReport report;
  report.error = MatmulInputsProblem(in);
  if (!report.error.empty()) return report;
  const OperandFormat& fa = *FindOperandFormat(in.a.format);
  const OperandFormat& fb = *FindOperandFormat(in.b.format);
  report.problem = "M=" + std::to_string(in.m) + " N=" + std::to_string(in.n) + " K=" + std::to_string(in.k) + ", a " +
                   in.a.format + ", b " + in.b.format + (in.b_transposed ? " (N x K)" : "") + ", d " +
                   TypeName(in.d_type);
  report.output_type = in.d_type;

  MatmulOperands o;
  o.m = in.m;
  o.n = in.n;
  o.k = in.k;
  o.a_element = fa.element;
  o.w_element = fb.element;
  o.d_type = in.d_type;
  const auto value_of = [](FormatId f, std::uint32_t code) {
    if (f == FormatId::kInt8) return static_cast<float>(recipe::IntegerOfCode(kInt8, static_cast<std::uint8_t>(code)));
    return static_cast<float>(DecodeToF64(Spec(f), code));
  };
  const std::size_t mk = static_cast<std::size_t>(in.m * in.k), nk = static_cast<std::size_t>(in.n * in.k);
  o.a_codes.resize(mk);
  o.a_values.resize(mk);
  o.w_codes.resize(nk);
  o.w_values.resize(nk);
  const std::uint64_t a_limit = Spec(fa.element).total_bits >= 64 ? ~0ull : (1ull << Spec(fa.element).total_bits);
  const std::uint64_t b_limit = Spec(fb.element).total_bits >= 64 ? ~0ull : (1ull << Spec(fb.element).total_bits);
  for (std::size_t t = 0; t < mk; ++t) {
    const std::uint64_t code = CodeAt(in.a.codes, t);
    if (code >= a_limit) {
      report.error = "A[" + std::to_string(t / static_cast<std::size_t>(in.k)) + "][" +
                     std::to_string(t % static_cast<std::size_t>(in.k)) + "]: code has bits above " + in.a.format +
                     "'s " + std::to_string(Spec(fa.element).total_bits);
      return report;
    }
    o.a_codes[t] = static_cast<std::uint32_t>(code);
    o.a_values[t] = value_of(fa.element, o.a_codes[t]);
  }
  for (long j = 0; j < in.n; ++j) {
    for (long k = 0; k < in.k; ++k) {
      const std::size_t from = static_cast<std::size_t>(in.b_transposed ? j * in.k + k : k * in.n + j);
      const std::uint64_t code = CodeAt(in.b.codes, from);
      if (code >= b_limit) {
        report.error = "B[" + std::to_string(in.b_transposed ? j : k) + "][" + std::to_string(in.b_transposed ? k : j) +
                       "]: code has bits above " + in.b.format + "'s " + std::to_string(Spec(fb.element).total_bits);
        return report;
      }
      const std::size_t to = static_cast<std::size_t>(j * in.k + k);
      o.w_codes[to] = static_cast<std::uint32_t>(code);
      o.w_values[to] = value_of(fb.element, o.w_codes[to]);
    }
  }
  o.a_block = fa.block;
  o.w_block = fb.block;
  for (std::size_t t = 0; t < in.a.block_scale_count && fa.block != 0; ++t) {
    o.a_block_scales.push_back(static_cast<float>(DecodeToF64(Spec(fa.scale), in.a.block_scales[t])));
  }
  for (std::size_t t = 0; t < in.b.block_scale_count && fb.block != 0; ++t) {
    o.w_block_scales.push_back(static_cast<float>(DecodeToF64(Spec(fb.scale), in.b.block_scales[t])));
  }
  o.has_a_tensor = in.a.tensor_scale.has_value();
  o.has_b_tensor = in.b.tensor_scale.has_value();
  o.a_tensor = in.a.tensor_scale.value_or(1.0f);
  o.b_tensor = in.b.tensor_scale.value_or(1.0f);
  o.has_alpha = o.has_a_tensor || o.has_b_tensor;
  o.alpha = o.a_tensor * o.b_tensor;
  o.row_scales = in.row_scales;
  o.column_scales = in.column_scales;
  const std::size_t mn = static_cast<std::size_t>(in.m * in.n);
  if (in.c_count > 0) {
    const int bytes = Spec(in.c_type).total_bits / 8;
    o.c.resize(mn);
    for (std::size_t t = 0; t < mn; ++t) {
      o.c[t] = static_cast<float>(DecodeToF64(Spec(in.c_type), LoadUnsigned(in.c, t, bytes)));
    }
  }
  std::vector<std::uint32_t> d(mn);
  const int d_bytes = Spec(in.d_type).total_bits / 8;
  for (std::size_t t = 0; t < mn; ++t) d[t] = static_cast<std::uint32_t>(LoadUnsigned(in.d, t, d_bytes));

  const int threads = options.threads > 0 ? options.threads
                                          : std::max(1, static_cast<int>(std::thread::hardware_concurrency()));
  const std::uint64_t macs = static_cast<std::uint64_t>(in.m) * static_cast<std::uint64_t>(in.n) *
                             static_cast<std::uint64_t>(in.k);
  const OutputGrid whole = WholeGrid(in.m, in.n);
  OutputGrid sample;
  sample.rows = Spread(in.m, kSampleSide);
  sample.columns = Spread(in.n, kSampleSide);
  const bool small = macs <= options.small_product;
  const bool can_run_whole = macs <= options.full_budget;

  // D against the exact product rounded once: on the whole product when the
  // budget allows, else on the sample.
  std::vector<CandidateSpec> list = internal::MatmulCandidateList(o);
  if (!options.diagnose) list.resize(1);  // the exact product only
  const OutputGrid& reference_grid = can_run_whole ? whole : sample;
  const std::vector<std::uint32_t> exact = internal::RunCandidate(list[0], o, reference_grid, threads);
  {
    const std::size_t cols = reference_grid.columns.size();
    static const char* kRanges[] = {"0", "1", "2", "3-4", "5-8", "9-16", "17-64", "65-1024", "1025-65536", "> 65536", "NaN vs number"};
    report.ulp_distribution.clear();
    for (const char* r : kRanges) report.ulp_distribution.push_back({r, 0});
    for (std::size_t r = 0; r < reference_grid.rows.size(); ++r) {
      for (std::size_t q = 0; q < cols; ++q) {
        const long i = reference_grid.rows[r], j = reference_grid.columns[q];
        const std::uint32_t e = exact[r * cols + q], actual = d[static_cast<std::size_t>(i * in.n + j)];
        const std::uint64_t u = internal::UlpDistance(in.d_type, e, actual);
        const int bucket = u == UINT64_MAX ? 10 : u == 0 ? 0 : u == 1 ? 1 : u == 2 ? 2 : u <= 4 ? 3 : u <= 8 ? 4 : u <= 16 ? 5 : u <= 64 ? 6 : u <= 1024 ? 7 : u <= 65536 ? 8 : 9;
        ++report.ulp_distribution[static_cast<std::size_t>(bucket)].count;
        ++report.checked;
        if (u == 0) continue;
        ++report.mismatches;
        if (report.first_mismatches.size() < options.max_mismatches) {
          MatmulMismatch mm;
          mm.row = i;
          mm.column = j;
          mm.expected = e;
          mm.actual = actual;
          mm.expected_value = DecodeToF64(Spec(in.d_type), e);
          mm.actual_value = DecodeToF64(Spec(in.d_type), actual);
          mm.ulps = u;
          report.first_mismatches.push_back(mm);
        }
      }
    }
  }

  // The candidates: all on the whole product when it is small; otherwise on
  // the sample, and those that match it (at most kRerun), or the closest one,
  // again on the whole product.
  std::vector<MatmulCandidate> results(list.size());
  const OutputGrid& first_grid = small ? whole : sample;
  for (std::size_t c = 0; c < list.size(); ++c) {
    MatmulCandidate& r = results[c];
    r.name = list[c].name;
    r.kind = list[c].kind;
    r.detail = list[c].detail;
    const bool reuse = c == 0 && &first_grid == &reference_grid;
    const std::vector<std::uint32_t> codes = reuse ? exact : internal::RunCandidate(list[c], o, first_grid, threads);
    Compare(codes, d, in.n, first_grid, in.d_type, &r);
    r.whole_product = small;
  }
  report.candidates_tried = list.size();
  if (!small) {
    report.sample_outputs = sample.Size();
    if (can_run_whole) {
      constexpr std::size_t kRerun = 8;
      std::vector<std::size_t> order(list.size());
      for (std::size_t c = 0; c < order.size(); ++c) order[c] = c;
      std::stable_sort(order.begin(), order.end(), [&](std::size_t x, std::size_t y) { return Better(results[x], results[y]); });
      std::size_t rerun = 0;
      for (std::size_t idx : order) {
        const bool matched_sample = results[idx].FullMatch();
        if (rerun >= kRerun || (!matched_sample && rerun > 0)) break;
        const std::vector<std::uint32_t> codes =
            idx == 0 ? exact : internal::RunCandidate(list[idx], o, whole, threads);
        Compare(codes, d, in.n, whole, in.d_type, &results[idx]);
        results[idx].whole_product = true;
        ++rerun;
        if (!matched_sample) break;
      }
    }
  }
  std::stable_sort(results.begin(), results.end(), Better);
  report.candidates = std::move(results);

  const MatmulCandidate& best = report.candidates.front();
  const std::string where = best.whole_product ? "all " + std::to_string(best.checked) + " outputs"
                                               : "the " + std::to_string(best.checked) + " sampled outputs";
  if (best.FullMatch()) {
    report.summary = "matches " + best.name + " on " + where;
    std::size_t others = 0;
    for (std::size_t c = 1; c < report.candidates.size() && report.candidates[c].FullMatch(); ++c) ++others;
    if (others > 0) {
      report.summary += " (and " + std::to_string(others) + " other candidate" + (others == 1 ? "" : "s") +
                        " give the same bits)";
    }
  } else {
    report.summary = "matches no candidate (closest: " + best.name + ", " + std::to_string(best.checked - best.matched) +
                     " of " + std::to_string(best.checked) + " outputs differ, at most " + UlpText(best.max_ulps) + ")";
  }
  return report;
}

std::string MatmulReportText(const MatmulReport& r) {
  if (!r.error.empty()) return "error: " + r.error + "\n";
  std::string out = "gemm " + r.problem + "\n";
  const MatmulCandidate* match = r.Match();
  if (match != nullptr) {
    out += (r.Passed() ? "MATCH: " : "MATCH on the sample only: ") + match->name + " gives every output bit (" +
           std::to_string(match->checked) + (match->whole_product ? " outputs)\n" : " sampled outputs)\n");
  } else {
    out += "NO MATCH: " + r.summary + "\n";
  }
  const FormatId type = r.output_type;
  out += "against the exact product rounded once: " + std::to_string(r.mismatches) + " of " + std::to_string(r.checked) +
         " outputs differ" + (r.sample_outputs > 0 && r.checked == r.sample_outputs ? " (on the sample)" : "") + "\n";
  for (const MatmulMismatch& m : r.first_mismatches) {
    out += "  d[" + std::to_string(m.row) + "][" + std::to_string(m.column) + "]: exact " + Hex(m.expected, type) +
           " (" + Number(m.expected_value) + "), kernel " + Hex(m.actual, type) + " (" + Number(m.actual_value) + "), " +
           UlpText(m.ulps) + "\n";
  }
  if (r.checked > 0) {
    out += "  ulps from exact:";
    for (const UlpBucket& b : r.ulp_distribution) {
      if (b.count > 0) out += " " + b.range + ": " + std::to_string(b.count) + ";";
    }
    out.back() = '\n';
  }
  out += "diagnosis: " + std::to_string(r.candidates_tried) + " candidates" +
         (r.sample_outputs > 0 ? " on a sample of " + std::to_string(r.sample_outputs) + " outputs, the best again on all"
                               : " on every output") +
         "\n";
  std::size_t shown = 0;
  for (const MatmulCandidate& c : r.candidates) {
    if (shown >= 6 && !c.FullMatch()) break;
    if (shown >= 12) break;
    ++shown;
    out += std::string(c.FullMatch() ? "  MATCH " : "  ") + c.name + ": " + std::to_string(c.matched) + " of " +
           std::to_string(c.checked) + (c.whole_product ? "" : " sampled") + " outputs";
    if (!c.FullMatch()) {
      out += ", at most " + UlpText(c.max_ulps) + ", first at d[" + std::to_string(c.first_row) + "][" +
             std::to_string(c.first_column) + "] (candidate " + Hex(c.candidate_code, type) + ", kernel " +
             Hex(c.actual_code, type) + ")";
    }
    out += "\n";
  }
  return out;
}

std::string MatmulReportJson(const MatmulReport& r) {
  std::string o = "{\"error\": ";
  AppendJsonString(&o, r.error);
  o += ", \"problem\": ";
  AppendJsonString(&o, r.problem);
  o += ", \"passed\": " + std::string(r.Passed() ? "true" : "false");
  o += ", \"match\": ";
  if (r.Match() != nullptr) {
    AppendJsonString(&o, r.Match()->name);
  } else {
    o += "null";
  }
  o += ", \"summary\": ";
  AppendJsonString(&o, r.summary);
  o += ", \"checked\": " + std::to_string(r.checked) + ", \"mismatches\": " + std::to_string(r.mismatches);
  o += ", \"sample_outputs\": " + std::to_string(r.sample_outputs) +
       ", \"candidates_tried\": " + std::to_string(r.candidates_tried);
  o += ", \"first_mismatches\": [";
  for (std::size_t t = 0; t < r.first_mismatches.size(); ++t) {
    const MatmulMismatch& m = r.first_mismatches[t];
    o += std::string(t ? ", " : "") + "{\"row\": " + std::to_string(m.row) + ", \"column\": " + std::to_string(m.column) +
         ", \"expected\": " + std::to_string(m.expected) + ", \"actual\": " + std::to_string(m.actual) +
         ", \"expected_value\": " + JsonNumber(m.expected_value) + ", \"actual_value\": " + JsonNumber(m.actual_value) +
         ", \"ulps\": " + (m.ulps == UINT64_MAX ? std::string("null") : std::to_string(m.ulps)) + "}";
  }
  o += "], \"ulp_distribution\": {";
  for (std::size_t t = 0; t < r.ulp_distribution.size(); ++t) {
    o += t ? ", " : "";
    AppendJsonString(&o, r.ulp_distribution[t].range);
    o += ": " + std::to_string(r.ulp_distribution[t].count);
  }
  o += "}, \"candidates\": [";
  for (std::size_t t = 0; t < r.candidates.size(); ++t) {
    const MatmulCandidate& c = r.candidates[t];
    o += t ? ", {\"name\": " : "{\"name\": ";
    AppendJsonString(&o, c.name);
    o += ", \"kind\": ";
    AppendJsonString(&o, c.kind);
    o += ", \"detail\": ";
    AppendJsonString(&o, c.detail);
    o += ", \"checked\": " + std::to_string(c.checked) + ", \"matched\": " + std::to_string(c.matched) +
         ", \"max_ulps\": " + (c.max_ulps == UINT64_MAX ? std::string("null") : std::to_string(c.max_ulps)) +
         ", \"whole_product\": " + (c.whole_product ? "true" : "false") + ", \"full_match\": " +
         (c.FullMatch() ? "true" : "false");
    if (!c.FullMatch()) {
      o += ", \"first_row\": " + std::to_string(c.first_row) + ", \"first_column\": " + std::to_string(c.first_column) +
           ", \"candidate_code\": " + std::to_string(c.candidate_code) + ", \"actual_code\": " + std::to_string(c.actual_code);
    }
    o += "}";
  }
  o += "]}";
  return o;
}

}  // namespace lowbit::check
