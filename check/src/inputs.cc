// Which inputs each element row runs on, per level (inputs.h):
//   smoke: the boundary vectors plus 4096 pseudo-random inputs;
//   ci:    every 16-bit input and every code of <= 16-bit formats; for FP32
//          inputs the boundaries, a class-complete sample (every upper 16-bit
//          pattern with 9 lower patterns that hit each round/sticky class of
//          targets up to FP16, after docs/formats-reference.md §10.1) and a stride-4093
//          sample of all 2^32 (1 M);
//   full:  all 2^32 FP32 inputs for the RNE option sets (the ci sample for the
//          others: 2^32 x every set would take hours on two cores).
#include <algorithm>
#include <cmath>
#include <cstring>

#include "lowbit/check/inputs.h"
#include "lowbit/formats/convert.h"
#include "lowbit/formats/fp32_bits.h"

namespace lowbit::check {
namespace {

using registry::Operation;

// docs/formats-reference.md §9 "Suggested boundary vectors" (FP32 bits).
constexpr std::uint32_t kFactsBoundaries[] = {
    0x00000000, 0x80000000, 0x00000001, 0x80000001, 0x3A800000, 0x3A800001, 0x37000000,
    0x37000001, 0x43E00000, 0x43E7FFFF, 0x43E80000, 0x43E80001, 0x43F00000, 0x47600000,
    0x476FFFFF, 0x47700000, 0x477FE000, 0x477FEFFF, 0x477FF000, 0x7F7FFFFF, 0x7F800000,
    0xFF800000, 0x7FC00000, 0xFFC00000, 0x7F800001, 0xFF800001, 0x7FFFFFFF, 0xFFFFFFFF,
    0x3E800000, 0x3F400000, 0x3FA00000, 0x3FE00000, 0x40200000, 0x40600000, 0x40A00000,
    0x40C00001, 0x00400000, 0x00400001, 0x00C00000, 0x7F000000, 0x7F000001, 0x7F400000,
    0x42FF0000, 0xC3008000, 0x40200000, 0xC0200000, 0x40F00000, 0xC1080000, 0xC3E80001,
};

constexpr std::uint64_t kRandomCount = 4096;
constexpr std::uint64_t kF32Stride = 4093;  // prime: every residue of the low bits recurs
// Lower halves that put a tie, a just-below-tie and a just-above-tie at the
// round bit of every target up to FP16 (bits 12 and 15 of FP32's mantissa).
constexpr std::uint32_t kLowPatterns[] = {0x0000, 0x0001, 0x0FFF, 0x1000, 0x1001,
                                          0x7FFF, 0x8000, 0x8001, 0xFFFF};

void AddAround(double value, std::vector<std::uint32_t>* out) {
  const float x = static_cast<float>(value);
  for (float v : {x, std::nextafter(x, 0.0f), std::nextafter(x, INFINITY)}) {
    out->push_back(F32Bits(v));
    out->push_back(F32Bits(-v));
  }
}

std::vector<std::uint64_t> Widen(const std::vector<std::uint32_t>& v) {
  return std::vector<std::uint64_t>(v.begin(), v.end());
}

void AddRandom(std::uint64_t mask, std::vector<std::uint64_t>* out) {
  for (std::uint64_t i = 0; i < kRandomCount; ++i) {
    out->push_back((static_cast<std::uint64_t>(RandomWord(i, 99)) << 16 ^ RandomWord(i, 98)) & mask);
  }
}

std::vector<std::uint64_t> SortedUnique(std::vector<std::uint64_t> v) {
  std::sort(v.begin(), v.end());
  v.erase(std::unique(v.begin(), v.end()), v.end());
  return v;
}

// The ci FP32 sample every FP32 row shares: class-complete plus strided.
std::shared_ptr<const std::vector<std::uint64_t>> CiF32Sample() {
  static const auto sample = [] {
    std::vector<std::uint64_t> values;
    for (std::uint64_t high = 0; high < 0x10000; ++high) {
      for (std::uint32_t low : kLowPatterns) values.push_back(high << 16 | low);
    }
    for (std::uint64_t x = 0; x < (std::uint64_t{1} << 32); x += kF32Stride) values.push_back(x);
    return std::make_shared<const std::vector<std::uint64_t>>(SortedUnique(std::move(values)));
  }();
  return sample;
}

}  // namespace

std::vector<std::uint32_t> BoundaryF32(const FormatSpec& dst) {
  std::vector<std::uint32_t> out(std::begin(kFactsBoundaries), std::end(kFactsBoundaries));
  if (dst.total_bits <= 16) {
    // Codes with the sign clear are in increasing value order up to the max.
    const std::uint64_t top = dst.MaxFiniteCode();
    const std::uint64_t stride = dst.total_bits <= 8 ? 1 : 64;
    std::vector<std::uint64_t> codes;
    for (std::uint64_t code = 0; code <= top; code += stride) codes.push_back(code);
    codes.push_back(top - 1);
    codes.push_back(top);
    const double smallest = DecodeToF64(dst, 0);
    AddAround(smallest / 2, &out);  // below the smallest value (E8M0 has no zero)
    AddAround(smallest * 0.75, &out);
    for (std::uint64_t code : codes) {
      const double value = DecodeToF64(dst, code);
      AddAround(value, &out);
      if (code < top) AddAround((value + DecodeToF64(dst, code + 1)) / 2, &out);
    }
    // Past the largest value: the overflow thresholds of every mode, and the
    // most negative integer's (-128.5 for INT8).
    const double max = DecodeToF64(dst, top);
    const double step = max - DecodeToF64(dst, top - 1);
    for (double k : {0.5, 1.0, 1.5, 2.0}) AddAround(max + k * step, &out);
    AddAround(max * 2, &out);
  }
  std::sort(out.begin(), out.end());
  out.erase(std::unique(out.begin(), out.end()), out.end());
  return out;
}

InputSet InputsFor(Operation operation, const FormatSpec& spec, Level level,
                   bool exhaustive_combo) {
  InputSet set;
  switch (operation) {
    case Operation::kEncodeF32: {
      if (level == Level::kFull && exhaustive_combo) {
        set.all_count = std::uint64_t{1} << 32;
        return set;
      }
      set.values = Widen(BoundaryF32(spec));
      if (level == Level::kSmoke) {
        AddRandom(0xFFFFFFFFu, &set.values);
        set.values = SortedUnique(std::move(set.values));
      } else {
        set.shared = CiF32Sample();
      }
      return set;
    }
    case Operation::kEncodeBf16:
    case Operation::kEncodeF16:
      if (level == Level::kSmoke) {
        std::vector<std::uint64_t> values;
        AddRandom(0xFFFF, &values);
        for (std::uint64_t x : {0x0000, 0x8000, 0x0001, 0x7C00, 0xFC00, 0x7F80, 0xFF80, 0x7FFF,
                                0xFFFF, 0x7E00, 0x7FC0, 0x7BFF, 0x7F7F}) {
          values.push_back(x);
        }
        set.values = SortedUnique(std::move(values));
      } else {
        set.all_count = 0x10000;
      }
      return set;
    case Operation::kDecodeToF32:
    case Operation::kDecodeToBf16:
      if (spec.total_bits <= 16) {
        set.all_count = spec.CodeMask() + 1;
        return set;
      }
      if (level == Level::kFull) {
        set.all_count = spec.CodeMask() + 1;
        return set;
      }
      {
        // FP32 codes: the same boundaries and sample as FP32 inputs.
        set.values = Widen(BoundaryF32(spec));
        if (level == Level::kSmoke) {
          AddRandom(spec.CodeMask(), &set.values);
          set.values = SortedUnique(std::move(set.values));
        } else {
          set.shared = CiF32Sample();
        }
      }
      return set;
  }
  return set;
}

}  // namespace lowbit::check
