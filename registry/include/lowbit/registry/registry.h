// The kernel registry: every kernel that computes (scalar model, each Highway
// target, CUDA hardware path, CUDA software path) is one row of
// (operation, format or recipe, backend) with one uniform signature per
// operation. Tests, benchmarks, `lowbit verify` and bindings iterate this
// table, so a kernel is tested and benchmarked by being registered
// (docs/design.md "Everything that computes is a registry entry").
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <initializer_list>
#include <iterator>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "lowbit/formats/format_list.h"
#include "lowbit/formats/policy.h"
#include "lowbit/registry/matmul_entry.h"
#include "lowbit/registry/packing_entry.h"
#include "lowbit/registry/recipe_entry.h"
#include "lowbit/registry/stream.h"
#include "lowbit/registry/tensor_core_entry.h"

namespace lowbit::registry {

// Array operations on element formats. Codes are stored one per element in
// the smallest unsigned type that holds them: uint8_t (<= 8 bits, value in the
// low bits), uint16_t (16-bit formats), uint32_t (FP32), uint64_t (FP64).
// CodeBytes() gives that width.
enum class Operation : std::uint8_t {
  kEncodeF32,      // float[]          -> codes of `format`
  kEncodeBf16,     // uint16_t[] bf16  -> codes
  kEncodeF16,      // uint16_t[] fp16  -> codes
  kDecodeToF32,    // codes            -> float[] (bits per DecodeOptions)
  kDecodeToBf16,   // codes            -> uint16_t[] bf16 (formats whose values BF16 holds)
};

inline constexpr Operation kAllOperations[] = {
    Operation::kEncodeF32, Operation::kEncodeBf16, Operation::kEncodeF16,
    Operation::kDecodeToF32, Operation::kDecodeToBf16};

// True when every finite value of `spec` is a BF16 value (and its range fits
// BF16's, subnormals included), so a decode to BF16 is exact: all FP8/FP6/FP4
// formats, E8M0, UE4M3, INT8/INT4/UINT4 and BF16 itself (docs/formats-reference.md §1).
bool BfloatHoldsExactly(const FormatSpec& spec);

// The coverage contract: which (operation, format) rows must have at least a
// scalar entry. Every operation applies to every element format except FP64
// (the model's exact input type, not a kernel storage format), and
// kDecodeToBf16 only where BfloatHoldsExactly. registry_coverage_test checks
// the registered table against this.
bool OperationApplies(Operation operation, FormatId format);

constexpr std::size_t CodeBytes(const FormatSpec& spec) {
  return spec.total_bits <= 8 ? 1 : spec.total_bits <= 16 ? 2 : spec.total_bits <= 32 ? 4 : 8;
}

// ---- Operation metadata ---------------------------------------------------
// What each operation reads and writes, in one table that the kernels'
// argument checks, the harness (check/), the tests, the benchmarks and the
// CLI size and interpret their buffers from, instead of each writing its own
// switch over the operations.

// The element type of one array of an operation: either codes of the row's
// own format (ConvertArgs::format, CodeBytes wide) or a fixed format (FP32
// as float[], BF16 and FP16 as uint16_t[]).
struct ArrayType {
  bool row_format = true;
  FormatId fixed = FormatId::kFp32;  // when !row_format
  constexpr FormatId Resolve(FormatId row) const { return row_format ? row : fixed; }
};
inline constexpr ArrayType kRowCodes{true, FormatId::kFp32};
constexpr ArrayType FixedArray(FormatId format) { return ArrayType{false, format}; }

struct OperationInfo {
  Operation operation;
  const char* name;  // stable lower-case name for tables and messages: "encode-f32"
  ArrayType input;   // ConvertArgs::input, `count` elements
  ArrayType output;  // ConvertArgs::output, `count` elements
  // Encodes read ConvertArgs::encode (and random_bits under kStochastic);
  // decodes read ConvertArgs::decode.
  bool encode;
};

inline constexpr OperationInfo kOperationInfo[] = {
    {Operation::kEncodeF32, "encode-f32", FixedArray(FormatId::kFp32), kRowCodes, true},
    {Operation::kEncodeBf16, "encode-bf16", FixedArray(FormatId::kBf16), kRowCodes, true},
    {Operation::kEncodeF16, "encode-f16", FixedArray(FormatId::kFp16), kRowCodes, true},
    {Operation::kDecodeToF32, "decode-to-f32", kRowCodes, FixedArray(FormatId::kFp32), false},
    {Operation::kDecodeToBf16, "decode-to-bf16", kRowCodes, FixedArray(FormatId::kBf16), false},
};
static_assert(std::size(kOperationInfo) == std::size(kAllOperations),
              "one metadata row per operation");

// The metadata row of `operation`, or nullptr for a value outside the enum.
constexpr const OperationInfo* FindOperationInfo(Operation operation) {
  for (const OperationInfo& info : kOperationInfo) {
    if (info.operation == operation) return &info;
  }
  return nullptr;
}
// The metadata row of a valid operation (kEncodeF32's for an invalid one;
// ValidateConvertArgs rejects those before a kernel gets here).
constexpr const OperationInfo& Info(Operation operation) {
  const OperationInfo* info = FindOperationInfo(operation);
  return info != nullptr ? *info : kOperationInfo[0];
}

constexpr bool IsEncode(Operation operation) { return Info(operation).encode; }
// The model's view of a row (operation, format): Convert(InputSpec, code,
// OutputSpec, options) is what element i of the output must be.
constexpr const FormatSpec& InputSpec(Operation operation, FormatId format) {
  return Spec(Info(operation).input.Resolve(format));
}
constexpr const FormatSpec& OutputSpec(Operation operation, FormatId format) {
  return Spec(Info(operation).output.Resolve(format));
}
// Bytes per element of the input and output arrays.
constexpr std::size_t InputBytes(Operation operation, FormatId format) {
  return CodeBytes(InputSpec(operation, format));
}
constexpr std::size_t OutputBytes(Operation operation, FormatId format) {
  return CodeBytes(OutputSpec(operation, format));
}
static_assert(InputBytes(Operation::kEncodeF32, FormatId::kE2m1) == 4 &&
              OutputBytes(Operation::kEncodeF32, FormatId::kE2m1) == 1 &&
              InputBytes(Operation::kDecodeToBf16, FormatId::kInt8) == 1 &&
              OutputBytes(Operation::kDecodeToBf16, FormatId::kInt8) == 2 &&
              InputBytes(Operation::kEncodeF16, FormatId::kFp32) == 2 &&
              OutputBytes(Operation::kEncodeF16, FormatId::kFp32) == 4);

// Stable lower-case names for tables and messages: "encode-f32", "decode-to-bf16".
constexpr const char* OperationName(Operation operation) {
  const OperationInfo* info = FindOperationInfo(operation);
  return info != nullptr ? info->name : "unknown-operation";
}

// Outcome of a kernel call: ok, or a one-line message naming the problem
// (null pointer, misaligned buffer, unsupported option, no device...).
struct Status {
  bool ok = true;
  std::string message;
  static Status Ok() { return {}; }
  static Status Error(std::string m) { return {false, std::move(m)}; }
};

// ---- Argument checks every backend shares -----------------------------------
// Each returns Ok or an error naming the problem, so the scalar, SIMD and
// CUDA entry points refuse the same bad input with the same words
// (docs/bad-input.md lists every entry point and what it does with bad input).

// The first EncodeOptions / DecodeOptions field whose value is outside its
// enum ("rounding 99 is not a valid RoundingMode (0..9)"), else Ok. An out-of-range
// enum would otherwise fall through the model's switches to some other rule.
Status ValidateEncodeOptions(const EncodeOptions& options);
Status ValidateDecodeOptions(const DecodeOptions& options);

// One buffer of a call, for CheckNoOverlap: its first byte and its length.
struct BufferRange {
  const void* data;
  std::size_t bytes;
  const char* name;  // "input", "codes", ...
};
// Aliasing contract (docs/bad-input.md "Aliased input and output"): no
// output may share a byte with an input or with another output; in-place
// calls are refused, by every backend, because a kernel that reads ahead of
// its writes (a vector load, a GPU thread) would read what it already wrote.
// "`what`: <output> overlaps <input>", else Ok. Null or empty buffers never
// overlap.
Status CheckNoOverlap(std::string_view what, std::initializer_list<BufferRange> inputs,
                      std::initializer_list<BufferRange> outputs);
// "`what`: <name> is not aligned to <alignment> bytes" for a typed pointer
// (float*, uint32_t*, ...) that C++ would not let the kernel read, else Ok.
// Untyped (void*) buffers take any alignment.
Status CheckAligned(std::string_view what, const void* pointer, std::size_t alignment, const char* name);

// Codes given to decodes must have their bits above total_bits clear; kernels
// may assume it (the scalar model masks them, a SIMD table lookup may not).
struct ConvertArgs {
  Operation operation;
  FormatId format;              // the narrow side of the conversion
  const void* input = nullptr;  // typed per operation
  void* output = nullptr;       // typed per operation
  std::size_t count = 0;        // elements
  EncodeOptions encode;         // encodes
  DecodeOptions decode;         // decodes
  // kStochastic: one 32-bit word per element, its low bits used as the round
  // pack consumes them (round_pack.h). Null otherwise.
  const std::uint32_t* random_bits = nullptr;
  // Device rows: the stream to launch on (stream.h); host rows ignore it.
  StreamHandle stream = nullptr;
};

using ConvertFn = std::function<Status(const ConvertArgs&)>;

struct KernelEntry {
  Operation operation;
  FormatId format;
  std::string backend;  // "scalar", "simd:AVX2", "cuda-hw", "cuda-sw", ...
  // Which encode options this kernel implements exactly (e.g. cuda-hw: only
  // RNE + satfinite). Decodes: any DecodeOptions it honours.
  std::function<bool(const ConvertArgs&)> supports;
  // False when the backend cannot run here (no GPU, CPU lacks the target):
  // shown as skipped, never as passed.
  std::function<bool()> available;
  ConvertFn run;
  // For ChooseConvertRow (choose.h): the memory this row is chosen for, and
  // its rank among the rows that can run the same call (the highest wins;
  // the scalar model is 0, the fallback).
  Memory memory = Memory::kHost;
  int preference = 0;
};

// Checks what every backend must reject before touching memory: an unknown
// operation or format, an operation that does not apply to the format
// (OperationApplies), an option outside its enum (ValidateEncodeOptions /
// ValidateDecodeOptions), a null input/output with count > 0, kStochastic
// without random_bits, a random_bit_count outside 0..32, a count whose byte
// size overflows, an output that overlaps the input or the random bits
// (CheckNoOverlap). count == 0 with null pointers is valid (empty input is
// not an error anywhere: docs/bad-input.md "Empty input"). Buffers take any
// alignment (the scalar backend reads and writes them with memcpy, the SIMD
// kernels with unaligned loads). Every backend library (scalar here, simd/, cuda/, a user's own)
// links lowbit::registry and starts each kernel with this call, so that every
// backend names the same problem the same way.
Status ValidateConvertArgs(const ConvertArgs& args);

// The table. Backends register themselves into it (each backend library
// has its own registration function in its own header, e.g.
// lowbit/simd/register.h); the registry names none of them, and
// lowbit/check/backends.h (target lowbit::backends) is the one place that
// knows which were built.
//
// Thread safety (docs/design.md "Thread safety"): a mutex, with copy-on-write after a read. Add, Find and the
// listings all take the mutex, so threads may register and look up at the
// same time. A listing or a Find result refers to a version of the table
// that never changes again: an Add after a read copies the table and changes
// the copy, and the registry keeps every version a reader was given until it
// is destroyed. So a `const KernelEntry*` from Find, or a reference from
// Entries(), stays valid and unchanged for the registry's lifetime (it does
// not show later Adds; read again for those). The cost: each version that a
// reader saw before another Add stays in memory, which is nothing for the
// usual "register everything, then read" and bounded by the number of
// read-then-add alternations otherwise.
class Registry {
 public:
  Registry();
  ~Registry();
  Registry(Registry&&) noexcept;
  Registry& operator=(Registry&&) noexcept;
  Registry(const Registry&) = delete;
  Registry& operator=(const Registry&) = delete;

  // The process-wide table, empty until someone registers into it, e.g.
  // lowbit::check::RegisterAllBackends(Registry::Global()).
  static Registry& Global();
  // Adds a kernel. An entry with the same (operation, format, backend)
  // replaces the old one, so registering a backend twice is harmless.
  void Add(KernelEntry entry);
  // Every kernel row, in registration order (see "Thread safety" above).
  const std::vector<KernelEntry>& Entries() const;
  // The entry for (operation, format, backend), or nullptr.
  const KernelEntry* Find(Operation operation, FormatId format, std::string_view backend) const;
  // Recipe rows (recipe_entry.h), replaced on the same
  // (operation, recipe, backend) like Add.
  void AddRecipe(RecipeEntry entry);
  const std::vector<RecipeEntry>& RecipeEntries() const;
  const RecipeEntry* FindRecipe(RecipeOperation operation, std::string_view recipe,
                                std::string_view backend) const;
  // Packing rows (packing_entry.h), replaced on the same
  // (layout, direction, backend) like Add.
  void AddPacking(PackingEntry entry);
  const std::vector<PackingEntry>& PackingEntries() const;
  const PackingEntry* FindPacking(PackingLayout layout, PackDirection direction,
                                  std::string_view backend) const;
  // Matrix-product rows (matmul_entry.h), replaced on the same
  // (operation, weight, activation, output, backend) like Add. The weight is
  // stored and found by its canonical name (CanonicalMatmulWeightName): an
  // older name of a kind (matmul::kWeightKindAliases) is the same row.
  void AddMatmul(MatmulEntry entry);
  const std::vector<MatmulEntry>& MatmulEntries() const;
  const MatmulEntry* FindMatmul(MatmulOperation operation, std::string_view weight,
                                matmul::ActivationType activation, matmul::OutputType output,
                                std::string_view backend) const;
  // Tensor-core rows (tensor_core_entry.h), replaced on the same
  // (instruction, n, backend) like Add.
  void AddTensorCore(TensorCoreEntry entry);
  const std::vector<TensorCoreEntry>& TensorCoreEntries() const;
  const TensorCoreEntry* FindTensorCore(TensorCoreId instruction, int n, std::string_view backend) const;

 private:
  struct Tables;  // registry.cc
  std::unique_ptr<Tables> tables_;
};

// The scalar backend: the model over arrays (scalar_backend.cc). Explicit
// registration, because static initialisers in static libraries get dropped
// by the linker.
void RegisterScalarBackend(Registry& registry);
// The model's recipe rows (backend "scalar"); RegisterScalarBackend calls it.
void RegisterScalarRecipes(Registry& registry);
// The model's packing rows (formats/block/packing.h, backend "scalar"), one
// per (layout, direction); RegisterScalarBackend calls it.
void RegisterScalarPacking(Registry& registry);

}  // namespace lowbit::registry
