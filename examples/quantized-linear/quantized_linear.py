"""A linear layer whose weight comes from lowbit.quantize, run through the
GEMV (M = 1..16 tokens, decode) and the GEMM (M >= 128, prefill) rows, with
the checks lowbit's matmul oracle allows (docs/matmul.md):

- on the host (NumPy), the GEMV row is the defined-order FP32 reference and
  the GEMM row the exact mode: y is checked against the exact sum computed
  here with Python fractions (GEMM: equal after one rounding; GEMV: within
  the FP32 accumulation bound);
- on a GPU (torch CUDA tensors, --device cuda), the CUDA GEMV must equal the
  host GEMV bit for bit and the CUDA GEMM must lie within a bound of the
  host's exact result.

    python examples/quantized-linear/quantized_linear.py               # CPU rows
    python examples/quantized-linear/quantized_linear.py --device cuda # CUDA rows
"""

import argparse
import fractions
import sys

import ml_dtypes
import numpy as np

import lowbit


class QuantizedLinear:
    """y = x @ W.T with W [out_features, in_features] quantized once by a
    lowbit recipe; the packed buffers are used as lowbit.quantize returned
    them."""

    def __init__(self, weight: np.ndarray, recipe: str, layout=None, device: str = "cpu", gptq: bool = False):
        w = weight
        if device != "cpu" and not gptq:
            import torch
            w = torch.from_numpy(weight).to(device)
        self.q = lowbit.quantize(w, recipe, layout=layout)
        self.recipe = recipe
        # GPTQ checkpoints store uint4 codes in int32 words and FP16 scales:
        # the same quantized weight in that layout (the CUDA GEMV reads it).
        self.weight, self.gptq_dequantized = to_gptq(self.q, device) if gptq else (self.q, None)

    def __call__(self, x, out_dtype="float32"):
        # lowbit.matmul takes the GEMV row for M <= 16 and the GEMM row above.
        return lowbit.matmul(self.weight, x, out_dtype=out_dtype)

    def dequantized(self) -> np.ndarray:
        """W as float64 (exact for these formats), for the checks."""
        if self.weight is self.q:
            return self.q.dequantize().astype(np.float64)
        return self.gptq_dequantized


def to_gptq(q, device):
    """A uint4 groups-of-128 lowbit.quantize result as GPTQ tensors: qweight
    int32 [K / 8, N], FP16 scales [K / 128, N], qzeros int32 [K / 128, N / 8]
    of zero - 1 (formats/block/packing.h); and its exact values [N, K]."""
    n, k = q.rows, q.cols
    codes = q.codes.reshape(n, k).T.astype(np.uint32)  # [K, N]
    qweight = np.zeros((k // 8, n), np.uint32)
    for j in range(8):
        qweight |= codes[j::8] << np.uint32(4 * j)
    groups = k // 128
    zeros = q.zero_points.reshape(n, groups).T.astype(np.int64)  # [groups, N]
    qzeros = np.zeros((groups, n // 8), np.uint32)
    for j in range(8):
        qzeros |= ((zeros[:, j::8] - 1) & 0xF).astype(np.uint32) << np.uint32(4 * j)
    scales = q.scales.reshape(n, groups).T.astype(np.float16)  # FP16 checkpoint scales
    arrays = [qweight.view(np.int32), scales, qzeros.view(np.int32)]
    if device != "cpu":
        import torch
        arrays = [torch.from_numpy(np.ascontiguousarray(a)).to(device) for a in arrays]
    # (q - z) * s, exact in float64: what the GPTQ weight stands for.
    exact = (codes.astype(np.float64) - np.repeat(zeros, 128, axis=0)) * np.repeat(scales.astype(np.float64), 128, axis=0)
    return lowbit.gptq_weight(*arrays, group=128), exact.T


def exact_outputs(x, w, picks):
    """The exact sums sum_k x[i, k] w[j, k] for the (i, j) in picks, as fractions."""
    out = []
    for i, j in picks:
        out.append(sum((fractions.Fraction(float(a)) * fractions.Fraction(float(b))
                        for a, b in zip(x[i], w[j])), fractions.Fraction(0)))
    return out


def round_to_fp32(v: fractions.Fraction) -> float:
    """Round-to-nearest-even of an exact value to FP32 (normal range)."""
    if v == 0:
        return 0.0
    a = abs(v)
    e = a.numerator.bit_length() - a.denominator.bit_length()
    if fractions.Fraction(2) ** e > a:
        e -= 1
    q_exp = max(e, -126) - 23
    t = a / fractions.Fraction(2) ** q_exp
    q, rem = divmod(t.numerator, t.denominator)
    half = fractions.Fraction(rem, t.denominator)
    if half > fractions.Fraction(1, 2) or (half == fractions.Fraction(1, 2) and q % 2 == 1):
        q += 1
    r = float(fractions.Fraction(q) * fractions.Fraction(2) ** q_exp)
    return -r if v < 0 else r


# (recipe, layout, as GPTQ tensors): NVFP4 per-row blocks of 16, MXFP4 1-D
# blocks, GPTQ's asymmetric UINT4 groups of 128 in GPTQ's int32 layout with
# FP16 scales, FP8 E4M3 per output channel.
CASES = [("nvfp4:te", "g16", False), ("mxfp4:ocp", None, False), ("uint4:gptq-asym", "g128", True),
         ("e4m3:te", "row", False)]


def run_cpu(n=48, k=256, seed=0, checks=64) -> int:
    rng = np.random.default_rng(seed)
    weight = (rng.standard_normal((n, k)) * 0.05).astype(np.float32)
    failures = 0
    for recipe, layout, gptq in CASES:
        layer = QuantizedLinear(weight, recipe, layout, gptq=gptq)
        wd = layer.dequantized()
        for m in (1, 8, 16, 128):
            x = rng.standard_normal((m, k)).astype(ml_dtypes.bfloat16)
            y = layer(x)
            op = "gemv" if m <= 16 else "gemm"
            picks = [(int(rng.integers(m)), int(rng.integers(n))) for _ in range(checks)]
            xs = x.astype(np.float64)
            if op == "gemm" and recipe.startswith("mxfp4"):
                # MX dequantized values are exact in FP32: the exact mode is
                # the exact sum rounded once.
                exact = exact_outputs(xs, wd, picks)
                bad = sum(float(y[i, j]) != round_to_fp32(e) for (i, j), e in zip(picks, exact))
            else:
                mag = np.abs(xs) @ np.abs(wd).T
                ref = xs @ wd.T
                bad = int(np.sum(np.abs(y - ref) > (k + 4) * 2.0 ** -23 * mag + 1e-30))
            print(f"{recipe:18} {layout or 'default':8} M={m:<4} {op}: {'ok' if bad == 0 else f'{bad} off'}")
            failures += bad
    return failures


def run_cuda(n=512, k=1024, seed=0) -> int:
    import torch
    rng = np.random.default_rng(seed)
    weight = (rng.standard_normal((n, k)) * 0.05).astype(np.float32)
    failures = 0
    for recipe, layout, gptq in CASES:
        host = QuantizedLinear(weight, recipe, layout, gptq=gptq)
        try:
            device = QuantizedLinear(weight, recipe, layout, device="cuda", gptq=gptq)
        except ValueError as e:  # a recipe without a CUDA quantize kernel: move the host buffers
            print(f"{recipe}: quantized on the host ({e})")
            device = QuantizedLinear(weight, recipe, layout, gptq=gptq)
            device.weight = _to_cuda(host.q)
        for m in (1, 16, 128):
            x = rng.standard_normal((m, k)).astype(ml_dtypes.bfloat16)
            xt = torch.from_numpy(x.view(np.uint16).astype(np.int16)).view(torch.bfloat16).cuda()
            try:
                y_dev = device(xt).cpu().numpy()
            except ValueError as e:
                print(f"{recipe:18} M={m:<4}: no CUDA row ({e})")
                failures += 1
                continue
            y_host = host(x)
            if m <= 16:
                bad = int(np.sum(y_dev.view(np.uint32) != y_host.view(np.uint32)))
                what = "bit for bit vs the host defined order"
            else:
                xs = x.astype(np.float64)
                wd = host.dequantized()
                mag = np.abs(xs) @ np.abs(wd).T
                bad = int(np.sum(np.abs(y_dev - y_host) > 2.0 ** -7 * mag + 2.0 ** -126))
                what = "within 2^-7 sum|x||w| of the exact mode"
            print(f"{recipe:18} M={m:<4} {what}: {'ok' if bad == 0 else f'{bad} off'}")
            failures += bad
    return failures


def _to_cuda(q):
    import torch
    import dataclasses
    fields = {}
    for f in ("packed", "scale_codes", "scales", "zero_points"):
        v = getattr(q, f)
        fields[f] = None if v is None else torch.from_numpy(np.ascontiguousarray(v)).cuda()
    if q.tensor_scale is not None:
        fields["tensor_scale"] = torch.tensor(q.tensor_scale, dtype=torch.float32, device="cuda")
    return dataclasses.replace(q, **fields)


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--device", choices=["cpu", "cuda"], default="cpu")
    args = p.parse_args(argv)
    failures = run_cpu() if args.device == "cpu" else run_cuda()
    print("all checks passed" if failures == 0 else f"{failures} outputs off")
    return 0 if failures == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
