// lowbit._lowbit.check_matmul: a user's matrix product against the
// accumulation candidates of lowbit::check
// (check/include/lowbit/check/matmul_diagnosis.h), for Python's
// lowbit.testing.check_matmul / assert_matmul_matches
// (python/lowbit/_matmul_check.py makes the arrays C-contiguous code words
// before calling this). The report is MatmulReportJson's and
// MatmulReportText's, so Python, `lowbit check gemm` and the C++ gtest
// assertions (testing/include/lowbit/testing/matmul.h) say the same thing.
#include "matmul_check_bindings.h"

#include <nanobind/nanobind.h>
#include <nanobind/ndarray.h>
#include <nanobind/stl/optional.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/tuple.h>

#include <cstdint>
#include <optional>
#include <string>
#include <tuple>
#include <vector>

#include "lowbit/check/matmul_diagnosis.h"
#include "lowbit/formats/format_list.h"
#include "lowbit/formats/user_word.h"

namespace nb = nanobind;
using namespace nb::literals;

namespace lowbit::python {
namespace {

using InArray = nb::ndarray<nb::ro, nb::c_contig, nb::device::cpu>;

[[noreturn]] void Fail(const std::string& message) { throw nb::value_error(message.c_str()); }

FormatId ResultType(const std::string& name, const char* what) {
  if (name == "fp32") return FormatId::kFp32;
  if (name == "bf16") return FormatId::kBf16;
  if (name == "fp16") return FormatId::kFp16;
  Fail(std::string(what) + ": type " + QuoteUserWord(name) + " is not fp32, bf16 or fp16");
}

std::vector<float> Floats(const std::optional<InArray>& a, const char* what) {
  if (!a.has_value()) return {};
  if (a->itemsize() != 4) Fail(std::string(what) + " must be float32");
  const auto* p = static_cast<const float*>(a->data());
  return std::vector<float>(p, p + a->size());
}

std::tuple<std::string, std::string, bool> CheckMatmulBinding(
    const InArray& a, const std::string& a_format, const InArray& b, const std::string& b_format, long m, long n,
    long k, bool b_transposed, const std::optional<InArray>& a_block_scales,
    const std::optional<InArray>& b_block_scales, std::optional<float> a_tensor_scale,
    std::optional<float> b_tensor_scale, const std::optional<InArray>& row_scales,
    const std::optional<InArray>& column_scales, const std::optional<InArray>& c, const std::string& c_type,
    const InArray& d, const std::string& d_type, std::size_t max_mismatches, bool diagnose) {
  check::MatmulInputs in;
  in.m = m;
  in.n = n;
  in.k = k;
  in.b_transposed = b_transposed;
  in.a.format = a_format;
  in.a.codes = {a.data(), a.size(), static_cast<int>(a.itemsize())};
  in.b.format = b_format;
  in.b.codes = {b.data(), b.size(), static_cast<int>(b.itemsize())};
  for (auto [scales, op, what] : {std::tuple{&a_block_scales, &in.a, "A's block scales"},
                                  std::tuple{&b_block_scales, &in.b, "B's block scales"}}) {
    if (!scales->has_value()) continue;
    if ((*scales)->itemsize() != 1) Fail(std::string(what) + " must be one byte each (uint8)");
    op->block_scales = static_cast<const std::uint8_t*>((*scales)->data());
    op->block_scale_count = (*scales)->size();
  }
  in.a.tensor_scale = a_tensor_scale;
  in.b.tensor_scale = b_tensor_scale;
  in.row_scales = Floats(row_scales, "row scales");
  in.column_scales = Floats(column_scales, "column scales");
  if (c.has_value()) {
    in.c_type = ResultType(c_type, "C");
    if (c->itemsize() * 8 != static_cast<std::size_t>(Spec(in.c_type).total_bits)) {
      Fail("C: " + std::to_string(c->itemsize()) + "-byte items cannot be " + c_type + " values");
    }
    in.c = c->data();
    in.c_count = c->size();
  }
  in.d_type = ResultType(d_type, "the output D");
  if (d.itemsize() * 8 != static_cast<std::size_t>(Spec(in.d_type).total_bits)) {
    Fail("the output D: " + std::to_string(d.itemsize()) + "-byte items cannot be " + d_type + " values");
  }
  in.d = d.data();
  in.d_count = d.size();
  check::MatmulCheckOptions options;
  options.max_mismatches = max_mismatches;
  options.diagnose = diagnose;
  check::MatmulReport report;
  {
    nb::gil_scoped_release release;
    report = check::CheckMatmul(in, options);
  }
  if (!report.error.empty()) Fail(report.error);
  return {check::MatmulReportJson(report), check::MatmulReportText(report), report.Passed()};
}

}  // namespace

void RegisterMatmulCheck(nb::module_& m) {
  m.def("check_matmul", &CheckMatmulBinding, "a"_a, "a_format"_a, "b"_a, "b_format"_a, "m"_a, "n"_a, "k"_a,
        "b_transposed"_a, "a_block_scales"_a.none(), "b_block_scales"_a.none(), "a_tensor_scale"_a.none(),
        "b_tensor_scale"_a.none(), "row_scales"_a.none(), "column_scales"_a.none(), "c"_a.none(), "c_type"_a, "d"_a,
        "d_type"_a, "max_mismatches"_a, "diagnose"_a,
        "A matrix product's outputs against lowbit's accumulation candidates: (report JSON, report text, passed).");
}

}  // namespace lowbit::python
