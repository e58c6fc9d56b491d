// lowbit._lowbit.check_outputs: a user's kernel outputs against the model,
// through lowbit::check (check/include/lowbit/check/user_outputs.h), for
// Python's lowbit.testing.assert_matches. The report text is ReportText's,
// so Python, `lowbit check` and the C++ gtest assertions
// (testing/include/lowbit/testing/matchers.h) print the same thing.
// python/lowbit/testing.py makes the arrays C-contiguous and picks the
// input type and code width before calling this.
#include <nanobind/nanobind.h>
#include <nanobind/ndarray.h>
#include <nanobind/stl/optional.h>
#include <nanobind/stl/string.h>

#include <cstdint>
#include <optional>
#include <string>

#include "lowbit/check/user_outputs.h"
#include "lowbit/formats/format_list.h"
#include "lowbit/formats/user_word.h"
#include "testing_bindings.h"

namespace nb = nanobind;
using namespace nb::literals;

namespace lowbit::python {
namespace {

using InArray = nb::ndarray<nb::ro, nb::c_contig>;

[[noreturn]] void Fail(const std::string& message) { throw nb::value_error(message.c_str()); }

FormatId InputType(const std::string& name, const InArray& x) {
  FormatId id{};
  if (!FindFormat(name, &id) || (id != FormatId::kFp64 && id != FormatId::kFp32 && id != FormatId::kFp16 &&
                                 id != FormatId::kBf16)) {
    Fail("inputs must be float64, float32, float16 or bfloat16, got " + QuoteUserWord(name));
  }
  if (x.itemsize() * 8 != static_cast<std::size_t>(Spec(id).total_bits)) {
    Fail("inputs of type " + name + " need " + std::to_string(Spec(id).total_bits / 8) + "-byte items");
  }
  return id;
}

// The packing names of recipe.h (LOWBIT_PACKINGS); none given is one per byte.
recipe::Packing PackingOf(const std::string& name) {
  recipe::Packing p = recipe::Packing::kOnePerByte;
  if (name.empty() || recipe::FindPacking(name, &p)) return p;
  std::string known;
  for (recipe::Packing q : recipe::kAllPackings) known += (known.empty() ? "" : ", ") + std::string(recipe::PackingName(q));
  Fail("unknown packing " + QuoteUserWord(name) + " (" + known + ")");
}

nb::dict ToDict(const check::Report& r) {
  nb::dict d;
  d["target"] = r.target;
  d["kind"] = r.kind;
  d["passed"] = r.Passed();
  d["error"] = r.error;
  d["checked"] = r.checked;
  d["mismatches"] = r.mismatches;
  d["scale_mismatches"] = r.scale_mismatches;
  d["undefined"] = r.undefined;
  d["text"] = check::ReportText(r);
  d["json"] = check::ReportJson(r);
  d["diagnosis"] = r.diagnosis.summary;
  nb::list candidates;
  for (const check::Candidate& c : r.diagnosis.candidates) {
    nb::dict cd;
    cd["name"] = c.name;
    cd["kind"] = c.kind;
    cd["detail"] = c.detail;
    cd["checked"] = c.checked;
    cd["matched"] = c.matched;
    cd["full_match"] = c.FullMatch();
    candidates.append(cd);
  }
  d["candidates"] = candidates;
  return d;
}

// Element conversions when `target` names a format, recipe quantization
// ([rows, cols]) when it names a recipe. Codes: `code_bytes` per code, or
// two 4-bit codes per byte when `packing` says so (then `code_count` codes).
nb::dict CheckOutputs(const std::string& target_name, const std::string& profile, const std::string& rounding,
                      bool saturate, const std::string& layout, const InArray& inputs, const std::string& input_type,
                      std::size_t rows, std::size_t cols, std::optional<InArray> codes, int code_bytes,
                      std::size_t code_count, const std::string& packing, std::optional<InArray> scale_codes,
                      std::optional<InArray> scales, std::optional<InArray> zero_points,
                      std::optional<float> tensor_scale, std::size_t max_mismatches, bool diagnose) {
  check::TargetOptions options;
  options.profile = profile;
  options.rounding = rounding;
  options.saturate = saturate;
  options.layout = layout;
  check::Target target;
  std::string error;
  if (!check::ParseTarget(target_name, options, &target, &error)) Fail(error);
  const check::InputBuffer in{InputType(input_type, inputs), inputs.data(), inputs.size()};
  check::CodeBuffer code_buffer;
  if (codes) {
    code_buffer.data = codes->data();
    code_buffer.packing = PackingOf(packing);
    code_buffer.code_bytes = code_bytes;
    code_buffer.count = code_buffer.packing == recipe::Packing::kOnePerByte ? codes->size() : code_count;
    if (code_buffer.packing == recipe::Packing::kOnePerByte &&
        codes->itemsize() != static_cast<std::size_t>(code_bytes)) {
      Fail("codes have " + std::to_string(codes->itemsize()) + "-byte items, expected " + std::to_string(code_bytes));
    }
    if (code_buffer.packing != recipe::Packing::kOnePerByte && (codes->itemsize() != 1 || (code_count + 1) / 2 > codes->size())) {
      Fail("packed codes: " + std::to_string(code_count) + " codes need " + std::to_string((code_count + 1) / 2) +
           " bytes, got " + std::to_string(codes->size()));
    }
  }
  check::CheckOptions check_options;
  check_options.max_mismatches = max_mismatches;
  check_options.diagnose = diagnose;
  check::Report report;
  {
    nb::gil_scoped_release release;
    if (target.kind == check::Target::Kind::kFormat) {
      report = check::CheckElementOutputs(target, in, code_buffer, check_options);
    }
  }
  if (target.kind == check::Target::Kind::kFormat) return ToDict(report);

  check::RecipeOutputs out;
  out.codes = code_buffer;
  if (scale_codes) {
    if (scale_codes->itemsize() != 1) Fail("scale codes must be one byte each (uint8)");
    out.scale_codes = static_cast<const std::uint8_t*>(scale_codes->data());
    out.scale_code_count = scale_codes->size();
  }
  if (scales) {
    if (scales->itemsize() != 4) Fail("scales must be float32");
    out.scales = static_cast<const float*>(scales->data());
    out.scale_count = scales->size();
  }
  if (zero_points) {
    if (zero_points->itemsize() != 4) Fail("zero points must be int32");
    out.zero_points = static_cast<const std::int32_t*>(zero_points->data());
    out.zero_point_count = zero_points->size();
  }
  out.tensor_scale = tensor_scale;
  {
    nb::gil_scoped_release release;
    report = check::CheckRecipeOutputs(target, in, static_cast<long>(rows), static_cast<long>(cols), out, check_options);
  }
  return ToDict(report);
}

}  // namespace

void RegisterTesting(nb::module_& m) {
  m.def("check_outputs", &CheckOutputs, "target"_a, "profile"_a, "rounding"_a, "saturate"_a, "layout"_a, "inputs"_a,
        "input_type"_a, "rows"_a, "cols"_a, "codes"_a.none(), "code_bytes"_a, "code_count"_a, "packing"_a,
        "scale_codes"_a.none(), "scales"_a.none(), "zero_points"_a.none(), "tensor_scale"_a.none(),
        "max_mismatches"_a, "diagnose"_a,
        "A kernel's outputs against the model: a report dict (lowbit::check, user_outputs.h).");
}

}  // namespace lowbit::python
