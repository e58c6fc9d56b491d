// Where the elements of a row-major [rows, cols] matrix share one scale:
// per tensor, per row (a weight [N, K]'s output channel, or an activation
// [M, K]'s token: the same arithmetic under two names), per group of `group`
// consecutive elements along K within a row, or per 2-D block of
// block_rows x group elements. Groups are numbered row-major over the grid of
// groups: group (r / block_rows, c / group).
//
// Shapes that do not tile: an error, never padding. [AO]
// _get_reduction_params asserts "input_size % block_size == 0" for every
// grouped dimension; a padded last group would also change amax-free
// statistics (min, max) in the asymmetric schemes.
#pragma once

#include <cstdint>

#include "lowbit/formats/config.h"

namespace lowbit::block {

enum class Granularity : std::uint8_t {
  kPerTensor,
  kPerRow,    // per-channel (weights) and per-token (activations)
  kPerGroup,  // 1 x group along K
  kBlock2d,   // block_rows x group
};

struct QuantLayout {
  Granularity granularity = Granularity::kPerTensor;
  int group = 0;       // kPerGroup, kBlock2d: elements along K per group
  int block_rows = 0;  // kBlock2d: rows per block
};

enum class QuantStatus : std::uint8_t {
  kOk,
  kEmpty,                    // rows or cols < 1
  kBadGroup,                 // group (or block_rows) < 1 where one is needed
  kColsNotMultipleOfGroup,   // cols % group != 0
  kRowsNotMultipleOfBlock,   // rows % block_rows != 0
  kNotSupported,             // recipe and layout do not go together (none yet)
  kSizeOverflow,             // rows * cols does not fit long (the model's indices)
};

LOWBIT_HD_CONSTEXPR const char* QuantStatusText(QuantStatus s) {
  switch (s) {
    case QuantStatus::kOk: return "ok";
    case QuantStatus::kEmpty: return "empty shape";
    case QuantStatus::kBadGroup: return "group size must be positive";
    case QuantStatus::kColsNotMultipleOfGroup: return "columns are not a multiple of the group size";
    case QuantStatus::kRowsNotMultipleOfBlock: return "rows are not a multiple of the block height";
    case QuantStatus::kNotSupported: return "recipe does not support this layout";
    case QuantStatus::kSizeOverflow: return "tensor size overflows";
  }
  return "?";
}

// Extent of one group, and how many there are along each axis.
struct GroupGrid {
  long group_rows = 0;   // rows per group
  long group_cols = 0;   // columns per group
  long grid_rows = 0;    // groups along the rows
  long grid_cols = 0;    // groups along K
  LOWBIT_HD_CONSTEXPR long Count() const { return grid_rows * grid_cols; }
};

LOWBIT_HD_CONSTEXPR QuantStatus MakeGroupGrid(const QuantLayout& layout, long rows, long cols, GroupGrid* out) {
  if (rows < 1 || cols < 1) return QuantStatus::kEmpty;
  // Every element index the model forms is below rows * cols (recipe/tensor.h
  // MakeGroupGrid has the same check).
  if (rows > static_cast<long>(~0ul >> 1) / cols) return QuantStatus::kSizeOverflow;
  GroupGrid g;
  switch (layout.granularity) {
    case Granularity::kPerTensor:
      g.group_rows = rows;
      g.group_cols = cols;
      break;
    case Granularity::kPerRow:
      g.group_rows = 1;
      g.group_cols = cols;
      break;
    case Granularity::kPerGroup:
    case Granularity::kBlock2d:
      if (layout.group < 1) return QuantStatus::kBadGroup;
      if (cols % layout.group != 0) return QuantStatus::kColsNotMultipleOfGroup;
      g.group_cols = layout.group;
      g.group_rows = 1;
      if (layout.granularity == Granularity::kBlock2d) {
        if (layout.block_rows < 1) return QuantStatus::kBadGroup;
        if (rows % layout.block_rows != 0) return QuantStatus::kRowsNotMultipleOfBlock;
        g.group_rows = layout.block_rows;
      }
      break;
  }
  g.grid_rows = rows / g.group_rows;
  g.grid_cols = cols / g.group_cols;
  *out = g;
  return QuantStatus::kOk;
}

// The group that element (r, c) belongs to.
LOWBIT_HD_CONSTEXPR long GroupOf(const GroupGrid& g, long r, long c) {
  return (r / g.group_rows) * g.grid_cols + c / g.group_cols;
}

}  // namespace lowbit::block
