// The tensor-core GEMV for block-scaled weights (NVFP4, MXFP4, MXFP8 and FP8
// per channel times BF16 activations; UINT4 times FP16 or BF16 ones), M =
// 1..16, step by step as one lane runs it: every function
// here is host and device, so that the kernel (tc_gemv.cu) and the host
// simulation of one warp (cuda/tests/tc_gemv_warp_simulation_test.cc) run the
// same code. Only the instruction itself differs: the kernel issues
// `mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32` (UINT4 with FP16
// scales: `.f16.f16`), the simulation runs
// the tensor-core model (formats/.../matmul/tensor_core.h TensorCoreMma).
//
// The product is y = x * W^T with the weights as the A operand: 16 output
// channels fill A's 16 rows, and the rows of x fill the instruction's n = 8
// columns (M <= 8: one n-tile; M = 9..16: two). Each lane holds, per K chunk
// of 16, the fragments that PTX ISA 9.0 §9.7.14.5 "Matrix multiply-accumulate
// operation using mma instruction", subsection "Matrix Fragments for
// mma.m16n8k16 with floating point type", assigns it (the same placement the
// hardware-verified probe uses: cuda/src/tensor_core_probe.cu MmaAElement,
// MmaBElement, AccumulatorElement):
//   group g = lane / 4, index t = lane % 4;
//   A register i (0..3), half e (0: low 16 bits): row g + 8 (i % 2),
//     fragment column 2 t + e + 8 (i / 2);
//   B register i (0..1), half e: fragment row 2 t + e + 8 i, column g;
//   C / D element i (0..3): row g + 8 (i / 2), column 2 t + i % 2.
// A fragment column and the B fragment row of the same number meet in one
// product. Which K a fragment column holds is the kernel's choice, as long
// as A and B agree and one instruction takes exactly the 16 K of one chunk:
// the fused step adds its 16 products after aligning each to the largest
// exponent, an order-free sum (docs/tensor-cores.md "One fused step"). Here
// fragment column 2 t + e + 8 j holds K = 4 t + 2 j + e of the chunk
// (KOfFragmentColumn), so a lane's four K of a row are consecutive: two
// (4-bit) or four (E4M3) bytes of codes per row and chunk, one 8-byte
// shared-memory load of x.
//
// The schedule this kernel declares (ScheduleOf): the BF16 instruction
// above, K in chunks of 16 in increasing order padded with zeros, no
// promotion, split-K into SplitKOf(N, K, L) parts (a function of the shape only,
// never of M, so a row of y has the same bits whatever M was) added in
// order, p0 + p1 + ..., the FP32 tensor scale (NVFP4) or channel scale (FP8
// per channel) in the epilogue, one
// conversion to the output type (accumulation_schedule.h steps 1-5).
#pragma once

#include <cstdint>
#include <cstring>

#include "lowbit/formats/alternatives/f32_f16_bf16.h"
#include "lowbit/formats/config.h"
#include "lowbit/formats/convert.h"
#include "lowbit/formats/format_list.h"
#include "lowbit/formats/matmul/accumulation_schedule.h"
#include "lowbit/formats/matmul/weight_operand.h"
#include "lowbit/formats/matmul/weights.h"
#include "lowbit/formats/tensor_core.h"

#if defined(__CUDA_ARCH__)
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#endif

namespace lowbit::cuda::tc_gemv {

using matmul::AccumulationSchedule;
using matmul::OutputType;
using matmul::ScaleType;
using matmul::WeightFormat;

// ---- the instruction and the tiles --------------------------------------------

inline constexpr int kTileRows = 16;        // A's m: output channels per warp
inline constexpr int kTileColumns = 8;      // the instruction's n: rows of x per n-tile
inline constexpr int kChunk = 16;           // the instruction's k: one chunk of K
inline constexpr int kChunksPerKTile = 8;   // chunks per 16-byte load of one row
inline constexpr int kKTile = kChunk * kChunksPerKTile;  // 128 elements of K
inline constexpr int kMaxM = 2 * kTileColumns;           // two n-tiles
inline constexpr int kWarpSize = 32;

// ---- what a packed tile holds: the codecs ------------------------------------

// NVFP4 and MXFP4: E2M1 codes and one byte scale per block of 16 / 32 along
// K, BF16 operands and activations. MXFP8: E4M3 codes, an E8M0 scale per
// block of 32, BF16 operands and activations. FP8 per channel: E4M3 codes
// whose FP32 channel scale the epilogue applies (weight_operand.h: the
// operand is the element itself); its record holds the E8M0 code of 1.0 per
// block of 32, so that it runs MXFP8's path. UINT4 (GPTQ, AWQ): 4-bit
// codes, each row's scale (FP16 or BF16) and 4-bit zero point per group
// along K of a multiple of 128, so that a K tile lies in one group; the
// operand and the activations are of the scale's type, so that one
// multiply in that type is the model's one rounding of (q - z) * s
// (weight_operand.h).
enum class TileCodec : std::uint8_t { kNvfp4, kMxfp4, kUint4Fp16, kUint4Bf16, kMxfp8, kFp8Channel };
inline constexpr TileCodec kEveryCodec[] = {TileCodec::kNvfp4,     TileCodec::kMxfp4, TileCodec::kUint4Fp16,
                                            TileCodec::kUint4Bf16, TileCodec::kMxfp8, TileCodec::kFp8Channel};
LOWBIT_HD_CONSTEXPR bool IsUint4(TileCodec c) { return c == TileCodec::kUint4Fp16 || c == TileCodec::kUint4Bf16; }
LOWBIT_HD_CONSTEXPR bool IsE4m3(TileCodec c) { return c == TileCodec::kMxfp8 || c == TileCodec::kFp8Channel; }
// The packed layout's block: the K a scale entry of the tile record covers.
inline constexpr int kUint4RecordBlock = 128;
LOWBIT_HD_CONSTEXPR int RecordBlockOf(TileCodec c) {
  return c == TileCodec::kNvfp4 ? 16 : IsUint4(c) ? kUint4RecordBlock : 32;
}
// The type of the record's scale entries.
LOWBIT_HD_CONSTEXPR ScaleType RecordScaleTypeOf(TileCodec c) {
  return c == TileCodec::kNvfp4       ? ScaleType::kUe4m3
         : c == TileCodec::kUint4Fp16 ? ScaleType::kFp16
         : c == TileCodec::kUint4Bf16 ? ScaleType::kBf16
                                      : ScaleType::kE8m0;
}
LOWBIT_HD_CONSTEXPR TensorCoreId InstructionOf(TileCodec c) {
  return c == TileCodec::kUint4Fp16 ? TensorCoreId::kMmaF16F32 : TensorCoreId::kMmaBf16F32;
}
LOWBIT_HD_CONSTEXPR WeightFormat FormatOf(TileCodec c) {
  switch (c) {
    case TileCodec::kNvfp4: return WeightFormat::kNvfp4;
    case TileCodec::kMxfp4: return WeightFormat::kMxfp4;
    case TileCodec::kMxfp8: return WeightFormat::kMxfp8E4m3;
    case TileCodec::kFp8Channel: return WeightFormat::kFp8E4m3PerChannel;
    default: return WeightFormat::kUint4;
  }
}
// The codec of weights of `format` with scales of `type`; false where the
// kernel has none (PackProblem says why).
LOWBIT_HD_CONSTEXPR bool CodecOf(WeightFormat format, ScaleType type, TileCodec* codec) {
  if (format == WeightFormat::kNvfp4 && type == ScaleType::kUe4m3) return *codec = TileCodec::kNvfp4, true;
  if (format == WeightFormat::kMxfp4 && type == ScaleType::kE8m0) return *codec = TileCodec::kMxfp4, true;
  if (format == WeightFormat::kUint4 && type == ScaleType::kFp16) return *codec = TileCodec::kUint4Fp16, true;
  if (format == WeightFormat::kUint4 && type == ScaleType::kBf16) return *codec = TileCodec::kUint4Bf16, true;
  if (format == WeightFormat::kMxfp8E4m3 && type == ScaleType::kE8m0) return *codec = TileCodec::kMxfp8, true;
  if (format == WeightFormat::kFp8E4m3PerChannel && type == ScaleType::kFp32) return *codec = TileCodec::kFp8Channel, true;
  return false;
}
LOWBIT_HD_CONSTEXPR bool EveryInstructionFitsTheTiles() {
  for (const TileCodec c : kEveryCodec) {
    const TensorCoreInstruction i = Instruction(InstructionOf(c));
    if (i.m != kTileRows || i.n != kTileColumns || i.k != kChunk || i.arithmetic.products_per_step != kChunk) return false;
    TileCodec back = TileCodec::kNvfp4;
    if (!CodecOf(FormatOf(c), c == TileCodec::kFp8Channel ? ScaleType::kFp32 : RecordScaleTypeOf(c), &back) || back != c) {
      return false;
    }
  }
  return true;
}
// One fused step per chunk: the K order inside a chunk is free (see the
// header comment).
static_assert(EveryInstructionFitsTheTiles(), "the tile constants are every codec's instruction's m16n8k16; CodecOf inverts FormatOf");

// The packed weights (PackForTcGemv in tc_gemv_pack.h writes them): for
// batch l, row tile r (16 output channels) and K tile j (128 of K), one
// record of codes in parts of 1024 bytes, each two halves of 512 bytes (h =
// 0: rows g, h = 1: rows g + 8), lane L's 16 bytes at h * 512 + 16 L: one
// coalesced 16-byte load per lane, half and part. 4-bit codes fill one
// part: word w (0..3) of a lane's 16 bytes holds chunks 2 w and 2 w + 1 of
// its row (CodeBitPosition, Uint4CodeBitsInWord say which bits hold which
// K). E4M3 codes fill two: word w of part p holds chunk 4 p + w, the four
// codes of K 4 t .. 4 t + 3 in its bytes 0..3.
inline constexpr int kCodeBytesPerLaneHalf = 16;
inline constexpr int kCodeBytesPerHalf = kWarpSize * kCodeBytesPerLaneHalf;  // 512
inline constexpr int kCodeBytesPerPart = 2 * kCodeBytesPerHalf;             // 1024
LOWBIT_HD_CONSTEXPR int CodePartsOf(TileCodec c) { return IsE4m3(c) ? 2 : 1; }
LOWBIT_HD_CONSTEXPR int CodeBytesPerTile(TileCodec c) { return CodePartsOf(c) * kCodeBytesPerPart; }
inline constexpr int kMaxCodeBytesPerTile = 2 * kCodeBytesPerPart;
static_assert(CodeBytesPerTile(TileCodec::kNvfp4) * 2 == kTileRows * kKTile &&
                  CodeBytesPerTile(TileCodec::kMxfp8) == kTileRows * kKTile &&
                  CodeBytesPerTile(TileCodec::kMxfp8) <= kMaxCodeBytesPerTile,
              "two 4-bit codes a byte, one E4M3 code a byte");
// The chunk of K an E4M3 code word holds: part p, word w.
LOWBIT_HD_CONSTEXPR int E4m3ChunkOf(int part, int word) { return 4 * part + word; }

// Scale entries per row and K tile: 8 (NVFP4, 16 per block), 4 (MX, 32) or
// 1 (UINT4); an entry is a scale byte, or for UINT4 4 bytes: the FP16 /
// BF16 scale and the zero point's operand (Uint4ZeroOperand).
LOWBIT_HD_CONSTEXPR int ScalesPerRowTile(int block) { return kKTile / block; }
LOWBIT_HD_CONSTEXPR int ScaleEntryBytes(int block) { return block == kUint4RecordBlock ? 4 : 1; }
// Per (l, r, j) a scale record of 16 rows: group g's two rows interleaved
// block by block ([row g, block 0][row g + 8, block 0][row g, block 1]...)
// at g * 2 S, so the four lanes of a group load the same 2 S bytes (one 16-
// or 8-byte load) and one 16-bit half of a word holds both scales a chunk
// needs (PlainScaleOperands). UINT4: group g's 8 bytes are the two rows'
// scales, then their zero operands ([scale g][scale g + 8][zero g][zero g
// + 8], 16 bits each), so each word is a pair of row halves.
LOWBIT_HD_CONSTEXPR int ScaleBytesPerTile(int block) {
  return kTileRows * ScalesPerRowTile(block) * ScaleEntryBytes(block);
}
// A lane's 32-bit words of scale record: 4 (NVFP4) or 2 (MX, UINT4).
LOWBIT_HD_CONSTEXPR int ScaleWordsPerLane(int block) { return 2 * ScalesPerRowTile(block) * ScaleEntryBytes(block) / 4; }

struct LanePosition {
  int group;  // g = lane / 4
  int index;  // t = lane % 4
};
LOWBIT_HD_CONSTEXPR LanePosition LaneOf(int lane) { return {lane / 4, lane % 4}; }

// The fragment placement (PTX ISA, cited above).
LOWBIT_HD_CONSTEXPR int ARowOf(int g, int reg) { return g + 8 * (reg % 2); }
LOWBIT_HD_CONSTEXPR int AFragmentColumnOf(int t, int reg, int half) { return 2 * t + half + 8 * (reg / 2); }
LOWBIT_HD_CONSTEXPR int BFragmentRowOf(int t, int reg, int half) { return 2 * t + half + 8 * reg; }
LOWBIT_HD_CONSTEXPR int BColumnOf(int g) { return g; }
LOWBIT_HD_CONSTEXPR int DRowOf(int g, int i) { return g + 8 * (i / 2); }
LOWBIT_HD_CONSTEXPR int DColumnOf(int t, int i) { return 2 * t + i % 2; }

// The kernel's labelling: the K (within a chunk) that fragment column / row
// `c` carries; a bijection of 0..15.
LOWBIT_HD_CONSTEXPR int KOfFragmentColumn(int c) { return 4 * ((c % 8) / 2) + 2 * (c / 8) + c % 2; }
// The K of A register `reg` half `half` in lane index t, and of B's.
LOWBIT_HD_CONSTEXPR int AKOf(int t, int reg, int half) { return KOfFragmentColumn(AFragmentColumnOf(t, reg, half)); }
LOWBIT_HD_CONSTEXPR int BKOf(int t, int reg, int half) { return KOfFragmentColumn(BFragmentRowOf(t, reg, half)); }

constexpr bool KLabellingIsABijection() {
  bool seen[kChunk] = {};
  for (int c = 0; c < kChunk; ++c) {
    const int k = KOfFragmentColumn(c);
    if (k < 0 || k >= kChunk || seen[k]) return false;
    seen[k] = true;
  }
  return true;
}
static_assert(KLabellingIsABijection(), "every K of a chunk in exactly one fragment column");
// A register 2 s + h holds row half h, K 4 t + 2 s + {0, 1}; B register s
// holds K 4 t + 2 s + {0, 1}: a lane's 4 K of a chunk are consecutive.
static_assert(AKOf(3, 0, 0) == 12 && AKOf(3, 0, 1) == 13 && AKOf(3, 2, 0) == 14 && AKOf(3, 3, 1) == 15 &&
                  BKOf(3, 0, 0) == 12 && BKOf(3, 1, 1) == 15,
              "lane t holds K 4t .. 4t + 3");

// ---- the codes: which bits hold which K ---------------------------------------

// A word of the packed codes holds 8 E2M1 codes: 4 pairs, each the two halves
// of one A register. Pair p of word w: chunk 2 w + p / 2, slot s = p % 2 (K 4
// t + 2 s + half).
LOWBIT_HD_CONSTEXPR int PairOf(int chunk_in_word, int slot) { return 2 * chunk_in_word + slot; }
// Byte offset inside the packed codes of (batch l, row tile r, K tile j).
LOWBIT_HD_CONSTEXPR std::int64_t CodeTileOffset(std::int64_t l, std::int64_t r, std::int64_t j,
                                                 std::int64_t row_tiles, std::int64_t k_tiles, TileCodec codec) {
  return ((l * row_tiles + r) * k_tiles + j) * CodeBytesPerTile(codec);
}
LOWBIT_HD_CONSTEXPR int CodeLaneOffset(int half, int lane, int part = 0) {
  return part * kCodeBytesPerPart + half * kCodeBytesPerHalf + lane * kCodeBytesPerLaneHalf;
}
LOWBIT_HD_CONSTEXPR std::int64_t ScaleTileOffset(std::int64_t l, std::int64_t r, std::int64_t j,
                                                  std::int64_t row_tiles, std::int64_t k_tiles, int block) {
  return ((l * row_tiles + r) * k_tiles + j) * ScaleBytesPerTile(block);
}
LOWBIT_HD_CONSTEXPR int ScaleLaneOffset(int g, int block) { return g * 4 * ScaleWordsPerLane(block); }
// Within a lane's scale bytes: row half h, block b of the K tile (or the
// block of chunk c).
LOWBIT_HD_CONSTEXPR int ScaleByteOfBlock(int half, int b) { return 2 * b + half; }
LOWBIT_HD_CONSTEXPR int ScaleByteOf(int half, int chunk, int block) {
  return ScaleByteOfBlock(half, chunk * kChunk / block);
}

// ---- the decode: E2M1 pair -> BF16 pair, the scale folded in ------------------

// The decode makes of a pair's two codes BF16 bits whose values are the E2M1
// values times 2^-126: each code's sign to bit 15 of its half, its exponent
// and mantissa (3 bits) to bits 8..6. Exact for all 16 codes: E2M1's bias is
// 1 and BF16's 127 (docs/formats-reference.md §1 "Format table"), and E2M1's
// subnormal 0.5 lands on BF16's subnormal 0.5 * 2^-126 (ScaledDownDecodeIsExact
// below checks every code in every pair and half against the model's decode).
//
// The bits of a word are laid out so that this takes few instructions (a
// free choice: the packer places the codes, CodeBitsInWord): pairs 0..2 are
// the word rotated left by PairRotation(p) and masked (2 instructions, one
// funnel shift and one LOP3); in pair 3 the sign and exponent bits are
// already in place and the mantissa bit sits 8 bits higher (3
// instructions). Four pairs cannot all be rotations of one mask: the mask's
// bits {6, 7, 8, 15} repeat every 16 bits, and no four translates of them
// cover the 16 residues (checked by exhaustive search), so 9 instructions
// per word of four pairs is what this scheme allows.
inline constexpr std::uint32_t kPairMask = 0x81C081C0u;  // sign, exponent, mantissa of both halves
LOWBIT_HD_CONSTEXPR int PairRotation(int pair) { return pair == 0 ? 2 : pair == 1 ? 6 : 12; }  // pairs 0..2
// Bit `bit` of the code (0: mantissa, 1, 2: exponent, 3: sign) in half
// `half` of the decoded pair, and where the word holds it for pair `pair`.
LOWBIT_HD_CONSTEXPR int DecodedBitOf(int half, int bit) { return 16 * half + (bit == 3 ? 15 : 6 + bit); }
LOWBIT_HD_CONSTEXPR int CodeBitPosition(int pair, int half, int bit) {
  const int target = DecodedBitOf(half, bit);
  if (pair < 3) return (target - PairRotation(pair) + 32) % 32;
  return bit == 0 ? target + 8 : target;
}
// The word bits of E2M1 `code` placed as pair `pair`, half `half`.
LOWBIT_HD_CONSTEXPR std::uint32_t CodeBitsInWord(std::uint8_t code, int pair, int half) {
  std::uint32_t word = 0;
  for (int bit = 0; bit < 4; ++bit) {
    if ((code >> bit) & 1u) word |= 1u << CodeBitPosition(pair, half, bit);
  }
  return word;
}
constexpr bool EveryWordBitHoldsOneCodeBit() {
  std::uint32_t seen = 0;
  for (int pair = 0; pair < 4; ++pair) {
    for (int half = 0; half < 2; ++half) {
      for (int bit = 0; bit < 4; ++bit) {
        const std::uint32_t b = 1u << CodeBitPosition(pair, half, bit);
        if ((seen & b) != 0) return false;
        seen |= b;
      }
    }
  }
  return seen == 0xFFFFFFFFu;
}
static_assert(EveryWordBitHoldsOneCodeBit(), "the 32 bits of a word hold the 8 codes, each bit once");

LOWBIT_HD_CONSTEXPR std::uint32_t RotateLeft(std::uint32_t word, int by) {
  return (word << by) | (word >> (32 - by));
}
LOWBIT_HD_CONSTEXPR std::uint32_t DecodePairScaledDown(std::uint32_t word, int pair) {
  if (pair < 3) return RotateLeft(word, PairRotation(pair)) & kPairMask;
  return (word & (kPairMask & ~0x00400040u)) | ((word >> 8) & 0x00400040u);
}
constexpr bool ScaledDownDecodeIsExact() {
  constexpr FormatSpec kBfloat = kBf16;
  constexpr FormatSpec kFp4 = kE2m1;
  for (int code = 0; code < 16; ++code) {
    for (int half = 0; half < 2; ++half) {
      for (int pair = 0; pair < 4; ++pair) {
        const std::uint32_t r = DecodePairScaledDown(CodeBitsInWord(static_cast<std::uint8_t>(code), pair, half), pair);
        const double got = DecodeToF64(kBfloat, (r >> (16 * half)) & 0xFFFFu);
        const double want = DecodeToF64(kFp4, static_cast<std::uint64_t>(code)) * 0x1p-126;
        if (got != want || ((r >> (16 * half)) & 0x8000u) != ((code & 8u) << 12)) return false;
        if (((r >> (16 * (1 - half))) & 0xFFFFu) != 0) return false;
      }
    }
  }
  return true;
}
static_assert(ScaledDownDecodeIsExact(), "every E2M1 code, every pair and half: its value times 2^-126, its sign");

// 2^126 in BF16, twice: multiplies the scaled-down pair back, exactly (the
// values are at most 6 and BF16 keeps subnormal inputs).
LOWBIT_HD_CONSTEXPR std::uint32_t Bf16PairOf(std::uint16_t code) {
  return static_cast<std::uint32_t>(code) | (static_cast<std::uint32_t>(code) << 16);
}
LOWBIT_HD_CONSTEXPR std::uint16_t Bf16Code(double value) {
  constexpr FormatSpec kBfloat = kBf16;
  return static_cast<std::uint16_t>(matmul::RoundIntoOperand(kBfloat, value).code);
}
inline constexpr std::uint16_t kBf16TwoTo126 = 0x7E80;
static_assert(Bf16Code(0x1p126) == kBf16TwoTo126, "2^126 in BF16");

// The BF16 operand of one scale byte: the model's decode of the scale
// (E8M0 or UE4M3) rounded into BF16 — exact for every UE4M3 and E8M0 code
// (3 mantissa bits; exponents 2^-127 .. 2^127 within BF16's range), checked
// by the decode test, so the one rounding of the weight is the multiply.
// The kernel builds a 256-entry table of these in shared memory.
LOWBIT_HD_CONSTEXPR std::uint16_t ScaleOperandCode(ScaleType type, std::uint8_t byte) {
  return Bf16Code(DecodeToF64(matmul::ScaleFormatOf(type), byte));
}

// The 16-bit operand type: FP16 or BF16.
LOWBIT_HD_CONSTEXPR FormatSpec OperandFormat(bool fp16) { return fp16 ? FormatSpec(kFp16) : FormatSpec(kBf16); }

// a - b or a * b on pairs of 16-bit floats (FP16 or BF16), each half one
// IEEE 754 operation rounded to nearest even (subnormals kept): on the
// device __hsub2_rn / __hmul2_rn (sub / mul .rn .f16x2 / .bf16x2, never
// contracted into an FMA); on the host the exact result (binary64 holds
// it: two 16-bit operands) rounded once by the model. The two agree
// wherever the hardware rounds as IEEE 754 says: the GPU tests check every
// code x scale pair the kernel decodes (DecodeOfEveryCodeAndScaleIsTheModelsOperand,
// DecodeOfEveryUint4CodeIsTheModelsOperand).
template <bool kFp16>
LOWBIT_HD inline std::uint32_t HalfPairOp(std::uint32_t a, std::uint32_t b, bool subtract) {
#if defined(__CUDA_ARCH__)
  std::uint32_t out;
  if constexpr (kFp16) {
    __half2 x, y;
    std::memcpy(&x, &a, sizeof(x));
    std::memcpy(&y, &b, sizeof(y));
    const __half2 r = subtract ? __hsub2_rn(x, y) : __hmul2_rn(x, y);
    std::memcpy(&out, &r, sizeof(out));
  } else {
    __nv_bfloat162 x, y;
    std::memcpy(&x, &a, sizeof(x));
    std::memcpy(&y, &b, sizeof(y));
    const __nv_bfloat162 r = subtract ? __hsub2_rn(x, y) : __hmul2_rn(x, y);
    std::memcpy(&out, &r, sizeof(out));
  }
  return out;
#else
  constexpr FormatSpec kType = OperandFormat(kFp16);
  std::uint32_t out = 0;
  for (int h = 0; h < 2; ++h) {
    const double x = DecodeToF64(kType, (a >> (16 * h)) & 0xFFFFu);
    const double y = DecodeToF64(kType, (b >> (16 * h)) & 0xFFFFu);
    out |= (matmul::RoundIntoOperand(kType, subtract ? x - y : x * y).code & 0xFFFFu) << (16 * h);
  }
  return out;
#endif
}
LOWBIT_HD inline std::uint32_t MultiplyBf16Pairs(std::uint32_t a, std::uint32_t b) { return HalfPairOp<false>(a, b, false); }

// Half h of `pairs` in both halves: the scale pair of row half h from
// PlainScaleOperands. On the device __low2bfloat162 / __high2bfloat162, which
// the multiply takes as an operand selector (.H0_H0 / .H1_H1), no instruction.
LOWBIT_HD inline std::uint32_t BroadcastHalf(std::uint32_t pairs, int half) {
#if defined(__CUDA_ARCH__)
  __nv_bfloat162 x;
  std::memcpy(&x, &pairs, sizeof(x));
  const __nv_bfloat162 b = half == 0 ? __low2bfloat162(x) : __high2bfloat162(x);
  std::uint32_t out;
  std::memcpy(&out, &b, sizeof(out));
  return out;
#else
  return Bf16PairOf(static_cast<std::uint16_t>(pairs >> (16 * half)));
#endif
}

// The A register of pair p of `word`: both weights times the scale pair
// (`scale_pair`: one scale's BF16 code in both halves), rounded once — the
// model's weight operand (weight_operand.h WeightOperand) for every code and
// scale; a NaN scale gives NaN halves.
LOWBIT_HD inline std::uint32_t DecodePair(std::uint32_t word, int pair, std::uint32_t scale_pair) {
  const std::uint32_t exact = MultiplyBf16Pairs(DecodePairScaledDown(word, pair), Bf16PairOf(kBf16TwoTo126));
  return MultiplyBf16Pairs(exact, scale_pair);
}
// The same with the 2^126 folded into the scale (`folded_pair`: the BF16
// code of scale * 2^126 in both halves, which must be exact): one multiply,
// the exact product w * s rounded once, as DecodePair.
LOWBIT_HD inline std::uint32_t DecodePairFolded(std::uint32_t word, int pair, std::uint32_t folded_pair) {
  return MultiplyBf16Pairs(DecodePairScaledDown(word, pair), folded_pair);
}

// ---- the decode: E4M3 pair -> BF16 pair ----------------------------------------

// E4M3 seeeemmm has bias 7 (docs/formats-reference.md §1 "Format table"),
// BF16 127: the code's exponent and mantissa bits moved to BF16's bits 10..4
// and its sign to bit 15 give its value times 2^-120, for every finite code
// (the subnormals 0.mmm * 2^-6 land on BF16's subnormals 0.mmm * 2^-126).
// Slot s of a code word (bytes 2 s and 2 s + 1: K 4 t + 2 s + {0, 1}) takes
// three instructions: a byte permute that puts each byte in the low byte of
// its half and the byte's sign, repeated, in the high byte (PTX ISA "prmt",
// default mode: the msb of a selector nibble replicates the sign), a shift
// left by 4 and a mask. The two NaN codes (0x7F, 0xFF) come out finite: the
// packer sends every tile that holds one to the table path, which decodes
// them as NaN (E4m3PairExact).
inline constexpr std::uint32_t kE4m3PairMask = 0x87F087F0u;
LOWBIT_HD_CONSTEXPR std::uint32_t E4m3SlotSelector(int slot) { return slot == 0 ? 0x9180u : 0xB3A2u; }
LOWBIT_HD_CONSTEXPR std::uint32_t E4m3PairScaledDown(std::uint32_t word, int slot) {
#if defined(__CUDA_ARCH__)
  if (!__builtin_is_constant_evaluated()) {
    // Inline PTX: __byte_perm documents only the selector's low three bits.
    std::uint32_t permuted;
    if (slot == 0) {
      asm("prmt.b32 %0, %1, 0, %2;" : "=r"(permuted) : "r"(word), "n"(0x9180));
    } else {
      asm("prmt.b32 %0, %1, 0, %2;" : "=r"(permuted) : "r"(word), "n"(0xB3A2));
    }
    return (permuted << 4) & kE4m3PairMask;
  }
#endif
  // The permute as PTX ISA "prmt" defines it: result byte i is source byte
  // (selector nibble i) & 7, or that byte's bit 7 repeated when the
  // nibble's bit 3 is set.
  const std::uint32_t selector = E4m3SlotSelector(slot);
  std::uint32_t permuted = 0;
  for (int i = 0; i < 4; ++i) {
    const std::uint32_t nibble = (selector >> (4 * i)) & 0xFu;
    const std::uint32_t byte = (word >> (8 * (nibble & 7u))) & 0xFFu;
    permuted |= ((nibble & 8u) != 0 ? ((byte & 0x80u) != 0 ? 0xFFu : 0u) : byte) << (8 * i);
  }
  return (permuted << 4) & kE4m3PairMask;
}
LOWBIT_HD_CONSTEXPR bool IsE4m3Nan(std::uint32_t code) { return (code & 0x7Fu) == 0x7Fu; }
LOWBIT_HD_CONSTEXPR std::uint32_t E4m3CodeBitsInWord(std::uint8_t code, int slot, int half) {
  return static_cast<std::uint32_t>(code) << (8 * (2 * slot + half));
}
constexpr bool E4m3ScaledDownDecodeIsExact() {
  constexpr FormatSpec kBfloat = kBf16;
  constexpr FormatSpec kFp8 = kE4m3;
  for (int code = 0; code < 256; ++code) {
    if (IsE4m3Nan(static_cast<std::uint32_t>(code))) continue;
    for (int slot = 0; slot < 2; ++slot) {
      for (int half = 0; half < 2; ++half) {
        // The other three bytes hold other codes: none may leak into this half.
        std::uint32_t word = 0;
        for (int b = 0; b < 4; ++b) word |= static_cast<std::uint32_t>(b == 2 * slot + half ? code : code ^ (0x5A + 17 * b)) << (8 * b);
        const std::uint32_t r = E4m3PairScaledDown(word, slot);
        const double got = DecodeToF64(kBfloat, (r >> (16 * half)) & 0xFFFFu);
        const double want = DecodeToF64(kFp8, static_cast<std::uint64_t>(code)) * 0x1p-120;
        if (got != want || ((r >> (16 * half)) & 0x8000u) != ((static_cast<std::uint32_t>(code) & 0x80u) << 8)) return false;
      }
    }
  }
  return true;
}
static_assert(E4m3ScaledDownDecodeIsExact(), "every finite E4M3 code, both slots and halves: its value times 2^-120, its sign");

// ---- plain scales: the scale operand in two integer instructions --------------

// Most scale codes of real weights are "plain": a UE4M3 code with a nonzero
// exponent field below NaN (0x08..0x7E), an E8M0 code up to 128 (MXFP4:
// scales up to 2) or 134 (MXFP8: up to 2^7). For these the operand is
// integer arithmetic on the byte, no table: UE4M3 0eeeemmm is 2^(eeee - 7) *
// 1.mmm (docs/formats-reference.md §1), in BF16 the exponent field eeee + 120
// and the mantissa mmm0000, so the code is byte * 16 + (120 << 7); E8M0 code
// E is 2^(E - 127), and the kernel folds the decode's 2^126 (E2M1) or 2^120
// (E4M3) into it (DecodePairFolded, E4m3AFragment): 2^(E - 1) or 2^(E - 7),
// in BF16 (E + 126) << 7 or (E + 120) << 7, exact up to the bound above.
// NVFP4 scales reach 448, so folding 2^126 into them would overflow BF16:
// NVFP4 keeps DecodePair's two multiplies. Zero, subnormal and NaN scale
// codes (and E8M0 above the bound) go through the table.
// ScaleOperandsArePlainCodes below checks every plain byte against the model.
LOWBIT_HD_CONSTEXPR int FoldExponentOf(TileCodec c) { return c == TileCodec::kMxfp4 ? 126 : IsE4m3(c) ? 120 : 0; }
LOWBIT_HD_CONSTEXPR bool ScaleIsPlain(TileCodec c, std::uint32_t byte) {
  if (c == TileCodec::kNvfp4) return byte >= 0x08 && byte <= 0x7E;
  if (IsUint4(c)) return true;  // one path
  return byte + static_cast<std::uint32_t>(FoldExponentOf(c)) <= 254;  // the folded scale a normal BF16
}
LOWBIT_HD_CONSTEXPR std::uint32_t PlainOperandOffset(TileCodec c) {
  return static_cast<std::uint32_t>(c == TileCodec::kNvfp4 ? 120 : FoldExponentOf(c)) << 7;
}
LOWBIT_HD_CONSTEXPR std::uint32_t PlainOperandMultiplier(TileCodec c) { return c == TileCodec::kNvfp4 ? 16 : 128; }
// Half h of the result: the operand of the scale byte ScaleByteOfBlock(h, b)
// of the lane's scale words, for a block b whose bytes are plain. Two
// instructions on the device (PRMT, IMAD).
template <TileCodec kCodec>
LOWBIT_HD inline std::uint32_t PlainScaleOperands(const std::uint32_t* scale_words, int b) {
  const std::uint32_t word = scale_words[ScaleByteOfBlock(0, b) / 4];
  const int first = ScaleByteOfBlock(0, b) % 4;  // 0 or 2: the two bytes side by side
  static_assert(ScaleByteOfBlock(1, 0) == ScaleByteOfBlock(0, 0) + 1, "a block's two bytes adjacent");
#if defined(__CUDA_ARCH__)
  const std::uint32_t bytes = __byte_perm(word, 0, first == 0 ? 0x4140 : 0x4342);
#else
  const std::uint32_t bytes = ((word >> (8 * first)) & 0xFFu) | (((word >> (8 * first + 8)) & 0xFFu) << 16);
#endif
  return bytes * PlainOperandMultiplier(kCodec) + PlainOperandOffset(kCodec) * 0x10001u;
}
// The code a plain byte's operand must be: the model's scale, times 2^126
// or 2^120 where the kernel folds it in (FoldExponentOf).
LOWBIT_HD_CONSTEXPR std::uint16_t PlainOperandOfModel(TileCodec c, std::uint8_t byte) {
  double scale = DecodeToF64(matmul::ScaleFormatOf(RecordScaleTypeOf(c)), byte);
  for (int i = 0; i < FoldExponentOf(c); ++i) scale *= 2.0;
  return Bf16Code(scale);
}
constexpr bool ScaleOperandsArePlainCodes() {
  for (const TileCodec c : {TileCodec::kNvfp4, TileCodec::kMxfp4, TileCodec::kMxfp8}) {
    int plain = 0;
    for (std::uint32_t byte = 0; byte < 256; ++byte) {
      if (!ScaleIsPlain(c, byte)) continue;
      ++plain;
      double operand = DecodeToF64(matmul::ScaleFormatOf(RecordScaleTypeOf(c)), byte);
      for (int i = 0; i < FoldExponentOf(c); ++i) operand *= 2.0;
      if (DecodeToF64(kBf16, PlainOperandOfModel(c, static_cast<std::uint8_t>(byte))) != operand) return false;  // exact
      if (byte * PlainOperandMultiplier(c) + PlainOperandOffset(c) != PlainOperandOfModel(c, static_cast<std::uint8_t>(byte))) {
        return false;
      }
    }
    if (plain != (c == TileCodec::kNvfp4 ? 0x77 : c == TileCodec::kMxfp4 ? 129 : 135)) return false;
  }
  return true;
}
static_assert(ScaleOperandsArePlainCodes(), "every plain scale byte: two integer operations give the model's operand");

// A K tile takes the plain path when every scale byte of its record is
// plain and, for E4M3 codes, no code is NaN (PackForTcGemv records which
// tiles do). The packer pads rows past N and blocks past K with the scale
// 1.0, a plain code, so that padding alone never sends a tile to the table.
LOWBIT_HD_CONSTEXPR std::uint8_t PaddingScaleByte(ScaleType type) {
  for (int byte = 0; byte < 256; ++byte) {
    if (DecodeToF64(matmul::ScaleFormatOf(type), static_cast<std::uint64_t>(byte)) == 1.0) return static_cast<std::uint8_t>(byte);
  }
  return 0;
}
constexpr bool EveryPaddingScaleIsOneAndPlain() {
  for (const TileCodec c : kEveryCodec) {
    if (IsUint4(c)) continue;  // UINT4 pads with scale +0 (PackedGroupScales)
    const std::uint8_t byte = PaddingScaleByte(RecordScaleTypeOf(c));
    if (!ScaleIsPlain(c, byte) || DecodeToF64(matmul::ScaleFormatOf(RecordScaleTypeOf(c)), byte) != 1.0) return false;
  }
  return true;
}
static_assert(EveryPaddingScaleIsOneAndPlain(), "the padding scale is 1.0 and plain");
LOWBIT_HD_CONSTEXPR bool TileScalesArePlain(TileCodec c, const std::uint8_t* record, int bytes) {
  for (int i = 0; i < bytes; ++i) {
    if (!ScaleIsPlain(c, record[i])) return false;
  }
  return true;
}

// A lane's words of one K tile as its loads deliver them: codes[2 p + h][w]
// the four little-endian words of part p, row half h (CodeLaneOffset),
// scales the scale bytes (ScaleLaneOffset) as little-endian words: 4
// (NVFP4) or 2 (the others).
template <TileCodec kCodec>
struct LaneTileWords {
  std::uint32_t codes[2 * CodePartsOf(kCodec)][4];
  std::uint32_t scales[ScaleWordsPerLane(RecordBlockOf(kCodec))];
};

// The four A registers of chunk c of an E2M1 tile: A register 2 s + h is
// row half h, K 4 t + 2 s + {0, 1} (AKOf), decoded with its row's block
// scale: from PlainScaleOperands when kPlainScales, else `scale_operand(byte)`
// gives the ScaleOperandCode of a scale byte (the kernel reads its
// shared-memory table of all 256).
template <TileCodec kCodec, bool kPlainScales, typename ScaleOperand>
LOWBIT_HD inline void E2m1AFragment(const LaneTileWords<kCodec>& words, const ScaleOperand& scale_operand, int c,
                                    std::uint32_t (&a)[4]) {
  constexpr int kBlock = RecordBlockOf(kCodec);
  if constexpr (kPlainScales) {
    const std::uint32_t operands = PlainScaleOperands<kCodec>(words.scales, c * kChunk / kBlock);
    for (int reg = 0; reg < 4; ++reg) {
      const int half = reg % 2, slot = reg / 2;
      const std::uint32_t scale_pair = BroadcastHalf(operands, half);
      const std::uint32_t word = words.codes[half][c / 2];
      a[reg] = kCodec == TileCodec::kNvfp4 ? DecodePair(word, PairOf(c % 2, slot), scale_pair)
                                           : DecodePairFolded(word, PairOf(c % 2, slot), scale_pair);
    }
  } else {
    for (int reg = 0; reg < 4; ++reg) {
      const int half = reg % 2, slot = reg / 2;
      const int sb = ScaleByteOf(half, c, kBlock);
      const std::uint32_t byte = (words.scales[sb / 4] >> (8 * (sb % 4))) & 0xFFu;
      a[reg] = DecodePair(words.codes[half][c / 2], PairOf(c % 2, slot), Bf16PairOf(scale_operand(byte)));
    }
  }
}

// ---- E4M3 tiles: one multiply a pair ------------------------------------------

// 2^120 in BF16: multiplies the scaled-down pair back, exactly (E4M3's
// values are within 2^-9 .. 448).
inline constexpr std::uint16_t kBf16TwoTo120 = 0x7B80;
static_assert(Bf16Code(0x1p120) == kBf16TwoTo120, "2^120 in BF16");
// The pair of slot s of `word` as BF16 operands without a scale: the exact
// E4M3 values, NaN codes NaN (the table path's decode).
LOWBIT_HD inline std::uint32_t E4m3PairExact(std::uint32_t word, int slot) {
  std::uint32_t pair = MultiplyBf16Pairs(E4m3PairScaledDown(word, slot), Bf16PairOf(kBf16TwoTo120));
  for (int h = 0; h < 2; ++h) {
    if (IsE4m3Nan(word >> (8 * (2 * slot + h)))) pair |= std::uint32_t{0x7FC0} << (16 * h);
  }
  return pair;
}
// The four A registers of chunk c of an E4M3 tile (A register 2 s + h: row
// half h, K 4 t + 2 s + {0, 1}): on the plain path the scaled-down pair
// times the block's scale with 2^120 folded in (PlainScaleOperands), one
// multiply, the model's one rounding of e4m3 * 2^e; else the exact pair
// times the table's scale operand, likewise one rounding.
template <TileCodec kCodec, bool kPlainScales, typename ScaleOperand>
LOWBIT_HD inline void E4m3AFragment(const LaneTileWords<kCodec>& words, const ScaleOperand& scale_operand, int c,
                                    std::uint32_t (&a)[4]) {
  constexpr int kBlock = RecordBlockOf(kCodec);
  const std::uint32_t word = words.codes[2 * (c / 4) + 0][c % 4];
  const std::uint32_t word_upper = words.codes[2 * (c / 4) + 1][c % 4];
  static_assert(E4m3ChunkOf(1, 3) == 7, "chunk c in part c / 4, word c % 4");
  if constexpr (kPlainScales) {
    const std::uint32_t operands = PlainScaleOperands<kCodec>(words.scales, c * kChunk / kBlock);
    for (int reg = 0; reg < 4; ++reg) {
      const int half = reg % 2, slot = reg / 2;
      a[reg] = MultiplyBf16Pairs(E4m3PairScaledDown(half == 0 ? word : word_upper, slot), BroadcastHalf(operands, half));
    }
  } else {
    for (int reg = 0; reg < 4; ++reg) {
      const int half = reg % 2, slot = reg / 2;
      const int sb = ScaleByteOf(half, c, kBlock);
      const std::uint32_t byte = (words.scales[sb / 4] >> (8 * (sb % 4))) & 0xFFu;
      a[reg] = MultiplyBf16Pairs(E4m3PairExact(half == 0 ? word : word_upper, slot), Bf16PairOf(scale_operand(byte)));
    }
  }
}

// ---- UINT4: (q - z) * s in the operand type, two operations a pair ----------------

// A word of packed UINT4 codes holds 4 pairs: pair p's two codes (A
// register halves 0 and 1) at bits 4 p and 16 + 4 p, so that a pair is one
// shift and one mask away (Uint4PairBiased).
LOWBIT_HD_CONSTEXPR std::uint32_t Uint4CodeBitsInWord(std::uint8_t code, int pair, int half) {
  return static_cast<std::uint32_t>(code & 0xF) << (4 * pair + 16 * half);
}
// The bias whose low mantissa bits take a code: 1024 in FP16 (0x6400), 128
// in BF16 (0x4300); both formats step by 1 from there up to 2048 / 256, so
// the code's bits ORed in give bias + q exactly (Uint4BiasedIsExact).
LOWBIT_HD_CONSTEXPR std::uint16_t Uint4Bias(bool fp16) { return fp16 ? 0x6400 : 0x4300; }
LOWBIT_HD_CONSTEXPR double Uint4BiasValue(bool fp16) { return fp16 ? 1024.0 : 128.0; }
LOWBIT_HD_CONSTEXPR std::uint32_t Uint4PairBiased(std::uint32_t word, int pair, bool fp16) {
  const std::uint32_t bias = static_cast<std::uint32_t>(Uint4Bias(fp16)) * 0x10001u;
#if defined(__CUDA_ARCH__)
  // One LOP3, (a & b) | c, with the bias in a register: left to itself the
  // compiler takes the two constants as immediates in two instructions.
  if (!__builtin_is_constant_evaluated()) {
    std::uint32_t out;
    asm("lop3.b32 %0, %1, 0x000F000F, %2, 0xEA;" : "=r"(out) : "r"(word >> (4 * pair)), "r"(bias));
    return out;
  }
#endif
  return ((word >> (4 * pair)) & 0x000F000Fu) | bias;
}
constexpr bool Uint4BiasedIsExact() {
  for (const bool fp16 : {false, true}) {
    for (int q = 0; q < 16; ++q) {
      for (int pair = 0; pair < 4; ++pair) {
        for (int half = 0; half < 2; ++half) {
          const std::uint32_t r = Uint4PairBiased(Uint4CodeBitsInWord(static_cast<std::uint8_t>(q), pair, half), pair, fp16);
          if (DecodeToF64(OperandFormat(fp16), (r >> (16 * half)) & 0xFFFFu) != Uint4BiasValue(fp16) + q) return false;
          if (DecodeToF64(OperandFormat(fp16), (r >> (16 * (1 - half))) & 0xFFFFu) != Uint4BiasValue(fp16)) return false;
        }
      }
    }
  }
  return true;
}
static_assert(Uint4BiasedIsExact(), "every code in every pair and half: bias + q, the other half the bias");
// The record's zero entry: the operand code of bias + z, so that biased
// minus it is q - z, exactly (both within the range where the type steps
// by 1 or less: z in [-bias, bias - 1]; GPTQ and AWQ zero points are 0..15).
LOWBIT_HD_CONSTEXPR bool Uint4ZeroFits(std::int32_t z, bool fp16) {
  return z >= -static_cast<std::int32_t>(Uint4BiasValue(fp16)) && z < static_cast<std::int32_t>(Uint4BiasValue(fp16));
}
LOWBIT_HD_CONSTEXPR std::uint16_t Uint4ZeroOperand(std::int32_t z, bool fp16) {
  return static_cast<std::uint16_t>(matmul::RoundIntoOperand(OperandFormat(fp16), Uint4BiasValue(fp16) + z).code);
}

// The A register of pair p of `word`: (q - z) * s of both weights, rounded
// once into the operand type. `zero_pair` / `scale_pair`: the row's zero
// operand and scale in both halves. The subtraction is exact (see above),
// so the multiply is the one rounding of WeightOperand.
template <bool kFp16>
LOWBIT_HD inline std::uint32_t DecodeUint4Pair(std::uint32_t word, int pair, std::uint32_t zero_pair, std::uint32_t scale_pair) {
  const std::uint32_t offsets = HalfPairOp<kFp16>(Uint4PairBiased(word, pair, kFp16), zero_pair, true);
  return HalfPairOp<kFp16>(offsets, scale_pair, false);
}

// The four A registers of chunk c of a UINT4 tile (A register 2 s + h: row
// half h, K 4 t + 2 s + {0, 1}, as E2m1AFragment): scales[0] holds the
// scales of rows g and g + 8, scales[1] their zero operands.
template <TileCodec kCodec>
LOWBIT_HD inline void Uint4AFragment(const LaneTileWords<kCodec>& words, int c, std::uint32_t (&a)[4]) {
  constexpr bool kFp16 = kCodec == TileCodec::kUint4Fp16;
  for (int reg = 0; reg < 4; ++reg) {
    const int half = reg % 2, slot = reg / 2;
    a[reg] = DecodeUint4Pair<kFp16>(words.codes[half][c / 2], PairOf(c % 2, slot), BroadcastHalf(words.scales[1], half),
                                    BroadcastHalf(words.scales[0], half));
  }
}

// The four A registers of chunk c of a tile of any codec: the kernel and
// the warp simulation call this. kPlainScales: the plain path (a tile
// PackForTcGemv flagged plain); UINT4 has one path.
template <TileCodec kCodec, bool kPlainScales, typename ScaleOperand>
LOWBIT_HD inline void AFragmentOfChunk(const LaneTileWords<kCodec>& words, const ScaleOperand& scale_operand, int c,
                                       std::uint32_t (&a)[4]) {
  if constexpr (IsUint4(kCodec)) {
    Uint4AFragment<kCodec>(words, c, a);
  } else if constexpr (IsE4m3(kCodec)) {
    E4m3AFragment<kCodec, kPlainScales>(words, scale_operand, c, a);
  } else {
    E2m1AFragment<kCodec, kPlainScales>(words, scale_operand, c, a);
  }
}

// The K tail needs no mask: the model pads K with +0 operands (accumulation_
// schedule.h step 1) and the packed tiles pad with code 0, whose operand is
// +0 under every scale but a NaN one (checked for every scale code by the
// decode test); a NaN scale covers a block that holds at least one real
// element of the same row, whose NaN operand makes that output NaN either
// way (the simulation's cases put NaN scales on the tail blocks). UINT4 has
// no K tail: its code 0 is (0 - z) * s, so PackProblem takes K multiples of
// 128 only.

// ---- x in shared memory ----------------------------------------------------------

// A block stages x for kStageTiles K tiles of its part at a time: stage s
// of a part whose tiles start at `first` holds tiles first + s kStageTiles
// onwards, as [8 or 16 rows][SharedXStride(kStageK)] BF16 codes, zero past
// K. The pad of 16 elements (32 bytes) makes the 8-byte loads of a half warp
// (4 groups, rows g apart) fall in distinct banks (tc_gemv.cu asserts it).
inline constexpr int kStageTiles = 8;
inline constexpr int kStageK = kStageTiles * kKTile;  // 1024 elements of K
LOWBIT_HD_CONSTEXPR int SharedXStride(int stage_k) { return stage_k + 16; }
// The first K tile of the stage that holds tile j.
LOWBIT_HD_CONSTEXPR std::int64_t StageFirstTile(std::int64_t first, std::int64_t j) {
  return first + (j - first) / kStageTiles * kStageTiles;
}
// Where x[row][k] sits in the stage starting at tile `stage`.
LOWBIT_HD_CONSTEXPR int StagedXIndex(int row, std::int64_t k, std::int64_t stage) {
  return row * SharedXStride(kStageK) + static_cast<int>(k - stage * kKTile);
}
// K of chunk c of tile j inside the stage starting at tile `stage`.
LOWBIT_HD_CONSTEXPR int StageLocalK(std::int64_t stage, std::int64_t j, int c) {
  return static_cast<int>((j - stage) * kKTile) + c * kChunk;
}
// B registers 0 and 1 of n-tile `tile` for the chunk at stage-local K k0:
// x row 8 tile + g, K k0 + 4 t .. k0 + 4 t + 3, one 8-byte load.
LOWBIT_HD_CONSTEXPR int SharedXOffset(int tile, int g, int t, int k0) {
  return (kTileColumns * tile + BColumnOf(g)) * SharedXStride(kStageK) + k0 + BKOf(t, 0, 0);
}

// ---- split-K and the epilogue -----------------------------------------------------

// Parts of K. The grid is row groups (8 warps, 128 output channels) times
// parts times the batch L, all resident at once on an H100 / H200 (132 SMs, at most
// kBlocksPerSm blocks each at the 60-64 registers ptxas reports for the
// kernel; scripts/gpu/tc_gemv.sh prints them). Among the splits that leave
// at least one K tile (8 chunks) per part and fit one wave, the split
// chosen maximises the product of: the fraction of the resident blocks the
// grid fills (the kernel is bound by the loads in flight, and every block
// adds its warps' loads: on an H100, 7168 x 16384 took 34.4, 30.6 and
// 29.6 us at M = 1 (overlapped calls) and 51.7, 46.5 and 40.9 us at M = 16
// with 7, 8 and 9 parts, 392, 448 and 504 blocks, though 392 loads the SMs
// most evenly; bench/RESULTS.md "Tensor-core GEMV"); and K
// tiles over the tiles the parts load (a part that starts or ends inside a
// K tile loads it too, so a split whose parts are not whole tiles streams
// some weights twice). The smallest split wins ties. A function of N, K and
// L only, never of M (batch invariance), whatever the device.
inline constexpr int kWarpsPerBlock = 8;
inline constexpr std::int64_t kSms = 132;
inline constexpr std::int64_t kBlocksPerSm = 4;
// E4M3 tiles hold twice the code words a lane keeps in flight (16 for the
// tile and 16 for the next one's loads): at 4 blocks (64 registers) ptxas
// spills them, so those kernels run 3 blocks an SM (85 registers), which
// keep as many bytes in flight as 4 blocks of 4-bit tiles.
LOWBIT_HD_CONSTEXPR std::int64_t BlocksPerSmOf(TileCodec c) { return IsE4m3(c) ? 3 : kBlocksPerSm; }
LOWBIT_HD_CONSTEXPR std::int64_t TilesLoaded(std::int64_t k, int split);
LOWBIT_HD_CONSTEXPR int SplitKOf(std::int64_t n, std::int64_t k, std::int64_t batch,
                                 std::int64_t blocks_per_sm = kBlocksPerSm) {
  const std::int64_t row_groups = matmul::CeilDiv(matmul::CeilDiv(n, kTileRows), kWarpsPerBlock) * batch;
  const std::int64_t chunks = matmul::CeilDiv(k, kChunk);
  const std::int64_t k_tiles = matmul::CeilDiv(chunks, kChunksPerKTile);
  std::int64_t most = chunks / kChunksPerKTile;
  if (most > matmul::kMaxSplitK) most = matmul::kMaxSplitK;
  int best = 1;
  double best_score = -1.0;
  for (std::int64_t split = 1; split <= most; ++split) {
    const std::int64_t blocks = row_groups * split;
    const std::int64_t per_sm = matmul::CeilDiv(blocks, kSms);
    if (per_sm > blocks_per_sm) break;
    const double filled = static_cast<double>(blocks) / static_cast<double>(kSms * blocks_per_sm);
    const double once = static_cast<double>(k_tiles) / static_cast<double>(TilesLoaded(k, static_cast<int>(split)));
    if (filled * once > best_score) {
      best_score = filled * once;
      best = static_cast<int>(split);
    }
  }
  return best;
}

// The schedule the kernel declares for W [L][N][K] of `codec` and `output`.
LOWBIT_HD_CONSTEXPR AccumulationSchedule ScheduleOf(TileCodec codec, std::int64_t n, std::int64_t k,
                                                    std::int64_t batch, OutputType output) {
  AccumulationSchedule s;
  s.instruction = InstructionOf(codec);
  s.promotion_interval = 0;
  s.split_k = SplitKOf(n, k, batch, BlocksPerSmOf(codec));
  s.split_reduction = matmul::SplitReduction::kInOrder;
  s.output = output == OutputType::kFp32 ? FormatId::kFp32 : output == OutputType::kBf16 ? FormatId::kBf16
                                                                                          : FormatId::kFp16;
  s.alpha = 1.0f;
  s.scale_per_column = matmul::HasOuterScale(FormatOf(codec));
  return s;
}

// The same for weights of `format` with scales of `type` (a pair CodecOf
// knows; NVFP4's otherwise).
LOWBIT_HD_CONSTEXPR AccumulationSchedule ScheduleOf(WeightFormat format, ScaleType type, std::int64_t n, std::int64_t k,
                                                    std::int64_t batch, OutputType output) {
  TileCodec codec = TileCodec::kNvfp4;
  CodecOf(format, type, &codec);
  return ScheduleOf(codec, n, k, batch, output);
}

// Chunks [first, last) of part p (accumulation_schedule.h step 2).
struct ChunkRange {
  std::int64_t first;
  std::int64_t last;
};
LOWBIT_HD_CONSTEXPR ChunkRange PartChunks(std::int64_t k, int split_k, int part) {
  const std::int64_t chunks = matmul::CeilDiv(k, kChunk);
  const std::int64_t per_part = matmul::CeilDiv(chunks, split_k);
  const std::int64_t first = part * per_part < chunks ? part * per_part : chunks;
  const std::int64_t last = first + per_part < chunks ? first + per_part : chunks;
  return {first, last};
}

// The K tiles a part touches, and the chunks of tile j inside the part: bit
// c of ChunkMaskOf set when chunk c of the tile is (possibly none at the
// part's edges; all kChunksPerKTile on every tile that is not an edge).
struct TileSpan {
  std::int64_t first;
  std::int64_t last;
};
LOWBIT_HD_CONSTEXPR TileSpan TilesOfPart(const ChunkRange& range) {
  return {range.first / kChunksPerKTile, matmul::CeilDiv(range.last, kChunksPerKTile)};
}
inline constexpr unsigned kEveryChunk = (1u << kChunksPerKTile) - 1;
LOWBIT_HD_CONSTEXPR unsigned ChunkMaskOf(const ChunkRange& range, std::int64_t j) {
  const std::int64_t first = j * kChunksPerKTile;
  const std::int64_t lo = range.first > first ? range.first - first : 0;
  const std::int64_t hi = range.last - first < kChunksPerKTile ? range.last - first : kChunksPerKTile;
  if (hi <= lo) return 0;
  return (kEveryChunk >> (kChunksPerKTile - hi)) & ~((1u << lo) - 1u);
}
static_assert(ChunkMaskOf({0, 16}, 1) == kEveryChunk && ChunkMaskOf({3, 13}, 0) == 0xF8u &&
                  ChunkMaskOf({3, 13}, 1) == 0x1Fu && ChunkMaskOf({9, 10}, 1) == 0x02u && ChunkMaskOf({9, 9}, 1) == 0,
              "chunks of a tile inside the part");

// K tiles one row tile's parts load in all (tiles shared by two parts count
// twice).
LOWBIT_HD_CONSTEXPR std::int64_t TilesLoaded(std::int64_t k, int split) {
  std::int64_t tiles = 0;
  for (int part = 0; part < split; ++part) {
    const TileSpan span = TilesOfPart(PartChunks(k, split, part));
    tiles += span.last - span.first;
  }
  return tiles;
}
// The benchmark's shapes: 8192 x 8192 (64 row groups) takes 8 parts of 8
// whole K tiles, 512 blocks; 7168 x 16384 (56 row groups) 9 parts, 504
// blocks, though its parts are not whole tiles (134 tiles loaded of 128);
// 28672 x 8192 (224 row groups), 4096 x 7168 with L = 8 (256) and 7168 x
// 2048 with L = 4 (224) 2 parts; K of one tile or less one part.
static_assert(SplitKOf(8192, 8192, 1) == 8 && SplitKOf(7168, 16384, 1) == 9 && SplitKOf(28672, 8192, 1) == 2 &&
              SplitKOf(4096, 7168, 8) == 2 && SplitKOf(7168, 2048, 4) == 2 && SplitKOf(100, 128, 1) == 1 &&
              SplitKOf(1, 20, 1) == 1);
static_assert(TilesLoaded(16384, 9) == 134, "the 7168 x 16384 parts' tiles, as the comment above says");

// Step 4, in order: parts[0] + parts[1] + ..., each one FP32 addition, NaN
// canonical (the model's own CanonicalNan).
// AddPartInOrder is one step: the sum so far plus the next part.
LOWBIT_HD_CONSTEXPR float AddPartInOrder(float sum, float part) { return matmul::detail::CanonicalNan(sum + part); }
LOWBIT_HD_CONSTEXPR float AddPartsInOrder(const float* parts, int count) {
  float value = parts[0];
  for (int p = 1; p < count; ++p) value = AddPartInOrder(value, parts[p]);
  return value;
}

// Step 5: the column (tensor) scale when the schedule applies it, then the
// one conversion to the output type; returns the output's code.
LOWBIT_HD_CONSTEXPR std::uint32_t Epilogue(const AccumulationSchedule& s, float value, float column_scale) {
  if (s.scale_per_column) value = matmul::detail::CanonicalNan(value * column_scale);
  if (s.alpha != 1.0f) value = matmul::detail::CanonicalNan(value * s.alpha);
  if (s.output == FormatId::kFp32) return F32Bits(value);
  // The model's conversion (EncodeF32 under the default options) in its
  // integer form, proven equal on every input
  // (lowbit/formats/alternatives/f32_f16_bf16.h): a few instructions an
  // output where the model's generic RoundPack takes about a hundred, in
  // the split-K sum's tail that nothing overlaps.
  static_assert(alternatives::EncodeF32ToHalfAlternativeApplies(EncodeOptions{}));
  if (s.output == FormatId::kBf16) return alternatives::EncodeF32BitsToBf16(F32Bits(value));
  return alternatives::EncodeF32BitsToF16(F32Bits(value));
}

}  // namespace lowbit::cuda::tc_gemv
