#!/usr/bin/env python3
"""Runs the matrix products users rely on and saves their inputs and outputs.

On the GPU machine (torch, Triton; no lowbit needed there): every case's
operands and output go into one compressed archive, $OUT/outside_matmul.npz,
so that `lowbit check gemm` / lowbit.testing.check_matmul can name each
kernel's accumulation on any machine afterwards (docs/tensor-cores.md,
"Outside kernels"). Cases, each with M = N = 64 and K = 4096 (enough K for
FP8's 14-bit accumulator to show), seeded:
- torch.matmul BF16 x BF16 -> BF16 and -> FP32 (cuBLAS);
- torch._scaled_mm E4M3 x E4M3 -> BF16 / FP32 with use_fast_accum True and
  False, unit scales and per-tensor scales;
- a Triton tl.dot E4M3 kernel (FP32 accumulator, written the way public
  examples write it) with max_num_imprecise_acc None and 128.
Names in the archive: <case>__a, <case>__b (B as N x K: the kernel computes
a @ b.T), <case>__scale_a, <case>__scale_b (FP32 scalars, 1 when unscaled),
<case>__d. FP8 operands are stored as uint8 codes, BF16 as uint16 codes,
outputs as uint16 / uint32 codes. A case that cannot run prints its error.
"""
import os
import sys
import traceback

import numpy as np
import torch

M, N, K = 64, 64, 4096
OUT = os.environ.get("OUT", ".")
ARCHIVE = {}


def codes(t):
    if t.dtype in (torch.float8_e4m3fn, torch.float8_e5m2):
        return t.contiguous().view(torch.uint8).cpu().numpy()
    if t.dtype in (torch.bfloat16, torch.float16):
        return t.contiguous().view(torch.int16).cpu().numpy().view(np.uint16)
    if t.dtype == torch.float32:
        return t.contiguous().view(torch.int32).cpu().numpy().view(np.uint32)
    raise ValueError(f"no code view for {t.dtype}")


def save(case, a, b, d, scale_a=1.0, scale_b=1.0):
    ARCHIVE[f"{case}__a"] = codes(a)
    ARCHIVE[f"{case}__b"] = codes(b)
    ARCHIVE[f"{case}__d"] = codes(d)
    ARCHIVE[f"{case}__scale_a"] = np.float32(scale_a)
    ARCHIVE[f"{case}__scale_b"] = np.float32(scale_b)
    print(f"{case}: a {tuple(a.shape)} {a.dtype}, b {tuple(b.shape)} {b.dtype} -> d {tuple(d.shape)} {d.dtype}")


def run(case, fn):
    try:
        fn()
    except Exception:  # a case that cannot run is reported, the others go on
        print(f"{case}: could not run")
        traceback.print_exc(file=sys.stdout)


def main():
    torch.manual_seed(0)
    dev = "cuda"
    a16 = torch.randn(M, K, device=dev).to(torch.bfloat16)
    b16 = torch.randn(N, K, device=dev).to(torch.bfloat16)
    run("torch_matmul_bf16", lambda: save("torch_matmul_bf16", a16, b16, a16 @ b16.T))
    # BF16 operands, FP32 output (torch >= 2.8 takes out_dtype).
    run("torch_mm_bf16_fp32out",
        lambda: save("torch_mm_bf16_fp32out", a16, b16, torch.mm(a16, b16.T, out_dtype=torch.float32)))
    a8 = (torch.randn(M, K, device=dev) * 4).to(torch.float8_e4m3fn)
    b8 = (torch.randn(N, K, device=dev) * 4).to(torch.float8_e4m3fn)
    one = torch.tensor(1.0, device=dev)
    sa, sb = torch.tensor(0.5, device=dev), torch.tensor(0.25, device=dev)
    for fast in (False, True):
        for out_dtype in (torch.bfloat16, torch.float32):
            tag = f"scaled_mm_e4m3_{'fast' if fast else 'exact'}_{'bf16' if out_dtype == torch.bfloat16 else 'fp32'}"
            run(tag, lambda: save(tag, a8, b8, torch._scaled_mm(a8, b8.T, scale_a=one, scale_b=one,
                                                                 out_dtype=out_dtype, use_fast_accum=fast)))
        tag = f"scaled_mm_e4m3_{'fast' if fast else 'exact'}_bf16_scaled"
        run(tag, lambda: save(tag, a8, b8, torch._scaled_mm(a8, b8.T, scale_a=sa, scale_b=sb,
                                                             out_dtype=torch.bfloat16, use_fast_accum=fast),
                              0.5, 0.25))
    run("triton", lambda: triton_cases(a8, b8))
    np.savez_compressed(os.path.join(OUT, "outside_matmul.npz"), **ARCHIVE)
    print(f"saved {len(ARCHIVE)} arrays to {os.path.join(OUT, 'outside_matmul.npz')}")


def triton_cases(a8, b8):
    import triton
    import triton.language as tl

    @triton.jit
    def fp8_matmul(a_ptr, b_ptr, c_ptr, M, N, K, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr,
                   BLOCK_K: tl.constexpr, IMPRECISE: tl.constexpr):
        pid_m = tl.program_id(0)
        pid_n = tl.program_id(1)
        rm = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
        rn = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
        rk = tl.arange(0, BLOCK_K)
        acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
        for k in range(0, K, BLOCK_K):
            a = tl.load(a_ptr + rm[:, None] * K + (k + rk)[None, :])
            b = tl.load(b_ptr + rn[None, :] * K + (k + rk)[:, None])
            acc = tl.dot(a, b, acc, max_num_imprecise_acc=IMPRECISE)
        tl.store(c_ptr + rm[:, None] * N + rn[None, :], acc)

    for imprecise in (None, 128):
        d = torch.empty(M, N, device=a8.device, dtype=torch.float32)
        fp8_matmul[(M // 64, N // 64)](a8, b8, d, M, N, K, BLOCK_M=64, BLOCK_N=64, BLOCK_K=128,
                                       IMPRECISE=imprecise)
        save(f"triton_dot_e4m3_imprecise_{imprecise}", a8, b8, d)


if __name__ == "__main__":
    main()
