// Packing rows: the layouts that store 4-bit codes two to a byte or eight to
// a 32-bit word (formats/block/packing.h, docs/formats-reference.md §8.3), the
// GEMM weight layouts (tinygemm_int4pack.h, marlin_layout.h) and the swizzled
// block-scale layout (swizzled_scales.h, one byte per scale; docs/layouts.md), one
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
  kTinygemmInt4packK2,  // torch _convert_weight_to_int4pack(w, 2) on CUDA: [N][K] codes -> m16n8k16 words
  kTinygemmInt4packK4,  // ... inner_k_tiles = 4
  kTinygemmInt4packK8,  // ... inner_k_tiles = 8
  kTorchCpuInt4packAvx512,   // _convert_weight_to_int4pack_for_cpu on AVX512 (64-row blocks)
  kTorchCpuInt4packAvx2,     // ... on AVX2 (32-row blocks)
  kTorchCpuInt4packDefault,  // ... without vector ISA (row pairs)
  kMarlin,            // Marlin's tile permutation: [K][N] codes -> [K / 16][2 N] words
  kSwizzledScales,    // [rows][cols] scale bytes -> 128 x 4 tiles (cuBLASLt / CUTLASS / TE)
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
// rows = 1); codes are code_bits wide: 4-bit codes (0..15) have their higher
// bits masked away by a pack as the model does, 8-bit ones (scale bytes) are
// moved whole. A layout that pads (tinygemm: N to whole 8-row tiles; the
// swizzled scales: rows to 128, cols to 4) packs rows_padded_to /
// cols_padded_to multiples, the padding 0; unpacking drops it.
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
  int code_bits = 4;       // 4: uint4 codes; 8: whole bytes (scale codes)
  int rows_padded_to = 1;  // the packed buffer holds rows and cols rounded up to these
  int cols_padded_to = 1;
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
    {PackingLayout::kTinygemmInt4packK2, "tinygemm-int4pack-k2", PackedUnit::kWord32, 8, 1, 32, "N", "K",
     "[N][K] codes <-> int32 [ceil(N / 8)][K / 32][32][1], N padded to 8",
     "torch _convert_weight_to_int4pack(w, 2) on CUDA (int4mm.cu), read by _weight_int4pack_mm", 4, 8, 1},
    {PackingLayout::kTinygemmInt4packK4, "tinygemm-int4pack-k4", PackedUnit::kWord32, 8, 1, 64, "N", "K",
     "[N][K] codes <-> int32 [ceil(N / 8)][K / 64][32][2], N padded to 8",
     "torch _convert_weight_to_int4pack(w, 4) on CUDA (int4mm.cu), read by _weight_int4pack_mm", 4, 8, 1},
    {PackingLayout::kTinygemmInt4packK8, "tinygemm-int4pack-k8", PackedUnit::kWord32, 8, 1, 128, "N", "K",
     "[N][K] codes <-> int32 [ceil(N / 8)][K / 128][32][4], N padded to 8",
     "torch _convert_weight_to_int4pack(w, 8) on CUDA (int4mm.cu), read by _weight_int4pack_mm", 4, 8, 1},
    {PackingLayout::kTorchCpuInt4packAvx512, "torch-cpu-int4pack-avx512", PackedUnit::kByte, 2, 16, 2, "N", "K",
     "[N][K] codes <-> uint8 [N][K / 2], 64-row blocks pairing rows r and r + 32",
     "torch _convert_weight_to_int4pack_for_cpu dispatched to AVX512 (int4mm_kernel.cpp)"},
    {PackingLayout::kTorchCpuInt4packAvx2, "torch-cpu-int4pack-avx2", PackedUnit::kByte, 2, 16, 2, "N", "K",
     "[N][K] codes <-> uint8 [N][K / 2], 32-row blocks pairing rows r and r + 16",
     "torch _convert_weight_to_int4pack_for_cpu dispatched to AVX2 (int4mm_kernel.cpp)"},
    {PackingLayout::kTorchCpuInt4packDefault, "torch-cpu-int4pack-default", PackedUnit::kByte, 2, 16, 2, "N", "K",
     "[N][K] codes <-> uint8 [N][K / 2], 32-row blocks pairing rows 2m and 2m + 1",
     "torch _convert_weight_to_int4pack_for_cpu without a vector ISA (int4mm_kernel.cpp)"},
    {PackingLayout::kMarlin, "marlin", PackedUnit::kWord32, 8, 16, 64, "K", "N",
     "[K][N] codes <-> int32 [K / 16][N * 2], 16x16 tiles permuted by _perm",
     "Marlin Layer.pack (IST-DASLab/marlin), vLLM gptq_marlin"},
    {PackingLayout::kSwizzledScales, "swizzled-scales", PackedUnit::kByte, 1, 1, 1, "rows", "cols",
     "[rows][cols] scale bytes <-> 128 x 4 tiles, rows padded to 128 and cols to 4",
     "cuBLASLt 1D block scaling factors layout (MXFP8, MXFP4, NVFP4), CUTLASS, TE, torchao to_blocked", 8, 128,
     4},
};

inline constexpr PackingLayout kAllPackingLayouts[] = {
    PackingLayout::kNibblesLowFirst, PackingLayout::kNibblesHighFirst, PackingLayout::kGptqQweight,
    PackingLayout::kGptqQzeros, PackingLayout::kAwq, PackingLayout::kTinygemmInt4packK2,
    PackingLayout::kTinygemmInt4packK4, PackingLayout::kTinygemmInt4packK8, PackingLayout::kTorchCpuInt4packAvx512,
    PackingLayout::kTorchCpuInt4packAvx2, PackingLayout::kTorchCpuInt4packDefault, PackingLayout::kMarlin,
    PackingLayout::kSwizzledScales};
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
// inner_k_tiles of a tinygemm layout (2, 4, 8), 0 for any other layout.
constexpr int TinygemmInnerKTilesOf(PackingLayout layout) {
  switch (layout) {
    case PackingLayout::kTinygemmInt4packK2: return 2;
    case PackingLayout::kTinygemmInt4packK4: return 4;
    case PackingLayout::kTinygemmInt4packK8: return 8;
    default: return 0;
  }
}
// The instruction set of a torch CPU int4pack layout as the value of
// block::TorchCpuInt4packIsa (0 AVX512, 1 AVX2, 2 default), -1 for any other.
constexpr int TorchCpuInt4packIsaOf(PackingLayout layout) {
  switch (layout) {
    case PackingLayout::kTorchCpuInt4packAvx512: return 0;
    case PackingLayout::kTorchCpuInt4packAvx2: return 1;
    case PackingLayout::kTorchCpuInt4packDefault: return 2;
    default: return -1;
  }
}

// "pack" / "unpack".
constexpr const char* PackDirectionName(PackDirection direction) {
  return direction == PackDirection::kPack ? "pack" : "unpack";
}
// The layout named `name` (PackingLayoutInfo::name); false for any other.
bool ParsePackingLayout(std::string_view name, PackingLayout* out);

constexpr std::size_t PackedUnitBytes(PackedUnit unit) { return unit == PackedUnit::kByte ? 1 : 4; }

// The element counts of a [rows][cols] code matrix in `layout`: codes
// (rows * cols) and packed units (bytes or words: ceil(padded rows *
// padded cols / codes_per_unit), exact for the word layouts, whose shape
// rules make it whole). ok false with a message naming the problem: an unknown layout, a
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
