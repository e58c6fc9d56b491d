"""lowbit's ml_dtypes profile against ml_dtypes itself (numpy astype), for
every format ml_dtypes has: Hypothesis over FP32 (boundary-biased: each
format's values, their FP32 neighbours and midpoints, plus any FP32 bits),
and all 2^16 FP16 and BF16 inputs; decodes of every code. Codes are
compared as bits (NaN payloads and signs included)."""

import ml_dtypes
import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import lowbit

from conftest import boundary_inputs

ML_FORMATS = [name for name, f in lowbit.formats.items() if f.ml_dtypes_name is not None]


def ml_codes(x, f):
    with np.errstate(invalid="ignore", over="ignore"):
        return x.astype(f.ml_dtype()).view(np.uint8 if f.bits <= 8 else np.uint16)


def lowbit_codes(x, f):
    if f.kind != "float":
        # The ml_dtypes profile has no float -> int4/uint4 conversion: ml_dtypes
        # casts with C++ static_cast (truncation; out of range wraps, NaN is
        # undefined), so inside the range it is lowbit's round toward zero.
        return lowbit.encode(x, f.name, rounding="rtz")
    return lowbit.encode(x, f.name, profile="ml_dtypes")


def test_every_ml_dtypes_format_is_covered():
    names = {f.ml_dtypes_name for f in lowbit.formats.values() if f.ml_dtypes_name}
    # ml_dtypes' own list of its float and small-integer types
    theirs = {n for n in ("bfloat16", "float8_e3m4", "float8_e4m3", "float8_e4m3b11fnuz", "float8_e4m3fn",
                          "float8_e4m3fnuz", "float8_e5m2", "float8_e5m2fnuz", "float8_e8m0fnu",
                          "float6_e2m3fn", "float6_e3m2fn", "float4_e2m1fn", "int4", "uint4", "int2", "uint2")
              if hasattr(ml_dtypes, n)}
    missing = theirs - names
    # e4m3b11fnuz (bias 11) and the 2-bit integers are not lowbit formats.
    assert missing <= {"float8_e4m3b11fnuz", "int2", "uint2"}, missing


def _finite_for_ints(f, x):
    # Integers: only where ml_dtypes' cast is defined and does not wrap
    # (-8 < x < 8 for int4, -1 < x < 16 for uint4).
    if f.kind == "float":
        return x
    lo = -(2.0 ** (f.bits - 1)) - 1 if f.signed else -1.0
    hi = 2.0 ** (f.bits - 1) if f.signed else 2.0 ** f.bits
    with np.errstate(invalid="ignore"):
        return x[np.isfinite(x) & (x > lo) & (x < hi)]


@pytest.mark.parametrize("fmt", ML_FORMATS)
def test_boundary_inputs_f32(fmt):
    f = lowbit.formats[fmt]
    x = _finite_for_ints(f, boundary_inputs(fmt, random=20000))
    assert x.size > 100
    np.testing.assert_array_equal(lowbit_codes(x, f), ml_codes(x, f))


# Not bf16 -> bf16: numpy's astype to an array's own dtype copies without
# converting (a signalling NaN stays signalling), so there is no conversion.
@pytest.mark.parametrize("fmt,source", [(f, s) for f in ML_FORMATS for s in ("fp16", "bf16") if f != s])
def test_all_16bit_inputs(fmt, source):
    f = lowbit.formats[fmt]
    every = np.arange(1 << 16, dtype=np.uint16)
    x = every.view(np.float16) if source == "fp16" else every.view(ml_dtypes.bfloat16)
    if f.kind != "float":
        x32 = x.astype(np.float32)
        lo = -(2.0 ** (f.bits - 1)) - 1 if f.signed else -1.0
        hi = 2.0 ** (f.bits - 1) if f.signed else 2.0 ** f.bits
        with np.errstate(invalid="ignore"):
            keep = np.isfinite(x32) & (x32 > lo) & (x32 < hi)
        x = x[keep]
    try:
        got = lowbit_codes(x, f)
    except ValueError as e:
        pytest.fail(f"the ml_dtypes profile has no {source} -> {fmt} conversion: {e}")
    np.testing.assert_array_equal(got, ml_codes(x, f))


@pytest.mark.parametrize("fmt", ML_FORMATS)
def test_decode_every_code(fmt):
    f = lowbit.formats[fmt]
    codes = np.arange(1 << f.bits, dtype=f.code_dtype)
    theirs = codes.view(f.ml_dtype()).astype(np.float32) if f.kind == "float" else \
        codes.view(f.ml_dtype()).astype(np.float32)
    ours = lowbit.decode(codes, fmt, profile="ml_dtypes")
    np.testing.assert_array_equal(ours.view(np.uint32), theirs.view(np.uint32))
    # ml_dtypes arrays in and out: the same codes.
    np.testing.assert_array_equal(lowbit.decode(codes.view(f.ml_dtype())).view(np.uint32),
                                  lowbit.decode(codes, fmt).view(np.uint32))


f32_any = st.integers(0, 2**32 - 1).map(lambda b: np.uint32(b).view(np.float32))


@pytest.mark.parametrize("fmt", ML_FORMATS)
@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data())
def test_hypothesis_f32(fmt, data):
    f = lowbit.formats[fmt]
    # Values near the format's own values (scaled by powers of two around
    # them) as often as arbitrary FP32 bits.
    near = st.builds(lambda m, e, s: np.float32(s * m * 2.0 ** e),
                     st.floats(0.5, 2.0, width=32), st.integers(-30, 20), st.sampled_from([1.0, -1.0]))
    xs = data.draw(st.lists(st.one_of(f32_any, near), min_size=1, max_size=64))
    x = _finite_for_ints(f, np.array(xs, np.float32))
    np.testing.assert_array_equal(lowbit_codes(x, f), ml_codes(x, f))
    if f.kind == "float":
        out = lowbit.encode(x, fmt, profile="ml_dtypes", ml_dtypes=True)
        assert out.dtype == f.ml_dtype()
        np.testing.assert_array_equal(out.view(np.uint8 if f.bits <= 8 else np.uint16), ml_codes(x, f))
