#!/usr/bin/env python3
"""Which accumulation do the matrix products users rely on do? (outside kernels)

Runs on the GPU machine after scripts/gpu/python_check.sh has installed the
`lowbit` package (no network there). Each case runs a product on the GPU,
saves its inputs and output under $OUT/outside_matmul/<case>/ (.npy: a, b as
N x K, d, and the scales) and puts them through lowbit.testing.check_matmul,
the report of `lowbit check gemm` (docs/check-your-kernel.md "Checking a
matrix product"): the candidate that gives every output bit, or the closest
with the first outputs where it differs.
- torch.matmul BF16 x BF16 -> BF16 (cuBLAS), and -> FP32 through out_dtype
  where this torch has it;
- torch._scaled_mm E4M3 x E4M3 -> BF16 / FP32, use_fast_accum on and off,
  per-tensor scales (1 and not 1) and, where supported, row-wise scales;
- a Triton tl.dot E4M3 kernel with an FP32 accumulator, written the way
  public examples write it, with max_num_imprecise_acc None, 32 and 128;
- GemLite's MXFP4 GEMV (A16W4 with MX scales, M = 1) when gemlite is
  installed: its dequantized weights are read back through the layer itself
  (an identity input gives each weight exactly in BF16) and split into E2M1
  codes and E8M0 scales.
Every case runs in its own try/except and prints its error; the exit status
is 0 when every case that could run was checked (a mismatch is a finding,
not a failure), 1 when a case failed. The Markdown summary goes to stdout and
to $OUT/outside_matmul.md.
"""
import os
import sys
import traceback

import numpy as np

M, N, K = 64, 64, 4096
OUT = os.environ.get("OUT", ".")
LINES = []
FAILED = []


def say(text=""):
    print(text, flush=True)
    LINES.append(text)


def save(case, **arrays):
    folder = os.path.join(OUT, "outside_matmul", case)
    os.makedirs(folder, exist_ok=True)
    for name, value in arrays.items():
        if value is not None:
            np.save(os.path.join(folder, name + ".npy"), value)


def host(t):
    """A torch tensor copied to the host (NumPy arrays pass as they are)."""
    return t.detach().cpu().contiguous() if hasattr(t, "detach") else t


def check(case, title, a, b_nk, d, **options):
    """Runs lowbit's product check on (a, b as N x K, d) and reports it."""
    import lowbit.testing as lt
    say(f"#### {title}")
    try:
        r = lt.check_matmul(host(a), host(b_nk), host(d), transpose_b=True, max_mismatches=3, **options)
    except Exception as e:  # noqa: BLE001 - every case reports, none stops the run
        say(f"- check failed: {type(e).__name__}: {e}")
        FAILED.append(case)
        say()
        return None
    say(f"- {r.problem}")
    say(f"- {'MATCH' if r.match else 'NO MATCH'}: {r.summary}")
    say(f"- against the exact product rounded once: {r.mismatches} of {r.checked} outputs differ")
    if not r.match or len([c for c in r.candidates if c['full_match']]) > 1:
        say("```")
        for line in r.text.splitlines():
            if line.startswith("  "):
                say(line)
        say("```")
    say()
    return r


def run_case(case, title, body):
    try:
        body(case, title)
    except Exception as e:  # noqa: BLE001
        say(f"#### {title}")
        say(f"- could not run: {type(e).__name__}: {e}")
        traceback.print_exc()
        FAILED.append(case)
        say()


def bf16_operands(torch, seed):
    g = torch.Generator(device="cpu").manual_seed(seed)
    a = torch.randn(M, K, generator=g).to(torch.bfloat16).cuda()
    b = torch.randn(N, K, generator=g).to(torch.bfloat16).cuda()
    return a, b


def fp8_operands(torch, seed):
    g = torch.Generator(device="cpu").manual_seed(seed)
    a = (torch.randn(M, K, generator=g) * 4).to(torch.float8_e4m3fn).cuda()
    b = (torch.randn(N, K, generator=g) * 4).to(torch.float8_e4m3fn).cuda()
    return a, b


def main():
    import torch
    say("### Outside matrix products")
    say(f"- torch {torch.__version__}, CUDA {torch.version.cuda}, {torch.cuda.get_device_name()}; M = {M}, N = {N}, K = {K}")
    say()

    def matmul_bf16(case, title):
        a, b = bf16_operands(torch, 1)
        d = a @ b.t()
        save(case, a=host(a).view(torch.int16).numpy(), b=host(b).view(torch.int16).numpy(), d=host(d).view(torch.int16).numpy())
        check(case, title, a, b, d)

    run_case("matmul_bf16", "torch.matmul BF16 x BF16 -> BF16 (cuBLAS)", matmul_bf16)

    def matmul_bf16_fp32(case, title):
        a, b = bf16_operands(torch, 2)
        d = torch.mm(a, b.t(), out_dtype=torch.float32)  # torch >= 2.8
        save(case, a=host(a).view(torch.int16).numpy(), b=host(b).view(torch.int16).numpy(), d=host(d).numpy())
        check(case, title, a, b, d)

    run_case("mm_bf16_out_fp32", "torch.mm BF16 x BF16 -> FP32 (out_dtype, cuBLAS)", matmul_bf16_fp32)

    for out_dtype, out_name in ((torch.bfloat16, "bf16"), (torch.float32, "fp32")):
        for fast in (False, True):
            for sa_value, sb_value in ((1.0, 1.0), (0.75, 1.5)):
                def scaled(case, title, out_dtype=out_dtype, fast=fast, sa_value=sa_value, sb_value=sb_value):
                    a, b = fp8_operands(torch, 3)
                    sa = torch.tensor(sa_value, device="cuda")
                    sb = torch.tensor(sb_value, device="cuda")
                    d = torch._scaled_mm(a, b.t(), scale_a=sa, scale_b=sb, out_dtype=out_dtype, use_fast_accum=fast)
                    save(case, a=host(a).view(torch.uint8).numpy(), b=host(b).view(torch.uint8).numpy(),
                         d=host(d).float().numpy() if out_dtype == torch.float32 else host(d).view(torch.int16).numpy(),
                         scale_a=np.float32([sa_value]), scale_b=np.float32([sb_value]))
                    scales = {} if (sa_value, sb_value) == (1.0, 1.0) else {
                        "a_scales": np.float32([sa_value]), "b_scales": np.float32([sb_value])}
                    check(case, title, a, b, d, **scales)
                name = f"scaled_mm_e4m3_{out_name}_fast{int(fast)}_s{sa_value}x{sb_value}"
                run_case(name, f"torch._scaled_mm E4M3 -> {out_name}, use_fast_accum={fast}, "
                               f"scales {sa_value} x {sb_value}", scaled)

    for fast in (False, True):
        def rowwise(case, title, fast=fast):
            a, b = fp8_operands(torch, 4)
            g = torch.Generator(device="cpu").manual_seed(5)
            sa = (torch.rand(M, 1, generator=g) + 0.5).cuda()
            sb = (torch.rand(1, N, generator=g) + 0.5).cuda()
            d = torch._scaled_mm(a, b.t(), scale_a=sa, scale_b=sb, out_dtype=torch.bfloat16, use_fast_accum=fast)
            save(case, a=host(a).view(torch.uint8).numpy(), b=host(b).view(torch.uint8).numpy(),
                 d=host(d).view(torch.int16).numpy(), scale_a=host(sa).numpy(), scale_b=host(sb).numpy())
            check(case, title, a, b, d, a_scales=host(sa).numpy().reshape(-1), b_scales=host(sb).numpy().reshape(-1))
        run_case(f"scaled_mm_rowwise_fast{int(fast)}", f"torch._scaled_mm E4M3 -> bf16, row-wise scales, "
                                                       f"use_fast_accum={fast}", rowwise)

    try:
        import triton
        import triton.language as tl

        @triton.jit
        def fp8_matmul(a_ptr, b_ptr, d_ptr, m, n, k, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr,
                       BLOCK_K: tl.constexpr, IMPRECISE: tl.constexpr):
            pid_m = tl.program_id(0)
            pid_n = tl.program_id(1)
            rm = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
            rn = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
            rk = tl.arange(0, BLOCK_K)
            acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
            for k0 in range(0, k, BLOCK_K):
                a = tl.load(a_ptr + rm[:, None] * k + (k0 + rk)[None, :])
                b = tl.load(b_ptr + rn[None, :] * k + (k0 + rk)[:, None])  # B is N x K: b[k, n]
                if IMPRECISE > 0:
                    acc = tl.dot(a, b, acc, max_num_imprecise_acc=IMPRECISE)
                else:
                    acc = tl.dot(a, b, acc)
            tl.store(d_ptr + rm[:, None] * n + rn[None, :], acc)

        for imprecise in (0, 32, 128):
            def triton_case(case, title, imprecise=imprecise):
                a, b = fp8_operands(torch, 6)
                d = torch.empty(M, N, device="cuda", dtype=torch.float32)
                fp8_matmul[(M // 64, N // 64)](a, b, d, M, N, K, BLOCK_M=64, BLOCK_N=64, BLOCK_K=128,
                                               IMPRECISE=imprecise)
                save(case, a=host(a).view(torch.uint8).numpy(), b=host(b).view(torch.uint8).numpy(), d=host(d).numpy())
                check(case, title, a, b, d)
            run_case(f"triton_fp8_imprecise{imprecise}",
                     f"Triton {triton.__version__} tl.dot E4M3 -> FP32, max_num_imprecise_acc="
                     f"{imprecise if imprecise else 'None'}", triton_case)
    except Exception as e:  # noqa: BLE001
        say(f"#### Triton tl.dot FP8\n- could not run: {type(e).__name__}: {e}\n")
        FAILED.append("triton")

    run_case("gemlite_mxfp4_gemv", "GemLite MXFP4 GEMV (A16W4, M = 1)", lambda case, title: gemlite_case(torch, case, title))

    with open(os.path.join(OUT, "outside_matmul.md"), "w") as f:
        f.write("\n".join(LINES) + "\n")
    if FAILED:
        print("cases that could not run or be checked: " + ", ".join(FAILED), file=sys.stderr)
        return 1
    return 0


E2M1 = np.array([0, 0.5, 1, 1.5, 2, 3, 4, 6], np.float64)


def split_mx(w):
    """Exact MXFP4 values [N, K] -> (E2M1 codes, E8M0 scales [N][K / 32]), the
    scale 2^(floor(log2 amax) - 2) of the OCP MX spec (v1.0 §6.3); None if a
    block is not E2M1 times that power of two."""
    n, k = w.shape
    codes = np.zeros((n, k), np.uint8)
    scales = np.zeros((n, k // 32), np.uint8)
    for j in range(n):
        for kb in range(k // 32):
            block = w[j, kb * 32:(kb + 1) * 32].astype(np.float64)
            amax = np.max(np.abs(block))
            e = int(np.floor(np.log2(amax))) - 2 if amax > 0 else -127
            q = np.abs(block) / 2.0 ** e
            idx = np.searchsorted(E2M1, q)
            idx = np.minimum(idx, 7)
            if not np.all(E2M1[idx] == q):
                return None
            codes[j, kb * 32:(kb + 1) * 32] = idx | (np.signbit(block).astype(np.uint8) << 3)
            scales[j, kb] = e + 127
    return codes, scales


def gemlite_case(torch, case, title):
    try:
        import gemlite  # noqa: F401
        from gemlite.helper import A16W4_MXFP
    except ImportError as e:
        say(f"#### {title}\n- gemlite or its A16W4_MXFP helper cannot be imported here ({e}); nothing to check\n")
        return
    n, k = 256, K
    g = torch.Generator(device="cpu").manual_seed(7)
    linear = torch.nn.Linear(k, n, bias=False, dtype=torch.bfloat16)
    with torch.no_grad():
        linear.weight.copy_(torch.randn(n, k, generator=g).to(torch.bfloat16))
    layer = A16W4_MXFP(device="cuda", dtype=torch.bfloat16).from_linear(linear.cuda())
    x = torch.randn(1, k, generator=g).to(torch.bfloat16).cuda()
    d = layer(x)
    # The weights as the layer holds them: each identity row gives one
    # weight per output, a single E2M1 x 2^e product (exact in BF16).
    eye = torch.eye(k, dtype=torch.bfloat16, device="cuda")
    w = torch.cat([layer(eye[i:i + 256]) for i in range(0, k, 256)]).t().contiguous()  # [n, k]
    wn = host(w).float().numpy()
    split = split_mx(wn)
    save(case, a=host(x).view(torch.int16).numpy(), b_values=host(w).view(torch.int16).numpy(),
         d=host(d).view(torch.int16).numpy())
    if split is None:
        say("- the read-back weights are not E2M1 x 2^e blocks: checked as BF16 weights")
        check(case, title, x, w, d)
        return
    codes, scales = split
    save(case, b_codes=codes, b_scales=scales)
    check(case, title, x, codes, d, b_format="mxfp4", b_scales=scales)


if __name__ == "__main__":
    sys.exit(main())
