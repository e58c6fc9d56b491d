// Every inline PTX instruction of lowbit's CUDA kernels lives in this file
// (docs/design.md "Inline PTX lives in one file"). Each wrapper names the PTX ISA
// 9.0 section and the docs/formats-reference.md section that pins its bit-level behaviour; the
// cuda-hw backend is exactly these instructions, checked against the model on
// all 2^32 FP32 inputs by the verification kernel.
//
// Availability (PTX ISA 9.0 §9.7.9.21 "cvt", Target ISA notes; docs/formats-reference.md §2):
//   sm_89+/sm_90   cvt.rn.satfinite.{e4m3x2,e5m2x2}.{f32,f16x2},
//                  cvt.rn.f16x2.{e4m3x2,e5m2x2}, cvt.{rn,rz}[.satfinite].{bf16x2,f16x2}.f32,
//                  cvt.{rm,rp}.bf16.f32 (sm_90), cvt.f32.f16, cvt.rni.sat.s8.f32
//   sm_100a-class  cvt.rn.satfinite.{e2m1x2,e2m3x2,e3m2x2}.f32, cvt.{rz,rp}.satfinite.ue8m0x2.f32,
//                  cvt.rn.f16x2.{e2m1x2,e2m3x2,e3m2x2}, cvt.rn.bf16x2.ue8m0x2
// LOWBIT_PTX_HAS_BLACKWELL_CVT is defined only when the device pass targets an
// architecture-specific sm_100a/sm_103a/sm_110a/sm_120a build, the only ones
// whose ptxas accepts the second group.
#pragma once

#include <cstdint>

#if defined(__CUDA_ARCH__) && (__CUDA_ARCH__ >= 1000) && \
    (defined(__CUDA_ARCH_SPECIFIC__) || defined(__CUDA_ARCH_FAMILY_SPECIFIC__))
#define LOWBIT_PTX_HAS_BLACKWELL_CVT 1
#endif

namespace lowbit::cuda::ptx {

// ---- FP32 -> FP8 (docs/formats-reference.md §4.1, §4.2, HW-verified on sm_90) ----
// "cvt.rn.satfinite.e4m3x2.f32 d, a, b": a goes to the upper byte of d, b to
// the lower (PTX §9.7.9.21 Semantics), so element 0 (low byte) is `b`.
__device__ __forceinline__ std::uint16_t CvtE4m3x2F32(float lo, float hi) {
  std::uint16_t d;
  asm("cvt.rn.satfinite.e4m3x2.f32 %0, %1, %2;" : "=h"(d) : "f"(hi), "f"(lo));
  return d;
}
__device__ __forceinline__ std::uint16_t CvtE5m2x2F32(float lo, float hi) {
  std::uint16_t d;
  asm("cvt.rn.satfinite.e5m2x2.f32 %0, %1, %2;" : "=h"(d) : "f"(hi), "f"(lo));
  return d;
}
// FP16 pair -> FP8 pair: equals widening to FP32 first (docs/formats-reference.md §2.1).
__device__ __forceinline__ std::uint16_t CvtE4m3x2F16x2(std::uint32_t f16x2) {
  std::uint16_t d;
  asm("cvt.rn.satfinite.e4m3x2.f16x2 %0, %1;" : "=h"(d) : "r"(f16x2));
  return d;
}
__device__ __forceinline__ std::uint16_t CvtE5m2x2F16x2(std::uint32_t f16x2) {
  std::uint16_t d;
  asm("cvt.rn.satfinite.e5m2x2.f16x2 %0, %1;" : "=h"(d) : "r"(f16x2));
  return d;
}

// ---- FP8 -> FP16 pair (docs/formats-reference.md §4.1 decode: finite exact, NaN -> 0x7FFF) ----
__device__ __forceinline__ std::uint32_t CvtF16x2E4m3x2(std::uint16_t e4m3x2) {
  std::uint32_t d;
  asm("cvt.rn.f16x2.e4m3x2 %0, %1;" : "=r"(d) : "h"(e4m3x2));
  return d;
}
__device__ __forceinline__ std::uint32_t CvtF16x2E5m2x2(std::uint16_t e5m2x2) {
  std::uint32_t d;
  asm("cvt.rn.f16x2.e5m2x2 %0, %1;" : "=r"(d) : "h"(e5m2x2));
  return d;
}

// ---- FP32 -> BF16 / FP16 (docs/formats-reference.md §3.2, §3.3: NaN -> 0x7FFF) ----
// Pair forms put `a` (here `hi`) in the upper half, like the FP8 forms.
__device__ __forceinline__ std::uint32_t CvtRnBf16x2F32(float lo, float hi) {
  std::uint32_t d;
  asm("cvt.rn.bf16x2.f32 %0, %1, %2;" : "=r"(d) : "f"(hi), "f"(lo));
  return d;
}
__device__ __forceinline__ std::uint32_t CvtRzBf16x2F32(float lo, float hi) {
  std::uint32_t d;
  asm("cvt.rz.bf16x2.f32 %0, %1, %2;" : "=r"(d) : "f"(hi), "f"(lo));
  return d;
}
// .satfinite maps +-Inf and overflow to +-max (docs/formats-reference.md §10.2 column "rn.sat").
__device__ __forceinline__ std::uint32_t CvtRnSatBf16x2F32(float lo, float hi) {
  std::uint32_t d;
  asm("cvt.rn.satfinite.bf16x2.f32 %0, %1, %2;" : "=r"(d) : "f"(hi), "f"(lo));
  return d;
}
// Directed rounding into BF16 exists only in the scalar form (sm_90).
__device__ __forceinline__ std::uint16_t CvtRmBf16F32(float x) {
  std::uint16_t d;
  asm("cvt.rm.bf16.f32 %0, %1;" : "=h"(d) : "f"(x));
  return d;
}
__device__ __forceinline__ std::uint16_t CvtRpBf16F32(float x) {
  std::uint16_t d;
  asm("cvt.rp.bf16.f32 %0, %1;" : "=h"(d) : "f"(x));
  return d;
}
__device__ __forceinline__ std::uint32_t CvtRnF16x2F32(float lo, float hi) {
  std::uint32_t d;
  asm("cvt.rn.f16x2.f32 %0, %1, %2;" : "=r"(d) : "f"(hi), "f"(lo));
  return d;
}
__device__ __forceinline__ std::uint32_t CvtRzF16x2F32(float lo, float hi) {
  std::uint32_t d;
  asm("cvt.rz.f16x2.f32 %0, %1, %2;" : "=r"(d) : "f"(hi), "f"(lo));
  return d;
}
__device__ __forceinline__ std::uint32_t CvtRnSatF16x2F32(float lo, float hi) {
  std::uint32_t d;
  asm("cvt.rn.satfinite.f16x2.f32 %0, %1, %2;" : "=r"(d) : "f"(hi), "f"(lo));
  return d;
}

// ---- widening (docs/formats-reference.md §3.3: cvt.f32.f16 turns every NaN into 0x7FFFFFFF) ----
__device__ __forceinline__ float CvtF32F16(std::uint16_t h) {
  float d;
  asm("cvt.f32.f16 %0, %1;" : "=f"(d) : "h"(h));
  return d;
}

// ---- FP32 -> INT8 (docs/formats-reference.md §8.1: RNE, saturate to [-128, 127], NaN -> 0) ----
__device__ __forceinline__ std::int32_t CvtRniSatS8F32(float x) {
  std::int32_t d;
  asm("cvt.rni.sat.s8.f32 %0, %1;" : "=r"(d) : "f"(x));
  return d;
}

// ---- FP32 max that propagates NaN (PTX ISA 9.0, Floating Point
// Instructions, "max": with .NaN the result is the canonical NaN when either
// input is NaN, where plain max returns the other input; sm_80 and later).
// One instruction where a NaN test and a select would be three. ----
__device__ __forceinline__ float MaxNanF32(float a, float b) {
  float d;
  asm("max.NaN.f32 %0, %1, %2;" : "=f"(d) : "f"(a), "f"(b));
  return d;
}

// ---- streaming loads (PTX ISA 9.0 §9.7.9.8 "ld": .nc is the read-only
// non-coherent path; the .L1::no_allocate eviction hint keeps data that is
// read once out of L1, leaving it to the loads still in flight) ----
__device__ __forceinline__ uint4 LdNcNoAllocate(const uint4* p) {
  uint4 v;
  asm("ld.global.nc.L1::no_allocate.v4.u32 {%0, %1, %2, %3}, [%4];"
               : "=r"(v.x), "=r"(v.y), "=r"(v.z), "=r"(v.w) : "l"(p));
  return v;
}
__device__ __forceinline__ uint2 LdNcNoAllocate(const uint2* p) {
  uint2 v;
  asm("ld.global.nc.L1::no_allocate.v2.u32 {%0, %1}, [%2];" : "=r"(v.x), "=r"(v.y) : "l"(p));
  return v;
}
__device__ __forceinline__ unsigned LdNcNoAllocate(const unsigned* p) {
  unsigned v;
  asm("ld.global.nc.L1::no_allocate.u32 %0, [%1];" : "=r"(v) : "l"(p));
  return v;
}

// ---- shared memory by its 32-bit shared-space address (PTX ISA 9.0 §9.7.9.8 "ld") ----
// A kernel that keeps its shared-memory addresses as 32-bit offsets lets
// ptxas fold constant offsets into the load (LDS [R + imm]) instead of
// rebuilding a generic address per access. volatile: ordered with the
// kernel's barriers like the C++ accesses they replace.
__device__ __forceinline__ std::uint32_t SharedAddress(const void* p) {
  return static_cast<std::uint32_t>(__cvta_generic_to_shared(p));
}
template <int kOffset>
__device__ __forceinline__ uint2 LdSharedV2(std::uint32_t address) {
  uint2 v;
  asm volatile("ld.shared.v2.u32 {%0, %1}, [%2+%3];" : "=r"(v.x), "=r"(v.y) : "r"(address), "n"(kOffset));
  return v;
}
template <int kOffset>
__device__ __forceinline__ uint4 LdSharedV4(std::uint32_t address) {
  uint4 v;
  asm volatile("ld.shared.v4.u32 {%0, %1, %2, %3}, [%4+%5];"
               : "=r"(v.x), "=r"(v.y), "=r"(v.z), "=r"(v.w)
               : "r"(address), "n"(kOffset));
  return v;
}
__device__ __forceinline__ std::uint16_t LdSharedU16(std::uint32_t address) {
  std::uint16_t v;
  asm volatile("ld.shared.u16 %0, [%1];" : "=h"(v) : "r"(address));
  return v;
}

// ---- asynchronous copies global -> shared (sm_80+; PTX ISA 9.0, "Data
// Movement and Conversion Instructions: cp.async") ----
// Each thread's copies land in shared memory without passing through its
// registers; CpAsyncWaitAll makes the thread's own completed copies visible
// to it (other threads' copies need a barrier besides). .cg caches in L2
// only, as the streaming loads above skip L1, and takes 16-byte copies
// only; 8-byte copies use .ca. "memory": the copies stay ordered with the caller's other
// accesses.
__device__ __forceinline__ void CpAsyncGlobalToShared(std::uint32_t shared, const uint4* global) {
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16;" ::"r"(shared), "l"(global) : "memory");
}
__device__ __forceinline__ void CpAsyncGlobalToShared(std::uint32_t shared, const uint2* global) {
  asm volatile("cp.async.ca.shared.global [%0], [%1], 8;" ::"r"(shared), "l"(global) : "memory");
}
__device__ __forceinline__ void CpAsyncWaitAll() { asm volatile("cp.async.wait_all;" ::: "memory"); }

// ---- programmatic dependent launch (sm_90+; PTX ISA 9.0 "griddepcontrol";
// CUDA C++ Programming Guide, "Programmatic Dependent Launch and
// Synchronization") ----
// LaunchDependentGrids: the grid launched after this one on the stream with
// programmatic stream serialization may start once every block of this
// grid has run it (or exited); a hint, a no-op without such a grid.
// WaitForPrerequisiteGrids: blocks until the grids this one depends on have
// completed and their memory is visible; a no-op when the grid was launched
// without programmatic stream serialization. "memory": no load or store of
// the caller moves across the wait.
__device__ __forceinline__ void LaunchDependentGrids() { asm volatile("griddepcontrol.launch_dependents;" ::: "memory"); }
__device__ __forceinline__ void WaitForPrerequisiteGrids() { asm volatile("griddepcontrol.wait;" ::: "memory"); }

#if defined(LOWBIT_PTX_HAS_BLACKWELL_CVT)
// ---- sm_100a-class only (docs/formats-reference.md §2 table, §4.4, §4.5, §4.7) ----
// e2m1x2 is one byte: `a` (hi) in the upper nibble.
__device__ __forceinline__ std::uint8_t CvtE2m1x2F32(float lo, float hi) {
  std::uint16_t d;
  asm("{\n .reg .b8 t;\n cvt.rn.satfinite.e2m1x2.f32 t, %1, %2;\n cvt.u16.u8 %0, t;\n}"
      : "=h"(d) : "f"(hi), "f"(lo));
  return static_cast<std::uint8_t>(d);
}
__device__ __forceinline__ std::uint16_t CvtE2m3x2F32(float lo, float hi) {
  std::uint16_t d;
  asm("cvt.rn.satfinite.e2m3x2.f32 %0, %1, %2;" : "=h"(d) : "f"(hi), "f"(lo));
  return d;
}
__device__ __forceinline__ std::uint16_t CvtE3m2x2F32(float lo, float hi) {
  std::uint16_t d;
  asm("cvt.rn.satfinite.e3m2x2.f32 %0, %1, %2;" : "=h"(d) : "f"(hi), "f"(lo));
  return d;
}
__device__ __forceinline__ std::uint16_t CvtRzUe8m0x2F32(float lo, float hi) {
  std::uint16_t d;
  asm("cvt.rz.satfinite.ue8m0x2.f32 %0, %1, %2;" : "=h"(d) : "f"(hi), "f"(lo));
  return d;
}
__device__ __forceinline__ std::uint16_t CvtRpUe8m0x2F32(float lo, float hi) {
  std::uint16_t d;
  asm("cvt.rp.satfinite.ue8m0x2.f32 %0, %1, %2;" : "=h"(d) : "f"(hi), "f"(lo));
  return d;
}
__device__ __forceinline__ std::uint32_t CvtF16x2E2m1x2(std::uint8_t e2m1x2) {
  std::uint32_t d;
  asm("{\n .reg .b8 t;\n cvt.u8.u16 t, %1;\n cvt.rn.f16x2.e2m1x2 %0, t;\n}"
      : "=r"(d) : "h"(static_cast<std::uint16_t>(e2m1x2)));
  return d;
}
__device__ __forceinline__ std::uint32_t CvtF16x2E2m3x2(std::uint16_t e2m3x2) {
  std::uint32_t d;
  asm("cvt.rn.f16x2.e2m3x2 %0, %1;" : "=r"(d) : "h"(e2m3x2));
  return d;
}
__device__ __forceinline__ std::uint32_t CvtF16x2E3m2x2(std::uint16_t e3m2x2) {
  std::uint32_t d;
  asm("cvt.rn.f16x2.e3m2x2 %0, %1;" : "=r"(d) : "h"(e3m2x2));
  return d;
}
__device__ __forceinline__ std::uint32_t CvtBf16x2Ue8m0x2(std::uint16_t ue8m0x2) {
  std::uint32_t d;
  asm("cvt.rn.bf16x2.ue8m0x2 %0, %1;" : "=r"(d) : "h"(ue8m0x2));
  return d;
}
#endif  // LOWBIT_PTX_HAS_BLACKWELL_CVT

}  // namespace lowbit::cuda::ptx
