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
# # Integer quantization
#
# An integer quantizer stores `q = clamp(round(x / scale) + zero_point)` and gives back
# `(q − zero_point) × scale`. Everything interesting is in **which elements share a scale** (the
# granularity), **whether there is a zero point** (symmetric or asymmetric) and **how the 4-bit codes
# are packed into bytes**. The recipes used here are lowbit's models of torchao's and GPTQ's
# quantizers (`docs/formats-reference.md §8.2`, `§8.3`); `q.error()` gives the exact error metrics of
# the round trip (the oracle's rational arithmetic).

# %%
# %matplotlib inline
import matplotlib.pyplot as plt
import numpy as np

import lowbit
from figures import checked

# %% [markdown]
# ## A weight matrix with outlier channels
#
# 64 output channels × 256 inputs, N(0, 0.02), except that four output channels (rows 5, 21, 40 and
# 59) are twelve times larger — the kind of outlier channel real layers have.

# %%
rng = np.random.default_rng(13)
W = rng.normal(0.0, 0.02, (64, 256)).astype(np.float32)
OUTLIERS = [5, 21, 40, 59]
W[OUTLIERS] *= 12

# %% [markdown]
# ## Per-tensor, per-channel, per-group
#
# With **one scale for the whole tensor**, the outlier rows set the scale and the ordinary rows use
# only a few of the 16 INT4 levels. **One scale per output channel** (`row`) gives each row its own
# range; **one scale per group** of 128 or 32 inputs (`g128`, `g32`) refines it further. The recipe
# is torchao's symmetric INT4 (`int4:ao-sym`: scale = amax / 7.5).

# %%
LAYOUTS = ["tensor", "row", "g128", "g32"]
results = {}
for recipe in ("int4:ao-sym", "int8:ao-sym"):
    for layout in LAYOUTS:
        q = lowbit.quantize(W, recipe, layout=layout)
        results[recipe, layout] = (q, q.error())
print(f"{'recipe':12} {'layout':7} {'scales':>6} {'MSE':>10} {'SQNR dB':>8} {'max |err|':>10}")
for (recipe, layout), (q, e) in results.items():
    print(f"{recipe:12} {layout:7} {q.scales.size:6d} {e['mse']:10.3g} {e['sqnr_db']:8.2f} {e['max_abs_error']:10.3g}")

# %% [markdown]
# For INT4 the signal-to-quantization-noise ratio goes from **9.6 dB** per tensor to **18.0 dB** per
# channel, **18.9 dB** with groups of 128 and **20.5 dB** with groups of 32. INT8 has 16 times as
# many levels (about 24 dB more) and follows the same order: **30.5 dB** per tensor, **42.6 dB** per
# channel.

# %%
sqnr = {k: round(e["sqnr_db"], 1) for k, (q, e) in results.items()}

# %% tags=["assertions"]
assert [sqnr["int4:ao-sym", l] for l in LAYOUTS] == [9.6, 18.0, 18.9, 20.5]
assert (sqnr["int8:ao-sym", "tensor"], sqnr["int8:ao-sym", "row"]) == (30.5, 42.6)
assert [results["int4:ao-sym", l][0].scales.size for l in LAYOUTS] == [1, 64, 128, 512]

# %% [markdown]
# Where the error sits: the absolute error of every weight, per tensor and per channel. Per tensor,
# every row carries the outliers' large step; per channel only the outlier rows do.

# %%
fig, axes = plt.subplots(1, 3, figsize=(13, 4.2), sharey=True)
err = {l: np.abs(W - results["int4:ao-sym", l][0].dequantize()) for l in ("tensor", "row", "g32")}
vmax = max(e.max() for e in err.values())
for ax, (layout, e) in zip(axes, err.items()):
    im = ax.imshow(e, aspect="auto", cmap="magma", vmin=0, vmax=vmax, interpolation="nearest")
    ax.set_title(f"int4:ao-sym/{layout}: SQNR {results['int4:ao-sym', layout][1]['sqnr_db']:.1f} dB")
    ax.set_xlabel("input feature [column index]")
axes[0].set_ylabel("output channel [row index]")
for ax in axes[1:]:
    ax.set_ylabel("output channel [row index]")
cb = fig.colorbar(im, ax=axes, shrink=0.9)
cb.set_label("|W - dequantized W| [units of W]")
fig.suptitle("INT4 quantization error of a weight matrix with 4 outlier channels")
checked(fig)
plt.show()

# %%
row_err = err["row"].mean(axis=1)
normal_rows = np.setdiff1d(np.arange(64), OUTLIERS)

# %% tags=["assertions"]
assert row_err[OUTLIERS].min() > 5 * row_err[normal_rows].max()  # per channel, only the outliers are coarse
assert err["tensor"][normal_rows].mean() > 5 * err["row"][normal_rows].mean()

# %% [markdown]
# ## Symmetric vs asymmetric
#
# A symmetric quantizer puts zero in the middle of the code range. For data that is all positive —
# activations after a ReLU — half of the codes are then never used. An asymmetric quantizer
# (`uint4:ao-asym`: codes 0…15 and a zero point) spends all 16 levels on [min, max]. On the ReLU
# output below, the symmetric quantizer uses **8** distinct codes, the asymmetric one **15** (every
# code but one), and the SQNR rises by about 6 dB (one bit), from **15.9 dB** to **21.9 dB**.

# %%
a = np.maximum(rng.normal(0.0, 1.0, (1, 4096)), 0).astype(np.float32)
sym, asym = lowbit.quantize(a, "int4:ao-sym"), lowbit.quantize(a, "uint4:ao-asym")
used = (len(np.unique(sym.codes)), len(np.unique(asym.codes)))
s_sym, s_asym = sym.error()["sqnr_db"], asym.error()["sqnr_db"]
print(f"codes used: symmetric {used[0]}, asymmetric {used[1]}; zero point {asym.zero_points}")
print(f"SQNR: symmetric {s_sym:.2f} dB, asymmetric {s_asym:.2f} dB")

# %% tags=["assertions"]
assert used == (8, 15)
assert (round(s_sym, 1), round(s_asym, 1)) == (15.9, 21.9)

# %%
fig, ax = plt.subplots(figsize=(8, 4))
bins = np.arange(-8.5, 16.5)
ax.hist(sym.codes.ravel().astype(np.int8).astype(int) - 16 * (sym.codes.ravel() > 7), bins=bins, alpha=0.6,
        label="int4:ao-sym (codes -8..7)")
ax.hist(asym.codes.ravel(), bins=bins, alpha=0.6, label="uint4:ao-asym (codes 0..15)")
ax.set_xlabel("integer code [level]")
ax.set_ylabel("elements [count]")
ax.set_title("Codes used by a symmetric and an asymmetric INT4 quantizer on ReLU outputs")
ax.legend()
checked(fig)
plt.show()

# %% [markdown]
# ## INT4 packing: two codes per byte, in either order
#
# Eight INT4 codes fit in four bytes, but libraries disagree on which element goes in the low nibble
# (`docs/formats-reference.md §8.3`): ONNX, PyTorch's `float4_e2m1fn_x2` and the MX/NVFP4 kernels put
# element 0 in the **low** nibble (lowbit's `nibbles-low-first`, what `q.packed` holds); PyTorch's
# tinygemm input puts it in the **high** nibble.
#
# The Python package does not expose the registry's other packers yet (`nibbles-high-first`,
# `gptq-qweight`, `awq`: `registry/include/lowbit/registry/packing_entry.h`), so the high-first,
# GPTQ and AWQ bytes below are **packed by this notebook** from lowbit's codes, following that
# header's description. The low-first packer written here is checked against `q.packed`.

# %%
w8 = np.array([[0.1, -0.2, 0.3, -0.4, 0.5, -0.6, 0.7, -0.8]], np.float32)
q8 = lowbit.quantize(w8, "int4:ao-sym")
codes = q8.codes.ravel()


def pack_nibbles(c, high_first):
    lo, hi = (c[1::2], c[0::2]) if high_first else (c[0::2], c[1::2])
    return (lo | (hi << 4)).astype(np.uint8)


low_first, high_first = pack_nibbles(codes, False), pack_nibbles(codes, True)
print("codes        ", [f"{c:x}" for c in codes], "scale", q8.scales)
print("low first    ", [f"{b:#04x}" for b in low_first], "(lowbit's q.packed:", [f"{b:#04x}" for b in q8.packed], ")")
print("high first   ", [f"{b:#04x}" for b in high_first])

# %% tags=["assertions"]
assert np.array_equal(low_first, q8.packed)
assert codes.tolist() == [1, 14, 3, 12, 5, 10, 7, 8]  # two's complement nibbles: -2 is 0xE, -8 is 0x8
assert low_first.tolist() == [0xE1, 0xC3, 0xA5, 0x87] and high_first.tolist() == [0x1E, 0x3C, 0x5A, 0x78]

# %% [markdown]
# ## GPTQ and AWQ: eight codes in a 32-bit word
#
# GPTQ and AWQ checkpoints store unsigned 4-bit codes eight to an `int32`. What follows are their
# **storage layouts**, not the GPTQ and AWQ algorithms (which choose the weights' values by
# minimizing a layer's output error; lowbit models only the rounding step and the bytes). The codes
# are unsigned, but the zero point is not the same thing in both:
#
# - **GPTQ** symmetric puts every zero point at 8 (`uint4:gptq-sym`); asymmetric GPTQ has one per
#   group (`uint4:gptq-asym`). Its `qzeros` tensor stores **zero − 1** (AutoGPTQ v1's off-by-one,
#   which the kernel adds back: `docs/formats-reference.md §8.3`).
# - **AWQ** always quantizes with a zero point per group (`uint4:awq-fp16`), stored as is.
#
# The two `qweight` layouts:
#
# - **GPTQ `qweight`** packs along the input dimension K: word `[k/8][n]` holds rows k…k+7 of column n,
#   row j of the eight in bits 4j…4j+3.
# - **AWQ `qweight`** packs along the output dimension N with the interleave `[0, 2, 4, 6, 1, 3, 5, 7]`:
#   nibble i of word `[k][n/8]` holds column `8·(n/8) + order[i]`.

# %%
# Its own generator, so that the draws of the cells below stay those their numbers were pinned on.
zp_data = np.random.default_rng(8).normal(0.3, 1, (4, 128)).astype(np.float32)  # off-centre rows: the asymmetric zero points move
zero_points = {r: lowbit.quantize(zp_data, r, layout="g128").zero_points.tolist()
               for r in ("uint4:gptq-sym", "uint4:gptq-asym", "uint4:awq-fp16")}
for r, z in zero_points.items():
    print(f"{r:16} zero point per group of 128: {z}")

# %% tags=["assertions"]
assert zero_points["uint4:gptq-sym"] == [8, 8, 8, 8]
assert len(set(zero_points["uint4:gptq-asym"])) > 1 and len(set(zero_points["uint4:awq-fp16"])) > 1
assert all(lowbit.recipes[r].zero_point for r in zero_points)

# %% [markdown]
# An 8 × 8 block of GPTQ codes (`uint4:gptq-sym`, per input row here so that every code differs),
# shown as the little-endian bytes each layout writes to memory:

# %%
block = rng.normal(0, 1, (8, 8)).astype(np.float32)   # [K][N]
C = lowbit.quantize(block, "uint4:gptq-sym", layout="row").codes.astype(np.uint32)  # codes 0..15, [K][N]
gptq_words = np.array([sum(int(C[j, n]) << (4 * j) for j in range(8)) for n in range(8)], np.uint32)  # [N]
ORDER = [0, 2, 4, 6, 1, 3, 5, 7]
awq_words = np.array([sum(int(C[k, ORDER[i]]) << (4 * i) for i in range(8)) for k in range(8)], np.uint32)  # [K]
print("GPTQ qweight[0][n]:", [f"{w:#010x}" for w in gptq_words])
print("AWQ  qweight[k][0]:", [f"{w:#010x}" for w in awq_words])

# %% tags=["assertions"]
# Unpacking reverses each layout exactly.
assert all(((gptq_words[n] >> (4 * j)) & 0xF) == C[j, n] for n in range(8) for j in range(8))
assert all(((awq_words[k] >> (4 * i)) & 0xF) == C[k, ORDER[i]] for k in range(8) for i in range(8))


# %%
def draw_words(ax, words, label_of):
    """One row of bytes per word; each byte shows its hex and the two elements in it (high | low)."""
    for r, w in enumerate(words):
        for b in range(4):
            byte = (int(w) >> (8 * b)) & 0xFF
            ax.add_patch(plt.Rectangle((b, r - 0.45), 1, 0.9, facecolor=plt.cm.tab20(r % 20), alpha=0.4,
                                       edgecolor="black"))
            ax.text(b + 0.5, r, f"{byte:#04x}\n{label_of(r, 2 * b + 1)} | {label_of(r, 2 * b)}",
                    ha="center", va="center", fontsize=9)
    ax.set_xlim(0, 4)
    ax.set_xticks([0.5, 1.5, 2.5, 3.5], [0, 1, 2, 3])
    ax.set_ylim(len(words) - 0.5, -0.5)
    ax.plot([], [])


fig, axes = plt.subplots(1, 2, figsize=(11, 5.5))
draw_words(axes[0], gptq_words, lambda n, j: f"K{j}N{n}")
axes[0].set_title("GPTQ qweight: word n = K rows 0..7 of column n")
axes[0].set_ylabel("word (column n) [index]")
draw_words(axes[1], awq_words, lambda k, i: f"K{k}N{ORDER[i]}")
axes[1].set_title("AWQ qweight: word k = columns in order 0,2,4,6,1,3,5,7")
axes[1].set_ylabel("word (row k) [index]")
for ax in axes:
    ax.set_xlabel("byte in memory, little-endian [byte offset]")
fig.suptitle("Where each 4-bit code of an 8 x 8 block lands (high nibble | low nibble)")
checked(fig)
plt.show()
