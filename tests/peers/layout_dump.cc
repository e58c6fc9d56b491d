// The model's packing layouts (registry packing rows, backend "scalar": the
// formats/block/ functions) as a command for the live-peer test
// test_int4pack.py, which has no Python binding to call:
//   lowbit_layout_dump LAYOUT pack|unpack ROWS COLS IN_FILE OUT_FILE
// pack reads ROWS * COLS code bytes and writes the packed buffer (words as
// little-endian bytes); unpack the reverse. A bad argument prints the
// registry's message and exits 2.
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iostream>
#include <iterator>
#include <string>
#include <vector>

#include "lowbit/registry/registry.h"

namespace {

int Fail(const std::string& message) {
  std::cerr << "lowbit_layout_dump: " << message << "\n";
  return 2;
}

}  // namespace

int main(int argc, char** argv) {
  using namespace lowbit::registry;
  if (argc != 7) return Fail("usage: LAYOUT pack|unpack ROWS COLS IN_FILE OUT_FILE");
  PackingLayout layout{};
  if (!ParsePackingLayout(argv[1], &layout)) return Fail(std::string("unknown layout ") + argv[1]);
  const std::string direction = argv[2];
  if (direction != "pack" && direction != "unpack") return Fail("direction must be pack or unpack");
  const std::size_t rows = std::strtoull(argv[3], nullptr, 10), cols = std::strtoull(argv[4], nullptr, 10);
  const PackingSizes sizes = PackingBufferSizes(layout, rows, cols);
  if (!sizes.ok) return Fail(sizes.error);
  const PackingLayoutInfo& info = *FindPackingLayoutInfo(layout);
  const std::size_t packed_bytes = sizes.packed_units * PackedUnitBytes(info.unit);
  std::ifstream in(argv[5], std::ios::binary);
  const std::vector<char> input((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  const bool pack = direction == "pack";
  if (input.size() != (pack ? sizes.codes : packed_bytes)) {
    return Fail("input holds " + std::to_string(input.size()) + " bytes, expected " +
                std::to_string(pack ? sizes.codes : packed_bytes));
  }
  Registry registry;
  RegisterScalarPacking(registry);
  const PackingEntry* entry = registry.FindPacking(layout, pack ? PackDirection::kPack : PackDirection::kUnpack, "scalar");
  if (entry == nullptr) return Fail("no scalar row");
  std::vector<std::uint8_t> codes(sizes.codes), bytes(info.unit == PackedUnit::kByte ? packed_bytes : 0);
  std::vector<std::uint32_t> words(info.unit == PackedUnit::kWord32 ? sizes.packed_units : 0);
  PackingArgs a;
  a.layout = layout;
  a.direction = pack ? PackDirection::kPack : PackDirection::kUnpack;
  a.rows = rows;
  a.cols = cols;
  if (pack) {
    std::memcpy(codes.data(), input.data(), input.size());
  } else if (info.unit == PackedUnit::kByte) {
    std::memcpy(bytes.data(), input.data(), input.size());
  } else {
    std::memcpy(words.data(), input.data(), input.size());
  }
  a.codes = codes.data();
  a.codes_out = codes.data();
  a.packed_bytes = bytes.data();
  a.in_bytes = bytes.data();
  a.packed_words = words.data();
  a.in_words = words.data();
  std::vector<std::uint8_t> scratch_codes(sizes.codes);
  if (pack) {
    a.codes_out = nullptr;
  } else {
    a.codes_out = scratch_codes.data();  // distinct from the input (no in-place calls)
  }
  const Status s = entry->run(a);
  if (!s.ok) return Fail(s.message);
  std::ofstream out(argv[6], std::ios::binary);
  if (!pack) {
    out.write(reinterpret_cast<const char*>(scratch_codes.data()), static_cast<std::streamsize>(scratch_codes.size()));
  } else if (info.unit == PackedUnit::kByte) {
    out.write(reinterpret_cast<const char*>(bytes.data()), static_cast<std::streamsize>(bytes.size()));
  } else {
    out.write(reinterpret_cast<const char*>(words.data()), static_cast<std::streamsize>(packed_bytes));
  }
  return out ? 0 : Fail(std::string("cannot write ") + argv[6]);
}
