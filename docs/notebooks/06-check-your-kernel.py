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
# # Check your kernel
#
# A kernel engineer's FP8 quantizer disagrees with a reference in a few codes out of thousands:
# is it a bug, or a different convention? `lowbit.testing.check` (the same report as the command
# `lowbit check` and the C++ `lowbit::testing` assertions, `docs/check-your-kernel.md`) compares
# the kernel's outputs with lowbit's model of a recipe. It shows the first mismatches decoded,
# then re-runs known conventions on the same inputs and names the one the kernel follows.
#
# The "kernel" here is per-row E4M3 quantization as TransformerEngine does it
# (`docs/formats-reference.md §7`): the encode factor `448 / amax` in FP32, codes =
# E4M3(`x · factor`) saturated, and the stored scale `1 / factor` kept for dequantization. lowbit calls that recipe `e4m3:te/row`.
# It is written the way a user would write it, in NumPy with ml_dtypes' FP8 cast and no lowbit
# inside, in three versions: the right one and two with a classic slip each.

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
import ml_dtypes
import numpy as np

import lowbit
import lowbit.testing
from figures import checked


def user_kernel(x, *, divide_by_stored_scale=False, round_toward_zero=False):
    """Per-row E4M3 quantization, TE style, written without lowbit."""
    amax = np.abs(x).max(axis=1, keepdims=True)
    factor = (np.float32(448) / amax).astype(np.float32)
    scale_inv = (np.float32(1) / factor).astype(np.float32)  # the stored scale
    y = (x / scale_inv if divide_by_stored_scale else x * factor).astype(np.float32)
    y = np.clip(y, -448, 448)
    codes = y.astype(ml_dtypes.float8_e4m3fn).view(np.uint8).copy()  # round to nearest even
    if round_toward_zero:  # step back every code that rounded away from zero
        decoded = codes.view(ml_dtypes.float8_e4m3fn).astype(np.float32)
        codes[np.abs(decoded) > np.abs(y)] -= 1
    return codes, scale_inv.reshape(-1)


# %% [markdown]
# ## Inputs where the slips show
#
# On random data most values sit far from a rounding boundary, so both slips pass unnoticed. The
# inputs that catch them are those whose scaled value lands **near a tie**, halfway between two
# E4M3 values. That is what lowbit's generators aim at (`lowbit.testing.matrices`). Here they are
# built directly: 16 rows of 256 values, each row with its own amax between 1 and 10 in its first
# element, the rest chosen so that `x · factor` is a midpoint of two E4M3 values (before FP32
# rounding).

# %%
rng = np.random.default_rng(6)
rows, cols = 16, 256
e4m3_values = lowbit.decode(np.arange(0x00, 0x7E, dtype=np.uint8), "e4m3").astype(np.float64)
midpoints = (e4m3_values[:-1] + e4m3_values[1:]) / 2
x = np.empty((rows, cols), np.float32)
for i, amax in enumerate(rng.uniform(1, 10, rows).astype(np.float32)):
    factor = np.float64(np.float32(448) / amax)
    x[i] = (rng.choice(midpoints, cols) * rng.choice([-1, 1], cols) / factor).astype(np.float32)
    x[i, 0] = amax

# %% tags=["assertions"]
assert np.array_equal(np.abs(x).max(axis=1), x[:, 0])  # the first element is each row's amax

# %% [markdown]
# ## The right kernel: a match
#
# The check compares every code and every stored scale: 16 × 256 codes plus 16 scales, 4112
# outputs, and finds no difference.

# %%
codes, scale_inv = user_kernel(x)
report = lowbit.testing.check(x, codes, "e4m3:te/row", scales=scale_inv)
print(report.text)
lowbit.testing.assert_matches(x, codes, "e4m3:te/row", scales=scale_inv)  # the pytest form

# %% tags=["assertions"]
assert report.passed and report.checked == 4112 and report.mismatches == 0

# %% [markdown]
# ## Slip 1: dividing by the stored scale
#
# Dividing by the stored scale is not multiplying by the factor. The stored scale `1 / factor` is
# rounded to FP32, so `x / (1 / factor)` and `x · factor` can differ in their last bit, and at a tie that bit picks
# the code. 647 of the 4112 outputs differ, each by one code. The diagnosis re-runs the known
# operation orders and finds the one this kernel follows on every output.

# %%
codes_divide, scale_inv = user_kernel(x, divide_by_stored_scale=True)
report_divide = lowbit.testing.check(x, codes_divide, "e4m3:te/row", scales=scale_inv)
print(report_divide.text)

# %% tags=["assertions"]
assert report_divide.mismatches == 647
assert report_divide.matching_conventions() == ["divide by the stored scale"]
assert report_divide.diagnosis.startswith("matches divide by the stored scale on all 4112 outputs")

# %% [markdown]
# ## Slip 2: rounding toward zero
#
# A hand-written conversion that truncates — a bit shift that drops the low mantissa bits — rounds
# every inexact value toward zero. (PTX cannot do this by accident: its only conversions to E4M3 are
# `cvt.rn.satfinite.e4m3x2.{f32,f16x2}`, round to nearest and saturating, with no `.rz` form;
# `docs/formats-reference.md §2`. The slip comes from code that does the conversion itself.) It
# lands one code lower in magnitude wherever the nearest E4M3 value lay above, 1755 outputs here. The diagnosis names the rounding mode.

# %%
codes_rtz, scale_inv = user_kernel(x, round_toward_zero=True)
report_rtz = lowbit.testing.check(x, codes_rtz, "e4m3:te/row", scales=scale_inv)
print(report_rtz.diagnosis)

# %% tags=["assertions"]
try:
    lowbit.testing.assert_matches(x, codes_rtz, "e4m3:te/row", scales=scale_inv)
    raise RuntimeError("the wrong kernel passed")
except AssertionError as failure:
    assert "matches element rounding rtz" in str(failure)  # the report is the assertion's message
assert report_rtz.mismatches == 1755
assert report_rtz.matching_conventions() == ["element rounding rtz"]

# %% [markdown]
# ## Which conventions were tried
#
# For each candidate convention the diagnosis re-ran, the plot shows on how many of the 4112 outputs
# it agrees with each kernel. A full bar means that convention explains every output; the
# candidates that do not apply (the other TE recipe, with a power-of-two scale) match almost
# nothing.

# %%
fig, axes = plt.subplots(1, 2, figsize=(9.5, 3.4), sharey=True)
for ax, (name, rep) in zip(axes, (("divides by the stored scale", report_divide),
                                   ("rounds toward zero", report_rtz))):
    labels = [c["name"] for c in rep.candidates]
    ax.barh(labels, [c["matched"] for c in rep.candidates], color=["C2" if c["full_match"] else "C7"
                                                                   for c in rep.candidates])
    ax.axvline(rep.checked, color="k", lw=0.8, ls="--")
    ax.set_title(f"kernel that {name}")
    ax.set_xlabel("outputs the convention reproduces [count]")
    ax.set_ylabel("candidate convention [name]")
fig.suptitle("Diagnosis: each candidate convention re-run on the same 4112 inputs")
fig.tight_layout()
checked(fig)
plt.show()

# %% tags=["assertions"]
assert all(c["checked"] == 4112 for rep in (report_divide, report_rtz) for c in rep.candidates)

# %% [markdown]
# The same check runs from the command line on arrays a kernel dumped (`lowbit check e4m3:te/row
# --input x.npy --output codes.npy --scales scales.npy`), and in C++ tests through
# `find_package(lowbit COMPONENTS testing)`; `examples/check-a-kernel/` is a CUDA kernel tested
# both ways, and `docs/outside-kernels.md` what the check says about PyTorch's, Triton's and
# torchao's kernels.
