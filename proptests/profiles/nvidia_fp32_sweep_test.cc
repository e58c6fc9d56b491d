// The `nvidia` and `nvidia-nosat` profiles against the CUDA 13.0 headers' host
// code, which docs/formats-reference.md §2.1 found bit-exact with H100 hardware for
// FP8/BF16/FP16 over all 2^32 FP32 inputs, and which is the very code sm_90
// runs for FP4/FP6/E8M0 (no hardware instruction there). Every FP32 input of
// every conversion at LOWBIT_TEST_LEVEL=full, the model asked per input. At
// ci, every FP32 input of the conversions kernels use most (E4M3/E5M2
// satfinite, BF16/FP16 RN, E2M1 RN, E8M0 RZ/RP satfinite), the model asked
// once per rounding class (rounding_classes.h; NvidiaModelClasses checks the
// premise), and for the rest a fixed sample: the class-complete set of
// docs/formats-reference.md §10.1 (every high 16-bit pattern x 6 low
// patterns), the same idea at the FP16 rounding position (every high 19-bit
// pattern x 6 low 13-bit patterns), and a prime stride through all 2^32.
// Zero mismatches required.
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

#include "lowbit/formats/profiles/profiles.h"
#include "rounding_classes.h"
#include "test_level.h"

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

float F(std::uint32_t bits) {
  float f;
  std::memcpy(&f, &bits, sizeof(f));
  return f;
}

// Each witness is the host path of one CUDA header function (NV_IF_ELSE_TARGET
// takes the software branch in host code).
std::uint32_t Bf16Rn(std::uint32_t x) { return __nv_bfloat16_raw(__float2bfloat16_rn(F(x))).x; }
std::uint32_t Bf16Rz(std::uint32_t x) { return __nv_bfloat16_raw(__float2bfloat16_rz(F(x))).x; }
std::uint32_t Bf16Rd(std::uint32_t x) { return __nv_bfloat16_raw(__float2bfloat16_rd(F(x))).x; }
std::uint32_t Bf16Ru(std::uint32_t x) { return __nv_bfloat16_raw(__float2bfloat16_ru(F(x))).x; }
std::uint32_t Fp16Rn(std::uint32_t x) { return __half_raw(__float2half_rn(F(x))).x; }
std::uint32_t Fp16Rz(std::uint32_t x) { return __half_raw(__float2half_rz(F(x))).x; }
std::uint32_t Fp16Rd(std::uint32_t x) { return __half_raw(__float2half_rd(F(x))).x; }
std::uint32_t Fp16Ru(std::uint32_t x) { return __half_raw(__float2half_ru(F(x))).x; }
std::uint32_t E4m3Sat(std::uint32_t x) { return __nv_cvt_float_to_fp8(F(x), __NV_SATFINITE, __NV_E4M3); }
std::uint32_t E5m2Sat(std::uint32_t x) { return __nv_cvt_float_to_fp8(F(x), __NV_SATFINITE, __NV_E5M2); }
std::uint32_t E4m3NoSat(std::uint32_t x) { return __nv_cvt_float_to_fp8(F(x), __NV_NOSAT, __NV_E4M3); }
std::uint32_t E5m2NoSat(std::uint32_t x) { return __nv_cvt_float_to_fp8(F(x), __NV_NOSAT, __NV_E5M2); }
std::uint32_t E2m1Rn(std::uint32_t x) { return __nv_cvt_float_to_fp4(F(x), __NV_E2M1, cudaRoundNearest); }
std::uint32_t E2m1Rz(std::uint32_t x) { return __nv_cvt_float_to_fp4(F(x), __NV_E2M1, cudaRoundZero); }
std::uint32_t E2m3Rn(std::uint32_t x) { return __nv_cvt_float_to_fp6(F(x), __NV_E2M3, cudaRoundNearest); }
std::uint32_t E2m3Rz(std::uint32_t x) { return __nv_cvt_float_to_fp6(F(x), __NV_E2M3, cudaRoundZero); }
std::uint32_t E3m2Rn(std::uint32_t x) { return __nv_cvt_float_to_fp6(F(x), __NV_E3M2, cudaRoundNearest); }
std::uint32_t E3m2Rz(std::uint32_t x) { return __nv_cvt_float_to_fp6(F(x), __NV_E3M2, cudaRoundZero); }
std::uint32_t E8m0RzSat(std::uint32_t x) { return __nv_cvt_float_to_e8m0(F(x), __NV_SATFINITE, cudaRoundZero); }
std::uint32_t E8m0RpSat(std::uint32_t x) { return __nv_cvt_float_to_e8m0(F(x), __NV_SATFINITE, cudaRoundPosInf); }
std::uint32_t E8m0RzNoSat(std::uint32_t x) { return __nv_cvt_float_to_e8m0(F(x), __NV_NOSAT, cudaRoundZero); }
std::uint32_t E8m0RpNoSat(std::uint32_t x) { return __nv_cvt_float_to_e8m0(F(x), __NV_NOSAT, cudaRoundPosInf); }

struct Witness {
  const char* name;
  ProfileId profile;
  FormatId dst;
  RoundingMode mode;
  std::uint32_t (*cuda)(std::uint32_t);
  bool all_inputs_at_ci = false;  // every FP32 input at ci too (the file comment)
};

constexpr RoundingMode kRn = RoundingMode::kNearestEven;
constexpr RoundingMode kRz = RoundingMode::kTowardZero;
constexpr RoundingMode kRd = RoundingMode::kDown;
constexpr RoundingMode kRu = RoundingMode::kUp;
constexpr ProfileId kSat = ProfileId::kNvidia;
constexpr ProfileId kNoSat = ProfileId::kNvidiaNosat;

const Witness kWitnesses[] = {
    {"Bf16Rn", kSat, FormatId::kBf16, kRn, Bf16Rn, true},
    {"Bf16Rz", kSat, FormatId::kBf16, kRz, Bf16Rz},
    {"Bf16Rd", kSat, FormatId::kBf16, kRd, Bf16Rd},
    {"Bf16Ru", kSat, FormatId::kBf16, kRu, Bf16Ru},
    {"Fp16Rn", kSat, FormatId::kFp16, kRn, Fp16Rn, true},
    {"Fp16Rz", kSat, FormatId::kFp16, kRz, Fp16Rz},
    {"Fp16Rd", kSat, FormatId::kFp16, kRd, Fp16Rd},
    {"Fp16Ru", kSat, FormatId::kFp16, kRu, Fp16Ru},
    {"E4m3Satfinite", kSat, FormatId::kE4m3, kRn, E4m3Sat, true},
    {"E5m2Satfinite", kSat, FormatId::kE5m2, kRn, E5m2Sat, true},
    {"E4m3Nosat", kNoSat, FormatId::kE4m3, kRn, E4m3NoSat},
    {"E5m2Nosat", kNoSat, FormatId::kE5m2, kRn, E5m2NoSat},
    {"E2m1Rn", kSat, FormatId::kE2m1, kRn, E2m1Rn, true},
    {"E2m1Rz", kSat, FormatId::kE2m1, kRz, E2m1Rz},
    {"E2m3Rn", kSat, FormatId::kE2m3, kRn, E2m3Rn},
    {"E2m3Rz", kSat, FormatId::kE2m3, kRz, E2m3Rz},
    {"E3m2Rn", kSat, FormatId::kE3m2, kRn, E3m2Rn},
    {"E3m2Rz", kSat, FormatId::kE3m2, kRz, E3m2Rz},
    {"E8m0RzSatfinite", kSat, FormatId::kE8m0, kRz, E8m0RzSat, true},
    {"E8m0RpSatfinite", kSat, FormatId::kE8m0, kRu, E8m0RpSat, true},
    {"E8m0RzNosat", kNoSat, FormatId::kE8m0, kRz, E8m0RzNoSat},
    {"E8m0RpNosat", kNoSat, FormatId::kE8m0, kRu, E8m0RpNoSat},
};

// The ci sample (see the file comment); sorted order is not needed.
std::vector<std::uint32_t> CiSample() {
  std::vector<std::uint32_t> v;
  const std::uint32_t low16[] = {0x0000, 0x0001, 0x7FFF, 0x8000, 0x8001, 0xFFFF};
  for (std::uint32_t hi = 0; hi < (1u << 16); ++hi) {
    for (std::uint32_t lo : low16) v.push_back(hi << 16 | lo);
  }
  const std::uint32_t low13[] = {0x0000, 0x0001, 0x0FFF, 0x1000, 0x1001, 0x1FFF};
  for (std::uint32_t hi = 0; hi < (1u << 19); ++hi) {
    for (std::uint32_t lo : low13) v.push_back(hi << 13 | lo);
  }
  // 2^32 / 4093 ~ 1.05M inputs; 4093 is prime, so every low-bit residue shows up.
  for (std::uint64_t x = 0; x < (std::uint64_t{1} << 32); x += 4093) {
    v.push_back(static_cast<std::uint32_t>(x));
  }
  return v;
}

struct alignas(64) Tally {  // one cache line each: no false sharing
  std::uint64_t checked = 0;
  std::uint64_t mismatches = 0;
  std::vector<std::string> first;
};

// The model's code for x, as the witness's conversion (ProfileEncode).
std::uint64_t ModelCode(const Witness& w, std::uint32_t x) {
  EncodeResult r;
  if (!ProfileEncode(w.profile, kFp32, x, Spec(w.dst), w.mode, &r)) return ~std::uint64_t{0};
  return r.code;
}

void Report(const Witness& w, std::uint32_t x, std::uint64_t model, Tally* t) {
  if (t->mismatches++ < 8) {
    char line[128];
    std::snprintf(line, sizeof(line), "x=0x%08X cuda=0x%X model=0x%llX%s", x, w.cuda(x),
                  static_cast<unsigned long long>(model),
                  model == ~std::uint64_t{0} ? " (refused)" : "");
    t->first.push_back(line);
  }
}

void Check(const Witness& w, std::uint32_t x, Tally* t) {
  const std::uint64_t model = ModelCode(w, x);
  ++t->checked;
  if (model != w.cuda(x)) Report(w, x, model, t);
}

// Every input of the (sign, exponent) groups part, part + threads, ...: the
// model's codes per rounding class into a group buffer, the witness per input.
void SweepByClasses(const Witness& w, int part, int threads, Tally* t) {
  const FormatSpec& dst = Spec(w.dst);
  const std::size_t out_bytes = dst.total_bits > 8 ? 2 : 1;
  std::vector<std::uint8_t> expected(std::size_t{testing::kFp32GroupSize} * out_bytes);
  for (std::uint32_t group = part; group < 512; group += threads) {
    const std::uint32_t sign = group >> 8, e = group & 0xFF;
    testing::ExpectedGroupByClasses(dst, sign, e, out_bytes, expected.data(),
                                    [&](std::uint32_t x) { return ModelCode(w, x); });
    const std::uint32_t top = (sign << 31) | (e << 23);
    for (std::uint32_t m = 0; m < testing::kFp32GroupSize; ++m) {
      std::uint32_t want = expected[std::size_t{m} * out_bytes];
      if (out_bytes == 2) want |= std::uint32_t{expected[std::size_t{m} * 2 + 1]} << 8;
      if (w.cuda(top | m) != want) Report(w, top | m, ModelCode(w, top | m), t);
    }
    t->checked += testing::kFp32GroupSize;
  }
}

class NvidiaFp32Sweep : public ::testing::TestWithParam<Witness> {};

TEST_P(NvidiaFp32Sweep, MatchesCudaHeaderHostCode) {
  const Witness& w = GetParam();
  const testing::TestLevel level = testing::CurrentTestLevel();
  const bool by_classes = level == testing::TestLevel::kCi && w.all_inputs_at_ci;
  const bool all_inputs = level == testing::TestLevel::kFull || by_classes;
  std::vector<std::uint32_t> sample;
  if (!all_inputs) sample = CiSample();
  if (level == testing::TestLevel::kSmoke) sample.resize(sample.size() / 16);
  // Every core: two here (docs/design.md "Tests"), sixteen when the full sweep runs on the
  // GPU machine's CPUs.
  const int kThreads = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  std::vector<Tally> tallies(kThreads);
  const auto start = std::chrono::steady_clock::now();
  std::vector<std::thread> threads;
  for (int i = 0; i < kThreads; ++i) {
    threads.emplace_back([&, i] {
      if (by_classes) {
        SweepByClasses(w, i, kThreads, &tallies[i]);
      } else if (all_inputs) {
        const std::uint64_t n = std::uint64_t{1} << 32;
        for (std::uint64_t x = n * i / kThreads; x < n * (i + 1) / kThreads; ++x) {
          Check(w, static_cast<std::uint32_t>(x), &tallies[i]);
        }
      } else {
        for (std::size_t k = i; k < sample.size(); k += kThreads) Check(w, sample[k], &tallies[i]);
      }
    });
  }
  for (std::thread& t : threads) t.join();
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  std::uint64_t checked = 0, mismatches = 0;
  for (const Tally& t : tallies) {
    checked += t.checked;
    mismatches += t.mismatches;
    for (const std::string& line : t.first) ADD_FAILURE() << w.name << ": " << line;
  }
  std::printf("[ sweep    ] %s: %llu inputs%s, %llu mismatches, %.2f s on %d threads\n", w.name,
              static_cast<unsigned long long>(checked),
              by_classes ? " (model per rounding class)" : "",
              static_cast<unsigned long long>(mismatches), seconds, kThreads);
  // The body ran: a sweep that checked nothing would pass silently.
  EXPECT_GE(checked, all_inputs ? (std::uint64_t{1} << 32) : 100000u);
  EXPECT_EQ(mismatches, 0u);
}

// The premise of SweepByClasses for the nvidia profiles: the class-filled
// codes equal the model asked per input, on a stride through every kind of
// group and the class edges around each visited input (at ci and full).
TEST(NvidiaModelClasses, AreSound) {
  if (testing::CurrentTestLevel() == testing::TestLevel::kSmoke) GTEST_SKIP() << "ci and full";
  std::vector<std::uint8_t> expected(std::size_t{testing::kFp32GroupSize} * 2);
  std::uint64_t checked = 0;
  for (const Witness& w : kWitnesses) {
    if (!w.all_inputs_at_ci) continue;
    const FormatSpec& dst = Spec(w.dst);
    const std::size_t out_bytes = dst.total_bits > 8 ? 2 : 1;
    for (std::uint32_t group : testing::kClassCheckGroups) {
      const std::uint32_t sign = group >> 8, e = group & 0xFF;
      if (testing::GroupMethodFor(dst, sign, e, [&](std::uint32_t x) { return ModelCode(w, x); }) ==
            testing::GroupMethod::kPerInput) {
          continue;  // the model per input: nothing to check
        }
      testing::ExpectedGroupByClasses(dst, sign, e, out_bytes, expected.data(),
                                      [&](std::uint32_t x) { return ModelCode(w, x); });
      testing::ForEachClassEdgeMantissa(dst, e, [&](std::uint32_t m) {
        const std::uint32_t x = (sign << 31) | (e << 23) | m;
        std::uint64_t code = 0;
        std::memcpy(&code, expected.data() + std::size_t{m} * out_bytes, out_bytes);
        ASSERT_EQ(code, ModelCode(w, x)) << w.name << " x=0x" << std::hex << x;
        ++checked;
      });
      if (HasFatalFailure()) return;
    }
  }
  EXPECT_GT(checked, 500000u);
}

INSTANTIATE_TEST_SUITE_P(CudaHeaders, NvidiaFp32Sweep, ::testing::ValuesIn(kWitnesses),
                         [](const ::testing::TestParamInfo<Witness>& info) {
                           return std::string(info.param.name);
                         });

// The ci sample contains the docs/formats-reference.md §9 boundary vectors (they are all of the
// form hi16 | {0000,0001,7FFF,8000,8001,FFFF} or hit by the stride), so a
// boundary bug cannot hide between strides.
TEST(NvidiaFp32Sample, ContainsTheFactsBoundaryVectors) {
  const std::vector<std::uint32_t> s = CiSample();
  const std::uint32_t boundaries[] = {
      0x80000000u, 0x00000001u, 0x3A800000u, 0x3A800001u, 0x37000000u, 0x37000001u,
      0x43E00000u, 0x43E7FFFFu, 0x43E80000u, 0x43E80001u, 0x43F00000u, 0x47600000u,
      0x476FFFFFu, 0x47700000u, 0x477FE000u, 0x477FEFFFu, 0x477FF000u, 0x7F7FFFFFu,
      0x7F800000u, 0xFF800000u, 0x7FC00000u, 0xFFC00000u, 0x7F800001u, 0xFF800001u,
      0x7FFFFFFFu, 0x00400000u, 0x00400001u, 0x7F000000u, 0x7F000001u};
  for (std::uint32_t b : boundaries) {
    bool found = false;
    for (std::uint32_t x : s) found = found || x == b;
    EXPECT_TRUE(found) << std::hex << b;
  }
}

#else  // !LOWBIT_HAVE_CUDA_HEADERS

TEST(NvidiaFp32Sweep, MatchesCudaHeaderHostCode) {
  GTEST_SKIP() << "CUDA headers (cuda_fp8.h) not found: no NVIDIA witness to compare with";
}

#endif

}  // namespace
}  // namespace lowbit
