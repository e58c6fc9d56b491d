// tc_gemm.h: the dequantizing pass, then one CUTLASS 3 GEMM (CUTLASS
// 4.2's Hopper collective builders, include/cutlass/gemm/collective/
// builders/sm90_gmma_builder.inl) with x as A (row-major, K contiguous), the
// BF16 operand as B (N x K, K contiguous) and y as D (row-major), batched
// over L. What makes its bits the schedule's:
//  - KernelTmaWarpSpecializedCooperative with the default persistent tile
//    scheduler: every output tile is one CTA's, over all of K; no split-K,
//    no stream-K;
//  - its mainloop runs the k-blocks of every K tile in increasing K into
//    one FP32 accumulator per output, from zero
//    (collective/sm90_mma_tma_gmma_ss_warpspecialized.hpp);
//  - K tiles past K8 are filled with zeros by the TMA, and so are the
//    operand's K8 - K columns: whole chunks of zero products, which leave
//    an FP32 accumulator unchanged (docs/tensor-cores.md, step 4: a zero
//    term never raises e_max);
//  - the epilogue (a visitor tree: accumulator times the row's scale
//    broadcast along M, Sm90RowBroadcast) multiplies in FP32 and converts
//    once to the output, round to nearest even.
// tc_gemm_test.cc checks every output against the model bit for bit.
#include <cuda_runtime.h>

#include <cute/tensor.hpp>
#include <cutlass/cutlass.h>
#include <cutlass/epilogue/collective/collective_builder.hpp>
#include <cutlass/epilogue/fusion/sm90_callbacks_tma_warpspecialized.hpp>
#include <cutlass/gemm/collective/collective_builder.hpp>
#include <cutlass/gemm/device/gemm_universal_adapter.h>
#include <cutlass/gemm/kernel/gemm_universal.hpp>
#include <cutlass/numeric_types.h>

#include <cstdint>
#include <string>

#include "lowbit/formats/matmul/weight_operand.h"
#include "operand_dequantize.h"
#include "tc_gemm.h"
#include "tc_gemm_plan.h"

namespace lowbit::cuda::tc_gemm {
namespace {

using namespace cute;

// 128 x 256 output tiles, K tiles of 64, clusters of two along M (the TMA
// multicasts each B tile to both): CUTLASS's usual large-BF16 Hopper shape.
using TileShape = Shape<_128, _256, _64>;
using ClusterShape = Shape<_2, _1, _1>;
using Bf16 = cutlass::bfloat16_t;

template <class Output>
struct CutlassGemm {
  // y[m][n] = acc * scale[n], converted once (round to nearest even); the
  // scale vector per batch is [L][N] (stride N along L).
  using RowScale = cutlass::epilogue::fusion::Sm90RowBroadcast<0, TileShape, float, float, Stride<_0, _1, int64_t>>;
  using Epilogue = cutlass::epilogue::fusion::Sm90EVT<
      cutlass::epilogue::fusion::Sm90Compute<cutlass::multiplies, Output, float, cutlass::FloatRoundStyle::round_to_nearest>,
      cutlass::epilogue::fusion::Sm90AccFetch, RowScale>;
  using CollectiveEpilogue = typename cutlass::epilogue::collective::CollectiveBuilder<
      cutlass::arch::Sm90, cutlass::arch::OpClassTensorOp, TileShape, ClusterShape,
      cutlass::epilogue::collective::EpilogueTileAuto, float, float, void, cutlass::layout::RowMajor,
      16 / sizeof(Output), Output, cutlass::layout::RowMajor, 16 / sizeof(Output),
      cutlass::epilogue::TmaWarpSpecializedCooperative, Epilogue>::CollectiveOp;
  using CollectiveMainloop = typename cutlass::gemm::collective::CollectiveBuilder<
      cutlass::arch::Sm90, cutlass::arch::OpClassTensorOp, Bf16, cutlass::layout::RowMajor, 8, Bf16,
      cutlass::layout::ColumnMajor, 8, float, TileShape, ClusterShape,
      cutlass::gemm::collective::StageCountAutoCarveout<static_cast<int>(sizeof(typename CollectiveEpilogue::SharedStorage))>,
      cutlass::gemm::KernelTmaWarpSpecializedCooperative>::CollectiveOp;
  using Kernel = cutlass::gemm::kernel::GemmUniversal<Shape<int, int, int, int>, CollectiveMainloop, CollectiveEpilogue>;
  using Gemm = cutlass::gemm::device::GemmUniversalAdapter<Kernel>;
};

// The GEMM's operands after staging: element strides (rows, batches).
struct Operands {
  const std::uint16_t* x;
  std::int64_t x_row, x_batch;
  const std::uint16_t* w;  // [L][w_rows][k]
  const float* scales;     // [L][w_rows], or null: every scale 1
  std::int64_t w_rows;
  void* y;
  std::int64_t y_row, y_batch;
  int m, n, k, l;
};

template <class Output>
const char* RunCutlass(const Operands& o, cudaStream_t stream) {
  using Gemm = typename CutlassGemm<Output>::Gemm;
  using StrideA = typename Gemm::GemmKernel::StrideA;
  using StrideB = typename Gemm::GemmKernel::StrideB;
  using StrideD = typename Gemm::GemmKernel::StrideD;
  const StrideA stride_x{o.x_row, _1{}, o.x_batch};
  const StrideB stride_w{static_cast<int64_t>(o.k), _1{}, o.w_rows * o.k};
  const StrideD stride_y{o.y_row, _1{}, o.y_batch};
  typename Gemm::Arguments args{cutlass::gemm::GemmUniversalMode::kGemm,
                                {o.m, o.n, o.k, o.l},
                                {reinterpret_cast<const Bf16*>(o.x), stride_x, reinterpret_cast<const Bf16*>(o.w), stride_w},
                                {{}, nullptr, stride_y, static_cast<Output*>(o.y), stride_y}};
  // Children first (accumulator, row scale), then the multiply's own.
  args.epilogue.thread = {{}, {o.scales, 1.0f, {_0{}, _1{}, o.w_rows}}, {}};
  Gemm gemm;
  if (gemm.can_implement(args) != cutlass::Status::kSuccess) return "the CUTLASS GEMM cannot run this shape";
  if (Gemm::get_workspace_size(args) != 0) return "the CUTLASS GEMM asked for a workspace";
  if (gemm.initialize(args, nullptr, stream) != cutlass::Status::kSuccess) return "the CUTLASS GEMM did not initialize";
  if (gemm.run(stream) != cutlass::Status::kSuccess) return "the CUTLASS GEMM did not launch";
  return nullptr;
}

// Copies [L][rows][cols] of 16-bit or 32-bit elements between strided
// layouts, with zeros where the source runs out (columns past `src_cols`).
template <class T>
__global__ void CopyRows(const T* src, std::int64_t src_row, std::int64_t src_batch, std::int64_t src_cols, T* dst,
                         std::int64_t dst_row, std::int64_t dst_batch, std::int64_t dst_cols, std::int64_t rows,
                         std::int64_t batch) {
  const std::int64_t total = batch * rows * dst_cols;
  for (std::int64_t i = blockIdx.x * static_cast<std::int64_t>(blockDim.x) + threadIdx.x; i < total;
       i += static_cast<std::int64_t>(gridDim.x) * blockDim.x) {
    const std::int64_t c = i % dst_cols, r = (i / dst_cols) % rows, l = i / (dst_cols * rows);
    dst[l * dst_batch + r * dst_row + c] = c < src_cols ? src[l * src_batch + r * src_row + c] : T{0};
  }
}

template <class T>
cudaError_t LaunchCopy(const T* src, std::int64_t src_row, std::int64_t src_batch, std::int64_t src_cols, T* dst,
                       std::int64_t dst_row, std::int64_t dst_batch, std::int64_t dst_cols, std::int64_t rows,
                       std::int64_t batch, cudaStream_t stream) {
  const std::int64_t total = batch * rows * dst_cols;
  const std::int64_t blocks = (total + 255) / 256;
  CopyRows<T><<<static_cast<unsigned>(blocks < 65536 ? blocks : 65536), 256, 0, stream>>>(
      src, src_row, src_batch, src_cols, dst, dst_row, dst_batch, dst_cols, rows, batch);
  return cudaGetLastError();
}

}  // namespace

Status RunTcGemm(const matmul::MatmulProblem& p, void* workspace, std::size_t workspace_bytes, cudaStream_t stream) {
  if (Status st = ValidateTcGemm(p, workspace, workspace_bytes); !st.ok) return st;
  const TcGemmPlan plan = PlanOf(p);
  auto* base = static_cast<unsigned char*>(workspace);
  auto* operand = reinterpret_cast<std::uint16_t*>(base + plan.operand);
  auto* scales = reinterpret_cast<float*>(base + plan.outer_scales);
  if (DequantizeIntoOperand(p.w, plan.operand_rows, operand, scales, stream) != cudaSuccess) {
    return Status::Error("tensor-core gemm: the dequantizing kernel did not launch");
  }
  const std::int64_t batch = p.w.batch;
  Operands o{};
  o.m = static_cast<int>(p.m);
  // A staged y takes N rounded up to its 16-byte stores (operand rows past N
  // are +0); the copy back drops those columns.
  o.n = static_cast<int>(plan.stage_y ? plan.n_padded : p.w.n);
  o.w_rows = plan.operand_rows;
  o.k = static_cast<int>(plan.k_padded);
  o.l = static_cast<int>(batch);
  o.w = operand;
  o.scales = matmul::HasOuterScale(p.w.format) ? scales : nullptr;
  const auto* x = static_cast<const std::uint16_t*>(p.x.data);
  const std::int64_t x_batch = batch > 1 ? p.x.batch_stride : p.m * p.x.row_stride;
  if (plan.stage_x) {
    auto* staged = reinterpret_cast<std::uint16_t*>(base + plan.x);
    if (LaunchCopy(x, p.x.row_stride, x_batch, p.w.k, staged, plan.k_padded, p.m * plan.k_padded, plan.k_padded, p.m,
                   batch, stream) != cudaSuccess) {
      return Status::Error("tensor-core gemm: the copy of x did not launch");
    }
    o.x = staged, o.x_row = plan.k_padded, o.x_batch = p.m * plan.k_padded;
  } else {
    o.x = x, o.x_row = p.x.row_stride, o.x_batch = x_batch;
  }
  const std::int64_t y_batch = batch > 1 ? p.y.batch_stride : p.m * p.y.row_stride;
  if (plan.stage_y) {
    o.y = base + plan.y, o.y_row = plan.n_padded, o.y_batch = p.m * plan.n_padded;
  } else {
    o.y = p.y.data, o.y_row = p.y.row_stride, o.y_batch = y_batch;
  }
  const char* why = nullptr;
  switch (p.y.type) {
    case matmul::OutputType::kFp32: why = RunCutlass<float>(o, stream); break;
    case matmul::OutputType::kBf16: why = RunCutlass<cutlass::bfloat16_t>(o, stream); break;
    case matmul::OutputType::kFp16: why = RunCutlass<cutlass::half_t>(o, stream); break;
  }
  if (why != nullptr) return Status::Error(std::string("tensor-core gemm: ") + why);
  if (plan.stage_y) {
    cudaError_t e = cudaSuccess;
    if (p.y.type == matmul::OutputType::kFp32) {
      e = LaunchCopy(static_cast<const float*>(o.y), o.y_row, o.y_batch, p.w.n, static_cast<float*>(p.y.data),
                     p.y.row_stride, y_batch, p.w.n, p.m, batch, stream);
    } else {
      e = LaunchCopy(static_cast<const std::uint16_t*>(o.y), o.y_row, o.y_batch, p.w.n,
                     static_cast<std::uint16_t*>(p.y.data), p.y.row_stride, y_batch, p.w.n, p.m, batch, stream);
    }
    if (e != cudaSuccess) return Status::Error("tensor-core gemm: the copy of y did not launch");
  }
  return Status::Ok();
}

}  // namespace lowbit::cuda::tc_gemm
