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

#include <cstdint>
#include <functional>
#include <iterator>
#include <string>
#include <string_view>
#include <vector>

#include "lowbit/formats/matmul/accumulation_schedule.h"
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

// One kind of packed weight a row takes: format, packing and scale type
// (the per-call geometry and group size are in the WeightView). The name
// is the row's weight column in `lowbit verify` and Python.
struct MatmulWeightKind {
  const char* name;  // "nvfp4", "uint4-gptq-fp16"
  matmul::WeightFormat format;
  matmul::WeightPacking packing;
  matmul::ScaleType scale_type;
  int block;           // the block or group the harness uses (0: per row)
  const char* source;  // what produces these buffers
};

inline constexpr MatmulWeightKind kMatmulWeightKinds[] = {
    {"nvfp4", matmul::WeightFormat::kNvfp4, matmul::WeightPacking::kLowbit, matmul::ScaleType::kUe4m3,
     matmul::kNvfp4Block, "lowbit.quantize(W, 'nvfp4:*'): E2M1 nibbles low first, UE4M3 per 16, FP32 tensor scale"},
    {"mxfp4", matmul::WeightFormat::kMxfp4, matmul::WeightPacking::kLowbit, matmul::ScaleType::kE8m0,
     matmul::kMxBlock, "lowbit.quantize(W, 'mxfp4:*'): E2M1 nibbles low first, E8M0 per 32"},
    {"mxfp8-e4m3", matmul::WeightFormat::kMxfp8E4m3, matmul::WeightPacking::kLowbit, matmul::ScaleType::kE8m0,
     matmul::kMxBlock, "lowbit.quantize(W, 'mxfp8_e4m3:*'): E4M3 bytes, E8M0 per 32"},
    {"int4-g128", matmul::WeightFormat::kInt4, matmul::WeightPacking::kLowbit, matmul::ScaleType::kFp32,
     matmul::kDefaultIntGroup, "lowbit.quantize(W, 'int4:*/g128'): nibbles low first, FP32 scales, no zero points"},
    {"uint4-g128", matmul::WeightFormat::kUint4, matmul::WeightPacking::kLowbit, matmul::ScaleType::kFp32,
     matmul::kDefaultIntGroup, "lowbit.quantize(W, 'uint4:*/g128'): nibbles low first, FP32 scales, int32 zero points"},
    {"uint4-gptq-fp16", matmul::WeightFormat::kUint4, matmul::WeightPacking::kGptq, matmul::ScaleType::kFp16,
     matmul::kDefaultIntGroup, "GPTQ qweight / qzeros (lowbit pack gptq-qweight, gptq-qzeros), FP16 scales [K/g][N]"},
    {"uint4-gptq-bf16", matmul::WeightFormat::kUint4, matmul::WeightPacking::kGptq, matmul::ScaleType::kBf16,
     matmul::kDefaultIntGroup, "GPTQ qweight / qzeros, BF16 scales [K/g][N]"},
    {"uint4-awq-fp16", matmul::WeightFormat::kUint4, matmul::WeightPacking::kAwq, matmul::ScaleType::kFp16,
     matmul::kDefaultIntGroup, "AWQ qweight / qzeros (lowbit pack awq), FP16 scales [K/g][N]"},
    {"uint4-awq-bf16", matmul::WeightFormat::kUint4, matmul::WeightPacking::kAwq, matmul::ScaleType::kBf16,
     matmul::kDefaultIntGroup, "AWQ qweight / qzeros, BF16 scales [K/g][N]"},
    {"e4m3-channel", matmul::WeightFormat::kFp8E4m3PerChannel, matmul::WeightPacking::kLowbit,
     matmul::ScaleType::kFp32, 0, "lowbit.quantize(W, 'e4m3:*/row'): E4M3 bytes, FP32 scale per output channel"},
};

// The kind named `name`, or nullptr.
const MatmulWeightKind* FindMatmulWeightKind(std::string_view name);
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
  std::string weight;  // a kMatmulWeightKinds name
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
