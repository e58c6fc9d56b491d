"""lowbit.show: the bit fields of one code.

The expected fields and values are written from the formats' definitions
(docs/formats-reference.md, OCP OFP8 v1.0 Table 1, IEEE 754-2019 §3.4), and
every code of the 8-bit and 4-bit float formats is checked against a value
rebuilt here from the fields by the textbook formula and against ml_dtypes,
so show cannot pass by echoing lowbit.decode.
"""

import math

import ml_dtypes
import numpy as np
import pytest

import lowbit


def test_e4m3_max_and_nan():
    f = lowbit.show(0x7E, "e4m3")
    assert (f.bits, f.sign_bits, f.exponent_bits, f.mantissa_bits) == ("01111110", "0", "1111", "110")
    assert (f.sign, f.exponent, f.mantissa, f.bias, f.cls, f.value) == (0, 15, 6, 7, "normal", 448.0)
    assert f.unbiased_exponent == 8
    assert lowbit.show(0x7F, "e4m3").cls == "nan"   # E4M3FN: S.1111.111 is NaN, no Inf
    assert lowbit.show(0xFF, "e4m3").cls == "nan"
    assert lowbit.show(0x78, "e4m3").value == 256.0  # exponent all ones, mantissa 0: a normal number
    assert repr(lowbit.show(0x7E, "e4m3")) == \
        "e4m3 0x7e = 0 1111 110: sign +, exponent 15 (2^8 after bias 7), mantissa 0b110 -> normal 448"


def test_classes_across_formats():
    assert lowbit.show(0x01, "e4m3").cls == "subnormal"
    assert lowbit.show(0x01, "e4m3").value == 2.0 ** -9
    assert lowbit.show(0x01, "e4m3").unbiased_exponent == -6
    assert lowbit.show(0x80, "e4m3").cls == "zero" and math.copysign(1, lowbit.show(0x80, "e4m3").value) == -1
    assert lowbit.show(0x7C, "e5m2").cls == "inf" and lowbit.show(0x7C, "e5m2").value == math.inf
    assert lowbit.show(0x7D, "e5m2").cls == "nan"
    assert lowbit.show(0x80, "e4m3fnuz").cls == "nan"   # FNUZ: the negative-zero pattern is the NaN
    assert lowbit.show(0x3F80, "bf16").value == 1.0 and lowbit.show(0x3F80, "bf16").exponent == 127
    assert lowbit.show(0x3C00, "fp16").exponent_bits == "01111"
    g = lowbit.show(0x3F800000, "fp32")
    assert (g.sign, g.exponent, g.mantissa, g.value) == (0, 127, 0, 1.0)
    assert len(g.mantissa_bits) == 23 and len(g.exponent_bits) == 8


def test_unsigned_and_integer_formats():
    e = lowbit.show(0x7F, "e8m0")
    assert (e.sign, e.sign_bits, e.exponent, e.mantissa_bits, e.value, e.cls) == (None, "", 127, "", 1.0, "normal")
    assert lowbit.show(0xFF, "e8m0").cls == "nan"
    assert lowbit.show(0x00, "e8m0").value == 2.0 ** -127
    assert lowbit.show(0x7, "e2m1").value == 6.0 and lowbit.show(0x7, "e2m1").exponent_bits == "11"
    i = lowbit.show(0xF, "int4")
    assert (i.cls, i.value, i.bits, i.sign, i.exponent, i.mantissa) == ("integer", -1.0, "1111", None, None, None)


def test_value_is_encoded_first():
    f = lowbit.show(500.0, "e4m3", saturate=True)
    assert (f.code, f.value, f.input) == (0x7E, 448.0, 500.0)
    assert lowbit.show(500.0, "e4m3").cls == "nan"  # non-saturating overflow: E4M3 has no Inf
    assert lowbit.show(1.0, "e4m3").code == 0x38
    assert lowbit.show(np.int64(1), "e4m3").code == 0x01  # an integer is a code
    assert lowbit.show(0.3, "e4m3", rounding="rtz").value == 0.28125


@pytest.mark.parametrize("name,ml", [("e4m3", ml_dtypes.float8_e4m3fn), ("e5m2", ml_dtypes.float8_e5m2),
                                     ("e4m3fnuz", ml_dtypes.float8_e4m3fnuz),
                                     ("e5m2fnuz", ml_dtypes.float8_e5m2fnuz),
                                     ("e2m1", ml_dtypes.float4_e2m1fn), ("e8m0", ml_dtypes.float8_e8m0fnu)])
def test_every_code_rebuilds_from_its_fields(name, ml):
    fmt = lowbit.formats[name]
    for code in range(1 << fmt.bits):
        f = lowbit.show(code, name)
        want = float(np.array([code], np.uint8).view(ml)[0])
        assert f.value == want or (math.isnan(f.value) and math.isnan(want)), (name, code)
        if f.cls in ("normal", "subnormal"):
            m = f.mantissa / (1 << fmt.mantissa_bits)
            significand = 1 + m if f.cls == "normal" else m
            rebuilt = (-1) ** (f.sign or 0) * significand * 2.0 ** f.unbiased_exponent
            assert rebuilt == f.value, (name, code, f)
        assert int(f.bits, 2) == code


def test_bad_input_names_the_problem():
    with pytest.raises(ValueError, match="does not fit e4m3"):
        lowbit.show(0x100, "e4m3")
    with pytest.raises(ValueError, match="unknown format"):
        lowbit.show(1, "e9m9")
    with pytest.raises(TypeError, match="code .int. or a value .float."):
        lowbit.show("0x7e", "e4m3")
    with pytest.raises(TypeError, match="bool"):
        lowbit.show(True, "e4m3")


def test_doctests():
    import doctest

    import lowbit._show

    result = doctest.testmod(lowbit._show, extraglobs={"lowbit": lowbit, "np": np})
    assert result.attempted >= 2 and result.failed == 0
