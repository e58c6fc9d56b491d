// Registry packing rows of the CUDA weight-layout kernels (weight_layouts.h),
// backend "cuda": pack and unpack of the tinygemm, torch CPU int4pack and
// Marlin weight layouts and the swizzled block scales (docs/layouts.md).
// Buffers are host or device memory: device buffers are used in place, host
// ones copied. Without a GPU the rows are registered but not available, so
// checks show them as skipped. RegisterCudaBackends (register_backends.cc)
// calls RegisterCudaLayouts.
#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>
#include <string>

#include "checks.h"
#include "lowbit/cuda/device.h"
#include "lowbit/cuda/register.h"
#include "lowbit/registry/registry.h"
#include "weight_layouts.h"

namespace lowbit::cuda {
namespace {

// Device scratch for one call with host buffers, freed on every path.
struct DeviceScratch {
  void* p = nullptr;
  ~DeviceScratch() {
    if (p) cudaFree(p);
  }
};

bool LayoutOf(registry::PackingLayout layout, WeightLayout* out, int* param) {
  if (const int tiles = registry::TinygemmInnerKTilesOf(layout); tiles != 0) {
    *out = WeightLayout::kTinygemm;
    *param = tiles;
    return true;
  }
  if (const int isa = registry::TorchCpuInt4packIsaOf(layout); isa >= 0) {
    *out = WeightLayout::kTorchCpu;
    *param = isa;
    return true;
  }
  *param = 0;
  if (layout == registry::PackingLayout::kMarlin) {
    *out = WeightLayout::kMarlin;
    return true;
  }
  if (layout == registry::PackingLayout::kSwizzledScales) {
    *out = WeightLayout::kSwizzledScales;
    return true;
  }
  return false;
}

registry::Status ToRegistry(const Status& s) {
  return s.ok ? registry::Status::Ok() : registry::Status::Error(s.message);
}

registry::Status RunLayout(const registry::PackingArgs& a) {
  if (registry::Status s = registry::ValidatePackingArgs(a); !s.ok) return s;
  const registry::PackingSizes sizes = registry::PackingBufferSizes(a.layout, a.rows, a.cols);
  if (sizes.codes == 0) return registry::Status::Ok();
  WeightLayoutJob job;
  if (!LayoutOf(a.layout, &job.layout, &job.param)) {
    return registry::Status::Error(std::string("cuda: no GPU kernel for packing layout ") +
                                   registry::PackingLayoutName(a.layout));
  }
  if (!GpuAvailable()) return registry::Status::Error("cuda: no CUDA device");
  const registry::PackingLayoutInfo* info = registry::FindPackingLayoutInfo(a.layout);
  const bool words = info->unit == registry::PackedUnit::kWord32;
  const std::size_t packed_bytes = sizes.packed_units * registry::PackedUnitBytes(info->unit);
  job.pack = a.direction == registry::PackDirection::kPack;
  job.rows = static_cast<std::int64_t>(a.rows);
  job.cols = static_cast<std::int64_t>(a.cols);
  job.packed_units = static_cast<std::int64_t>(sizes.packed_units);
  const void* codes_host = job.pack ? static_cast<const void*>(a.codes) : a.codes_out;
  const void* packed_host = job.pack ? (words ? static_cast<const void*>(a.packed_words) : a.packed_bytes)
                                     : (words ? static_cast<const void*>(a.in_words) : a.in_bytes);
  if (detail::IsDevicePointer(codes_host) && detail::IsDevicePointer(packed_host)) {
    job.codes = a.codes;
    job.codes_out = a.codes_out;
    job.packed = packed_host;
    job.packed_out = const_cast<void*>(packed_host);
    if (Status s = LaunchWeightLayout(job, 0); !s.ok) return ToRegistry(s);
    return ToRegistry(detail::CudaStatus("cuda", cudaDeviceSynchronize()));
  }
  DeviceScratch codes_dev, packed_dev;
  if (Status s = detail::CudaStatus("cuda", cudaMalloc(&codes_dev.p, sizes.codes)); !s.ok) return ToRegistry(s);
  if (Status s = detail::CudaStatus("cuda", cudaMalloc(&packed_dev.p, packed_bytes)); !s.ok) return ToRegistry(s);
  if (job.pack) {
    if (Status s = detail::CudaStatus("cuda", cudaMemcpy(codes_dev.p, a.codes, sizes.codes, cudaMemcpyHostToDevice));
        !s.ok) {
      return ToRegistry(s);
    }
  } else {
    if (Status s = detail::CudaStatus("cuda", cudaMemcpy(packed_dev.p, packed_host, packed_bytes, cudaMemcpyHostToDevice));
        !s.ok) {
      return ToRegistry(s);
    }
  }
  job.codes = static_cast<const std::uint8_t*>(codes_dev.p);
  job.codes_out = static_cast<std::uint8_t*>(codes_dev.p);
  job.packed = packed_dev.p;
  job.packed_out = packed_dev.p;
  if (Status s = LaunchWeightLayout(job, 0); !s.ok) return ToRegistry(s);
  void* host_out = job.pack ? const_cast<void*>(packed_host) : static_cast<void*>(a.codes_out);
  const std::size_t out_bytes = job.pack ? packed_bytes : sizes.codes;
  return ToRegistry(detail::CudaStatus("cuda", cudaMemcpy(host_out, job.pack ? packed_dev.p : codes_dev.p, out_bytes,
                                                         cudaMemcpyDeviceToHost)));
}

}  // namespace

void RegisterCudaLayouts(registry::Registry& registry) {
  for (registry::PackingLayout layout : registry::kAllPackingLayouts) {
    WeightLayout unused;
    int param = 0;
    if (!LayoutOf(layout, &unused, &param)) continue;  // the nibble, GPTQ and AWQ layouts: no GPU kernel
    for (registry::PackDirection direction : registry::kAllPackDirections) {
      registry.AddPacking(registry::PackingEntry{layout, direction, "cuda", [] { return GpuAvailable(); }, RunLayout});
    }
  }
}

}  // namespace lowbit::cuda
