// The tensor-core GEMV's weight packing on the device (tc_gemv_pack_device.h):
// one block of 64 threads per packed tile (batch l, row tile r, K tile j),
// each thread one (row half, lane) of each part of the tile's codes, eight threads the
// scale bytes of the eight lane groups, staged in shared memory so that one
// thread can derive the tile's plain flag from the whole record, as the host
// packer does from the bytes it wrote.
#include "tc_gemv_pack_device.h"

#include <cuda_runtime.h>

#include <cstdint>
#include <cstring>
#include <string>

namespace lowbit::cuda::tc_gemv {
namespace {

constexpr int kPackThreads = 2 * kWarpSize;  // one per (row half, lane) of a tile
constexpr int kMaxScaleBytesPerTile = ScaleBytesPerTile(matmul::kNvfp4Block);
static_assert(ScaleBytesPerTile(matmul::kMxBlock) <= kMaxScaleBytesPerTile &&
                  ScaleBytesPerTile(kUint4RecordBlock) <= kMaxScaleBytesPerTile,
              "the shared record fits every codec's");

}  // namespace

// The shape of the packed tiles, for the kernel.
struct PackGeometry {
  std::int64_t row_tiles;
  std::int64_t k_tiles;
  std::int64_t tiles;
  std::uint8_t padding_scale;
};

// External linkage: the device pass of this file sees no launch of it.
__global__ void __launch_bounds__(kPackThreads)
    PackTcGemvTiles(const matmul::WeightView w, const PackGeometry geo, std::uint8_t* codes, std::uint8_t* scales,
                    float* column_scales, std::uint8_t* plain_tiles) {
  __shared__ std::uint8_t record[kMaxScaleBytesPerTile];
  const TileCodec codec = PackedCodecOf(w);
  const int block = RecordBlockOf(codec);
  const int record_bytes = ScaleBytesPerTile(block);
  const int group_bytes = GroupScaleByteCount(block);
  const int half = static_cast<int>(threadIdx.x) / kWarpSize;
  const int lane = static_cast<int>(threadIdx.x) % kWarpSize;
  // The same trip count in every thread of a block: the barriers below are uniform.
  for (std::int64_t tile = blockIdx.x; tile < geo.tiles; tile += gridDim.x) {
    const std::int64_t j = tile % geo.k_tiles;
    const std::int64_t r = tile / geo.k_tiles % geo.row_tiles;
    const std::int64_t l = tile / geo.k_tiles / geo.row_tiles;
    // The tile index is the plain flag's: (l * row_tiles + r) * k_tiles + j.
    bool holds_nan = false;
    for (int part = 0; part < CodePartsOf(codec); ++part) {
      const LaneCodeBytes lane_codes = PackedLaneCodes(w, l, r, j, lane, half, part);
      holds_nan = holds_nan || HoldsE4m3Nan(lane_codes);
      uint4 word;
      static_assert(sizeof(word) == sizeof(lane_codes.bytes), "one 16-byte store per lane, half and part");
      memcpy(&word, lane_codes.bytes, sizeof(word));
      // 16-byte aligned: the buffer is (checked on the host), and so is every offset.
      static_assert(kCodeBytesPerPart % 16 == 0 && kCodeBytesPerLaneHalf % 16 == 0 && kCodeBytesPerHalf % 16 == 0);
      *reinterpret_cast<uint4*>(codes + CodeTileOffset(l, r, j, geo.row_tiles, geo.k_tiles, codec) +
                                CodeLaneOffset(half, lane, part)) = word;
    }
    if (threadIdx.x < kTileRows / 2) {
      const int group = static_cast<int>(threadIdx.x);
      const GroupScaleBytes group_scales = PackedGroupScales(w, l, r, j, group, geo.padding_scale);
      for (int b = 0; b < group_bytes; ++b) record[ScaleLaneOffset(group, block) + b] = group_scales.bytes[b];
    }
    if (j == 0 && threadIdx.x < kTileRows) {
      const int row = static_cast<int>(threadIdx.x);
      column_scales[(l * geo.row_tiles + r) * kTileRows + row] = PackedColumnScale(w, l, r, row);
    }
    const bool tile_holds_nan = __syncthreads_or(holds_nan) != 0;  // and the record is whole
    std::uint8_t* tile_scales = scales + ScaleTileOffset(l, r, j, geo.row_tiles, geo.k_tiles, block);
    for (int i = static_cast<int>(threadIdx.x); i < record_bytes; i += kPackThreads) tile_scales[i] = record[i];
    if (threadIdx.x == 0) plain_tiles[tile] = PlainTileByte(codec, record, tile_holds_nan);
    __syncthreads();  // the record is read before the next tile overwrites it
  }
}

// The host side: the checks call ValidateWeights, which is host code
// (weights.h), so the device pass of this file does not see them.
#if !defined(__CUDA_ARCH__)
namespace {

// Blocks of the grid; each walks the tiles with a stride of the grid.
constexpr std::int64_t kMaxPackBlocks = 1 << 16;

// The line PackForTcGemvOnDevice returns when it is built at run time.
const char* Line(std::string line) {
  thread_local std::string last;
  last = std::move(line);
  return last.c_str();
}

const char* SizeProblem(const char* what, const void* p, std::int64_t have, std::int64_t need, std::size_t alignment,
                        const char* units) {
  if (p == nullptr) return Line(std::string("the packed ") + what + " buffer is null");
  if (reinterpret_cast<std::uintptr_t>(p) % alignment != 0) {
    return Line(std::string("the packed ") + what + " buffer is not aligned to " + std::to_string(alignment) + " bytes");
  }
  if (have < need) {
    return Line(std::string("the packed ") + what + " buffer holds " + std::to_string(have) + " " + units +
                ", the weights need " + std::to_string(need));
  }
  return nullptr;
}

// Why W's packed copy cannot be sized in 64 bits (a W shared across the
// batch, batch stride 0, passes ValidateWeights at any L, but its packed copy
// is L times as large); nullptr when it can. The codes are the largest buffer.
const char* PackedSizeProblem(const matmul::WeightView& w) {
  const __int128 tiles = static_cast<__int128>(w.batch) * matmul::CeilDiv(w.n, kTileRows) * matmul::CeilDiv(w.k, kKTile);
  return tiles * CodeBytesPerTile(PackedCodecOf(w)) > INT64_MAX ? "the packed weights' size overflows 64 bits" : nullptr;
}

}  // namespace

bool DeviceCanRead(const void* p) {
  cudaPointerAttributes a{};
  if (cudaPointerGetAttributes(&a, p) != cudaSuccess) {
    cudaGetLastError();  // not sticky: clear it for the caller
    return false;
  }
  return a.type == cudaMemoryTypeDevice || a.type == cudaMemoryTypeManaged || a.type == cudaMemoryTypeHost;
}

namespace {

// Why the kernel could not read W's buffers; nullptr when it can
// (ValidateWeights has checked that they are not null).
const char* WeightMemoryProblem(const matmul::WeightView& w) {
  if (!DeviceCanRead(w.codes)) return "the weight codes are not device memory";
  if (!DeviceCanRead(w.scales)) return "the weight scales are not device memory";
  if (w.tensor_scale != nullptr && !DeviceCanRead(w.tensor_scale)) return "the tensor scale is not device memory";
  return nullptr;
}

// Queues the kernel on checked weights and outputs.
const char* LaunchPacking(const matmul::WeightView& w, const PackedSizes& sizes, const DevicePackTarget& out,
                          cudaStream_t stream) {
  PackGeometry geo;
  geo.row_tiles = sizes.row_tiles;
  geo.k_tiles = sizes.k_tiles;
  geo.tiles = sizes.plain_tiles;
  geo.padding_scale = PaddingScaleByte(RecordScaleTypeOf(PackedCodecOf(w)));
  const unsigned blocks = static_cast<unsigned>(geo.tiles < kMaxPackBlocks ? geo.tiles : kMaxPackBlocks);
  PackTcGemvTiles<<<blocks, kPackThreads, 0, stream>>>(w, geo, out.codes, out.scales, out.column_scales, out.plain_tiles);
  if (const cudaError_t e = cudaGetLastError(); e != cudaSuccess) {
    return Line(std::string("the packing kernel did not launch: ") + cudaGetErrorString(e));
  }
  return nullptr;
}

}  // namespace

const char* PackForTcGemvOnDevice(const matmul::WeightView& w, const DevicePackTarget& out, cudaStream_t stream) {
  if (const std::string why = PackError(w); !why.empty()) return Line(why);
  if (const char* why = PackedSizeProblem(w)) return why;
  const PackedSizes sizes = PackedSizesOf(w.n, w.k, w.batch, PackedCodecOf(w));
  if (const char* why = SizeProblem("codes", out.codes, out.code_bytes, sizes.code_bytes, 16, "bytes")) return why;
  if (const char* why = SizeProblem("scales", out.scales, out.scale_bytes, sizes.scale_bytes, 16, "bytes")) return why;
  if (const char* why = SizeProblem("column scales", out.column_scales, out.column_scale_count, sizes.column_scales,
                                    alignof(float), "floats")) {
    return why;
  }
  if (const char* why = SizeProblem("plain tiles", out.plain_tiles, out.plain_tile_count, sizes.plain_tiles, 1, "bytes")) {
    return why;
  }
  if (const char* why = WeightMemoryProblem(w)) return why;
  if (!DeviceCanRead(out.codes) || !DeviceCanRead(out.scales) || !DeviceCanRead(out.column_scales) ||
      !DeviceCanRead(out.plain_tiles)) {
    return "a packed buffer is not device memory";
  }
  return LaunchPacking(w, sizes, out, stream);
}

const char* DeviceTcGemvWeights::Pack(const matmul::WeightView& w) {
  if (weights_.codes != nullptr) return "these packed weights are already packed (one Pack per object)";
  if (const std::string why = PackError(w); !why.empty()) return Line(why);
  if (const char* why = PackedSizeProblem(w)) return why;
  if (const char* why = WeightMemoryProblem(w)) return why;
  const PackedSizes sizes = PackedSizesOf(w.n, w.k, w.batch, PackedCodecOf(w));
  cudaError_t e = codes_.Allocate(static_cast<std::size_t>(sizes.code_bytes));
  if (e == cudaSuccess) e = scales_.Allocate(static_cast<std::size_t>(sizes.scale_bytes));
  if (e == cudaSuccess) e = column_scales_.Allocate(static_cast<std::size_t>(sizes.column_scales) * sizeof(float));
  if (e == cudaSuccess) e = plain_tiles_.Allocate(static_cast<std::size_t>(sizes.plain_tiles));
  if (e != cudaSuccess) return Line(std::string("allocating the packed weights failed: ") + cudaGetErrorString(e));
  DevicePackTarget out;
  out.codes = static_cast<std::uint8_t*>(codes_.get());
  out.code_bytes = sizes.code_bytes;
  out.scales = static_cast<std::uint8_t*>(scales_.get());
  out.scale_bytes = sizes.scale_bytes;
  out.column_scales = static_cast<float*>(column_scales_.get());
  out.column_scale_count = sizes.column_scales;
  out.plain_tiles = static_cast<std::uint8_t*>(plain_tiles_.get());
  out.plain_tile_count = sizes.plain_tiles;
  // The pool's buffers, sized here: only the alignment is left to check.
  if (reinterpret_cast<std::uintptr_t>(out.codes) % 16 != 0 || reinterpret_cast<std::uintptr_t>(out.scales) % 16 != 0) {
    return "the scratch pool gave packed buffers that are not 16-byte aligned";
  }
  if (const char* why = LaunchPacking(w, sizes, out, stream_)) return why;
  static_cast<PackedShape&>(weights_) = PackedShapeOf(w);
  weights_.codes = out.codes;
  weights_.scales = out.scales;
  weights_.column_scales = out.column_scales;
  weights_.plain_tiles = out.plain_tiles;
  return nullptr;
}

#endif  // !defined(__CUDA_ARCH__)

}  // namespace lowbit::cuda::tc_gemv
