// `lowbit check gemm --a A.npy --b B.npy [--a-scales FILE] [--b-scales FILE]
// [--c C.npy] --output D.npy [--transpose-b] [--json]`: which accumulation
// did a GEMM do? A thin caller of lowbit/check/matmul_diagnosis.h (the gtest
// assertions of lowbit/testing/matmul.h and Python's
// lowbit.testing.check_matmul print the same report);
// docs/check-your-kernel.md "Checking a matrix product" is the user's guide.
//
// Files are .npy (npy_file.h): A is M x K, B is K x N (N x K with
// --transpose-b), D and C are M x N. The operand format comes from the
// dtype where it says one (float16 -> fp16, ml_dtypes bfloat16 -> bf16,
// float32 -> fp32, int8 -> int8, ml_dtypes float8_e5m2 -> e5m2) and from
// --a-format / --b-format otherwise (uint8 codes: e4m3, e5m2, int8, nvfp4,
// mxfp4, mxfp8; FP4 one code per byte). --a-scales / --b-scales are the
// block scales (uint8 E8M0 / UE4M3, [row or column][block of K]) of
// nvfp4 / mxfp4 / mxfp8, and otherwise FP32 scales: one value (per tensor)
// or M for A (per row) and N for B (per column).
//
// Exit status: 0 a candidate gives every output bit; 1 none does (the report
// shows the closest); 2 bad usage or input (main.cc prints the one line).
#include <cstdio>
#include <cstring>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "commands.h"
#include "lowbit/check/matmul_diagnosis.h"
#include "lowbit/formats/user_word.h"
#include "npy_file.h"

namespace lowbit::tools {
namespace {

struct GemmArgs {
  std::string a, b, a_format, b_format, a_scales, b_scales, c, c_format, output, output_format;
  bool transpose_b = false;
  bool json = false;
  std::size_t max_mismatches = 8;
};

const char* kCodeFormats = "e4m3, e5m2, int8, nvfp4, mxfp4, mxfp8, bf16, fp16, fp32";

bool HasBlockScales(const std::string& format) { return format == "nvfp4" || format == "mxfp4" || format == "mxfp8"; }

// The 2-D shape of an operand file.
void RequireMatrix(const BinaryArray& array, const char* what) {
  if (!array.npy) throw CommandError(array.name + ": not a .npy file (" + what + " needs its shape)");
  if (array.shape.size() != 2) {
    throw CommandError(array.name + ": a " + std::to_string(array.shape.size()) + "-dimensional array " +
                       ShapeText(array.shape) + "; " + what + " must be a matrix");
  }
}

// The operand format: --X-format, else what the dtype says.
std::string OperandFormat(const BinaryArray& array, const std::string& given, const char* option) {
  std::string from_dtype;
  if (array.descr == "<f2" || array.descr == ">f2") from_dtype = "fp16";
  if (array.descr == "<V2") from_dtype = "bf16";
  if (array.descr == "<f4" || array.descr == ">f4") from_dtype = "fp32";
  if (array.descr == "|i1") from_dtype = "int8";
  if (array.descr == "<f1" || array.descr == "|f1") from_dtype = "e5m2";
  if (!given.empty()) {
    if (!from_dtype.empty() && from_dtype != given && !(from_dtype == "int8")) {
      throw CommandError(std::string(option) + " " + QuoteUserWord(given) + " disagrees with " + array.name +
                         "'s dtype " + QuoteUserWord(array.descr) + " (" + from_dtype + ")");
    }
    return given;
  }
  if (from_dtype.empty()) {
    throw CommandError(array.name + ": dtype " + QuoteUserWord(array.descr) + " does not say the format; give " + option +
                       " (" + kCodeFormats + ")");
  }
  return from_dtype;
}

// D's and C's type: float32 / float16 / bfloat16, or unsigned words with
// --output-format.
FormatId ResultType(const BinaryArray& array, const std::string& given, const char* option) {
  if (!given.empty()) {
    const FormatId id = given == "fp32" ? FormatId::kFp32 : given == "bf16" ? FormatId::kBf16 : given == "fp16" ? FormatId::kFp16 : FormatId::kE2m1;
    if (id == FormatId::kE2m1) throw CommandError(std::string(option) + " " + QuoteUserWord(given) + " is not fp32, bf16 or fp16");
    if (array.item_bytes * 8 != Spec(id).total_bits) {
      throw CommandError(array.name + ": " + std::to_string(array.item_bytes) + "-byte items cannot be " + given + " codes");
    }
    return id;
  }
  if (array.descr == "<f4" || array.descr == "<u4") return FormatId::kFp32;
  if (array.descr == "<f2") return FormatId::kFp16;
  if (array.descr == "<V2") return FormatId::kBf16;
  throw CommandError(array.name + ": dtype " + QuoteUserWord(array.descr) +
                     " is not float32, float16 or bfloat16 (uint16 codes need " + option + " bf16 or fp16)");
}

std::vector<float> F32Scales(const BinaryArray& array) {
  if (!(array.npy && (array.descr == "<f4" || array.descr == ">f4"))) {
    throw CommandError(array.name + ": FP32 scales must be a float32 .npy array");
  }
  std::vector<float> out(array.Count());
  std::memcpy(out.data(), array.data.data(), array.data.size());
  return out;
}

// Block scales (bytes) or outer FP32 scales of one operand.
void ReadScales(const std::string& path, const char* option, long rows, check::MatmulOperand* op,
                std::vector<std::uint8_t>* bytes, std::vector<float>* per_row, const char* rows_name) {
  if (path.empty()) return;
  BinaryArray array = ReadArrayFile(option, path);
  if (array.data.empty()) throw CommandError(array.name + ": no scales in the file");
  if (HasBlockScales(op->format)) {
    if (array.npy && array.item_bytes != 1) {
      throw CommandError(array.name + ": " + op->format + "'s block scales are one byte each (uint8), not dtype " +
                         QuoteUserWord(array.descr));
    }
    *bytes = std::move(array.data);
    op->block_scales = bytes->data();
    op->block_scale_count = bytes->size();
    return;
  }
  std::vector<float> values = F32Scales(array);
  if (values.size() == 1) {
    op->tensor_scale = values[0];
  } else if (values.size() == static_cast<std::size_t>(rows)) {
    *per_row = std::move(values);
  } else {
    throw CommandError(array.name + ": " + std::to_string(values.size()) + " scales; " + op->format +
                       " takes one (per tensor) or " + rows_name + " = " + std::to_string(rows) + " (one per " +
                       (std::strcmp(rows_name, "M") == 0 ? "row of A" : "column of B") + ")");
  }
}

void RunCheckGemm(const GemmArgs& args) {
  BinaryArray a = ReadArrayFile("--a", args.a);
  BinaryArray b = ReadArrayFile("--b", args.b);
  BinaryArray d = ReadArrayFile("--output", args.output);
  RequireMatrix(a, "A");
  RequireMatrix(b, "B");
  RequireMatrix(d, "the output D");
  const long m = static_cast<long>(a.shape[0]), k = static_cast<long>(a.shape[1]);
  const long kb = static_cast<long>(args.transpose_b ? b.shape[1] : b.shape[0]);
  const long n = static_cast<long>(args.transpose_b ? b.shape[0] : b.shape[1]);
  if (kb != k) {
    throw CommandError("A is " + ShapeText(a.shape) + " and B is " + ShapeText(b.shape) +
                       (args.transpose_b ? " (N x K)" : " (K x N)") + ": A's K = " + std::to_string(k) +
                       " is not B's K = " + std::to_string(kb) + (args.transpose_b ? "" : " (is B N x K? --transpose-b)"));
  }
  if (d.shape[0] != static_cast<std::size_t>(m) || d.shape[1] != static_cast<std::size_t>(n)) {
    throw CommandError(d.name + ": shape " + ShapeText(d.shape) + ", but A x B is M x N = " + std::to_string(m) + " x " +
                       std::to_string(n));
  }
  check::MatmulInputs in;
  in.m = m;
  in.n = n;
  in.k = k;
  in.b_transposed = args.transpose_b;
  in.a.format = OperandFormat(a, args.a_format, "--a-format");
  in.b.format = OperandFormat(b, args.b_format, "--b-format");
  in.a.codes = {a.data.data(), a.Count(), a.item_bytes};
  in.b.codes = {b.data.data(), b.Count(), b.item_bytes};
  std::vector<std::uint8_t> a_block, b_block;
  ReadScales(args.a_scales, "--a-scales", m, &in.a, &a_block, &in.row_scales, "M");
  ReadScales(args.b_scales, "--b-scales", n, &in.b, &b_block, &in.column_scales, "N");
  in.d_type = ResultType(d, args.output_format, "--output-format");
  in.d = d.data.data();
  in.d_count = d.Count();
  BinaryArray c;
  if (!args.c.empty()) {
    c = ReadArrayFile("--c", args.c);
    RequireMatrix(c, "C");
    if (c.shape[0] != static_cast<std::size_t>(m) || c.shape[1] != static_cast<std::size_t>(n)) {
      throw CommandError(c.name + ": shape " + ShapeText(c.shape) + ", but C must be M x N = " + std::to_string(m) +
                         " x " + std::to_string(n));
    }
    in.c_type = ResultType(c, args.c_format, "--c-format");
    in.c = c.data.data();
    in.c_count = c.Count();
  }
  check::MatmulCheckOptions options;
  options.max_mismatches = args.max_mismatches;
  const check::MatmulReport report = check::CheckMatmul(in, options);
  if (!report.error.empty()) throw CommandError(report.error);
  const std::string text = args.json ? check::MatmulReportJson(report) + "\n" : check::MatmulReportText(report);
  std::fputs(text.c_str(), stdout);
  throw CommandExit{report.Passed() ? 0 : 1};
}

}  // namespace

void AddCheckGemmCommand(CLI::App& app) {
  auto args = std::make_shared<GemmArgs>();
  // Reached as `lowbit check gemm ...` (main.cc turns those two words into
  // this command's name); hidden from the command list.
  CLI::App* cmd = app.add_subcommand("check-gemm", "Which accumulation did a matrix product do? (lowbit check gemm)");
  cmd->group("");
  cmd->add_option("--a", args->a, "A (M x K) as a .npy file of codes")->required();
  cmd->add_option("--b", args->b, "B (K x N, or N x K with --transpose-b) as a .npy file of codes")->required();
  cmd->add_option("--a-format", args->a_format, std::string("A's format when the dtype does not say it (") + kCodeFormats + ")");
  cmd->add_option("--b-format", args->b_format, std::string("B's format when the dtype does not say it (") + kCodeFormats + ")");
  cmd->add_option("--a-scales", args->a_scales, "A's block scales (uint8), or FP32: one per tensor or one per row");
  cmd->add_option("--b-scales", args->b_scales, "B's block scales (uint8), or FP32: one per tensor or one per column");
  cmd->add_option("--c", args->c, "C (M x N), added before the conversion to D's type");
  cmd->add_option("--c-format", args->c_format, "C's type when its dtype is uint16: bf16 or fp16");
  cmd->add_option("--output", args->output, "D (M x N) as the kernel wrote it: float32, float16, bfloat16")->required();
  cmd->add_option("--output-format", args->output_format, "D's type when its dtype is uint16 / uint32: fp32, bf16, fp16");
  cmd->add_flag("--transpose-b", args->transpose_b, "B is given N x K");
  cmd->add_option("--max-mismatches", args->max_mismatches, "First mismatches shown")
      ->capture_default_str()
      ->check(CLI::Range(0, 1000));
  cmd->add_flag("--json", args->json, "The report as one JSON object");
  cmd->callback([args] { RunCheckGemm(*args); });
}

}  // namespace lowbit::tools
