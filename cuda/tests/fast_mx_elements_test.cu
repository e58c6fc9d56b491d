// The device compilation of the MXFP6 and MXINT8 element alternatives
// (formats/include/lowbit/formats/alternatives/fp6.h, mxint8.h) equals the
// device compilation of the model's element step, recipe::EncodeScaled, on
// all 2^32 FP32 inputs, for the MX recipes cuda/src/mx.cu builds ("<format>:te",
// "<format>:ocp": ties to even) and for msx (ties away), every form of each
// rounding. proptests/backends/alternatives_test.cc checks the host
// compilation; the device one differs in the FP32 additions (__fadd_rn,
// whose NaN is NVIDIA's canonical one) and fminf / fmaxf, so it is swept
// here on every GPU run.
#include <gtest/gtest.h>

#include <string>
#include <string_view>

#include "gpu_test_util.h"
#include "lowbit/formats/alternatives/fp6.h"
#include "lowbit/formats/alternatives/mxint8.h"
#include "lowbit/formats/recipe/catalog.h"
#include "lowbit/formats/recipe/steps.h"
#include "recipes.cuh"

namespace lowbit::cuda {
namespace {

constexpr RoundingMode kEven = RoundingMode::kNearestEven;
constexpr RoundingMode kAway = RoundingMode::kNearestAway;

// "<format>:<profile>" built as the catalog builds it (recipe::MakeMxRecipe).
template <FormatId kElement, int kProfile>
struct MxRecipeAt {
  static constexpr int kFormat = detail::MxFormatIndex<kElement>();
  static_assert(kFormat >= 0 && kProfile >= 0);
  LOWBIT_HD_CONSTEXPR static recipe::Recipe Get() {
    constexpr recipe::Recipe kRecipe = recipe::MakeMxRecipe(recipe::kMxFormats[kFormat], recipe::kMxProfiles[kProfile]);
    return kRecipe;
  }
};
template <FormatId kElement>
using Te = MxRecipeAt<kElement, detail::MxProfileIndex("te")>;
template <FormatId kElement>
using Ocp = MxRecipeAt<kElement, detail::MxProfileIndex("ocp")>;
template <FormatId kElement>
using Msx = MxRecipeAt<kElement, detail::MxProfileIndex("msx")>;

// The kernels' recipes take the alternatives (mx.cu MxSteps), with ties to
// even; msx is the ties-away rule.
static_assert(alternatives::Fp6AlternativeApplies(detail::MxRecipeOf<FormatId::kE2m3, detail::kMxTeProfile>::Get()) &&
              alternatives::Fp6AlternativeApplies(detail::MxRecipeOf<FormatId::kE2m3, detail::kMxOcpProfile>::Get()) &&
              alternatives::Fp6AlternativeApplies(detail::MxRecipeOf<FormatId::kE3m2, detail::kMxTeProfile>::Get()) &&
              alternatives::Fp6AlternativeApplies(detail::MxRecipeOf<FormatId::kE3m2, detail::kMxOcpProfile>::Get()));
static_assert(alternatives::MxInt8AlternativeApplies(detail::MxRecipeOf<FormatId::kInt8, detail::kMxOcpProfile>::Get()) &&
              !detail::kMxKernelCompiled<FormatId::kInt8, detail::kMxTeProfile>);  // the catalog has no TE MXINT8
static_assert(Te<FormatId::kE2m3>::Get().element_encode.rounding == kEven &&
              Ocp<FormatId::kE2m3>::Get().element_encode.rounding == kEven &&
              Msx<FormatId::kE2m3>::Get().element_encode.rounding == kAway);

// Every form of the element's alternatives for rounding kRounding gives `want`.
template <FormatId kElement, RoundingMode kRounding>
__device__ bool AllFormsGive(float y, std::uint32_t want) {
  if constexpr (kElement == FormatId::kE2m3) {
    bool ok = alternatives::EncodeE2m3FromBits<kRounding>(y) == want && alternatives::EncodeE2m3<kRounding>(y) == want;
    if constexpr (kRounding == kEven) ok = ok && alternatives::EncodeE2m3OneAddition(y) == want;
    return ok;
  } else if constexpr (kElement == FormatId::kE3m2) {
    bool ok = alternatives::EncodeE3m2FromBits<kRounding>(y) == want && alternatives::EncodeE3m2<kRounding>(y) == want;
    if constexpr (kRounding == kEven) ok = ok && alternatives::EncodeE3m2OneAddition(y) == want;
    return ok;
  } else {
    bool ok = alternatives::EncodeMxInt8FromBits<kRounding>(y) == want && alternatives::EncodeMxInt8<kRounding>(y) == want;
    if constexpr (kRounding == kEven) ok = ok && alternatives::EncodeMxInt8MagicAdd(y) == want;
    return ok;
  }
}

template <FormatId kElement, typename R>
__global__ void SweepElement(unsigned long long* mismatches, unsigned* first) {
  constexpr recipe::Recipe kR = R::Get();
  constexpr RoundingMode kRounding = kR.element_encode.rounding;
  unsigned long long local = 0;
  for (unsigned long long i = blockIdx.x * 256ull + threadIdx.x; i < (1ull << 32); i += 256ull * gridDim.x) {
    const std::uint32_t x = static_cast<std::uint32_t>(i);
    const float y = __uint_as_float(x);
    const std::uint32_t want = recipe::EncodeScaled(kR, recipe::BlockScale{}, y);
    if (!AllFormsGive<kElement, kRounding>(y, want)) {
      if (local++ == 0) atomicCAS(first, 0u, x);
    }
  }
  if (local) atomicAdd(mismatches, local);
}

template <FormatId kElement, typename R>
void SweepAll(const char* what) {
  testing::DeviceBuffer counters(16);
  LOWBIT_CUDA_OK(cudaMemset(counters.get(), 0, 16));
  auto* mismatches = counters.get<unsigned long long>();
  auto* first = reinterpret_cast<unsigned*>(counters.get<char>() + 8);
  SweepElement<kElement, R><<<132 * 8, 256>>>(mismatches, first);
  LOWBIT_CUDA_OK(cudaGetLastError());
  LOWBIT_CUDA_OK(cudaDeviceSynchronize());
  unsigned long long host[2] = {};
  LOWBIT_CUDA_OK(cudaMemcpy(host, counters.get(), 16, cudaMemcpyDeviceToHost));
  EXPECT_EQ(host[0], 0u) << what << ": first mismatch near input 0x" << std::hex << (host[1] & 0xFFFFFFFFu);
}

template <FormatId kElement>
void SweepTeOcpMsx(std::string_view format) {
  SweepAll<kElement, Te<kElement>>((std::string(format) + ":te").c_str());
  SweepAll<kElement, Ocp<kElement>>((std::string(format) + ":ocp").c_str());
  SweepAll<kElement, Msx<kElement>>((std::string(format) + ":msx").c_str());
}

TEST(CudaFastMxElements, E2m3EveryFp32InputEqualsModel) {
  LOWBIT_REQUIRE_GPU();
  SweepTeOcpMsx<FormatId::kE2m3>("mxfp6_e2m3");
}

TEST(CudaFastMxElements, E3m2EveryFp32InputEqualsModel) {
  LOWBIT_REQUIRE_GPU();
  SweepTeOcpMsx<FormatId::kE3m2>("mxfp6_e3m2");
}

TEST(CudaFastMxElements, Int8EveryFp32InputEqualsModel) {
  LOWBIT_REQUIRE_GPU();
  SweepTeOcpMsx<FormatId::kInt8>("mxint8");
}

}  // namespace
}  // namespace lowbit::cuda
