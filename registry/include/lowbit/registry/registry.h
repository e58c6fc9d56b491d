// The kernel registry: every kernel that computes (scalar model, each Highway
// target, CUDA hardware path, CUDA software path) is one row of
// (operation, format or recipe, backend) with one uniform signature per
// operation. Tests, benchmarks, `lowbit verify` and bindings iterate this
// table, so a kernel is tested and benchmarked by being registered
// (DESIGN.md "Everything that computes is a registry entry").
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "lowbit/formats/format_list.h"
#include "lowbit/formats/policy.h"
#include "lowbit/registry/recipe_entry.h"

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

// Stable lower-case names for tables and messages: "encode-f32", "decode-to-bf16".
const char* OperationName(Operation operation);

// True when every finite value of `spec` is a BF16 value (and its range fits
// BF16's, subnormals included), so a decode to BF16 is exact: all FP8/FP6/FP4
// formats, E8M0, UE4M3, INT8/INT4/UINT4 and BF16 itself (FORMAT-FACTS §1).
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

// Outcome of a kernel call: ok, or a one-line message naming the problem
// (null pointer, misaligned buffer, unsupported option, no device...).
struct Status {
  bool ok = true;
  std::string message;
  static Status Ok() { return {}; }
  static Status Error(std::string m) { return {false, std::move(m)}; }
};

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
};

// Checks what every backend must reject before touching memory: an unknown
// operation or format, an operation that does not apply to the format
// (OperationApplies), a null input/output with count > 0, kStochastic without
// random_bits, a random_bit_count outside 0..32. count == 0 with null pointers
// is valid. Backends call it first so that every backend names the same
// problem the same way.
Status ValidateConvertArgs(const ConvertArgs& args);

class Registry {
 public:
  // The process-wide table. Empty until RegisterAllBackends(Registry::Global())
  // (or a single Register*Backend) is called.
  static Registry& Global();
  // Adds a kernel. An entry with the same (operation, format, backend)
  // replaces the old one, so registering a backend twice is harmless.
  void Add(KernelEntry entry);
  const std::vector<KernelEntry>& Entries() const { return entries_; }
  // The entry for (operation, format, backend), or nullptr.
  const KernelEntry* Find(Operation operation, FormatId format,
                          std::string_view backend) const;
  // Recipe rows (recipe_entry.h), replaced on the same
  // (operation, recipe, backend) like Add.
  void AddRecipe(RecipeEntry entry);
  const std::vector<RecipeEntry>& RecipeEntries() const { return recipe_entries_; }
  const RecipeEntry* FindRecipe(RecipeOperation operation, std::string_view recipe,
                                std::string_view backend) const;

 private:
  std::vector<KernelEntry> entries_;
  std::vector<RecipeEntry> recipe_entries_;
};

// Explicit registration (static initialisers in static libraries get dropped
// by the linker). RegisterAllBackends() calls every backend that was built.
void RegisterScalarBackend(Registry& registry);
// The model's recipe rows (backend "scalar"); RegisterScalarBackend calls it.
void RegisterScalarRecipes(Registry& registry);
void RegisterAllBackends(Registry& registry);

// Defined by the SIMD and CUDA libraries, not here: simd/ defines
// RegisterSimdBackends (one entry per Highway target and operation), cuda/
// defines RegisterCudaBackends (hardware and software paths). The build calls
// them from RegisterAllBackends only when target lowbit_simd / lowbit_cuda
// exists: registry/CMakeLists.txt then defines LOWBIT_HAVE_SIMD /
// LOWBIT_HAVE_CUDA_BACKEND and links that library (the wiring runs deferred,
// at the end of the top-level CMakeLists, because simd/ and cuda/ are
// configured after registry/). Such a library links lowbit::registry and
// should start each kernel with ValidateConvertArgs.
void RegisterSimdBackends(Registry& registry);
void RegisterCudaBackends(Registry& registry);

}  // namespace lowbit::registry
