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
# # Training numerics
#
# Inference reads a tensor once; training **adds** to its weights thousands of times, sends
# gradients that span many orders of magnitude and quantizes tensors whose range changes from step
# to step. Each of the tricks of low-precision training answers one of these problems. This notebook
# shows each problem and its answer with lowbit's conversions:
#
# 1. a sum of small updates that round-to-nearest **stalls** and stochastic rounding tracks;
# 2. **loss scaling**, which lifts FP16 gradients out of the underflow zone;
# 3. **delayed scaling** with an amax history, and what it costs when the range jumps;
# 4. why **E5M2** carries gradients;
# 5. **round-to-odd**, which makes two roundings equal one.

# %%
# %matplotlib inline
import matplotlib.pyplot as plt
import numpy as np

import lowbit
from figures import checked

rng = np.random.default_rng(8)


def bf16(x, rounding="rne", random_bits=None):
    """x rounded to BF16 by lowbit, back as FP32 values."""
    codes = lowbit.encode(np.asarray(x, np.float32), "bf16", rounding=rounding, random_bits=random_bits)
    return lowbit.decode(codes, "bf16")


# %% [markdown]
# ## 1. Stochastic rounding: a sum of small updates
#
# A weight of 1.0 kept in BF16 receives 1000 updates of +0.001 (a learning rate times a gradient).
# BF16 has 7 mantissa bits: next to 1.0 its values are 2⁻⁷ ≈ 0.0078 apart, so an update of 0.001 is
# less than half a step. **Round to nearest** sends `1.0 + 0.001` back to 1.0 every time: the weight
# never moves, however many updates arrive. **Stochastic rounding** rounds up with a probability
# equal to the fraction of the step covered (notebook 2), so on average the update survives: 64
# weights trained side by side end near the exact 2.0, each a little off. That is why Blackwell's
# FP8/FP4 conversions have a stochastic mode (`cvt.rs`, `docs/formats-reference.md §2`) and why
# optimizers that keep BF16 weights without an FP32 master copy use it.

# %%
steps, lanes, update = 1000, 64, np.float32(1e-3)
w_rne = np.ones(lanes, np.float32)
w_sr = np.ones(lanes, np.float32)
w_exact = np.ones(lanes, np.float64)
history = {"round to nearest": [], "stochastic (mean of 64)": [], "exact": []}
sr_spread = []
for _ in range(steps):
    w_rne = bf16(w_rne + update)
    w_sr = bf16(w_sr + update, "stochastic", rng.integers(0, 2**32, lanes, dtype=np.uint32))
    w_exact += float(update)
    history["round to nearest"].append(w_rne.mean())
    history["stochastic (mean of 64)"].append(w_sr.mean())
    history["exact"].append(w_exact.mean())
    sr_spread.append((w_sr.min(), w_sr.max()))

fig, ax = plt.subplots(figsize=(8, 4.2))
t = np.arange(1, steps + 1)
lo, hi = np.array(sr_spread).T
ax.fill_between(t, lo, hi, color="C1", alpha=0.25, label="stochastic: the 64 weights, min to max")
for (label, ys), style in zip(history.items(), ("C0-", "C1-", "k--")):
    ax.plot(t, ys, style, label=label)
ax.set_xlabel("update [step]")
ax.set_ylabel("weight kept in BF16 [value]")
ax.set_title("1000 updates of +0.001 to a BF16 weight of 1.0")
ax.legend(loc="upper left")
checked(fig)
plt.show()
print(f"after {steps} updates: round to nearest {w_rne.mean():.4f}, stochastic mean {w_sr.mean():.4f} "
      f"(min {w_sr.min():.4f}, max {w_sr.max():.4f}), exact {w_exact.mean():.4f}")

# %% tags=["assertions"]
assert np.all(w_rne == 1.0) and lowbit.formats["bf16"].mantissa_bits == 7 and float(update) < 2**-8
assert abs(w_sr.mean() - 2.0) < 0.05 and abs(w_exact.mean() - 2.0) < 1e-6
assert w_sr.min() > 1.5 and w_sr.max() < 2.5

# %% [markdown]
# ## 2. FP16 loss scaling
#
# FP16 has the range 2⁻²⁴ … 65504. Gradients are often far smaller than the loss: here 100 000
# gradient values whose magnitudes are spread log-normally around 10⁻⁶ (a decade of standard
# deviation). Converted to FP16 as they are, every value below half the smallest subnormal becomes
# **zero** and the ones among the subnormals keep only a few bits. **Loss scaling** multiplies the
# loss — and so, by the chain rule, every gradient — by a power of two S before the backward pass,
# and divides the FP32 copy by S afterwards (exact, since S is a power of two). Too small an S
# leaves values underflowing; too large an S overflows the largest gradients to **Inf**. The sweep
# shows the window, and dynamic loss scaling (halve S on an Inf, double it after a run of clean
# steps) keeps S inside it. Here, unscaled, **6 %** of the gradients become zero; every S from
# **2⁶ to 2²¹** loses under 0.1 % and overflows nothing, and cuts the median relative error fortyfold.

# %%
grads = (rng.choice([-1, 1], 100_000) * 10 ** rng.normal(-6, 1, 100_000)).astype(np.float32)
exponents = np.arange(0, 41)
zero_share, inf_share, rel_err = [], [], []
for k in exponents:
    scaled = grads * np.float32(2.0**k)
    back = lowbit.decode(lowbit.encode(scaled, "fp16"), "fp16") / np.float32(2.0**k)
    zero_share.append(np.mean(back == 0))
    inf_share.append(np.mean(np.isinf(back)))
    finite = np.isfinite(back)
    rel_err.append(np.median(np.abs(back[finite] - grads[finite]) / np.abs(grads[finite])))
zero_share, inf_share, rel_err = map(np.array, (zero_share, inf_share, rel_err))

ok = exponents[(zero_share < 1e-3) & (inf_share == 0)]
fig, ax = plt.subplots(figsize=(8, 4.2))
ax.axvspan(ok.min() - 0.5, ok.max() + 0.5, color="C2", alpha=0.15, label="under 0.1 % lost, no Inf")
ax.plot(exponents, 100 * zero_share, "C0o-", label="flushed to zero")
ax.plot(exponents, 100 * inf_share, "C3s-", label="overflowed to Inf")
ax.set_xlabel("loss scale S = 2^k, k [power of two]")
ax.set_ylabel("gradient values lost [%]")
ax.set_title("FP16 gradients: what a loss scale of 2^k loses (log-normal around 1e-6)")
ax.legend(loc="upper center")
checked(fig)
plt.show()
print(f"unscaled: {zero_share[0]:.1%} become zero; S = 2^{ok.min()} .. 2^{ok.max()} lose under 0.1% "
      f"and overflow nothing; median relative error {rel_err[0]:.2g} unscaled, {rel_err[ok.min()]:.2g} at 2^{ok.min()}")

# %% tags=["assertions"]
assert f"{zero_share[0]:.0%}" == "6%" and inf_share[0] == 0
assert (ok.min(), ok.max()) == (6, 21) and inf_share[-1] > 0
assert np.array_equal(ok, np.arange(6, 22))  # one window, no gap
assert rel_err[ok.min()] < rel_err[0] / 30

# %% [markdown]
# ## 3. Delayed scaling with an amax history
#
# Per-tensor FP8 training needs each tensor's amax to compute its encode factor, and measuring it
# costs a pass over the tensor before quantizing. TransformerEngine's **delayed scaling** instead
# uses the largest amax of the last N steps (the *amax history*), measured as a by-product of
# earlier steps (`docs/formats-reference.md §7`). That works while the range drifts slowly. When it
# jumps — at step 60 below, an activation's amax grows fourfold — the factor is still the old one,
# so the new large values **saturate** at 448 / factor until the history catches up, one step later.
# A long history also keeps a past spike's small factor for N steps (step 100's spike, felt until
# step 116), which costs little: a factor that is too small is cheap for FP8 (notebook 4).

# %%
def quantize_with_amax(x, amax):
    """TE's per-tensor E4M3 step with the factor of a given amax (not x's own)."""
    factor = np.float32(lowbit.explain([amax], "e4m3:te").groups[0].factor)
    codes = lowbit.encode(x * factor, "e4m3", saturate=True)
    return lowbit.decode(codes, "e4m3") * (np.float32(1) / factor)


def sqnr_db(x, y):
    x = x.astype(np.float64)
    return float(10 * np.log10(np.sum(x**2) / np.sum((x - y) ** 2)))


n_steps, history_len = 140, 16
level = np.ones(n_steps)
level[60:] = 4.0                # the range jumps and stays
level[100] = 16.0               # a one-step spike
tensors = [(rng.normal(0, 1, 2048) * level[s]).astype(np.float32) for s in range(n_steps)]
amaxes = [float(np.abs(t).max()) for t in tensors]
curves = {"dynamic (this step's amax)": [], f"delayed, history of {history_len}": [], "delayed, history of 1": []}
clipped = []
for s, t in enumerate(tensors):
    curves["dynamic (this step's amax)"].append(lowbit.quantize(t, "e4m3:te").error()["sqnr_db"])
    past = amaxes[max(0, s - history_len):s] or [amaxes[0]]
    long_amax, short_amax = max(past), (amaxes[s - 1] if s else amaxes[0])
    curves[f"delayed, history of {history_len}"].append(sqnr_db(t, quantize_with_amax(t, long_amax)))
    curves["delayed, history of 1"].append(sqnr_db(t, quantize_with_amax(t, short_amax)))
    clipped.append(int(np.sum(np.abs(t) > long_amax)))

fig, ax = plt.subplots(figsize=(9, 4.5))
for (label, ys), style in zip(curves.items(), ("k-", "C0-", "C1--")):
    ax.plot(range(n_steps), ys, style, label=label)
ax.axvline(60, color="grey", linestyle=":")
ax.axvline(100, color="grey", linestyle=":")
ax.set_xlabel("training step [step]")
ax.set_ylabel("E4M3 SQNR of the step's tensor [dB]")
ax.set_title("Delayed scaling: the factor comes from past amaxes (range x4 at step 60, spike at 100)")
ax.legend(loc="lower left")
checked(fig)
plt.show()
d, l16, l1 = (np.array(v) for v in curves.values())
print(f"step 60: dynamic {d[60]:.1f} dB, delayed {l16[60]:.1f} dB ({clipped[60]} of 2048 values saturate); "
      f"step 61: delayed {l16[61]:.1f} dB. Step 100: delayed {l16[100]:.1f} dB, step 101 history of 1 "
      f"{l1[101]:.1f} dB, history of {history_len} {l16[101]:.1f} dB")

# %% tags=["assertions"]
steady = [s for s in range(1, n_steps) if s not in (60, 100, 101)]
assert np.all(np.abs(l16[steady] - d[steady]) < 1.0)   # a slowly moving range: delayed is as good
assert clipped[60] > 100 and d[60] - l16[60] > 10        # the jump saturates a good part of the tensor
assert abs(l16[61] - d[61]) < 1.0                         # one step later the history has caught up
assert d[100] - l16[100] > 10                             # the spike itself is clipped
assert abs(l16[101] - d[101]) < 1.0 and abs(l1[101] - d[101]) < 1.0  # and the small factor after it is cheap

# %% [markdown]
# ## 4. E5M2 for gradients
#
# With one scale per tensor, what decides is how many **binades** the format spans: E4M3 covers
# 2⁻⁹ … 448 (about 18 binades), E5M2 2⁻¹⁶ … 57344 (about 32). Gradients of a layer range over many
# decades, and a value below the smallest subnormal (after the factor has put the amax at the top)
# becomes zero. The gradients here span ten decades (log-uniform, 10⁻¹⁰ … 1). E4M3 keeps more
# precision on the large values — its SQNR, dominated by them, is 6 dB higher — but flushes
# **43 %** of the values to zero; E5M2 only **1.3 %**. This is why the FP8 training recipes (TE's
# `HYBRID`) use E4M3 for weights and activations and E5M2 for gradients.

# %%
wide = (rng.choice([-1, 1], 100_000) * 10 ** rng.uniform(-10, 0, 100_000)).astype(np.float32)
result = {}
for recipe in ("e4m3:te", "e5m2:te"):
    q = lowbit.quantize(wide, recipe)
    back = q.dequantize()
    result[recipe] = (float(np.mean(back == 0)), q.error()["sqnr_db"])
    print(f"{recipe}: {result[recipe][0]:.1%} of the gradients become zero, SQNR {result[recipe][1]:.1f} dB")

# %% tags=["assertions"]
assert 5.5 < result["e4m3:te"][1] - result["e5m2:te"][1] < 6.5  # E4M3: finer on the values that dominate SQNR
assert (f"{result['e4m3:te'][0]:.0%}", f"{result['e5m2:te'][0]:.1%}") == ("43%", "1.3%")
assert result["e4m3:te"][0] > 20 * result["e5m2:te"][0]  # E5M2 keeps far more small gradients

# %% [markdown]
# ## 5. Round-to-odd against double rounding
#
# Notebook 2 showed double rounding: rounding FP64 to FP32 and then to E4M3 can differ from rounding
# once, because the first rounding can land exactly on a tie of the second. The same happens between
# any two formats: FP32 → BF16 → E4M3 here, on 200 000 FP32 values between −448 and 448. The fix
# that converters use (and that lowbit offers as `rounding="odd"`) is **round-to-odd** for the first
# step: truncate, and set the last bit to 1 if anything was dropped. The result is never exactly a
# tie of the second format, and as long as the intermediate format has at least two more mantissa
# bits than the final one (BF16 has 7, E4M3 has 3), rounding to nearest afterwards gives exactly
# the single-rounding result. Rounding to nearest twice is wrong on **3 %** of the values here;
# round-to-odd first, on **none**.

# %%
x = rng.uniform(-448, 448, 200_000).astype(np.float32)
direct = lowbit.encode(x, "e4m3")
via_rne = lowbit.encode(lowbit.decode(lowbit.encode(x, "bf16"), "bf16"), "e4m3")
via_odd = lowbit.encode(lowbit.decode(lowbit.encode(x, "bf16", rounding="odd"), "bf16"), "e4m3")
wrong_rne, wrong_odd = int(np.sum(via_rne != direct)), int(np.sum(via_odd != direct))
print(f"FP32 -> BF16 -> E4M3 differs from FP32 -> E4M3 on {wrong_rne} of {x.size} values with round to "
      f"nearest first, on {wrong_odd} with round-to-odd first")
k = int(np.flatnonzero(via_rne != direct)[0])
print(f"e.g. x = {x[k]!r}: BF16 {lowbit.decode(lowbit.encode(x[k:k+1], 'bf16'), 'bf16')[0]!r}, "
      f"then E4M3 {lowbit.decode(via_rne[k:k+1], 'e4m3')[0]}; directly {lowbit.decode(direct[k:k+1], 'e4m3')[0]}")

# %% tags=["assertions"]
assert wrong_odd == 0
assert f"{wrong_rne / x.size:.0%}" == "3%"
assert lowbit.formats["bf16"].mantissa_bits >= lowbit.formats["e4m3"].mantissa_bits + 2
