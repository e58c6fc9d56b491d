// Exhaustive verification on the GPU: every input of a conversion (all 2^32
// FP32 bit patterns for an FP32 encode, all 2^16 for BF16/FP16 encodes, every
// code for a decode) through a backend's element function, compared bit for
// bit with the formats/ model compiled for the device. `lowbit verify` uses it
// when a GPU is present.
//
// For cuda-hw this compares the PTX instructions with the model. For cuda-sw
// the backend's element function *is* the model, so the sweep checks the
// device compilation against itself only; cuda_sw tests compare it with the
// host-compiled model instead.
#pragma once

#include <cstdint>

#include "lowbit/cuda/convert.h"

namespace lowbit::cuda {

struct VerifyReport {
  std::uint64_t inputs = 0;      // how many inputs were checked
  std::uint64_t mismatches = 0;  // how many differed
  int examples = 0;              // first mismatches recorded below (<= 8)
  std::uint64_t example_input[8] = {};
  std::uint64_t example_backend[8] = {};
  std::uint64_t example_model[8] = {};
  float milliseconds = 0;  // GPU time of the sweep (events)
};

Status VerifyAllInputs(Backend backend, ElementOp op, FormatId format,
                       const EncodeOptions& encode, const DecodeOptions& decode,
                       VerifyReport* report);

}  // namespace lowbit::cuda
