// The named profiles: one id per implementation whose conversions lowbit
// reproduces bit for bit (docs/design.md "Profiles"), with its name and citation.
// What each profile does is in its own header (ocp.h, nvidia.h, ml_dtypes.h,
// pytorch.h); profiles.h dispatches on the id.
#pragma once

#include <cstdint>
#include <string_view>

#include "lowbit/formats/config.h"

namespace lowbit {

enum class ProfileId : std::uint8_t {
  kOcp,           // the OCP OFP8 / MX v1.0 specifications
  kNvidia,        // sm_89/sm_90 cvt and the CUDA 13.0 headers, __NV_SATFINITE
  kNvidiaNosat,   // the CUDA 13.0 headers with __NV_NOSAT (software on sm_90)
  kMlDtypes,      // ml_dtypes 0.6 (numpy astype)
  kPytorchCpu,    // PyTorch 2.11 Tensor.to(dtype) on the CPU
  kPytorchCuda,   // PyTorch 2.11 Tensor.to(dtype) on a CUDA device
  // PyTorch 2.15 Tensor.to(dtype) on the CPU: as kPytorchCpu except that the
  // cast to float8_e4m3fn saturates (pytorch/pytorch PR #178817).
  kPytorchCpu215,
  kNumpy,  // NumPy 2.4's own float16 casts (astype to and from float16)
};

inline constexpr ProfileId kAllProfiles[] = {
    ProfileId::kOcp,      ProfileId::kNvidia,     ProfileId::kNvidiaNosat,
    ProfileId::kMlDtypes, ProfileId::kPytorchCpu, ProfileId::kPytorchCuda,
    ProfileId::kPytorchCpu215, ProfileId::kNumpy,
};
inline constexpr int kProfileCount = sizeof(kAllProfiles) / sizeof(kAllProfiles[0]);

// The name the CLI and the tests use.
LOWBIT_HD_CONSTEXPR const char* ProfileName(ProfileId id) {
  switch (id) {
    case ProfileId::kOcp:
      return "ocp";
    case ProfileId::kNvidia:
      return "nvidia";
    case ProfileId::kNvidiaNosat:
      return "nvidia-nosat";
    case ProfileId::kMlDtypes:
      return "ml_dtypes";
    case ProfileId::kPytorchCpu:
      return "pytorch-cpu";
    case ProfileId::kPytorchCuda:
      return "pytorch-cuda";
    case ProfileId::kPytorchCpu215:
      return "pytorch-cpu-2.15";
    case ProfileId::kNumpy:
      return "numpy";
  }
  return "";
}

// Where the behaviour comes from (docs/formats-reference.md §0 keys and what was measured).
LOWBIT_HD_CONSTEXPR const char* ProfileSource(ProfileId id) {
  switch (id) {
    case ProfileId::kOcp:
      return "OCP 8-bit Floating Point Specification (OFP8) v1.0, non-saturating "
             "mode; OCP Microscaling Formats (MX) v1.0 §5.3.3, §5.4.1, §6.3 "
             "[OCP-MX]; IEEE 754-2019 for FP32/BF16/FP16";
    case ProfileId::kNvidia:
      return "PTX ISA 9.0 §9.7.9.21 cvt (.rn.satfinite) on sm_89/sm_90 and the "
             "CUDA 13.0 cuda_fp8/fp6/fp4/bf16/fp16 headers (__NV_SATFINITE), "
             "host code verified equal to H100 hardware [CUDA-fp8, CUDA-fp6, "
             "CUDA-fp4, CUDA-bf16, CUDA-fp16, PTX, PROBE]";
    case ProfileId::kNvidiaNosat:
      return "CUDA 13.0 cuda_fp8.h with __NV_NOSAT (software path even on "
             "sm_89/sm_90), otherwise as nvidia [CUDA-fp8]";
    case ProfileId::kMlDtypes:
      return "ml_dtypes 0.6 (jax-ml/ml_dtypes @b793a6e float8.h, mxfloat.h, "
             "intn.h), measured with numpy 2.5 astype [MLD, PROBE]";
    case ProfileId::kPytorchCpu:
      return "PyTorch 2.11.0 CPU Tensor.to(dtype): c10 Float8_*.h, "
             "Float8_e8m0fnu.h, BFloat16/Half conversions [PT, PROBE]";
    case ProfileId::kPytorchCuda:
      return "PyTorch 2.11.0+cu130 CUDA Tensor.to(dtype) on H100 [PT, PROBE]";
    case ProfileId::kPytorchCpu215:
      return "PyTorch 2.15.0 CPU Tensor.to(dtype), measured: as pytorch-cpu but "
             "the float8_e4m3fn cast saturates (finite overflow and +-Inf -> "
             "+-448, NaN -> 0x7F|s), torch/headeronly/util/Float8_e4m3fn.h "
             "fp8e4m3fn_from_fp32_value since pytorch/pytorch PR #178817 "
             "(9deaf8d, merged 2026-04-17; first release 2.13) [PT, PROBE]";
    case ProfileId::kNumpy:
      return "NumPy 2.4 astype to and from float16 (numpy/_core/src/common/"
             "half_private.hpp FromFloatBits, FromDoubleBits, ToFloatBits): a "
             "NaN keeps its payload unquieted, 0x7F800001 -> 0x7C01; measured "
             "over all 2^32 FP32 inputs [NPY, PROBE]";
  }
  return "";
}

// Looks a profile up by ProfileName (or an alias); false if unknown.
constexpr bool FindProfile(std::string_view name, ProfileId* out) {
  for (ProfileId id : kAllProfiles) {
    if (name == ProfileName(id)) {
      *out = id;
      return true;
    }
  }
  struct Alias {
    std::string_view name;
    ProfileId id;
  };
  constexpr Alias kAliases[] = {
      {"ml-dtypes", ProfileId::kMlDtypes},
      {"nvidia-satfinite", ProfileId::kNvidia},
      {"torch-cpu", ProfileId::kPytorchCpu},
      {"torch-cuda", ProfileId::kPytorchCuda},
      {"torch-cpu-2.15", ProfileId::kPytorchCpu215},
  };
  for (const Alias& alias : kAliases) {
    if (name == alias.name) {
      *out = alias.id;
      return true;
    }
  }
  return false;
}

}  // namespace lowbit
