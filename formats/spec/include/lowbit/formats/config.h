// Portability macros for the header-only model: the same code compiles for
// the host (g++/clang) and for CUDA devices (nvcc), as docs/design.md
// "Three roles, kept apart" asks.
#pragma once

#if defined(__CUDACC__)
#define LOWBIT_HD __host__ __device__
#else
#define LOWBIT_HD
#endif

#define LOWBIT_HD_CONSTEXPR LOWBIT_HD constexpr

// Inlined into every caller: for the hot loops of the tensor-core model, so
// that a caller compiled for a wider target (matmul/tensor_core_matrix.h's
// target_clones) vectorizes them for that target.
#if defined(__CUDACC__)
#define LOWBIT_HD_INLINE_CONSTEXPR __host__ __device__ __forceinline__ constexpr
#elif defined(__GNUC__) || defined(__clang__)
#define LOWBIT_HD_INLINE_CONSTEXPR __attribute__((always_inline)) inline constexpr
#else
#define LOWBIT_HD_INLINE_CONSTEXPR inline constexpr
#endif
