// Decodes of the `nvidia` profile against the CUDA 13.0 headers, every code:
// FP8 -> FP16 (__nv_cvt_fp8_to_halfraw: NaN -> 0x7FFF, sign dropped; the sm_90
// instruction cvt.rn.f16x2.e4m3x2 gives the same [HW-verified, docs/formats-reference.md §4.1]),
// FP4/FP6 -> FP16 (__nv_cvt_fp{4,6}_to_halfraw), E8M0 -> BF16
// (__nv_cvt_e8m0_to_bf16raw: 0xFF -> 0x7FFF, 0x00 -> 0x0040), and to FP32 as
// the header types' operator float() does it (FP16 NaN -> 0x7FFFFFFF, BF16
// bit shift, E8M0 through BF16 -> 0x7FFF0000).
#include <gtest/gtest.h>

#include <cstdint>
#include <string>

#include "lowbit/formats/fp32_bits.h"
#include "lowbit/formats/profiles/profiles.h"

#if LOWBIT_HAVE_CUDA_HEADERS
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_fp4.h>
#include <cuda_fp6.h>
#include <cuda_fp8.h>
#endif

namespace lowbit {
namespace {

#if LOWBIT_HAVE_CUDA_HEADERS

struct Witness {
  const char* name;
  FormatId src;
  FormatId dst;
  std::uint32_t (*cuda)(std::uint32_t);
};

const Witness kWitnesses[] = {
    {"E4m3ToFp16", FormatId::kE4m3, FormatId::kFp16,
     [](std::uint32_t c) -> std::uint32_t { return __nv_cvt_fp8_to_halfraw(static_cast<__nv_fp8_storage_t>(c), __NV_E4M3).x; }},
    {"E5m2ToFp16", FormatId::kE5m2, FormatId::kFp16,
     [](std::uint32_t c) -> std::uint32_t { return __nv_cvt_fp8_to_halfraw(static_cast<__nv_fp8_storage_t>(c), __NV_E5M2).x; }},
    {"E2m1ToFp16", FormatId::kE2m1, FormatId::kFp16,
     [](std::uint32_t c) -> std::uint32_t { return __nv_cvt_fp4_to_halfraw(static_cast<__nv_fp4_storage_t>(c), __NV_E2M1).x; }},
    {"E2m3ToFp16", FormatId::kE2m3, FormatId::kFp16,
     [](std::uint32_t c) -> std::uint32_t { return __nv_cvt_fp6_to_halfraw(static_cast<__nv_fp6_storage_t>(c), __NV_E2M3).x; }},
    {"E3m2ToFp16", FormatId::kE3m2, FormatId::kFp16,
     [](std::uint32_t c) -> std::uint32_t { return __nv_cvt_fp6_to_halfraw(static_cast<__nv_fp6_storage_t>(c), __NV_E3M2).x; }},
    {"E8m0ToBf16", FormatId::kE8m0, FormatId::kBf16,
     [](std::uint32_t c) -> std::uint32_t { return __nv_cvt_e8m0_to_bf16raw(static_cast<__nv_fp8_storage_t>(c)).x; }},
    {"E4m3ToFp32", FormatId::kE4m3, FormatId::kFp32, [](std::uint32_t c) -> std::uint32_t {
       __nv_fp8_e4m3 v;
       v.__x = static_cast<__nv_fp8_storage_t>(c);
       return F32Bits(static_cast<float>(v));
     }},
    {"E5m2ToFp32", FormatId::kE5m2, FormatId::kFp32, [](std::uint32_t c) -> std::uint32_t {
       __nv_fp8_e5m2 v;
       v.__x = static_cast<__nv_fp8_storage_t>(c);
       return F32Bits(static_cast<float>(v));
     }},
    {"E8m0ToFp32", FormatId::kE8m0, FormatId::kFp32, [](std::uint32_t c) -> std::uint32_t {
       __nv_fp8_e8m0 v;
       v.__x = static_cast<__nv_fp8_storage_t>(c);
       return F32Bits(static_cast<float>(v));
     }},
    {"E2m1ToFp32", FormatId::kE2m1, FormatId::kFp32, [](std::uint32_t c) -> std::uint32_t {
       __nv_fp4_e2m1 v;
       v.__x = static_cast<__nv_fp4_storage_t>(c);
       return F32Bits(static_cast<float>(v));
     }},
    {"Fp16ToFp32", FormatId::kFp16, FormatId::kFp32, [](std::uint32_t c) -> std::uint32_t {
       __half_raw h;
       h.x = static_cast<unsigned short>(c);
       return F32Bits(__half2float(__half(h)));
     }},
    {"Bf16ToFp32", FormatId::kBf16, FormatId::kFp32, [](std::uint32_t c) -> std::uint32_t {
       __nv_bfloat16_raw b;
       b.x = static_cast<unsigned short>(c);
       return F32Bits(__bfloat162float(__nv_bfloat16(b)));
     }},
};

class NvidiaDecode : public ::testing::TestWithParam<Witness> {};

TEST_P(NvidiaDecode, EveryCodeMatchesCudaHeaderHostCode) {
  const Witness& w = GetParam();
  const FormatSpec& src = Spec(w.src);
  std::uint64_t checked = 0;
  int mismatches = 0;
  for (std::uint64_t c = 0; c <= src.CodeMask(); ++c) {
    EncodeResult r;
    const bool ok = ProfileEncode(ProfileId::kNvidia, src, c, Spec(w.dst), RoundingMode::kNearestEven, &r);
    const std::uint32_t want = w.cuda(static_cast<std::uint32_t>(c));
    ++checked;
    if (!ok || r.code != want) {
      if (mismatches++ < 8) {
        ADD_FAILURE() << w.name << ": code=0x" << std::hex << c << " cuda=0x" << want
                      << " model=0x" << r.code << (ok ? "" : " (refused)");
      }
    }
  }
  EXPECT_EQ(checked, src.CodeMask() + 1);
  EXPECT_EQ(mismatches, 0);
}

INSTANTIATE_TEST_SUITE_P(CudaHeaders, NvidiaDecode, ::testing::ValuesIn(kWitnesses),
                         [](const ::testing::TestParamInfo<Witness>& info) {
                           return std::string(info.param.name);
                         });

#else  // !LOWBIT_HAVE_CUDA_HEADERS

TEST(NvidiaDecode, EveryCodeMatchesCudaHeaderHostCode) {
  GTEST_SKIP() << "CUDA headers (cuda_fp8.h) not found: no NVIDIA witness to compare with";
}

#endif

}  // namespace
}  // namespace lowbit
