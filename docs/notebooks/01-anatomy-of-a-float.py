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
from IPython.display import Markdown, display

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
# ## Decoding a code: the formula, worked in every format
#
# A normal code stands for `(−1)^sign × 2^(exponent − bias) × (1 + mantissa / 2^m)`, where m is the
# number of mantissa bits; a **subnormal** (exponent field 0) for `(−1)^sign × 2^(1 − bias) ×
# (mantissa / 2^m)`: no implicit 1, and the exponent of the smallest normal. E8M0 is only the power
# `2^(exponent − 127)`, and the integer formats are two's complement. The table takes one value per
# format, encodes it with `lowbit.show`, and evaluates the formula **in this cell** from the fields
# lowbit returns; the assertion below checks that the formula gives lowbit's decoded value in every
# row.

# %%
WORKED = [("fp32", -0.3), ("bf16", -0.3), ("fp16", -0.3), ("e4m3", -0.3), ("e4m3", 0.005), ("e5m2", -0.3),
          ("e3m2", -2.7), ("e2m3", -2.7), ("e2m1", -2.7), ("e2m1", 0.4), ("e8m0", 0.3), ("ue4m3", 0.3),
          ("int8", -13.0), ("int4", -3.0)]


def by_formula(f, fmt):
    """The value of the fields f by the formula above (not lowbit's decode)."""
    spec = lowbit.formats[fmt]
    if spec.kind == "integer":
        width = spec.bits
        value = f.code - (1 << width) if spec.signed and f.code >> (width - 1) else f.code
        return value, f"two's complement of {f.bits}"
    sign = -1 if f.sign else 1
    m = spec.mantissa_bits
    if spec.mantissa_bits == 0 and not spec.signed:  # E8M0: a power of two
        return 2.0 ** (f.exponent - f.bias), f"2^({f.exponent} − {f.bias})"
    if f.exponent == 0:
        return (sign * 2.0 ** (1 - f.bias) * (f.mantissa / 2**m),
                f"{'−' if f.sign else ''}2^(1 − {f.bias}) × {f.mantissa}/{2**m}")
    return (sign * 2.0 ** (f.exponent - f.bias) * (1 + f.mantissa / 2**m),
            f"{'−' if f.sign else ''}2^({f.exponent} − {f.bias}) × (1 + {f.mantissa}/{2**m})")


worked_rows = ["| format | x | code | bits (sign exponent mantissa) | class | formula | value |", "|---|---|---|---|---|---|---|"]
worked = []
for fmt, x in WORKED:
    f = lowbit.show(x, fmt)
    value, formula = by_formula(f, fmt)
    worked.append((fmt, x, f, value))
    bits = " ".join(b for b in (f.sign_bits, f.exponent_bits, f.mantissa_bits) if b) or f.bits
    worked_rows.append(f"| {fmt} | {x:g} | `{f.code:#x}` | `{bits}` | {f.cls} | {formula} | {value:.9g} |")
display(Markdown("\n".join(worked_rows)))

# %% tags=["assertions"]
assert all(value == f.value for _, _, f, value in worked)
assert all(value == lowbit.decode(np.array([f.code], lowbit.formats[fmt].code_dtype), fmt, dtype=np.float64)[0]
           for fmt, _, f, value in worked)
assert {(fmt, x): f.cls for fmt, x, f, _ in worked}[("e4m3", 0.005)] == "subnormal"
assert {(fmt, x): f.value for fmt, x, f, _ in worked}[("e2m1", -2.7)] == -3.0

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
# ## The grids on a linear axis: floats against integers
#
# On the logarithmic axis above every float format looks evenly spread. On a **linear** axis, with
# each format scaled so that its largest value is 1 (as a scale factor would put it), the difference
# from an integer grid is plain: INT4 and INT8 space their values evenly from 0 to the top, while
# E2M1 and E4M3 crowd theirs towards zero and leave wide gaps near the top. E2M1 has the same 8
# non-negative magnitudes as INT4 has non-negative codes, but its largest gap (between 4/6 and 6/6)
# is twice INT4's step and its smallest is less than INT4's step.

# %%
def nonnegative_grid(name):
    fmt = lowbit.formats[name]
    codes = np.arange(1 << fmt.bits, dtype=np.uint64).astype(fmt.code_dtype)
    v = lowbit.decode(codes, name, dtype=np.float64)
    v = np.unique(v[np.isfinite(v) & (v >= 0)])
    return v / v.max()


GRID_PAIRS = [("e2m1", "int4"), ("e4m3", "int8")]
fig, axes = plt.subplots(2, 1, figsize=(10, 4.2))
for ax, pair in zip(axes, GRID_PAIRS):
    grids = [nonnegative_grid(n) for n in pair]
    ax.eventplot(grids, lineoffsets=[1, 0], linelengths=0.7, linewidths=0.8 if "e4m3" in pair else 1.6,
                 colors=["C1", "C0"])
    ax.set_yticks([1, 0], [f"{n} ({len(g)} values)" for n, g in zip(pair, grids)])
    ax.set_xlim(-0.01, 1.01)
    ax.set_xlabel("value / largest value of the format [linear, unitless]")
    ax.set_ylabel("format [name]")
    ax.set_title(f"{pair[0].upper()} against {pair[1].upper()}, non-negative values")
fig.tight_layout()
checked(fig)
plt.show()
e2m1_grid, int4_grid = nonnegative_grid("e2m1"), nonnegative_grid("int4")

# %% tags=["assertions"]
assert len(e2m1_grid) == len(int4_grid) == 8
assert np.allclose(np.diff(int4_grid), 1 / 7) and np.isclose(np.diff(e2m1_grid).max(), 2 / 6)
assert np.diff(e2m1_grid).max() > 2 * (1 / 7) and np.diff(e2m1_grid).min() < 1 / 7

# %% [markdown]
# ## Relative spacing: ulp(x) / x
#
# What a rounding costs is the gap to the next value relative to the value itself, `ulp(x) / x`. For
# a float format it is a sawtooth between `2^-m` and `2^-(m+1)` across the whole normal range — the
# same relative precision at 0.02 as at 400 — and it rises only among the subnormals at the bottom.
# For an integer grid (INT8 scaled to the same top, 448, as E4M3) it is `1/k` at the k-th value: far
# finer than E4M3 near the top, far coarser near zero. E4M3's relative gap lies between 1/15 and 1/8
# in every normal binade, so INT8 is finer everywhere from its 16th value up (1/16 < 1/15) and
# coarser everywhere below its 8th: in the bottom 8/127 of the range the float format is the more
# precise one, in the top seven eighths the integer format.

# %%
def relative_spacing(v):
    v = np.unique(v[v > 0])
    return v[:-1], np.diff(v) / v[:-1]


e4m3_all = positive_values("e4m3")
int8_scaled = np.arange(1, 128) * (448 / 127)
fig, ax = plt.subplots(figsize=(9, 4.5))
for label, v, style in (("E4M3", e4m3_all, "C1.-"), ("E5M2 (x 448/57344)", positive_values("e5m2") * 448 / 57344, "C2.-"),
                        ("INT8 (x 448/127)", int8_scaled, "C0.-")):
    x, r = relative_spacing(v)
    ax.loglog(x, r, style, label=label, markersize=3, linewidth=0.8)
ax.set_xlabel("value x (log scale) [unitless]")
ax.set_ylabel("gap to the next value / x (log scale) [ratio]")
ax.set_title("Relative spacing ulp(x)/x: constant for floats in their normal range, 1/k for integers")
ax.legend()
checked(fig)
plt.show()
x4, r4 = relative_spacing(e4m3_all)
normal = x4 >= lowbit.formats["e4m3"].smallest_normal
xi, ri = relative_spacing(int8_scaled)

# %% tags=["assertions"]
assert np.isclose(r4[normal].max(), 2**-3) and np.isclose(r4[normal].min(), 2**-3 / (1 + 7 / 8))
assert np.allclose(ri, 1 / np.arange(1, 127))
finer_from = int(np.argmax(ri < r4[normal].min())) + 1     # the first k where INT8's 1/k beats E4M3's finest
coarser_to = int(np.flatnonzero(ri > r4[normal].max() * (1 + 1e-9))[-1]) + 1  # the last k where it is worse than E4M3's coarsest
assert np.isclose(r4[normal].min(), 1 / 15) and (finer_from, coarser_to) == (16, 7)

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


# %% [markdown]
# ## The 256 codes of E4M3 and E5M2
#
# Every code of the two FP8 formats, decoded by lowbit: the row is the high nibble of the code, the
# column the low nibble (code `0x3A` is row `3_`, column `_A`). The first row holds the subnormals
# and zero; the sign bit makes the lower half of each table the negatives of the upper half. E4M3
# has NaN only at `0x7F` and `0xFF`, so its last row before the negatives ends in 448; E5M2 spends
# its top exponent on ±Inf (`0x7C`, `0xFC`) and NaNs.

# %%
def code_table(name):
    codes = np.arange(256, dtype=np.uint8)
    values = lowbit.decode(codes, name, dtype=np.float64)

    def cell(v):
        if np.isnan(v):
            return "NaN"
        if np.isinf(v):
            return "−Inf" if v < 0 else "Inf"
        return f"{v:.3g}".replace("-", "−")

    head = "| " + name.upper() + " | " + " | ".join(f"_{c:X}" for c in range(16)) + " |"
    rows = [head, "|" + "---|" * 17]
    for high in range(16):
        rows.append(f"| **{high:X}_** | " + " | ".join(cell(values[16 * high + low]) for low in range(16)) + " |")
    return values, "\n".join(rows)


e4m3_table, e4m3_md = code_table("e4m3")
e5m2_table, e5m2_md = code_table("e5m2")
display(Markdown(e4m3_md))
display(Markdown(e5m2_md))

# %% tags=["assertions"]
assert e4m3_table[0x7E] == 448 and np.isnan(e4m3_table[0x7F]) and e4m3_table[0x01] == 2**-9
assert e4m3_table[0x38] == 1.0 and e4m3_table[0x3A] == 1.25 and e4m3_table[0xB8] == -1.0
assert np.isinf(e5m2_table[0x7C]) and np.isnan(e5m2_table[0x7D]) and e5m2_table[0x3C] == 1.0
assert np.sum(np.isnan(e4m3_table)) == 2 and np.sum(np.isnan(e5m2_table)) == 6
