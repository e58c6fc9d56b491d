// The tensor-core GEMV (cuda/src/tc_matmul/tc_gemv.cu) simulated on the
// host, one warp at a time: every lane runs the kernel's own per-lane steps
// (tc_gemv_lanes.h: packed-code offsets, the E2M1 -> BF16 decode with the
// scale folded in, the x fragment offsets, the split-K
// parts, the in-order reduction, the epilogue); the registers of the 32
// lanes are placed into the 16 x 16 A, 8 x 16 B and 16 x 8 C matrices as
// PTX ISA 9.0 §9.7.14.5 "Matrix Fragments for mma.m16n8k16 with floating
// point type" lays them out (typed here from the ISA's element tables,
// independently of the kernel's placement functions), and the instruction is
// the host tensor-core model (TensorCoreMma), the model the H100 sweep
// matched bit for bit (docs/tensor-cores.md "Verified on the hardware").
// Every output must equal QuantizedMatmulModel under the schedule the kernel
// declares, bit for bit.
//
// What this proves: the kernel's lane logic and data layout compute the
// model's product, given that the hardware instruction behaves as the model
// and the ISA layout say, and that BF16 multiplication on the device rounds
// as IEEE 754 says. x is staged stage by stage as the kernel stages it
// (StageFirstTile, StagedXIndex, StageLocalK). What only the GPU can prove
// (cuda/tests/tc_gemv_test.cc): the CUDA code around these steps (the
// cooperative staging loops and their barriers, the loads and the prefetch,
// the split-K workspace, its counters and the last block's reduction) and the device's BF16
// multiply.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <random>
#include <vector>

#include "lowbit/formats/matmul/quantized_matmul.h"
#include "lowbit/formats/matmul/tensor_core.h"
#include "tc_gemv_cases.h"
#include "tc_matmul/tc_gemv_lanes.h"
#include "tc_matmul/tc_gemv_pack.h"

namespace lowbit::cuda::tc_gemv {
namespace {

using matmul::WeightFormat;

// ---- the ISA's fragment tables, element by element (a0..a7, b0..b3, c0..c3) ----
// For .bf16 A: row = groupID for a0, a1, a4, a5, groupID + 8 otherwise; col =
// threadID_in_group * 2 + (i & 1) for a0..a3, + 8 for a4..a7. B: row =
// threadID_in_group * 2 + (i & 1) for b0, b1, + 8 for b2, b3; col = groupID.
// C: row = groupID for c0, c1, + 8 for c2, c3; col = threadID_in_group * 2 +
// (i & 1). Element i sits in register i / 2, half i % 2.
struct Place {
  int row, col;
};
Place IsaA(int lane, int i) {
  const int group = lane >> 2, thread = lane % 4;
  const bool upper = i == 2 || i == 3 || i == 6 || i == 7;
  return {group + (upper ? 8 : 0), thread * 2 + (i & 1) + (i >= 4 ? 8 : 0)};
}
Place IsaB(int lane, int i) {  // (k row, n column)
  const int group = lane >> 2, thread = lane % 4;
  return {thread * 2 + (i & 1) + (i >= 2 ? 8 : 0), group};
}
Place IsaC(int lane, int i) {
  const int group = lane >> 2, thread = lane % 4;
  return {group + (i >= 2 ? 8 : 0), thread * 2 + (i & 1)};
}

// x of one stage as the kernel stages it: tiles [stage, stage_end) of K,
// zero past K, rows past M zero.
std::vector<std::uint16_t> StageX(const std::uint16_t* x, std::int64_t m, std::int64_t k, std::int64_t stage,
                                  std::int64_t stage_end) {
  std::vector<std::uint16_t> xs(static_cast<std::size_t>(kMaxM * SharedXStride(kStageK)), 0);
  for (std::int64_t row = 0; row < m; ++row) {
    for (std::int64_t kk = stage * kKTile; kk < stage_end * kKTile; ++kk) {
      xs[static_cast<std::size_t>(StagedXIndex(static_cast<int>(row), kk, stage))] = kk < k ? x[row * k + kk] : 0;
    }
  }
  return xs;
}

// One mma.sync of the warp: lanes' a[4], b[2], c/d[4] registers.
void WarpMma(TensorCoreId instruction, const std::uint32_t (&a)[kWarpSize][4], const std::uint32_t (&b)[kWarpSize][2],
             std::uint32_t (&d)[kWarpSize][4]) {
  std::uint32_t am[16 * 16] = {}, bm[8 * 16] = {}, cm[16 * 8] = {}, dm[16 * 8] = {};
  for (int lane = 0; lane < kWarpSize; ++lane) {
    for (int i = 0; i < 8; ++i) {
      const Place pa = IsaA(lane, i);
      am[pa.row * 16 + pa.col] = (a[lane][i / 2] >> (16 * (i % 2))) & 0xFFFFu;
    }
    for (int i = 0; i < 4; ++i) {
      const Place pb = IsaB(lane, i);
      bm[pb.col * 16 + pb.row] = (b[lane][i / 2] >> (16 * (i % 2))) & 0xFFFFu;  // B as n x k
      const Place pc = IsaC(lane, i);
      cm[pc.row * 8 + pc.col] = d[lane][i];
    }
  }
  matmul::TensorCoreMma(Instruction(instruction), 8, am, bm, cm, dm);
  for (int lane = 0; lane < kWarpSize; ++lane) {
    for (int i = 0; i < 4; ++i) {
      const Place pc = IsaC(lane, i);
      d[lane][i] = dm[pc.row * 8 + pc.col];
    }
  }
}

std::uint32_t LittleEndianWord(const std::uint8_t* bytes) {
  return static_cast<std::uint32_t>(bytes[0]) | (static_cast<std::uint32_t>(bytes[1]) << 8) |
         (static_cast<std::uint32_t>(bytes[2]) << 16) | (static_cast<std::uint32_t>(bytes[3]) << 24);
}

// Every lane's A registers of every chunk of tile (l, r, j), from the words
// its loads deliver (as little-endian words), on the plain path (`hot`) or
// the table's, as the kernel computes them.
using TileFragments = std::uint32_t[kChunksPerKTile][kWarpSize][4];
template <TileCodec kCodec>
void FragmentsOfTile(const PackedWeights& p, std::int64_t l, std::int64_t r, std::int64_t j, bool hot,
                     const std::uint16_t (&scale_table)[256], TileFragments& a) {
  const auto table_lookup = [&scale_table](std::uint32_t byte) { return scale_table[byte]; };
  for (int lane = 0; lane < kWarpSize; ++lane) {
    LaneTileWords<kCodec> words{};
    const std::uint8_t* tile_codes = p.codes.data() + CodeTileOffset(l, r, j, p.row_tiles, p.k_tiles, kCodec);
    for (int part = 0; part < CodePartsOf(kCodec); ++part) {
      for (int half = 0; half < 2; ++half) {
        for (int w = 0; w < 4; ++w) {
          words.codes[2 * part + half][w] = LittleEndianWord(tile_codes + CodeLaneOffset(half, lane, part) + 4 * w);
        }
      }
    }
    const std::uint8_t* lane_scales = p.scales.data() + ScaleTileOffset(l, r, j, p.row_tiles, p.k_tiles, p.block) +
                                      ScaleLaneOffset(LaneOf(lane).group, p.block);
    for (int w = 0; w < ScaleWordsPerLane(p.block); ++w) words.scales[w] = LittleEndianWord(lane_scales + 4 * w);
    for (int c = 0; c < kChunksPerKTile; ++c) {
      if (hot) {
        AFragmentOfChunk<kCodec, true>(words, table_lookup, c, a[c][lane]);
      } else {
        AFragmentOfChunk<kCodec, false>(words, table_lookup, c, a[c][lane]);
      }
    }
  }
}
void FragmentsOfTile(TileCodec codec, const PackedWeights& p, std::int64_t l, std::int64_t r, std::int64_t j, bool hot,
                     const std::uint16_t (&scale_table)[256], TileFragments& a) {
  switch (codec) {
    case TileCodec::kNvfp4: return FragmentsOfTile<TileCodec::kNvfp4>(p, l, r, j, hot, scale_table, a);
    case TileCodec::kMxfp4: return FragmentsOfTile<TileCodec::kMxfp4>(p, l, r, j, hot, scale_table, a);
    case TileCodec::kUint4Fp16: return FragmentsOfTile<TileCodec::kUint4Fp16>(p, l, r, j, hot, scale_table, a);
    case TileCodec::kUint4Bf16: return FragmentsOfTile<TileCodec::kUint4Bf16>(p, l, r, j, hot, scale_table, a);
    case TileCodec::kMxfp8: return FragmentsOfTile<TileCodec::kMxfp8>(p, l, r, j, hot, scale_table, a);
    case TileCodec::kFp8Channel: return FragmentsOfTile<TileCodec::kFp8Channel>(p, l, r, j, hot, scale_table, a);
  }
}

// How many K tiles of warps took each path of the kernel.
struct Paths {
  std::int64_t plain = 0, table = 0;
};

// The whole product as the kernel computes it: y codes [batch][m][n].
std::vector<std::uint32_t> SimulateKernel(const PackedWeights& p, const std::uint16_t* x, std::int64_t m,
                                          const matmul::AccumulationSchedule& schedule, Paths& paths) {
  TileCodec codec = TileCodec::kNvfp4;
  EXPECT_TRUE(CodecOf(p.format, p.scale_type, &codec));
  std::uint16_t scale_table[256] = {};
  if (!IsUint4(codec)) {
    for (int b = 0; b < 256; ++b) scale_table[b] = ScaleOperandCode(RecordScaleTypeOf(codec), static_cast<std::uint8_t>(b));
  }
  const int n_tiles = m > kTileColumns ? 2 : 1;
  const int split = schedule.split_k;
  std::vector<float> parts(static_cast<std::size_t>(split * m * p.n));
  std::vector<std::uint32_t> y(static_cast<std::size_t>(p.batch * m * p.n));
  for (std::int64_t l = 0; l < p.batch; ++l) {
    for (int part = 0; part < split; ++part) {
      const ChunkRange range = PartChunks(p.k, split, part);
      for (std::int64_t r = 0; r < p.row_tiles; ++r) {  // one warp per row tile
        std::uint32_t acc[2][kWarpSize][4] = {};
        const TileSpan tiles = TilesOfPart(range);
        std::int64_t staged = -1;
        std::vector<std::uint16_t> xs;
        for (std::int64_t j = tiles.first; j < tiles.last; ++j) {
          const std::int64_t stage = StageFirstTile(tiles.first, j);
          if (stage != staged) {
            const std::int64_t stage_end = std::min<std::int64_t>(stage + kStageTiles, tiles.last);
            xs = StageX(x + l * m * p.k, m, p.k, stage, stage_end);
            staged = stage;
          }
          const unsigned chunks = ChunkMaskOf(range, j);
          // The kernel's choice: the plain path on a whole tile whose scales are plain.
          const bool hot = chunks == kEveryChunk &&
                           p.plain_tiles[static_cast<std::size_t>((l * p.row_tiles + r) * p.k_tiles + j)] != 0;
          ++(hot ? paths.plain : paths.table);
          TileFragments fragments;
          FragmentsOfTile(codec, p, l, r, j, hot, scale_table, fragments);
          for (int c = 0; c < kChunksPerKTile; ++c) {
            if (((chunks >> c) & 1u) == 0) continue;
            const auto& a = fragments[c];
            for (int tile = 0; tile < n_tiles; ++tile) {
              std::uint32_t b[kWarpSize][2];
              for (int lane = 0; lane < kWarpSize; ++lane) {
                const LanePosition pos = LaneOf(lane);
                const std::uint16_t* q = xs.data() + SharedXOffset(tile, pos.group, pos.index, StageLocalK(stage, j, c));
                b[lane][0] = q[0] | (static_cast<std::uint32_t>(q[1]) << 16);
                b[lane][1] = q[2] | (static_cast<std::uint32_t>(q[3]) << 16);
              }
              WarpMma(InstructionOf(codec), a, b, acc[tile]);
            }
          }
        }
        for (int tile = 0; tile < n_tiles; ++tile) {
          for (int lane = 0; lane < kWarpSize; ++lane) {
            const LanePosition pos = LaneOf(lane);
            for (int i = 0; i < 4; ++i) {
              const std::int64_t n = r * kTileRows + DRowOf(pos.group, i);
              const std::int64_t row = tile * kTileColumns + DColumnOf(pos.index, i);
              if (n < p.n && row < m) {
                parts[static_cast<std::size_t>((part * m + row) * p.n + n)] = F32FromBits(acc[tile][lane][i]);
              }
            }
          }
        }
      }
    }
    for (std::int64_t row = 0; row < m; ++row) {
      for (std::int64_t n = 0; n < p.n; ++n) {
        float column[matmul::kMaxSplitK];
        for (int part = 0; part < split; ++part) column[part] = parts[static_cast<std::size_t>((part * m + row) * p.n + n)];
        const float scale =
            p.column_scales[static_cast<std::size_t>((l * p.row_tiles + n / kTileRows) * kTileRows + n % kTileRows)];
        y[static_cast<std::size_t>((l * m + row) * p.n + n)] = Epilogue(schedule, AddPartsInOrder(column, split), scale);
      }
    }
  }
  return y;
}

struct Compared {
  std::int64_t outputs = 0;
  std::int64_t finite_nonzero = 0;  // so that a run of NaNs or zeros cannot pass alone
  Paths paths;                      // so that neither path of the kernel goes unchecked
  void operator+=(const Compared& o) {
    outputs += o.outputs;
    finite_nonzero += o.finite_nonzero;
    paths.plain += o.paths.plain;
    paths.table += o.paths.table;
  }
};

bool FiniteNonzero(std::uint32_t code, matmul::OutputType output) {
  const FormatSpec spec = matmul::OutputFormatOf(output);
  const double v = DecodeToF64(spec, code);
  return v == v && v != 0.0 && v - v == 0.0;
}

// Runs one case under the kernel's schedule with split `split` (0: the
// kernel's own SplitKOf) and output type.
Compared ExpectSimulationEqualsModel(const testing::GemvCase& c, int split, matmul::OutputType output) {
  const matmul::WeightView w = c.View();
  matmul::AccumulationSchedule schedule = ScheduleOf(c.format, c.View().scale_type, c.n, c.k, c.batch, output);
  if (split > 0) schedule.split_k = split;
  const matmul::QuantizedMatmulResult model =
      matmul::QuantizedMatmulModel(w, c.x.data(), c.Activation(), c.m, schedule);
  EXPECT_EQ(model.error, "") << c.Describe();
  const PackedWeights packed = PackForTcGemv(w);
  EXPECT_EQ(packed.error, "") << c.Describe();
  Compared compared;
  if (!model.error.empty() || !packed.error.empty()) return compared;
  const std::vector<std::uint32_t> y = SimulateKernel(packed, c.x.data(), c.m, schedule, compared.paths);
  EXPECT_EQ(y.size(), model.y.size());
  int shown = 0;
  for (std::size_t i = 0; i < y.size() && i < model.y.size(); ++i) {
    ++compared.outputs;
    compared.finite_nonzero += FiniteNonzero(model.y[i], output) ? 1 : 0;
    if (y[i] != model.y[i] && shown++ < 5) {
      ADD_FAILURE() << c.Describe() << " split " << schedule.split_k << ": output " << i << " (l, m, n = "
                    << i / (c.m * c.n) << ", " << (i / c.n) % c.m << ", " << i % c.n << ") simulated 0x" << std::hex
                    << y[i] << ", model 0x" << model.y[i];
    }
  }
  return compared;
}

struct Shape {
  std::int64_t n, k, m, batch;
};

TEST(TcGemvWarpSimulation, EqualsTheQuantizedMatmulModel) {
  // K: below a chunk, chunk and tile tails, several tiles with a tail; N:
  // one row, odd, a tile and one more; M: 1, 3, one n-tile full, two n-tiles.
  static constexpr Shape kShapes[] = {
      {1, 16, 1, 1},   {7, 20, 3, 1},   {17, 128, 16, 1}, {33, 136, 1, 2}, {16, 300, 9, 1},
      {5, 520, 8, 1},  {70, 96, 3, 1},  {3, 1000, 16, 1}, {40, 256, 1, 1}, {9, 33, 16, 2},
  };
  std::mt19937 rng(20261205);
  Compared compared;
  for (const WeightFormat format : {WeightFormat::kNvfp4, WeightFormat::kMxfp4}) {
    for (const Shape& s : kShapes) {
      for (const bool specials : {false, true}) {
        const testing::GemvCase c = testing::DrawCase(rng, format, s.n, s.k, s.m, s.batch, specials);
        compared += ExpectSimulationEqualsModel(c, 0, matmul::OutputType::kFp32);
      }
    }
  }
  EXPECT_GT(compared.finite_nonzero * 2, compared.outputs) << compared.finite_nonzero << " of " << compared.outputs;
  EXPECT_GT(compared.paths.plain, 0);
  EXPECT_GT(compared.paths.table, 0);
}

TEST(TcGemvWarpSimulation, EverySplitAndOutputType) {
  // The kernel takes any split the schedule allows; each is its own order.
  // K = 2600 is 21 K tiles: split 1 and 2 run parts over several x stages.
  std::mt19937 rng(7);
  Compared compared;
  for (const WeightFormat format : {WeightFormat::kNvfp4, WeightFormat::kMxfp4}) {
    for (const int split : {1, 2, 3, 5, 64}) {
      for (const matmul::OutputType out : {matmul::OutputType::kFp32, matmul::OutputType::kBf16,
                                           matmul::OutputType::kFp16}) {
        const testing::GemvCase c = testing::DrawCase(rng, format, 19, 2600, split % 2 ? 3 : 16, 1, split == 3);
        compared += ExpectSimulationEqualsModel(c, split, out);
      }
    }
  }
  EXPECT_GT(compared.finite_nonzero * 2, compared.outputs) << compared.finite_nonzero << " of " << compared.outputs;
  EXPECT_GT(compared.paths.plain, 0);
  EXPECT_GT(compared.paths.table, 0);
}

// UINT4 (GPTQ and AWQ words, FP16 scales with FP16 x, BF16 with BF16 x):
// N a multiple of 8, K of 128, groups of 128 and 256, M 1 / 3 / 9 / 16, L = 2,
// splits that cut K tiles, every output type.
TEST(TcGemvWarpSimulation, Uint4EqualsTheQuantizedMatmulModel) {
  struct Uint4Shape {
    std::int64_t n, k, group, m, batch;
  };
  static constexpr Uint4Shape kShapes[] = {{8, 128, 128, 1, 1},  {24, 256, 128, 3, 2}, {40, 512, 256, 16, 1},
                                           {16, 384, 128, 9, 1}, {8, 1280, 256, 1, 1}};
  std::mt19937 rng(20261206);
  Compared compared;
  int cases = 0;
  for (const matmul::WeightPacking packing : {matmul::WeightPacking::kGptq, matmul::WeightPacking::kAwq}) {
    for (const ScaleType type : {ScaleType::kFp16, ScaleType::kBf16}) {
      for (const Uint4Shape& s : kShapes) {
        for (const bool specials : {false, true}) {
          const testing::GemvCase c = testing::DrawUint4Case(rng, packing, type, s.n, s.k, s.group, s.m, s.batch, specials);
          const int split = cases % 3 == 0 ? 3 : 0;  // 3 parts of 1280: parts start inside K tiles
          const matmul::OutputType out = testing::OutputOfRun(cases);
          compared += ExpectSimulationEqualsModel(c, split, out);
          ++cases;
        }
      }
    }
  }
  EXPECT_EQ(cases, 40);
  EXPECT_GT(compared.finite_nonzero * 2, compared.outputs) << compared.finite_nonzero << " of " << compared.outputs;
  EXPECT_GT(compared.paths.plain, 0);
  EXPECT_GT(compared.paths.table, 0);  // the part edges
}

// MXFP8 (E8M0 scales, row groups and flat blocks) and FP8 per channel
// (FP32 channel scales in the epilogue): the shapes of the 4-bit test, NaN
// codes in some blocks (their tiles take the table path), every output type
// and splits that cut K tiles.
TEST(TcGemvWarpSimulation, E4m3EqualsTheQuantizedMatmulModel) {
  static constexpr Shape kShapes[] = {
      {1, 16, 1, 1},   {7, 20, 3, 1},   {17, 128, 16, 1}, {33, 136, 1, 2}, {16, 300, 9, 1},
      {5, 520, 8, 1},  {70, 96, 3, 1},  {3, 1000, 16, 1}, {40, 256, 1, 1}, {9, 33, 16, 2},
  };
  std::mt19937 rng(20261207);
  Compared compared;
  int cases = 0;
  for (const WeightFormat format : {WeightFormat::kMxfp8E4m3, WeightFormat::kFp8E4m3PerChannel}) {
    for (const Shape& s : kShapes) {
      for (const bool specials : {false, true}) {
        const testing::GemvCase c = testing::DrawE4m3Case(rng, format, s.n, s.k, s.m, s.batch, specials);
        const int split = cases % 4 == 0 ? 3 : 0;
        const matmul::OutputType out = testing::OutputOfRun(cases);
        compared += ExpectSimulationEqualsModel(c, split, out);
        ++cases;
      }
    }
  }
  EXPECT_EQ(cases, 40);
  EXPECT_GT(compared.finite_nonzero * 2, compared.outputs) << compared.finite_nonzero << " of " << compared.outputs;
  EXPECT_GT(compared.paths.plain, 0);
  EXPECT_GT(compared.paths.table, 0);
}

// The E4M3 decode, exhaustively: every code times every E8M0 scale byte,
// each in its own chunk, row half, slot and element (E4m3DecodePlaceOf,
// which the GPU test uses too), through MXFP8's AFragmentOfChunk on the
// table path and, for plain scales, the plain path, equals the model's
// weight operand (one rounding of e4m3 * 2^e into BF16; NaN equals NaN).
TEST(TcGemvDecode, EveryE4m3CodeTimesEveryScaleIsTheModelsOperand) {
  constexpr FormatSpec kBfloat = kBf16;
  std::uint16_t table[256];
  for (int b = 0; b < 256; ++b) table[b] = ScaleOperandCode(ScaleType::kE8m0, static_cast<std::uint8_t>(b));
  const auto scale_operand = [&table](std::uint32_t byte) { return table[byte]; };
  std::int64_t checked = 0, plain = 0;
  for (int s = 0; s < 256; ++s) {
    const double scale_value = DecodeToF64(matmul::ScaleFormatOf(ScaleType::kE8m0), static_cast<std::uint64_t>(s));
    for (int code = 0; code < 256; ++code) {
      const double exact = DecodeToF64(matmul::ElementFormatOf(WeightFormat::kMxfp8E4m3), static_cast<std::uint64_t>(code)) * scale_value;
      const std::uint32_t want = matmul::RoundIntoOperand(kBfloat, exact).code;
      const E4m3DecodePlace at = E4m3DecodePlaceOf(code, s);
      LaneTileWords<TileCodec::kMxfp8> words{};
      words.codes[2 * (at.chunk / 4) + at.row_half][at.chunk % 4] = E4m3CodeBitsInWord(static_cast<std::uint8_t>(code), at.slot, at.element);
      const int sb = ScaleByteOf(at.row_half, at.chunk, RecordBlockOf(TileCodec::kMxfp8));
      words.scales[sb / 4] = static_cast<std::uint32_t>(s) << (8 * (sb % 4));
      for (const bool hot : {false, true}) {
        if (hot && (!ScaleIsPlain(TileCodec::kMxfp8, static_cast<std::uint32_t>(s)) || IsE4m3Nan(static_cast<std::uint32_t>(code)))) continue;
        std::uint32_t a[4];
        if (hot) {
          AFragmentOfChunk<TileCodec::kMxfp8, true>(words, scale_operand, at.chunk, a);
        } else {
          AFragmentOfChunk<TileCodec::kMxfp8, false>(words, scale_operand, at.chunk, a);
        }
        const std::uint32_t got = (a[2 * at.slot + at.row_half] >> (16 * at.element)) & 0xFFFFu;
        const double got_value = DecodeToF64(kBfloat, got);
        if (exact != exact) {
          EXPECT_NE(got_value, got_value) << "code " << code << " scale " << s << (hot ? " plain" : " table");
        } else if (got != want) {
          ADD_FAILURE() << "code 0x" << std::hex << code << " scale 0x" << s << (hot ? " plain" : " table") << ": 0x" << got
                        << ", the model 0x" << want;
          return;
        }
        ++checked;
        plain += hot;
      }
    }
  }
  EXPECT_EQ(plain, std::int64_t{135} * 254);      // scales 0..134, the finite codes
  EXPECT_EQ(checked, std::int64_t{256} * 256 + plain);
}

// The UINT4 decode: every code (in every pair and half of a word across
// the loop) against zero points 0, 6 and 15 (every offset -15..15) and
// every FP16 / BF16 scale code: (q - z) * s rounded once into the scale's
// type (the model's operand).
TEST(TcGemvDecode, EveryUint4CodeZeroAndScaleIsTheModelsOperand) {
  std::int64_t checked = 0;
  for (const bool fp16 : {false, true}) {
    const FormatSpec type = OperandFormat(fp16);
    for (std::uint32_t scale = 0; scale < 0x10000u; ++scale) {
      const double scale_value = DecodeToF64(type, scale);
      for (const int z : {0, 6, 15}) {  // the ends and one between; every q, so every offset -15..15
        ASSERT_TRUE(Uint4ZeroFits(z, fp16));
        const std::uint32_t zero_pair = Bf16PairOf(Uint4ZeroOperand(z, fp16));
        for (int q = 0; q < 16; ++q) {
          const std::uint32_t want = matmul::RoundIntoOperand(type, static_cast<double>(q - z) * scale_value).code;
          const int pair = (q + z) % 4, half = (q / 4 + z) % 2;  // every pair and half across the loop
          const std::uint32_t word = Uint4CodeBitsInWord(static_cast<std::uint8_t>(q), pair, half);
          const std::uint32_t scale_pair = Bf16PairOf(static_cast<std::uint16_t>(scale));
          const std::uint32_t g = ((fp16 ? DecodeUint4Pair<true>(word, pair, zero_pair, scale_pair)
                                         : DecodeUint4Pair<false>(word, pair, zero_pair, scale_pair)) >>
                                   (16 * half)) &
                                  0xFFFFu;
          if (scale_value != scale_value || (q == z && std::isinf(scale_value))) {
            const double v = DecodeToF64(type, g);
            EXPECT_NE(v, v) << "q " << q << " z " << z << " scale " << scale;
          } else if (g != want) {
            ADD_FAILURE() << (fp16 ? "fp16" : "bf16") << " q " << q << " z " << z << " scale 0x" << std::hex << scale << ": 0x" << g
                          << ", the model 0x" << want;
            return;
          }
          ++checked;
        }
      }
    }
  }
  EXPECT_EQ(checked, std::int64_t{2} * 0x10000 * 3 * 16);
}

// The kernel runs a tile's chunks from ChunkMaskOf (all of them on every
// tile but a part's edges): the mask must hold exactly the chunks of the
// tile that lie in [first, last), for every range and tile near the edges.
TEST(TcGemvParts, ChunkMaskHoldsExactlyThePartsChunks) {
  int whole = 0;
  for (std::int64_t first = 0; first <= 40; ++first) {
    for (std::int64_t last = first; last <= 40; ++last) {
      for (std::int64_t j = 0; j <= 5; ++j) {
        unsigned want = 0;
        for (int c = 0; c < kChunksPerKTile; ++c) {
          const std::int64_t chunk = j * kChunksPerKTile + c;
          if (chunk >= first && chunk < last) want |= 1u << c;
        }
        ASSERT_EQ(ChunkMaskOf({first, last}, j), want) << "chunks [" << first << ", " << last << "), tile " << j;
        whole += want == kEveryChunk;
      }
    }
  }
  EXPECT_GT(whole, 0);  // the interior case was among those checked
}

// The decode, exhaustively: every E2M1 code in every pair and half of a word
// (CodeBitsInWord), times every scale byte, equals the model's weight operand (one
// rounding of the exact product into BF16; NaN equals NaN).
TEST(TcGemvDecode, EveryCodeTimesEveryScaleIsTheModelsOperand) {
  constexpr FormatSpec kBfloat = kBf16;
  std::int64_t checked = 0;
  for (const WeightFormat format : {WeightFormat::kNvfp4, WeightFormat::kMxfp4}) {
    const ScaleType type = format == WeightFormat::kNvfp4 ? ScaleType::kUe4m3 : ScaleType::kE8m0;
    const int scale_codes = 256;  // every byte (UE4M3 is a 7-bit code: the model reads the byte as stored)
    for (int s = 0; s < scale_codes; ++s) {
      const std::uint32_t scale = Bf16PairOf(ScaleOperandCode(type, static_cast<std::uint8_t>(s)));
      const double scale_value = DecodeToF64(matmul::ScaleFormatOf(type), static_cast<std::uint64_t>(s));
      for (int code = 0; code < 16; ++code) {
        const double exact = DecodeToF64(matmul::ElementFormatOf(format), static_cast<std::uint64_t>(code)) * scale_value;
        const matmul::OperandWeight expected = matmul::RoundIntoOperand(kBfloat, exact);
        for (int pair = 0; pair < 4; ++pair) {
          for (int half = 0; half < 2; ++half) {
            const std::uint32_t word = CodeBitsInWord(static_cast<std::uint8_t>(code), pair, half);
            const std::uint32_t got = (DecodePair(word, pair, scale) >> (16 * half)) & 0xFFFFu;
            const double got_value = DecodeToF64(kBfloat, got);
            if (exact != exact) {
              EXPECT_NE(got_value, got_value) << "code " << code << " scale " << s;
            } else {
              EXPECT_EQ(got, expected.code) << WeightFormatName(format) << " code " << code << " scale " << s
                                            << " pair " << pair << " half " << half;
            }
            // The other half of the register is the zero code's operand.
            const std::uint32_t other = (DecodePair(word, pair, scale) >> (16 * (1 - half))) & 0xFFFFu;
            const double other_value = DecodeToF64(kBfloat, other);
            EXPECT_TRUE(scale_value != scale_value ? other_value != other_value : other_value == 0.0);
            ++checked;
          }
        }
      }
    }
  }
  EXPECT_EQ(checked, (256 + 256) * 16 * 8);
}

// The plain-scale path, exhaustively: every plain scale byte (ScaleIsPlain)
// in every block position of a lane's scale words, both row halves, times
// every E2M1 code in every pair and half, through PlainScaleOperands and the
// decode the kernel uses with it (DecodePair for UE4M3, DecodePairFolded for
// E8M0), equals the model's weight operand; the other half of each register
// is the model's operand of the zero code.
template <TileCodec kCodec>
std::int64_t ExpectPlainPathIsTheModel() {
  constexpr FormatSpec kBfloat = kBf16;
  constexpr ScaleType kType = RecordScaleTypeOf(kCodec);
  constexpr int kBlock = RecordBlockOf(kCodec);
  const WeightFormat format = FormatOf(kCodec);
  std::int64_t checked = 0;
  for (int s = 0; s < 256; ++s) {
    if (!ScaleIsPlain(kCodec, static_cast<std::uint32_t>(s))) continue;
    const double scale_value = DecodeToF64(matmul::ScaleFormatOf(kType), static_cast<std::uint64_t>(s));
    for (int b = 0; b < ScalesPerRowTile(kBlock); ++b) {
      for (int scale_half = 0; scale_half < 2; ++scale_half) {
        LaneTileWords<kCodec> words{};
        const int byte = ScaleByteOfBlock(scale_half, b);
        words.scales[byte / 4] = static_cast<std::uint32_t>(s) << (8 * (byte % 4));
        const std::uint32_t operands = PlainScaleOperands<kCodec>(words.scales, b);
        const std::uint32_t scale_pair = Bf16PairOf(static_cast<std::uint16_t>(operands >> (16 * scale_half)));
        for (int code = 0; code < 16; ++code) {
          const double exact = DecodeToF64(matmul::ElementFormatOf(format), static_cast<std::uint64_t>(code)) * scale_value;
          const std::uint32_t expected = matmul::RoundIntoOperand(kBfloat, exact).code;
          for (int pair = 0; pair < 4; ++pair) {
            for (int half = 0; half < 2; ++half) {
              const std::uint32_t word = CodeBitsInWord(static_cast<std::uint8_t>(code), pair, half);
              const std::uint32_t got = kBlock == 16 ? DecodePair(word, pair, scale_pair)
                                                     : DecodePairFolded(word, pair, scale_pair);
              EXPECT_EQ((got >> (16 * half)) & 0xFFFFu, expected)
                  << WeightFormatName(format) << " code " << code << " scale " << s << " block " << b;
              EXPECT_EQ((got >> (16 * (1 - half))) & 0xFFFFu, matmul::RoundIntoOperand(kBfloat, 0.0).code);
              ++checked;
            }
          }
        }
      }
    }
  }
  return checked;
}

TEST(TcGemvDecode, PlainScalesGiveTheModelsOperand) {
  EXPECT_EQ(ExpectPlainPathIsTheModel<TileCodec::kNvfp4>(), std::int64_t{0x77} * 8 * 2 * 16 * 8);
  EXPECT_EQ(ExpectPlainPathIsTheModel<TileCodec::kMxfp4>(), std::int64_t{129} * 4 * 2 * 16 * 8);
}

// The scale table is exact: every scale code's BF16 operand has the scale's
// value (so the weight's one rounding is the multiply).
TEST(TcGemvDecode, EveryScaleCodeIsExactInBf16) {
  constexpr FormatSpec kBfloat = kBf16;
  for (const ScaleType type : {ScaleType::kUe4m3, ScaleType::kE8m0}) {
    for (int s = 0; s < 256; ++s) {
      const double v = DecodeToF64(matmul::ScaleFormatOf(type), static_cast<std::uint64_t>(s));
      const double got = DecodeToF64(kBfloat, ScaleOperandCode(type, static_cast<std::uint8_t>(s)));
      if (v != v) {
        EXPECT_NE(got, got);
      } else {
        EXPECT_EQ(got, v) << ScaleTypeName(type) << " code " << s;
      }
    }
  }
}

TEST(TcGemvPack, RefusesWhatTheKernelCannotRun) {
  std::mt19937 rng(3);
  testing::GemvCase c = testing::DrawCase(rng, WeightFormat::kNvfp4, 4, 40, 1, 1, false);
  c.geometry = matmul::ScaleGeometry::kFlatBlocks;  // 40 % 16 != 0: blocks run across rows
  c.scales.resize(static_cast<std::size_t>(matmul::PerBatchSizes(c.View()).scales));
  EXPECT_NE(PackForTcGemv(c.View()).error.find("flat blocks"), std::string::npos);
  matmul::WeightView w = c.View();
  w.n = 0;
  EXPECT_NE(PackForTcGemv(w).error.find("N = 0"), std::string::npos);
  testing::GemvCase e = testing::DrawE4m3Case(rng, WeightFormat::kMxfp8E4m3, 4, 40, 1, 1, false);
  e.geometry = matmul::ScaleGeometry::kFlatBlocks;  // 40 % 32 != 0
  e.scales.resize(static_cast<std::size_t>(matmul::PerBatchSizes(e.View()).scales));
  EXPECT_NE(PackForTcGemv(e.View()).error.find("flat blocks"), std::string::npos);
  EXPECT_EQ(PackForTcGemv(testing::DrawE4m3Case(rng, WeightFormat::kFp8E4m3PerChannel, 4, 40, 1, 1, false).View()).error, "");
}

}  // namespace
}  // namespace lowbit::cuda::tc_gemv
