// Probes: each issues one tensor-core instruction per operand set, exactly as
// written in tensor_core_ptx.cuh, with the operands placed where PTX ISA 9.0
// puts them (mma.sync fragments §9.7.14.5.8-.11; wgmma K-major shared-memory
// layout without swizzling and the accumulator fragments §9.7.15.5.1).
// Nothing here computes: the hardware's D is what the sweep compares with
// the model.
#include <cuda_runtime.h>

#include <cstdint>

#include "lowbit/cuda/tensor_core.h"
#include "lowbit/formats/tensor_core.h"
#include "ptx.cuh"
#include "tensor_core_ptx.cuh"

namespace lowbit::cuda {
namespace {

// Bits of one multiplicand element as the instruction reads it from a
// register or shared memory (TF32 occupies a 32-bit word).
constexpr int ElementBits(const TensorCoreOperand& op) { return op.code_format.total_bits == 32 ? 32 : op.code_format.total_bits; }

// mma.sync: (row, column) of A's fragment element i in the thread with
// group g = lane / 4 and index t = lane % 4, for k = 8 (TF32), 16 (16-bit)
// and 32 (8-bit); B's (k, n) likewise; the accumulator's (row, column).
__device__ inline void MmaAElement(int k, int i, int g, int t, int* row, int* col) {
  if (k == 8) {
    *row = g + 8 * (i & 1);
    *col = t + 4 * (i >> 1);
  } else if (k == 16) {
    *row = g + 8 * ((i >> 1) & 1);
    *col = t * 2 + (i & 1) + 8 * (i >> 2);
  } else {
    *row = g + 8 * ((i >> 2) & 1);
    *col = t * 4 + (i & 3) + 16 * (i >> 3);
  }
}
__device__ inline void MmaBElement(int k, int i, int g, int t, int* kk, int* col) {
  *col = g;
  if (k == 8) {
    *kk = t + 4 * i;
  } else if (k == 16) {
    *kk = t * 2 + (i & 1) + 8 * (i >> 1);
  } else {
    *kk = t * 4 + (i & 3) + 16 * (i >> 2);
  }
}
__device__ inline void AccumulatorElement(int i, int g, int t, int* row, int* col) {
  *row = g + 8 * ((i >> 1) & 1);
  *col = 8 * (i >> 2) + t * 2 + (i & 1);
}

constexpr int kSetsPerMmaBlock = 4;  // one warp per set

template <TensorCoreId Id>
__global__ void MmaSyncProbeKernel(const std::uint32_t* a, const std::uint32_t* b, const std::uint32_t* c,
                                   std::uint32_t* d, std::int64_t count) {
  constexpr TensorCoreInstruction kInst = Instruction(Id);
  constexpr int kM = kInst.m, kN = kInst.n, kK = kInst.k;
  constexpr int kBitsA = ElementBits(kInst.a), kBitsB = ElementBits(kInst.b);
  constexpr int kAccBits = kInst.arithmetic.accumulator.total_bits;
  const std::int64_t set = static_cast<std::int64_t>(blockIdx.x) * kSetsPerMmaBlock + threadIdx.x / 32;
  if (set >= count) return;  // whole warps leave together
  const int lane = threadIdx.x % 32, g = lane / 4, t = lane % 4;
  const std::uint32_t* as = a + set * kM * kK;
  const std::uint32_t* bs = b + set * kN * kK;
  const std::uint32_t* cs = c + set * kM * kN;
  std::uint32_t* ds = d + set * kM * kN;
  std::uint32_t ra[4] = {}, rb[2] = {}, rd[4] = {};
  constexpr int kPerWordA = 32 / kBitsA, kPerWordB = 32 / kBitsB;
  constexpr std::uint32_t kMaskA = kBitsA == 32 ? 0xFFFFFFFFu : (1u << kBitsA) - 1;
  constexpr std::uint32_t kMaskB = kBitsB == 32 ? 0xFFFFFFFFu : (1u << kBitsB) - 1;
  for (int i = 0; i < 4 * kPerWordA; ++i) {
    int row = 0, col = 0;
    MmaAElement(kK, i, g, t, &row, &col);
    ra[i / kPerWordA] |= (as[row * kK + col] & kMaskA) << (kBitsA * (i % kPerWordA));
  }
  for (int i = 0; i < 2 * kPerWordB; ++i) {
    int kk = 0, col = 0;
    MmaBElement(kK, i, g, t, &kk, &col);
    rb[i / kPerWordB] |= (bs[col * kK + kk] & kMaskB) << (kBitsB * (i % kPerWordB));
  }
  for (int i = 0; i < 4; ++i) {
    int row = 0, col = 0;
    AccumulatorElement(i, g, t, &row, &col);
    if (kAccBits == 16) {
      rd[i / 2] |= (cs[row * kN + col] & 0xFFFFu) << (16 * (i % 2));
    } else {
      rd[i] = cs[row * kN + col];
    }
  }
  tensor_core_ptx::MmaSync<Id>(ra, rb, rd);
  for (int i = 0; i < 4; ++i) {
    int row = 0, col = 0;
    AccumulatorElement(i, g, t, &row, &col);
    ds[row * kN + col] = kAccBits == 16 ? (rd[i / 2] >> (16 * (i % 2))) & 0xFFFFu : rd[i];
  }
}

// wgmma: K-major operands without swizzling. A core matrix is 8 rows of 16
// bytes (128 contiguous bytes); the two core matrices of a row group along K
// are kLeadingBytes apart and row groups kStrideBytes apart, so element
// (r, kk) of a tile of 32-byte rows is at
//   (r / 8) * 256 + (kk / T) * 128 + (r % 8) * 16 + (kk % T) * element bytes,
// T = 16 / element bytes (PTX ISA 9.0 §9.7.15.5.1.2, canonical K-major
// layout ((8, m), (T, 2k)) : ((1T, SBO), (1, LBO))).
constexpr int kLeadingBytes = 128;
constexpr int kStrideBytes = 256;

__device__ inline std::uint64_t MatrixDescriptor(const void* tile) {
  const std::uint64_t address = ptx::SharedAddress(tile);
  return ((address & 0x3FFFF) >> 4) | (static_cast<std::uint64_t>(kLeadingBytes >> 4) << 16) |
         (static_cast<std::uint64_t>(kStrideBytes >> 4) << 32);  // base offset 0, no swizzle
}

template <int kBytes>
__device__ inline void StoreElement(std::uint8_t* tile, int r, int kk, std::uint32_t code) {
  constexpr int kPerCore = 16 / kBytes;
  std::uint8_t* p = tile + (r / 8) * kStrideBytes + (kk / kPerCore) * kLeadingBytes + (r % 8) * 16 +
                    (kk % kPerCore) * kBytes;
  if constexpr (kBytes == 1) {
    *p = static_cast<std::uint8_t>(code);
  } else if constexpr (kBytes == 2) {
    *reinterpret_cast<std::uint16_t*>(p) = static_cast<std::uint16_t>(code);
  } else {
    *reinterpret_cast<std::uint32_t*>(p) = code;
  }
}

template <TensorCoreId Id, int N>
__global__ void __launch_bounds__(128) WgmmaProbeKernel(const std::uint32_t* a, const std::uint32_t* b,
                                                        const std::uint32_t* c, std::uint32_t* d) {
  constexpr TensorCoreInstruction kInst = Instruction(Id);
  constexpr int kM = kInst.m, kK = kInst.k;
  constexpr int kBytesA = ElementBits(kInst.a) / 8, kBytesB = ElementBits(kInst.b) / 8;
  constexpr bool kHalfAccumulator = kInst.arithmetic.accumulator.total_bits == 16;
  constexpr int kRegisters = kHalfAccumulator ? N / 4 : N / 2;
  static_assert(kM * kK * kBytesA == 64 * 32 && kK * kBytesB == 32, "32-byte rows");
  __shared__ __align__(128) std::uint8_t tile_a[kM * 32];
  __shared__ __align__(128) std::uint8_t tile_b[N * 32];
  const std::int64_t set = blockIdx.x;
  const std::uint32_t* as = a + set * kM * kK;
  const std::uint32_t* bs = b + set * N * kK;
  const std::uint32_t* cs = c + set * kM * N;
  std::uint32_t* ds = d + set * kM * N;
  for (int i = threadIdx.x; i < kM * kK; i += 128) StoreElement<kBytesA>(tile_a, i / kK, i % kK, as[i]);
  for (int i = threadIdx.x; i < N * kK; i += 128) StoreElement<kBytesB>(tile_b, i / kK, i % kK, bs[i]);
  // Ordinary stores read next by the tensor cores (the async proxy).
  asm volatile("fence.proxy.async.shared::cta;" ::: "memory");
  __syncthreads();
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32, g = lane / 4, t = lane % 4;
  std::uint32_t rd[kRegisters] = {};
  for (int i = 0; i < N / 2; ++i) {
    int row = 0, col = 0;
    AccumulatorElement(i, g, t, &row, &col);
    row += 16 * warp;
    if (kHalfAccumulator) {
      rd[i / 2] |= (cs[row * N + col] & 0xFFFFu) << (16 * (i % 2));
    } else {
      rd[i] = cs[row * N + col];
    }
  }
  tensor_core_ptx::Wgmma<Id, N>(MatrixDescriptor(tile_a), MatrixDescriptor(tile_b), rd);
  for (int i = 0; i < N / 2; ++i) {
    int row = 0, col = 0;
    AccumulatorElement(i, g, t, &row, &col);
    row += 16 * warp;
    ds[row * N + col] = kHalfAccumulator ? (rd[i / 2] >> (16 * (i % 2))) & 0xFFFFu : rd[i];
  }
}

template <TensorCoreId Id>
cudaError_t Launch(int n, const std::uint32_t* a, const std::uint32_t* b, const std::uint32_t* c,
                   std::uint32_t* d, std::int64_t count, cudaStream_t stream) {
  constexpr TensorCoreInstruction kInst = Instruction(Id);
  if (count <= 0) return cudaSuccess;
  if constexpr (kInst.kind == TensorCoreInstructionKind::kMmaSync) {
    if (n != kInst.n) return cudaErrorInvalidValue;
    const std::int64_t blocks = (count + kSetsPerMmaBlock - 1) / kSetsPerMmaBlock;
    if (blocks > 0x7FFFFFFF) return cudaErrorInvalidValue;
    MmaSyncProbeKernel<Id><<<static_cast<unsigned>(blocks), 32 * kSetsPerMmaBlock, 0, stream>>>(a, b, c, d, count);
  } else {
    if (count > 0x7FFFFFFF) return cudaErrorInvalidValue;
    if (n == 8) {
      WgmmaProbeKernel<Id, 8><<<static_cast<unsigned>(count), 128, 0, stream>>>(a, b, c, d);
    } else if (n == 32) {
      WgmmaProbeKernel<Id, 32><<<static_cast<unsigned>(count), 128, 0, stream>>>(a, b, c, d);
    } else {
      return cudaErrorInvalidValue;
    }
  }
  return cudaGetLastError();
}

}  // namespace

bool TensorCoreProbeAvailable(TensorCoreId id, int n) {
  const TensorCoreInstruction& inst = Instruction(id);
  if (inst.kind == TensorCoreInstructionKind::kMmaSync) return n == inst.n;
  return n == 8 || n == 32;
}

cudaError_t RunTensorCoreInstruction(TensorCoreId id, int n, const std::uint32_t* a, const std::uint32_t* b,
                                     const std::uint32_t* c, std::uint32_t* d, std::int64_t count,
                                     cudaStream_t stream) {
  int device = 0;
  cudaDeviceProp prop{};
  if (cudaGetDevice(&device) != cudaSuccess || cudaGetDeviceProperties(&prop, device) != cudaSuccess) {
    return cudaErrorNoDevice;
  }
  // wgmma is sm_90a only; the mma.sync forms here need sm_89 or later.
  if (prop.major != 9 || prop.minor != 0) return cudaErrorInvalidDeviceFunction;
  switch (id) {
#define LOWBIT_TC_LAUNCH(Id, name, ptx, kind, rows, cols, depth, a_op, b_op, arith, lowering) \
  case TensorCoreId::k##Id:                                                         \
    return Launch<TensorCoreId::k##Id>(n, a, b, c, d, count, stream);
    LOWBIT_TENSOR_CORE_INSTRUCTIONS(LOWBIT_TC_LAUNCH)
#undef LOWBIT_TC_LAUNCH
  }
  return cudaErrorInvalidValue;
}

}  // namespace lowbit::cuda
