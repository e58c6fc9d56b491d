// The NVFP4 oracle: the TE, torchao and ModelOpt formulas of docs/formats-reference.md §6
// re-stated as exact operations with FP32 roundings (fp32_arith.h) and the
// element oracle's E4M3 / E2M1 conversions. Reads the recipe's name only.
#pragma once

#include <cstdint>
#include <vector>

#include "lowbit/formats/block/nvfp4_recipe.h"
#include "lowbit/reference/block/mx_oracle.h"

namespace lowbit::reference::block {

struct OracleTensorScale {
  std::uint32_t encode_bits = 0;  // TE S_enc (0 for the others)
  std::uint32_t decode_bits = 0;  // the stored FP32 tensor scale
};

OracleTensorScale OracleNvfp4TensorScale(lowbit::block::Nvfp4Recipe recipe, float tensor_amax);

// One block of <= 16 elements under a tensor scale.
OracleBlock OracleQuantizeNvfp4Block(lowbit::block::Nvfp4Recipe recipe,
                                     const OracleTensorScale& tensor_scale,
                                     const std::vector<float>& x);

// Tensor amax (per the recipe's NaN rule) of the whole input.
float OracleNvfp4TensorAmax(lowbit::block::Nvfp4Recipe recipe, const std::vector<float>& x);

std::vector<std::uint32_t> OracleDequantizeNvfp4Block(lowbit::block::Nvfp4Recipe recipe,
                                                      const OracleTensorScale& tensor_scale,
                                                      std::uint8_t scale,
                                                      const std::vector<std::uint8_t>& codes);

}  // namespace lowbit::reference::block
