// lowbit::check — the comparison harness as a library: every registered
// kernel against the model, every recipe row against the scalar recipe row,
// every packing row against the scalar packing row,
// the cuda-hw conversions swept over all their inputs on the GPU, and the
// model against the oracle (docs/design.md "Everything that computes is a
// registry entry": the checking machinery is itself a product, after
// TestFloat's testfloat_ver and Highway's test utilities).
//
// The checks return plain structs and print nothing: `lowbit verify` renders
// them with text.h, the gtest suites assert on them row by row, and the
// Python package and users' own kernel checks can read the same fields.
//
// A row whose backend cannot run here (no GPU, a CPU without the target) is
// SKIPPED with the reason, never counted as passed.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "lowbit/formats/format_spec.h"
#include "lowbit/registry/registry.h"

namespace lowbit::check {

class Progress;  // progress.h

// How much each row runs (inputs.h says which inputs, per operation):
//   smoke: boundary inputs plus a few thousand pseudo-random ones (seconds);
//   ci:    every 16-bit input and every code of <= 16-bit formats, a
//          class-complete sample of FP32 inputs;
//   full:  all 2^32 FP32 inputs for the round-to-nearest-even option sets.
enum class Level : std::uint8_t { kSmoke, kCi, kFull };
inline constexpr Level kAllLevels[] = {Level::kSmoke, Level::kCi, Level::kFull};
const char* LevelName(Level level);  // "smoke", "ci", "full"
// False for a name that is not one of LevelName's.
bool ParseLevel(std::string_view name, Level* out);

// What a row compares.
enum class RowKind : std::uint8_t {
  kKernel,    // a registry KernelEntry against the model (formats/convert.h)
  kRecipe,    // a registry RecipeEntry against the "scalar" row of the same recipe
  kPacking,   // a registry PackingEntry against the "scalar" row of the same layout and direction
  kGpuSweep,  // a cuda-hw conversion over all its inputs on the GPU
  kOracle,    // the model against the oracle (lowbit::reference)
  kMatmul,    // a registry MatmulEntry: GEMV bit for bit against the scalar row, GEMM within its bound,
              // a row with a declared schedule bit for bit against the quantized-matmul model
  kTensorCore,  // a registry TensorCoreEntry: the instruction on the GPU against the model, bit for bit
};

// One differing output, decoded. Element rows (kernels, GPU sweeps, oracle)
// fill input / expected / actual as codes of the named formats; recipe rows
// say in `where` which byte or element differs and fill the codes with the
// byte values (quantize) or FP32 bits (dequantize); packing rows say which
// packed byte or word, code, or guard unit past the end differs, with the raw
// values.
struct Mismatch {
  std::string combo;  // the option set, e.g. "rne+sat" (EncodeCombos' names)
  std::string where;  // recipes: "code byte 12", "scale byte 0", "element 5"; packing: "packed word 3"

  std::uint64_t input = 0;   // the input code
  std::string input_format;  // its format name ("fp32"); empty when not one code
  std::string input_value;   // its value ("1.0625", "-inf", "nan")
  std::optional<std::uint32_t> random_bits;  // the word a stochastic encode used

  std::string output_format;  // format of expected / actual; empty for raw bytes
  std::uint64_t expected = 0;  // the model's (oracle rows: the oracle's) output
  std::string expected_value;
  // False when the expected output is a value with no code in output_format
  // (the oracle's exact decode, e.g. "3/1024"): only expected_value is set.
  bool expected_is_code = true;
  std::uint64_t actual = 0;    // the kernel's (oracle rows: the model's) output
  std::string actual_value;
  // |expected - actual| in steps of the output format's value order (1: the
  // neighbouring value), when both are ordered codes; empty with a NaN on
  // either side or for raw bytes.
  std::optional<std::uint64_t> code_distance;

  // Anything the codes do not say: a kernel's error message instead of an
  // output ("kernel error: ..."), differing flags of an oracle encode, the
  // part of a decoded value that differs ("class differs").
  std::string note;
};

// One line of the result: (backend, operation, format or recipe).
struct Row {
  RowKind kind = RowKind::kKernel;
  std::string backend;    // "scalar", "simd:AVX2", "cuda-hw-sweep", "model-vs-oracle"
  std::string operation;  // "encode-f32", "quantize-recipe", "decode-exact", "pack"
  // A format name, the recipe name of a recipe row, or the layout name of a
  // packing row ("nibbles-low-first", registry packing_entry.h).
  std::string format;
  std::uint64_t checked = 0;     // outputs compared (elements, bytes, or encodes)
  std::uint64_t mismatches = 0;  // of those, how many differed
  // Why the row did not run ("backend not available on this machine"); empty
  // if it ran.
  std::string skipped;
  // Option sets the kernel declared unsupported (supports() false): not run.
  int unsupported_option_sets = 0;
  // The first differing outputs, at most kMaxMismatchesPerRow, in input order
  // within a chunk of work (chunks may finish in any order across threads).
  std::vector<Mismatch> first_mismatches;

  enum class Outcome { kPassed, kFailed, kSkipped };
  // kSkipped when `skipped` is set or nothing was checked (no option set
  // supported); kFailed on any mismatch; kPassed otherwise.
  Outcome outcome() const {
    if (!skipped.empty()) return Outcome::kSkipped;
    if (mismatches > 0) return Outcome::kFailed;
    return checked == 0 ? Outcome::kSkipped : Outcome::kPassed;
  }
};

inline constexpr std::size_t kMaxMismatchesPerRow = 4;

// Which rows a plan runs. An empty field selects everything.
struct Filter {
  // A canonical format name (FormatSpec::name): element rows of that format,
  // recipe rows whose name starts with "<format>:".
  std::string format;
  // A substring of the backend's name ("simd", "cuda-hw-sweep", "oracle" for
  // the model-vs-oracle rows).
  std::string backend;
  bool Format(const FormatSpec& spec) const { return format.empty() || format == spec.name; }
  bool Recipe(std::string_view recipe) const;
  // Packing rows hold 4-bit codes: selected with no format, or a 4-bit one
  // (int4, uint4, e2m1).
  bool Packing() const;
  bool Backend(std::string_view name) const {
    return backend.empty() || name.find(backend) != std::string_view::npos;
  }
};

// Which parts of the harness a plan runs.
struct Parts {
  bool kernels = true;     // every KernelEntry of the registry
  bool recipes = true;     // every non-scalar RecipeEntry
  bool packing = true;     // every non-scalar PackingEntry
  bool gpu_sweeps = true;  // ci and full only (they need every input)
  bool oracle = true;      // when lowbit::reference was built
  bool matmul = true;      // every non-scalar MatmulEntry (matmul_check.cc)
  bool tensor_cores = true;  // every TensorCoreEntry (tensor_core_check.cc)
};

struct Plan {
  Level level = Level::kCi;
  Filter filter;
  Parts parts;
  int threads = 2;                // worker threads, at least 1
  Progress* progress = nullptr;   // not owned; null: no progress reports
};

struct Results {
  // Set instead of rows when the plan itself is wrong (threads < 1, a format
  // name that is not canonical).
  std::string error;
  std::vector<Row> rows;
  double seconds = 0;
  std::uint64_t checked() const;
  std::uint64_t mismatches() const;
  std::size_t skipped_rows() const;  // rows with `skipped` set
  bool passed() const { return error.empty() && mismatches() == 0; }
};

// Runs a plan over `registry` (fill it first, e.g. with RegisterAllBackends of
// backends.h). Rows come in this order: kernels (by operation, format, then
// registration order), recipes (registration order), packing (registration
// order), matmul (registration order), GPU sweeps, oracle.
// (Not named Run: inside a gtest TEST body that name is testing::Test::Run.)
Results RunPlan(const registry::Registry& registry, const Plan& plan);

// ---- The parts, each usable alone (the gtest suites run them per row) ----

// Every kernel row of `registry` that the filter selects.
std::vector<Row> CheckKernels(const registry::Registry& registry, Level level,
                              const Filter& filter, int threads, Progress* progress);
// One kernel (a registered row or a user's own KernelEntry) against the model.
Row CheckKernel(const registry::KernelEntry& kernel, Level level, int threads = 1,
                Progress* progress = nullptr);

// Every non-scalar recipe row that the filter selects, each against the
// registry's "scalar" row of the same (operation, recipe).
std::vector<Row> CheckRecipes(const registry::Registry& registry, Level level,
                              const Filter& filter, Progress* progress);
// One recipe row against `scalar` (the model's row of the same operation and
// recipe; nullptr gives a SKIPPED row).
Row CheckRecipe(const registry::RecipeEntry& entry, const registry::RecipeEntry* scalar,
                Level level);

// Every non-scalar packing row that the filter selects, each against the
// registry's "scalar" row of the same (layout, direction): random bytes
// (codes with stray high bits, packed bytes and words) over shapes per level
// (odd counts, one past a vector width, unaligned byte buffers), outputs
// compared unit by unit including guard units past the end (a write there
// is a mismatch).
std::vector<Row> CheckPackings(const registry::Registry& registry, Level level,
                               const Filter& filter, Progress* progress);
// One packing row against `scalar` (nullptr gives a SKIPPED row).
Row CheckPacking(const registry::PackingEntry& entry, const registry::PackingEntry* scalar,
                 Level level);

// The cuda-hw sweeps (no rows at smoke). Without the CUDA library in this
// build: one SKIPPED row saying so (when the filter selects "cuda-hw-sweep").
std::vector<Row> CheckGpuSweeps(Level level, const Filter& filter, Progress* progress);
bool GpuSweepsBuilt();

// The model against the oracle. Without lowbit::reference in this build: one
// SKIPPED row saying so (when the filter selects "oracle").
std::vector<Row> CheckModelAgainstOracle(Level level, const Filter& filter, int threads,
                                         Progress* progress);
bool OracleBuilt();

// Every non-scalar matmul row (registry matmul_entry.h) that the filter
// selects (no format filter; the backend filter applies): GEMV rows bit for
// bit against the "scalar" GEMV row of the same (weight, activation,
// output), NaN equal to any NaN; GEMM rows within their error_bound of the
// exact mode (formats/matmul/exact.h); a row that declares its schedule
// (MatmulEntry::schedule) bit for bit against QuantizedMatmulModel under it,
// its format column followed by the schedule in words. docs/matmul.md.
std::vector<Row> CheckMatmuls(const registry::Registry& registry, Level level, const Filter& filter,
                              Progress* progress);
// One matmul row (`scalar`: the scalar GEMV row; unused for GEMM rows and
// rows that declare a schedule).
Row CheckMatmul(const registry::MatmulEntry& entry, const registry::MatmulEntry* scalar, Level level);

// Every tensor-core row (registry tensor_core_entry.h) that the filter
// selects (no format filter; the backend filter applies): each family of
// generated operand sets, TensorCoreSetsPerFamily(level) sets of it, through
// the instruction and the model, every output compared bit for bit; the
// first mismatch of a family is decoded with its operands
// (docs/tensor-cores.md "Verified on the hardware").
std::vector<Row> CheckTensorCores(const registry::Registry& registry, Level level, const Filter& filter,
                                  Progress* progress);
Row CheckTensorCore(const registry::TensorCoreEntry& entry, Level level);
// Sets per family and row: smoke 10^3, ci 10^5, full 10^6.
std::int64_t TensorCoreSetsPerFamily(Level level);

}  // namespace lowbit::check
