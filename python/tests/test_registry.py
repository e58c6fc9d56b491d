"""The package's results equal the C++ registry's scalar rows (the model).

lowbit.encode / decode / quantize pick the best row this CPU runs (a SIMD
row, or the scalar model for what SIMD does not implement) and handle shapes,
strides and dtypes in Python; here the same inputs go flat through the
registry's "scalar" row by name (lowbit._lowbit.run_row), for every format,
operation and recipe, on boundary-biased inputs.
"""

import ml_dtypes
import numpy as np
import pytest

import lowbit
from lowbit import _lowbit

from conftest import boundary_inputs

ELEMENT_FORMATS = [f for f in lowbit.formats if f != "fp64"]
ROUNDINGS = ["rne", "rna", "rtz", "up", "down", "odd"]


def scalar_row(op, fmt, x, out_dtype, rounding="rne", saturate=False):
    flat = np.ascontiguousarray(x).reshape(-1)
    out = np.empty(flat.shape, out_dtype)
    _lowbit.run_row(op, fmt, "scalar", flat, out, rounding, saturate)
    return out


@pytest.mark.parametrize("fmt", ELEMENT_FORMATS)
@pytest.mark.parametrize("rounding", ROUNDINGS)
@pytest.mark.parametrize("saturate", [False, True])
def test_encode_f32_equals_scalar_row(fmt, rounding, saturate):
    f = lowbit.formats[fmt]
    x = boundary_inputs(fmt)
    # A strided 2-D view: the package makes it contiguous, the row sees it flat.
    n = x.size - x.size % 2
    grid = np.empty((2, n), np.float32)
    grid[0] = x[:n]
    view = grid[:, ::1][0].reshape(-1, 2)[:, 0]  # every other element: strided
    want = scalar_row("encode-f32", fmt, np.ascontiguousarray(view), f.code_dtype, rounding, saturate)
    got = lowbit.encode(view, fmt, rounding=rounding, saturate=saturate)
    np.testing.assert_array_equal(got, want)
    # Any shape: the same codes in x's shape.
    got2 = lowbit.encode(x[:n].reshape(2, -1), fmt, rounding=rounding, saturate=saturate)
    np.testing.assert_array_equal(got2.reshape(-1), scalar_row("encode-f32", fmt, x[:n], f.code_dtype, rounding,
                                                                saturate))


@pytest.mark.parametrize("fmt", ELEMENT_FORMATS)
@pytest.mark.parametrize("source", ["fp16", "bf16"])
def test_encode_16bit_inputs_equal_scalar_row(fmt, source):
    f = lowbit.formats[fmt]
    every = np.arange(1 << 16, dtype=np.uint16)  # all 2^16 inputs
    op = "encode-f16" if source == "fp16" else "encode-bf16"
    want = scalar_row(op, fmt, every, f.code_dtype)
    x = every.view(np.float16) if source == "fp16" else every.view(ml_dtypes.bfloat16)
    np.testing.assert_array_equal(lowbit.encode(x, fmt), want)


@pytest.mark.parametrize("fmt", ELEMENT_FORMATS)
def test_decode_equals_scalar_row(fmt):
    f = lowbit.formats[fmt]
    if f.bits <= 16:
        codes = np.arange(1 << f.bits, dtype=f.code_dtype)
    else:
        codes = boundary_inputs(fmt).view(np.uint32)
    want = scalar_row("decode-to-f32", fmt, codes, np.float32)
    got = lowbit.decode(codes[::-1].copy()[::-1], fmt)  # a negative-stride view of a copy
    np.testing.assert_array_equal(got.view(np.uint32), want.view(np.uint32))
    from lowbit import _lowbit as ext
    try:
        want16 = scalar_row("decode-to-bf16", fmt, codes, np.uint16)
    except ValueError:
        return  # BF16 does not hold this format's values: no such row
    got16 = lowbit.decode(codes, fmt, dtype="bfloat16")
    np.testing.assert_array_equal(got16.view(np.uint16), want16)
    del ext


NARROW_FLOATS = [f for f in ELEMENT_FORMATS
                 if lowbit.formats[f].kind == "float" and lowbit.formats[f].bits <= 8]


@pytest.mark.parametrize("fmt", NARROW_FLOATS)
def test_fp64_inputs_are_not_rounded_to_fp32_first(fmt):
    """An FP64 value just above a tie between two codes, closer to the tie
    than an FP32 ulp, rounds to the upper code; through FP32 it would become
    the tie and round to even."""
    f = lowbit.formats[fmt]
    codes = np.arange(1 << f.bits, dtype=f.code_dtype)
    values = lowbit.decode(codes, fmt, dtype=np.float64)
    finite = np.unique(values[np.isfinite(values)])
    mids = (finite[:-1] + finite[1:]) / 2
    above = mids + np.abs(mids) * 2.0 ** -40
    got = lowbit.decode(lowbit.encode(above, fmt), fmt, dtype=np.float64)
    np.testing.assert_array_equal(got, finite[1:])
    via_f32 = lowbit.decode(lowbit.encode(above.astype(np.float32), fmt), fmt, dtype=np.float64)
    if f.mantissa_bits > 0:  # ties to even go down at every other tie: the test sees double rounding
        assert (via_f32 != finite[1:]).any(), "the test would not see a double rounding"


def recipe_buffers(name, rows, cols):
    s = _lowbit.buffer_sizes(name, "", rows, cols)
    return (np.zeros(s["code_bytes"], np.uint8),
            np.zeros(s["scale_codes"], np.uint8) if s["scale_codes"] else None,
            np.zeros(s["scales"], np.float32) if s["scales"] else None,
            np.zeros(s["zero_points"], np.int32) if s["zero_points"] else None,
            np.zeros(2, np.float32) if s["tensor_scales"] else None)


def recipe_input(name, rows, cols, seed):
    rng = np.random.default_rng(seed)
    x = (rng.standard_normal((rows, cols)) * rng.choice([1e-3, 1.0, 300.0], size=(rows, 1))).astype(np.float32)
    flat = x.reshape(-1)
    info = lowbit.recipes[name.split("/")[0]]
    emax = lowbit.formats[info.element].max
    # boundary-biased: the element's max, ties of it, a zero group, NaN and Inf
    flat[:8] = np.array([emax, -emax, emax * 1.0001, 0.5, -0.0, 2.0 ** -130, 6.0, 7.0], np.float32)
    if rows > 2:
        x[1, :] = 0.0
    if rows > 3 and cols > 3:
        x[2, 3] = np.nan
        x[3, 1] = -np.inf
    return x


RECIPE_ROWS = _lowbit.recipe_row_names()


@pytest.mark.parametrize("name", RECIPE_ROWS)
def test_quantize_equals_scalar_recipe_row(name):
    rows, cols = 6, 256
    x = recipe_input(name, rows, cols, seed=len(name))
    bufs = recipe_buffers(name, rows, cols)
    _lowbit.run_recipe_row(name, "scalar", x.reshape(-1), rows, cols, *bufs)
    q = lowbit.quantize(x, name)
    np.testing.assert_array_equal(q.packed, bufs[0])
    if bufs[1] is not None:
        np.testing.assert_array_equal(q.scale_codes, bufs[1])
    if bufs[2] is not None:
        np.testing.assert_array_equal(q.scales.view(np.uint32), bufs[2].view(np.uint32))
    if bufs[3] is not None:
        np.testing.assert_array_equal(q.zero_points, bufs[3])
    if bufs[4] is not None:
        assert np.float32(q.tensor_scale[1]).view(np.uint32) == bufs[4][1:].view(np.uint32)[0]
    # The axis argument: quantizing x.T along axis 0 is quantizing x along -1.
    qt = lowbit.quantize(np.ascontiguousarray(x.T), name, axis=0)
    np.testing.assert_array_equal(qt.packed, bufs[0])
    back = q.dequantize()
    assert back.shape == x.shape
    np.testing.assert_array_equal(qt.dequantize().view(np.uint32), np.ascontiguousarray(back.T).view(np.uint32))
