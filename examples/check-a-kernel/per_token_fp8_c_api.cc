// A C entry point to the user's kernel for Python (ctypes), as a user would
// add one: test_per_token_fp8_torch.py builds this file and per_token_fp8.cu
// into a shared library with nvcc and calls it on PyTorch tensors' memory.
#include <cstdint>

#include "per_token_fp8.h"

extern "C" const char* per_token_fp8_quantize_on_gpu(const std::uint16_t* bf16, long rows, long cols,
                                                     std::uint8_t* codes, float* scale_inv, int variant) {
  return user_kernel::QuantizeRowsOnGpu(bf16, rows, cols, codes, scale_inv, static_cast<user_kernel::Variant>(variant));
}
