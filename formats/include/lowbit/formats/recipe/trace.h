// The model's walk of one tensor through a recipe, as data: per block (or
// group) its statistics, the block scale (stored code or FP32 scale, zero
// point, the factor the elements are scaled by, the value the rule handed to
// its conversion), and per element its input, the scaled value the element
// conversion rounds, its code and the value the code dequantizes to; plus
// the recipe, layout and tensor scale. trace_tensor.h produces it from the
// model's steps (steps.h); the CLI's `quantize` and `explain`, the Python
// package's `explain` and the harness's diagnosis only read it, so that the
// walk statistics -> scale -> scaled value -> code -> decoded is written
// once. proptests/model/trace_tensor_test.cc proves its codes and decoded
// values equal QuantizeTensor / DequantizeTensor bit for bit.
//
// Host-only (std::vector): kernels never build a trace.
#pragma once

#include <cstdint>
#include <vector>

#include "lowbit/formats/recipe/block_scale.h"
#include "lowbit/formats/recipe/recipe.h"
#include "lowbit/formats/recipe/statistics.h"
#include "lowbit/formats/recipe/tensor.h"
#include "lowbit/formats/recipe/tensor_scale.h"

namespace lowbit::recipe {

struct TraceElement {
  long index = 0;            // the element's flat (row-major) index in the tensor
  float input = 0.0f;        // x
  float scaled = 0.0f;       // the value the element conversion rounds (ScaledValueEncoded)
  std::uint8_t code = 0;     // the element code, unpacked (EncodeElement)
  float decoded = 0.0f;      // the code dequantized from the stored scales (DecodeElement)
};

// Where the block scales came from.
enum class TraceScaleSource : std::uint8_t {
  kData,   // each block's own statistics (dynamic quantization)
  kRange,  // one calibrated range for every block (static: StatsOfRange)
  kGiven,  // given stored scales (TakesGivenScale: GivenScale)
  kOther,  // a caller's own choice (TraceTensorWithScales): a deviation under study
};

struct TraceBlock {
  long index = 0;      // the group's number in the grid (GroupOf)
  GroupStats stats;    // of the block's own elements, whatever the scale source
  BlockScale scale;    // as chosen: code, decode, factor, zero point, exponent, rule value
  std::vector<TraceElement> elements;  // in ForEachInGroup order
};

struct TraceTensor {
  Recipe recipe{};
  Layout layout;
  GroupGrid grid;
  TraceScaleSource scale_source = TraceScaleSource::kData;
  TensorScale tensor_scale;  // TensorScaleOf the whole input; {} for a recipe without one
  std::vector<TraceBlock> blocks;
};

}  // namespace lowbit::recipe
