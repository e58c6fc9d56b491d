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
# # Rounding, overflow and NaN
#
# Converting a number into a narrow format means choosing one of the two codes around it (rounding),
# deciding what happens above the largest value (overflow), and deciding what a NaN becomes. Each of
# these choices differs between implementations, and lowbit models each of them bit for bit
# (`docs/formats-reference.md §4.1`, `§4.6`, `§9`). All the conversions below are
# `lowbit.encode` / `lowbit.decode` calls.

# %%
# %matplotlib inline
import matplotlib.pyplot as plt
import numpy as np

import lowbit
from figures import checked


def e4m3(x, **kw):
    """x (float64) -> E4M3 -> the value it decodes to."""
    return lowbit.decode(lowbit.encode(np.asarray(x, np.float64), "e4m3", **kw), "e4m3", dtype=np.float64)


# %% [markdown]
# ## Four rounding modes
#
# Near 1.0 the E4M3 values are 1, 1.125, 1.25, … (three mantissa bits: steps of 1/8). An input between
# two of them goes
#
# - **RNE** (round to nearest, ties to even): to the nearer one; a tie goes to the code whose last
#   mantissa bit is 0. 1.0625, halfway between 1 and 1.125, becomes **1.0**; 1.1875, halfway between
#   1.125 and 1.25, becomes **1.25**.
# - **RNA** (nearest, ties away from zero): the ties go up in magnitude: 1.0625 → **1.125**.
# - **RTZ** (toward zero, truncation): always the smaller magnitude: 1.1875 → **1.125**, −1.0625 → **−1.0**.

# %%
ties = np.array([1.0625, 1.1875, -1.0625])
table = {mode: e4m3(ties, rounding=mode) for mode in ("rne", "rna", "rtz")}
for mode, out in table.items():
    print(f"{mode}: {ties} -> {out}")

# %% tags=["assertions"]
assert table["rne"].tolist() == [1.0, 1.25, -1.0]
assert table["rna"].tolist() == [1.125, 1.25, -1.125]
assert table["rtz"].tolist() == [1.0, 1.125, -1.0]

# %%
x = np.linspace(0.97, 1.28, 1200)
fig, ax = plt.subplots(figsize=(9, 4.5))
for mode, offset in (("rne", 0.0), ("rna", 0.004), ("rtz", -0.004)):
    ax.plot(x, e4m3(x, rounding=mode) + offset, label=f"{mode} (drawn {offset:+.3f} apart)")
grid = e4m3(np.array([1.0, 1.125, 1.25]))
ax.plot(grid, grid, "ko", label="E4M3 values")
for tie in (1.0625, 1.1875):
    ax.axvline(tie, color="grey", linestyle=":", linewidth=0.8)
ax.set_xlabel("input x [unitless]")
ax.set_ylabel("E4M3 value x becomes [unitless]")
ax.set_title("RNE, RNA and RTZ into E4M3 near 1.0 (dotted: the ties)")
ax.legend()
checked(fig)
plt.show()

# %% [markdown]
# ## Stochastic rounding
#
# Stochastic rounding rounds up with probability equal to the distance from the lower neighbour, in
# units of the gap, using random bits the caller supplies (`rounding="stochastic"`, one `uint32`
# per element). 1.03 lies 0.03 / 0.125 = 24 % of the way from 1 to 1.125, so it should round up about
# 24 % of the time, and the average of many roundings is 1.03: stochastic rounding is unbiased,
# where RNE always gives 1.0.

# %%
rng = np.random.default_rng(2026)
n = 100_000
bits = rng.integers(0, 2**32, n, dtype=np.uint32)
sr = e4m3(np.full(n, 1.03), rounding="stochastic", random_bits=bits)
up = float(np.mean(sr == 1.125))
print(f"rounded up {up:.2%} of the time, mean {sr.mean():.5f}")

# %% tags=["assertions"]
assert set(sr.tolist()) == {1.0, 1.125}
assert abs(up - 0.24) < 0.005 and abs(sr.mean() - 1.03) < 0.001
assert e4m3([1.03]).tolist() == [1.0]

# %%
xs = np.linspace(1.0, 1.125, 26)
m = 4000
frac = [np.mean(e4m3(np.full(m, v), rounding="stochastic",
                     random_bits=rng.integers(0, 2**32, m, dtype=np.uint32)) == 1.125) for v in xs]
fig, ax = plt.subplots(figsize=(7, 4))
ax.plot(xs, frac, "o", label=f"lowbit, {m} draws per point")
ax.plot(xs, (xs - 1.0) / 0.125, "k--", label="(x - 1) / 0.125")
ax.set_xlabel("input x between the E4M3 values 1 and 1.125 [unitless]")
ax.set_ylabel("share rounded up to 1.125 [fraction]")
ax.set_title("Stochastic rounding rounds up in proportion to the distance")
ax.legend()
checked(fig)
plt.show()

# %% [markdown]
# ## Overflow, with and without saturation
#
# E4M3 has no infinity. The OCP FP8 specification (OFP8 v1.0) defines **both** overflow modes and
# leaves the choice to the implementation: non-saturating, where a value that rounds above 448
# becomes **NaN** (code `0x7F`), and saturating, where it is clamped to **448** (`0x7E`). lowbit's
# `saturate=False` (its default, and its `ocp` profile) is the non-saturating mode; `saturate=True`
# the saturating one. Hopper's `cvt` to FP8 exists only in the saturating form (the `nvidia`
# profile below). The
# boundary is the midpoint between 448 and the next value the format would have (480): 464 still
# rounds to 448 (a tie, to even), anything above it overflows. E5M2 does have an infinity, so there
# the non-saturating result is +Inf (`0x7C`) and the saturating one is 57344 (`0x7B`).

# %%
over = np.array([448.0, 464.0, 464.5, 500.0, 1e6])
plain, sat = lowbit.encode(over, "e4m3"), lowbit.encode(over, "e4m3", saturate=True)
print("e4m3        ", [hex(c) for c in plain])
print("e4m3 satfinite", [hex(c) for c in sat])
e5 = lowbit.encode(np.array([1e6]), "e5m2"), lowbit.encode(np.array([1e6]), "e5m2", saturate=True)

# %% tags=["assertions"]
assert plain.tolist() == [0x7E, 0x7E, 0x7F, 0x7F, 0x7F] and sat.tolist() == [0x7E] * 5
assert (int(e5[0][0]), int(e5[1][0])) == (0x7C, 0x7B)
assert lowbit.decode(np.array([0x7B], np.uint8), "e5m2")[0] == 57344.0

# %%
x = np.linspace(300, 600, 1201)
fig, ax = plt.subplots(figsize=(8, 4))
nonsat = e4m3(x)
ax.plot(x, e4m3(x, saturate=True), label="saturate=True: clamped to 448")
ax.plot(x[np.isfinite(nonsat)], nonsat[np.isfinite(nonsat)], "--", label="saturate=False (finite results)")
ax.plot(x[np.isnan(nonsat)], np.full(np.isnan(nonsat).sum(), 470.0), "r|", markersize=6,
        label="saturate=False: NaN (drawn at 470)")
ax.axvline(464, color="grey", linestyle=":")
ax.set_xlabel("input x [unitless]")
ax.set_ylabel("E4M3 value x becomes [unitless]")
ax.set_title("E4M3 overflow: NaN above 464 unless saturating")
ax.legend()
checked(fig)
plt.show()

# %% [markdown]
# ## Double rounding: FP64 → FP32 → E4M3 is not FP64 → E4M3
#
# Take x = 1.0625 + 2⁻³⁰ (in FP64). It lies just **above** the E4M3 tie between 1 and 1.125, so
# rounding it directly gives **1.125**. But FP32 keeps only 23 mantissa bits: rounding x to FP32
# first drops the 2⁻³⁰ and lands exactly **on** the tie, 1.0625, which RNE then sends to the even
# neighbour, **1.0**. `lowbit.encode` converts an FP64 array directly (it never rounds to FP32 on
# the way), so both paths can be computed.

# %%
x = np.array([1.0625 + 2.0**-30], np.float64)
direct = e4m3(x)
via_fp32 = lowbit.decode(lowbit.encode(x.astype(np.float32), "e4m3"), "e4m3", dtype=np.float64)
x32 = lowbit.decode(lowbit.encode(x, "fp32"), "fp32", dtype=np.float64)
print(f"x = {x[0]!r}; FP64 -> E4M3 = {direct[0]}; FP64 -> FP32 = {x32[0]!r} -> E4M3 = {via_fp32[0]}")

# %% tags=["assertions"]
assert x[0] != 1.0625 and x32[0] == 1.0625
assert (direct[0], via_fp32[0]) == (1.125, 1.0)

# %% [markdown]
# ## What implementations do with NaN and Inf: the profiles
#
# The formats' specifications leave some outputs open, and libraries fill them differently.
# `profile=` makes lowbit convert as a given implementation does (`lowbit.profiles`):
#
# | FP32 input → | `ocp` | `nvidia` (satfinite) | `nvidia-nosat` | `ml_dtypes` | `pytorch-cpu` |
# |---|---|---|---|---|---|
# | E4M3, +Inf | NaN `0x7F` | **448** `0x7E` | NaN `0x7F` | NaN `0x7F` | NaN `0x7F` |
# | E4M3, −NaN | `0xFF` | `0x7F` (sign dropped) | `0x7F` | `0xFF` | `0xFF` |
# | E5M2, +Inf | Inf `0x7C` | **57344** `0x7B` | Inf `0x7C` | Inf `0x7C` | Inf `0x7C` |
# | E5M2, +NaN | `0x7E` | `0x7F` | `0x7F` | `0x7E` | `0x7F` |
# | BF16, +NaN | `0x7FC0` | `0x7FFF` | `0x7FFF` | `0x7FC0` | **`0xFFFF`** |
#
# NVIDIA's saturating conversion (`cvt.rn.satfinite`) turns even an infinity into the largest
# finite value, and it never keeps the sign of a NaN; PyTorch on the CPU gives `0xFFFF` for every
# NaN converted to BF16 (`docs/formats-reference.md §3.2`). The `ocp` column is lowbit's `ocp`
# profile: OFP8's non-saturating mode for the FP8 rows. OCP does not specify BF16 at all, so for the
# BF16 row that profile follows IEEE 754's conversion rules (a quiet NaN, `0x7FC0`) — the column's
# name does not make it an OCP rule. The table is computed here, and the profile's stated sources
# are checked:

# %%
special = np.array([np.inf, -np.nan, np.nan], np.float32)
names = ["ocp", "nvidia", "nvidia-nosat", "ml_dtypes", "pytorch-cpu"]
got = {(fmt, p): lowbit.encode(special, fmt, profile=p).tolist() for fmt in ("e4m3", "e5m2", "bf16") for p in names}
for (fmt, p), codes in got.items():
    print(f"{fmt:5} {p:13} +Inf {codes[0]:#06x}  -NaN {codes[1]:#06x}  +NaN {codes[2]:#06x}")

# %% tags=["assertions"]
assert np.signbit(special[1])  # -NaN: the sign bit is set

# %%
ocp_source = lowbit.profiles["ocp"].source
print(ocp_source)

# %% tags=["assertions"]
assert [got["e4m3", p][0] for p in names] == [0x7F, 0x7E, 0x7F, 0x7F, 0x7F]
assert [got["e4m3", p][1] for p in names] == [0xFF, 0x7F, 0x7F, 0xFF, 0xFF]
assert [got["e5m2", p][0] for p in names] == [0x7C, 0x7B, 0x7C, 0x7C, 0x7C]
assert [got["e5m2", p][2] for p in names] == [0x7E, 0x7F, 0x7F, 0x7E, 0x7F]
assert [got["bf16", p][2] for p in names] == [0x7FC0, 0x7FFF, 0x7FFF, 0x7FC0, 0xFFFF]
assert "OFP8" in ocp_source and "non-saturating mode" in ocp_source
assert "IEEE 754-2019 for FP32/BF16/FP16" in ocp_source
