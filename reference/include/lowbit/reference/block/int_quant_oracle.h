// The scaled-quantization oracle: the recipes of docs/formats-reference.md §7 ([TE]
// compute_scale_from_amax) and §8.2 ([AO] SYMMETRIC / ASYMMETRIC, [GPTQ]
// sym / asym, the common amax/qmax kernel) re-stated from their source text
// as exact operations, with each FP32 operation of the source rounded by
// fp32_arith.h and element rounding decided on exact rationals. It reads the
// recipe's data (IntQuantRecipe, QuantLayout) but none of the model's
// algorithms; in particular it rounds and then clamps, in the sources' order.
#pragma once

#include <cstdint>
#include <vector>

#include "lowbit/formats/block/int_quant_layout.h"
#include "lowbit/formats/block/int_quant_recipe.h"

namespace lowbit::reference::block {

struct OracleQuantParams {
  std::uint32_t encode_bits = 0;  // FP32 bits: TE scale, AO 1/scale, GPTQ / common scale
  std::uint32_t decode_bits = 0;  // FP32 bits of the stored dequantization scale
  std::int32_t zero_point = 0;
};

struct OracleQuantResult {
  lowbit::block::QuantStatus status = lowbit::block::QuantStatus::kOk;
  std::vector<std::uint8_t> codes;        // rows * cols, row-major
  std::vector<OracleQuantParams> params;  // one per group, row-major over the group grid
};

// Dynamic: parameters from the data, then codes.
OracleQuantResult OracleQuantizeMatrix(const lowbit::block::IntQuantRecipe& recipe,
                                       const lowbit::block::QuantLayout& layout, const std::vector<float>& x,
                                       long rows, long cols);

// Static: parameters from a calibrated range [lo, hi] (amax = max(|lo|, |hi|)).
OracleQuantParams OracleQuantParamsFromRange(const lowbit::block::IntQuantRecipe& recipe, float lo, float hi);

// Codes for given parameters (one per group).
OracleQuantResult OracleQuantizeWithParams(const lowbit::block::IntQuantRecipe& recipe,
                                           const lowbit::block::QuantLayout& layout, const std::vector<float>& x,
                                           long rows, long cols, const std::vector<OracleQuantParams>& params);

// FP32 bits of the dequantized matrix.
std::vector<std::uint32_t> OracleDequantizeMatrix(const lowbit::block::IntQuantRecipe& recipe,
                                                  const lowbit::block::QuantLayout& layout,
                                                  const std::vector<std::uint8_t>& codes, long rows, long cols,
                                                  const std::vector<OracleQuantParams>& params);

}  // namespace lowbit::reference::block
