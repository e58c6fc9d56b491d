// Array conversions on the GPU: encode FP32/BF16/FP16 into every element
// format and decode every format back, through one of two backends that are
// kept apart so that their differences are themselves tested:
//   cuda-hw  PTX cvt where the target has it (ptx.cuh): FP8 satfinite and
//            BF16/FP16 on sm_89/sm_90; FP4/FP6/E8M0 on sm_100a-class builds.
//   cuda-sw  the formats/ model compiled for the device (any format, any
//            EncodeOptions, stochastic rounding included). A source of at
//            most 16 bits goes through a table of the model's own results on
//            every source code (cuda/src/table_map.cuh): byte sources always,
//            16-bit ones from 2^16 elements and not under stochastic rounding.
//            An FP32 source into a format of at most 8 bits goes through a
//            table of the model's rounding thresholds
//            (cuda/src/threshold_map.cuh) under the option sets proven equal
//            to the model on all 2^32 inputs (ThresholdProvenOptions: the
//            format defaults, the nvidia satfinite rule, one toward-zero
//            set, the recipe element sets); FP32 -> BF16 / FP16 and BF16 /
//            FP16 -> FP32 through the 32-bit integer alternatives of
//            formats/include/lowbit/formats/alternatives/f32_f16_bf16.h
//            under the options they are proven for (the defaults among
//            them); other options run the model per element.
// Buffers are device memory, 16-byte vector IO where both are 16-byte aligned,
// any count; calls are asynchronous on `stream`. A 16-bit or threshold table
// lives in stream-ordered scratch from a pool of lowbit's own, which keeps up
// to 64 MiB mapped per device between calls (cuda/src/stream_scratch.h).
#pragma once

#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>

#include "lowbit/cuda/status.h"
#include "lowbit/formats/format_list.h"
#include "lowbit/formats/policy.h"

namespace lowbit::cuda {

enum class Backend : std::uint8_t { kHardware, kSoftware };
inline constexpr Backend kAllBackends[] = {Backend::kHardware, Backend::kSoftware};
const char* BackendName(Backend backend);  // "cuda-hw", "cuda-sw"

// Mirrors registry::Operation. Codes are stored one per element in the
// smallest unsigned type that holds them (uint8/16/32/64).
enum class ElementOp : std::uint8_t {
  kEncodeF32,     // float[]         -> codes
  kEncodeBf16,    // uint16_t[] bf16 -> codes
  kEncodeF16,     // uint16_t[] fp16 -> codes
  kDecodeToF32,   // codes -> float[]
  kDecodeToBf16,  // codes -> uint16_t[] bf16 (formats whose values BF16 holds)
};
const char* ElementOpName(ElementOp op);
// kEncodeF32, kEncodeBf16, kEncodeF16.
bool IsEncode(ElementOp op);

struct ConvertRequest {
  ElementOp op = ElementOp::kEncodeF32;
  FormatId format = FormatId::kE4m3;
  Backend backend = Backend::kSoftware;
  const void* input = nullptr;  // device
  void* output = nullptr;       // device
  std::size_t count = 0;
  EncodeOptions encode;
  DecodeOptions decode;
  const std::uint32_t* random_bits = nullptr;  // device; kStochastic only
  cudaStream_t stream = nullptr;
};

// Whether `backend` computes this conversion exactly as the model does with
// these options on this machine. cuda-hw implements only the option sets its
// instructions have (HardwareEncodeOptions); cuda-sw implements all.
bool Supports(Backend backend, ElementOp op, FormatId format, const EncodeOptions& encode,
              const DecodeOptions& decode);

// The options under which the model equals the hardware instruction for
// (op, format) with rounding `rounding`, with or without .satfinite; false
// when this build and device have no such instruction. The options are the
// `nvidia` profile's (formats/include/lowbit/formats/profiles/nvidia.h;
// `nvidia-nosat` without .satfinite), plus the saturation of the .satfinite
// BF16 / FP16 forms, which no CUDA header function has
// (cuda/src/hardware_rule.h).
bool HardwareEncodeOptions(ElementOp op, FormatId format, RoundingMode rounding,
                           bool satfinite, EncodeOptions* options);
// How the hardware decodes `format`: the profile's NvidiaDecodeOptions (for
// every format cuda-hw decodes, NaN -> the positive all-ones NaN,
// 0x7FFFFFFF / 0x7FFF). The overload without a format is that rule.
DecodeOptions HardwareDecodeOptions(FormatId format);
DecodeOptions HardwareDecodeOptions();

// Runs the conversion. Errors: null buffers with count > 0, host memory,
// unknown format, an operation that does not apply (decode of fp16 to bf16),
// options the backend does not implement, stochastic rounding without
// random_bits, a CUDA launch failure.
Status Convert(const ConvertRequest& request);

}  // namespace lowbit::cuda
