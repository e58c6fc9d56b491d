// OracleEncode: an exact value into a format, decided by comparing exact
// rationals with the format's ordered list of values (value_grid.h), and the
// policy words of lowbit/formats/policy.h read as a specification. It does not
// call the model's algorithms; a disagreement between the two is a bug in one
// of them (docs/design.md "Three roles, kept apart").
//
// Encoding is split in two so that sweeps can reuse the expensive part:
//   Locate  - where |x| lies among the destination's values (exact compares);
//   Decide  - the code and flags for one EncodeOptions (no rational arithmetic).
// OracleEncode(dst, x, o) == Decide(dst, x, Locate(dst, |x|), o).
#pragma once

#include <cstddef>
#include <cstdint>

#include "lowbit/formats/format_spec.h"
#include "lowbit/formats/policy.h"
#include "lowbit/reference/exact_value.h"

namespace lowbit::reference {

// Random bits a stochastic rounding consumes when EncodeOptions leaves the
// count at 0, per destination (PTX ISA 9.0 §9.7.9.21 cvt.rs: 16 bits per BF16
// element, 13 per FP16 element, 8 per element of the FP8/FP6/FP4 x4 forms;
// lowbit takes 32 for anything else).
int OracleRandomBitCount(const FormatSpec& dst);

// Where a positive magnitude lies in a destination format.
struct Location {
  enum class Region : std::uint8_t {
    kInGrid,     // lower <= |x| < upper, both in the grid (or upper = beyond_max)
    kBelowMin,   // below the smallest value of a format without zero (E8M0)
    kBeyondMax,  // at or above the grid's beyond_max: overflows in every mode
  };
  Region region = Region::kInGrid;
  bool exact = false;  // |x| is the lower neighbour itself
  // Floats: index of the lower neighbour in GridFor(dst).points; the upper is
  // the next point, or beyond_max after the last one.
  std::size_t lower = 0;
  // Integers: the lower neighbour floor(|x|); the upper is floor(|x|) + 1.
  BigInt floor_magnitude;
  // |x| compared with the midpoint of the two neighbours: -1, 0 (tie), +1.
  int vs_half = -1;
  // floor(f * 2^64) where f = (|x| - lower) / (upper - lower) in [0, 1): the
  // position between the neighbours that stochastic rounding compares with
  // the random bits.
  std::uint64_t fraction_bits = 0;
  bool tiny = false;  // floats: |x| below the smallest normal
};

// `magnitude` must be > 0. Float formats of at most 16 bits and integers.
Location Locate(const FormatSpec& dst, const Rational& magnitude);

// The code and flags for `input`; `location` must be Locate(dst, magnitude)
// for finite inputs and is ignored otherwise.
EncodeResult Decide(const FormatSpec& dst, const Exact& input, const Location& location,
                    const EncodeOptions& options);

EncodeResult OracleEncode(const FormatSpec& dst, const Exact& input,
                          const EncodeOptions& options = {});

}  // namespace lowbit::reference
