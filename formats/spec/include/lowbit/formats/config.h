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
