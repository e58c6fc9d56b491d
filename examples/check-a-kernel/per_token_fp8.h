// A user's per-token FP8 quantization: BF16 rows [rows, cols] in, one E4M3
// code per element and one FP32 dequantization scale per row out, the way
// TransformerEngine's current scaling computes it (scale = 448 / amax,
// code = cvt.rn.satfinite(x * scale), stored scale_inv = 1 / scale). The
// kernel is written as a user would write it: CUDA's own conversion
// intrinsics and the E4M3 maximum typed in, nothing from lowbit. lowbit only
// checks it (per_token_fp8_test.cc).
//
// Two deliberately wrong variants show what the check reports when a kernel
// is not what it claims to be.
#pragma once

#include <cstdint>

namespace user_kernel {

enum class Variant {
  kCorrect,
  // code = cvt(x / scale_inv): divides by the stored dequantization scale
  // instead of multiplying by 448 / amax (another operation order; the
  // two differ where 1 / (448 / amax) is not exact).
  kDivideByScaleInv,
  // Rounds toward zero instead of to nearest even (a hand-written
  // truncating cast).
  kTowardZero,
};

// The host build of the kernel's per-row code (the same __host__ __device__
// functions the GPU kernel calls).
void QuantizeRowsOnHost(const std::uint16_t* bf16, long rows, long cols, std::uint8_t* codes, float* scale_inv,
                        Variant variant);

// Whether a CUDA device can run the kernel.
bool CudaDeviceAvailable();

// Runs the GPU kernel on host buffers (copies in, launches, copies out).
// Returns an empty string on success, else the CUDA error.
const char* QuantizeRowsOnGpu(const std::uint16_t* bf16, long rows, long cols, std::uint8_t* codes, float* scale_inv,
                              Variant variant);

}  // namespace user_kernel
