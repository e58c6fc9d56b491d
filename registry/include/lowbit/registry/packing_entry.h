// Packing rows: the layouts that store 4-bit codes two to a byte or eight to
// a 32-bit word (formats/block/packing.h, docs/formats-reference.md §8.3), one
// registry row per (layout, direction, backend), beside the element
// conversions (registry.h) and the recipe rows (recipe_entry.h). Buffers are
// typed (codes as bytes, packed data as bytes or uint32 words, per the
// layout), sized by one metadata table (kPackingLayoutInfo) that the
// argument checks, the harness (check/), the tests and the CLI read.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <iterator>
#include <string>
#include <string_view>

namespace lowbit::registry {

struct Status;

enum class PackingLayout : std::uint8_t {
  kNibblesLowFirst,   // two codes per byte, element 0 in bits 3..0
  kNibblesHighFirst,  // two codes per byte, element 0 in bits 7..4
  kGptqQweight,       // [K][N] codes -> [K / 8][N] words, packed along K
  kGptqQzeros,        // [groups][N] zero points -> [groups][N / 8] words, stored as zero - 1
  kAwq,               // [rows][N] codes -> [rows][N / 8] words, order_map interleave
};

enum class PackDirection : std::uint8_t {
  kPack,    // codes -> packed bytes or words
  kUnpack,  // packed bytes or words -> codes
};

inline constexpr PackDirection kAllPackDirections[] = {PackDirection::kPack, PackDirection::kUnpack};

// What one packed unit is: a byte (nibble layouts) or a 32-bit word
// (GPTQ / AWQ, int32 tensors in those libraries, read as uint32 here).
enum class PackedUnit : std::uint8_t { kByte, kWord32 };

// One row of the metadata table: the layout's name, its size rules and
// where it comes from. The code matrix is [rows][cols] (a 1-D count is
// rows = 1); codes are 4-bit (0..15), a pack masks higher bits away as the
// model does.
struct PackingLayoutInfo {
  PackingLayout layout;
  const char* name;        // stable lower-case name: "nibbles-low-first"
  PackedUnit unit;
  int codes_per_unit;      // 2 (byte) or 8 (word)
  // rows and cols must be multiples of these (1: any). A word holds eight
  // rows of K (GPTQ qweight) or eight columns of N (GPTQ qzeros, AWQ).
  int rows_multiple;
  int cols_multiple;
  const char* rows_name;   // what rows / cols are, for messages: "K", "groups"
  const char* cols_name;
  const char* shape;       // "[rows][cols] codes <-> [rows / 8][cols] words"
  const char* source;      // who uses it (packing.h has the citations)
};

inline constexpr PackingLayoutInfo kPackingLayoutInfo[] = {
    {PackingLayout::kNibblesLowFirst, "nibbles-low-first", PackedUnit::kByte, 2, 1, 1, "rows", "cols",
     "n codes <-> (n + 1) / 2 bytes, element 0 in the low nibble",
     "ONNX int4, PyTorch float4_e2m1fn_x2, CUDA __nv_fp4x2, TE, torchao pack_uint4"},
    {PackingLayout::kNibblesHighFirst, "nibbles-high-first", PackedUnit::kByte, 2, 1, 1, "rows", "cols",
     "n codes <-> (n + 1) / 2 bytes, element 0 in the high nibble",
     "tinygemm _convert_weight_to_int4pack input (torchao q[::2] << 4 | q[1::2])"},
    {PackingLayout::kGptqQweight, "gptq-qweight", PackedUnit::kWord32, 8, 8, 1, "K", "N",
     "[K][N] codes <-> [K / 8][N] words, row j of eight in bits 4j..4j+3", "GPTQ / AutoGPTQ qweight"},
    {PackingLayout::kGptqQzeros, "gptq-qzeros", PackedUnit::kWord32, 8, 1, 8, "groups", "N",
     "[groups][N] zero points <-> [groups][N / 8] words of zero - 1", "GPTQ / AutoGPTQ qzeros"},
    {PackingLayout::kAwq, "awq", PackedUnit::kWord32, 8, 1, 8, "rows", "N",
     "[rows][N] codes <-> [rows][N / 8] words, order_map 0,2,4,6,1,3,5,7", "AWQ WQLinear_GEMM qweight / qzeros"},
};

inline constexpr PackingLayout kAllPackingLayouts[] = {
    PackingLayout::kNibblesLowFirst, PackingLayout::kNibblesHighFirst, PackingLayout::kGptqQweight,
    PackingLayout::kGptqQzeros, PackingLayout::kAwq};
static_assert(std::size(kPackingLayoutInfo) == std::size(kAllPackingLayouts),
              "one metadata row per packing layout");

// The metadata row of `layout`, or nullptr for a value outside the enum.
constexpr const PackingLayoutInfo* FindPackingLayoutInfo(PackingLayout layout) {
  for (const PackingLayoutInfo& info : kPackingLayoutInfo) {
    if (info.layout == layout) return &info;
  }
  return nullptr;
}

// "nibbles-low-first", ... ("unknown-packing" outside the enum).
constexpr const char* PackingLayoutName(PackingLayout layout) {
  const PackingLayoutInfo* info = FindPackingLayoutInfo(layout);
  return info != nullptr ? info->name : "unknown-packing";
}
// "pack" / "unpack".
constexpr const char* PackDirectionName(PackDirection direction) {
  return direction == PackDirection::kPack ? "pack" : "unpack";
}
// The layout named `name` (PackingLayoutInfo::name); false for any other.
bool ParsePackingLayout(std::string_view name, PackingLayout* out);

constexpr std::size_t PackedUnitBytes(PackedUnit unit) { return unit == PackedUnit::kByte ? 1 : 4; }

// The element counts of a [rows][cols] code matrix in `layout`: codes
// (rows * cols) and packed units (bytes or words: ceil(codes /
// codes_per_unit), exact for the word layouts, whose shape rules make it
// whole). ok false with a message naming the problem: an unknown layout, a
// dimension that is not a multiple of what the layout needs, a code count
// past 2^63 - 1 (the model's 64-bit signed indices) or whose product
// overflows (formats/checked_size.h CheckedElementCount).
struct PackingSizes {
  bool ok = false;
  std::string error;
  std::size_t codes = 0;
  std::size_t packed_units = 0;
};
PackingSizes PackingBufferSizes(PackingLayout layout, std::size_t rows, std::size_t cols);

// One call of a packing row. Pack reads `codes` and writes `packed_bytes`
// (byte layouts) or `packed_words` (word layouts); unpack reads the packed
// buffer and writes `codes_out`. Only the buffers the layout and direction
// use are read; each must hold PackingBufferSizes' count.
struct PackingArgs {
  PackingLayout layout = PackingLayout::kNibblesLowFirst;
  PackDirection direction = PackDirection::kPack;
  std::size_t rows = 1;  // a 1-D nibble stream of n codes: rows = 1, cols = n
  std::size_t cols = 0;
  const std::uint8_t* codes = nullptr;         // pack input
  std::uint8_t* packed_bytes = nullptr;        // pack output, byte layouts
  std::uint32_t* packed_words = nullptr;       // pack output, word layouts
  const std::uint8_t* in_bytes = nullptr;      // unpack input, byte layouts
  const std::uint32_t* in_words = nullptr;     // unpack input, word layouts
  std::uint8_t* codes_out = nullptr;           // unpack output
};

// What every packing backend checks first, so that each names the same
// problem the same way: an unknown layout or direction, a shape the layout
// does not take or whose sizes overflow (PackingBufferSizes), a null buffer
// that the call reads or writes (zero codes with null buffers is valid), a
// word buffer not aligned to 4 bytes, an output that overlaps the input
// (docs/bad-input.md). Messages start with the
// layout and direction: "gptq-qweight pack: K = 12 is not a multiple of 8".
Status ValidatePackingArgs(const PackingArgs& args);

struct PackingEntry {
  PackingLayout layout;
  PackDirection direction;
  std::string backend;  // "scalar", "simd:AVX2", ...
  // False when the backend cannot run here: shown as skipped, never passed.
  std::function<bool()> available;
  std::function<Status(const PackingArgs&)> run;
};

}  // namespace lowbit::registry
