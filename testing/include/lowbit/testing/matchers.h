// GoogleTest assertions that compare a kernel's outputs (codes, scales,
// dequantized values) with lowbit's model for a format + policy, a profile or
// a recipe. On failure the message is lowbit::check's report
// (lowbit/check/user_outputs.h ReportText): the first mismatches decoded
// (input bits and value, expected and actual code with their values, the
// distance in codes; for recipes the block index with its amax and scale),
// then the diagnosis of which known convention the kernel follows instead.
// `lowbit check` and Python's lowbit.testing.assert_matches print the same
// report.
//
//   const auto target = lowbit::testing::ParseTargetOrDie("e4m3:nvidia");
//   EXPECT_TRUE(lowbit::testing::CodesMatchModel(target, lowbit::testing::Fp32Inputs(x), lowbit::testing::Codes(y)));
//   LOWBIT_EXPECT_RECIPE_MATCHES(lowbit::testing::ParseTargetOrDie("e4m3:te/row"), Bf16Inputs(x), rows, cols, outputs);
//
// To assert on the diagnosis itself (a test that a kernel is wrong in a
// known way), call ElementReport / RecipeReport and read Report::diagnosis.
#pragma once

#include <cstddef>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include <gtest/gtest.h>

#include "lowbit/check/user_outputs.h"
#include "lowbit/formats/format_list.h"

namespace lowbit::testing {

// ---- targets ---------------------------------------------------------------------

// check::ParseTarget, throwing std::invalid_argument with its message (a test
// with a mistyped target fails loudly instead of checking nothing).
inline check::Target ParseTargetOrDie(std::string_view name, const check::TargetOptions& options = {}) {
  check::Target target;
  std::string error;
  if (!check::ParseTarget(name, options, &target, &error)) {
    throw std::invalid_argument("lowbit::testing: bad target '" + std::string(name) + "': " + error);
  }
  return target;
}

// ---- buffers ---------------------------------------------------------------------

inline check::InputBuffer Fp32Inputs(const float* x, std::size_t n) { return {FormatId::kFp32, x, n}; }
inline check::InputBuffer Fp32Inputs(const std::vector<float>& x) { return Fp32Inputs(x.data(), x.size()); }
inline check::InputBuffer Fp64Inputs(const std::vector<double>& x) { return {FormatId::kFp64, x.data(), x.size()}; }
// BF16 / FP16 inputs as their 16-bit patterns (what a kernel reads).
inline check::InputBuffer Bf16Inputs(const std::uint16_t* bits, std::size_t n) { return {FormatId::kBf16, bits, n}; }
inline check::InputBuffer Bf16Inputs(const std::vector<std::uint16_t>& bits) { return Bf16Inputs(bits.data(), bits.size()); }
inline check::InputBuffer Fp16Inputs(const std::uint16_t* bits, std::size_t n) { return {FormatId::kFp16, bits, n}; }
inline check::InputBuffer Fp16Inputs(const std::vector<std::uint16_t>& bits) { return Fp16Inputs(bits.data(), bits.size()); }

// One code per byte / per 16-bit word.
inline check::CodeBuffer Codes(const std::uint8_t* codes, std::size_t n) { return {codes, n, 1}; }
inline check::CodeBuffer Codes(const std::vector<std::uint8_t>& codes) { return Codes(codes.data(), codes.size()); }
inline check::CodeBuffer Codes(const std::vector<std::uint16_t>& codes) { return {codes.data(), codes.size(), 2}; }
// `count` 4-bit codes, two per byte in `packing`'s nibble order.
inline check::CodeBuffer PackedCodes(const std::uint8_t* bytes, std::size_t count,
                                     recipe::Packing packing = recipe::Packing::kNibblesLowFirst) {
  check::CodeBuffer b{bytes, count, 1};
  b.packing = packing;
  return b;
}

// ---- reports ----------------------------------------------------------------------

inline check::Report ElementReport(const check::Target& target, const check::InputBuffer& inputs,
                                   const check::CodeBuffer& outputs, const check::CheckOptions& options = {}) {
  return check::CheckElementOutputs(target, inputs, outputs, options);
}

inline check::Report RecipeReport(const check::Target& target, const check::InputBuffer& inputs, long rows, long cols,
                                  const check::RecipeOutputs& outputs, const check::CheckOptions& options = {}) {
  return check::CheckRecipeOutputs(target, inputs, rows, cols, outputs, options);
}

inline check::Report DequantizedReport(const check::Target& target, const check::RecipeOutputs& quantized, long rows,
                                       long cols, const float* values, const check::CheckOptions& options = {}) {
  return check::CheckRecipeDequantized(target, quantized, rows, cols, values, options);
}

// Success when the report passed (something was compared and nothing
// differed); otherwise the report's text. A report that compared nothing
// (empty buffers, or every output undefined for the target) fails too: a
// check whose body never ran must not read as a pass (docs/design.md "Tests").
inline ::testing::AssertionResult ReportPassed(const check::Report& report) {
  if (report.Passed()) {
    return ::testing::AssertionSuccess() << report.target << ": " << report.checked << " outputs match the model";
  }
  ::testing::AssertionResult failure = ::testing::AssertionFailure();
  if (report.error.empty() && report.mismatches == 0 && report.checked == 0) {
    failure << report.target << ": nothing was compared (empty buffers, or every output undefined for this target)\n";
  }
  return failure << check::ReportText(report);
}

// The assertions: EXPECT_TRUE(CodesMatchModel(...)) / ASSERT_TRUE(...).
inline ::testing::AssertionResult CodesMatchModel(const check::Target& target, const check::InputBuffer& inputs,
                                                  const check::CodeBuffer& outputs,
                                                  const check::CheckOptions& options = {}) {
  return ReportPassed(ElementReport(target, inputs, outputs, options));
}

inline ::testing::AssertionResult RecipeOutputsMatchModel(const check::Target& target, const check::InputBuffer& inputs,
                                                          long rows, long cols, const check::RecipeOutputs& outputs,
                                                          const check::CheckOptions& options = {}) {
  return ReportPassed(RecipeReport(target, inputs, rows, cols, outputs, options));
}

inline ::testing::AssertionResult DequantizedMatchesModel(const check::Target& target,
                                                          const check::RecipeOutputs& quantized, long rows, long cols,
                                                          const float* values,
                                                          const check::CheckOptions& options = {}) {
  return ReportPassed(DequantizedReport(target, quantized, rows, cols, values, options));
}

// Success when the report failed and its diagnosis names `convention` (a
// Candidate::name such as "rounding rtz" or "profile ml_dtypes", or a part of
// one) among the conventions that match the kernel on every output. For
// tests that pin what a wrong kernel is taken for.
inline ::testing::AssertionResult DiagnosedAs(const check::Report& report, std::string_view convention) {
  if (report.Passed()) return ::testing::AssertionFailure() << report.target << ": the kernel matches the model";
  if (!report.error.empty()) return ::testing::AssertionFailure() << check::ReportText(report);
  for (const check::Candidate& c : report.diagnosis.candidates) {
    if (c.FullMatch() && c.name.find(convention) != std::string::npos) {
      return ::testing::AssertionSuccess() << "diagnosed as " << c.name << ": " << report.diagnosis.summary;
    }
  }
  return ::testing::AssertionFailure() << "the diagnosis does not name '" << convention
                                       << "' as a full match\n"
                                       << check::ReportText(report);
}

}  // namespace lowbit::testing

// Shorthands.
#define LOWBIT_EXPECT_CODES_MATCH(target, inputs, outputs) \
  EXPECT_TRUE(::lowbit::testing::CodesMatchModel((target), (inputs), (outputs)))
#define LOWBIT_ASSERT_CODES_MATCH(target, inputs, outputs) \
  ASSERT_TRUE(::lowbit::testing::CodesMatchModel((target), (inputs), (outputs)))
#define LOWBIT_EXPECT_RECIPE_MATCHES(target, inputs, rows, cols, outputs) \
  EXPECT_TRUE(::lowbit::testing::RecipeOutputsMatchModel((target), (inputs), (rows), (cols), (outputs)))
#define LOWBIT_ASSERT_RECIPE_MATCHES(target, inputs, rows, cols, outputs) \
  ASSERT_TRUE(::lowbit::testing::RecipeOutputsMatchModel((target), (inputs), (rows), (cols), (outputs)))
