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
#include <vector>

#include "lowbit/formats/format_list.h"
#include "lowbit/formats/policy.h"

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

class Registry {
 public:
  static Registry& Global();
  void Add(KernelEntry entry);
  const std::vector<KernelEntry>& Entries() const { return entries_; }

 private:
  std::vector<KernelEntry> entries_;
};

// Explicit registration (static initialisers in static libraries get dropped
// by the linker). RegisterAllBackends() calls every backend that was built.
void RegisterScalarBackend(Registry& registry);
void RegisterAllBackends(Registry& registry);

}  // namespace lowbit::registry
