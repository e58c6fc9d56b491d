// The CUDA GEMV's registry rows (registry/include/lowbit/registry/matmul_entry.h):
// backend "cuda", operation gemv, for every weight kind the GEMV takes
// (formats/matmul/gemv_order.h GemvViewOf) x BF16 / FP16 activations x BF16 /
// FP16 / FP32 outputs. `run` takes host memory: each batch entry's buffers
// are copied to the device, the GEMV runs, y is copied back and written with
// the problem's strides. `lowbit verify` checks these rows bit for bit
// against the scalar GEMV row. Unavailable (skipped, never passed) without a
// GPU.
#include <cuda_runtime.h>

#include <cstdint>
#include <string>
#include <vector>

#include "../device_upload.h"
#include "gemv.h"
#include "lowbit/cuda/device.h"
#include "lowbit/formats/matmul/exact.h"  // WriteOutput
#include "lowbit/formats/matmul/gemv_order.h"
#include "lowbit/registry/matmul_entry.h"
#include "lowbit/registry/registry.h"

namespace lowbit::cuda::gemv {
namespace {

using registry::MatmulArgs;
using registry::MatmulEntry;
using registry::Status;

Status RunOnHostMemory(const MatmulEntry& entry, const MatmulArgs& args) {
  if (Status s = registry::ValidateMatmulArgs(entry, args); !s.ok) return s;
  const std::string row = registry::MatmulRowName(entry) + " (cuda): ";
  std::vector<std::uint32_t> codes(static_cast<std::size_t>(args.w.batch * args.m * args.w.n));
  std::vector<std::uint16_t> x(static_cast<std::size_t>(args.m * args.w.k));
  const auto* xs = static_cast<const std::uint16_t*>(args.x.data);
  const std::size_t out_bytes = static_cast<std::size_t>(args.m * args.w.n) * matmul::OutputBytes(args.y.type);
  std::vector<std::uint8_t> out(out_bytes);
  for (std::int64_t l = 0; l < args.w.batch; ++l) {
    matmul::GemvWeightView v;
    if (const char* why = matmul::GemvViewOf(args.w, l, &v); why != nullptr) return Status::Error(row + why);
    for (std::int64_t m = 0; m < args.m; ++m) {
      for (std::int64_t k = 0; k < args.w.k; ++k) x[m * args.w.k + k] = xs[l * args.x.batch_stride + m * args.x.row_stride + k];
    }
    const GemvEntrySizes s = GemvEntryElementCounts(v);
    DeviceUpload d_codes, d_bs, d_cs, d_words, d_gs, d_zeros, d_x, d_out;
    cudaError_t e = cudaSuccess;
    auto up = [&](DeviceUpload& d, const void* host, std::size_t bytes) {
      if (e == cudaSuccess) e = d.Upload(host, bytes);
    };
    up(d_codes, v.codes, s.codes);
    up(d_bs, v.block_scales, s.block_scales);
    up(d_cs, v.channel_scales, 4 * s.channel_scales);
    up(d_words, v.words, 4 * s.words);
    up(d_gs, v.group_scales, 2 * s.group_scales);
    up(d_zeros, v.zeros, 4 * s.zeros);
    up(d_x, x.data(), 2 * x.size());
    if (e == cudaSuccess) e = cudaMalloc(&d_out.p, out_bytes);
    if (e != cudaSuccess) return Status::Error(row + "device copy failed: " + cudaGetErrorString(e));
    GemvLaunch g;
    g.w = v;
    g.w.codes = static_cast<const std::uint8_t*>(d_codes.p);
    g.w.block_scales = static_cast<const std::uint8_t*>(d_bs.p);
    g.w.channel_scales = static_cast<const float*>(d_cs.p);
    g.w.words = static_cast<const std::uint32_t*>(d_words.p);
    g.w.group_scales = static_cast<const std::uint16_t*>(d_gs.p);
    g.w.zeros = static_cast<const std::uint32_t*>(d_zeros.p);
    g.batch = 1;
    g.m = static_cast<long>(args.m);
    g.act = args.x.type;
    g.x = d_x.p;
    g.out_type = args.y.type;
    g.out = d_out.p;
    if (GemvStatus st = LaunchGemv(g); !st.ok) return Status::Error(row + st.error);
    if ((e = cudaMemcpy(out.data(), d_out.p, out_bytes, cudaMemcpyDeviceToHost)) != cudaSuccess) {
      return Status::Error(row + "GEMV failed: " + cudaGetErrorString(e));
    }
    const std::size_t base = static_cast<std::size_t>(l * args.m * args.w.n);
    for (std::size_t i = 0; i < static_cast<std::size_t>(args.m * args.w.n); ++i) {
      if (args.y.type == matmul::OutputType::kFp32) {
        codes[base + i] = static_cast<std::uint32_t>(out[4 * i]) | static_cast<std::uint32_t>(out[4 * i + 1]) << 8 |
                          static_cast<std::uint32_t>(out[4 * i + 2]) << 16 | static_cast<std::uint32_t>(out[4 * i + 3]) << 24;
      } else {
        codes[base + i] = static_cast<std::uint32_t>(out[2 * i]) | static_cast<std::uint32_t>(out[2 * i + 1]) << 8;
      }
    }
  }
  matmul::WriteOutput(args, codes);
  return Status::Ok();
}

// `run_on_device`: the buffers are already device memory (a torch CUDA
// tensor through the Python package) and the GEMV is launched on `stream`,
// one launch per batch entry, without a copy or a synchronization. x and y
// must be dense per batch entry ([M][K] and [M][N]), as the kernel reads and
// writes them; NVFP4's tensor scale is read on the device
// (GemvWeightView::tensor_scale_at).
Status RunOnDeviceMemory(const MatmulEntry& entry, const MatmulArgs& args, cudaStream_t stream) {
  if (Status s = registry::ValidateMatmulArgs(entry, args); !s.ok) return s;
  const std::string row = registry::MatmulRowName(entry) + " (cuda, device memory): ";
  if (args.x.row_stride != args.w.k) return Status::Error(row + "x rows must be dense (row stride K) on the device");
  if (args.y.row_stride != args.w.n) return Status::Error(row + "y rows must be dense (row stride N) on the device");
  // GemvViewOf reads NVFP4's tensor scale through the pointer (host code):
  // give it a host stand-in and point the kernel at the device value.
  matmul::WeightView w = args.w;
  const recipe::TensorScale host_stand_in{};
  const auto* device_tensor_scales = args.w.tensor_scale;
  if (w.format == matmul::WeightFormat::kNvfp4) {
    if (device_tensor_scales == nullptr) return Status::Error(row + "nvfp4 needs its tensor scale");
    w.tensor_scale = &host_stand_in;
    w.tensor_scale_batch_stride = 0;
  }
  const std::size_t out_element = matmul::OutputBytes(args.y.type);
  for (std::int64_t l = 0; l < args.w.batch; ++l) {
    matmul::GemvWeightView v;
    if (const char* why = matmul::GemvViewOf(w, l, &v); why != nullptr) return Status::Error(row + why);
    if (w.format == matmul::WeightFormat::kNvfp4) {
      v.tensor_scale_at = &device_tensor_scales[l * args.w.tensor_scale_batch_stride].decode;
    }
    GemvLaunch g;
    g.w = v;
    g.batch = 1;
    g.m = static_cast<long>(args.m);
    g.act = args.x.type;
    g.x = static_cast<const std::uint16_t*>(args.x.data) + l * args.x.batch_stride;
    g.out_type = args.y.type;
    g.out = static_cast<std::uint8_t*>(args.y.data) + static_cast<std::size_t>(l * args.y.batch_stride) * out_element;
    if (GemvStatus st = LaunchGemv(g, stream); !st.ok) return Status::Error(row + st.error);
  }
  return Status::Ok();
}

}  // namespace

void RegisterCudaGemv(registry::Registry& registry) {
  constexpr matmul::ActivationType kActivations[] = {matmul::ActivationType::kBf16, matmul::ActivationType::kFp16};
  constexpr matmul::OutputType kOutputs[] = {matmul::OutputType::kBf16, matmul::OutputType::kFp16,
                                             matmul::OutputType::kFp32};
  for (const registry::MatmulWeightKind& kind : registry::kMatmulWeightKinds) {
    // The kinds GemvViewOf takes: lowbit-packed MX / NVFP4 / E4M3 per
    // channel, GPTQ / AWQ with FP16 / BF16 scales.
    const bool integer = matmul::IsIntegerFormat(kind.format);
    if (integer && kind.packing == matmul::WeightPacking::kLowbit) continue;
    for (matmul::ActivationType act : kActivations) {
      for (matmul::OutputType out : kOutputs) {
        MatmulEntry e;
        e.operation = registry::MatmulOperation::kGemv;
        e.weight = kind.name;
        e.activation = act;
        e.output = out;
        e.backend = "cuda";
        e.available = [] { return GpuAvailable(); };
        // Per-row blocks only (GemvViewOf): flat blocks equal them only when
        // K is a multiple of the block.
        e.takes_flat_blocks = false;
        e.takes_row_groups = true;
        // The GEMV's layout rule in one place (GemvViewOf, which `run`
        // applies too), so that `lowbit verify` leaves what the GEMV does not
        // take (4-bit rows that start mid-byte, ...) to the scalar row.
        e.refuses = [](const MatmulArgs& args) {
          matmul::GemvWeightView unused;
          const char* why = matmul::GemvViewOf(args.w, 0, &unused);
          return std::string(why == nullptr ? "" : why);
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
}

}  // namespace lowbit::cuda::gemv
