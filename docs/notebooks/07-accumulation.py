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
# # Accumulation: how tensor cores add
#
# A matrix product's output depends on more than the formats of its inputs: it depends on how the
# hardware **adds**. Hopper's tensor cores do not add in IEEE arithmetic. For one output, one
# instruction step takes 16 products (32 for FP8) and the accumulator C, aligns them all to the
# largest exponent among them, **drops the bits below a fixed window without rounding**, adds what is
# left exactly and rounds once (`docs/tensor-cores.md`). The window is 25 bits below the largest
# term for BF16/FP16 products and only **13 bits for FP8** — so an FP8 matrix product whose K is
# large loses accuracy that no FP32 accumulator would lose.
#
# lowbit models every such instruction bit for bit (`lowbit.mma`, and whole products through
# `lowbit.matmul_model` with an *accumulation schedule*). Every number below comes from that model.

# %%
# %matplotlib inline
import matplotlib.pyplot as plt
import ml_dtypes
import numpy as np

import lowbit
from figures import checked

FP8 = "wgmma.m64nNk32.f32.e4m3.e4m3"
BF16 = "mma.m16n8k16.f32.bf16.bf16"

# %% [markdown]
# ## One step, explained
#
# Two products, 1 × 1 and 1 × (−1), and an accumulator C. The largest exponent among the terms is
# that of the products, 2⁰, so an FP8 step keeps multiples of 2⁻¹³. With C = 2⁻¹² the result is
# exactly 2⁻¹²; with C = 2⁻¹⁴, C is truncated to 0 before anything is added and the result is 0,
# although the exact answer 2⁻¹⁴ is an ordinary FP32 number.

# %%
a = np.zeros(32, ml_dtypes.float8_e4m3fn)
b = np.zeros(32, ml_dtypes.float8_e4m3fn)
a[:2] = 1.0
b[:2] = [1.0, -1.0]
kept = lowbit.mma_explain(a, b, np.float32(2.0**-12), instruction=FP8)
lost = lowbit.mma_explain(a, b, np.float32(2.0**-14), instruction=FP8)
print("C = 2^-12:", kept["value"], "   C = 2^-14:", lost["value"])
step = lost["steps"][0]
print("grid 2^%d; C after truncation: %s units (truncated: %s)"
      % (step["unit_exponent"], step["terms"][-1]["aligned"], step["terms"][-1]["truncated"]))

# %% tags=["assertions"]
assert kept["value"] == 2.0**-12
assert lost["value"] == 0.0 and np.float32(1) - np.float32(1) + np.float32(2.0**-14) == np.float32(2.0**-14)
assert step["unit_exponent"] == -13 and step["terms"][-1]["aligned"] == 0 and step["terms"][-1]["truncated"]

# %% [markdown]
# The result is then truncated once more, to **13 mantissa bits**: the low 10 bits of every FP32
# result of an FP8 step are zero. 32 products of 1 × 1 and C = 2⁻¹⁰: C survives the alignment
# (it is 8 units of 2⁻¹³) but 32 + 2⁻¹⁰ needs 16 significant bits, and the output keeps 14: 32.

# %%
ones = np.ones(32, ml_dtypes.float8_e4m3fn)
d = lowbit.mma_explain(ones, ones, np.float32(2.0**-10), instruction=FP8)
bits = np.float32(d["value"]).view(np.uint32)
print(f"result {d['value']!r}  bits {bits:#010x}  C on the grid: {d['steps'][0]['terms'][-1]['aligned']} units")

# %% tags=["assertions"]
assert d["steps"][0]["terms"][-1]["aligned"] == 8 and not d["steps"][0]["terms"][-1]["truncated"]
assert d["value"] == 32.0 and bits & 0x3FF == 0 and np.float32(32) + np.float32(2.0**-10) == 32 + 2.0**-10

# %% [markdown]
# ## An FP8 product's error grows with K
#
# Take x (16 × K) and W (16 × K) with N(0, 1) values in E4M3 and compute y = x · Wᵀ three ways, each
# as a kernel would with FP32 output: one chain of FP8 `wgmma` along the whole of K (cuBLAS's
# "fast accumulation"); the same with the accumulator **promoted** into an FP32 register every 128
# of K (DeepSeek-V3's fix, DeepGEMM's kernels); and BF16 `mma.sync` on the same values (BF16 holds
# every E4M3 value exactly). The exact product is the float64 sum: every E4M3 product is exact in
# float64, and their sum stays within float64's 53 bits for these K.

# %%
rng = np.random.default_rng(7)
ks = [128, 256, 512, 1024, 2048, 4096, 8192, 16384]
schedules = {
    "FP8 wgmma, one chain": {"instruction": FP8},
    "FP8 wgmma, promoted every 128": {"instruction": FP8, "promotion_interval": 128},
    "BF16 mma.sync, one chain": {"instruction": BF16},
}
errors = {name: [] for name in schedules}
for k in ks:
    x = rng.standard_normal((16, k)).astype(ml_dtypes.float8_e4m3fn)
    w = rng.standard_normal((16, k)).astype(ml_dtypes.float8_e4m3fn)
    exact = x.astype(np.float64) @ w.astype(np.float64).T
    for name, schedule in schedules.items():
        xs, ws = (x, w) if "FP8" in name else (x.astype(ml_dtypes.bfloat16), w.astype(ml_dtypes.bfloat16))
        y = lowbit.matmul_model(xs, ws, schedule).astype(np.float64)
        errors[name].append(np.linalg.norm(y - exact) / np.linalg.norm(exact))

fig, ax = plt.subplots(figsize=(7, 4))
for name, err in errors.items():
    # An exact result (error 0) is drawn at 10^-9, the bottom of the axis.
    ax.loglog(ks, np.maximum(err, 1e-9), marker="o", label=name)
ax.set_xlabel("K [elements]")
ax.set_ylabel("relative error ‖y − exact‖ / ‖exact‖ [1]")
ax.set_title("FP8 matrix product: error against K")
ax.legend()
checked(fig)
plt.show()
for name, err in errors.items():
    print(f"{name:34s}", " ".join(f"{e:.1e}" for e in err))

# %% [markdown]
# Without promotion the error grows with K: every step truncates the running sum to 13 bits below
# its own largest term, and once the sum is much larger than each new product, more and more of
# each product falls below the window. At K = 4096 it is between 5 · 10⁻⁴ and 5 · 10⁻³ in the norm,
# ten times what promotion leaves (DeepSeek-V3 reports a maximum relative error near 2 % for
# single outputs at this K). Promoting every 128 of K keeps each chain short, so the truncation
# never bites deep, and the error stays flat, between 5 · 10⁻⁵ and 3 · 10⁻⁴; BF16 tensor cores, with
# their 25-bit window, sit more than two orders of magnitude lower still.

# %%
one_chain = np.array(errors["FP8 wgmma, one chain"])
promoted = np.array(errors["FP8 wgmma, promoted every 128"])
bf16 = np.array(errors["BF16 mma.sync, one chain"])
i4096 = ks.index(4096)

# %% tags=["assertions"]
assert one_chain[-1] > 4 * one_chain[0]            # grows with K
assert 5e-4 < one_chain[i4096] < 5e-3
assert one_chain[i4096] > 5 * promoted[i4096]      # promotion fixes most of it at K = 4096
assert promoted.max() < 3 * promoted.min()         # and stays flat
assert 5e-5 < promoted.min() and promoted.max() < 3e-4
assert (bf16 < promoted / 100).all()               # BF16's window is 12 bits wider

# %% [markdown]
# ## The worst single output
#
# The norm hides the outputs where cancellation leaves a small result out of large products: there
# the truncated bits are a large fraction of the answer.

# %%
k = 4096
x = rng.standard_normal((64, k)).astype(ml_dtypes.float8_e4m3fn)
w = rng.standard_normal((64, k)).astype(ml_dtypes.float8_e4m3fn)
exact = x.astype(np.float64) @ w.astype(np.float64).T
chain_fp32 = lowbit.matmul_model(x, w, {"instruction": FP8})
y_chain = chain_fp32.astype(np.float64)
y_promoted = lowbit.matmul_model(x, w, {"instruction": FP8, "promotion_interval": 128}).astype(np.float64)
scale = np.abs(x.astype(np.float64)) @ np.abs(w.astype(np.float64)).T  # the size of the terms
worst_chain = np.max(np.abs(y_chain - exact) / scale)
worst_promoted = np.max(np.abs(y_promoted - exact) / scale)
print(f"largest error relative to the sum of |products|: one chain {worst_chain:.1e}, promoted {worst_promoted:.1e}")

# %% tags=["assertions"]
assert worst_chain > 3 * worst_promoted
assert chain_fp32.dtype == np.float32 and (chain_fp32.view(np.uint32) & 0x3FF == 0).all()  # 13 mantissa bits

# %% [markdown]
# ## What to take away
#
# - The bits of a matrix product are a property of its **schedule** (which instruction, how K is
#   chained, when the accumulator is promoted, how split-K parts are added), not only of its formats.
#   `lowbit.matmul_model(x, w, schedule)` gives those bits; `lowbit check gemm` names the schedule of
#   a kernel's output (`docs/check-your-kernel.md`).
# - FP8 `wgmma` keeps 13 bits below the largest term and truncates: long FP8 accumulations need
#   promotion into FP32 (every 128 of K is the common choice).
# - BF16/FP16 tensor cores keep 25 bits and truncate too: they are close to, but not, FP32 FMA.
