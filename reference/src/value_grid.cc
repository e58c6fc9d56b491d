#include "lowbit/reference/value_grid.h"

#include <algorithm>
#include <map>
#include <memory>
#include <mutex>
#include <stdexcept>
#include <string>
#include <tuple>

namespace lowbit::reference {
namespace {

using GridKey = std::tuple<int, bool, int, int, int, bool, int>;

GridKey KeyOf(const FormatSpec& s) {
  return {s.total_bits, s.has_sign, s.exponent_bits, s.mantissa_bits, s.bias, s.has_subnormals,
          static_cast<int>(s.specials)};
}

// The integral significand of a finite code: the mantissa field with the
// implicit leading one of normal numbers (IEEE 754 §3.4), i.e. the value over
// its binade's quantum.
std::uint64_t IntegralSignificand(const FormatSpec& spec, std::uint64_t code) {
  const std::uint64_t mantissa = code & ((std::uint64_t{1} << spec.mantissa_bits) - 1);
  const std::uint64_t exponent = code >> spec.mantissa_bits;  // sign bit is clear here
  const bool subnormal = exponent == 0 && spec.has_subnormals;
  return subnormal ? mantissa : mantissa | (std::uint64_t{1} << spec.mantissa_bits);
}

std::unique_ptr<ValueGrid> BuildGrid(const FormatSpec& spec) {
  if (spec.kind != FormatKind::kFloat || spec.total_bits > 16) {
    throw std::invalid_argument(std::string("lowbit::reference: no value grid for ") + spec.name);
  }
  auto grid = std::make_unique<ValueGrid>();
  const int magnitude_bits = spec.has_sign ? spec.total_bits - 1 : spec.total_bits;
  for (std::uint64_t code = 0; code < (std::uint64_t{1} << magnitude_bits); ++code) {
    const Exact e = ExactValue(spec, code);
    if (e.value_class != ExactClass::kZero && e.value_class != ExactClass::kFinite) continue;
    grid->points.push_back({e.magnitude, code, (IntegralSignificand(spec, code) & 1) != 0});
  }
  const auto less = [](const GridPoint& a, const GridPoint& b) {
    return Compare(a.magnitude, b.magnitude) < 0;
  };
  // Magnitude codes of these formats are already in value order; sort only
  // if they are not (a linear check instead of n log n rational compares).
  if (!std::is_sorted(grid->points.begin(), grid->points.end(), less)) {
    std::sort(grid->points.begin(), grid->points.end(), less);
  }
  for (std::size_t i = 1; i < grid->points.size(); ++i) {
    if (!less(grid->points[i - 1], grid->points[i])) {
      throw std::logic_error("lowbit::reference: two codes with one value");
    }
  }

  // Above the largest finite value: one more quantum of the top binade.
  const GridPoint& max = grid->points.back();
  const int top_exponent = static_cast<int>(max.code >> spec.mantissa_bits);
  const Rational quantum = PowerOfTwo(top_exponent - spec.bias - spec.mantissa_bits);
  std::uint64_t next_significand = IntegralSignificand(spec, max.code) + 1;
  // A carry out of the significand starts the next binade at 1.000...
  if (next_significand == (std::uint64_t{1} << (spec.mantissa_bits + 1))) {
    next_significand >>= 1;
  }
  grid->beyond_max = {max.magnitude + quantum, ~std::uint64_t{0}, (next_significand & 1) != 0};

  // Smallest normal: exponent field 1 with subnormals, field 0 without
  // (E8M0: every code is a normal power of two).
  grid->min_normal = PowerOfTwo((spec.has_subnormals ? 1 : 0) - spec.bias);
  return grid;
}

}  // namespace

const ValueGrid& GridFor(const FormatSpec& spec) {
  static std::mutex mutex;
  static std::map<GridKey, std::unique_ptr<ValueGrid>> cache;
  const std::lock_guard<std::mutex> lock(mutex);
  std::unique_ptr<ValueGrid>& slot = cache[KeyOf(spec)];
  if (!slot) slot = BuildGrid(spec);
  return *slot;
}

}  // namespace lowbit::reference
