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
# # Anatomy of a float
#
# A floating-point code is three bit fields: a **sign**, an **exponent** (stored with a bias) and a
# **mantissa** (the fraction bits after an implicit leading 1). This notebook takes the formats of
# machine learning apart with `lowbit.show` and `lowbit.decode`, so every number below is computed
# by lowbit's model of the format, not typed in. The facts per format, with their sources, are in
# `docs/formats-reference.md §1` and `§4`.
#
# Every number the text states is pinned by an `assert` in the cell next to it: if the library ever
# disagrees, this notebook fails in CI.

# %%
# %matplotlib inline
import math

import matplotlib.pyplot as plt
import numpy as np

import lowbit
from figures import checked

FORMATS = ["fp32", "bf16", "fp16", "e4m3", "e5m2", "e2m1", "e8m0"]

# %% [markdown]
# ## The bit fields of 1.0
#
# `lowbit.show(value, format)` encodes a value and returns the fields of its code as data. The
# number 1.0 is `2^0 × 1.0`: its exponent field holds exactly the bias and its mantissa is zero.

# %%
ones = {name: lowbit.show(1.0, name) for name in FORMATS}
for f in ones.values():
    print(f)

# %% [markdown]
# The biases are 127 (FP32, BF16, E8M0), 15 (FP16, E5M2), 7 (E4M3) and 1 (E2M1). BF16 is the top
# half of FP32 — same 8 exponent bits, 7 mantissa bits instead of 23 — so 1.0 is `0x3F80` in BF16
# and `0x3F800000` in FP32. E8M0 has neither sign nor mantissa: it is only an exponent, a power of
# two (the scale of the MX block formats, notebook 5).

# %% tags=["assertions"]
assert {n: f.bias for n, f in ones.items()} == {"fp32": 127, "bf16": 127, "fp16": 15, "e4m3": 7, "e5m2": 15,
                                                "e2m1": 1, "e8m0": 127}
assert all(f.exponent == f.bias and f.mantissa == 0 and f.value == 1.0 for f in ones.values())
assert (ones["bf16"].code, ones["fp32"].code) == (0x3F80, 0x3F800000)
assert ones["e8m0"].sign is None and ones["e8m0"].mantissa_bits == ""
assert [(lowbit.formats[n].exponent_bits, lowbit.formats[n].mantissa_bits) for n in FORMATS] == \
    [(8, 23), (8, 7), (5, 10), (4, 3), (5, 2), (2, 1), (8, 0)]

# %% [markdown]
# Drawn as boxes, one row per format (the field widths are lowbit's `Format.exponent_bits` and
# `mantissa_bits`):

# %%
fig, ax = plt.subplots(figsize=(10, 3.6))
colours = {"sign": "#d62728", "exponent": "#1f77b4", "mantissa": "#2ca02c"}
for row, name in enumerate(FORMATS):
    f = ones[name]
    start = 0
    for field, bits in (("sign", f.sign_bits), ("exponent", f.exponent_bits), ("mantissa", f.mantissa_bits)):
        for k, bit in enumerate(bits):
            ax.add_patch(plt.Rectangle((start + k, row - 0.4), 1, 0.8, facecolor=colours[field], alpha=0.35,
                                       edgecolor="black", linewidth=0.4, label=field if row == 0 and k == 0 else None))
            if len(f.bits) <= 16:
                ax.text(start + k + 0.5, row, bit, ha="center", va="center", fontsize=9)
        start += len(bits)
ax.set_xlim(0, 32)
ax.set_ylim(len(FORMATS) - 0.5, -0.5)
ax.set_yticks(range(len(FORMATS)), [f"{n} ({lowbit.formats[n].bits} bits)" for n in FORMATS])
ax.set_xlabel("bit position, most significant first [bit]")
ax.set_ylabel("format [name]")
ax.set_title("The code of 1.0 in each format: sign, exponent and mantissa fields")
ax.legend(loc="lower right")
ax.plot([], [])  # the boxes are patches; this marks the axes as plotted
checked(fig)
plt.show()

# %% [markdown]
# ## Range: largest, smallest normal, smallest subnormal
#
# The largest finite value, the smallest normal (exponent field 1, mantissa 0) and the smallest
# subnormal (exponent field 0, mantissa 1) are properties of each `lowbit.Format`:

# %%
print(f"{'format':8} {'max':>14} {'smallest normal':>16} {'smallest subnormal':>19}")
for name in FORMATS:
    f = lowbit.formats[name]
    sub = "none" if f.smallest_subnormal is None else f"2^{int(math.log2(f.smallest_subnormal))}"
    print(f"{name:8} {f.max:14.8g} {'2^%d' % int(math.log2(f.smallest_normal)):>16} {sub:>19}")

# %% [markdown]
# - **E4M3** reaches 448, its smallest normal is 2⁻⁶ = 0.015625 and its smallest subnormal 2⁻⁹.
# - **E5M2** trades a mantissa bit for range: up to 57344, down to 2⁻¹⁶.
# - **E2M1** (FP4) has 15 distinct values in all: ±{0, 0.5, 1, 1.5, 2, 3, 4, 6}.
# - **FP16** tops out at 65504 and goes down to 2⁻²⁴; **BF16** keeps FP32's range (normal down to
#   2⁻¹²⁶, largest about 3.39 × 10³⁸) with less precision.
# - **E8M0** has no subnormals and no zero: its codes are 2⁻¹²⁷ … 2¹²⁷ and one NaN.

# %%
f = lowbit.formats
e2m1_values = lowbit.decode(np.arange(16, dtype=np.uint8), "e2m1", dtype=np.float64)

# %% tags=["assertions"]
assert (f["e4m3"].max, f["e4m3"].smallest_normal, f["e4m3"].smallest_subnormal) == (448.0, 2**-6, 2**-9)
assert (f["e5m2"].max, f["e5m2"].smallest_normal, f["e5m2"].smallest_subnormal) == (57344.0, 2**-14, 2**-16)
assert (f["e2m1"].max, f["e2m1"].smallest_normal, f["e2m1"].smallest_subnormal) == (6.0, 1.0, 0.5)
assert (f["fp16"].max, f["fp16"].smallest_normal, f["fp16"].smallest_subnormal) == (65504.0, 2**-14, 2**-24)
assert f["bf16"].smallest_normal == 2**-126 and f"{f['bf16'].max:.3g}" == "3.39e+38"
assert (f["e8m0"].max, f["e8m0"].smallest_normal, f["e8m0"].smallest_subnormal) == (2.0**127, 2.0**-127, None)
assert sorted(set(np.abs(e2m1_values).tolist())) == [0, 0.5, 1, 1.5, 2, 3, 4, 6]
assert len(set(e2m1_values.tolist())) == 15  # +0 and -0 compare equal: 16 codes, 15 values


# %% [markdown]
# ## Every representable value on one line
#
# The 8-bit and 4-bit formats are small enough to decode every code. Here are all positive finite
# values of each, on a logarithmic axis: the values are evenly spaced within a binade (between two
# powers of two) and the spacing doubles from one binade to the next.

# %%
def positive_values(name):
    fmt = lowbit.formats[name]
    codes = np.arange(1 << fmt.bits, dtype=np.uint64).astype(fmt.code_dtype)
    v = lowbit.decode(codes, name, dtype=np.float64)
    return np.unique(v[np.isfinite(v) & (v > 0)])


SMALL = ["e2m1", "e4m3", "e4m3fnuz", "e5m2", "e5m2fnuz", "e8m0"]
values = {name: positive_values(name) for name in SMALL + ["fp16", "bf16"]}
fig, ax = plt.subplots(figsize=(10, 3.6))
ax.eventplot([np.log2(values[n]) for n in SMALL], lineoffsets=range(len(SMALL)), linelengths=0.7, linewidths=0.6)
ax.set_yticks(range(len(SMALL)), SMALL)
ax.set_xlabel("value, log2 scale [power of two]")
ax.set_ylabel("format [name]")
ax.set_xlim(-18, 18)
ax.set_title("Every positive finite value of the 8-bit and 4-bit formats (E8M0 goes on to 2^-127 and 2^127)")
checked(fig)
plt.show()

# %% [markdown]
# ## Density per binade
#
# Counting the values in each binade [2ᵏ, 2ᵏ⁺¹): a normal binade holds 2^mantissa_bits values — 8
# for E4M3, 4 for E5M2, 2 for E2M1, 1024 for FP16, 128 for BF16 — and the subnormal binades below
# hold half, a quarter, … of that, down to a single value (the smallest subnormal). E8M0 has one
# value per binade: it is only the powers of two.

# %%
def per_binade(v):
    k, counts = np.unique(np.floor(np.log2(v)).astype(int), return_counts=True)
    return dict(zip(k.tolist(), counts.tolist()))


density = {n: per_binade(v) for n, v in values.items()}
fig, ax = plt.subplots(figsize=(10, 4))
for n in ["e2m1", "e4m3", "e5m2", "fp16", "bf16"]:
    ks = sorted(density[n])
    ax.step(ks, [density[n][k] for k in ks], where="mid", label=n)
ax.set_yscale("log", base=2)
ax.set_xlim(-40, 20)
ax.set_xlabel("binade k, values in [2^k, 2^(k+1)) [power of two]")
ax.set_ylabel("values in the binade [count, log2 scale]")
ax.set_title("How many values each binade holds")
ax.legend()
checked(fig)
plt.show()

# %% tags=["assertions"]
assert density["e4m3"][0] == 8 and density["e5m2"][0] == 4 and density["e2m1"][0] == 2
assert density["fp16"][0] == 1024 and density["bf16"][0] == 128
assert [density["e4m3"][k] for k in (-9, -8, -7)] == [1, 2, 4]  # subnormal binades of E4M3
assert density["e4m3"][8] == 7  # 0x7F is NaN, so the top binade ends at 448 = 0x7E
assert set(density["e8m0"].values()) == {1} and len(density["e8m0"]) == 255

# %% [markdown]
# ## Special values
#
# The formats differ most in what they do with their special codes:
#
# - **E4M3 ("FN", finite):** no infinity. Only `S.1111.111` is NaN — one NaN per sign, `0x7F` and
#   `0xFF` — so `0x7E` (exponent all ones!) is an ordinary number, 448.
# - **E5M2** is IEEE-like: exponent all ones is ±Inf (mantissa 0) or NaN (mantissa ≠ 0): two
#   infinities, six NaNs.
# - The **FNUZ** variants (E4M3FNUZ, E5M2FNUZ: "finite, no negative zero") give the negative-zero
#   pattern `0x80` to the single NaN and raise the bias by one (8 and 16): E4M3FNUZ tops out at 240,
#   and both gain a binade at the bottom.

# %%
for code, name in [(0x7E, "e4m3"), (0x7F, "e4m3"), (0xFF, "e4m3"), (0x7C, "e5m2"), (0x7D, "e5m2"),
                   (0x80, "e4m3fnuz"), (0x7F, "e4m3fnuz"), (0x80, "e5m2fnuz"), (0x7F, "e5m2fnuz")]:
    print(lowbit.show(code, name))

# %%
e4m3, e5m2, e4fnuz, e5fnuz = (lowbit.formats[n] for n in ("e4m3", "e5m2", "e4m3fnuz", "e5m2fnuz"))

# %% tags=["assertions"]
assert (e4m3.has_inf, e4m3.nan_codes, lowbit.show(0x7E, "e4m3").value) == (False, [0x7F, 0xFF], 448.0)
assert (e5m2.inf_codes, e5m2.nan_codes) == ([0x7C, 0xFC], [0x7D, 0x7E, 0x7F, 0xFD, 0xFE, 0xFF])
assert (e4fnuz.nan_codes, e4fnuz.has_negative_zero, e4fnuz.bias, e4fnuz.max) == ([0x80], False, 8, 240.0)
assert (e5fnuz.nan_codes, e5fnuz.has_negative_zero, e5fnuz.bias, e5fnuz.max) == ([0x80], False, 16, 57344.0)
assert (e4fnuz.smallest_subnormal, e5fnuz.smallest_subnormal) == (2**-10, 2**-17)
assert lowbit.show(0x80, "e4m3fnuz").cls == "nan" and lowbit.show(0x80, "e4m3").value == 0.0
