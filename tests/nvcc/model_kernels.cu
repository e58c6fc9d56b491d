// The model headers (formats/) must compile under nvcc and run in device code
// (docs/design.md "Three roles, kept apart": header-only, constexpr, usable in
// host and device code). This
// file is compiled by the ctest test nvcc_model_headers; a header change that
// nvcc rejects fails CI even on a machine without a GPU. Nothing here runs.
#include <cstdint>

#include "lowbit/formats/alternatives/amax.h"
#include "lowbit/formats/alternatives/e2m1.h"
#include "lowbit/formats/alternatives/e8m0_rceil.h"
#include "lowbit/formats/alternatives/mx_block.h"
#include "lowbit/formats/alternatives/nvfp4_te_scale.h"
#include "lowbit/formats/convert.h"
#include "lowbit/formats/format_list.h"
#include "lowbit/formats/policy.h"
#include "lowbit/formats/round_pack.h"

namespace {

using lowbit::EncodeOptions;
using lowbit::FormatSpec;

// Values pinned by docs/formats-reference.md §1 and §4, evaluated at compile time in the
// device compilation pass (__CUDA_ARCH__ defined) as well as the host pass.
__host__ __device__ constexpr bool DeviceConstantsHold() {
  constexpr FormatSpec kE4m3 = lowbit::kE4m3;
  constexpr FormatSpec kE5m2 = lowbit::kE5m2;
  constexpr FormatSpec kE2m1 = lowbit::kE2m1;
  constexpr FormatSpec kE8m0 = lowbit::kE8m0;
  constexpr FormatSpec kBf16 = lowbit::kBf16;
  static_assert(lowbit::EncodeF32Bits(kE4m3, 0x43E00000u).code == 0x7E);  // 448 -> max
  static_assert(lowbit::EncodeF32Bits(kE4m3, 0x43E80000u).code == 0x7E);  // 464 ties to 448
  static_assert(lowbit::EncodeF32Bits(kE5m2, 0x47600000u).code == 0x7B);  // 57344
  static_assert(lowbit::EncodeF32(kE2m1, 5.0f).code == 0x6);              // 5 ties to 4
  static_assert(lowbit::EncodeF32(kE2m1, -0.0f).code == 0x8);
  static_assert(lowbit::EncodeF32Bits(kBf16, 0x3F808000u).code == 0x3F80);  // tie to even
  static_assert(lowbit::DecodeToF32Bits(kE8m0, 0x00) == 0x00400000u);     // 2^-127, subnormal
  static_assert(lowbit::DecodeToF32(kE4m3, 0x7E) == 448.0f);
  static_assert(lowbit::DecodeToF32(kE2m1, 0x7) == 6.0f);
  // The named alternatives (formats/include/lowbit/formats/alternatives/)
  // are constant expressions in the device pass too.
  static_assert(lowbit::alternatives::EncodeE2m1OneAddition(5.0f) == 0x6);
  static_assert(lowbit::alternatives::EncodeE2m1TwoPath(-0.0f) == 0x8);
  static_assert(lowbit::alternatives::DecodeE2m1FromBits(0x7) == 6.0f);
  static_assert(lowbit::alternatives::E8m0RceilFromBits(1.5f, true) == 128);
  static_assert(lowbit::alternatives::E8m0RceilFromBits(3e38f, false) == 0xFF);
  return true;
}
static_assert(DeviceConstantsHold());

__device__ bool DeviceSideCheck() {
  static_assert(DeviceConstantsHold());
  return true;
}

__global__ void EncodeDecodeKernel(const float* in, std::uint32_t* out, int n) {
  constexpr FormatSpec kE4m3 = lowbit::kE4m3;
  constexpr FormatSpec kE5m2 = lowbit::kE5m2;
  constexpr FormatSpec kE2m1 = lowbit::kE2m1;
  constexpr FormatSpec kE3m2 = lowbit::kE3m2;
  constexpr FormatSpec kE8m0 = lowbit::kE8m0;
  constexpr FormatSpec kInt4 = lowbit::kInt4;
  constexpr FormatSpec kFp32 = lowbit::kFp32;
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n || !DeviceSideCheck()) return;
  EncodeOptions saturate;
  saturate.overflow = lowbit::Overflow::kSaturate;
  saturate.nan_sign = lowbit::NanSign::kPositive;
  const std::uint64_t e4m3 = lowbit::EncodeF32(kE4m3, in[i], saturate).code;
  const std::uint64_t e5m2 = lowbit::EncodeF32(kE5m2, in[i]).code;
  EncodeOptions stochastic;
  stochastic.rounding = lowbit::RoundingMode::kStochastic;
  stochastic.random_bits = static_cast<std::uint32_t>(i) * 2654435761u;
  const std::uint64_t e2m1 = lowbit::EncodeF32(kE2m1, in[i], stochastic).code;
  EncodeOptions up;
  up.rounding = lowbit::RoundingMode::kUp;
  up.negative_into_unsigned = lowbit::NegativeIntoUnsigned::kMagnitude;
  const std::uint64_t e8m0 =
      lowbit::RoundPack(kE8m0, lowbit::Unpack(kFp32, lowbit::BitCast<std::uint32_t>(in[i])), up).code;
  const std::uint64_t int4 = lowbit::EncodeF32(kInt4, in[i]).code;
  const std::uint64_t e3m2 = lowbit::EncodeF32(kE3m2, in[i]).code;
  const float back = lowbit::DecodeToF32(kE4m3, e4m3) + lowbit::DecodeToF32(kE5m2, e5m2) +
                     lowbit::DecodeToF32(kE2m1, e2m1) + lowbit::DecodeToF32(kE3m2, e3m2) +
                     lowbit::DecodeToF32(kE8m0, e8m0) + lowbit::DecodeToF32(kInt4, int4);
  // The alternatives the CUDA recipe kernels call, in device code.
  const float amax = lowbit::alternatives::CombineAmaxOfMagnitudes(lowbit::AmaxNan::kIgnore, 0.0f, in[i]);
  const std::uint32_t fast = lowbit::alternatives::EncodeE2m1OneAddition(in[i]) +
                             lowbit::alternatives::E8m0RceilFromBits(amax, true);
  out[i] = lowbit::BitCast<std::uint32_t>(back) ^ fast;
}

}  // namespace

// Referenced so that the kernel is instantiated and emitted.
void LaunchEncodeDecodeKernel(const float* in, std::uint32_t* out, int n) {
  EncodeDecodeKernel<<<(n + 127) / 128, 128>>>(in, out, n);
}
