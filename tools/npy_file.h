// Binary arrays for `lowbit check`: NumPy .npy files (format versions 1.0,
// 2.0 and 3.0, https://numpy.org/doc/stable/reference/generated/numpy.lib.format.html)
// and raw bytes. A file is .npy when it starts with the .npy magic
// ("\x93NUMPY"), whatever its name; anything else is raw.
//
// What a .npy header may say, and what lowbit does with it:
//   descr      one plain type: '<f8' '<f4' '<f2' (and '>' big-endian, swapped
//              to this machine's order), '|u1' '|i1' '<u2' '<i2' '<u4' '<i4'
//              '<u8' '<i8', and the opaque '<V1' / '<V2' / '<f1' that
//              ml_dtypes 0.6 writes for its types (bfloat16 is '<V2', the
//              float8 / float6 / float4 / int4 types '<V1', float8_e5m2
//              '<f1': the type's name is not in the file). Structured and
//              object dtypes are refused.
//   fortran_order  True: the items are read into C (row-major) order, so the
//              array means the same tensor either way.
//   shape      any number of dimensions; the element count and byte size
//              are checked for overflow (formats/checked_size.h) and must
//              equal the data that follows the header exactly.
// Every problem is a CommandError naming the option, the file and what is
// wrong (docs/bad-input.md "Command line").
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace lowbit::tools {

// The largest file `lowbit check` reads: 1 GiB (a 256 Mi-element FP32 tensor).
inline constexpr std::uint64_t kMaxArrayFileBytes = std::uint64_t{1} << 30;

struct BinaryArray {
  std::string name;   // "--input PATH", for messages
  bool npy = false;   // false: raw bytes (descr empty, item_bytes 1)
  std::string descr;  // as the header says: "<f4", "|u1", "<V2"
  char kind = 0;      // 'f' float, 'u' unsigned, 'i' signed, 'V' opaque (ml_dtypes); 0 raw
  int item_bytes = 1;
  std::vector<std::size_t> shape;  // C order; raw: one dimension, the byte count
  bool fortran_order = false;      // what the header said (the data is already in C order)
  std::vector<std::uint8_t> data;  // the items, C order, this machine's byte order
  std::size_t Count() const { return data.size() / static_cast<std::size_t>(item_bytes); }
};

// Reads the file at `path` for option `option` ("--input").
BinaryArray ReadArrayFile(const std::string& option, const std::string& path);

// A raw file read as items of `item_bytes` (its size must be a multiple);
// a .npy file must already have items of that size. `what` says what the
// items are ("e4m3 codes", "fp32 scales") for the message.
void RequireItemBytes(BinaryArray* array, int item_bytes, const std::string& what);

// "(3, 4)".
std::string ShapeText(const std::vector<std::size_t>& shape);

}  // namespace lowbit::tools
