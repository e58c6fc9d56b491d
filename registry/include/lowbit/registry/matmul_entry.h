// Matrix-product rows (docs/matmul.md): y = x * W^T per batch with W packed
// (formats/matmul/weights.h), one registry row per (operation, weight kind,
// activation type, output type, backend), beside the element, recipe and
// packing rows. The "scalar" rows are the model: GEMV rows the defined-order
// FP32 reference (formats/matmul/gemv_order.h) for every weight layout the
// GEMV takes (GemvViewOf) and the exact mode for the others, GEMM rows the
// exact mode (formats/matmul/exact.h). `lowbit verify`
// checks every other row against them: GEMV rows bit for bit against the
// scalar GEMV row, GEMM rows within the bound they state (`error_bound`,
// formats/matmul/gemm_bound.h) of the exact mode, and a row that declares
// its accumulation schedule (`schedule`) bit for bit against
// formats/matmul/quantized_matmul.h QuantizedMatmulModel under that schedule
// (check/src/matmul_check.cc, docs/matmul.md "Rows that declare a
// schedule").
//
// A CUDA backend registers its rows from its own file
// (cuda/src/gemv/register_gemv.cc, cuda/src/tc_matmul/register_tc_gemm.cc)
// with Registry::AddMatmul; `run` takes host memory (the row copies to and
// from the device), `run_on_device` (optional) device memory on a stream, for
// the Python entry points on torch CUDA tensors.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <iterator>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "lowbit/formats/matmul/accumulation_schedule.h"
#include "lowbit/formats/matmul/weight_kind.h"
#include "lowbit/formats/matmul/weights.h"

namespace lowbit::registry {

struct Status;

enum class MatmulOperation : std::uint8_t {
  kGemv,  // M = 1..16 (decode): bandwidth-bound, checked bit for bit
  kGemm,  // M >= 128 (prefill): tensor cores, checked against a declared schedule or within a bound
};

inline constexpr MatmulOperation kAllMatmulOperations[] = {MatmulOperation::kGemv, MatmulOperation::kGemm};

// "gemv" / "gemm".
constexpr const char* MatmulOperationName(MatmulOperation operation) {
  return operation == MatmulOperation::kGemv ? "gemv" : "gemm";
}
bool ParseMatmulOperation(std::string_view name, MatmulOperation* out);

// The largest M a GEMV row must take (decode, M = 1..16); GEMM
// rows take any M >= 1 (the harness tries M >= 128 and small M).
inline constexpr std::int64_t kGemvMaxM = 16;

// One kind of packed weight a row takes: a kind of the model's one table,
// formats/matmul/weight_kind.h kWeightKinds (docs/matmul.md "Weight kinds: a
// recipe target plus a packing"), with the weight format and block its recipe
// target gives worked out at compile time, so that the per-call argument
// check (ValidateMatmulArgs) compares enums instead of reading the catalog.
// The name is the row's weight column in `lowbit verify` and Python: the
// kind's canonical name.
struct MatmulWeightKind {
  const matmul::WeightKind* kind;  // its row of matmul::kWeightKinds
  const char* name;                // kind->name: "nvfp4", "uint4/g128+gptq-fp16"
  matmul::WeightFormat format;     // matmul::FormatOf(*kind)
  matmul::WeightPacking packing;   // kind->packing
  matmul::ScaleType scale_type;    // kind->scale_storage
  int block;                       // matmul::BlockOf(*kind): the block or group the harness uses (0: per row)
  const char* source;              // kind->source: what produces these buffers
};

namespace matmul_entry_detail {
constexpr MatmulWeightKind ViewOf(const matmul::WeightKind& k) {
  return {&k, k.name, matmul::FormatOf(k), k.packing, k.scale_storage, matmul::BlockOf(k), k.source};
}
template <std::size_t... I>
constexpr std::array<MatmulWeightKind, sizeof...(I)> ViewsOf(std::index_sequence<I...>) {
  return {ViewOf(matmul::kWeightKinds[I])...};
}
// FormatOf falls back to NVFP4 when a kind's recipe target is no weight
// format; every kind must have one.
constexpr bool EveryKindHasAWeightFormat() {
  for (const matmul::WeightKind& k : matmul::kWeightKinds) {
    const recipe::Recipe* r = matmul::FirstRecipeOfFormat(k.format);
    matmul::WeightFormat unused = matmul::WeightFormat::kNvfp4;
    if (r == nullptr || !matmul::WeightFormatOfRecipe(*r, k.layout, &unused)) return false;
  }
  return true;
}
}  // namespace matmul_entry_detail

static_assert(matmul_entry_detail::EveryKindHasAWeightFormat(),
              "a matmul::kWeightKinds kind names no catalog recipe format that gives a weight format");

// Every kind, in kWeightKinds's order (kMatmulWeightKinds[i].kind ==
// &matmul::kWeightKinds[i]): derived, never typed a second time.
inline constexpr auto kMatmulWeightKinds =
    matmul_entry_detail::ViewsOf(std::make_index_sequence<std::size(matmul::kWeightKinds)>());

// The kind `name` means — a canonical name or one of the model's older
// names (matmul::FindWeightKind through kWeightKindAliases) — or nullptr.
const MatmulWeightKind* FindMatmulWeightKind(std::string_view name);
// The canonical name of the kind `name` means, or `name` itself when it
// means none (a row of a test's own weight name). Registry::AddMatmul,
// FindMatmul and ChooseMatmulRow compare weights through it, so the older
// names keep finding the rows.
std::string_view CanonicalMatmulWeightName(std::string_view name);
// The kind of a view (format, packing, scale type), or nullptr when no row
// kind has that combination.
const MatmulWeightKind* MatmulWeightKindOf(const matmul::WeightView& w);

// One call of a matmul row: the whole problem (weights, M, x, y).
using MatmulArgs = matmul::MatmulProblem;

// The magnitudes a GEMM row's error bound is a function of, for one output
// (formats/matmul/gemm_bound.h GemmBoundTerms): w_k is the exact weight
// without its outer FP32 scale t (NVFP4's tensor scale, FP8's channel scale;
// dequantize.h ExactInnerWeightValue), x_k the activation.
struct MatmulMagnitudes {
  std::int64_t k = 0;
  double sum_abs_xw = 0;  // sum |x_k| |w_k|
  double sum_abs_x = 0;   // sum |x_k|
  double abs_scale = 1;   // |t|
};

struct MatmulEntry {
  MatmulOperation operation = MatmulOperation::kGemv;
  std::string weight;  // a kind's canonical name (matmul::kWeightKinds)
  matmul::ActivationType activation = matmul::ActivationType::kBf16;
  matmul::OutputType output = matmul::OutputType::kFp32;
  std::string backend;  // "scalar", "cuda", ...
  // False when the backend cannot run here: shown as skipped, never passed.
  std::function<bool()> available;
  // Host memory in, host memory out.
  std::function<Status(const MatmulArgs&)> run;
  // Optional: device memory, asynchronous on `stream` (a cudaStream_t);
  // empty for host-only backends.
  std::function<Status(const MatmulArgs&, void* stream)> run_on_device;
  // Which weight geometries the row takes (lowbit's MX / NVFP4 default
  // layout is kFlatBlocks, whose blocks run across rows when K is not a
  // multiple of the block). The harness only sends these.
  bool takes_flat_blocks = true;
  bool takes_row_groups = true;
  // Optional: why the row does not take these arguments (a shape or layout
  // it leaves to another row), empty when it does. The harness does not send
  // such problems; a row that takes none of them is SKIPPED, never passed.
  // Called before y is attached (args.y may be unset).
  std::function<std::string(const MatmulArgs&)> refuses;
  // GEMM rows: the largest |y_row - y_exact| allowed for one output (the
  // row's documented bound, gemm_bound.h GemmErrorBound). Empty for GEMV
  // rows, which are checked bit for bit.
  std::function<double(const MatmulArgs&, const MatmulMagnitudes&)> error_bound;
  // Optional: the accumulation schedule the row computes
  // (formats/matmul/accumulation_schedule.h: instruction, K chunk order,
  // split-K and the order its parts are added in, where the FP32 tensor or
  // channel scale is applied, output conversion). A row that declares one is
  // checked bit for bit against QuantizedMatmulModel(w, x, schedule), not
  // against the scalar row nor within error_bound. It is a function of the
  // problem's shape and types (N, K, L, weight kind, activation and output
  // types), NEVER of M or of the data: a row of y then has the same bits
  // whatever M the call had (batch invariance); the harness fails a row whose
  // schedule changes with M. Called with y attached, as `run` is.
  std::function<matmul::AccumulationSchedule(const MatmulArgs&)> schedule;
};

// A schedule in words for row listings: "mma.m16n8k16.f32.bf16.bf16, K
// ascending, split-K 2 in order, column scale after the sum, to fp32".
// `split_k_low` .. `split_k_high` is the range the row's split-K takes over
// the shapes it ran (equal: one number).
std::string MatmulScheduleWords(const matmul::AccumulationSchedule& schedule, int split_k_low, int split_k_high);

// "gemv nvfp4 bf16->fp32" (the backend is a separate column).
std::string MatmulRowName(const MatmulEntry& entry);

// What every matmul backend checks first, so that each names the same
// problem the same way: matmul::Validate (shapes, pointers, alignment,
// buffer sizes, overlap), then the row's own columns: the weight kind, the
// activation and output types, M within kGemvMaxM for GEMV rows.
Status ValidateMatmulArgs(const MatmulEntry& entry, const MatmulArgs& args);

// The model's rows (backend "scalar"): GEMV and GEMM for every weight kind,
// activation and output type. RegisterScalarBackend calls it.
class Registry;
void RegisterScalarMatmul(Registry& registry);

}  // namespace lowbit::registry
