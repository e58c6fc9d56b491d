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
# # FP8 scaling recipes
#
# E4M3 covers 2⁻⁹ … 448. A tensor is multiplied by an **encode factor** so that its values land in
# that range, stored as FP8 codes, and multiplied by the **stored scale** (1 / factor) on the way back.
# TransformerEngine's recipe (`docs/formats-reference.md §7`) takes the factor as `448 / amax` (an FP32
# division rounded to nearest), converts `x · factor` with a saturating conversion and stores
# `1 / factor` to dequantize.
# lowbit's recipes `e4m3:te` and `e4m3:te-pow2` (the scale rounded down to a power of two) model it;
# the choice left to the user is **whose amax**: measured on this tensor (dynamic) or on calibration
# data (static), for the whole tensor, per token (row of activations) or per channel (row of weights).

# %% [markdown]
# > **Three words used the same way in notebooks 4, 5 and 6.**
# > The **encode factor** is the number each element is multiplied by before it is rounded to the
# > element format: TransformerEngine's `scale`, 448 / amax for E4M3 (`lowbit.explain(...)` reports it
# > as `factor` for the FP8 and integer recipes; for the MX recipes the element step *divides* by the
# > E8M0 block scale, and `factor` is that divisor). The **stored scale** is what the quantized tensor
# > keeps to multiply the codes back: 1 / factor in FP32 for the per-tensor, per-token and per-channel
# > recipes (TE's `scale_inv`), the E8M0 or UE4M3 block scale for MX and NVFP4. **`q.scales`** is the
# > stored scale of every group as FP32 (decoded from `q.scale_codes` where it is a narrow format).
# > "Scale" alone means the stored scale; "factor" means the encode factor.

# %%
# %matplotlib inline
import matplotlib.pyplot as plt
import numpy as np

import lowbit
from figures import checked

rng = np.random.default_rng(4)

# %% [markdown]
# ## One step, explained
#
# `lowbit.explain` shows the recipe on four values: amax 4 gives the encode factor 448 / 4 = 112,
# the values are multiplied by it, rounded to E4M3 and multiplied back by the stored scale 1/112.
# 3 becomes 336, halfway between the E4M3 values 320 and 352, and comes back as 320 / 112 ≈ 2.857.
# The power-of-two variant rounds the factor down to 64, where 3 → 192 is exact.

# %%
e = lowbit.explain([0.5, 1.0, 3.0, -4.0], "e4m3:te")
p = lowbit.explain([0.5, 1.0, 3.0, -4.0], "e4m3:te-pow2")
print(e, p, sep="\n")
g, g2 = e.groups[0], p.groups[0]

# %% tags=["assertions"]
assert (g.amax, g.factor, g.scaled) == (4.0, 112.0, [56.0, 112.0, 336.0, -448.0])
assert g.dequantized[2] == np.float32(320 / 112) and f"{g.dequantized[2]:.4g}" == "2.857"
assert (g2.factor, g2.dequantized) == (64.0, [0.5, 1.0, 3.0, -4.0])

# %% [markdown]
# ## Dynamic vs static per-tensor scaling
#
# **Dynamic** scaling measures the amax of each tensor as it is quantized (`lowbit.quantize`).
# **Static** scaling fixes the factor once, from calibration data, and uses it for every later tensor;
# a later tensor with a larger amax then **saturates** at ±448 / factor.
#
# lowbit takes a static stored scale through `lowbit.quantize(x, "e4m3:vllm", given_scale=s)`: vLLM's
# `static_scaled_fp8_quant`, which *divides* x by the stored scale s = calibrated amax / 448. TE's
# recipe *multiplies* by the factor 448 / amax instead, and `given_scale=` is for the vLLM recipes
# only, so the TE path here is composed from lowbit's pieces: the factor that `lowbit.explain`
# computes for the calibration amax, then `lowbit.encode(x · factor, "e4m3", saturate=True)` and
# `lowbit.decode(...) · (1 / factor)` — the TE recipe's element step. The first assertion checks that
# this composition equals `lowbit.quantize` when the calibration data is the tensor itself; the
# second, that on this tensor it also equals vLLM's static path (dividing by the stored scale and
# multiplying by the factor can differ by one code at a tie: notebook 6 catches exactly that).

# %%
def static_e4m3(x, calibration_amax, recipe="e4m3:te"):
    factor = np.float32(lowbit.explain([calibration_amax], recipe).groups[0].factor)
    codes = lowbit.encode(x.astype(np.float32) * factor, "e4m3", saturate=True)
    scale = np.float32(1.0) / factor
    return lowbit.decode(codes, "e4m3") * scale


def sqnr_db(x, y):
    """10 log10(signal power / error power), in float64 (checked against q.error() below)."""
    x = x.astype(np.float64)
    return float(10 * np.log10(np.sum(x**2) / np.sum((x - y) ** 2)))


x = rng.normal(0, 1, 4096).astype(np.float32)
dyn = lowbit.quantize(x, "e4m3:te")
vllm_static = lowbit.quantize(x, "e4m3:vllm", given_scale=np.float32(2.0) / np.float32(448))

# %% tags=["assertions"]
assert np.array_equal(static_e4m3(x, float(np.abs(x).max())), dyn.dequantize())
assert abs(sqnr_db(x, dyn.dequantize()) - dyn.error()["sqnr_db"]) < 1e-9
assert np.array_equal(static_e4m3(x, 2.0), vllm_static.dequantize())

# %% [markdown]
# Calibrated on data whose amax was 2, a later batch of the same distribution (amax about 4.06)
# saturates everything above 2: the SQNR falls from **31.7 dB** (dynamic) to **18.8 dB** (static).

# %%
s_dyn, s_static = dyn.error()["sqnr_db"], sqnr_db(x, static_e4m3(x, 2.0))
print(f"amax {np.abs(x).max():.3f}: dynamic {s_dyn:.2f} dB, static (calibrated amax 2) {s_static:.2f} dB")

# %% tags=["assertions"]
assert f"{np.abs(x).max():.2f}" == "4.06"
assert (round(s_dyn, 1), round(s_static, 1)) == (31.7, 18.8)

# %% [markdown]
# ## Error against the scale choice
#
# Sweeping the calibrated amax from a tenth of the true amax to 10⁵ times it shows the
# asymmetry of FP8: **a calibrated amax that is too small** — an encode factor that is too large —
# **clips** (the SQNR collapses), while **one that is too large** — a factor that is too small, a
# stored scale that is too large — **costs almost nothing** for a long way, because a float format
# has the same relative precision in every binade, until the scaled values sink into E4M3's
# subnormals (below 2⁻⁶) and then flush to zero. From 1 to
# 1000 times the true amax the E4M3 SQNR stays within 1 dB of its best; at 10⁵ times it has lost more
# than 10 dB. E5M2 has one mantissa bit fewer (about 6 dB less SQNR) and a far wider range. The
# power-of-two factor (`te-pow2`) rounds the factor down, so it clips a little later.

# %%
true_amax = float(np.abs(x).max())
ratios = np.logspace(-1, 5, 121)
curves = {}
for recipe in ("e4m3:te", "e4m3:te-pow2"):
    curves[recipe] = [sqnr_db(x, static_e4m3(x, r * true_amax, recipe)) for r in ratios]


def static_e5m2(x, calibration_amax):
    factor = np.float32(lowbit.explain([calibration_amax], "e5m2:te").groups[0].factor)
    return lowbit.decode(lowbit.encode(x * factor, "e5m2", saturate=True), "e5m2") * (np.float32(1) / factor)


curves["e5m2:te"] = [sqnr_db(x, static_e5m2(x, r * true_amax)) for r in ratios]
fig, ax = plt.subplots(figsize=(8, 4.5))
for recipe, ys in curves.items():
    ax.semilogx(ratios, ys, label=recipe)
ax.axvline(1.0, color="grey", linestyle=":")
ax.set_xlabel("calibrated amax / true amax [ratio, log scale]")
ax.set_ylabel("SQNR [dB]")
ax.set_title("Static FP8 scaling: SQNR against the calibrated amax (N(0,1), 4096 values)")
ax.legend()
checked(fig)
plt.show()

# %%
e4 = np.array(curves["e4m3:te"])
best = e4.max()
band = (ratios >= 1) & (ratios <= 1000)
gap = e4[band] - np.array(curves["e5m2:te"])[band]

# %% tags=["assertions"]
assert e4[band].min() > best - 1.0
assert e4[ratios < 0.5].max() < best - 10  # clipping
assert e4[-1] < best - 10  # ratio 1e5: flushed to zero
assert 5 < gap.mean() < 7

# %% [markdown]
# ## Per token, with a minimum scale
#
# For activations, each token (row) gets its own scale. A padding token of zeros has amax 0; the TE
# recipe then uses factor 1 and stored scale 1 (its guard against dividing by zero). A token of tiny
# values gets a huge factor — here its amax is 1.82·10⁻⁷, so the factor is 448 / 1.82·10⁻⁷ ≈
# 2.46·10⁹ — which is exact but makes the stored scale tiny. Kernels therefore often impose a
# **minimum scale**, i.e. TE's `amax_epsilon`: `amax = max(amax, eps)`.
#
# lowbit's Python API has no `eps` argument yet; since the recipe takes the row's amax, appending one
# element equal to `eps` to every row and dropping it afterwards gives exactly `max(amax, eps)`, so the
# floor below is still lowbit's recipe. With eps = 10⁻³ the stored scale cannot fall below
# 10⁻³ / 448 ≈ 2.23·10⁻⁶ (the zero token gets that scale too), and the tiny token pays for it: its
# factor is now only about 448 000, its scaled values lie between 0.00095 and 0.082, **4 of its
# 16** fall below 2⁻⁶ among E4M3's subnormals (the rest in the lowest normal binades), and its SQNR
# falls from **33.7 dB** to **28.6 dB** — a mild loss, again because a float format spends its codes
# logarithmically.

# %%
tokens = np.vstack([rng.normal(0, 1, 16), np.zeros(16), rng.normal(0, 1e-7, 16)]).astype(np.float32)
per_token = lowbit.quantize(tokens, "e4m3:te", layout="token")
eps = np.float32(1e-3)
floored = lowbit.quantize(np.hstack([tokens, np.full((3, 1), eps, np.float32)]), "e4m3:te", layout="token")
back = floored.dequantize()[:, :-1]
print("scales (1/factor) per token:", per_token.scales)
print("with eps = 1e-3:            ", floored.scales)
tiny = (sqnr_db(tokens[2], per_token.dequantize()[2]), sqnr_db(tokens[2], back[2]))
print(f"tiny token SQNR: {tiny[0]:.2f} dB without the floor, {tiny[1]:.2f} dB with it")
tiny_amax = float(np.abs(tokens[2]).max())
tiny_factor = lowbit.explain(tokens[2], "e4m3:te").groups[0].factor
floor_factor = lowbit.explain(np.append(tokens[2], eps), "e4m3:te").groups[0].factor
scaled_tiny = np.abs(tokens[2]) * np.float32(floor_factor)
print(f"factor with the floor {floor_factor:.6g}; scaled values {scaled_tiny.min():.3g} .. {scaled_tiny.max():.3g}; "
      f"{int(np.sum(scaled_tiny < lowbit.formats['e4m3'].smallest_normal))} of 16 below 2^-6")

# %% tags=["assertions"]
assert per_token.scales[1] == 1.0 and per_token.scales[2] < 1e-9
assert np.array_equal(per_token.dequantize()[0], back[0])  # the floor leaves a normal token alone
assert floored.scales[1] == floored.scales[2] and f"{floored.scales[2]:.3g}" == "2.23e-06"
assert (round(tiny[0], 1), round(tiny[1], 1)) == (33.7, 28.6)
assert f"{tiny_amax:.3g}" == "1.82e-07" and f"{tiny_factor:.3g}" == "2.46e+09"
assert tiny_factor == np.float32(448) / np.float32(tiny_amax)
assert f"{floor_factor:.6g}" == "448000" and int(np.sum(scaled_tiny < lowbit.formats["e4m3"].smallest_normal)) == 4
assert f"{scaled_tiny.min():.2g}" == "0.00095" and f"{scaled_tiny.max():.2g}" == "0.082"

# %% [markdown]
# ## Per channel
#
# The same weight matrix as in notebook 3 (four output channels twelve times larger), plus two
# nearly dead channels (rows 10 and 30, a thousand times smaller). For INT4, per-channel scales were
# worth 8 dB. For E4M3 they are worth nothing on the whole tensor — **31.85 dB** per tensor and
# per channel — because a float format has the same relative precision in every binade:
# moving a channel's values by a power of two changes nothing until they leave the normal range.
# The dead channels do leave it: per tensor their values fall among E4M3's subnormals and their
# SQNR is **24.5 dB** and **25.2 dB**; per channel **31.7 dB** and **31.1 dB**.

# %%
W = rng.normal(0, 0.02, (64, 256)).astype(np.float32)
W[[5, 21, 40, 59]] *= 12
W[[10, 30]] *= 1e-3
per_tensor, per_channel = lowbit.quantize(W, "e4m3:te"), lowbit.quantize(W, "e4m3:te", layout="channel")
whole = (per_tensor.error()["sqnr_db"], per_channel.error()["sqnr_db"])
dead = [(sqnr_db(W[r], per_tensor.dequantize()[r]), sqnr_db(W[r], per_channel.dequantize()[r])) for r in (10, 30)]
print(f"whole tensor: per tensor {whole[0]:.2f} dB, per channel {whole[1]:.2f} dB")
print("rows 10 and 30 (per tensor, per channel):", [(round(a, 2), round(b, 2)) for a, b in dead])

# %% tags=["assertions"]
assert (f"{whole[0]:.2f}", f"{whole[1]:.2f}") == ("31.85", "31.85")
assert [(f"{a:.1f}", f"{b:.1f}") for a, b in dead] == [("24.5", "31.7"), ("25.2", "31.1")]
