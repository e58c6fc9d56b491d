// Bad input at every public C++ entry point (docs/bad-input.md: each row of
// that table names one of these tests): null pointers, sizes that are not a
// multiple of the block or group, size computations that overflow (2^31,
// 2^32 and 2^63 boundaries, checked without allocating: each refusal comes
// before any memory is touched, so the buffers passed are a few bytes),
// aliased input and output, misaligned buffers, NaN / Inf / zero scales,
// enum values and names that do not exist, and empty input. Every backend
// row registered here (scalar, every SIMD target; CUDA rows where built)
// must give the same answer: an error naming the problem, or the model's
// result.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <string>
#include <vector>

#include "all_backends.h"
#include "lowbit/check/backends.h"
#include "lowbit/formats/block/int_quant_layout.h"
#include "lowbit/formats/block/packing.h"
#include "lowbit/formats/checked_size.h"
#include "lowbit/formats/recipe/names.h"
#include "lowbit/formats/recipe/tensor.h"
#include "lowbit/registry/registry.h"
#if defined(LOWBIT_HAVE_SIMD)
#include "lowbit/simd/simd.h"
#endif

namespace lowbit::registry {
namespace {

constexpr std::size_t kSizeMax = std::numeric_limits<std::size_t>::max();
constexpr std::size_t k2p31 = std::size_t{1} << 31;
constexpr std::size_t k2p32 = std::size_t{1} << 32;
constexpr std::size_t k2p62 = std::size_t{1} << 62;
constexpr std::size_t k2p63 = std::size_t{1} << 63;

using ::lowbit::testing::AllBackends;

bool Contains(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

#define EXPECT_ERROR(status, part)                                                     \
  do {                                                                                 \
    const Status s_ = (status);                                                        \
    EXPECT_FALSE(s_.ok) << "accepted; wanted an error naming '" << (part) << "'";       \
    EXPECT_TRUE(Contains(s_.message, (part))) << "message: " << s_.message;            \
  } while (0)

// ---- the size helper itself ---------------------------------------------------

TEST(CheckedSize, BoundaryProducts) {
  std::size_t r = 7;
  EXPECT_TRUE(CheckedMul(k2p31, 1, &r) && r == k2p31);
  EXPECT_TRUE(CheckedMul(k2p31, 2, &r) && r == k2p32);
  EXPECT_TRUE(CheckedMul(k2p32, k2p31, &r) && r == k2p63);
  EXPECT_TRUE(CheckedMul(k2p32 - 1, k2p32 + 1, &r) && r == kSizeMax);  // 2^64 - 1 exactly
  r = 7;
  EXPECT_FALSE(CheckedMul(k2p32, k2p32, &r));  // 2^64 wraps to 0
  EXPECT_FALSE(CheckedMul(4, k2p62 + 1, &r));  // the 4 x (2^62 + 1): wraps to 4
  EXPECT_FALSE(CheckedMul(k2p63, 2, &r));
  EXPECT_EQ(r, 7u) << "a refused product leaves the output alone";
  EXPECT_TRUE(CheckedMul(0, kSizeMax, &r) && r == 0);
  EXPECT_TRUE(CheckedAdd(k2p63, k2p63 - 1, &r) && r == kSizeMax);
  EXPECT_FALSE(CheckedAdd(k2p63, k2p63, &r));
  EXPECT_EQ(CeilDiv(kSizeMax, 2), k2p63);
  EXPECT_EQ(CeilDiv(k2p32 + 1, 32), k2p32 / 32 + 1);
  // Element counts must also fit the model's signed 64-bit indices.
  EXPECT_TRUE(CheckedElementCount(k2p31, k2p31, &r) && r == std::size_t{1} << 62);
  EXPECT_TRUE(CheckedElementCount(k2p63 - 1, 1, &r));
  EXPECT_FALSE(CheckedElementCount(k2p63, 1, &r));
  EXPECT_FALSE(CheckedElementCount(k2p32, k2p31, &r));
}

// ---- element conversions (registry rows, simd::Convert) ------------------------

ConvertArgs Args(Operation op, FormatId format, const void* in, void* out, std::size_t count) {
  ConvertArgs a{};
  a.operation = op;
  a.format = format;
  a.input = in;
  a.output = out;
  a.count = count;
  return a;
}

template <typename F>
void ForEveryConvertRow(F&& f) {
  int rows = 0;
  for (const KernelEntry& e : AllBackends().Entries()) {
    if (!e.available()) continue;
    ++rows;
    SCOPED_TRACE(std::string(OperationName(e.operation)) + " " + Spec(e.format).name + " " + e.backend);
    f(e);
  }
  EXPECT_GT(rows, 100);
}

TEST(BadInput, ConvertNullPointers) {
  float x[4] = {1, 2, 3, 4};
  std::uint32_t out[4] = {};
  ForEveryConvertRow([&](const KernelEntry& e) {
    EXPECT_ERROR(e.run(Args(e.operation, e.format, nullptr, out, 4)), "null input");
    EXPECT_ERROR(e.run(Args(e.operation, e.format, x, nullptr, 4)), "null output");
  });
  ConvertArgs a = Args(Operation::kEncodeF32, FormatId::kE4m3, x, out, 4);
  a.encode.rounding = RoundingMode::kStochastic;
  EXPECT_ERROR(ValidateConvertArgs(a), "random_bits");
}

TEST(BadInput, ConvertEmptyIsOk) {
  ForEveryConvertRow([&](const KernelEntry& e) {
    const Status s = e.run(Args(e.operation, e.format, nullptr, nullptr, 0));
    EXPECT_TRUE(s.ok) << s.message;
  });
}

TEST(BadInput, ConvertEnumsOutOfRange) {
  float x[4] = {1, 2, 3, 4};
  std::uint32_t out[4] = {0x5A5A5A5A, 0x5A5A5A5A, 0x5A5A5A5A, 0x5A5A5A5A};
  ForEveryConvertRow([&](const KernelEntry& e) {
    ConvertArgs a = Args(e.operation, e.format, x, out, 4);
    if (IsEncode(e.operation)) {
      a.encode.rounding = static_cast<RoundingMode>(99);
      EXPECT_ERROR(e.run(a), "rounding 99 is not a valid RoundingMode");
      a.encode = {};
      a.encode.overflow = static_cast<Overflow>(3);
      EXPECT_ERROR(e.run(a), "overflow 3 is not a valid Overflow");
      a.encode = {};
      a.encode.negative_into_unsigned = static_cast<NegativeIntoUnsigned>(200);
      EXPECT_ERROR(e.run(a), "negative_into_unsigned 200");
    } else {
      a.decode.nan_payload = static_cast<NanPayload>(4);
      EXPECT_ERROR(e.run(a), "nan_payload 4 is not a valid NanPayload");
    }
  });
  for (std::uint32_t w : out) EXPECT_EQ(w, 0x5A5A5A5Au) << "an error wrote output";
  EXPECT_ERROR(ValidateConvertArgs(Args(static_cast<Operation>(77), FormatId::kE4m3, x, out, 4)),
               "unknown operation 77");
  EXPECT_ERROR(ValidateConvertArgs(Args(Operation::kEncodeF32, static_cast<FormatId>(250), x, out, 4)),
               "unknown format id 250");
#if defined(LOWBIT_HAVE_SIMD)
  ConvertArgs a = Args(Operation::kEncodeF32, FormatId::kE4m3, x, out, 4);
  a.encode.rounding = static_cast<RoundingMode>(99);
  EXPECT_ERROR(simd::Convert(a), "rounding 99");
#endif
}

TEST(BadInput, ConvertSizeOverflow) {
  // count elements of up to 8 bytes: 2^61 + 1 FP64 codes (or 2^62 + 1 FP32
  // values) overflow the byte size; refused before any element is read.
  float x[4] = {};
  std::uint64_t out[4] = {};
  ForEveryConvertRow([&](const KernelEntry& e) {
    const std::size_t widest = std::max(InputBytes(e.operation, e.format), OutputBytes(e.operation, e.format));
    const std::size_t count = kSizeMax / widest + 1;
    EXPECT_ERROR(e.run(Args(e.operation, e.format, x, out, count)), "overflows the buffer size");
    EXPECT_ERROR(e.run(Args(e.operation, e.format, x, out, kSizeMax)), "overflows");
  });
}

TEST(BadInput, ConvertAliasedRefused) {
  // Decoding in place (codes and values in one buffer) and any partial
  // overlap: refused by every row, the buffer left as it was.
  std::vector<unsigned char> buffer(64);
  for (std::size_t i = 0; i < buffer.size(); ++i) buffer[i] = static_cast<unsigned char>(i & 0x3);
  const std::vector<unsigned char> before = buffer;
  ForEveryConvertRow([&](const KernelEntry& e) {
    EXPECT_ERROR(e.run(Args(e.operation, e.format, buffer.data(), buffer.data(), 8)), "overlaps");
    EXPECT_ERROR(e.run(Args(e.operation, e.format, buffer.data(), buffer.data() + 3, 8)), "overlaps");
    EXPECT_ERROR(e.run(Args(e.operation, e.format, buffer.data() + 3, buffer.data(), 8)), "overlaps");
  });
  EXPECT_EQ(buffer, before);
  // Adjacent buffers do not overlap.
  float x[2] = {1.5f, -2.0f};
  ConvertArgs a = Args(Operation::kEncodeF32, FormatId::kE4m3, x, reinterpret_cast<unsigned char*>(x + 2), 2);
  EXPECT_TRUE(ValidateConvertArgs(a).ok);
  // The random bits are an input too.
  std::uint32_t words[8] = {};
  a = Args(Operation::kEncodeF32, FormatId::kE4m3, x, words, 2);
  a.encode.rounding = RoundingMode::kStochastic;
  a.random_bits = words;
  EXPECT_ERROR(ValidateConvertArgs(a), "output overlaps random_bits");
}

TEST(BadInput, ConvertMisalignedBuffersAccepted) {
  // void* buffers take any alignment: every row at byte offsets 1 and 3
  // gives the scalar row's result at offset 0 (the scalar backend reads and
  // writes through memcpy; UBSan's alignment check would flag a typed load).
  ForEveryConvertRow([&](const KernelEntry& e) {
    const KernelEntry* scalar = AllBackends().Find(e.operation, e.format, "scalar");
    ASSERT_NE(scalar, nullptr);
    const std::size_t n = 37, in_bytes = InputBytes(e.operation, e.format), out_bytes = OutputBytes(e.operation, e.format);
    std::vector<unsigned char> in(n * in_bytes + 8), want(n * out_bytes + 8), have(n * out_bytes + 8);
    for (std::size_t i = 0; i < in.size(); ++i) in[i] = static_cast<unsigned char>(i * 37 + 11);
    if (!IsEncode(e.operation)) {
      for (std::size_t i = 0; i < n; ++i) {
        std::uint64_t code = 0;
        std::memcpy(&code, in.data() + 1 + i * in_bytes, in_bytes);
        code &= Spec(e.format).CodeMask();
        std::memcpy(in.data() + 1 + i * in_bytes, &code, in_bytes);
      }
    }
    ConvertArgs a = Args(e.operation, e.format, in.data() + 1, want.data(), n);
    if (!e.supports(a)) return;
    ASSERT_TRUE(scalar->run(a).ok);
    a.output = have.data() + 3;
    const Status s = e.run(a);
    ASSERT_TRUE(s.ok) << s.message;
    EXPECT_EQ(0, std::memcmp(want.data(), have.data() + 3, n * out_bytes));
  });
}

// ---- recipe rows ------------------------------------------------------------------

template <typename F>
void ForEveryRecipeRow(F&& f) {
  int rows = 0;
  for (const RecipeEntry& e : AllBackends().RecipeEntries()) {
    if (!e.available()) continue;
    recipe::Target t;
    ASSERT_TRUE(ParseRecipe(e.recipe, &t)) << e.recipe;
    ++rows;
    SCOPED_TRACE(std::string(RecipeOperationName(e.operation)) + " " + e.recipe + " " + e.backend);
    f(e, t);
  }
  EXPECT_GT(rows, 20);
}

RecipeArgs RArgs(const RecipeEntry& e, const recipe::Target& t, std::size_t rows, std::size_t cols,
                 const float* x, const recipe::QuantizedTensor& q, float* out) {
  return RecipeArgs{e.operation, t, rows, cols, x, q, out};
}

TEST(BadInput, RecipeBufferSizesOverflow) {
  recipe::Target t;
  ASSERT_TRUE(ParseRecipe("int8:ao-sym/tensor", &t));
  // The example: 4 x (2^62 + 1) values said to need 4 code bytes.
  RecipeBuffers b = RecipeBufferSizes(t, 4, k2p62 + 1);
  EXPECT_FALSE(b.ok);
  EXPECT_TRUE(Contains(b.error, "overflows")) << b.error;
  EXPECT_FALSE(RecipeBufferSizes(t, k2p32, k2p32).ok) << "2^64 wraps to 0";
  EXPECT_FALSE(RecipeBufferSizes(t, k2p63, 1).ok) << "past the model's signed indices";
  EXPECT_FALSE(RecipeBufferSizes(t, k2p31, k2p32).ok) << "2^63 elements: past the model's signed indices";
  // 2^31 and 2^32 elements are fine and sized exactly (nothing allocated).
  b = RecipeBufferSizes(t, k2p31, 1);
  ASSERT_TRUE(b.ok) << b.error;
  EXPECT_EQ(b.sizes.code_bytes, static_cast<long>(k2p31));
  ASSERT_TRUE(ParseRecipe("mxfp4:ocp", &t));
  b = RecipeBufferSizes(t, 1u << 16, 1u << 16);
  ASSERT_TRUE(b.ok) << b.error;
  EXPECT_EQ(b.sizes.code_bytes, static_cast<long>(k2p32 / 2));
  EXPECT_EQ(b.sizes.scale_codes, static_cast<long>(k2p32 / 32));
  ASSERT_TRUE(ParseRecipe("int4:ao-sym/g128", &t));
  b = RecipeBufferSizes(t, k2p32, 128);
  ASSERT_TRUE(b.ok) << b.error;
  EXPECT_EQ(b.sizes.code_bytes, static_cast<long>(k2p32 * 64));
  EXPECT_EQ(b.sizes.scales, static_cast<long>(k2p32));
}

TEST(BadInput, RecipeSizeOverflowRefusedByEveryRow) {
  float x[4] = {};
  float out[4] = {};
  std::uint8_t codes[4] = {}, scale_codes[4] = {};
  float scales[4] = {};
  std::int32_t zeros[4] = {};
  recipe::TensorScale ts[1] = {};
  const recipe::QuantizedTensor q{codes, scale_codes, scales, zeros, ts};
  ForEveryRecipeRow([&](const RecipeEntry& e, const recipe::Target& t) {
    // rows x cols that wrap to 0 (2^32 x 2^32) or to a small size must not return ok.
    EXPECT_ERROR(e.run(RArgs(e, t, k2p32, k2p32, x, q, out)), "overflows");
    EXPECT_ERROR(e.run(RArgs(e, t, 4, k2p62 + 128, x, q, out)), "overflows");
    EXPECT_ERROR(e.run(RArgs(e, t, k2p63, 128, x, q, out)), "overflows");
  });
}

TEST(BadInput, RecipeEmptyIsOk) {
  ForEveryRecipeRow([&](const RecipeEntry& e, const recipe::Target& t) {
    for (auto [rows, cols] : {std::pair<std::size_t, std::size_t>{0, 128}, {4, 0}, {0, 0}, {0, kSizeMax}}) {
      const Status s = e.run(RArgs(e, t, rows, cols, nullptr, {}, nullptr));
      EXPECT_TRUE(s.ok) << rows << "x" << cols << ": " << s.message;
    }
  });
}

TEST(BadInput, RecipeNullBuffers) {
  std::vector<float> x(256, 1.0f), out(256);
  ForEveryRecipeRow([&](const RecipeEntry& e, const recipe::Target& t) {
    const RecipeBuffers b = RecipeBufferSizes(t, 2, 128);
    ASSERT_TRUE(b.ok);
    RecipeStorage storage(b.sizes);
    EXPECT_ERROR(e.run(RArgs(e, t, 2, 128, nullptr, storage.View(), nullptr)), "null input or output");
    recipe::QuantizedTensor q = storage.View();
    q.codes = nullptr;
    EXPECT_ERROR(e.run(RArgs(e, t, 2, 128, x.data(), q, out.data())), "null codes");
  });
}

TEST(BadInput, RecipeShapeNotMultipleOfGroup) {
  ForEveryRecipeRow([&](const RecipeEntry& e, const recipe::Target& t) {
    if (t.layout.geometry != recipe::Geometry::kGroup) return;
    std::vector<float> x(3 * (t.layout.size + 1)), out(x.size());
    std::vector<std::uint8_t> bytes(x.size() * 2);
    std::vector<float> scales(x.size());
    std::vector<std::int32_t> zeros(x.size());
    recipe::TensorScale ts{};
    const recipe::QuantizedTensor q{bytes.data(), bytes.data() + x.size(), scales.data(), zeros.data(), &ts};
    EXPECT_ERROR(e.run(RArgs(e, t, 3, static_cast<std::size_t>(t.layout.size) + 1, x.data(), q, out.data())),
                 "not a multiple of the group size");
  });
}

TEST(BadInput, RecipeAliasedRefused) {
  ForEveryRecipeRow([&](const RecipeEntry& e, const recipe::Target& t) {
    const std::size_t rows = 2, cols = 128;
    const RecipeBuffers b = RecipeBufferSizes(t, rows, cols);
    ASSERT_TRUE(b.ok);
    RecipeStorage storage(b.sizes);
    std::vector<float> x(rows * cols, 0.5f);
    const std::vector<float> before = x;
    recipe::QuantizedTensor q = storage.View();
    if (e.operation == RecipeOperation::kQuantizeRecipe) {
      q.codes = reinterpret_cast<std::uint8_t*>(x.data());  // codes written over the input
      EXPECT_ERROR(e.run(RArgs(e, t, rows, cols, x.data(), q, nullptr)), "codes overlaps x");
      EXPECT_EQ(x, before);
    } else {
      float* out = reinterpret_cast<float*>(storage.codes.data());  // dequantize over the codes
      std::vector<float> big(rows * cols + storage.codes.size());
      q.codes = reinterpret_cast<std::uint8_t*>(big.data());
      EXPECT_ERROR(e.run(RArgs(e, t, rows, cols, nullptr, q, big.data() + 1)), "out overlaps codes");
      (void)out;
    }
  });
}

TEST(BadInput, RecipeMisalignedTypedBuffersRefused) {
  ForEveryRecipeRow([&](const RecipeEntry& e, const recipe::Target& t) {
    const std::size_t rows = 2, cols = 128;
    const RecipeBuffers b = RecipeBufferSizes(t, rows, cols);
    RecipeStorage storage(b.sizes);
    std::vector<unsigned char> raw((rows * cols + 1) * sizeof(float));
    const float* x = reinterpret_cast<const float*>(raw.data() + 1);  // never dereferenced
    float* out = reinterpret_cast<float*>(raw.data() + 1);
    if (e.operation == RecipeOperation::kQuantizeRecipe) {
      EXPECT_ERROR(e.run(RArgs(e, t, rows, cols, x, storage.View(), nullptr)), "x is not aligned to 4 bytes");
    } else {
      EXPECT_ERROR(e.run(RArgs(e, t, rows, cols, nullptr, storage.View(), out)), "out is not aligned to 4 bytes");
    }
  });
}

TEST(BadInput, RecipeNonFiniteAndZeroScales) {
  // Dequantize with NaN, +-Inf and zero stored scales (and, for the integer
  // recipes, zero points outside the code range): every row gives the scalar
  // row's bits (the model's rule: a NaN scale makes the block NaN, OCP MX
  // §5.3, docs/formats-reference.md §5), never a crash or a different value.
  const float kScales[] = {std::numeric_limits<float>::quiet_NaN(), std::numeric_limits<float>::infinity(),
                           -std::numeric_limits<float>::infinity(), 0.0f, -0.0f};
  ForEveryRecipeRow([&](const RecipeEntry& e, const recipe::Target& t) {
    if (e.operation != RecipeOperation::kDequantizeRecipe) return;
    const RecipeEntry* scalar = AllBackends().FindRecipe(e.operation, e.recipe, "scalar");
    ASSERT_NE(scalar, nullptr);
    const std::size_t rows = 2, cols = 128;
    const RecipeBuffers b = RecipeBufferSizes(t, rows, cols);
    RecipeStorage storage(b.sizes);
    for (std::size_t i = 0; i < storage.codes.size(); ++i) storage.codes[i] = static_cast<std::uint8_t>(i * 29);
    for (std::size_t i = 0; i < storage.scale_codes.size(); ++i) {
      storage.scale_codes[i] = static_cast<std::uint8_t>(i % 3 == 0 ? 0xFF : i % 3 == 1 ? 0x7F : 0x00);  // NaN, 1, 0
    }
    for (std::size_t i = 0; i < storage.scales.size(); ++i) storage.scales[i] = kScales[i % 5];
    for (std::size_t i = 0; i < storage.zero_points.size(); ++i) {
      storage.zero_points[i] = i % 2 ? 300 : -300;  // outside every code range
    }
    for (recipe::TensorScale& s : storage.tensor_scale) s = {std::numeric_limits<float>::infinity(), 0.0f};
    std::vector<float> want(rows * cols), have(rows * cols);
    ASSERT_TRUE(scalar->run(RArgs(e, t, rows, cols, nullptr, storage.View(), want.data())).ok);
    const Status s = e.run(RArgs(e, t, rows, cols, nullptr, storage.View(), have.data()));
    ASSERT_TRUE(s.ok) << s.message;
    EXPECT_EQ(0, std::memcmp(want.data(), have.data(), want.size() * sizeof(float)));
  });
}

TEST(BadInput, RecipeUnknownNamesAndLayouts) {
  recipe::Target t;
  std::string error;
  EXPECT_FALSE(ParseRecipe("mxfp4:nope", &t, &error));
  EXPECT_TRUE(Contains(error, "nope")) << error;
  EXPECT_FALSE(ParseRecipe("mxint8:te", &t, &error)) << "TE has no MXINT8";
  EXPECT_FALSE(ParseRecipe("e4m3", &t, &error));
  EXPECT_TRUE(Contains(error, "element format, not a recipe")) << error;
  // A group size past int: refused, never read modulo 2^32 (4294967297 -> 1).
  for (const char* name : {"int4:ao-sym/group:4294967297", "int4:ao-sym/g4294967297", "int4:ao-sym/g0",
                           "int4:ao-sym/group:", "int4:ao-sym/tile:4294967297x128", "int4:ao-sym/g-1"}) {
    error.clear();
    EXPECT_FALSE(ParseRecipe(name, &t, &error)) << name;
    EXPECT_FALSE(error.empty()) << name;
  }
  RecipeArgs a;
  EXPECT_ERROR(ValidateRecipeArgs(a), "without a recipe");
  ASSERT_TRUE(ParseRecipe("int8:ao-sym/row", &t));
  a.target = t;
  a.operation = static_cast<RecipeOperation>(9);
  a.rows = a.cols = 1;
  EXPECT_ERROR(ValidateRecipeArgs(a), "unknown recipe operation 9");
}

// A given (static) scale (RecipeArgs::given_scale, vLLM's static FP8
// quantization) is the scalar row's: every other backend derives its scales
// from x, so it must refuse the argument rather than ignore it.
TEST(BadInput, GivenScaleIsRefusedByEveryRowButTheScalarOne) {
  recipe::Target t;
  ASSERT_TRUE(ParseRecipe("e4m3:vllm", &t));
  const std::vector<float> x = {1.0f, -2.0f, 3.0f, 0.5f};
  const float given = 0.25f;
  int refusing = 0;
  for (const RecipeEntry& e : AllBackends().RecipeEntries()) {
    if (e.operation != RecipeOperation::kQuantizeRecipe || e.recipe != "e4m3:vllm/tensor" || !e.available()) continue;
    RecipeStorage storage(RecipeBufferSizes(t, 1, x.size()).sizes);
    RecipeArgs a;
    a.operation = RecipeOperation::kQuantizeRecipe;
    a.target = t;
    a.rows = 1;
    a.cols = x.size();
    a.x = x.data();
    a.q = storage.View();
    a.given_scale = &given;
    const Status s = e.run(a);
    if (e.backend == "scalar") {
      EXPECT_TRUE(s.ok) << s.message;
      EXPECT_EQ(storage.scales.at(0), given);
    } else {
      EXPECT_ERROR(s, "given (static) scales run on the scalar row only");
      ++refusing;
    }
  }
  EXPECT_GT(refusing, 0) << "no SIMD row of e4m3:vllm/tensor ran";
}

// ---- packing rows -------------------------------------------------------------

template <typename F>
void ForEveryPackingRow(F&& f) {
  int rows = 0;
  for (const PackingEntry& e : AllBackends().PackingEntries()) {
    if (!e.available()) continue;
    ++rows;
    SCOPED_TRACE(std::string(PackingLayoutName(e.layout)) + " " + PackDirectionName(e.direction) + " " + e.backend);
    f(e);
  }
  EXPECT_GE(rows, 10);
}

PackingArgs PArgs(const PackingEntry& e, std::size_t rows, std::size_t cols, void* a, void* b) {
  PackingArgs p;
  p.layout = e.layout;
  p.direction = e.direction;
  p.rows = rows;
  p.cols = cols;
  p.codes = static_cast<const std::uint8_t*>(a);
  p.codes_out = static_cast<std::uint8_t*>(b);
  p.packed_bytes = static_cast<std::uint8_t*>(b);
  p.packed_words = static_cast<std::uint32_t*>(b);
  p.in_bytes = static_cast<const std::uint8_t*>(a);
  p.in_words = static_cast<const std::uint32_t*>(a);
  return p;
}

TEST(BadInput, PackingSizesAtBoundaries) {
  PackingSizes s = PackingBufferSizes(PackingLayout::kGptqQweight, k2p31, 1);
  ASSERT_TRUE(s.ok) << s.error;
  EXPECT_EQ(s.codes, k2p31);
  EXPECT_EQ(s.packed_units, k2p31 / 8);
  s = PackingBufferSizes(PackingLayout::kAwq, 1u << 16, 1u << 16);
  ASSERT_TRUE(s.ok) << s.error;
  EXPECT_EQ(s.codes, k2p32);
  EXPECT_EQ(s.packed_units, k2p32 / 8);
  s = PackingBufferSizes(PackingLayout::kNibblesLowFirst, 1, k2p63 - 1);
  ASSERT_TRUE(s.ok) << s.error;
  EXPECT_EQ(s.packed_units, k2p62);
  EXPECT_FALSE(PackingBufferSizes(PackingLayout::kNibblesLowFirst, 1, k2p63).ok);
  EXPECT_FALSE(PackingBufferSizes(PackingLayout::kGptqQweight, k2p32, k2p32).ok) << "wraps to 0";
  EXPECT_FALSE(PackingBufferSizes(PackingLayout::kAwq, 4, k2p62 + 8).ok);
  EXPECT_FALSE(PackingBufferSizes(static_cast<PackingLayout>(77), 8, 8).ok);
}

TEST(BadInput, PackingRowsRefuseOverflowNullAliasAndBadEnums) {
  alignas(4) std::uint8_t in[64] = {}, out[64] = {};
  ForEveryPackingRow([&](const PackingEntry& e) {
    // The smallest shape of at least 8 x 8 the layout takes (the GEMM
    // layouts need K or N in multiples of 16 to 128: docs/layouts.md); every
    // call below is refused before any buffer is touched.
    const PackingLayoutInfo& info = *FindPackingLayoutInfo(e.layout);
    const std::size_t r = std::max<std::size_t>(8, static_cast<std::size_t>(info.rows_multiple));
    const std::size_t c = std::max<std::size_t>(8, static_cast<std::size_t>(info.cols_multiple));
    EXPECT_ERROR(e.run(PArgs(e, k2p32, k2p32, in, out)), "overflow");
    EXPECT_ERROR(e.run(PArgs(e, r, c, nullptr, out)), "null");
    EXPECT_ERROR(e.run(PArgs(e, r, c, in, nullptr)), "null");
    EXPECT_ERROR(e.run(PArgs(e, r, c, in, in)), "overlaps");
    EXPECT_ERROR(e.run(PArgs(e, r, c, in, in + 4)), "overlaps");
    EXPECT_TRUE(e.run(PArgs(e, 0, c, nullptr, nullptr)).ok);
    EXPECT_TRUE(e.run(PArgs(e, r, 0, nullptr, nullptr)).ok);
    PackingArgs bad = PArgs(e, r, c, in, out);
    bad.direction = static_cast<PackDirection>(5);
    EXPECT_ERROR(e.run(bad), "unknown direction 5");
    bad = PArgs(e, r, c, in, out);
    bad.layout = static_cast<PackingLayout>(77);
    EXPECT_ERROR(e.run(bad), "unknown packing layout 77");
    if (info.rows_multiple > 1) {
      EXPECT_ERROR(e.run(PArgs(e, r + 4, c, in, out)), "not a multiple of " + std::to_string(info.rows_multiple));
    }
    if (info.cols_multiple > 1) {
      EXPECT_ERROR(e.run(PArgs(e, r, c + 1, in, out)), "not a multiple of " + std::to_string(info.cols_multiple));
    }
    if (info.unit == PackedUnit::kWord32) {
      EXPECT_ERROR(e.run(PArgs(e, r, c, e.direction == PackDirection::kPack ? in : in + 1,
                               e.direction == PackDirection::kPack ? out + 1 : out)),
                   "packed words is not aligned to 4 bytes");
    }
  });
}

TEST(BadInput, PackersIndexPast2To31) {
  // The model's GPTQ / AWQ packers take 64-bit dimensions: indices past
  // 2^31 are formed without overflow (a one-column matrix of 2^31 + 8 rows
  // would need 2 GiB, so the index arithmetic is checked at compile time
  // through a constexpr pack of a 16 x 8 slice of the same shape rules).
  static_assert([] {
    std::uint8_t q[16 * 8] = {};
    for (int i = 0; i < 16 * 8; ++i) q[i] = static_cast<std::uint8_t>(i & 0xF);
    std::uint32_t words[2 * 8] = {};
    block::PackGptqQweight(q, std::int64_t{16}, std::int64_t{8}, words);
    std::uint8_t back[16 * 8] = {};
    block::UnpackGptqQweight(words, std::int64_t{16}, std::int64_t{8}, back);
    for (int i = 0; i < 16 * 8; ++i) {
      if (back[i] != q[i]) return false;
    }
    return true;
  }());
  // The signature itself: a dimension of 2^31 + 8 is representable.
  using PackFn = void (*)(const std::uint8_t*, std::int64_t, std::int64_t, std::uint32_t*);
  constexpr PackFn pack = &block::PackGptqQweight;
  EXPECT_NE(pack, nullptr);
}

// ---- the SIMD calls of simd.h ------------------------------------------------------

#if defined(LOWBIT_HAVE_SIMD)
constexpr std::int64_t kT = simd::kBestTarget;

// The recipes the SIMD calls below take (recipe/catalog.h), and their
// default layouts; scaled recipes per row.
const recipe::Recipe& kMxfp4 = *recipe::FindRecipe("mxfp4", "ocp");
const recipe::Recipe& kMxfp8 = *recipe::FindRecipe("mxfp8_e4m3", "ocp");
const recipe::Recipe& kNvfp4Te = *recipe::FindRecipe("nvfp4", "te");
const recipe::Recipe& kInt8Sym = *recipe::FindRecipe("int8", "ao-sym");
const recipe::Recipe& kInt4Sym = *recipe::FindRecipe("int4", "ao-sym");
constexpr recipe::Layout kPerRow{recipe::Geometry::kPerRow, 0, 0};

TEST(BadInput, SimdSizeOverflow) {
  float x[8] = {};
  std::uint8_t codes[8] = {}, scales[8] = {};
  std::uint32_t words[8] = {};
  float group_scales[8] = {};
  recipe::TensorScale ts{};
  const recipe::QuantizedTensor block{codes, scales, nullptr, nullptr, &ts};
  const recipe::ConstQuantizedTensor const_block{codes, scales, nullptr, nullptr, &ts};
  const recipe::QuantizedTensor groups{codes, nullptr, group_scales};
  EXPECT_ERROR(simd::Quantize(kT, kMxfp4, kMxfp4.layout, x, 1, kSizeMax, block), "overflows");
  EXPECT_ERROR(simd::Quantize(kT, kMxfp8, kMxfp8.layout, x, 1, k2p62 + 1, block), "overflows");
  EXPECT_ERROR(simd::Quantize(kT, kNvfp4Te, kNvfp4Te.layout, x, 1, k2p62 + 1, block), "overflows");
  EXPECT_ERROR(simd::Dequantize(kT, kMxfp4, kMxfp4.layout, const_block, 1, k2p62 + 1, x), "overflows");
  EXPECT_ERROR(simd::Dequantize(kT, kNvfp4Te, kNvfp4Te.layout, const_block, 1, k2p62 + 1, x), "overflows");
  EXPECT_ERROR(simd::PackNibbles(kT, codes, kSizeMax, scales), "overflows");
  EXPECT_ERROR(simd::PackGptqQweight(kT, codes, k2p32, k2p32, words), "overflows");
  EXPECT_ERROR(simd::UnpackGptqQweight(kT, words, k2p32, k2p32, codes), "overflows");
  EXPECT_ERROR(simd::PackAwq(kT, codes, 8, k2p63, words), "overflows");
  EXPECT_ERROR(simd::UnpackAwq(kT, words, 8, k2p63, codes), "overflows");
  EXPECT_ERROR(simd::PackGptqQzeros(kT, codes, k2p32, k2p32, words), "overflows");
  EXPECT_ERROR(simd::UnpackGptqQzeros(kT, words, k2p32, k2p32, codes), "overflows");
  EXPECT_ERROR(simd::Quantize(kT, kInt8Sym, kPerRow, x, k2p32, k2p32, groups), "overflows");
  EXPECT_ERROR(simd::Quantize(kT, kInt8Sym, kPerRow, x, k2p31, k2p32, groups), "overflows");
  EXPECT_ERROR(simd::Dequantize(kT, kInt8Sym, kPerRow, recipe::AsConst(groups), k2p32, k2p32, x), "overflows");
  EXPECT_ERROR(simd::Quantize(kT, kInt4Sym, kPerRow, x, k2p32, k2p32, groups), "overflows");
}

TEST(BadInput, SimdEmptyIsOk) {
  EXPECT_TRUE(simd::Quantize(kT, kMxfp4, kMxfp4.layout, nullptr, 1, 0, {}).ok);
  EXPECT_TRUE(simd::Quantize(kT, kNvfp4Te, kNvfp4Te.layout, nullptr, 0, 16, {}).ok);
  EXPECT_TRUE(simd::Dequantize(kT, kMxfp4, kMxfp4.layout, {}, 1, 0, nullptr).ok);
  EXPECT_TRUE(simd::Dequantize(kT, kNvfp4Te, kNvfp4Te.layout, {}, 0, 16, nullptr).ok);
  EXPECT_TRUE(simd::PackNibbles(kT, nullptr, 0, nullptr).ok);
  EXPECT_TRUE(simd::UnpackNibbles(kT, block::NibbleOrder::kHighFirst, nullptr, 0, nullptr).ok);
  for (auto [r, c] : {std::pair<std::size_t, std::size_t>{0, 8}, {8, 0}, {0, k2p63}}) {
    EXPECT_TRUE(simd::PackGptqQweight(kT, nullptr, r, c, nullptr).ok) << r << "x" << c;
    EXPECT_TRUE(simd::UnpackAwq(kT, nullptr, r, c, nullptr).ok) << r << "x" << c;
    EXPECT_TRUE(simd::PackGptqQzeros(kT, nullptr, r, c, nullptr).ok) << r << "x" << c;
    EXPECT_TRUE(simd::Quantize(kT, kInt8Sym, kPerRow, nullptr, r, c, {}).ok) << r << "x" << c;
    EXPECT_TRUE(simd::Dequantize(kT, kInt4Sym, kPerRow, {}, r, c, nullptr).ok) << r << "x" << c;
  }
}

TEST(BadInput, SimdNullPointers) {
  float x[32] = {};
  std::uint8_t codes[32] = {}, scales[32] = {};
  float group_scales[4] = {};
  EXPECT_ERROR(simd::Quantize(kT, kMxfp4, kMxfp4.layout, nullptr, 1, 4, {codes, scales}), "null input");
  EXPECT_ERROR(simd::Quantize(kT, kNvfp4Te, kNvfp4Te.layout, x, 1, 4, {codes, scales}), "null tensor scale");
  EXPECT_ERROR(simd::Dequantize(kT, kMxfp4, kMxfp4.layout, {codes, nullptr}, 1, 4, x), "null scale codes");
  EXPECT_ERROR(simd::PackNibbles(kT, nullptr, 4, codes), "null");
  EXPECT_ERROR(simd::PackAwq(kT, codes, 1, 8, nullptr), "null");
  EXPECT_ERROR(simd::Quantize(kT, kInt8Sym, kPerRow, x, 1, 8, {nullptr, nullptr, group_scales}), "null codes");
}

TEST(BadInput, SimdEnumsAndRecipesRefused) {
  float x[32] = {};
  std::uint8_t codes[32] = {}, scales[32] = {};
  recipe::TensorScale ts{};
  EXPECT_ERROR(simd::PackNibbles(kT, static_cast<block::NibbleOrder>(7), codes, 4, scales), "nibble order 7");
  EXPECT_ERROR(simd::UnpackNibbles(kT, static_cast<block::NibbleOrder>(7), codes, 4, scales), "nibble order 7");
  // An element policy outside its enum: named by the check of the options.
  recipe::Recipe bad = kMxfp4;
  bad.element_encode.rounding = static_cast<RoundingMode>(99);
  EXPECT_ERROR(simd::Quantize(kT, bad, bad.layout, x, 1, 4, {codes, scales}), "rounding 99");
  // An NVFP4 recipe that is not its rule's catalog recipe in every field:
  // the kernels fold that recipe in, so they refuse this one.
  recipe::Recipe nvfp4 = kNvfp4Te;
  nvfp4.element_encode.rounding = static_cast<RoundingMode>(99);
  EXPECT_ERROR(simd::Quantize(kT, nvfp4, nvfp4.layout, x, 1, 16, {codes, scales, nullptr, nullptr, &ts}),
               "no kernel for nvfp4:te");
  // A recipe that is not in the catalog runs where its fields allow it.
  recipe::Recipe own = *recipe::FindRecipe("mxint8", "msx");
  own.profile = "my-own";
  EXPECT_TRUE(simd::Quantize(kT, own, own.layout, x, 1, 4, {codes, scales}).ok);
  // A scaled recipe with an out-of-range rounding has no kernel.
  recipe::Recipe r = kInt8Sym;
  r.element_encode.rounding = static_cast<RoundingMode>(99);
  float group_scales[4] = {};
  EXPECT_ERROR(simd::Quantize(kT, r, kPerRow, x, 1, 8, {codes, nullptr, group_scales}), "no kernel for int8:");
}

TEST(BadInput, SimdAliasedRefused) {
  alignas(16) float x[64] = {};
  auto* bytes = reinterpret_cast<std::uint8_t*>(x);
  std::uint8_t scales[8] = {};
  float group_scales[8] = {};
  recipe::TensorScale ts{};
  EXPECT_ERROR(simd::Quantize(kT, kMxfp8, kMxfp8.layout, x, 1, 32, {bytes, scales}), "codes overlaps x");
  EXPECT_ERROR(simd::Quantize(kT, kMxfp8, kMxfp8.layout, x, 1, 32, {bytes + 200, bytes + 100}), "");
  EXPECT_ERROR(simd::Quantize(kT, kNvfp4Te, kNvfp4Te.layout, x, 1, 16, {bytes + 4, scales, nullptr, nullptr, &ts}),
               "codes overlaps x");
  EXPECT_ERROR(simd::Dequantize(kT, kMxfp8, kMxfp8.layout, {bytes, scales}, 1, 32, x), "out overlaps codes");
  EXPECT_ERROR(simd::Dequantize(kT, kNvfp4Te, kNvfp4Te.layout, {bytes, scales, nullptr, nullptr, &ts}, 1, 16, x),
               "out overlaps codes");
  EXPECT_ERROR(simd::PackNibbles(kT, bytes, 32, bytes), "overlaps");
  EXPECT_ERROR(simd::UnpackNibbles(kT, block::NibbleOrder::kHighFirst, bytes, 32, bytes + 8), "overlaps");
  EXPECT_ERROR(simd::PackGptqQweight(kT, bytes, 8, 8, reinterpret_cast<std::uint32_t*>(x)), "overlaps");
  EXPECT_ERROR(simd::UnpackAwq(kT, reinterpret_cast<std::uint32_t*>(x), 1, 8, bytes), "overlaps");
  EXPECT_ERROR(simd::PackGptqQzeros(kT, bytes, 1, 8, reinterpret_cast<std::uint32_t*>(x)), "overlaps");
  EXPECT_ERROR(simd::Quantize(kT, kInt8Sym, kPerRow, x, 2, 8, {bytes + 8, nullptr, group_scales}), "codes overlaps x");
  EXPECT_ERROR(simd::Dequantize(kT, kInt8Sym, kPerRow, {bytes, nullptr, group_scales}, 2, 8, x), "out overlaps codes");
}

TEST(BadInput, SimdNonFiniteScales) {
  // Dequantize with NaN / Inf / zero scales: the model's bits.
  const float kScales[] = {std::numeric_limits<float>::quiet_NaN(), std::numeric_limits<float>::infinity(), 0.0f,
                           -0.0f};
  std::uint8_t codes[4 * 8];
  for (int i = 0; i < 32; ++i) codes[i] = static_cast<std::uint8_t>(i * 37);
  const recipe::ConstQuantizedTensor q{codes, nullptr, kScales};
  float want[32], have[32];
  ASSERT_EQ(recipe::DequantizeTensor(kInt8Sym, kPerRow, q, 4, 8, want), recipe::TensorStatus::kOk);
  ASSERT_TRUE(simd::Dequantize(kT, kInt8Sym, kPerRow, q, 4, 8, have).ok);
  EXPECT_EQ(0, std::memcmp(want, have, sizeof(want)));
}
#endif  // LOWBIT_HAVE_SIMD

// ---- the model's own entry points ------------------------------------------------

TEST(BadInput, ModelTensorStatus) {
  // The constexpr model checks shapes and sizes (TensorStatus) but not
  // pointers: it is the layer the checked entry points above call.
  const recipe::Recipe& r = *recipe::FindRecipe("int8", "ao-sym");
  recipe::GroupGrid g;
  EXPECT_EQ(recipe::MakeGroupGrid(r, {recipe::Geometry::kPerRow, 0, 0}, 0, 8, &g), recipe::TensorStatus::kEmpty);
  EXPECT_EQ(recipe::MakeGroupGrid(r, {recipe::Geometry::kPerRow, 0, 0}, 1L << 32, 1L << 32, &g),
            recipe::TensorStatus::kSizeOverflow);
  EXPECT_EQ(recipe::MakeGroupGrid(r, {recipe::Geometry::kGroup, 128, 0}, 2, 100, &g),
            recipe::TensorStatus::kColsNotMultipleOfGroup);
  EXPECT_EQ(recipe::MakeGroupGrid(r, {recipe::Geometry::kGroup, 0, 0}, 2, 100, &g), recipe::TensorStatus::kBadGroup);
  const recipe::Recipe& mx = *recipe::FindRecipe("mxfp4", "ocp");
  // The largest flat tensor: its block count is formed without rows * cols + 31 wrapping.
  const long big = std::numeric_limits<long>::max();
  ASSERT_EQ(recipe::MakeGroupGrid(mx, mx.layout, 1, big, &g), recipe::TensorStatus::kOk);
  EXPECT_EQ(g.grid_cols, big / 32 + 1);
  EXPECT_EQ(recipe::PackedBytes(recipe::Packing::kNibblesLowFirst, big), big / 2 + 1);
  block::GroupGrid bg;
  EXPECT_EQ(block::MakeGroupGrid({block::Granularity::kPerRow, 0, 0}, 1L << 32, 1L << 32, &bg),
            block::QuantStatus::kSizeOverflow);
  EXPECT_EQ(block::MakeGroupGrid({block::Granularity::kPerRow, 0, 0}, 1L << 31, 1L << 31, &bg),
            block::QuantStatus::kOk);
}

}  // namespace
}  // namespace lowbit::registry
