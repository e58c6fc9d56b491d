// The `nvidia` and `nvidia-nosat` profiles against the CUDA 13.0 headers for
// every one of the 65 536 FP16 and BF16 inputs, into every format the headers
// convert them to directly (__nv_cvt_halfraw_to_fp8/fp6/fp4,
// __nv_cvt_bfloat16raw_to_fp8/fp6/fp4/e8m0), and FP16 <-> BF16 as CUDA code
// writes it (through float: __float2bfloat16_*(__half2float(h))). On sm_90
// the FP16 -> FP8 instruction equals "widen to f32, then the f32 path"
// [HW-verified, docs/formats-reference.md §2.1]; the header host code is that path.
#include <gtest/gtest.h>

#include <cstdint>
#include <string>

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

__half_raw H(std::uint32_t x) {
  __half_raw h;
  h.x = static_cast<unsigned short>(x);
  return h;
}
__nv_bfloat16_raw B(std::uint32_t x) {
  __nv_bfloat16_raw b;
  b.x = static_cast<unsigned short>(x);
  return b;
}
float HalfToFloat(std::uint32_t x) { return __half2float(__half(H(x))); }
float Bf16ToFloat(std::uint32_t x) { return __bfloat162float(__nv_bfloat16(B(x))); }

struct Witness {
  const char* name;
  ProfileId profile;
  FormatId src;
  FormatId dst;
  RoundingMode mode;
  std::uint32_t (*cuda)(std::uint32_t);
};

constexpr RoundingMode kRn = RoundingMode::kNearestEven;
constexpr RoundingMode kRz = RoundingMode::kTowardZero;
constexpr RoundingMode kRd = RoundingMode::kDown;
constexpr RoundingMode kRu = RoundingMode::kUp;
constexpr ProfileId kSat = ProfileId::kNvidia;
constexpr ProfileId kNoSat = ProfileId::kNvidiaNosat;
constexpr FormatId kF16 = FormatId::kFp16;
constexpr FormatId kB16 = FormatId::kBf16;

const Witness kWitnesses[] = {
    {"Fp16ToE4m3Satfinite", kSat, kF16, FormatId::kE4m3, kRn,
     [](std::uint32_t x) -> std::uint32_t { return __nv_cvt_halfraw_to_fp8(H(x), __NV_SATFINITE, __NV_E4M3); }},
    {"Fp16ToE5m2Satfinite", kSat, kF16, FormatId::kE5m2, kRn,
     [](std::uint32_t x) -> std::uint32_t { return __nv_cvt_halfraw_to_fp8(H(x), __NV_SATFINITE, __NV_E5M2); }},
    {"Fp16ToE4m3Nosat", kNoSat, kF16, FormatId::kE4m3, kRn,
     [](std::uint32_t x) -> std::uint32_t { return __nv_cvt_halfraw_to_fp8(H(x), __NV_NOSAT, __NV_E4M3); }},
    {"Fp16ToE5m2Nosat", kNoSat, kF16, FormatId::kE5m2, kRn,
     [](std::uint32_t x) -> std::uint32_t { return __nv_cvt_halfraw_to_fp8(H(x), __NV_NOSAT, __NV_E5M2); }},
    {"Bf16ToE4m3Satfinite", kSat, kB16, FormatId::kE4m3, kRn,
     [](std::uint32_t x) -> std::uint32_t { return __nv_cvt_bfloat16raw_to_fp8(B(x), __NV_SATFINITE, __NV_E4M3); }},
    {"Bf16ToE5m2Satfinite", kSat, kB16, FormatId::kE5m2, kRn,
     [](std::uint32_t x) -> std::uint32_t { return __nv_cvt_bfloat16raw_to_fp8(B(x), __NV_SATFINITE, __NV_E5M2); }},
    {"Bf16ToE4m3Nosat", kNoSat, kB16, FormatId::kE4m3, kRn,
     [](std::uint32_t x) -> std::uint32_t { return __nv_cvt_bfloat16raw_to_fp8(B(x), __NV_NOSAT, __NV_E4M3); }},
    {"Bf16ToE5m2Nosat", kNoSat, kB16, FormatId::kE5m2, kRn,
     [](std::uint32_t x) -> std::uint32_t { return __nv_cvt_bfloat16raw_to_fp8(B(x), __NV_NOSAT, __NV_E5M2); }},
    {"Fp16ToE2m1Rn", kSat, kF16, FormatId::kE2m1, kRn,
     [](std::uint32_t x) -> std::uint32_t { return __nv_cvt_halfraw_to_fp4(H(x), __NV_E2M1, cudaRoundNearest); }},
    {"Fp16ToE2m1Rz", kSat, kF16, FormatId::kE2m1, kRz,
     [](std::uint32_t x) -> std::uint32_t { return __nv_cvt_halfraw_to_fp4(H(x), __NV_E2M1, cudaRoundZero); }},
    {"Bf16ToE2m1Rn", kSat, kB16, FormatId::kE2m1, kRn,
     [](std::uint32_t x) -> std::uint32_t { return __nv_cvt_bfloat16raw_to_fp4(B(x), __NV_E2M1, cudaRoundNearest); }},
    {"Bf16ToE2m1Rz", kSat, kB16, FormatId::kE2m1, kRz,
     [](std::uint32_t x) -> std::uint32_t { return __nv_cvt_bfloat16raw_to_fp4(B(x), __NV_E2M1, cudaRoundZero); }},
    {"Fp16ToE2m3Rn", kSat, kF16, FormatId::kE2m3, kRn,
     [](std::uint32_t x) -> std::uint32_t { return __nv_cvt_halfraw_to_fp6(H(x), __NV_E2M3, cudaRoundNearest); }},
    {"Fp16ToE3m2Rz", kSat, kF16, FormatId::kE3m2, kRz,
     [](std::uint32_t x) -> std::uint32_t { return __nv_cvt_halfraw_to_fp6(H(x), __NV_E3M2, cudaRoundZero); }},
    {"Bf16ToE2m3Rz", kSat, kB16, FormatId::kE2m3, kRz,
     [](std::uint32_t x) -> std::uint32_t { return __nv_cvt_bfloat16raw_to_fp6(B(x), __NV_E2M3, cudaRoundZero); }},
    {"Bf16ToE3m2Rn", kSat, kB16, FormatId::kE3m2, kRn,
     [](std::uint32_t x) -> std::uint32_t { return __nv_cvt_bfloat16raw_to_fp6(B(x), __NV_E3M2, cudaRoundNearest); }},
    {"Bf16ToE8m0RzSatfinite", kSat, kB16, FormatId::kE8m0, kRz,
     [](std::uint32_t x) -> std::uint32_t { return __nv_cvt_bfloat16raw_to_e8m0(B(x), __NV_SATFINITE, cudaRoundZero); }},
    {"Bf16ToE8m0RpSatfinite", kSat, kB16, FormatId::kE8m0, kRu,
     [](std::uint32_t x) -> std::uint32_t { return __nv_cvt_bfloat16raw_to_e8m0(B(x), __NV_SATFINITE, cudaRoundPosInf); }},
    {"Bf16ToE8m0RzNosat", kNoSat, kB16, FormatId::kE8m0, kRz,
     [](std::uint32_t x) -> std::uint32_t { return __nv_cvt_bfloat16raw_to_e8m0(B(x), __NV_NOSAT, cudaRoundZero); }},
    {"Bf16ToE8m0RpNosat", kNoSat, kB16, FormatId::kE8m0, kRu,
     [](std::uint32_t x) -> std::uint32_t { return __nv_cvt_bfloat16raw_to_e8m0(B(x), __NV_NOSAT, cudaRoundPosInf); }},
    {"Fp16ToBf16Rn", kSat, kF16, kB16, kRn,
     [](std::uint32_t x) -> std::uint32_t { return __nv_bfloat16_raw(__float2bfloat16_rn(HalfToFloat(x))).x; }},
    {"Fp16ToBf16Rz", kSat, kF16, kB16, kRz,
     [](std::uint32_t x) -> std::uint32_t { return __nv_bfloat16_raw(__float2bfloat16_rz(HalfToFloat(x))).x; }},
    {"Fp16ToBf16Rd", kSat, kF16, kB16, kRd,
     [](std::uint32_t x) -> std::uint32_t { return __nv_bfloat16_raw(__float2bfloat16_rd(HalfToFloat(x))).x; }},
    {"Fp16ToBf16Ru", kSat, kF16, kB16, kRu,
     [](std::uint32_t x) -> std::uint32_t { return __nv_bfloat16_raw(__float2bfloat16_ru(HalfToFloat(x))).x; }},
    {"Bf16ToFp16Rn", kSat, kB16, kF16, kRn,
     [](std::uint32_t x) -> std::uint32_t { return __half_raw(__float2half_rn(Bf16ToFloat(x))).x; }},
    {"Bf16ToFp16Rz", kSat, kB16, kF16, kRz,
     [](std::uint32_t x) -> std::uint32_t { return __half_raw(__float2half_rz(Bf16ToFloat(x))).x; }},
    {"Bf16ToFp16Rd", kSat, kB16, kF16, kRd,
     [](std::uint32_t x) -> std::uint32_t { return __half_raw(__float2half_rd(Bf16ToFloat(x))).x; }},
    {"Bf16ToFp16Ru", kSat, kB16, kF16, kRu,
     [](std::uint32_t x) -> std::uint32_t { return __half_raw(__float2half_ru(Bf16ToFloat(x))).x; }},
};

class Nvidia16BitInputs : public ::testing::TestWithParam<Witness> {};

TEST_P(Nvidia16BitInputs, MatchCudaHeaderHostCode) {
  const Witness& w = GetParam();
  int checked = 0;
  int mismatches = 0;
  for (std::uint32_t x = 0; x < 0x10000; ++x) {
    EncodeResult r;
    const bool ok = ProfileEncode(w.profile, Spec(w.src), x, Spec(w.dst), w.mode, &r);
    const std::uint32_t want = w.cuda(x);
    ++checked;
    if (!ok || r.code != want) {
      if (mismatches++ < 8) {
        ADD_FAILURE() << w.name << ": x=0x" << std::hex << x << " cuda=0x" << want << " model=0x"
                      << r.code << (ok ? "" : " (refused)");
      }
    }
  }
  EXPECT_EQ(checked, 65536);
  EXPECT_EQ(mismatches, 0);
}

INSTANTIATE_TEST_SUITE_P(CudaHeaders, Nvidia16BitInputs, ::testing::ValuesIn(kWitnesses),
                         [](const ::testing::TestParamInfo<Witness>& info) {
                           return std::string(info.param.name);
                         });

#else  // !LOWBIT_HAVE_CUDA_HEADERS

TEST(Nvidia16BitInputs, MatchCudaHeaderHostCode) {
  GTEST_SKIP() << "CUDA headers (cuda_fp8.h) not found: no NVIDIA witness to compare with";
}

#endif

}  // namespace
}  // namespace lowbit
