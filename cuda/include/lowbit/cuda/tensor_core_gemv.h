// Weights packed once on the device for the tensor-core GEMV
// (docs/matmul.md "The tensor-core GEMV"): a model's layers pack at load
// time, and every call after that runs the kernel alone, letting it start
// while the previous kernel on the stream finishes (its weights are written
// by no kernel after the packing). The registry's `cuda-tc` rows pack on
// every call instead; both compute tc_gemv's declared schedule, bit for bit.
#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include "lowbit/formats/matmul/accumulation_schedule.h"
#include "lowbit/formats/matmul/weights.h"

namespace lowbit::cuda {

class PackedTensorCoreWeights {
 public:
  // Packs W ([batch][n][k], its buffers in device memory; any weights the
  // tensor-core GEMV's packer takes: NVFP4, MXFP4, MXFP8 and FP8 per channel
  // in lowbit's packing, UINT4 in GPTQ's or AWQ's) on `stream` (a
  // cudaStream_t), asynchronously. nullptr
  // and one line in `error` when W is refused (nothing is launched then).
  // W's buffers must stay valid until the packing kernel has run.
  static std::unique_ptr<PackedTensorCoreWeights> Pack(const matmul::WeightView& w, void* stream, std::string* error);
  ~PackedTensorCoreWeights();
  PackedTensorCoreWeights(const PackedTensorCoreWeights&) = delete;
  PackedTensorCoreWeights& operator=(const PackedTensorCoreWeights&) = delete;

  // y = x * W^T on `stream`: x [batch][m][k] 16-bit codes (BF16; FP16 for
  // UINT4 with FP16 scales) and y [batch][m][n]
  // of `output` (FP32, or BF16 / FP16 codes), both dense in device memory,
  // m = 1..16. The output is the model under Schedule(output). Returns ""
  // or one line (nothing is launched then). Calls share one split-K
  // workspace: they must not run at the same time (one stream, or ordered
  // by the caller), and every call must be queued before the object is
  // destroyed, which frees the buffers in order on the packing stream.
  std::string Gemv(const std::uint16_t* x, std::int64_t m, matmul::OutputType output, void* y, void* stream);

  // The schedule every call declares (tc_gemv_lanes.h ScheduleOf): split-K
  // depends on N, K and the batch only, so a row of y has the same bits
  // whatever m was.
  matmul::AccumulationSchedule Schedule(matmul::OutputType output) const;
  matmul::WeightFormat format() const;
  std::int64_t n() const;
  std::int64_t k() const;
  std::int64_t batch() const;

 private:
  struct State;
  explicit PackedTensorCoreWeights(std::unique_ptr<State> state);
  std::unique_ptr<State> state_;
};

}  // namespace lowbit::cuda
