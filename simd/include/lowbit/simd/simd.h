// lowbit::simd — Highway array kernels for every registry operation
// (registry.h ConvertArgs) and the block, group and packing recipes,
// dispatched at run time to the best compiled target the CPU supports, or run
// on one named target (tests and `lowbit verify` check each target against
// the scalar model).
#pragma once

#include <cstdint>
#include <vector>

#include "lowbit/formats/block/block_spec.h"
#include "lowbit/formats/block/int_quant_layout.h"
#include "lowbit/formats/block/int_quant_params.h"
#include "lowbit/formats/block/int_quant_recipe.h"
#include "lowbit/formats/block/mx_recipe.h"
#include "lowbit/formats/block/nvfp4_recipe.h"
#include "lowbit/registry/registry.h"

namespace lowbit::simd {

// Bad input (docs/bad-input.md "SIMD"): every call below refuses, before
// touching memory and with a message naming the problem, null buffers with a
// non-zero size, sizes whose byte counts overflow (formats/checked_size.h),
// outputs that overlap an input or another output (in-place calls), enum
// values past their last enumerator; zero elements (count, rows or cols 0)
// is ok and writes nothing. Buffers take any alignment.
//
// Targets. Every kernel below takes a Highway target bit (HWY_SSE4, HWY_AVX2,
// HWY_NEON, HWY_SVE2, ...: hwy/detect_targets.h) or kBestTarget. Dispatch is
// Highway's own (HWY_EXPORT tables; simd/src/target_dispatch.h): kBestTarget
// is HWY_DYNAMIC_DISPATCH, the best compiled target the CPU supports (or the
// one hwy::SetSupportedTargetsForTest forces); a named target runs that
// target's entry of the same table, without process-wide state, so runs on
// different targets may go on in several threads at once. A named target
// that is not compiled in, or that the CPU lacks, is an error.
inline constexpr std::int64_t kBestTarget = 0;

// Highway target bits compiled into this library (HWY_TARGETS), best first.
std::vector<std::int64_t> CompiledTargets();
// "SSE4", "AVX2", "AVX3", "AVX3_DL", "NEON", "SVE2", ... (Highway's names).
const char* TargetName(std::int64_t target);
// Whether `target` is compiled in and the CPU runs it (hwy::SupportedTargets,
// asked once).
bool TargetAvailable(std::int64_t target);
// A target's rank among the registry's rows (registry/choose.h): Highway
// gives newer targets lower bits, so a lower bit ranks higher, and every
// target ranks above the scalar model (0). The best available target is the
// one kBestTarget dispatches to.
int TargetPreference(std::int64_t target);
// The target whose code a kernel call with `target` runs (HWY_TARGET inside
// the kernel), or 0 for a target it cannot run: lets the tests check the
// dispatch itself.
std::int64_t TargetThatRuns(std::int64_t target);

// Which options the SIMD kernels implement exactly: everything the model has,
// except stochastic rounding with random_bit_count 32 (a carry out of 32 bits
// does not fit a 32-bit lane).
bool Supports(const registry::ConvertArgs& args);

// Runs on kBestTarget. Any count and alignment; the same argument errors as
// the scalar backend (registry ValidateConvertArgs).
registry::Status Convert(const registry::ConvertArgs& args);
// Runs on the named `target` (not kBestTarget).
registry::Status ConvertOnTarget(std::int64_t target, const registry::ConvertArgs& args);

// MX block quantization (formats/block/mx_recipe.h QuantizeMx, bit for bit):
// `count` FP32 values -> `count` element codes (one per byte, low bits) and
// ceil(count / block_size) E8M0 scale codes; a short last block behaves as
// zero-padded. Any count and alignment. Errors: null pointers with count > 0, an NVFP4 spec, stochastic
// element rounding, an option outside its enum, a (spec, recipe) pair the
// catalog does not list (as recipe::ParseTarget refuses it: mxint8:te), a
// target not compiled in or not supported.
registry::Status QuantizeMx(std::int64_t target, const block::BlockSpec& spec,
                            const block::MxRecipe& recipe, const float* x, std::size_t count,
                            std::uint8_t* codes, std::uint8_t* scales);

// NVFP4 quantization (formats/block/nvfp4_recipe.h QuantizeNvfp4, bit for
// bit): the tensor scale from the whole array's amax, then 16-element blocks:
// `count` E2M1 codes (one per byte), ceil(count / 16) UE4M3 scale bytes and
// the tensor scale.
registry::Status QuantizeNvfp4(std::int64_t target, block::Nvfp4Recipe recipe, const float* x,
                               std::size_t count, std::uint8_t* codes, std::uint8_t* scales,
                               block::Nvfp4TensorScale* tensor_scale);

// MX dequantization (mx_recipe.h DequantizeMx, bit for bit): element value
// times the block's 2^e as one FP32 multiply; a NaN scale gives NaN.
registry::Status DequantizeMx(std::int64_t target, const block::BlockSpec& spec,
                              const std::uint8_t* codes, const std::uint8_t* scales,
                              std::size_t count, float* out);

// NVFP4 dequantization (nvfp4_recipe.h DequantizeNvfp4, bit for bit).
registry::Status DequantizeNvfp4(std::int64_t target, block::Nvfp4Recipe recipe,
                                 const block::Nvfp4TensorScale& tensor_scale,
                                 const std::uint8_t* codes, const std::uint8_t* scales,
                                 std::size_t count, float* out);

// Two 4-bit codes per byte, element 0 in the low nibble (packing.h
// PackNibbles with NibbleOrder::kLowFirst: ONNX, PyTorch, CUDA __nv_fp4x2,
// TE, torchao); (count + 1) / 2 bytes, an odd last code alone in its byte.
registry::Status PackNibbles(std::int64_t target, const std::uint8_t* codes, std::size_t count,
                             std::uint8_t* packed);

// The other layouts of formats/block/packing.h, bit for bit, any size.
// Codes are masked to 4 bits as the model does. Nibble pairs in either order (kHighFirst: the tinygemm
// int4pack input), count codes <-> (count + 1) / 2 bytes.
registry::Status PackNibbles(std::int64_t target, block::NibbleOrder order, const std::uint8_t* codes,
                             std::size_t count, std::uint8_t* packed);
registry::Status UnpackNibbles(std::int64_t target, block::NibbleOrder order,
                               const std::uint8_t* packed, std::size_t count, std::uint8_t* codes);
// [GPTQ] qweight: row-major [k_rows][n_cols] codes <-> [k_rows / 8][n_cols]
// words packed along K (packing.h PackGptqQweight); k_rows % 8 == 0.
registry::Status PackGptqQweight(std::int64_t target, const std::uint8_t* q, std::size_t k_rows,
                                 std::size_t n_cols, std::uint32_t* words);
registry::Status UnpackGptqQweight(std::int64_t target, const std::uint32_t* words, std::size_t k_rows,
                                   std::size_t n_cols, std::uint8_t* q);
// [GPTQ] qzeros: [groups][n_cols] zero points <-> [groups][n_cols / 8] words
// packed along N, LSB first, storing zero - 1 (packing.h PackGptqQzeros);
// n_cols % 8 == 0. On a little-endian host these words are the low-first
// nibble stream of (zero - 1) & 0xF, so both run on PackNibbles' kernels.
registry::Status PackGptqQzeros(std::int64_t target, const std::uint8_t* zeros, std::size_t groups,
                                std::size_t n_cols, std::uint32_t* words);
registry::Status UnpackGptqQzeros(std::int64_t target, const std::uint32_t* words, std::size_t groups,
                                  std::size_t n_cols, std::uint8_t* zeros);
// [AWQ] WQLinear_GEMM: [rows][n_cols] codes <-> [rows][n_cols / 8] words
// with the order_map interleave (packing.h PackAwq; qweight and qzeros
// alike); n_cols % 8 == 0.
registry::Status PackAwq(std::int64_t target, const std::uint8_t* q, std::size_t rows, std::size_t n_cols,
                         std::uint32_t* words);
registry::Status UnpackAwq(std::int64_t target, const std::uint32_t* words, std::size_t rows,
                           std::size_t n_cols, std::uint8_t* q);

// Scaled quantization of a row-major [rows, cols] FP32 matrix with any
// recipe of int_quant_recipe.h (INT8, INT4 and UINT4 AO / GPTQ / common,
// half-even or half-away; TE FP8 E4M3 / E5M2, with or without power-of-two
// scales) over any layout of int_quant_layout.h (per tensor, per row =
// per channel / per token, per group along K, 2-D blocks): int_quant.h
// QuantizeMatrix bit for bit, rows * cols codes one per byte (low bits) and
// one QuantParams per group (GroupGrid::Count()). Errors: a shape the layout does not tile (the model's
// QuantStatus), null pointers, a rounding other than half-even / half-away.
bool SupportsScaledGroups(const block::IntQuantRecipe& recipe, const block::QuantLayout& layout);
registry::Status QuantizeGroups(std::int64_t target, const block::IntQuantRecipe& recipe,
                                const block::QuantLayout& layout, const float* x,
                                std::size_t rows, std::size_t cols, std::uint8_t* codes,
                                block::QuantParams* params);
// The inverse (int_quant.h DequantizeMatrix).
registry::Status DequantizeGroups(std::int64_t target, const block::IntQuantRecipe& recipe,
                                  const block::QuantLayout& layout, const std::uint8_t* codes,
                                  std::size_t rows, std::size_t cols,
                                  const block::QuantParams* params, float* out);

// INT4 / UINT4 recipes as above, followed by packing.h PackNibbles(kLowFirst)
// of all rows * cols codes: (rows * cols + 1) / 2 bytes (INT4-g128 weights).
bool SupportsInt4Groups(const block::IntQuantRecipe& recipe, const block::QuantLayout& layout);
registry::Status QuantizeInt4Groups(std::int64_t target, const block::IntQuantRecipe& recipe,
                                    const block::QuantLayout& layout, const float* x,
                                    std::size_t rows, std::size_t cols, std::uint8_t* packed,
                                    block::QuantParams* params);
// The inverse (int_quant.h DequantizeMatrix of the unpacked codes).
registry::Status DequantizeInt4Groups(std::int64_t target, const block::IntQuantRecipe& recipe,
                                      const block::QuantLayout& layout,
                                      const std::uint8_t* packed, std::size_t rows,
                                      std::size_t cols, const block::QuantParams* params,
                                      float* out);

}  // namespace lowbit::simd
