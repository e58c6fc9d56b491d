// GoogleTest assertions for a kernel's matrix product: does some
// accumulation candidate of lowbit::check (lowbit/check/matmul_diagnosis.h)
// give every output bit of D, and is it the one the test expects? On failure
// the message is the product report (MatmulReportText), the same that
// `lowbit check gemm` and Python's lowbit.testing.assert_matmul_matches
// print.
//
//   lowbit::check::MatmulInputs in = lowbit::testing::MatmulOf(m, n, k, "bf16", a, "bf16", b, d);
//   EXPECT_TRUE(lowbit::testing::MatmulMatchesSome(in));
//   EXPECT_TRUE(lowbit::testing::MatmulDiagnosedAs(in, "fp32 fma, K order"));
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include <gtest/gtest.h>

#include "lowbit/check/matmul_diagnosis.h"

namespace lowbit::testing {

// A (M x K) and B (K x N, or N x K with b_transposed) as one code per
// 8 / 16 / 32-bit word, D as FP32 bits (uint32) or BF16 / FP16 bits
// (uint16, `d_type`).
template <typename A, typename B, typename D>
check::MatmulInputs MatmulOf(long m, long n, long k, std::string a_format, const std::vector<A>& a,
                             std::string b_format, const std::vector<B>& b, const std::vector<D>& d,
                             FormatId d_type = sizeof(D) == 4 ? FormatId::kFp32 : FormatId::kBf16,
                             bool b_transposed = false) {
  check::MatmulInputs in;
  in.m = m;
  in.n = n;
  in.k = k;
  in.a.format = std::move(a_format);
  in.a.codes = {a.data(), a.size(), static_cast<int>(sizeof(A))};
  in.b.format = std::move(b_format);
  in.b.codes = {b.data(), b.size(), static_cast<int>(sizeof(B))};
  in.b_transposed = b_transposed;
  in.d_type = d_type;
  in.d = d.data();
  in.d_count = d.size();
  return in;
}

// Success when some candidate gives every output bit of the whole product.
// A report that compared nothing fails (an assertion whose body never ran
// must not pass).
inline ::testing::AssertionResult MatmulMatchesSome(const check::MatmulInputs& inputs,
                                                    const check::MatmulCheckOptions& options = {}) {
  const check::MatmulReport report = check::CheckMatmul(inputs, options);
  if (report.Passed()) return ::testing::AssertionSuccess() << report.summary;
  return ::testing::AssertionFailure() << check::MatmulReportText(report);
}

// Success when the candidate named exactly `candidate` (a
// MatmulCandidate::name, e.g. "wgmma.m64nNk32.f32.e4m3.e4m3, promotion every
// 128") gives every output bit of the whole product.
inline ::testing::AssertionResult MatmulDiagnosedAs(const check::MatmulReport& report, std::string_view candidate) {
  if (!report.error.empty()) return ::testing::AssertionFailure() << check::MatmulReportText(report);
  for (const check::MatmulCandidate& c : report.candidates) {
    if (c.name == candidate) {
      if (c.FullMatch() && c.whole_product) return ::testing::AssertionSuccess() << "diagnosed as " << c.name;
      return ::testing::AssertionFailure() << "'" << candidate << "' does not give every output bit\n"
                                           << check::MatmulReportText(report);
    }
  }
  return ::testing::AssertionFailure() << "no candidate is named '" << candidate << "'\n"
                                       << check::MatmulReportText(report);
}

inline ::testing::AssertionResult MatmulDiagnosedAs(const check::MatmulInputs& inputs, std::string_view candidate,
                                                    const check::MatmulCheckOptions& options = {}) {
  return MatmulDiagnosedAs(check::CheckMatmul(inputs, options), candidate);
}

// Success when the candidate named `candidate` exists and does NOT give every
// output bit (a neighbouring schedule the diagnosis must tell apart).
inline ::testing::AssertionResult MatmulNotDiagnosedAs(const check::MatmulReport& report, std::string_view candidate) {
  for (const check::MatmulCandidate& c : report.candidates) {
    if (c.name == candidate) {
      if (!c.FullMatch()) return ::testing::AssertionSuccess() << c.name << " differs on " << (c.checked - c.matched) << " outputs";
      return ::testing::AssertionFailure() << "'" << candidate << "' gives every output bit too";
    }
  }
  return ::testing::AssertionFailure() << "no candidate is named '" << candidate << "'\n"
                                       << check::MatmulReportText(report);
}

}  // namespace lowbit::testing
