// The tensor-core instructions on the GPU: probes that issue the real
// instruction (cuda/src/tensor_core_probe.cu), the model of the same run on
// CUDA cores (formats/include/lowbit/formats/matmul/tensor_core.h compiled
// for the device), and the sweep that compares the two on generated operand
// sets (docs/tensor-cores.md "Verified on the hardware").
//
// Operand sets are held as 32-bit codes, one array element per matrix
// element: for `count` sets of instruction `id` with n columns,
//   a: count x m x k   (row-major, each row's k codes contiguous)
//   b: count x n x k   (each output column's k codes contiguous: K-major)
//   c, d: count x m x n (row-major)
// with m, k from the instruction; n is the instruction's n for mma.sync and
// one of TensorCoreProbeColumns for wgmma.
#pragma once

#include <cuda_runtime.h>

#include <cstdint>

#include "lowbit/formats/matmul/accumulation_schedule.h"
#include "lowbit/formats/tensor_core.h"

namespace lowbit::cuda {

// The wgmma column counts the probes are built for.
inline constexpr int kWgmmaProbeColumns[] = {8, 32};

// True if the probe exists for this (instruction, n).
bool TensorCoreProbeAvailable(TensorCoreId id, int n);

// Runs the instruction itself on every set. Needs an sm_90a device.
cudaError_t RunTensorCoreInstruction(TensorCoreId id, int n, const std::uint32_t* a,
                                     const std::uint32_t* b, const std::uint32_t* c, std::uint32_t* d,
                                     std::int64_t count, cudaStream_t stream = nullptr);

// The model of the same instruction on CUDA cores, same layout.
cudaError_t ModelTensorCoreInstruction(TensorCoreId id, int n, const std::uint32_t* a,
                                       const std::uint32_t* b, const std::uint32_t* c,
                                       std::uint32_t* d, std::int64_t count,
                                       cudaStream_t stream = nullptr);

// The accumulation-schedule model over whole matrices on the GPU:
// y (m x n codes) = model(x (m x k codes), w (n x k codes), schedule), all in
// device memory; column_scales (n floats) is read only with scale_per_column.
cudaError_t ModelMatmulOnDevice(const matmul::AccumulationSchedule& schedule, const std::uint32_t* x,
                                const std::uint32_t* w, std::int64_t m, std::int64_t n, std::int64_t k,
                                const float* column_scales, std::uint32_t* y,
                                cudaStream_t stream = nullptr);

// Families of generated operand sets (cuda/src/tensor_core_cases.h says what
// each draws).
enum class TensorCoreCases : std::uint8_t {
  kRandomCodes,      // every code uniformly random: NaN, Inf, subnormals included
  kExponentSpread,   // finite values in exponent windows of every width; C far above or below
  kCancellation,     // pairs of products that cancel to the last bits, C cancelling the rest
  kCarries,          // all-ones significands of one sign and exponent: carries out of the top
  kSubnormals,       // subnormal and smallest-normal operands, subnormal or zero C
  kSpecials,         // exponent spread with +-0, +-Inf, NaNs, max and min values mixed in
  kSignedZeros,      // +-0 everywhere, and products that cancel exactly to zero
  kOverflow,         // operands and C near the largest finite values
};
inline constexpr TensorCoreCases kAllTensorCoreCases[] = {
    TensorCoreCases::kRandomCodes, TensorCoreCases::kExponentSpread, TensorCoreCases::kCancellation,
    TensorCoreCases::kCarries,     TensorCoreCases::kSubnormals,     TensorCoreCases::kSpecials,
    TensorCoreCases::kSignedZeros, TensorCoreCases::kOverflow};
const char* TensorCoreCasesName(TensorCoreCases cases);

struct TensorCoreSweepResult {
  std::int64_t sets = 0;
  std::int64_t outputs = 0;      // compared output elements
  std::int64_t mismatches = 0;   // outputs whose bits differ
  // The first mismatch (valid when mismatches > 0): its set, element, and
  // both outputs.
  std::int64_t first_set = -1;
  int first_row = -1, first_column = -1;
  std::uint32_t first_hardware = 0, first_model = 0;
};

// Generates `sets` operand sets of `cases` from `seed`, runs the instruction
// and the model on them, and compares every output bit for bit. The operand
// sets of a (cases, seed, set index) are reproducible on the host
// (GenerateTensorCoreSet in cuda/src/tensor_core_cases.h).
cudaError_t SweepTensorCore(TensorCoreId id, int n, TensorCoreCases cases, std::uint64_t seed,
                            std::int64_t sets, TensorCoreSweepResult* result);

}  // namespace lowbit::cuda
