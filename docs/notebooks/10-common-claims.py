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
# # Common claims, checked
#
# Teaching material about these formats often gets details wrong. Each section below states a claim
# or recipe as it is commonly written, computes what it does — **with a few lines of NumPy written
# here, labelled "the claim"** — and puts it next to **lowbit**'s result, which models the formats and
# the real implementations bit for bit. Nothing labelled "lowbit" is computed by hand.

# %%
# %matplotlib inline
import math

import matplotlib.pyplot as plt
import numpy as np

import lowbit
from figures import checked


def f32_bits(x):
    return int(np.array([x], np.float32).view(np.uint32)[0])


def f32_from_bits(b):
    return np.array([b], np.uint32).view(np.float32)


# %% [markdown]
# ## 1. "Convert FP32 to FP16 by truncating the mantissa and flushing subnormals to zero"
#
# The claim: keep the top 10 of FP32's 23 mantissa bits, re-bias the exponent, and send anything
# below FP16's normal range to zero. IEEE conversion (and every GPU) rounds to nearest even and keeps
# FP16's subnormals (`docs/formats-reference.md §3.3`).
#
# - **1.000732421875** = 1 + 0.75 · 2⁻¹⁰ lies three quarters of the way from 1 to the next FP16 value.
#   Truncation gives **1.0**; rounding gives **1.0009765625** (`0x3C01`), a third of the error.
# - **1e-7** is below FP16's smallest normal (2⁻¹⁴ ≈ 6.1e-5) but above its smallest subnormal
#   (2⁻²⁴ ≈ 5.96e-8). Flushing gives **0**; rounding gives 2 · 2⁻²⁴ ≈ **1.19e-7** (`0x0002`).

# %%
def claim_fp32_to_fp16(x):
    """THE CLAIM (not lowbit): truncate the mantissa, flush what is below the normal range."""
    b = f32_bits(x)
    sign, exponent, mantissa = b >> 31, (b >> 23) & 0xFF, b & 0x7FFFFF
    e16 = exponent - 127 + 15
    if e16 <= 0:
        return sign << 15  # flushed to zero
    return (sign << 15) | (e16 << 10) | (mantissa >> 13)


for x in (1.000732421875, 1e-7):
    claim = claim_fp32_to_fp16(x)
    real = int(lowbit.encode(np.array([x], np.float32), "fp16")[0])
    decode = lambda c: float(lowbit.decode(np.array([c], np.uint16), "fp16", dtype=np.float64)[0])
    print(f"{x!r:>16}: claim {claim:#06x} = {decode(claim)!r:<14} lowbit {real:#06x} = {decode(real)!r}")

# %%
x = 1.000732421875

# %% tags=["assertions"]
assert claim_fp32_to_fp16(1.000732421875) == 0x3C00 and claim_fp32_to_fp16(1e-7) == 0x0000
assert lowbit.encode(np.array([1.000732421875, 1e-7], np.float32), "fp16").tolist() == [0x3C01, 0x0002]
assert lowbit.show(0x3C01, "fp16").value == 1.0009765625
assert lowbit.show(0x0002, "fp16").cls == "subnormal" and f"{lowbit.show(0x0002, 'fp16').value:.3g}" == "1.19e-07"
assert abs(1.0 - x) == 3 * abs(1.0009765625 - x)

# %% [markdown]
# ## 2. "Convert FP32 to BF16 with `(bits + 0x7FFF + lsb) >> 16`"
#
# The rounding-bias trick rounds to nearest even correctly for numbers, but it forgets NaN. A NaN
# whose payload sits only in the low 16 bits — `0x7F800001` — gains the bias `0x7FFF`, becomes
# `0x7F808000`, and its top half is **`0x7F80`: +Infinity**. The NaN `0xFFFFFFFF` wraps around 32 bits
# and becomes **`0x0000`: +0**. lowbit returns a NaN in every profile: `0x7FC0` (OCP, ml_dtypes: a
# quiet NaN), `0xFFFF`, or NVIDIA's `0x7FFF` (`docs/formats-reference.md §3.2`).

# %%
def claim_fp32_to_bf16(bits):
    """THE CLAIM (not lowbit): the rounding-bias trick, in 32-bit unsigned arithmetic."""
    lsb = (bits >> 16) & 1
    return ((bits + 0x7FFF + lsb) & 0xFFFFFFFF) >> 16


nans = [0x7F800001, 0xFFFFFFFF]
for b in nans:
    x = f32_from_bits(b)
    assert np.isnan(x[0])
    claim = claim_fp32_to_bf16(b)
    ocp, nvidia = int(lowbit.encode(x, "bf16")[0]), int(lowbit.encode(x, "bf16", profile="nvidia")[0])
    print(f"FP32 {b:#010x} (NaN): claim {claim:#06x} = {lowbit.show(claim, 'bf16').cls:4}  "
          f"lowbit {ocp:#06x} ({lowbit.show(ocp, 'bf16').cls}), nvidia profile {nvidia:#06x}")

# %%
# For ordinary numbers the trick is right: it agrees with lowbit on a sweep of 100 000 values.
sample = np.random.default_rng(0).normal(0, 1e3, 100_000).astype(np.float32)
bits = sample.view(np.uint32).astype(np.uint64)
trick = (((bits + 0x7FFF + ((bits >> 16) & 1)) & 0xFFFFFFFF) >> 16).astype(np.uint16)

# %% tags=["assertions"]
assert [claim_fp32_to_bf16(b) for b in nans] == [0x7F80, 0x0000]
assert lowbit.show(0x7F80, "bf16").cls == "inf" and lowbit.show(0x0000, "bf16").cls == "zero"
assert lowbit.encode(f32_from_bits(0x7F800001), "bf16").tolist() == [0x7FC0]
assert lowbit.encode(f32_from_bits(0xFFFFFFFF), "bf16").tolist() == [0xFFFF]
assert lowbit.encode(f32_from_bits(0x7F800001), "bf16", profile="nvidia").tolist() == [0x7FFF]
assert np.array_equal(trick, lowbit.encode(sample, "bf16"))

# %% [markdown]
# ## 3. "E4M3's exponent-all-ones, mantissa-zero pattern encodes 448"
#
# It does not. E4M3 (the OCP "FN" variant) spends its top exponent on numbers: `0x78` =
# `0 1111 000` is 2⁸ = **256**. 448 is `0x7E` = `0 1111 110` = 1.75 · 2⁸, and only `0x7F`/`0xFF`
# (mantissa all ones) are NaN. The claim mixes E4M3 up with IEEE-style formats, where exponent all
# ones means Inf or NaN: that is E5M2, where `0x7C` is +Inf.

# %%
for code, fmt in ((0x78, "e4m3"), (0x7E, "e4m3"), (0x7F, "e4m3"), (0x7C, "e5m2")):
    print(lowbit.show(code, fmt))

# %% tags=["assertions"]
assert (lowbit.show(0x78, "e4m3").value, lowbit.show(0x7E, "e4m3").value) == (256.0, 448.0)
assert lowbit.show(0x78, "e4m3").exponent_bits == "1111" and lowbit.show(0x78, "e4m3").mantissa == 0
assert lowbit.show(0x7F, "e4m3").cls == "nan" and lowbit.show(0x7C, "e5m2").cls == "inf"

# %% [markdown]
# ## 4. "The MXFP4 shared exponent is floor(log2(amax)), clamped to 255"
#
# The claim takes `code = min(floor(log2(amax)) + 127, 255)` with a float `log2`. Three things go
# wrong:
#
# 1. **No emax.** The OCP rule subtracts the element format's largest exponent (2 for E2M1): the
#    scale must map amax to at most 6, not to [1, 2). On a block whose amax is 6, the claim picks the
#    scale 4 (code `0x81`), so the elements use only E2M1's values up to 1.5 and the small ones
#    vanish; lowbit (`mxfp4:ocp`) picks 1 (code `0x7F`) and represents 6, −3, 1.5 and 0.5 exactly.
# 2. **Float log2.** In FP32, `log2` of the largest float below a power of two rounds up to the
#    integer: `log2(7.9999995)` is 3.0, so `floor` gives 3, not 2 — one binade off for every power
#    of two from 8 to 2³⁹ (and beyond). lowbit reads the exponent from the bits.
# 3. **255 is the NaN code.** A block holding an Inf makes the claim's code 255 (`log2(inf)` is inf);
#    the OCP rule and torchao also give `0xFF` — a NaN scale, so the whole block decodes as NaN —
#    while NVIDIA's TransformerEngine saturates to `0xFE`. Which one you get is a property of the
#    implementation, not of the format: lowbit has both.

# %%
def claim_mx_scale_code(amax):
    """THE CLAIM (not lowbit): floor(log2(amax)) in FP32, no emax, clamped to 255."""
    with np.errstate(divide="ignore"):
        e = np.floor(np.log2(np.float32(amax)))
    return int(min(e + 127, 255))


block = np.zeros(32, np.float32)
block[:4] = [6.0, -3.0, 1.5, 0.5]
block[4:] = np.linspace(-1, 1, 28)
claim_code = claim_mx_scale_code(np.abs(block).max())
claim_scale = 2.0 ** (claim_code - 127)
claim_back = lowbit.decode(lowbit.encode(block / np.float32(claim_scale), "e2m1"), "e2m1") * np.float32(claim_scale)
real = lowbit.explain(block, "mxfp4:ocp").groups[0]
print(f"claim : scale code {claim_code:#x} (x{claim_scale}), first four back {claim_back[:4]}")
print(f"lowbit: scale code {real.scale_code:#x} (x{real.scale}), first four back {real.dequantized[:4]}")

# %%
# float log2 just below a power of two
below8 = np.nextafter(np.float32(8), np.float32(0))
# a block holding an Inf
inf_block = block.copy()
inf_block[5] = np.inf

# %% tags=["assertions"]
assert (claim_code, real.scale_code) == (0x81, 0x7F)
assert real.dequantized[:4] == [6.0, -3.0, 1.5, 0.5]
assert claim_back[:4].tolist() == [6.0, -4.0, 2.0, 0.0]
assert np.count_nonzero(claim_back[4:]) < np.count_nonzero(np.array(real.dequantized[4:]))
assert float(np.log2(below8)) == 3.0 and claim_mx_scale_code(below8) - 127 == 3
assert lowbit.explain(np.full(32, below8), "mxfp4:ocp").groups[0].scale_exponent == 0  # floor(log2) = 2, minus emax 2
assert all(math.floor(np.log2(np.nextafter(np.float32(2.0**k), np.float32(0)))) == k for k in range(3, 40))
assert claim_mx_scale_code(np.inf) == 0xFF
assert lowbit.quantize(inf_block, "mxfp4:ocp").scale_codes.tolist() == [0xFF]
assert lowbit.quantize(inf_block, "mxfp4:te").scale_codes.tolist() == [0xFE]

# %% [markdown]
# ## 5. "NVFP4 has an FP32 block scale and flexible block sizes"
#
# NVFP4's block scale is stored in **UE4M3** — an 8-bit float with 3 mantissa bits, range 2⁻⁹ … 448 —
# and its block size is **16**, fixed (`docs/formats-reference.md §6`). The FP32 scale exists once per
# tensor, to bring the block scales into E4M3's range. The claim's FP32 block scale costs 32 bits per
# 16 elements (6 bits per element instead of 4.5) and hides the real recipe's main effect: storing the
# block scale in E4M3 without the tensor scale. On a tensor of small weights (N(0, 10⁻³)), every block
# scale amax/6 lies below half of E4M3's smallest subnormal (2⁻¹⁰ ≈ 9.8·10⁻⁴) and rounds to zero: the
# whole tensor is lost. lowbit's `nvfp4:te` applies the tensor scale first and keeps the SQNR of an
# ordinary tensor. And lowbit refuses any other block size for NVFP4.

# %%
rng = np.random.default_rng(5)
small = rng.normal(0, 1e-3, (16, 256)).astype(np.float32)


def claim_nvfp4(x, scale_in_e4m3):
    """THE CLAIM (not lowbit): block scale amax/6 per 16, kept in FP32 (or rounded to E4M3 with no
    tensor scale); elements rounded to E2M1 by lowbit.encode."""
    blocks = x.reshape(-1, 16)
    scale = np.abs(blocks).max(axis=1, keepdims=True) / np.float32(6)
    if scale_in_e4m3:
        scale = lowbit.decode(lowbit.encode(scale, "e4m3", saturate=True), "e4m3")
    safe = np.where(scale == 0, np.float32(1), scale)
    back = lowbit.decode(lowbit.encode(blocks / safe, "e2m1", saturate=True), "e2m1") * scale
    return back.reshape(x.shape)


def sqnr_db(x, y):
    x = x.astype(np.float64)
    err = np.sum((x - y) ** 2)
    return float(10 * np.log10(np.sum(x**2) / err))


fp32_claim = sqnr_db(small, claim_nvfp4(small, False))
e4m3_claim_back = claim_nvfp4(small, True)
real = lowbit.quantize(small, "nvfp4:te")
print(f"claim, FP32 block scales (6 bits/element):      SQNR {fp32_claim:.2f} dB")
print(f"claim, E4M3 block scales, no tensor scale:       {np.count_nonzero(e4m3_claim_back)} non-zero values of {small.size}")
print(f"lowbit nvfp4:te (UE4M3 block + FP32 tensor scale): SQNR {real.error()['sqnr_db']:.2f} dB, "
      f"tensor scale {real.tensor_scale}")

# %% tags=["assertions"]
for layout in ("g32", "g64", "group:8"):
    try:
        lowbit.quantize(small, "nvfp4:te", layout=layout)
    except ValueError as err:
        assert "block of 16" in str(err)
    else:
        raise AssertionError(f"nvfp4 accepted layout {layout}")

# %% tags=["assertions"]
assert (np.abs(small.reshape(-1, 16)).max(axis=1) / 6).max() < 2.0**-10
assert np.count_nonzero(e4m3_claim_back) == 0 and f"{sqnr_db(small, e4m3_claim_back):.1f}" == "0.0"
assert real.error()["sqnr_db"] > 19 and abs(real.error()["sqnr_db"] - fp32_claim) < 2
assert real.recipe.block_size == 16 and real.recipe.scale_format == "ue4m3"

# %% [markdown]
# ## 6. A per-tensor INT4 example, packed with even elements in the high nibble
#
# The eight weights 0.0723, −0.1541, 0.2890, −0.0312, 0.4156, −0.3678, 0.1234, −0.0891 are quantized
# per tensor with the textbook rule scale = amax / 7 (lowbit's `int4:common`: scale **0.059371**,
# codes 1, −3, 5, −1, 7, −6, 2, −2). The example then packs the even-indexed element into the **high**
# nibble: `0x1D 0x5F 0x7A 0x2E`. That is PyTorch tinygemm's input order, but ONNX, PyTorch's packed
# FP4, the MX/NVFP4 kernels and lowbit put element 0 in the **low** nibble: `0xD1 0xF5 0xA7 0xE2`
# (`docs/formats-reference.md §8.3`). A kernel reading the example's bytes in that convention swaps
# every pair, and the maximum error grows from **0.02964** — element 7, −0.0891 → −0.1187, just under
# the bound scale/2 = 0.029686 — to **0.7834** (element 5, −0.3678 read as +0.4156).

# %%
w = np.array([0.0723, -0.1541, 0.2890, -0.0312, 0.4156, -0.3678, 0.1234, -0.0891], np.float32)
q = lowbit.quantize(w, "int4:common")
signed = q.codes.astype(np.int8)
signed = np.where(signed > 7, signed - 16, signed)
claim_bytes = (q.codes[1::2] | (q.codes[0::2] << 4)).astype(np.uint8)  # THE CLAIM's packing: even -> high
swapped = lowbit.dequantize(claim_bytes, "int4:common", shape=w.shape, scales=q.scales)
err = q.error()
print(f"scale {q.scales[0]:.6f}; codes {signed.tolist()}")
print("lowbit packed (low nibble first):", [f"{b:#04x}" for b in q.packed])
print("the example's bytes (high first):", [f"{b:#04x}" for b in claim_bytes])
print(f"max error: {err['max_abs_error']:.5f} (exactly {err['max_abs_error_exact']}); "
      f"reading the example's bytes low-first: {np.abs(swapped - w).max():.4f}")

# %% tags=["assertions"]
assert f"{q.scales[0]:.6f}" == "0.059371" and q.scales[0] == np.float32(np.float32(0.4156) / np.float32(7))
assert signed.tolist() == [1, -3, 5, -1, 7, -6, 2, -2]
assert q.packed.tolist() == [0xD1, 0xF5, 0xA7, 0xE2] and claim_bytes.tolist() == [0x1D, 0x5F, 0x7A, 0x2E]
assert f"{err['max_abs_error']:.5f}" == "0.02964" and int(np.argmax(np.abs(q.dequantize() - w))) == 7
assert err["max_abs_error"] < q.scales[0] / 2 and f"{q.scales[0] / 2:.6f}" == "0.029686"
assert f"{np.abs(swapped - w).max():.4f}" == "0.7834" and swapped[5] == q.dequantize()[4]

# %%
fig, ax = plt.subplots(figsize=(8, 4))
idx = np.arange(8)
ax.plot(idx, w, "ko", label="weights")
ax.plot(idx, q.dequantize(), "s", mfc="none", markersize=9, label="lowbit int4:common, low nibble first")
ax.plot(idx, swapped, "rx", label="the example's bytes read low nibble first")
ax.set_xlabel("weight [index]")
ax.set_ylabel("value [unitless]")
ax.set_title("Per-tensor INT4: right nibble order vs swapped pairs")
ax.legend(fontsize=9)
checked(fig)
plt.show()
