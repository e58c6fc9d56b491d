// Packing rows (registry packing_entry.h): every non-scalar packing backend
// against the scalar row of the same (layout, direction), which runs the
// model's loops (formats/block/packing.h). Inputs are random bytes: pack
// reads codes with stray high bits (the model masks them, so must every
// kernel), unpack reads any packed bytes or words. Shapes are biased to where
// vector kernels go wrong: counts of 0, 1, odd, one short of and one past a
// vector's width, and byte buffers that start one byte off alignment. Each
// output buffer has guard units past its end; a kernel that writes one is a
// mismatch there ("guard word 2 past the end").
#include <cstdint>
#include <cstring>
#include <string>
#include <utility>
#include <vector>

#include "describe.h"
#include "lowbit/check/check.h"
#include "lowbit/check/progress.h"
#include "lowbit/formats/format_list.h"
#include "lowbit/registry/registry.h"
#include "scalar_row_harness.h"

namespace lowbit::check {
namespace {

using registry::PackDirection;
using registry::PackingArgs;
using registry::PackingEntry;
using registry::PackingLayoutInfo;
using registry::PackedUnit;

constexpr std::size_t kGuardUnits = 8;
constexpr std::uint8_t kGuardByte = 0xA5;
constexpr std::uint32_t kGuardWord = 0xA5A5A5A5u;

using Rng = internal::SplitMix64;

struct Shape {
  std::size_t rows;
  std::size_t cols;
  std::size_t offset;  // bytes before each byte buffer's first element (0 or 1)
};

// Nibble layouts are one stream of n codes (rows = 1): counts around the
// vector widths (16, 32 and 64 bytes hold 32, 64 and 128 codes) and odd
// ones, every other one unaligned. Matrix layouts (words, torch CPU
// int4pack, swizzled scales): a grid of dimensions, each a multiple of what
// the layout needs (PackingLayoutInfo), from one word up to past the widest
// vector (16 words).
std::vector<Shape> Shapes(const PackingLayoutInfo& info, Level level) {
  std::vector<Shape> shapes;
  if (info.unit == PackedUnit::kByte && info.codes_per_unit == 2 && info.rows_multiple == 1) {  // nibble streams
    std::vector<std::size_t> counts = {0, 1, 2, 3, 17, 64, 129};
    if (level != Level::kSmoke) {
      counts.insert(counts.end(), {15, 16, 31, 32, 33, 63, 65, 127, 128, 255, 256, 257, 1000, 1001, 4097});
    }
    if (level == Level::kFull) counts.insert(counts.end(), {65535, 100003, (1u << 20) + 1});
    for (std::size_t i = 0; i < counts.size(); ++i) shapes.push_back({1, counts[i], i % 2});
    return shapes;
  }
  // Padding layouts (docs/layouts.md): a row past a whole padded tile (1
  // otherwise, a repeat); rows 4 and 5 reach the torch CPU int4pack's 64-row
  // AVX512 block and a short block after it.
  const std::size_t past_tile = static_cast<std::size_t>(info.rows_padded_to) + 1;
  std::vector<std::size_t> rows = {1, 2};
  if (past_tile > 2) rows.push_back(past_tile);
  std::vector<std::size_t> cols = {1, 3};
  if (level != Level::kSmoke) {
    rows.insert(rows.end(), {0, 3, 5, 4});
    cols.insert(cols.end(), {2, 4, 5, 8, 9, 15, 16, 17, 33});
  }
  if (level == Level::kFull) {
    rows.insert(rows.end(), {16, 64});
    cols.insert(cols.end(), {64, 129, 520});
  }
  for (std::size_t r : rows) {
    for (std::size_t c : cols) {
      shapes.push_back({r * static_cast<std::size_t>(info.rows_multiple),
                        c * static_cast<std::size_t>(info.cols_multiple), 0});
    }
  }
  return shapes;
}

std::string ShapeText(const Shape& s) {
  std::string text = std::to_string(s.rows) + "x" + std::to_string(s.cols);
  if (s.offset != 0) text += " (offset " + std::to_string(s.offset) + ")";
  return text;
}

// The nibbles of a packed unit from the low end: "nibbles 0,2,4,6,1,3,5,7".
std::string NibblesText(std::uint64_t value, int nibbles) {
  std::string text = "nibbles ";
  for (int i = 0; i < nibbles; ++i) {
    if (i > 0) text += ",";
    text += std::to_string((value >> (4 * i)) & 0xF);
  }
  return text;
}

// An output buffer of `n` units of T plus guard units, `offset` bytes into
// its storage (T = uint8_t only may be offset).
template <typename T>
struct Output {
  std::vector<T> storage;
  std::size_t offset;
  Output(std::size_t n, std::size_t off, T guard) : storage(off + n + kGuardUnits, guard), offset(off) {}
  T* data() { return storage.data() + offset; }
  const T* data() const { return storage.data() + offset; }
};

// Compares n units and the guard units after them; `what` names a unit
// ("packed byte", "packed word", "code").
template <typename T>
void Compare(const Output<T>& want, const Output<T>& have, std::size_t n, const char* what,
             int nibbles_per_unit, T guard, const std::string& shape, Row* row) {
  for (std::size_t i = 0; i < n + kGuardUnits; ++i) {
    const T expected = i < n ? want.data()[i] : guard;
    const T actual = have.data()[i];
    if (expected == actual) continue;
    Mismatch m;
    m.combo = shape;
    m.where = i < n ? std::string(what) + " " + std::to_string(i)
                    : std::string(sizeof(T) == 1 ? "guard byte " : "guard word ") + std::to_string(i - n) +
                          " past the end";
    m.expected = expected;
    m.actual = actual;
    if (nibbles_per_unit > 0) {
      m.expected_value = NibblesText(expected, nibbles_per_unit);
      m.actual_value = NibblesText(actual, nibbles_per_unit);
    } else {
      m.expected_value = std::to_string(expected);
      m.actual_value = std::to_string(actual);
    }
    internal::AddMismatch(row, std::move(m));
  }
}

// Runs `scalar` and `entry` on the same input and compares their outputs.
void CheckShape(const PackingEntry& entry, const PackingEntry& scalar, const PackingLayoutInfo& info,
                const Shape& shape, std::uint64_t seed, Row* row) {
  const registry::PackingSizes sizes = registry::PackingBufferSizes(info.layout, shape.rows, shape.cols);
  if (!sizes.ok) {
    row->skipped = "shape " + ShapeText(shape) + ": " + sizes.error;
    return;
  }
  const std::string text = ShapeText(shape);
  Rng rng{seed};
  const bool bytes = info.unit == PackedUnit::kByte;
  PackingArgs a;
  a.layout = info.layout;
  a.direction = entry.direction;
  a.rows = shape.rows;
  a.cols = shape.cols;
  std::uint64_t outputs = 0;
  if (entry.direction == PackDirection::kPack) {
    std::vector<std::uint8_t> codes(shape.offset + sizes.codes);
    for (std::uint8_t& c : codes) c = static_cast<std::uint8_t>(rng.Next());
    a.codes = codes.data() + shape.offset;
    if (bytes) {
      Output<std::uint8_t> want(sizes.packed_units, shape.offset, kGuardByte);
      Output<std::uint8_t> have(sizes.packed_units, shape.offset, kGuardByte);
      a.packed_bytes = want.data();
      if (registry::Status s = scalar.run(a); !s.ok) {
        row->skipped = "scalar: " + s.message;
        return;
      }
      a.packed_bytes = have.data();
      outputs = sizes.packed_units + kGuardUnits;
      row->checked += outputs;
      if (registry::Status s = entry.run(a); !s.ok) return internal::AddKernelError(text, s, outputs, row);
      return Compare(want, have, sizes.packed_units, "packed byte", 2, kGuardByte, text, row);
    }
    Output<std::uint32_t> want(sizes.packed_units, 0, kGuardWord);
    Output<std::uint32_t> have(sizes.packed_units, 0, kGuardWord);
    a.packed_words = want.data();
    if (registry::Status s = scalar.run(a); !s.ok) {
      row->skipped = "scalar: " + s.message;
      return;
    }
    a.packed_words = have.data();
    outputs = sizes.packed_units + kGuardUnits;
    row->checked += outputs;
    if (registry::Status s = entry.run(a); !s.ok) return internal::AddKernelError(text, s, outputs, row);
    return Compare(want, have, sizes.packed_units, "packed word", 8, kGuardWord, text, row);
  }
  // Unpack: any packed bytes or words.
  std::vector<std::uint8_t> in_bytes;
  std::vector<std::uint32_t> in_words;
  if (bytes) {
    in_bytes.resize(shape.offset + sizes.packed_units);
    for (std::uint8_t& b : in_bytes) b = static_cast<std::uint8_t>(rng.Next());
    a.in_bytes = in_bytes.data() + shape.offset;
  } else {
    in_words.resize(sizes.packed_units);
    for (std::uint32_t& w : in_words) w = static_cast<std::uint32_t>(rng.Next());
    a.in_words = in_words.data();
  }
  Output<std::uint8_t> want(sizes.codes, shape.offset, kGuardByte);
  Output<std::uint8_t> have(sizes.codes, shape.offset, kGuardByte);
  a.codes_out = want.data();
  if (registry::Status s = scalar.run(a); !s.ok) {
    row->skipped = "scalar: " + s.message;
    return;
  }
  a.codes_out = have.data();
  outputs = sizes.codes + kGuardUnits;
  row->checked += outputs;
  if (registry::Status s = entry.run(a); !s.ok) return internal::AddKernelError(text, s, outputs, row);
  Compare(want, have, sizes.codes, "code", 0, kGuardByte, text, row);
}

}  // namespace

bool Filter::Packing() const {
  if (format.empty()) return true;
  for (FormatId id : kAllFormats) {
    if (format == Spec(id).name) return Spec(id).total_bits == 4;
  }
  return false;
}

Row CheckPacking(const PackingEntry& entry, const PackingEntry* scalar, Level level) {
  Row row;
  row.kind = RowKind::kPacking;
  row.backend = entry.backend;
  row.operation = registry::PackDirectionName(entry.direction);
  row.format = registry::PackingLayoutName(entry.layout);
  const PackingLayoutInfo* info = registry::FindPackingLayoutInfo(entry.layout);
  if (info == nullptr) {
    row.skipped = "unknown packing layout";
  } else if (scalar == nullptr) {
    row.skipped = "no scalar row to compare with";
  } else if (!entry.available()) {
    row.skipped = "backend not available here";
  } else {
    internal::CheckShapesInTurn(Shapes(*info, level), &row, [&](const Shape& shape, std::uint64_t seed) {
      CheckShape(entry, *scalar, *info, shape, seed, &row);
    });
  }
  return row;
}

std::vector<Row> CheckPackings(const registry::Registry& registry, Level level, const Filter& filter,
                               Progress* progress) {
  return internal::CheckNonScalarRows(
      registry.PackingEntries(), filter.Packing(), filter, "packing vs model", progress, [&](const PackingEntry& entry) {
        return CheckPacking(entry, registry.FindPacking(entry.layout, entry.direction, "scalar"), level);
      });
}

}  // namespace lowbit::check
