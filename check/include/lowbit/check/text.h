// Plain-text rendering of check results, as `lowbit verify` prints them:
//
//   backend  operation   format  inputs  mismatches  status
//   scalar   encode-f32  e4m3    1234    0           ok
//   ...
//   first mismatch of simd:AVX2 encode-f32 e4m3: input 0x43e80001 (fp32 464.00003) combo rne:
//       expected 0x7e (e4m3 448), got 0x7f (e4m3 nan)
//   verify ci: 73 rows, 123 inputs checked, 0 mismatches, 4 skipped, 1.2 s
#pragma once

#include <string>
#include <vector>

#include "lowbit/check/check.h"

namespace lowbit::check {

// "ok", "MISMATCH", "SKIPPED (why)", with "(N option sets unsupported)".
std::string StatusText(const Row& row);

// The table: a header line and one line per row, columns padded to fit.
std::string RenderTable(const std::vector<Row>& rows);

// One mismatch on one line: "input 0x.. (fp32 1.5) combo rne: model 0x.. (e4m3 1.5),
// kernel 0x.. (e4m3 1.75), 1 code apart". `expected_name` / `actual_name`
// say whose outputs they are ("model" / "kernel"; oracle rows: "oracle" / "model").
std::string DescribeMismatch(const Mismatch& mismatch, const char* expected_name,
                             const char* actual_name);
// DescribeMismatch with the names that fit the row's kind.
std::string DescribeMismatch(const Row& row, const Mismatch& mismatch);

// "first mismatch of <backend> <operation> <format>: ..." for every failed
// row, one line each.
std::string RenderFirstMismatches(const std::vector<Row>& rows);

// "<title>: N rows, N inputs checked, N mismatches, N skipped, S s".
std::string RenderSummary(const Results& results, const std::string& title);

// `text` as a JSON string literal (RFC 8259 §7): quotes and backslashes
// escaped, control characters (and DEL) as \u00XX. The JSON renderers of
// `lowbit verify --json` and `lowbit check --json` share it.
std::string JsonString(const std::string& text);

}  // namespace lowbit::check
