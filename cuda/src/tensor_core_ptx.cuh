// Inline PTX of the tensor-core probes: one wrapper per instruction that
// lowbit models (formats/spec/include/lowbit/formats/tensor_core.h), kept in
// this one file (docs/design.md "Build and layout"). Each wrapper issues
// exactly the PTX instruction named by the spec's `ptx` field; a
// static_assert ties the two strings. Registers hold codes as 32-bit words,
// packed as PTX ISA 9.0 §9.7.14.5 (mma) and §9.7.15.5 (wgmma) lay them out.
#pragma once

#include <cstdint>
#include <string_view>

#include "lowbit/formats/tensor_core.h"

namespace lowbit::cuda::tensor_core_ptx {

#if defined(__CUDA_ARCH__) && defined(__CUDA_ARCH_FEAT_SM90_ALL)
#define LOWBIT_HAVE_SM90A_TENSOR_CORES 1
#else
#define LOWBIT_HAVE_SM90A_TENSOR_CORES 0
#endif

constexpr bool PtxIs(TensorCoreId id, std::string_view ptx) { return Instruction(id).ptx == ptx; }

// mma.sync: a[4], b[2] packed codes; d[] the accumulator words (C in, D out).
template <TensorCoreId Id>
__device__ inline void MmaSync(const std::uint32_t* a, const std::uint32_t* b, std::uint32_t* d) {
  if constexpr (Id == TensorCoreId::kMmaBf16F32) {
    static_assert(PtxIs(TensorCoreId::kMmaBf16F32, "mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32"));
    float f[4] = {__uint_as_float(d[0]), __uint_as_float(d[1]), __uint_as_float(d[2]), __uint_as_float(d[3])};
    asm volatile("mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, {%0,%1,%2,%3};"
                 : "+f"(f[0]), "+f"(f[1]), "+f"(f[2]), "+f"(f[3])
                 : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]));
    for (int i = 0; i < 4; ++i) d[i] = __float_as_uint(f[i]);
  } else if constexpr (Id == TensorCoreId::kMmaF16F32) {
    static_assert(PtxIs(TensorCoreId::kMmaF16F32, "mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32"));
    float f[4] = {__uint_as_float(d[0]), __uint_as_float(d[1]), __uint_as_float(d[2]), __uint_as_float(d[3])};
    asm volatile("mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, {%0,%1,%2,%3};"
                 : "+f"(f[0]), "+f"(f[1]), "+f"(f[2]), "+f"(f[3])
                 : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]));
    for (int i = 0; i < 4; ++i) d[i] = __float_as_uint(f[i]);
  } else if constexpr (Id == TensorCoreId::kMmaF16F16) {
    static_assert(PtxIs(TensorCoreId::kMmaF16F16, "mma.sync.aligned.m16n8k16.row.col.f16.f16.f16.f16"));
    asm volatile("mma.sync.aligned.m16n8k16.row.col.f16.f16.f16.f16 {%0,%1}, {%2,%3,%4,%5}, {%6,%7}, {%0,%1};"
                 : "+r"(d[0]), "+r"(d[1])
                 : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]));
  } else if constexpr (Id == TensorCoreId::kMmaTf32F32) {
    static_assert(PtxIs(TensorCoreId::kMmaTf32F32, "mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32"));
    float f[4] = {__uint_as_float(d[0]), __uint_as_float(d[1]), __uint_as_float(d[2]), __uint_as_float(d[3])};
    asm volatile("mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, {%0,%1,%2,%3};"
                 : "+f"(f[0]), "+f"(f[1]), "+f"(f[2]), "+f"(f[3])
                 : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]));
    for (int i = 0; i < 4; ++i) d[i] = __float_as_uint(f[i]);
  } else if constexpr (Id == TensorCoreId::kMmaE4m3E4m3F32) {
    static_assert(PtxIs(TensorCoreId::kMmaE4m3E4m3F32, "mma.sync.aligned.m16n8k32.row.col.f32.e4m3.e4m3.f32"));
    float f[4] = {__uint_as_float(d[0]), __uint_as_float(d[1]), __uint_as_float(d[2]), __uint_as_float(d[3])};
    asm volatile("mma.sync.aligned.m16n8k32.row.col.f32.e4m3.e4m3.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, {%0,%1,%2,%3};"
                 : "+f"(f[0]), "+f"(f[1]), "+f"(f[2]), "+f"(f[3])
                 : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]));
    for (int i = 0; i < 4; ++i) d[i] = __float_as_uint(f[i]);
  } else if constexpr (Id == TensorCoreId::kMmaE4m3E5m2F32) {
    static_assert(PtxIs(TensorCoreId::kMmaE4m3E5m2F32, "mma.sync.aligned.m16n8k32.row.col.f32.e4m3.e5m2.f32"));
    float f[4] = {__uint_as_float(d[0]), __uint_as_float(d[1]), __uint_as_float(d[2]), __uint_as_float(d[3])};
    asm volatile("mma.sync.aligned.m16n8k32.row.col.f32.e4m3.e5m2.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, {%0,%1,%2,%3};"
                 : "+f"(f[0]), "+f"(f[1]), "+f"(f[2]), "+f"(f[3])
                 : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]));
    for (int i = 0; i < 4; ++i) d[i] = __float_as_uint(f[i]);
  } else if constexpr (Id == TensorCoreId::kMmaE5m2E4m3F32) {
    static_assert(PtxIs(TensorCoreId::kMmaE5m2E4m3F32, "mma.sync.aligned.m16n8k32.row.col.f32.e5m2.e4m3.f32"));
    float f[4] = {__uint_as_float(d[0]), __uint_as_float(d[1]), __uint_as_float(d[2]), __uint_as_float(d[3])};
    asm volatile("mma.sync.aligned.m16n8k32.row.col.f32.e5m2.e4m3.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, {%0,%1,%2,%3};"
                 : "+f"(f[0]), "+f"(f[1]), "+f"(f[2]), "+f"(f[3])
                 : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]));
    for (int i = 0; i < 4; ++i) d[i] = __float_as_uint(f[i]);
  } else if constexpr (Id == TensorCoreId::kMmaE5m2E5m2F32) {
    static_assert(PtxIs(TensorCoreId::kMmaE5m2E5m2F32, "mma.sync.aligned.m16n8k32.row.col.f32.e5m2.e5m2.f32"));
    float f[4] = {__uint_as_float(d[0]), __uint_as_float(d[1]), __uint_as_float(d[2]), __uint_as_float(d[3])};
    asm volatile("mma.sync.aligned.m16n8k32.row.col.f32.e5m2.e5m2.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, {%0,%1,%2,%3};"
                 : "+f"(f[0]), "+f"(f[1]), "+f"(f[2]), "+f"(f[3])
                 : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]));
    for (int i = 0; i < 4; ++i) d[i] = __float_as_uint(f[i]);
  } else if constexpr (Id == TensorCoreId::kMmaE4m3E4m3F16) {
    static_assert(PtxIs(TensorCoreId::kMmaE4m3E4m3F16, "mma.sync.aligned.m16n8k32.row.col.f16.e4m3.e4m3.f16"));
    asm volatile("mma.sync.aligned.m16n8k32.row.col.f16.e4m3.e4m3.f16 {%0,%1}, {%2,%3,%4,%5}, {%6,%7}, {%0,%1};"
                 : "+r"(d[0]), "+r"(d[1])
                 : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]));
  } else if constexpr (Id == TensorCoreId::kMmaE4m3E5m2F16) {
    static_assert(PtxIs(TensorCoreId::kMmaE4m3E5m2F16, "mma.sync.aligned.m16n8k32.row.col.f16.e4m3.e5m2.f16"));
    asm volatile("mma.sync.aligned.m16n8k32.row.col.f16.e4m3.e5m2.f16 {%0,%1}, {%2,%3,%4,%5}, {%6,%7}, {%0,%1};"
                 : "+r"(d[0]), "+r"(d[1])
                 : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]));
  } else if constexpr (Id == TensorCoreId::kMmaE5m2E4m3F16) {
    static_assert(PtxIs(TensorCoreId::kMmaE5m2E4m3F16, "mma.sync.aligned.m16n8k32.row.col.f16.e5m2.e4m3.f16"));
    asm volatile("mma.sync.aligned.m16n8k32.row.col.f16.e5m2.e4m3.f16 {%0,%1}, {%2,%3,%4,%5}, {%6,%7}, {%0,%1};"
                 : "+r"(d[0]), "+r"(d[1])
                 : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]));
  } else if constexpr (Id == TensorCoreId::kMmaE5m2E5m2F16) {
    static_assert(PtxIs(TensorCoreId::kMmaE5m2E5m2F16, "mma.sync.aligned.m16n8k32.row.col.f16.e5m2.e5m2.f16"));
    asm volatile("mma.sync.aligned.m16n8k32.row.col.f16.e5m2.e5m2.f16 {%0,%1}, {%2,%3,%4,%5}, {%6,%7}, {%0,%1};"
                 : "+r"(d[0]), "+r"(d[1])
                 : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]));
  } else if constexpr (Id == TensorCoreId::kMmaS8S32) {
    static_assert(PtxIs(TensorCoreId::kMmaS8S32, "mma.sync.aligned.m16n8k32.row.col.s32.s8.s8.s32"));
    asm volatile("mma.sync.aligned.m16n8k32.row.col.s32.s8.s8.s32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, {%0,%1,%2,%3};"
                 : "+r"(d[0]), "+r"(d[1]), "+r"(d[2]), "+r"(d[3])
                 : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]));
  } else {
    static_assert(Id != Id, "not an mma.sync instruction");
  }
}

// wgmma with A and B in shared memory (descriptors), D in registers, C
// accumulated (scale-d = 1); N columns. Fenced and waited here: the probe
// issues one instruction at a time.
template <TensorCoreId Id, int N>
__device__ inline void Wgmma(std::uint64_t desc_a, std::uint64_t desc_b, std::uint32_t* d) {
#if LOWBIT_HAVE_SM90A_TENSOR_CORES
  asm volatile("wgmma.fence.sync.aligned;" ::: "memory");
  if constexpr (Id == TensorCoreId::kWgmmaBf16F32 && N == 8) {
    static_assert(PtxIs(TensorCoreId::kWgmmaBf16F32, "wgmma.mma_async.sync.aligned.m64nNk16.f32.bf16.bf16"));
    float f[4];
    for (int i = 0; i < 4; ++i) f[i] = __uint_as_float(d[i]);
    asm volatile("{\n.reg .pred p;\nsetp.ne.b32 p, %6, 0;\nwgmma.mma_async.sync.aligned.m64n8k16.f32.bf16.bf16 {%0,%1,%2,%3}, %4, %5, p, 1, 1, 0, 0;\n}\n"
                 : "+f"(f[0]), "+f"(f[1]), "+f"(f[2]), "+f"(f[3])
                 : "l"(desc_a), "l"(desc_b), "r"(1)
                 : "memory");
    for (int i = 0; i < 4; ++i) d[i] = __float_as_uint(f[i]);
  } else if constexpr (Id == TensorCoreId::kWgmmaBf16F32 && N == 32) {
    static_assert(PtxIs(TensorCoreId::kWgmmaBf16F32, "wgmma.mma_async.sync.aligned.m64nNk16.f32.bf16.bf16"));
    float f[16];
    for (int i = 0; i < 16; ++i) f[i] = __uint_as_float(d[i]);
    asm volatile("{\n.reg .pred p;\nsetp.ne.b32 p, %18, 0;\nwgmma.mma_async.sync.aligned.m64n32k16.f32.bf16.bf16 {%0,%1,%2,%3,%4,%5,%6,%7,%8,%9,%10,%11,%12,%13,%14,%15}, %16, %17, p, 1, 1, 0, 0;\n}\n"
                 : "+f"(f[0]), "+f"(f[1]), "+f"(f[2]), "+f"(f[3]), "+f"(f[4]), "+f"(f[5]), "+f"(f[6]), "+f"(f[7]), "+f"(f[8]), "+f"(f[9]), "+f"(f[10]), "+f"(f[11]), "+f"(f[12]), "+f"(f[13]), "+f"(f[14]), "+f"(f[15])
                 : "l"(desc_a), "l"(desc_b), "r"(1)
                 : "memory");
    for (int i = 0; i < 16; ++i) d[i] = __float_as_uint(f[i]);
  } else if constexpr (Id == TensorCoreId::kWgmmaF16F32 && N == 8) {
    static_assert(PtxIs(TensorCoreId::kWgmmaF16F32, "wgmma.mma_async.sync.aligned.m64nNk16.f32.f16.f16"));
    float f[4];
    for (int i = 0; i < 4; ++i) f[i] = __uint_as_float(d[i]);
    asm volatile("{\n.reg .pred p;\nsetp.ne.b32 p, %6, 0;\nwgmma.mma_async.sync.aligned.m64n8k16.f32.f16.f16 {%0,%1,%2,%3}, %4, %5, p, 1, 1, 0, 0;\n}\n"
                 : "+f"(f[0]), "+f"(f[1]), "+f"(f[2]), "+f"(f[3])
                 : "l"(desc_a), "l"(desc_b), "r"(1)
                 : "memory");
    for (int i = 0; i < 4; ++i) d[i] = __float_as_uint(f[i]);
  } else if constexpr (Id == TensorCoreId::kWgmmaF16F32 && N == 32) {
    static_assert(PtxIs(TensorCoreId::kWgmmaF16F32, "wgmma.mma_async.sync.aligned.m64nNk16.f32.f16.f16"));
    float f[16];
    for (int i = 0; i < 16; ++i) f[i] = __uint_as_float(d[i]);
    asm volatile("{\n.reg .pred p;\nsetp.ne.b32 p, %18, 0;\nwgmma.mma_async.sync.aligned.m64n32k16.f32.f16.f16 {%0,%1,%2,%3,%4,%5,%6,%7,%8,%9,%10,%11,%12,%13,%14,%15}, %16, %17, p, 1, 1, 0, 0;\n}\n"
                 : "+f"(f[0]), "+f"(f[1]), "+f"(f[2]), "+f"(f[3]), "+f"(f[4]), "+f"(f[5]), "+f"(f[6]), "+f"(f[7]), "+f"(f[8]), "+f"(f[9]), "+f"(f[10]), "+f"(f[11]), "+f"(f[12]), "+f"(f[13]), "+f"(f[14]), "+f"(f[15])
                 : "l"(desc_a), "l"(desc_b), "r"(1)
                 : "memory");
    for (int i = 0; i < 16; ++i) d[i] = __float_as_uint(f[i]);
  } else if constexpr (Id == TensorCoreId::kWgmmaF16F16 && N == 8) {
    static_assert(PtxIs(TensorCoreId::kWgmmaF16F16, "wgmma.mma_async.sync.aligned.m64nNk16.f16.f16.f16"));
    asm volatile("{\n.reg .pred p;\nsetp.ne.b32 p, %4, 0;\nwgmma.mma_async.sync.aligned.m64n8k16.f16.f16.f16 {%0,%1}, %2, %3, p, 1, 1, 0, 0;\n}\n"
                 : "+r"(d[0]), "+r"(d[1])
                 : "l"(desc_a), "l"(desc_b), "r"(1)
                 : "memory");
  } else if constexpr (Id == TensorCoreId::kWgmmaF16F16 && N == 32) {
    static_assert(PtxIs(TensorCoreId::kWgmmaF16F16, "wgmma.mma_async.sync.aligned.m64nNk16.f16.f16.f16"));
    asm volatile("{\n.reg .pred p;\nsetp.ne.b32 p, %10, 0;\nwgmma.mma_async.sync.aligned.m64n32k16.f16.f16.f16 {%0,%1,%2,%3,%4,%5,%6,%7}, %8, %9, p, 1, 1, 0, 0;\n}\n"
                 : "+r"(d[0]), "+r"(d[1]), "+r"(d[2]), "+r"(d[3]), "+r"(d[4]), "+r"(d[5]), "+r"(d[6]), "+r"(d[7])
                 : "l"(desc_a), "l"(desc_b), "r"(1)
                 : "memory");
  } else if constexpr (Id == TensorCoreId::kWgmmaTf32F32 && N == 8) {
    static_assert(PtxIs(TensorCoreId::kWgmmaTf32F32, "wgmma.mma_async.sync.aligned.m64nNk8.f32.tf32.tf32"));
    float f[4];
    for (int i = 0; i < 4; ++i) f[i] = __uint_as_float(d[i]);
    asm volatile("{\n.reg .pred p;\nsetp.ne.b32 p, %6, 0;\nwgmma.mma_async.sync.aligned.m64n8k8.f32.tf32.tf32 {%0,%1,%2,%3}, %4, %5, p, 1, 1;\n}\n"
                 : "+f"(f[0]), "+f"(f[1]), "+f"(f[2]), "+f"(f[3])
                 : "l"(desc_a), "l"(desc_b), "r"(1)
                 : "memory");
    for (int i = 0; i < 4; ++i) d[i] = __float_as_uint(f[i]);
  } else if constexpr (Id == TensorCoreId::kWgmmaTf32F32 && N == 32) {
    static_assert(PtxIs(TensorCoreId::kWgmmaTf32F32, "wgmma.mma_async.sync.aligned.m64nNk8.f32.tf32.tf32"));
    float f[16];
    for (int i = 0; i < 16; ++i) f[i] = __uint_as_float(d[i]);
    asm volatile("{\n.reg .pred p;\nsetp.ne.b32 p, %18, 0;\nwgmma.mma_async.sync.aligned.m64n32k8.f32.tf32.tf32 {%0,%1,%2,%3,%4,%5,%6,%7,%8,%9,%10,%11,%12,%13,%14,%15}, %16, %17, p, 1, 1;\n}\n"
                 : "+f"(f[0]), "+f"(f[1]), "+f"(f[2]), "+f"(f[3]), "+f"(f[4]), "+f"(f[5]), "+f"(f[6]), "+f"(f[7]), "+f"(f[8]), "+f"(f[9]), "+f"(f[10]), "+f"(f[11]), "+f"(f[12]), "+f"(f[13]), "+f"(f[14]), "+f"(f[15])
                 : "l"(desc_a), "l"(desc_b), "r"(1)
                 : "memory");
    for (int i = 0; i < 16; ++i) d[i] = __float_as_uint(f[i]);
  } else if constexpr (Id == TensorCoreId::kWgmmaE4m3E4m3F32 && N == 8) {
    static_assert(PtxIs(TensorCoreId::kWgmmaE4m3E4m3F32, "wgmma.mma_async.sync.aligned.m64nNk32.f32.e4m3.e4m3"));
    float f[4];
    for (int i = 0; i < 4; ++i) f[i] = __uint_as_float(d[i]);
    asm volatile("{\n.reg .pred p;\nsetp.ne.b32 p, %6, 0;\nwgmma.mma_async.sync.aligned.m64n8k32.f32.e4m3.e4m3 {%0,%1,%2,%3}, %4, %5, p, 1, 1;\n}\n"
                 : "+f"(f[0]), "+f"(f[1]), "+f"(f[2]), "+f"(f[3])
                 : "l"(desc_a), "l"(desc_b), "r"(1)
                 : "memory");
    for (int i = 0; i < 4; ++i) d[i] = __float_as_uint(f[i]);
  } else if constexpr (Id == TensorCoreId::kWgmmaE4m3E4m3F32 && N == 32) {
    static_assert(PtxIs(TensorCoreId::kWgmmaE4m3E4m3F32, "wgmma.mma_async.sync.aligned.m64nNk32.f32.e4m3.e4m3"));
    float f[16];
    for (int i = 0; i < 16; ++i) f[i] = __uint_as_float(d[i]);
    asm volatile("{\n.reg .pred p;\nsetp.ne.b32 p, %18, 0;\nwgmma.mma_async.sync.aligned.m64n32k32.f32.e4m3.e4m3 {%0,%1,%2,%3,%4,%5,%6,%7,%8,%9,%10,%11,%12,%13,%14,%15}, %16, %17, p, 1, 1;\n}\n"
                 : "+f"(f[0]), "+f"(f[1]), "+f"(f[2]), "+f"(f[3]), "+f"(f[4]), "+f"(f[5]), "+f"(f[6]), "+f"(f[7]), "+f"(f[8]), "+f"(f[9]), "+f"(f[10]), "+f"(f[11]), "+f"(f[12]), "+f"(f[13]), "+f"(f[14]), "+f"(f[15])
                 : "l"(desc_a), "l"(desc_b), "r"(1)
                 : "memory");
    for (int i = 0; i < 16; ++i) d[i] = __float_as_uint(f[i]);
  } else if constexpr (Id == TensorCoreId::kWgmmaE4m3E5m2F32 && N == 8) {
    static_assert(PtxIs(TensorCoreId::kWgmmaE4m3E5m2F32, "wgmma.mma_async.sync.aligned.m64nNk32.f32.e4m3.e5m2"));
    float f[4];
    for (int i = 0; i < 4; ++i) f[i] = __uint_as_float(d[i]);
    asm volatile("{\n.reg .pred p;\nsetp.ne.b32 p, %6, 0;\nwgmma.mma_async.sync.aligned.m64n8k32.f32.e4m3.e5m2 {%0,%1,%2,%3}, %4, %5, p, 1, 1;\n}\n"
                 : "+f"(f[0]), "+f"(f[1]), "+f"(f[2]), "+f"(f[3])
                 : "l"(desc_a), "l"(desc_b), "r"(1)
                 : "memory");
    for (int i = 0; i < 4; ++i) d[i] = __float_as_uint(f[i]);
  } else if constexpr (Id == TensorCoreId::kWgmmaE4m3E5m2F32 && N == 32) {
    static_assert(PtxIs(TensorCoreId::kWgmmaE4m3E5m2F32, "wgmma.mma_async.sync.aligned.m64nNk32.f32.e4m3.e5m2"));
    float f[16];
    for (int i = 0; i < 16; ++i) f[i] = __uint_as_float(d[i]);
    asm volatile("{\n.reg .pred p;\nsetp.ne.b32 p, %18, 0;\nwgmma.mma_async.sync.aligned.m64n32k32.f32.e4m3.e5m2 {%0,%1,%2,%3,%4,%5,%6,%7,%8,%9,%10,%11,%12,%13,%14,%15}, %16, %17, p, 1, 1;\n}\n"
                 : "+f"(f[0]), "+f"(f[1]), "+f"(f[2]), "+f"(f[3]), "+f"(f[4]), "+f"(f[5]), "+f"(f[6]), "+f"(f[7]), "+f"(f[8]), "+f"(f[9]), "+f"(f[10]), "+f"(f[11]), "+f"(f[12]), "+f"(f[13]), "+f"(f[14]), "+f"(f[15])
                 : "l"(desc_a), "l"(desc_b), "r"(1)
                 : "memory");
    for (int i = 0; i < 16; ++i) d[i] = __float_as_uint(f[i]);
  } else if constexpr (Id == TensorCoreId::kWgmmaE5m2E4m3F32 && N == 8) {
    static_assert(PtxIs(TensorCoreId::kWgmmaE5m2E4m3F32, "wgmma.mma_async.sync.aligned.m64nNk32.f32.e5m2.e4m3"));
    float f[4];
    for (int i = 0; i < 4; ++i) f[i] = __uint_as_float(d[i]);
    asm volatile("{\n.reg .pred p;\nsetp.ne.b32 p, %6, 0;\nwgmma.mma_async.sync.aligned.m64n8k32.f32.e5m2.e4m3 {%0,%1,%2,%3}, %4, %5, p, 1, 1;\n}\n"
                 : "+f"(f[0]), "+f"(f[1]), "+f"(f[2]), "+f"(f[3])
                 : "l"(desc_a), "l"(desc_b), "r"(1)
                 : "memory");
    for (int i = 0; i < 4; ++i) d[i] = __float_as_uint(f[i]);
  } else if constexpr (Id == TensorCoreId::kWgmmaE5m2E4m3F32 && N == 32) {
    static_assert(PtxIs(TensorCoreId::kWgmmaE5m2E4m3F32, "wgmma.mma_async.sync.aligned.m64nNk32.f32.e5m2.e4m3"));
    float f[16];
    for (int i = 0; i < 16; ++i) f[i] = __uint_as_float(d[i]);
    asm volatile("{\n.reg .pred p;\nsetp.ne.b32 p, %18, 0;\nwgmma.mma_async.sync.aligned.m64n32k32.f32.e5m2.e4m3 {%0,%1,%2,%3,%4,%5,%6,%7,%8,%9,%10,%11,%12,%13,%14,%15}, %16, %17, p, 1, 1;\n}\n"
                 : "+f"(f[0]), "+f"(f[1]), "+f"(f[2]), "+f"(f[3]), "+f"(f[4]), "+f"(f[5]), "+f"(f[6]), "+f"(f[7]), "+f"(f[8]), "+f"(f[9]), "+f"(f[10]), "+f"(f[11]), "+f"(f[12]), "+f"(f[13]), "+f"(f[14]), "+f"(f[15])
                 : "l"(desc_a), "l"(desc_b), "r"(1)
                 : "memory");
    for (int i = 0; i < 16; ++i) d[i] = __float_as_uint(f[i]);
  } else if constexpr (Id == TensorCoreId::kWgmmaE5m2E5m2F32 && N == 8) {
    static_assert(PtxIs(TensorCoreId::kWgmmaE5m2E5m2F32, "wgmma.mma_async.sync.aligned.m64nNk32.f32.e5m2.e5m2"));
    float f[4];
    for (int i = 0; i < 4; ++i) f[i] = __uint_as_float(d[i]);
    asm volatile("{\n.reg .pred p;\nsetp.ne.b32 p, %6, 0;\nwgmma.mma_async.sync.aligned.m64n8k32.f32.e5m2.e5m2 {%0,%1,%2,%3}, %4, %5, p, 1, 1;\n}\n"
                 : "+f"(f[0]), "+f"(f[1]), "+f"(f[2]), "+f"(f[3])
                 : "l"(desc_a), "l"(desc_b), "r"(1)
                 : "memory");
    for (int i = 0; i < 4; ++i) d[i] = __float_as_uint(f[i]);
  } else if constexpr (Id == TensorCoreId::kWgmmaE5m2E5m2F32 && N == 32) {
    static_assert(PtxIs(TensorCoreId::kWgmmaE5m2E5m2F32, "wgmma.mma_async.sync.aligned.m64nNk32.f32.e5m2.e5m2"));
    float f[16];
    for (int i = 0; i < 16; ++i) f[i] = __uint_as_float(d[i]);
    asm volatile("{\n.reg .pred p;\nsetp.ne.b32 p, %18, 0;\nwgmma.mma_async.sync.aligned.m64n32k32.f32.e5m2.e5m2 {%0,%1,%2,%3,%4,%5,%6,%7,%8,%9,%10,%11,%12,%13,%14,%15}, %16, %17, p, 1, 1;\n}\n"
                 : "+f"(f[0]), "+f"(f[1]), "+f"(f[2]), "+f"(f[3]), "+f"(f[4]), "+f"(f[5]), "+f"(f[6]), "+f"(f[7]), "+f"(f[8]), "+f"(f[9]), "+f"(f[10]), "+f"(f[11]), "+f"(f[12]), "+f"(f[13]), "+f"(f[14]), "+f"(f[15])
                 : "l"(desc_a), "l"(desc_b), "r"(1)
                 : "memory");
    for (int i = 0; i < 16; ++i) d[i] = __float_as_uint(f[i]);
  } else if constexpr (Id == TensorCoreId::kWgmmaE4m3E4m3F16 && N == 8) {
    static_assert(PtxIs(TensorCoreId::kWgmmaE4m3E4m3F16, "wgmma.mma_async.sync.aligned.m64nNk32.f16.e4m3.e4m3"));
    asm volatile("{\n.reg .pred p;\nsetp.ne.b32 p, %4, 0;\nwgmma.mma_async.sync.aligned.m64n8k32.f16.e4m3.e4m3 {%0,%1}, %2, %3, p, 1, 1;\n}\n"
                 : "+r"(d[0]), "+r"(d[1])
                 : "l"(desc_a), "l"(desc_b), "r"(1)
                 : "memory");
  } else if constexpr (Id == TensorCoreId::kWgmmaE4m3E4m3F16 && N == 32) {
    static_assert(PtxIs(TensorCoreId::kWgmmaE4m3E4m3F16, "wgmma.mma_async.sync.aligned.m64nNk32.f16.e4m3.e4m3"));
    asm volatile("{\n.reg .pred p;\nsetp.ne.b32 p, %10, 0;\nwgmma.mma_async.sync.aligned.m64n32k32.f16.e4m3.e4m3 {%0,%1,%2,%3,%4,%5,%6,%7}, %8, %9, p, 1, 1;\n}\n"
                 : "+r"(d[0]), "+r"(d[1]), "+r"(d[2]), "+r"(d[3]), "+r"(d[4]), "+r"(d[5]), "+r"(d[6]), "+r"(d[7])
                 : "l"(desc_a), "l"(desc_b), "r"(1)
                 : "memory");
  } else if constexpr (Id == TensorCoreId::kWgmmaE4m3E5m2F16 && N == 8) {
    static_assert(PtxIs(TensorCoreId::kWgmmaE4m3E5m2F16, "wgmma.mma_async.sync.aligned.m64nNk32.f16.e4m3.e5m2"));
    asm volatile("{\n.reg .pred p;\nsetp.ne.b32 p, %4, 0;\nwgmma.mma_async.sync.aligned.m64n8k32.f16.e4m3.e5m2 {%0,%1}, %2, %3, p, 1, 1;\n}\n"
                 : "+r"(d[0]), "+r"(d[1])
                 : "l"(desc_a), "l"(desc_b), "r"(1)
                 : "memory");
  } else if constexpr (Id == TensorCoreId::kWgmmaE4m3E5m2F16 && N == 32) {
    static_assert(PtxIs(TensorCoreId::kWgmmaE4m3E5m2F16, "wgmma.mma_async.sync.aligned.m64nNk32.f16.e4m3.e5m2"));
    asm volatile("{\n.reg .pred p;\nsetp.ne.b32 p, %10, 0;\nwgmma.mma_async.sync.aligned.m64n32k32.f16.e4m3.e5m2 {%0,%1,%2,%3,%4,%5,%6,%7}, %8, %9, p, 1, 1;\n}\n"
                 : "+r"(d[0]), "+r"(d[1]), "+r"(d[2]), "+r"(d[3]), "+r"(d[4]), "+r"(d[5]), "+r"(d[6]), "+r"(d[7])
                 : "l"(desc_a), "l"(desc_b), "r"(1)
                 : "memory");
  } else if constexpr (Id == TensorCoreId::kWgmmaE5m2E4m3F16 && N == 8) {
    static_assert(PtxIs(TensorCoreId::kWgmmaE5m2E4m3F16, "wgmma.mma_async.sync.aligned.m64nNk32.f16.e5m2.e4m3"));
    asm volatile("{\n.reg .pred p;\nsetp.ne.b32 p, %4, 0;\nwgmma.mma_async.sync.aligned.m64n8k32.f16.e5m2.e4m3 {%0,%1}, %2, %3, p, 1, 1;\n}\n"
                 : "+r"(d[0]), "+r"(d[1])
                 : "l"(desc_a), "l"(desc_b), "r"(1)
                 : "memory");
  } else if constexpr (Id == TensorCoreId::kWgmmaE5m2E4m3F16 && N == 32) {
    static_assert(PtxIs(TensorCoreId::kWgmmaE5m2E4m3F16, "wgmma.mma_async.sync.aligned.m64nNk32.f16.e5m2.e4m3"));
    asm volatile("{\n.reg .pred p;\nsetp.ne.b32 p, %10, 0;\nwgmma.mma_async.sync.aligned.m64n32k32.f16.e5m2.e4m3 {%0,%1,%2,%3,%4,%5,%6,%7}, %8, %9, p, 1, 1;\n}\n"
                 : "+r"(d[0]), "+r"(d[1]), "+r"(d[2]), "+r"(d[3]), "+r"(d[4]), "+r"(d[5]), "+r"(d[6]), "+r"(d[7])
                 : "l"(desc_a), "l"(desc_b), "r"(1)
                 : "memory");
  } else if constexpr (Id == TensorCoreId::kWgmmaE5m2E5m2F16 && N == 8) {
    static_assert(PtxIs(TensorCoreId::kWgmmaE5m2E5m2F16, "wgmma.mma_async.sync.aligned.m64nNk32.f16.e5m2.e5m2"));
    asm volatile("{\n.reg .pred p;\nsetp.ne.b32 p, %4, 0;\nwgmma.mma_async.sync.aligned.m64n8k32.f16.e5m2.e5m2 {%0,%1}, %2, %3, p, 1, 1;\n}\n"
                 : "+r"(d[0]), "+r"(d[1])
                 : "l"(desc_a), "l"(desc_b), "r"(1)
                 : "memory");
  } else if constexpr (Id == TensorCoreId::kWgmmaE5m2E5m2F16 && N == 32) {
    static_assert(PtxIs(TensorCoreId::kWgmmaE5m2E5m2F16, "wgmma.mma_async.sync.aligned.m64nNk32.f16.e5m2.e5m2"));
    asm volatile("{\n.reg .pred p;\nsetp.ne.b32 p, %10, 0;\nwgmma.mma_async.sync.aligned.m64n32k32.f16.e5m2.e5m2 {%0,%1,%2,%3,%4,%5,%6,%7}, %8, %9, p, 1, 1;\n}\n"
                 : "+r"(d[0]), "+r"(d[1]), "+r"(d[2]), "+r"(d[3]), "+r"(d[4]), "+r"(d[5]), "+r"(d[6]), "+r"(d[7])
                 : "l"(desc_a), "l"(desc_b), "r"(1)
                 : "memory");
  } else {
    static_assert(Id != Id, "no wgmma probe for this instruction and N");
  }
  asm volatile("wgmma.commit_group.sync.aligned;" ::: "memory");
  asm volatile("wgmma.wait_group.sync.aligned 0;" ::: "memory");
#else
  (void)desc_a;
  (void)desc_b;
  (void)d;
  __trap();  // compiled without sm_90a: the probe refuses before launching
#endif
}

}  // namespace lowbit::cuda::tensor_core_ptx
