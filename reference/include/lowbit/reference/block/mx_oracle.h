// The MX oracle: OCP MX v1.0 §6.3 and each profiled implementation's scale
// rule re-stated in exact arithmetic, with the FP32 roundings the recipes
// perform emulated by fp32_arith.h. It reads a recipe's data (MxRecipe,
// BlockSpec) but none of the model's algorithms.
#pragma once

#include <cstdint>
#include <vector>

#include "lowbit/formats/block/block_spec.h"
#include "lowbit/formats/block/mx_recipe.h"

namespace lowbit::reference::block {

struct OracleBlock {
  std::uint8_t scale = 0;
  std::vector<std::uint8_t> codes;
};

// One block (x.size() <= spec.block_size).
OracleBlock OracleQuantizeMxBlock(const lowbit::block::BlockSpec& spec,
                                  const lowbit::block::MxRecipe& recipe,
                                  const std::vector<float>& x);

// FP32 bits of element * X for each code.
std::vector<std::uint32_t> OracleDequantizeMxBlock(const lowbit::block::BlockSpec& spec,
                                                   std::uint8_t scale,
                                                   const std::vector<std::uint8_t>& codes);

}  // namespace lowbit::reference::block
