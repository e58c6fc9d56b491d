# ---
# jupyter:
#   jupytext:
#     formats: py:percent
#   kernelspec:
#     display_name: Python 3
#     language: python
#     name: python3
# ---

# %% [markdown]
# # Why low-bit, and a map of the formats
#
# A large model spends most of its time and energy **moving numbers**, not multiplying them: every
# weight is read from memory once per token generated, and every activation crosses the chip between
# layers. Halving the bits of a number halves that traffic and the memory it takes, and the tensor
# cores of recent GPUs multiply narrow numbers faster: on Hopper FP8 at twice the rate of BF16, on
# Blackwell FP4 at twice the rate of FP8 (dense throughput in NVIDIA's H100 and B200 datasheets).
# The price is precision and range, paid in rounding error and clipping. These notebooks measure that
# price, bit for bit, with lowbit's model of each format.
#
# This page is the map: what each format is for, how many bits it really costs once its scales are
# counted, and which GPUs run it natively. Every number in the tables is read from lowbit (its
# format list and recipe catalog), not typed in.

# %%
# %matplotlib inline
import math

import matplotlib.pyplot as plt
import numpy as np
from IPython.display import Markdown, display

import lowbit
from figures import checked

# %% [markdown]
# ## What each format is for
#
# | use | formats | why that one |
# |---|---|---|
# | **weights** (inference) | INT8, INT4 with a scale per group (GPTQ, AWQ), NVFP4, MXFP4, E4M3 per channel | fixed after training, so their scales can be calibrated once; the fewest bits win because every weight is read per token |
# | **activations** | E4M3 per tensor or per token, MXFP8, NVFP4 | computed on the fly, so the scale is measured as they are quantized (dynamic) or calibrated (static); E4M3 has one more mantissa bit than E5M2 |
# | **gradients** (training) | E5M2, BF16 | gradients span many orders of magnitude: E5M2's 32 binades beat E4M3's 18 (notebook 8) |
# | **KV cache** | E4M3 with a per-tensor or per-head scale (vLLM) | long contexts make the cache the largest tensor in memory |
# | **scales** | E8M0 (MX), UE4M3 (NVFP4), FP32, FP16 | a power of two (E8M0) is free to apply; UE4M3 is finer; FP32 for one scale per tensor |
# | **accumulation and master weights** | FP32, BF16 | sums of many products need the bits that the inputs lack |
#
# The numbers behind the "why" column are computed below and in the following notebooks: binades
# per format here, precision per binade in notebook 1, the cost of a scale in notebooks 4 and 5.

# %%
def binades(f):
    """Powers of two between the smallest subnormal (or normal) and the largest value."""
    low = f.smallest_subnormal or f.smallest_normal
    return math.log2(f.max / low)


e4m3, e5m2 = lowbit.formats["e4m3"], lowbit.formats["e5m2"]
print(f"E4M3 spans {binades(e4m3):.1f} binades, E5M2 {binades(e5m2):.1f}")  # about 18 and 32

# %% tags=["assertions"]
assert round(binades(e4m3)) == 18 and round(binades(e5m2)) == 32
assert e4m3.mantissa_bits == e5m2.mantissa_bits + 1

# %% [markdown]
# ## Every format lowbit models, in one table
#
# Range (largest value, smallest normal and subnormal), the precision of the values near 1
# (`2^-mantissa_bits`, the gap between 1 and the next value, which is also the worst relative
# spacing inside a normal binade) and the special values, read from `lowbit.formats`. The
# integer formats have no exponent: their "precision" is one step of the integer grid, relative to
# their largest value.

# %%
def fmt_num(v):
    """A power of two far from 1 as 2^k, other large values in 3 digits, the rest as they are."""
    if v is None:
        return "—"
    mantissa, exponent = math.frexp(abs(v))
    if mantissa == 0.5 and abs(exponent - 1) >= 7:  # an exact power of two
        return f"2^{exponent - 1}"
    return f"{v:.3g}" if abs(v) >= 1e5 else f"{v:g}"


def specials(f):
    parts = []
    if f.has_inf:
        parts.append("±Inf")
    if f.has_nan:
        parts.append(f"{len(f.nan_codes)} NaN" if f.bits <= 16 else "NaNs")
    if f.kind == "float" and f.signed and not f.has_negative_zero:
        parts.append("no −0")
    return ", ".join(parts) or "none"


rows = []
for f in lowbit.formats.values():
    if f.kind == "float":
        layout = f"{'S' if f.signed else ''}E{f.exponent_bits}M{f.mantissa_bits}"
        precision = fmt_num(2.0**-f.mantissa_bits)
        names = ", ".join(n for n in (f.torch_name, f.cuda_name) if n) or "—"
    else:
        layout = "integer, two's complement" if f.signed else "unsigned integer"
        precision = f"1/{f.max:g} of max"
        names = ", ".join(n for n in (f.torch_name, f.ml_dtypes_name) if n) or "—"
    rows.append([f.name, str(f.bits), layout, fmt_num(f.max), fmt_num(f.smallest_normal),
                 fmt_num(f.smallest_subnormal), precision, specials(f), names])
header = ["format", "bits", "layout", "max", "smallest normal", "smallest subnormal",
          "precision at 1", "specials", "torch / CUDA name"]
table = "\n".join(["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
                  + ["| " + " | ".join(r) + " |" for r in rows])
display(Markdown(table))

# %%
by_name = {r[0]: r for r in rows}

# %% tags=["assertions"]
assert set(by_name) >= {"fp32", "bf16", "fp16", "e4m3", "e5m2", "e3m2", "e2m3", "e2m1", "e8m0", "ue4m3",
                        "int8", "int4", "uint4"}  # FP6, UE4M3 and the integers are in the table
assert by_name["e4m3"][3:7] == ["448", "0.015625", "2^-9", "0.125"]
assert by_name["e2m3"][3] == "7.5" and by_name["e3m2"][3] == "28" and by_name["e2m1"][3] == "6"
assert by_name["ue4m3"][1:3] == ["7", "E4M3"]  # the NVFP4 block scale: E4M3 without its sign bit
assert by_name["e8m0"][2] == "E8M0" and by_name["e8m0"][5] == "—"  # no subnormals (and no zero)

# %% [markdown]
# ## Bits per element, scales included
#
# A 4-bit format is not 4 bits per element: every group of elements carries a scale, and some a
# zero point. The table quantizes one 64 × 1024 tensor with a recipe of each family in its usual
# layout and counts the bits: the elements at their format's width (lowbit keeps an FP6 code in a
# byte, as CUDA's `__nv_fp6` types do; the MX specification packs them, and the table counts 6), the
# scales as stored (`Recipe.scale_format`: a byte for E8M0 and for the 7-bit UE4M3, 16 bits for FP16,
# 32 for FP32; one per group that lowbit's buffers hold), zero points at the element's width (as GPTQ
# and AWQ checkpoints pack them) and NVFP4's one FP32 tensor scale.

# %%
x = np.random.default_rng(0).normal(0, 1, (64, 1024)).astype(np.float32)
USUAL = ["e4m3:te", "e4m3:vllm-token", "mxfp8_e4m3:te", "mxfp6_e2m3:te", "mxint8:ocp", "int8:ao-sym/row",
         "int4:ao-sym/g128", "uint4:gptq-asym-fp16/g128", "uint4:awq-fp16/g128", "mxfp4:te", "nvfp4:te"]


def bits_per_element(q):
    r = q.recipe
    element_bits = lowbit.formats[r.element].bits
    scale_bits = 8 * math.ceil(lowbit.formats[r.scale_format].bits / 8)  # UE4M3: 7 bits in a byte
    n = q.rows * q.cols
    total = n * element_bits + len(q.scales) * scale_bits
    if q.zero_points is not None:
        total += len(q.zero_points) * element_bits
    if q.tensor_scale is not None:
        total += 32
    return total / n


cost = {}
for name in USUAL:
    q = lowbit.quantize(x, name)
    cost[name] = (bits_per_element(q), q.layout, q.error()["sqnr_db"])
display(Markdown("\n".join(
    ["| recipe | layout | element | scale | bits per element | SQNR on N(0,1) [dB] |", "|---|---|---|---|---|---|"]
    + [f"| `{n}` | {lay} | {lowbit.recipes[n.split('/')[0]].element} | {lowbit.recipes[n.split('/')[0]].scale_format} "
       f"| {b:.4g} | {s:.1f} |" for n, (b, lay, s) in cost.items()])))

# %% tags=["assertions"]
assert f"{cost['mxfp4:te'][0]:.4g}" == "4.25" and f"{cost['mxfp8_e4m3:te'][0]:.4g}" == "8.25"
assert f"{cost['mxfp6_e2m3:te'][0]:.4g}" == "6.25"
assert 4.5 < cost["nvfp4:te"][0] < 4.5 + 1e-3  # + one FP32 per tensor
assert f"{cost['int4:ao-sym/g128'][0]:.4g}" == "4.25"
assert f"{cost['uint4:gptq-asym-fp16/g128'][0]:.4g}" == "4.156"  # FP16 scale + 4-bit zero per 128
assert abs(cost["e4m3:te"][0] - 8) < 1e-3

# %% [markdown]
# What that buys, for the weights of a model with 8 billion parameters (weights only; the KV cache
# and activations come on top):

# %%
params = 8e9
memory = {"BF16": 16, "E4M3 per tensor": cost["e4m3:te"][0], "MXFP8": cost["mxfp8_e4m3:te"][0],
          "MXFP6": cost["mxfp6_e2m3:te"][0], "INT4-g128 (FP32 scale)": cost["int4:ao-sym/g128"][0],
          "MXFP4": cost["mxfp4:te"][0], "NVFP4": cost["nvfp4:te"][0]}
gib = {k: params * b / 8 / 2**30 for k, b in memory.items()}
fig, ax = plt.subplots(figsize=(8, 3.8))
bars = ax.barh(list(gib), list(gib.values()), color="C0")
ax.bar_label(bars, [f"{v:.2f} GiB ({memory[k]:.3g} bits)" for k, v in gib.items()], padding=3, fontsize=9)
ax.invert_yaxis()
ax.set_xlim(0, max(gib.values()) * 1.45)
ax.set_xlabel("memory for 8e9 weights [GiB]")
ax.set_ylabel("format [name]")
ax.set_title("Weight memory of an 8-billion-parameter model, scales included")
fig.tight_layout()
checked(fig)
plt.show()

# %% tags=["assertions"]
assert f"{gib['BF16']:.2f}" == "14.90" and f"{gib['NVFP4']:.2f}" == "4.19" and f"{gib['MXFP4']:.2f}" == "3.96"

# %% [markdown]
# ## What the GPUs run natively
#
# A format stored in memory is one thing; a format the **tensor cores** multiply is another. Where
# the hardware has no instruction for a format, a kernel converts it to one that it has (at a cost
# in instructions, and with the converted format's rounding).
#
# - **Hopper (sm_90, H100/H200)**: tensor cores for FP16, BF16, TF32, INT8 and the two FP8 formats
#   E4M3 and E5M2 (`wgmma` with FP32 accumulation; `docs/tensor-cores.md` lists the instructions
#   lowbit models bit for bit). Conversions to FP8 exist only with round-to-nearest and saturation
#   (`cvt.rn.satfinite`, `docs/formats-reference.md §2`). No FP6, FP4 or block-scaled instruction:
#   MX and NVFP4 data is dequantized in software first.
# - **Blackwell (sm_100, B200/GB200; sm_120, RTX 50)**: tensor cores also for FP6 (E2M3, E3M2) and
#   FP4 (E2M1), and block-scaled products that apply the MX E8M0 scales (blocks of 32) and NVFP4's
#   UE4M3 scales (blocks of 16) inside the instruction (PTX ISA, `tcgen05.mma` with
#   `.kind::mxf8f6f4` and `.kind::mxf4nvf4`); conversions to FP4, FP6 and E8M0 and stochastic
#   rounding in hardware (`docs/formats-reference.md §2`, the table of conversions and the
#   architectures that have them, and §4.6).
#
# The CUDA headers give each of these formats a type (`cuda_fp8.h`, `cuda_fp6.h`, `cuda_fp4.h`), and
# lowbit knows the name of each:

# %%
narrow = ["e4m3", "e5m2", "e3m2", "e2m3", "e2m1", "e8m0"]
cuda = {n: lowbit.formats[n].cuda_name for n in narrow}
print(cuda)

# %% tags=["assertions"]
assert cuda == {"e4m3": "__nv_fp8_e4m3", "e5m2": "__nv_fp8_e5m2", "e3m2": "__nv_fp6_e3m2",
                "e2m3": "__nv_fp6_e2m3", "e2m1": "__nv_fp4_e2m1", "e8m0": "__nv_fp8_e8m0"}

# %% [markdown]
# ## Where to go next
#
# 1. **Anatomy of a float** — how a code becomes a value, and where the values lie.
# 2. **Rounding, overflow and NaN** — what happens between two values and beyond the largest.
# 3. **Integer quantization** — scales, zero points and the bytes of INT4 checkpoints.
# 4. **FP8 scaling** — choosing the encode factor, per tensor, token or channel.
# 5. **Block formats** — MX and NVFP4: why their scales look the way they do.
# 6. **Check your kernel** — testing an implementation against lowbit.
# 7. **Accumulation** — how tensor cores add the products of a matrix product.
# 8. **Training numerics** — stochastic rounding, loss scaling, delayed scaling.
# 9. **Real data** — every format and recipe on a trained classifier.
#
# The words used for recipes (`te`, `ao`, `msx`, `vllm`, …) are in the glossary of this site, and
# the facts with their sources in `docs/formats-reference.md`.
