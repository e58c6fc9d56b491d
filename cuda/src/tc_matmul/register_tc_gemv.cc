// The tensor-core GEMV's registry rows (registry/include/lowbit/registry/matmul_entry.h):
// backend "cuda-tc", operation gemv, NVFP4, MXFP4, MXFP8 and FP8 per-channel
// weights in lowbit's packing x BF16 activations, and UINT4 weights in the GPTQ or AWQ packing
// with FP16 scales x FP16 activations or BF16 scales x BF16 activations,
// each x BF16 / FP16 / FP32 outputs. Each row declares
// its schedule (tc_gemv_lanes.h ScheduleOf, a function of N, K and L only), so
// `lowbit verify` checks it bit for bit against QuantizedMatmulModel under
// that schedule. `run` takes host memory: the weights are packed once per
// call (PackForTcGemv), copied to the device with x, and y is copied back
// and written with the problem's strides. `run_on_device` takes device
// memory (torch CUDA tensors through the Python package): the weights are
// packed on the device (PackForTcGemvOnDevice) on the caller's stream, then
// the GEMV runs there, with no copy to the host and no synchronization.
// It packs on every call: a kernel reads W and writes the packed copy that
// the GEMV then streams (the cost is not measured yet); an API that packs
// once at load time and runs on the packed tiles is the next step.
// Unavailable (skipped, never passed) without a GPU.
#include <cuda_runtime.h>

#include <cstdint>
#include <string>
#include <vector>

#include "../device_upload.h"
#include "../stream_scratch.h"
#include "lowbit/cuda/device.h"
#include "lowbit/formats/matmul/exact.h"  // WriteOutput
#include "lowbit/registry/matmul_entry.h"
#include "lowbit/registry/registry.h"
#include "tc_gemv.h"
#include "tc_gemv_pack.h"
#include "tc_gemv_pack_device.h"

namespace lowbit::cuda::tc_gemv {
namespace {

using registry::MatmulArgs;
using registry::MatmulEntry;
using registry::Status;

Status RunOnHostMemory(const MatmulEntry& entry, const MatmulArgs& args) {
  if (Status s = registry::ValidateMatmulArgs(entry, args); !s.ok) return s;
  const std::string row = registry::MatmulRowName(entry) + " (cuda-tc): ";
  const PackedWeights packed = PackForTcGemv(args.w);
  if (!packed.error.empty()) return Status::Error(row + packed.error);
  const std::int64_t m = args.m, n = args.w.n, k = args.w.k, batch = args.w.batch;
  std::vector<std::uint16_t> x(static_cast<std::size_t>(batch * m * k));
  const auto* xs = static_cast<const std::uint16_t*>(args.x.data);
  for (std::int64_t l = 0; l < batch; ++l) {
    for (std::int64_t r = 0; r < m; ++r) {
      for (std::int64_t i = 0; i < k; ++i) {
        x[static_cast<std::size_t>((l * m + r) * k + i)] = xs[l * args.x.batch_stride + r * args.x.row_stride + i];
      }
    }
  }
  const matmul::AccumulationSchedule schedule = ScheduleOf(packed.format, packed.scale_type, n, k, batch, args.y.type);
  DeviceUpload codes, scales, plain, column_scales, d_x, y, workspace;  // y: FP32 codes, or 16-bit ones
  DeviceWeights w;
  static_cast<PackedShape&>(w) = packed;
  const std::int64_t workspace_floats = WorkspaceFloats(w, m, schedule.split_k);
  const std::size_t workspace_bytes = static_cast<std::size_t>(workspace_floats) * sizeof(float);
  cudaError_t e = codes.Upload(packed.codes.data(), packed.codes.size());
  if (e == cudaSuccess) e = scales.Upload(packed.scales.data(), packed.scales.size());
  if (e == cudaSuccess) e = plain.Upload(packed.plain_tiles.data(), packed.plain_tiles.size());
  if (e == cudaSuccess) e = column_scales.Upload(packed.column_scales.data(), packed.column_scales.size() * sizeof(float));
  if (e == cudaSuccess) e = d_x.Upload(x.data(), x.size() * sizeof(std::uint16_t));
  if (e == cudaSuccess) e = y.Allocate(static_cast<std::size_t>(batch * m * n) * sizeof(std::uint32_t));
  if (e == cudaSuccess && workspace_floats > 0) e = workspace.Allocate(workspace_bytes);
  // The workspace's split-K counters start at zero (tc_gemv.h WorkspaceFloats).
  if (e == cudaSuccess && workspace_floats > 0) e = cudaMemset(workspace.p, 0, workspace_bytes);
  if (e != cudaSuccess) return Status::Error(row + "device copy failed: " + cudaGetErrorString(e));
  w.codes = codes.As<const std::uint8_t>();
  w.scales = scales.As<const std::uint8_t>();
  w.column_scales = column_scales.As<const float>();
  w.plain_tiles = plain.As<const std::uint8_t>();
  if (const char* why = RunTcGemv(w, d_x.As<const std::uint16_t>(), m, schedule, y.p, workspace.As<float>(), workspace_floats, nullptr)) {
    return Status::Error(row + why);
  }
  const std::size_t outputs = static_cast<std::size_t>(batch * m * n);
  std::vector<std::uint32_t> out(outputs);
  if (args.y.type == matmul::OutputType::kFp32) {
    e = cudaMemcpy(out.data(), y.p, outputs * 4, cudaMemcpyDeviceToHost);
  } else {
    std::vector<std::uint16_t> out16(outputs);
    e = cudaMemcpy(out16.data(), y.p, outputs * 2, cudaMemcpyDeviceToHost);
    for (std::size_t i = 0; i < outputs; ++i) out[i] = out16[i];
  }
  if (e != cudaSuccess) return Status::Error(row + "the tensor-core GEMV failed: " + cudaGetErrorString(e));
  matmul::WriteOutput(args, out);
  return Status::Ok();
}

// Whether rows of `width` elements lie as the kernel reads and writes them:
// [batch][m][width] with no gaps.
bool RowsAreDense(std::int64_t row_stride, std::int64_t batch_stride, std::int64_t m, std::int64_t width,
                  std::int64_t batch) {
  return row_stride == width && (batch == 1 || batch_stride == m * width);
}

// Copies `rows` rows of `width` elements of `element` bytes per batch entry
// between a strided and a dense layout on `stream` (device to device).
cudaError_t CopyRows(void* dst, std::int64_t dst_row, std::int64_t dst_batch, const void* src, std::int64_t src_row,
                     std::int64_t src_batch, std::int64_t rows, std::int64_t width, std::int64_t batch,
                     std::size_t element, cudaStream_t stream) {
  for (std::int64_t l = 0; l < batch; ++l) {
    const cudaError_t e = cudaMemcpy2DAsync(
        static_cast<char*>(dst) + static_cast<std::size_t>(l * dst_batch) * element,
        static_cast<std::size_t>(dst_row) * element,
        static_cast<const char*>(src) + static_cast<std::size_t>(l * src_batch) * element,
        static_cast<std::size_t>(src_row) * element, static_cast<std::size_t>(width) * element,
        static_cast<std::size_t>(rows), cudaMemcpyDeviceToDevice, stream);
    if (e != cudaSuccess) return e;
  }
  return cudaSuccess;
}

// `run_on_device`: W, x and y in device memory, everything queued on
// `stream`. Strided x and y are taken: a strided x is first gathered into a
// dense scratch copy and a strided y written through one (the kernel reads
// and writes [batch][m][k] and [batch][m][n] densely). The packed weights,
// those copies and the split-K workspace live in lowbit's stream-ordered
// scratch pool (stream_scratch.h) and are freed in stream order on return.
Status RunOnDeviceMemory(const MatmulEntry& entry, const MatmulArgs& args, cudaStream_t stream) {
  if (Status s = registry::ValidateMatmulArgs(entry, args); !s.ok) return s;
  const std::string row = registry::MatmulRowName(entry) + " (cuda-tc, device memory): ";
  if (!DeviceCanRead(args.x.data)) return Status::Error(row + "x is not device memory");
  if (!DeviceCanRead(args.y.data)) return Status::Error(row + "y is not device memory");
  const std::int64_t m = args.m, n = args.w.n, k = args.w.k, batch = args.w.batch;
  DeviceTcGemvWeights packed(stream);
  if (const char* why = packed.Pack(args.w)) return Status::Error(row + why);
  const matmul::AccumulationSchedule schedule = ScheduleOf(args.w.format, args.w.scale_type, n, k, batch, args.y.type);
  const std::size_t out_element = matmul::OutputBytes(args.y.type);
  const bool x_dense = RowsAreDense(args.x.row_stride, args.x.batch_stride, m, k, batch);
  const bool y_dense = RowsAreDense(args.y.row_stride, args.y.batch_stride, m, n, batch);
  detail::StreamScratch x_copy(stream), y_copy(stream), workspace(stream);
  const std::int64_t workspace_floats = WorkspaceFloats(packed.weights(), m, schedule.split_k);
  const std::size_t workspace_bytes = static_cast<std::size_t>(workspace_floats) * sizeof(float);
  cudaError_t e = cudaSuccess;
  if (!x_dense) {
    e = x_copy.Allocate(static_cast<std::size_t>(batch * m * k) * sizeof(std::uint16_t));
    if (e == cudaSuccess) {
      e = CopyRows(x_copy.get(), k, m * k, args.x.data, args.x.row_stride, args.x.batch_stride, m, k, batch,
                   sizeof(std::uint16_t), stream);
    }
  }
  if (e == cudaSuccess && !y_dense) e = y_copy.Allocate(static_cast<std::size_t>(batch * m * n) * out_element);
  // The workspace's split-K counters start at zero (tc_gemv.h WorkspaceFloats).
  if (e == cudaSuccess && workspace_floats > 0) e = workspace.Allocate(workspace_bytes);
  if (e == cudaSuccess && workspace_floats > 0) e = cudaMemsetAsync(workspace.get(), 0, workspace_bytes, stream);
  if (e != cudaSuccess) return Status::Error(row + "device scratch failed: " + cudaGetErrorString(e));
  const auto* x = static_cast<const std::uint16_t*>(x_dense ? args.x.data : x_copy.get());
  void* y = y_dense ? args.y.data : y_copy.get();
  if (const char* why = RunTcGemv(packed.weights(), x, m, schedule, y, static_cast<float*>(workspace.get()),
                                  workspace_floats, stream)) {
    return Status::Error(row + why);
  }
  if (!y_dense) {
    e = CopyRows(args.y.data, args.y.row_stride, args.y.batch_stride, y_copy.get(), n, m * n, m, n, batch, out_element,
                 stream);
    if (e != cudaSuccess) return Status::Error(row + "writing y failed: " + cudaGetErrorString(e));
  }
  return Status::Ok();
}

}  // namespace

void RegisterCudaTcGemv(registry::Registry& registry) {
  constexpr matmul::OutputType kOutputs[] = {matmul::OutputType::kBf16, matmul::OutputType::kFp16,
                                             matmul::OutputType::kFp32};
  for (const registry::MatmulWeightKind& kind : registry::kMatmulWeightKinds) {
    // The kinds the kernel has a codec for, in the packing it takes
    // (PackProblem): NVFP4, the MX formats and FP8 per channel in lowbit's,
    // UINT4 in GPTQ's or AWQ's.
    TileCodec codec = TileCodec::kNvfp4;
    if (!CodecOf(kind.format, kind.scale_type, &codec) || !CodecTakesPacking(codec, kind.packing)) continue;
    for (const matmul::OutputType out : kOutputs) {
      MatmulEntry e;
      e.operation = registry::MatmulOperation::kGemv;
      e.weight = kind.name;
      // x of the operand type: FP16 with UINT4's FP16 scales, else BF16.
      e.activation = InstructionOf(codec) == TensorCoreId::kMmaF16F32 ? matmul::ActivationType::kFp16
                                                                       : matmul::ActivationType::kBf16;
      e.output = out;
      e.backend = "cuda-tc";
      e.available = [] { return GpuAvailable(); };
      // The packing rule in one place (PackProblem, which `run` applies too).
      e.refuses = [](const MatmulArgs& args) {
        const char* why = PackProblem(args.w);
        return std::string(why == nullptr ? "" : why);
      };
      e.schedule = [](const MatmulArgs& args) {
        return ScheduleOf(args.w.format, args.w.scale_type, args.w.n, args.w.k, args.w.batch, args.y.type);
      };
      MatmulEntry columns = e;
      e.run = [columns](const MatmulArgs& args) { return RunOnHostMemory(columns, args); };
      e.run_on_device = [columns](const MatmulArgs& args, void* stream) {
        return RunOnDeviceMemory(columns, args, static_cast<cudaStream_t>(stream));
      };
      registry.AddMatmul(std::move(e));
    }
  }
}

}  // namespace lowbit::cuda::tc_gemv
