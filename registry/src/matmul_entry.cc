// The matmul rows' names, weight kinds and the argument check every matmul
// backend runs first (matmul_entry.h).
#include <cstddef>
#include <cstdio>
#include <string>
#include <string_view>

#include "lowbit/formats/matmul/weight_kind.h"
#include "lowbit/formats/matmul/weights.h"
#include "lowbit/registry/registry.h"

namespace lowbit::registry {

bool ParseMatmulOperation(std::string_view name, MatmulOperation* out) {
  for (MatmulOperation op : kAllMatmulOperations) {
    if (name == MatmulOperationName(op)) {
      *out = op;
      return true;
    }
  }
  return false;
}

const MatmulWeightKind* FindMatmulWeightKind(std::string_view name) {
  // The one table of names and aliases (formats/matmul/weight_kind.h); the
  // views are in its order.
  const matmul::WeightKind* k = matmul::FindWeightKind(name);
  if (k == nullptr) return nullptr;
  return &kMatmulWeightKinds[static_cast<std::size_t>(k - matmul::kWeightKinds)];
}

std::string_view CanonicalMatmulWeightName(std::string_view name) {
  const matmul::WeightKind* k = matmul::FindWeightKind(name);
  return k != nullptr ? std::string_view(k->name) : name;
}

const MatmulWeightKind* MatmulWeightKindOf(const matmul::WeightView& w) {
  for (const MatmulWeightKind& kind : kMatmulWeightKinds) {
    if (kind.format == w.format && kind.packing == w.packing && kind.scale_type == w.scale_type) return &kind;
  }
  return nullptr;
}

std::string MatmulScheduleWords(const matmul::AccumulationSchedule& schedule, int split_k_low, int split_k_high) {
  std::string words = std::string(Instruction(schedule.instruction).name) + ", K ascending";
  if (schedule.promotion_interval > 0) {
    words += ", promoted to FP32 every " + std::to_string(schedule.promotion_interval);
  }
  if (split_k_high > 1) {
    words += ", split-K " + std::to_string(split_k_low) +
             (split_k_high != split_k_low ? "-" + std::to_string(split_k_high) : std::string()) +
             (schedule.split_reduction == matmul::SplitReduction::kInOrder ? " in order" : " as a pairwise tree");
  }
  if (schedule.scale_per_column) words += ", column scale after the sum";
  if (schedule.alpha != 1.0f) {
    char alpha[32];
    std::snprintf(alpha, sizeof alpha, ", alpha %.9g", static_cast<double>(schedule.alpha));
    words += alpha;
  }
  return words + ", to " + Spec(schedule.output).name;
}

std::string MatmulRowName(const MatmulEntry& entry) {
  return std::string(MatmulOperationName(entry.operation)) + " " + entry.weight + " " +
         matmul::ActivationTypeName(entry.activation) + "->" + matmul::OutputTypeName(entry.output);
}

Status ValidateMatmulArgs(const MatmulEntry& entry, const MatmulArgs& args) {
  const std::string prefix = MatmulRowName(entry) + ": ";
  const matmul::ValidationResult v = matmul::Validate(args);
  if (!v.ok) return Status::Error(prefix + v.error);
  const MatmulWeightKind* kind = MatmulWeightKindOf(args.w);
  if (kind == nullptr || FindMatmulWeightKind(entry.weight) != kind) {
    return Status::Error(prefix + "the weights are " + matmul::WeightFormatName(args.w.format) + " in the " +
                         matmul::WeightPackingName(args.w.packing) + " packing with " +
                         matmul::ScaleTypeName(args.w.scale_type) + " scales (" +
                         (kind != nullptr ? kind->name : "no row kind") + "), this row takes " + entry.weight);
  }
  if (args.x.type != entry.activation) {
    return Status::Error(prefix + "x is " + matmul::ActivationTypeName(args.x.type) + ", this row takes " +
                         matmul::ActivationTypeName(entry.activation));
  }
  if (args.y.type != entry.output) {
    return Status::Error(prefix + "y is " + matmul::OutputTypeName(args.y.type) + ", this row writes " +
                         matmul::OutputTypeName(entry.output));
  }
  if (entry.operation == MatmulOperation::kGemv && args.m > kGemvMaxM) {
    return Status::Error(prefix + "M = " + std::to_string(args.m) + " is more than a GEMV takes (" +
                         std::to_string(kGemvMaxM) + "); use a gemm row");
  }
  if (!entry.takes_flat_blocks && args.w.geometry == matmul::ScaleGeometry::kFlatBlocks &&
      args.w.packing == matmul::WeightPacking::kLowbit && args.w.k % args.w.block != 0) {
    return Status::Error(prefix + "this row takes blocks within rows; K = " + std::to_string(args.w.k) +
                         " is not a multiple of the block " + std::to_string(args.w.block) +
                         ", so the 1-D blocks run across rows");
  }
  if (!entry.takes_row_groups && args.w.geometry == matmul::ScaleGeometry::kRowGroups &&
      args.w.k % args.w.block != 0) {
    return Status::Error(prefix + "this row takes 1-D blocks of the flattened tensor; per-row blocks with a short "
                                  "last block (K = " + std::to_string(args.w.k) + ") are not its layout");
  }
  return Status::Ok();
}

}  // namespace lowbit::registry
