// Internal helpers of the checks: decoding a differing output into a
// Mismatch (values, code distance) and collecting the first few of a row.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "lowbit/check/check.h"
#include "lowbit/formats/format_spec.h"

namespace lowbit::check::internal {

// "0x" + lower-case hex without padding: 0x0, 0x7e, 0x7fc00000.
std::string Hex(std::uint64_t value);

// The value of `code` in `spec` as the shortest decimal that reads back as the
// same double ("1.0625", "-0", "448", "inf", "-nan").
std::string ValueText(const FormatSpec& spec, std::uint64_t code);

// Steps between two codes of `spec` in value order (1: neighbours); empty when
// either is a NaN. -0 and +0 are 0 steps apart.
std::optional<std::uint64_t> CodeDistance(const FormatSpec& spec, std::uint64_t a,
                                          std::uint64_t b);

// A Mismatch of an element conversion from `in` to `out`, every field decoded.
Mismatch ElementMismatch(const std::string& combo, const FormatSpec& in, std::uint64_t input,
                         const FormatSpec& out, std::uint64_t expected, std::uint64_t actual);

// Counts one mismatch into `row` and keeps it if the row has fewer than
// kMaxMismatchesPerRow.
void AddMismatch(Row* row, Mismatch mismatch);

}  // namespace lowbit::check::internal
