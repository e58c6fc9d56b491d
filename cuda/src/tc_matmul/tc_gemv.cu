// The tensor-core GEMV: y = x * W^T for NVFP4 / MXFP4 / MXFP8 / FP8
// per-channel weights and BF16 x, or UINT4 weights (GPTQ / AWQ) and x of
// their scales' type, FP16 or BF16
// (packed once by tc_gemv_pack.h PackForTcGemv; the codec, tc_gemv_lanes.h
// TileCodec, is a template parameter), M = 1..16, on
// `mma.sync.aligned.m16n8k16.row.col.f32.{bf16,f16}` with the weights as
// the A operand. Its output is matmul::QuantizedMatmulModel under the
// schedule tc_gemv_lanes.h ScheduleOf declares, bit for bit.
//
// Work: a block of WarpsOf warps (kWarpsPerBlock; 16 for the 4-bit codecs
// at M > 8, two blocks an SM, so that each row of x staged feeds twice the
// weights), each warp one tile of 16 output channels, all warps sharing x;
// the split-K parts (ScheduleOf) do not depend on it. blockIdx.y is the
// split-K part (the chunks PartChunks gives it), blockIdx.z the batch. Per
// part the block stages x into shared memory kStageTiles K tiles at a time
// (zero past K; rows past M zeroed once; with two buffers, XBuffersOf, the
// next stage's copies go out by cp.async while the warps multiply the
// current one, else each next stage waits at a barrier), and each warp
// walks its part's chunks in increasing K, one chain of MMAs from C = +0
// (the schedule's step 3, no promotion). Per K tile a
// lane loads two (E4M3: four) 16-byte words of codes (.nc, L1::no_allocate: read once)
// and one 16- or 8-byte word of scale codes, decodes each pair of weights
// with the scale folded in (DecodePair) and reads x with one 8-byte
// shared-memory load per chunk and n-tile. The next tile's loads are issued
// before the current tile's MMAs. With one part the epilogue runs here.
// With up to kMaxClusterParts whose clusters fit the GPU at once (Launch),
// the parts of a row group are one thread-block cluster and add their
// values through distributed shared memory; otherwise each part's FP32
// value goes to the workspace and the last block of each row group to
// finish adds the parts in order and runs the epilogue: the same
// additions in the same order either way. One launch in every case. Every
// block reads nothing but weights before the previous kernel on the stream
// has finished (the E4M3 codecs copy their first tile to shared memory
// there besides the one in registers: PreWaitTilesOf), and lets the next
// one start (programmatic dependent launch,
// LaunchOptions::overlap_previous_kernel): at once when K is split, after
// its main loop when the grid has one part (KernelParams::trigger_after_loop).
#include <cooperative_groups.h>
#include <cuda_runtime.h>

#include <cstdint>
#include <map>
#include <mutex>

#include "lowbit/formats/matmul/accumulation_schedule.h"
#include "../ptx.cuh"
#include "tc_gemv.h"
#include "tc_gemv_lanes.h"
#include "../tensor_core_ptx.cuh"

namespace lowbit::cuda::tc_gemv {
namespace {

// The threads whose words the pre-wait slots hold: those of an 8-warp block
// (the E4M3 instances, the only ones that take such slots).
inline constexpr int kPreWaitThreads = kWarpsPerBlock * kWarpSize;
#if defined(LOWBIT_TC_GEMV_M16_WARPS)  // a measuring build's choice
inline constexpr int kM16Warps = LOWBIT_TC_GEMV_M16_WARPS;
#else
inline constexpr int kM16Warps = 16;
#endif
// Warps a block of an instance: the 4-bit codecs at M > 8 take 16 warps
// (two blocks an SM) so that each staged row of x feeds twice the weights.
template <int kNTiles, TileCodec kCodec>
constexpr int WarpsOf() {
  return kNTiles == 2 && !IsE4m3(kCodec) ? kM16Warps : kWarpsPerBlock;
}
template <int kNTiles, TileCodec kCodec>
constexpr int BlocksPerSmOfInstance() {
  return static_cast<int>(BlocksPerSmOf(kCodec)) * kWarpsPerBlock / WarpsOf<kNTiles, kCodec>();
}
#if defined(LOWBIT_TC_GEMV_X_BUFFERS)  // a measuring build's choice
inline constexpr int kWantedXBuffers = LOWBIT_TC_GEMV_X_BUFFERS;
#else
inline constexpr int kWantedXBuffers = 2;
#endif
// Tile indices and byte offsets within a row tile's K tiles stay in int.
inline constexpr std::int64_t kMaxKTiles = (std::int64_t{1} << 26) / kKTile;
static_assert(kMaxKTiles * kMaxCodeBytesPerTile < (std::int64_t{1} << 31), "a row tile's codes addressed by int");
// The 8-byte x loads of a half warp (groups g, g + 1, g + 2, g + 3; index
// t) hit 16 distinct 8-byte slots of the 128-byte bank line: rows are 32
// bytes apart modulo 128, the four lanes of a group 8 bytes apart.
static_assert(SharedXStride(kStageK) * 2 % 128 == 32, "x rows 32 bytes apart modulo the 32 banks");

// The 256 scale operands (ScaleOperandCode) of each scale type, computed by
// the compiler from the model; each block copies its type's table into
// shared memory (one load per thread) instead of running the model's decode.
struct ScaleTables {
  std::uint16_t code[2][256];
};
constexpr ScaleTables MakeScaleTables() {
  ScaleTables t{};
  for (int b = 0; b < 256; ++b) {
    t.code[0][b] = ScaleOperandCode(ScaleType::kUe4m3, static_cast<std::uint8_t>(b));
    t.code[1][b] = ScaleOperandCode(ScaleType::kE8m0, static_cast<std::uint8_t>(b));
  }
  return t;
}
__device__ const ScaleTables kScaleTables = MakeScaleTables();

struct KernelParams {
  const std::uint8_t* codes;
  const std::uint8_t* scales;
  const float* column_scales;
  const std::uint8_t* plain_tiles;
  const std::uint16_t* x;
  void* y;
  float* workspace;    // the split-K parts, past the counters
  unsigned* counters;  // the workspace's head: one per row group and batch entry
  std::int64_t m, n, k, row_tiles, k_tiles;
  AccumulationSchedule schedule;
  bool parts_in_cluster;  // the split-K parts of a row group are one thread-block cluster
  // Whether the dependent-launch trigger comes after the main loop rather
  // than at the start: for grids of one part. On an H100 that took MXFP8
  // at M = 1 from 99.2 to 82.1 us (28672 x 8192), 91.0 to 81.7 (4096 x 7168
  // x 8) and 27.3 to 22.5 (7168 x 2048 x 4) overlapped, and cost the split
  // grids up to 1.9 us (bench/RESULTS.md, "Measuring builds of the
  // tensor-core GEMV"). Why is not measured; a one-part grid leaves
  // resident slots free, which an early trigger opens to the next call's
  // blocks while this grid still streams its weights.
  bool trigger_after_loop;
};

__device__ inline void StoreOutput(const KernelParams& p, std::int64_t index, std::uint32_t code) {
  if (p.schedule.output == FormatId::kFp32) {
    static_cast<std::uint32_t*>(p.y)[index] = code;
  } else {
    static_cast<std::uint16_t*>(p.y)[index] = static_cast<std::uint16_t>(code);
  }
}

// One lane's loads for one K tile: two (4-bit codes) or four (E4M3) 16-byte
// words of codes from `codes` (the lane's bytes of the tile's first part
// and half: CodeLaneOffset(half, lane, part) is linear) and one 16-byte
// (NVFP4) or 8-byte (the others) word of the scale record from `scales` (the
// lane's bytes of the tile's record).
static_assert(CodeLaneOffset(1, 5, 1) == CodeLaneOffset(0, 5, 0) + kCodeBytesPerHalf + kCodeBytesPerPart);
template <TileCodec kCodec>
__device__ __forceinline__ LaneTileWords<kCodec> LoadTile(const std::uint8_t* codes, const std::uint8_t* scales) {
  constexpr int kBlock = RecordBlockOf(kCodec);
  LaneTileWords<kCodec> w;
#pragma unroll
  for (int i = 0; i < 2 * CodePartsOf(kCodec); ++i) {  // i = 2 part + half
    const uint4 v = ptx::LdNcNoAllocate(reinterpret_cast<const uint4*>(codes + i * kCodeBytesPerHalf));
    w.codes[i][0] = v.x, w.codes[i][1] = v.y, w.codes[i][2] = v.z, w.codes[i][3] = v.w;
  }
  if constexpr (ScaleWordsPerLane(kBlock) == 4) {
    const uint4 s = ptx::LdNcNoAllocate(reinterpret_cast<const uint4*>(scales));
    w.scales[0] = s.x, w.scales[1] = s.y, w.scales[2] = s.z, w.scales[3] = s.w;
  } else {
    static_assert(ScaleWordsPerLane(kBlock) == 2, "16 or 8 bytes of record a lane");
    const uint2 s = ptx::LdNcNoAllocate(reinterpret_cast<const uint2*>(scales));
    w.scales[0] = s.x, w.scales[1] = s.y;
  }
  return w;
}

// The MMAs of one K tile. kHot: a tile inside the part (every chunk, no
// test in the loop) whose scales are all plain (PlainScaleOperands); else
// the chunks in `chunks`, scales through the table. In increasing K either
// way. `x_lane` is the shared-memory address of the lane's x at the tile's
// first K (SharedXOffset(0, g, t, tile's stage-local K)); every other
// offset is a constant (SharedXOffset is linear, asserted below). `table`
// is the address of the 256 scale operands.
static_assert(SharedXOffset(1, 2, 3, 32) == SharedXOffset(1, 0, 0, 32) + SharedXOffset(0, 2, 3, 0),
              "the lane's part of a shared-memory x offset adds to the chunk's and n-tile's");
template <int kNTiles, TileCodec kCodec, bool kHot>
__device__ __forceinline__ void MultiplyTile(const LaneTileWords<kCodec>& words, std::uint32_t table,
                                             std::uint32_t x_lane, unsigned chunks, std::uint32_t (&acc)[kNTiles][4]) {
  const auto scale_operand = [table](std::uint32_t byte) { return ptx::LdSharedU16(table + 2 * byte); };
#pragma unroll
  for (int c = 0; c < kChunksPerKTile; ++c) {
    if (!kHot && ((chunks >> c) & 1u) == 0) continue;  // warp-uniform
    std::uint32_t a[4];
    AFragmentOfChunk<kCodec, kHot>(words, scale_operand, c, a);
#pragma unroll
    for (int tile = 0; tile < kNTiles; ++tile) {
      constexpr int kBytes = sizeof(std::uint16_t);
      const uint2 bx = tile == 0 ? ptx::LdSharedV2<kBytes * SharedXOffset(0, 0, 0, 0)>(x_lane + kBytes * c * kChunk)
                                 : ptx::LdSharedV2<kBytes * SharedXOffset(1, 0, 0, 0)>(x_lane + kBytes * c * kChunk);
      const std::uint32_t b[2] = {bx.x, bx.y};
      tensor_core_ptx::MmaSync<InstructionOf(kCodec)>(a, b, acc[tile]);
    }
  }
}

// Steps 4 and 5 when the split-K parts of a row group run as one thread-
// block cluster (blockIdx.y = the part = the block's rank in the cluster):
// each block leaves its part's FP32 values in its own shared memory (the x
// buffer, no longer read), and after a cluster barrier each block adds the
// parts of a slice of the row group's outputs in order, reading the other
// blocks' shared memory (CUDA C++ Programming Guide, "Distributed Shared
// Memory"), and runs the epilogue. The second barrier keeps every block's
// shared memory alive until the others have read it. No workspace, no
// atomics, no global round trip between the parts and their sum.
// The shared memory of x: [8 kNTiles][SharedXStride(kStageK)] BF16 codes.
template <int kNTiles>
constexpr std::size_t XSharedBytes() {
  return static_cast<std::size_t>(kTileColumns * kNTiles) * SharedXStride(kStageK) * sizeof(std::uint16_t);
}
// The dynamic shared memory a block may take when `blocks` of them share an
// SM: its 228 KB (CUDA C++ Programming Guide, compute capability 9.0 table)
// less, per block, the 1 KB the system reserves and the scale table.
constexpr std::size_t SharedBytesPerBlock(std::int64_t blocks) {
  return 228 * 1024 / static_cast<std::size_t>(blocks) - 1024 - 512;
}
// kBlocksPerSm blocks (what SplitKOf plans the grid for) fit x.
static_assert(XSharedBytes<1>() <= SharedBytesPerBlock(kBlocksPerSm) &&
              XSharedBytes<2>() <= SharedBytesPerBlock(kBlocksPerSm));

// E4M3 codecs: the first tiles of a warp's part go to shared memory by
// cp.async before the wait for the previous kernel (only weights are read
// there), besides the one tile in registers, so that a block starts with
// more of its 2 KB tiles in flight: on an H100 (bench/RESULTS.md, "MXFP8
// and FP8 per channel on the tensor cores") one such tile took MXFP8
// 8192 x 8192 at M = 1 from 28.5 to 26.7 us overlapped and 30.9 to 29.8
// serialized. The 4-bit codecs, whose tiles are half as large, gained
// nothing with one to three (the "Tensor-core GEMV" section there: NVFP4
// 8192 x 8192 18.2 us without, 18.5, 18.9 and 20.0 with; serialized up to
// 3.3 us slower), so they take none.
// A lane's words of a tile sit lane-major ([slot][vector][thread] 16-byte
// vectors of codes, then [slot][thread] scale words), so the warp's
// 16-byte shared-memory loads are conflict free.
template <TileCodec kCodec>
constexpr int CodeVectorsOf() {
  return 2 * CodePartsOf(kCodec);
}
template <TileCodec kCodec>
constexpr int ScaleBytesPerLane() {
  return 4 * ScaleWordsPerLane(RecordBlockOf(kCodec));
}
template <TileCodec kCodec>
constexpr std::size_t PreWaitTileBytes() {
  return static_cast<std::size_t>(kPreWaitThreads) * (16 * CodeVectorsOf<kCodec>() + ScaleBytesPerLane<kCodec>());
}
#if defined(LOWBIT_TC_GEMV_E4M3_PRE_WAIT_TILES)  // a measuring build's choice
inline constexpr int kE4m3PreWaitTiles = LOWBIT_TC_GEMV_E4M3_PRE_WAIT_TILES;
#else
inline constexpr int kE4m3PreWaitTiles = 1;
#endif
static_assert(kE4m3PreWaitTiles <= kStageTiles, "the tiles read from shared memory are all in the part's first x stage");
// As many as wanted that a block's shared memory left by x holds at
// BlocksPerSmOf blocks an SM.
template <int kNTiles, TileCodec kCodec>
constexpr int PreWaitTilesOf() {
  constexpr int kWanted = IsE4m3(kCodec) ? kE4m3PreWaitTiles : 0;
  constexpr std::size_t kPerBlock = SharedBytesPerBlock(BlocksPerSmOf(kCodec));
  constexpr std::size_t kFit = (kPerBlock - XSharedBytes<kNTiles>()) / PreWaitTileBytes<kCodec>();
  return kFit < kWanted ? static_cast<int>(kFit) : kWanted;
}
static_assert(PreWaitTilesOf<1, TileCodec::kMxfp8>() == kE4m3PreWaitTiles &&
              PreWaitTilesOf<2, TileCodec::kFp8Channel>() == kE4m3PreWaitTiles && PreWaitTilesOf<1, TileCodec::kNvfp4>() == 0,
              "every E4M3 kernel gets the tiles it wants");
// x buffers of an instance: two (the next stage copied by cp.async while
// the warps multiply the current one) where no pre-wait slots sit past the
// first buffer and two buffers fit the instance's blocks an SM; else one.
template <int kNTiles, TileCodec kCodec>
constexpr int XBuffersOf() {
  constexpr bool kFits = 2 * XSharedBytes<kNTiles>() <= SharedBytesPerBlock(BlocksPerSmOfInstance<kNTiles, kCodec>());
  return PreWaitTilesOf<kNTiles, kCodec>() == 0 && kFits ? kWantedXBuffers : 1;
}
#if !defined(LOWBIT_TC_GEMV_X_BUFFERS) && !defined(LOWBIT_TC_GEMV_M16_WARPS)
// What docs/matmul.md says of the instances.
static_assert(WarpsOf<2, TileCodec::kNvfp4>() == 16 && WarpsOf<1, TileCodec::kNvfp4>() == kWarpsPerBlock &&
                  WarpsOf<2, TileCodec::kMxfp8>() == kWarpsPerBlock,
              "16-warp blocks for the 4-bit codecs at M > 8 only");
static_assert(XBuffersOf<1, TileCodec::kNvfp4>() == 2 && XBuffersOf<2, TileCodec::kMxfp4>() == 2 &&
                  XBuffersOf<2, TileCodec::kUint4Fp16>() == 2 && XBuffersOf<1, TileCodec::kMxfp8>() == 1 &&
                  XBuffersOf<2, TileCodec::kFp8Channel>() == 1,
              "two x buffers for the 4-bit codecs, one for E4M3");
#endif
template <int kNTiles, TileCodec kCodec>
constexpr std::size_t SharedBytesOf() {
  return XBuffersOf<kNTiles, kCodec>() * XSharedBytes<kNTiles>() +
         PreWaitTilesOf<kNTiles, kCodec>() * PreWaitTileBytes<kCodec>();
}
static_assert(XSharedBytes<1>() % 16 == 0 && XSharedBytes<2>() % 16 == 0, "the pre-wait tiles 16-byte aligned");

// Shared addresses of the lane's words in pre-wait slot `slot` (the slots
// start at shared address `pre`): code vector i, then the scale words.
template <TileCodec kCodec>
__device__ __forceinline__ std::uint32_t PreWaitCodeAddress(std::uint32_t pre, int slot, int i) {
  return pre + static_cast<std::uint32_t>(slot * PreWaitTileBytes<kCodec>() + 16 * (i * kPreWaitThreads + threadIdx.x));
}
template <TileCodec kCodec>
__device__ __forceinline__ std::uint32_t PreWaitScaleAddress(std::uint32_t pre, int slot) {
  return pre + static_cast<std::uint32_t>(slot * PreWaitTileBytes<kCodec>() + 16 * CodeVectorsOf<kCodec>() * kPreWaitThreads +
                                         ScaleBytesPerLane<kCodec>() * threadIdx.x);
}

// The lane's copies of a tile's words (`codes`, `scales`: its addresses as
// LoadTile takes them) into pre-wait slot `slot`, and its loads of them back.
template <TileCodec kCodec>
__device__ __forceinline__ void CopyTileToShared(const std::uint8_t* codes, const std::uint8_t* scales, std::uint32_t pre,
                                                 int slot) {
#pragma unroll
  for (int i = 0; i < CodeVectorsOf<kCodec>(); ++i) {
    ptx::CpAsyncGlobalToShared(PreWaitCodeAddress<kCodec>(pre, slot, i),
                               reinterpret_cast<const uint4*>(codes + i * kCodeBytesPerHalf));
  }
  if constexpr (ScaleBytesPerLane<kCodec>() == 16) {
    ptx::CpAsyncGlobalToShared(PreWaitScaleAddress<kCodec>(pre, slot), reinterpret_cast<const uint4*>(scales));
  } else {
    static_assert(ScaleBytesPerLane<kCodec>() == 8, "16 or 8 bytes of record a lane");
    ptx::CpAsyncGlobalToShared(PreWaitScaleAddress<kCodec>(pre, slot), reinterpret_cast<const uint2*>(scales));
  }
}
template <TileCodec kCodec>
__device__ __forceinline__ LaneTileWords<kCodec> LoadTileFromShared(std::uint32_t pre, int slot) {
  LaneTileWords<kCodec> w;
#pragma unroll
  for (int i = 0; i < CodeVectorsOf<kCodec>(); ++i) {
    const uint4 v = ptx::LdSharedV4<0>(PreWaitCodeAddress<kCodec>(pre, slot, i));
    w.codes[i][0] = v.x, w.codes[i][1] = v.y, w.codes[i][2] = v.z, w.codes[i][3] = v.w;
  }
  if constexpr (ScaleBytesPerLane<kCodec>() == 16) {
    const uint4 v = ptx::LdSharedV4<0>(PreWaitScaleAddress<kCodec>(pre, slot));
    w.scales[0] = v.x, w.scales[1] = v.y, w.scales[2] = v.z, w.scales[3] = v.w;
  } else {
    const uint2 v = ptx::LdSharedV2<0>(PreWaitScaleAddress<kCodec>(pre, slot));
    w.scales[0] = v.x, w.scales[1] = v.y;
  }
  return w;
}

// The row group's column scales (kWarps x 16 of them; channel n of batch
// entry l at (l row_tiles + n / 16) 16 + n % 16 = l row_tiles 16 + n) into
// shared memory, one a thread, loaded while the cluster meets; the epilogue
// reads them there instead of one load per output after the previous
// output's store. Measured within 0.3 us of the per-output loads on the
// split-2 shapes (bench/RESULTS.md, "M = 16 with blocks of 16 warps").
// The caller's barrier makes them visible.
template <int kWarps>
__device__ __forceinline__ void StageColumnScales(const KernelParams& p, float* column_scales, std::int64_t l,
                                                  std::int64_t n0) {
  constexpr int kGroupRows = kWarps * kTileRows;
  if (threadIdx.x < kGroupRows) {
    const std::int64_t n = n0 + threadIdx.x;
    column_scales[threadIdx.x] = n < p.n ? p.column_scales[l * p.row_tiles * kTileRows + n] : 0.0f;
  }
}

template <int kNTiles, int kWarps>
__device__ __forceinline__ void FinishPartsInCluster(const KernelParams& p, const std::uint32_t (&acc)[kNTiles][4],
                                                     float* values, bool active, LanePosition pos, int warp,
                                                     std::int64_t l, int part) {
  namespace cg = cooperative_groups;
  constexpr int kGroupRows = kWarps * kTileRows;
  constexpr int kThreads = kWarps * kWarpSize;
  static_assert((kMaxM + 1) * kGroupRows * sizeof(float) <= XSharedBytes<kNTiles>(),
                "a block's part values and its row group's column scales fit the x buffer");
  const int m = static_cast<int>(p.m);
  const std::int64_t n0 = static_cast<std::int64_t>(blockIdx.x) * kGroupRows;
  __syncthreads();  // every warp has read its last x
  float* column_scales = values + kMaxM * kGroupRows;
  StageColumnScales<kWarps>(p, column_scales, l, n0);  // in flight during the barrier
  if (active) {
#pragma unroll
    for (int tile = 0; tile < kNTiles; ++tile) {
#pragma unroll
      for (int i = 0; i < 4; ++i) {
        const int row = tile * kTileColumns + DColumnOf(pos.index, i);
        if (row < m) values[row * kGroupRows + warp * kTileRows + DRowOf(pos.group, i)] = __uint_as_float(acc[tile][i]);
      }
    }
  }
  cg::cluster_group cluster = cg::this_cluster();
  cluster.sync();
  const int split = p.schedule.split_k;
  for (int i = part * kThreads + static_cast<int>(threadIdx.x); i < m * kGroupRows; i += split * kThreads) {
    const std::int64_t n = n0 + i % kGroupRows, row = i / kGroupRows;
    if (n >= p.n) continue;  // channels past N: idle warps never wrote them
    float sum = cluster.map_shared_rank(values, 0)[i];
    for (int q = 1; q < split; ++q) sum = AddPartInOrder(sum, cluster.map_shared_rank(values, q)[i]);
    StoreOutput(p, (l * p.m + row) * p.n + n, Epilogue(p.schedule, sum, column_scales[i % kGroupRows]));
  }
  cluster.sync();
}

// x for tiles [stage, stage_end) of K into `xs` (zero past K), by every
// thread of the block: 16-byte loads when every row starts 16-byte aligned
// (`vector_x`).
template <int kWarps, bool kAsync = false>
__device__ __forceinline__ void StageX(const KernelParams& p, const std::uint16_t* x, std::uint16_t* xs, int stage,
                                       int stage_end, bool vector_x) {
  constexpr int kThreads = kWarps * kWarpSize;
  const std::int64_t k_begin = static_cast<std::int64_t>(stage) * kKTile;
  const int stage_k = (stage_end - stage) * kKTile;
  const int rows = static_cast<int>(p.m);
  if (vector_x) {  // K % 8 == 0: a vector is all before K or all past it
    const int vectors = stage_k / 8;
    for (int i = threadIdx.x; i < rows * vectors; i += kThreads) {
      const int row = i / vectors, col = 8 * (i % vectors);
      const std::int64_t kk = k_begin + col;
      if (kAsync && kk < p.k) {
        ptx::CpAsyncGlobalToShared(ptx::SharedAddress(xs + StagedXIndex(row, kk, stage)),
                                   reinterpret_cast<const uint4*>(x + row * p.k + kk));
        continue;
      }
      *reinterpret_cast<uint4*>(xs + StagedXIndex(row, kk, stage)) =
          kk < p.k ? *reinterpret_cast<const uint4*>(x + row * p.k + kk) : make_uint4(0, 0, 0, 0);
    }
  } else {
    for (int i = threadIdx.x; i < rows * stage_k; i += kThreads) {
      const int row = i / stage_k, col = i % stage_k;
      const std::int64_t kk = k_begin + col;
      xs[StagedXIndex(row, kk, stage)] = kk < p.k ? x[row * p.k + kk] : std::uint16_t{0};  // zeros past K: the padding
    }
  }
}

template <int kNTiles, TileCodec kCodec>
__global__ void __launch_bounds__(WarpsOf<kNTiles, kCodec>() * kWarpSize, BlocksPerSmOfInstance<kNTiles, kCodec>())
    TcGemvKernel(KernelParams p) {
  constexpr int kWarps = WarpsOf<kNTiles, kCodec>();
  constexpr int kThreads = kWarps * kWarpSize;
  constexpr int kBlock = RecordBlockOf(kCodec);
  __shared__ std::uint16_t scale_table[256];
  extern __shared__ __align__(16) std::uint16_t xs[];  // [8 kNTiles][SharedXStride(kStageK)]
  constexpr int kXRows = kTileColumns * kNTiles;
  constexpr int kStride = SharedXStride(kStageK);
  const int warp = threadIdx.x / kWarpSize, lane = threadIdx.x % kWarpSize;
  const LanePosition pos = LaneOf(lane);
  const std::int64_t l = blockIdx.z;
  const int part = static_cast<int>(blockIdx.y);
  const std::int64_t r = static_cast<std::int64_t>(blockIdx.x) * kWarps + warp;
  const bool active = r < p.row_tiles;  // idle warps still stage x and meet the barriers
  // A kernel launched after this one with programmatic stream serialization
  // may start now; it reads only its weights until this grid has finished.
  // Grids of one split-K part trigger after their main loop instead
  // (KernelParams::trigger_after_loop).
  if (!p.trigger_after_loop) ptx::LaunchDependentGrids();

  static_assert(kThreads >= 256, "one table entry per thread");
  // Loaded here, stored after the first stage's x loads are out, so that
  // the two loads' latencies overlap.
  const std::uint16_t table_entry =
      threadIdx.x < 256 ? kScaleTables.code[RecordScaleTypeOf(kCodec) == ScaleType::kUe4m3 ? 0 : 1][threadIdx.x] : 0;  // unread for UINT4
  // Rows of x at or past M feed only columns of D that are never stored;
  // they are zeroed once so that every shared-memory read is of written data.
  static_assert(kStride * sizeof(std::uint16_t) % 16 == 0, "rows of x 16-byte aligned: zeroed by 16-byte stores");
  constexpr int kRowVectors = kStride * sizeof(std::uint16_t) / 16;
#pragma unroll
  for (int b = 0; b < XBuffersOf<kNTiles, kCodec>(); ++b) {
    std::uint16_t* buffer_rows = xs + b * static_cast<int>(XSharedBytes<kNTiles>() / sizeof(std::uint16_t));
    for (int i = threadIdx.x; i < (kXRows - static_cast<int>(p.m)) * kRowVectors; i += kThreads) {
      reinterpret_cast<uint4*>(buffer_rows + static_cast<int>(p.m) * kStride)[i] = make_uint4(0, 0, 0, 0);
    }
  }
  // 16-byte loads of x when every row starts 16-byte aligned.
  const bool vector_x = p.k % 8 == 0 && reinterpret_cast<std::uintptr_t>(p.x) % 16 == 0;
  const ChunkRange range = PartChunks(p.k, p.schedule.split_k, part);
  const TileSpan tiles = TilesOfPart(range);
  // K tiles fit an int: RunTcGemv bounds K.
  const int tile_first = static_cast<int>(tiles.first), tile_last = static_cast<int>(tiles.last);
  const std::uint16_t* x = p.x + l * p.m * p.k;
  // The lane's loads, K tile 0 of its row tile; tile j is j times the tile's bytes on.
  const std::uint8_t* codes = p.codes + CodeTileOffset(l, r, 0, p.row_tiles, p.k_tiles, kCodec) + CodeLaneOffset(0, lane);
  const std::uint8_t* scales =
      p.scales + ScaleTileOffset(l, r, 0, p.row_tiles, p.k_tiles, kBlock) + ScaleLaneOffset(pos.group, kBlock);
  constexpr int kScaleBytes = ScaleBytesPerTile(kBlock);
  const std::uint32_t x_lane_stage = ptx::SharedAddress(xs + SharedXOffset(0, pos.group, pos.index, 0));
  const std::uint32_t table = ptx::SharedAddress(scale_table);
  // The part's tiles that hold all their chunks: every tile but its edges.
  const int whole_first = static_cast<int>(matmul::CeilDiv(range.first, kChunksPerKTile));
  const int whole_last = static_cast<int>(range.last / kChunksPerKTile);

  const std::uint8_t* plain_tiles = p.plain_tiles + (l * p.row_tiles + r) * p.k_tiles;

  std::uint32_t acc[kNTiles][4] = {};
  LaneTileWords<kCodec> next{};
  constexpr int kCodeBytes = CodeBytesPerTile(kCodec);
  // Tiles [tile_first, pre_end) come from shared memory, copied there
  // before the wait; the registers hold tile pre_end (the last tile again
  // when the part has no more), the main loop's first.
  constexpr int kPreWait = PreWaitTilesOf<kNTiles, kCodec>();
  static_assert(kPreWait == 0 || kThreads == kPreWaitThreads, "the pre-wait slots are laid out for kPreWaitThreads threads");
  const int pre_end = tile_first + kPreWait < tile_last ? tile_first + kPreWait : tile_last;
  const std::uint32_t pre = ptx::SharedAddress(xs) + static_cast<std::uint32_t>(XSharedBytes<kNTiles>());
  constexpr int kXBuffers = XBuffersOf<kNTiles, kCodec>();
  static_assert(kXBuffers == 1 || kPreWait == 0, "the pre-wait slots sit where a second x buffer would");
  unsigned pre_plain = 0;  // bit s: tile tile_first + s is plain
  bool next_plain = false;
  if (active && tile_first < tile_last) {
    for (int j = tile_first; j < pre_end; ++j) {
      CopyTileToShared<kCodec>(codes + j * kCodeBytes, scales + j * kScaleBytes, pre, j - tile_first);
      pre_plain |= (__ldg(plain_tiles + j) != 0 ? 1u : 0u) << (j - tile_first);
    }
    const int first_loaded = pre_end < tile_last ? pre_end : tile_last - 1;
    next = LoadTile<kCodec>(codes + first_loaded * kCodeBytes, scales + first_loaded * kScaleBytes);
    next_plain = __ldg(plain_tiles + first_loaded) != 0;
  }
  // Everything above reads only weights; x, y and the workspace may belong
  // to the previous kernel on the stream until it has finished
  // (LaunchOptions::overlap_previous_kernel).
  ptx::WaitForPrerequisiteGrids();

  // x goes through shared memory kStageTiles K tiles at a time; the first
  // stage's loads go out with the first tile's.
  if (tile_first < tile_last) StageX<kWarps>(p, x, xs, tile_first, tile_first + kStageTiles < tile_last ? tile_first + kStageTiles : tile_last, vector_x);
  constexpr int kXElements = static_cast<int>(XSharedBytes<kNTiles>() / sizeof(std::uint16_t));
  int buffer = 0;  // the x buffer of the current stage
  for (int stage = tile_first; stage < tile_last; stage += kStageTiles) {
    const int stage_end = stage + kStageTiles < tile_last ? stage + kStageTiles : tile_last;
    if (stage == tile_first && threadIdx.x < 256) scale_table[threadIdx.x] = table_entry;
    if (kXBuffers == 2) ptx::CpAsyncWaitAll();  // this thread's copies of this stage's x
    // x staged (and, the first time, the scale table); with two buffers,
    // also every warp done with the other one, the previous stage's.
    __syncthreads();
    if (kXBuffers == 2 && stage_end < tile_last) {
      StageX<kWarps, true>(p, x, xs + (buffer ^ 1) * kXElements, stage_end,
                           stage_end + kStageTiles < tile_last ? stage_end + kStageTiles : tile_last, vector_x);
    }
    const std::uint32_t x_lane_buffer = x_lane_stage + static_cast<std::uint32_t>(buffer * XSharedBytes<kNTiles>());
    if (active) {
    int j = stage;
    if (stage == tile_first && kPreWait > 0) {
      ptx::CpAsyncWaitAll();  // the lane's own copies: no other lane reads them
      for (; j < pre_end; ++j) {
        const LaneTileWords<kCodec> cur = LoadTileFromShared<kCodec>(pre, j - tile_first);
        const bool plain = ((pre_plain >> (j - tile_first)) & 1u) != 0;
        const std::uint32_t x_lane = x_lane_buffer + static_cast<std::uint32_t>((j - stage) * kKTile * sizeof(std::uint16_t));
        if (plain && j >= whole_first && j < whole_last) {
          MultiplyTile<kNTiles, kCodec, true>(cur, table, x_lane, kEveryChunk, acc);
        } else {
          MultiplyTile<kNTiles, kCodec, false>(cur, table, x_lane, ChunkMaskOf(range, j), acc);
        }
      }
    }
#pragma unroll 2
    for (; j < stage_end; ++j) {
      const LaneTileWords<kCodec> cur = next;
      const bool plain = next_plain;  // the same byte for every lane: warp-uniform
      // The next tile's loads, unconditionally (the last tile loads itself
      // again): a load under a condition would make the compiler copy the
      // twelve words each tile instead of renaming them.
      const int ahead = j + 1 < tile_last ? j + 1 : j;
      next = LoadTile<kCodec>(codes + ahead * kCodeBytes, scales + ahead * kScaleBytes);
      next_plain = __ldg(plain_tiles + ahead) != 0;
      const std::uint32_t x_lane = x_lane_buffer + static_cast<std::uint32_t>((j - stage) * kKTile * sizeof(std::uint16_t));
      if (plain && j >= whole_first && j < whole_last) {
        MultiplyTile<kNTiles, kCodec, true>(cur, table, x_lane, kEveryChunk, acc);
      } else {
        MultiplyTile<kNTiles, kCodec, false>(cur, table, x_lane, ChunkMaskOf(range, j), acc);
      }
    }
    }
    if (kXBuffers == 1 && stage_end < tile_last) {
      __syncthreads();  // every warp is done with this stage's x
      StageX<kWarps>(p, x, xs, stage_end, stage_end + kStageTiles < tile_last ? stage_end + kStageTiles : tile_last, vector_x);
    }
    buffer ^= kXBuffers - 1;
  }
  if (p.trigger_after_loop) ptx::LaunchDependentGrids();
  const int split = p.schedule.split_k;
  if (split > 1 && p.parts_in_cluster) {
    FinishPartsInCluster<kNTiles, kWarps>(p, acc, reinterpret_cast<float*>(xs), active, pos, warp, l, part);
    return;
  }
  if (active) {
#pragma unroll
    for (int tile = 0; tile < kNTiles; ++tile) {
#pragma unroll
      for (int i = 0; i < 4; ++i) {
        const std::int64_t n = r * kTileRows + DRowOf(pos.group, i);
        const std::int64_t row = tile * kTileColumns + DColumnOf(pos.index, i);
        if (n >= p.n || row >= p.m) continue;
        const float value = __uint_as_float(acc[tile][i]);
        if (split == 1) {
          const float scale = p.column_scales[(l * p.row_tiles + r) * kTileRows + DRowOf(pos.group, i)];
          StoreOutput(p, (l * p.m + row) * p.n + n, Epilogue(p.schedule, value, scale));
        } else {
          p.workspace[((l * split + part) * p.m + row) * p.n + n] = value;
        }
      }
    }
  }
  if (split == 1) return;
  // Steps 4 and 5 through the workspace, in this kernel: the block
  // that finishes its row group's parts last (a counter per row group and
  // batch entry) adds the parts of its outputs in order and runs the
  // epilogue, then leaves the counter at zero for the next call. The fences
  // order each block's part stores before its count, and the count before
  // the last block's loads (CUDA C++ Programming Guide, "Memory Fence
  // Functions", the sum example).
  __shared__ bool last;
  __threadfence();
  __syncthreads();
  unsigned* counter = p.counters + l * gridDim.x + blockIdx.x;
  if (threadIdx.x == 0) last = atomicAdd(counter, 1u) == static_cast<unsigned>(split - 1);
  __syncthreads();
  if (!last) return;
  __threadfence();
  constexpr int kGroupRows = kWarps * kTileRows;
  const std::int64_t n0 = static_cast<std::int64_t>(blockIdx.x) * kGroupRows;
  const auto store = [&](std::int64_t row, std::int64_t n, float sum) {
    const float scale = p.column_scales[(l * p.row_tiles + n / kTileRows) * kTileRows + n % kTileRows];
    StoreOutput(p, (l * p.m + row) * p.n + n, Epilogue(p.schedule, sum, scale));
  };
  if constexpr (kNTiles == 2) {
    // M > 8: two outputs a thread at a time, each with up to eight parts'
    // loads in flight before their in-order additions. Same additions, same
    // order as one at a time; on an H100 NVFP4 8192 x 8192 at M = 16 took
    // 27.3 us overlapped this way against 29.4 (bench/RESULTS.md, "Measuring
    // builds of the tensor-core GEMV"). The M <= 8 instances, with fewer
    // outputs than threads, keep the plain loop: there the batched one
    // measured no faster.
    const int outputs = static_cast<int>(p.m) * kGroupRows;
    const std::int64_t part_stride = p.m * p.n;
    for (int i = threadIdx.x; i < outputs; i += 2 * kThreads) {
      const int i1 = i + kThreads;
      const std::int64_t na = n0 + i % kGroupRows, rowa = i / kGroupRows;
      const std::int64_t nb = n0 + i1 % kGroupRows, rowb = i1 / kGroupRows;
      const bool va = na < p.n, vb = i1 < outputs && nb < p.n;
      const float* pa = p.workspace + (l * split * p.m + rowa) * p.n + na;  // part q is q * M * N on
      const float* pb = p.workspace + (l * split * p.m + (vb ? rowb : rowa)) * p.n + (vb ? nb : na);
      float sa = va ? __ldcg(pa) : 0.0f, sb = vb ? __ldcg(pb) : 0.0f;
      for (int q = 1; q < split; q += 8) {
        float a[8], b[8];
#pragma unroll
        for (int j = 0; j < 8; ++j) {
          const bool in = q + j < split;
          a[j] = in && va ? __ldcg(pa + (q + j) * part_stride) : 0.0f;
          b[j] = in && vb ? __ldcg(pb + (q + j) * part_stride) : 0.0f;
        }
#pragma unroll
        for (int j = 0; j < 8; ++j) {
          if (q + j < split) {
            sa = AddPartInOrder(sa, a[j]);
            sb = AddPartInOrder(sb, b[j]);
          }
        }
      }
      if (va) store(rowa, na, sa);
      if (vb) store(rowb, nb, sb);
    }
  } else {
    for (int i = threadIdx.x; i < static_cast<int>(p.m) * kGroupRows; i += kThreads) {
      const std::int64_t n = n0 + i % kGroupRows, row = i / kGroupRows;
      if (n >= p.n) continue;
      const float* part = p.workspace + (l * split * p.m + row) * p.n + n;  // part q is q * M * N on
      float sum = __ldcg(part);
      for (int q = 1; q < split; ++q) sum = AddPartInOrder(sum, __ldcg(part + q * p.m * p.n));
      store(row, n, sum);
    }
  }
  if (threadIdx.x == 0) *counter = 0;
}

// What the GPU can hold at once of one kernel instance, asked once per
// device: blocks (the plain launch) and clusters of 2..kMaxClusterParts
// blocks (cudaOccupancyMaxActiveClusters); 0 where a query failed.
struct Residency {
  int blocks = 0;
  int clusters[kMaxClusterParts + 1] = {};
};

// A kernel attribute set once per device and instance, the result kept
// (cudaFuncSetAttribute): the dynamic shared memory past 48 KB (CUDA C++
// Programming Guide, "Shared Memory", compute capability 9.0), needed before
// ResidencyOnThisDevice asks its occupancy. `value` is the same on every
// call for one attribute.
template <int kNTiles, TileCodec kCodec, cudaFuncAttribute kAttribute>
cudaError_t SetKernelAttributeOnce(int value) {
  static std::mutex mutex;
  static std::map<int, cudaError_t> done;  // by device
  int device = 0;
  if (const cudaError_t e = cudaGetDevice(&device); e != cudaSuccess) return e;
  const std::lock_guard<std::mutex> lock(mutex);
  const auto [it, inserted] = done.try_emplace(device, cudaSuccess);
  if (inserted) it->second = cudaFuncSetAttribute(TcGemvKernel<kNTiles, kCodec>, kAttribute, value);
  return it->second;
}

template <int kNTiles, TileCodec kCodec>
Residency ResidencyOnThisDevice(cudaLaunchConfig_t config) {
  static std::mutex mutex;
  static std::map<int, Residency> known;  // by device
  int device = 0;
  if (cudaGetDevice(&device) != cudaSuccess) return {};
  const std::lock_guard<std::mutex> lock(mutex);
  const auto [it, inserted] = known.try_emplace(device);
  if (!inserted) return it->second;
  Residency& r = it->second;
  int per_sm = 0, sms = 0;
  if (cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, TcGemvKernel<kNTiles, kCodec>,
                                                    WarpsOf<kNTiles, kCodec>() * kWarpSize,
                                                    config.dynamicSmemBytes) == cudaSuccess &&
      cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device) == cudaSuccess) {
    r.blocks = per_sm * sms;
  }
  for (int split = 2; split <= kMaxClusterParts; ++split) {
    cudaLaunchAttribute cluster = {};
    cluster.id = cudaLaunchAttributeClusterDimension;
    cluster.val.clusterDim.x = 1;
    cluster.val.clusterDim.y = static_cast<unsigned>(split);
    cluster.val.clusterDim.z = 1;
    cudaLaunchConfig_t c = config;
    c.gridDim = dim3(1, static_cast<unsigned>(split), 1);
    c.attrs = &cluster;
    c.numAttrs = 1;
    if (cudaOccupancyMaxActiveClusters(&r.clusters[split], TcGemvKernel<kNTiles, kCodec>, &c) != cudaSuccess) {
      r.clusters[split] = 0;
    }
  }
  (void)cudaGetLastError();  // a failed query leaves no error behind for the caller's next check
  return r;
}

template <int kNTiles, TileCodec kCodec>
cudaError_t Launch(KernelParams p, std::int64_t batch, const LaunchOptions& options, cudaStream_t stream) {
  constexpr std::size_t kShared = SharedBytesOf<kNTiles, kCodec>();
  if constexpr (kShared > 48 * 1024) {
    if (const cudaError_t e =
            SetKernelAttributeOnce<kNTiles, kCodec, cudaFuncAttributeMaxDynamicSharedMemorySize>(static_cast<int>(kShared));
        e != cudaSuccess) {
      return e;
    }
  }
  cudaLaunchConfig_t config = {};
  const unsigned groups = static_cast<unsigned>(matmul::CeilDiv(p.row_tiles, WarpsOf<kNTiles, kCodec>()));
  const int split = p.schedule.split_k;
  config.gridDim = dim3(groups, static_cast<unsigned>(split), static_cast<unsigned>(batch));
  config.blockDim = dim3(WarpsOf<kNTiles, kCodec>() * kWarpSize);
  config.dynamicSmemBytes = kShared;
  config.stream = stream;
  p.parts_in_cluster = false;
  p.trigger_after_loop = split == 1;
  if (split > 1 && split <= kMaxClusterParts) {
    using PartSums = LaunchOptions::PartSums;
    if (options.part_sums == PartSums::kCluster) {
      p.parts_in_cluster = true;
    } else if (options.part_sums == PartSums::kAuto) {
      // Clusters only when they do not take more waves than the plain grid.
      const Residency r = ResidencyOnThisDevice<kNTiles, kCodec>(config);
      const std::int64_t clusters = static_cast<std::int64_t>(groups) * batch;
      if (r.blocks > 0 && r.clusters[split] > 0) {
        p.parts_in_cluster = matmul::CeilDiv(clusters, r.clusters[split]) <= matmul::CeilDiv(clusters * split, r.blocks);
      }
    }
  }
  cudaLaunchAttribute attributes[2] = {};
  int count = 0;
  if (p.parts_in_cluster) {
    attributes[count].id = cudaLaunchAttributeClusterDimension;
    attributes[count].val.clusterDim.x = 1;
    attributes[count].val.clusterDim.y = static_cast<unsigned>(split);
    attributes[count].val.clusterDim.z = 1;
    ++count;
  }
  if (options.overlap_previous_kernel) {
    attributes[count].id = cudaLaunchAttributeProgrammaticStreamSerialization;
    attributes[count].val.programmaticStreamSerializationAllowed = 1;
    ++count;
  }
  config.attrs = attributes;
  config.numAttrs = static_cast<unsigned>(count);
  return cudaLaunchKernelEx(&config, TcGemvKernel<kNTiles, kCodec>, p);
}

__global__ void DecodeEveryPairKernel(ScaleType type, bool plain, std::uint32_t* out) {
  const int s = blockIdx.x;   // scale code
  const int i = threadIdx.x;  // 16 codes x 4 pairs x 2 halves
  const int code = i % 16, pair = (i / 16) % 4, half = i / 64;
  const std::uint32_t word = CodeBitsInWord(static_cast<std::uint8_t>(code), pair, half);
  std::uint32_t decoded = 0;
  if (!plain) {
    decoded = DecodePair(word, pair, Bf16PairOf(ScaleOperandCode(type, static_cast<std::uint8_t>(s))));
  } else {
    // Scale byte s in block 0, half `half`, as the lane's scale words hold it.
    std::uint32_t words[4] = {};
    words[0] = static_cast<std::uint32_t>(s) << (8 * ScaleByteOfBlock(half, 0));
    const std::uint32_t operands =
        type == ScaleType::kUe4m3 ? PlainScaleOperands<TileCodec::kNvfp4>(words, 0) : PlainScaleOperands<TileCodec::kMxfp4>(words, 0);
    const std::uint32_t pair_of_scale = Bf16PairOf(static_cast<std::uint16_t>(operands >> (16 * half)));
    decoded = type == ScaleType::kUe4m3 ? DecodePair(word, pair, pair_of_scale) : DecodePairFolded(word, pair, pair_of_scale);
  }
  out[s * 128 + i] = (decoded >> (16 * half)) & 0xFFFFu;
}

__global__ void DecodeEveryUint4Kernel(bool fp16, std::uint32_t* out) {
  const std::uint32_t scale = blockIdx.x * 256 + threadIdx.x;
  const std::uint32_t scale_pair = Bf16PairOf(static_cast<std::uint16_t>(scale));
  for (int zi = 0; zi < kUint4DecodeZeros; ++zi) {
    const int z = Uint4DecodeZero(zi);
    const std::uint32_t zero_pair = Bf16PairOf(Uint4ZeroOperand(z, fp16));
    for (int q = 0; q < 16; ++q) {
      const int pair = (q + z) % 4, half = (q / 4 + z) % 2;
      const std::uint32_t word = Uint4CodeBitsInWord(static_cast<std::uint8_t>(q), pair, half);
      const std::uint32_t got = fp16 ? DecodeUint4Pair<true>(word, pair, zero_pair, scale_pair)
                                     : DecodeUint4Pair<false>(word, pair, zero_pair, scale_pair);
      out[(static_cast<std::size_t>(scale) * kUint4DecodeZeros + zi) * 16 + q] = (got >> (16 * half)) & 0xFFFFu;
    }
  }
}

// Every E4M3 code (threadIdx.x) times every E8M0 scale (blockIdx.x) through
// AFragmentOfChunk, on the plain path (`plain`; meaningless for scales
// that are not plain) or the table's; each (code, scale) in its own chunk,
// row half, slot and element (E4m3DecodePlace).
__global__ void DecodeEveryE4m3Kernel(bool plain, std::uint32_t* out) {
  const int s = blockIdx.x, code = threadIdx.x;
  const E4m3DecodePlace at = E4m3DecodePlaceOf(code, s);
  LaneTileWords<TileCodec::kMxfp8> words{};
  words.codes[2 * (at.chunk / 4) + at.row_half][at.chunk % 4] =
      E4m3CodeBitsInWord(static_cast<std::uint8_t>(code), at.slot, at.element);
  const int sb = ScaleByteOf(at.row_half, at.chunk, RecordBlockOf(TileCodec::kMxfp8));
  words.scales[sb / 4] = static_cast<std::uint32_t>(s) << (8 * (sb % 4));
  const auto scale_operand = [](std::uint32_t byte) { return kScaleTables.code[1][byte]; };
  std::uint32_t a[4];
  if (plain) {
    AFragmentOfChunk<TileCodec::kMxfp8, true>(words, scale_operand, at.chunk, a);
  } else {
    AFragmentOfChunk<TileCodec::kMxfp8, false>(words, scale_operand, at.chunk, a);
  }
  out[s * 256 + code] = (a[2 * at.slot + at.row_half] >> (16 * at.element)) & 0xFFFFu;
}

}  // namespace

cudaError_t DecodeEveryUint4OnDevice(bool fp16, std::uint32_t* out) {
  DecodeEveryUint4Kernel<<<256, 256>>>(fp16, out);
  return cudaGetLastError();
}

cudaError_t DecodeEveryE4m3OnDevice(bool plain, std::uint32_t* out) {
  DecodeEveryE4m3Kernel<<<256, 256>>>(plain, out);
  return cudaGetLastError();
}

cudaError_t DecodeEveryPairOnDevice(ScaleType type, bool plain, std::uint32_t* out) {
  DecodeEveryPairKernel<<<256, 128>>>(type, plain, out);
  return cudaGetLastError();
}

namespace {
std::int64_t PartFloats(const DeviceWeights& w, std::int64_t m, int split_k) { return w.batch * split_k * m * w.n; }
std::int64_t RowGroups(const DeviceWeights& w) { return matmul::CeilDiv(w.row_tiles, kWarpsPerBlock); }
}  // namespace

std::int64_t WorkspaceFloats(const DeviceWeights& w, std::int64_t m, int split_k) {
  static_assert(sizeof(unsigned) == sizeof(float), "a counter in one float's place");
  return split_k > 1 ? PartFloats(w, m, split_k) + w.batch * RowGroups(w) : 0;
}

const char* RunTcGemv(const DeviceWeights& w, const std::uint16_t* x, std::int64_t m,
                      const AccumulationSchedule& schedule, void* y, float* workspace, std::int64_t workspace_floats,
                      cudaStream_t stream, const LaunchOptions& options) {
  TileCodec codec = TileCodec::kNvfp4;
  if (!CodecOf(w.format, w.scale_type, &codec)) {
    return "the tensor-core GEMV takes nvfp4 (ue4m3 scales), mxfp4 or mxfp8_e4m3 (e8m0), e4m3/row (fp32) or uint4 "
           "(fp16 or bf16 scales) weights";
  }
  if (w.block != RecordBlockOf(codec)) return "the packed block is not the codec's (pack with PackForTcGemv)";
  if (w.n < 1 || w.k < 1 || w.batch < 1) return "N, K and the batch must be positive";
  if (w.row_tiles != matmul::CeilDiv(w.n, kTileRows) || w.k_tiles != matmul::CeilDiv(w.k, kKTile)) {
    return "the packed tiles do not match N and K (pack with PackForTcGemv)";
  }
  if (m < 1 || m > kMaxM) return "the tensor-core GEMV takes M = 1..16";
  if (w.k_tiles > kMaxKTiles) return "K is too large for the tensor-core GEMV (at most 2^26)";
  if (w.batch > 65535) return "the batch L must be at most 65535";  // gridDim.z
  if (w.codes == nullptr || w.scales == nullptr || w.column_scales == nullptr || w.plain_tiles == nullptr || x == nullptr ||
      y == nullptr) {
    return "a buffer is null";
  }
  if (reinterpret_cast<std::uintptr_t>(w.codes) % 16 != 0 || reinterpret_cast<std::uintptr_t>(w.scales) % 16 != 0) {
    return "the packed codes and scales must be 16-byte aligned";
  }
  const OutputType output = schedule.output == FormatId::kFp32 ? OutputType::kFp32
                            : schedule.output == FormatId::kBf16 ? OutputType::kBf16 : OutputType::kFp16;
  AccumulationSchedule declared = ScheduleOf(codec, w.n, w.k, w.batch, output);
  declared.split_k = schedule.split_k;
  if (const char* why = matmul::ScheduleProblem(schedule, w.k)) return why;
  if (schedule.instruction != declared.instruction || schedule.promotion_interval != 0 ||
      schedule.split_reduction != declared.split_reduction || schedule.alpha != 1.0f ||
      schedule.scale_per_column != declared.scale_per_column ||
      (schedule.output != FormatId::kFp32 && schedule.output != FormatId::kBf16 && schedule.output != FormatId::kFp16)) {
    return "the schedule is not the tensor-core GEMV's (ScheduleOf; only split_k may differ)";
  }
  if (schedule.split_k > 1 &&
      (workspace == nullptr || workspace_floats < WorkspaceFloats(w, m, schedule.split_k))) {
    return "split-K needs a workspace of WorkspaceFloats floats";
  }
  // The counters first, so that they stay where they are whatever M a
  // call with the same workspace has.
  unsigned* counters = schedule.split_k > 1 ? reinterpret_cast<unsigned*>(workspace) : nullptr;
  float* parts = schedule.split_k > 1 ? workspace + w.batch * RowGroups(w) : nullptr;
  // Launch decides parts_in_cluster and trigger_after_loop.
  const KernelParams p{w.codes, w.scales, w.column_scales, w.plain_tiles, x, y, parts, counters, m, w.n, w.k,
                       w.row_tiles, w.k_tiles, schedule, false, false};
  const bool two_tiles = m > kTileColumns;
  cudaError_t e = cudaSuccess;
  switch (codec) {
    case TileCodec::kNvfp4:
      e = two_tiles ? Launch<2, TileCodec::kNvfp4>(p, w.batch, options, stream) : Launch<1, TileCodec::kNvfp4>(p, w.batch, options, stream);
      break;
    case TileCodec::kMxfp4:
      e = two_tiles ? Launch<2, TileCodec::kMxfp4>(p, w.batch, options, stream) : Launch<1, TileCodec::kMxfp4>(p, w.batch, options, stream);
      break;
    case TileCodec::kUint4Fp16:
      e = two_tiles ? Launch<2, TileCodec::kUint4Fp16>(p, w.batch, options, stream)
                    : Launch<1, TileCodec::kUint4Fp16>(p, w.batch, options, stream);
      break;
    case TileCodec::kUint4Bf16:
      e = two_tiles ? Launch<2, TileCodec::kUint4Bf16>(p, w.batch, options, stream)
                    : Launch<1, TileCodec::kUint4Bf16>(p, w.batch, options, stream);
      break;
    case TileCodec::kMxfp8:
      e = two_tiles ? Launch<2, TileCodec::kMxfp8>(p, w.batch, options, stream) : Launch<1, TileCodec::kMxfp8>(p, w.batch, options, stream);
      break;
    case TileCodec::kFp8Channel:
      e = two_tiles ? Launch<2, TileCodec::kFp8Channel>(p, w.batch, options, stream)
                    : Launch<1, TileCodec::kFp8Channel>(p, w.batch, options, stream);
      break;
  }
  if (e != cudaSuccess) return "the tensor-core GEMV kernel did not launch";
  return nullptr;
}

}  // namespace lowbit::cuda::tc_gemv
