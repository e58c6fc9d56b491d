#!/usr/bin/env python3
"""What lowbit reports for kernels users rely on (docs/outside-kernels.md).

Runs on the GPU machine after scripts/gpu/python_check.sh has installed the
`lowbit` package. Each kernel runs on the GPU and its outputs go through
lowbit.testing.check, the same report as `lowbit check`: how many outputs
match the model for the target named, the first mismatches decoded, and the
diagnosis, i.e. which known convention the kernel follows where it differs.
- PyTorch's CUDA casts to every float8 type torch has (float8_e4m3fn,
  float8_e5m2, the two FNUZ types, float8_e8m0fnu), from every FP16 and BF16
  input and an FP32 sample (every BF16 and FP16 value widened, which holds
  every exponent and every tie of an 8-bit format, plus 2^20 random words).
- A Triton per-token FP8 quantization written the way public examples write
  it (vLLM's per_token_group_quant_fp8: amax clamped to eps, scale =
  amax / 448, x / scale clamped to +-448, cast to float8e4nv), checked
  against the catalog's per-row recipe e4m3:te/row and vLLM's CUDA
  per-token recipe e4m3:vllm-token/row.
- torchao's MX (to_mx, each ScaleCalculationMode) and NVFP4
  (NVFP4Tensor.to_nvfp4) on CUDA tensors, when a torchao wheel is installed
  (LOWBIT_TORCHAO_WHEEL names one to install first: the machine has no
  network).
The report (Markdown) goes to stdout and to $OUT/outside_kernels.md;
docs/outside-kernels.md records a run. Exit status 0 when every check ran
(a mismatch is a finding, not a failure), 1 when one could not run.
"""
import os
import subprocess
import sys

import numpy as np

FAILED = []
LINES = []


def say(text=""):
    print(text, flush=True)
    LINES.append(text)


def install_torchao():
    wheel = os.environ.get("LOWBIT_TORCHAO_WHEEL")
    if wheel:
        subprocess.run([sys.executable, "-m", "pip", "install", "--no-deps", "-q", wheel], check=False)


def report(title, inputs, outputs, target, **options):
    import lowbit.testing as lt
    r = lt.check(inputs, outputs, target, max_mismatches=3, **options)
    shown = ", ".join(f"{k}={v!r}" for k, v in options.items() if k not in ("scales", "scale_codes"))
    say(f"#### {title}")
    say(f"- target `{target}`{' (' + shown + ')' if shown else ''}: {r.checked} outputs compared, "
        f"{r.mismatches} mismatches{', ' + str(r.scale_mismatches) + ' scale mismatches' if r.scale_mismatches else ''}"
        f" — {'MATCH' if r.passed else 'MISMATCH'}")
    if r.error:
        say(f"- error: {r.error}")
        FAILED.append(title)
    if r.diagnosis:
        say(f"- diagnosis: {r.diagnosis}")
    if not r.passed and not r.error:
        first = [line for line in r.text.splitlines() if line.strip().startswith(("element", "block", "scale"))][:4]
        if first:
            say("```")
            for line in first:
                say(line.rstrip())
            say("```")
    say()
    return r


def sixteen_bit_inputs(torch):
    bits = np.arange(1 << 16, dtype=np.uint16)
    fp16 = torch.from_numpy(bits.view(np.float16).copy())
    bf16 = torch.from_numpy(bits.view(np.int16).copy()).view(torch.bfloat16)
    words = np.concatenate([bits.astype(np.uint32) << 16,
                            np.arange(1 << 16, dtype=np.uint16).view(np.float16).astype(np.float32).view(np.uint32),
                            np.random.default_rng(0).integers(0, 1 << 32, 1 << 20, dtype=np.uint64).astype(np.uint32)])
    fp32 = torch.from_numpy(words.view(np.float32).copy())
    return {"fp16": fp16, "bf16": bf16, "fp32": fp32}


def torch_casts(torch, device):
    say("### PyTorch casts on the GPU")
    say(f"torch {torch.__version__}, `x.to(dtype)` on {device} tensors; the target is the plain OCP format, "
        "so the diagnosis says which convention torch follows.")
    say()
    import lowbit
    for name, f in lowbit.formats.items():
        tname = f.torch_name
        if not tname or not tname.startswith("float8_") or not hasattr(torch, tname):
            continue
        dtype = getattr(torch, tname)
        for source, x in sixteen_bit_inputs(torch).items():
            try:
                y = x.to(device).to(dtype).cpu()
            except Exception as e:  # a cast torch does not have
                say(f"#### torch.{tname} from {source}\n- torch refuses the cast: {type(e).__name__}: {e}\n")
                continue
            report(f"torch.{tname} from {source} (x.to(torch.{tname}))", x, y, name)
    say("`float4_e2m1fn_x2`: torch has no cast to it (its values are made by packing codes), so there is "
        "nothing to check.")
    say()


TRITON_SOURCE = """
import triton
import triton.language as tl


@triton.jit
def per_token_fp8(x_ptr, y_ptr, s_ptr, n, eps, fp8_max, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    offs = tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + row * n + offs, mask=mask, other=0.0).to(tl.float32)
    absmax = tl.maximum(tl.max(tl.abs(x)), eps)
    scale = absmax / fp8_max
    y = tl.clamp(x / scale, -fp8_max, fp8_max).to(y_ptr.dtype.element_ty)
    tl.store(y_ptr + row * n + offs, y, mask=mask)
    tl.store(s_ptr + row, scale)
"""


def token_rows(torch, rows=64, cols=4096):
    rng = np.random.default_rng(1)
    x = rng.standard_normal((rows, cols)).astype(np.float32)
    x *= np.float32(2.0) ** rng.integers(-20, 20, (rows, 1)).astype(np.float32)
    x[1] = 0                      # an all-zero row: the eps floor
    x[2, 7] = 3.0e4               # one outlier
    x[3] = np.float32(448.0 / 8)  # every element the amax
    x[4, ::2] = np.float32(0.5)   # ties once scaled
    return torch.from_numpy(x).to(torch.bfloat16)


def triton_per_token(torch, device):
    say("### A Triton per-token FP8 kernel")
    try:
        import importlib.util
        import tempfile
        import triton
    except ImportError as e:
        say(f"Triton is not installed here ({e}).\n")
        FAILED.append("triton")
        return
    with tempfile.NamedTemporaryFile("w", suffix="_per_token_fp8.py", delete=False) as f:
        f.write(TRITON_SOURCE)  # triton.jit reads the kernel's source from a file
    spec = importlib.util.spec_from_file_location("per_token_fp8_kernel", f.name)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    x = token_rows(torch).to(device)
    rows, cols = x.shape
    y = torch.empty((rows, cols), dtype=torch.float8_e4m3fn, device=device)
    s = torch.empty(rows, dtype=torch.float32, device=device)
    module.per_token_fp8[(rows,)](x, y, s, cols, 1e-10, 448.0, BLOCK=triton.next_power_of_2(cols))
    torch.cuda.synchronize()
    say(f"triton {triton.__version__}; the kernel (vLLM's formulation: amax clamped to 1e-10, "
        "scale = amax / 448, x / scale clamped to +-448, cast), BF16 rows 64 x 4096 with an all-zero row, "
        "an outlier, a row of equal values and tie-aligned values:")
    say("```python" + TRITON_SOURCE.rstrip() + "\n```")
    report("Triton per-token FP8 (codes and scales) vs e4m3:te/row", x.cpu(), y.cpu(), "e4m3:te/row",
           scales=s.cpu().numpy())
    # vLLM's CUDA per-token kernel divides by amax / 448 too, but floors the
    # scale at 1 / (448 * 512) where this kernel clamps amax to eps.
    report("Triton per-token FP8 (codes and scales) vs e4m3:vllm-token/row", x.cpu(), y.cpu(), "e4m3:vllm-token/row",
           scales=s.cpu().numpy())


def torchao_kernels(torch, device):
    say("### torchao MX and NVFP4 on CUDA tensors")
    install_torchao()
    try:
        import torchao
        from torchao.prototype.mx_formats.config import ScaleCalculationMode
        from torchao.prototype.mx_formats.mx_tensor import to_mx
        from torchao.prototype.mx_formats.nvfp4_tensor import NVFP4Tensor
    except Exception as e:
        say(f"torchao could not be imported here ({type(e).__name__}: {e}).\n")
        FAILED.append("torchao")
        return
    say(f"torchao {torchao.__version__} on torch {torch.__version__}.")
    say()
    x = token_rows(torch, 32, 1024).float()

    def codes(t):
        return t.contiguous().view(torch.uint8).cpu().numpy()

    def unpack(packed, cols):
        b = packed.reshape(packed.shape[0], -1)
        return np.stack([b & 0xF, b >> 4], -1).reshape(b.shape[0], cols)

    for recipe, dtype in (("mxfp8_e4m3", torch.float8_e4m3fn), ("mxfp4", getattr(torch, "float4_e2m1fn_x2", None))):
        if dtype is None:
            continue
        for mode in ("floor", "ceil", "even", "rceil"):
            try:
                scale, data = to_mx(x.to(device), dtype, 32, ScaleCalculationMode(mode))
            except Exception as e:
                say(f"#### to_mx {recipe} {mode}\n- torchao refuses: {type(e).__name__}: {e}\n")
                continue
            c = codes(data)
            if recipe == "mxfp4":
                c = unpack(c, x.shape[1])
            report(f"torchao to_mx {recipe}, ScaleCalculationMode.{mode.upper()}", x, c.reshape(x.shape),
                   f"{recipe}:ao-{mode}", scale_codes=codes(scale).reshape(-1))
    # The two-level scale as torchao's users call it: the per-tensor scale
    # from the tensor's amax (per_tensor_amax_to_scale: amax / (448 * 6)),
    # which lowbit derives from the data too. Without one, torchao scales the
    # blocks alone; tests/peers/test_torchao.py covers that case on the CPU.
    from torchao.prototype.mx_formats.nvfp4_tensor import per_tensor_amax_to_scale
    xd = x.to(device)
    pts = per_tensor_amax_to_scale(torch.max(torch.abs(xd)))
    try:
        t = NVFP4Tensor.to_nvfp4(xd, per_tensor_scale=pts)
    except Exception as e:
        say(f"#### NVFP4Tensor.to_nvfp4\n- torchao refuses: {type(e).__name__}: {e}\n")
        return
    report("torchao NVFP4Tensor.to_nvfp4 (per_tensor_scale = per_tensor_amax_to_scale(amax))", x,
           unpack(codes(t.qdata), x.shape[1]), "nvfp4:ao", scale_codes=codes(t.scale).reshape(-1),
           tensor_scale=float(pts.item()))


def main():
    import torch
    import lowbit
    device = "cuda" if torch.cuda.is_available() else "cpu"
    say(f"## lowbit on outside kernels: {torch.cuda.get_device_name() if device == 'cuda' else 'no GPU (CPU run)'}")
    say(f"lowbit {lowbit.__version__}, torch {torch.__version__}, numpy {np.__version__}")
    say()
    torch_casts(torch, device)
    if device == "cuda":
        triton_per_token(torch, device)
    torchao_kernels(torch, device)
    out = os.environ.get("OUT")
    if out:
        with open(os.path.join(out, "outside_kernels.md"), "w") as f:
            f.write("\n".join(LINES) + "\n")
    if FAILED:
        print(f"outside_kernels: could not run: {', '.join(FAILED)}")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
