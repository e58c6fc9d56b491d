// Helper of scripts/gpu/int4pack_check.py (built by it with g++, header-only
// model, nothing else): the model's tinygemm int4pack layout
// (formats/block/tinygemm_int4pack.h) of a [N][K] code matrix.
//   int4pack_dump pack|unpack INNER_K_TILES N K IN_FILE OUT_FILE
// pack: N * K code bytes -> the int32 words as little-endian bytes;
// unpack: the words -> N * K code bytes.
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iostream>
#include <iterator>
#include <string>
#include <vector>

#include "lowbit/formats/block/tinygemm_int4pack.h"

int main(int argc, char** argv) {
  if (argc != 7) {
    std::cerr << "usage: int4pack_dump pack|unpack INNER_K_TILES N K IN OUT\n";
    return 2;
  }
  const bool pack = std::string(argv[1]) == "pack";
  const int tiles = std::atoi(argv[2]);
  const std::int64_t n = std::atoll(argv[3]), k = std::atoll(argv[4]);
  if (!lowbit::block::TinygemmInnerKTilesValid(tiles) || n <= 0 || k <= 0 || k % (16 * tiles) != 0) {
    std::cerr << "int4pack_dump: inner_k_tiles must be 2, 4 or 8 and K a multiple of 16 * inner_k_tiles\n";
    return 2;
  }
  std::ifstream in(argv[5], std::ios::binary);
  const std::vector<char> input((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  const std::int64_t words = lowbit::block::TinygemmInt4packWords(n, k);
  std::vector<std::uint32_t> w(static_cast<std::size_t>(words));
  std::vector<std::uint8_t> q(static_cast<std::size_t>(n * k));
  std::ofstream out(argv[6], std::ios::binary);
  if (pack) {
    if (input.size() != q.size()) return std::cerr << "int4pack_dump: wrong input size\n", 2;
    std::memcpy(q.data(), input.data(), q.size());
    lowbit::block::PackTinygemmInt4(q.data(), n, k, tiles, w.data());
    out.write(reinterpret_cast<const char*>(w.data()), static_cast<std::streamsize>(w.size() * 4));
  } else {
    if (input.size() != w.size() * 4) return std::cerr << "int4pack_dump: wrong input size\n", 2;
    std::memcpy(w.data(), input.data(), input.size());
    lowbit::block::UnpackTinygemmInt4(w.data(), n, k, tiles, q.data());
    out.write(reinterpret_cast<const char*>(q.data()), static_cast<std::streamsize>(q.size()));
  }
  return out ? 0 : 2;
}
